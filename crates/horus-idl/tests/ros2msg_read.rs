//! Reading complete `ros2msg` definitions (`InterfaceSet::from_ros2msg`,
//! `resolve_ros2msg`): horus's own writer round-trips every type, definitions as rosbag2
//! writes them are read, and each way a definition can be wrong is a typed error.

use std::collections::BTreeSet;

use horus_idl::limits::{MAX_FILE_BYTES, MAX_ROS2MSG_SECTIONS};
use horus_idl::{
    resolve_ros2msg, standard_file, BaseType, InterfaceKind, InterfaceSet, InterfaceSpec,
    ParseErrorKind, ResolveError, Resolved, Ros2MsgError, TypeName,
};

fn standard() -> Resolved {
    InterfaceSet::standard().unwrap().resolve().unwrap()
}

fn delimiter() -> String {
    "=".repeat(80)
}

#[test]
fn every_standard_structure_round_trips_through_its_definition_with_the_same_hash() {
    let resolved = standard();
    let mut checked = 0;
    for def in resolved.structs() {
        let name = def.name.to_string();
        let text = resolved.ros2msg_definition(&name).unwrap();
        let read = resolve_ros2msg(&name, &text);
        // The event types of an action's services name `pkg/Foo_SendGoal_Request`, which
        // no .msg text can (ROS 2's parser refuses the name too): the writer would have
        // to give the whole `ACTION:` section. Refused with a typed error meanwhile.
        if name.ends_with("_SendGoal_Event") || name.ends_with("_GetResult_Event") {
            if let Err(e) = read {
                assert!(matches!(e, Ros2MsgError::Parse { .. }), "{name}: {e}");
                continue;
            }
        }
        let (read, root) = read.unwrap_or_else(|e| panic!("{name}: {e}\n{text}"));
        assert_eq!(root, def.name);
        assert_eq!(
            read.type_hash(&name),
            resolved.type_hash(&name),
            "{name}:\n{text}"
        );
        // And the reader's types write the same definition again.
        assert_eq!(read.ros2msg_definition(&name).as_deref(), Some(&*text));
        checked += 1;
    }
    assert!(checked > 150, "{checked} structures");
}

/// A definition as rosbag2's `LocalMessageDefinitionSource` writes it: each dependency
/// named as the field writes it (`pkg/Type`; a bare `Type` gets the file's package),
/// the dependencies of each file in sorted order, depth-first, each file's text with its
/// final line break, a blank line before each delimiter.
fn rosbag2_style(type_name: &TypeName) -> String {
    fn deps(name: &TypeName) -> BTreeSet<String> {
        let f = standard_file(name).unwrap();
        let spec =
            horus_idl::parse_interface("x", f.package, f.name, f.kind, f.text.as_bytes()).unwrap();
        let InterfaceSpec::Message(m) = spec else {
            unreachable!()
        };
        m.fields
            .iter()
            .filter_map(|field| match &field.field_type.base {
                BaseType::Named(n) => Some(format!(
                    "{}/{}",
                    n.package.as_deref().unwrap_or(f.package),
                    n.name
                )),
                _ => None,
            })
            .collect()
    }
    fn append(name: &TypeName, seen: &mut BTreeSet<String>, out: &mut String) {
        out.push_str(standard_file(name).unwrap().text);
        for dep in deps(name) {
            if seen.insert(dep.clone()) {
                out.push_str(&format!("\n{}\nMSG: {dep}\n", delimiter()));
                append(&TypeName::parse_lenient(&dep).unwrap(), seen, out);
            }
        }
    }
    let mut out = String::new();
    append(type_name, &mut BTreeSet::new(), &mut out);
    out
}

#[test]
fn every_standard_message_reads_from_a_definition_as_rosbag2_writes_it() {
    let resolved = standard();
    let mut checked = 0;
    for f in horus_idl::standard_files() {
        if f.kind != InterfaceKind::Message {
            continue;
        }
        let name = f.type_name();
        let text = rosbag2_style(&name);
        // rosbag2 names the root as the topic's type: both forms are accepted.
        for root in [name.to_string(), format!("{}/{}", name.package, name.name)] {
            let (read, _) =
                resolve_ros2msg(&root, &text).unwrap_or_else(|e| panic!("{name}: {e}\n{text}"));
            let full = name.to_string();
            assert_eq!(read.type_hash(&full), resolved.type_hash(&full), "{name}");
        }
        checked += 1;
    }
    assert!(checked > 100, "{checked} messages");
}

#[test]
fn rosbag2_documentation_example_reads() {
    let text = "# defines a message that includes a field of a custom message type\n\
                my_msgs/BasicMsg my_basic_field\n\
                ================================================================================\n\
                MSG: my_msgs/msg/BasicMsg\n\
                # defines a message with a primitive type field\n\
                float32 my_float\n";
    let (read, root) = resolve_ros2msg("my_msgs/msg/ExampleMsg", text).unwrap();
    let def = read.get_struct(&root).unwrap();
    assert_eq!(def.members[0].name, "my_basic_field");
    let basic = read
        .get_struct(&TypeName::msg("my_msgs", "BasicMsg"))
        .unwrap();
    assert_eq!(basic.members[0].name, "my_float");
}

/// The same types from files, for comparing hashes.
fn from_files(files: &[(&str, InterfaceKind, &str, &str)]) -> Resolved {
    let mut set = InterfaceSet::new();
    for (package, kind, name, text) in files {
        set.add_source(name, package, name, *kind, text.as_bytes())
            .unwrap();
    }
    for (p, n) in [
        ("service_msgs", "ServiceEventInfo"),
        ("builtin_interfaces", "Time"),
        ("unique_identifier_msgs", "UUID"),
    ] {
        let f = standard_file(&TypeName::msg(p, n)).unwrap();
        set.add_source(n, p, n, f.kind, f.text.as_bytes()).unwrap();
    }
    set.resolve().unwrap()
}

#[test]
fn rosbag2_service_definition_with_empty_root_and_srv_section_reads() {
    // rosbag2's form for a service event topic (test_local_message_definition_source.cpp):
    // no root text, the .srv as an `SRV:` section, its dependencies as `MSG:` sections;
    // ServiceEventInfo and Time come from the standard set.
    let text = "================================================================================\n\
                SRV: rosbag2_test_msgdefs/srv/ComplexSrvMsg\n\
                rosbag2_test_msgdefs/BasicMsg req\n\
                ---\n\
                rosbag2_test_msgdefs/BasicMsg resp\n\
                \n\
                ================================================================================\n\
                MSG: rosbag2_test_msgdefs/BasicMsg\n\
                float32 c\n";
    let event = "rosbag2_test_msgdefs/srv/ComplexSrvMsg_Event";
    let (read, _) = resolve_ros2msg(event, text).unwrap();
    let expected = from_files(&[
        (
            "rosbag2_test_msgdefs",
            InterfaceKind::Service,
            "ComplexSrvMsg",
            "rosbag2_test_msgdefs/BasicMsg req\n---\nrosbag2_test_msgdefs/BasicMsg resp\n",
        ),
        (
            "rosbag2_test_msgdefs",
            InterfaceKind::Message,
            "BasicMsg",
            "float32 c\n",
        ),
    ]);
    for name in [
        event,
        "rosbag2_test_msgdefs/srv/ComplexSrvMsg_Request",
        "rosbag2_test_msgdefs/srv/ComplexSrvMsg",
    ] {
        assert_eq!(read.type_hash(name), expected.type_hash(name), "{name}");
    }
}

#[test]
fn action_section_defines_every_structure_the_action_implies() {
    let action = "int32 order\n---\nint32[] sequence\n---\nint32[] partial_sequence\n";
    let text = format!("\n{}\nACTION: demo/action/Fib\n{action}", delimiter());
    let root = "demo/action/Fib_FeedbackMessage";
    let (read, _) = resolve_ros2msg(root, &text).unwrap();
    let expected = from_files(&[("demo", InterfaceKind::Action, "Fib", action)]);
    for name in expected.type_names() {
        assert_eq!(read.type_hash(name), expected.type_hash(name), "{name}");
    }
}

#[test]
fn crlf_line_endings_and_missing_final_line_break_read() {
    let text = "std_msgs/Header header\r\nfloat64 x\r\n================================================================================\r\n\
                MSG: std_msgs/Header\r\nbuiltin_interfaces/Time stamp\r\nstring frame_id\r\n\
                ================================================================================\r\n\
                MSG: builtin_interfaces/Time\r\nint32 sec\r\nuint32 nanosec";
    let (read, root) = resolve_ros2msg("demo/Stamped", text).unwrap();
    assert_eq!(root.to_string(), "demo/msg/Stamped");
    assert_eq!(
        read.type_hash("std_msgs/msg/Header"),
        standard().type_hash("std_msgs/msg/Header")
    );
}

#[test]
fn identical_repeated_section_is_read_once() {
    let d = delimiter();
    let text =
        format!("demo/A a\ndemo/A b\n{d}\nMSG: demo/A\nint8 x\n{d}\nMSG: demo/msg/A\nint8 x\n");
    let (read, _) = resolve_ros2msg("demo/msg/Root", &text).unwrap();
    assert_eq!(read.structs().count(), 2);
}

// ---- each way a definition can be wrong ----

fn err(root: &str, text: &str) -> Ros2MsgError {
    match resolve_ros2msg(root, text) {
        Ok(_) => panic!("accepted:\n{text}"),
        Err(e) => e,
    }
}

#[test]
fn definition_over_the_size_limit_is_refused_before_reading() {
    let text = "#".repeat(MAX_FILE_BYTES + 1);
    assert_eq!(
        err("a/B", &text),
        Ros2MsgError::TooLarge {
            size: MAX_FILE_BYTES + 1,
            limit: MAX_FILE_BYTES
        }
    );
}

#[test]
fn definition_not_utf8_names_the_line() {
    let e = InterfaceSet::from_ros2msg("a/B", b"int8 x\nint8 y\n# \xff\n").unwrap_err();
    assert_eq!(e, Ros2MsgError::NotUtf8 { line: 3 });
}

#[test]
fn too_many_sections_are_refused() {
    let d = delimiter();
    let mut text = String::from("int8 x\n");
    for i in 0..MAX_ROS2MSG_SECTIONS {
        text.push_str(&format!("{d}\nMSG: p/T{i}\nint8 x\n"));
    }
    assert!(matches!(
        err("p/Root", &text),
        Ros2MsgError::TooManySections { limit, .. } if limit == MAX_ROS2MSG_SECTIONS
    ));
    // One fewer is fine.
    let cut = text.rfind(&d).unwrap();
    resolve_ros2msg("p/Root", &text[..cut]).unwrap();
}

#[test]
fn delimiter_without_a_header_is_refused_with_its_line() {
    let d = delimiter();
    for (text, line) in [
        (format!("int8 x\n{d}\nint8 y\n"), 3),
        (format!("int8 x\n{d}\n"), 3),
        (format!("int8 x\n{d}\n{d}\nMSG: a/B\n"), 3),
    ] {
        match err("a/Root", &text) {
            Ros2MsgError::MissingHeader { line: l, .. } => assert_eq!(l, line, "{text}"),
            e => panic!("{e}"),
        }
    }
}

#[test]
fn bad_section_names_are_refused() {
    let d = delimiter();
    for header in [
        "MSG: nopackage",
        "MSG: a/b/c/D",
        "MSG: Bad_pkg/T",
        "MSG: a/lower",
        "MSG: a/msg/",
        "MSG:a/T",
        "MSG: a/foo/T",
        "SRV: a/msg/T",
        "ACTION: a/srv/T",
        "MSG: a/T__X",
    ] {
        let text = format!("int8 x\n{d}\n{header}\nint8 y\n");
        assert!(
            matches!(
                err("a/Root", &text),
                Ros2MsgError::BadSectionName { line: 3, .. }
            ),
            "{header}"
        );
    }
    let long = format!("int8 x\n{d}\nMSG: a/{}\n", "T".repeat(100_000));
    match err("a/Root", &long) {
        Ros2MsgError::BadSectionName { name, .. } => assert!(name.len() < 200),
        e => panic!("{e}"),
    }
}

#[test]
fn idl_sections_are_refused() {
    let text = format!("\n{}\nIDL: a/msg/B\nmodule a {{}};\n", delimiter());
    assert_eq!(err("a/B", &text), Ros2MsgError::IdlSection { line: 3 });
}

#[test]
fn bad_root_names_are_refused() {
    for root in ["", "B", "a/b/c/D", "a/lower", "a/xyz/T", "A/T"] {
        assert!(
            matches!(err(root, "int8 x\n"), Ros2MsgError::BadRootName { .. }),
            "{root}"
        );
    }
}

#[test]
fn conflicting_definitions_of_a_type_are_refused() {
    let d = delimiter();
    let text = format!("a/T t\n{d}\nMSG: a/T\nint8 x\n{d}\nMSG: a/msg/T\nint16 x\n");
    assert_eq!(
        err("a/Root", &text),
        Ros2MsgError::Conflict {
            line: 6,
            first_line: 3,
            type_name: "a/msg/T".into()
        }
    );
    // The root defined again by a section.
    let text = format!("int8 x\n{d}\nMSG: a/Root\nint16 x\n");
    assert!(matches!(
        err("a/Root", &text),
        Ros2MsgError::Conflict { first_line: 0, .. }
    ));
    // A service's structure given both alone and by its service.
    let text = format!("\n{d}\nSRV: a/srv/S\nint8 x\n---\n{d}\nMSG: a/srv/S_Request\nint8 x\n");
    assert!(matches!(
        err("a/srv/S_Event", &text),
        Ros2MsgError::Conflict { .. }
    ));
}

#[test]
fn malformed_section_error_counts_lines_from_the_definition_start() {
    let d = delimiter();
    let text = format!("a/T t\n{d}\nMSG: a/T\nint8 x\nint8 x\n");
    match err("a/Root", &text) {
        Ros2MsgError::Parse { section, error } => {
            assert_eq!(section, "a/msg/T");
            assert_eq!(error.line, 5);
            assert!(matches!(error.kind, ParseErrorKind::DuplicateField { .. }));
        }
        e => panic!("{e}"),
    }
    // A .srv text under MSG:, a long line, 79 '=' (not a delimiter: a bad type).
    for (text, line) in [
        (format!("a/T t\n{d}\nMSG: a/T\nint8 x\n---\nint8 y\n"), 5),
        (
            format!("int8 x\n{d}\nMSG: a/T\nint8 {}\n", "y".repeat(5000)),
            4,
        ),
        (format!("int8 x\n{}\nMSG: a/T\n", "=".repeat(79)), 2),
    ] {
        match err("a/Root", &text) {
            Ros2MsgError::Parse { error, .. } => assert_eq!(error.line, line, "{text}"),
            e => panic!("{e}"),
        }
    }
}

#[test]
fn type_used_but_not_defined_is_a_resolve_error_with_its_line() {
    let d = delimiter();
    let text = format!("a/T t\n{d}\nMSG: a/T\nint8 x\na/Missing m\n");
    match err("a/Root", &text) {
        Ros2MsgError::Resolve(e) => match *e {
            ResolveError::UnknownType {
                line, type_name, ..
            } => {
                assert_eq!(line, 5);
                assert_eq!(type_name, "a/msg/Missing");
            }
            e => panic!("{e}"),
        },
        e => panic!("{e}"),
    }
}

#[test]
fn recursive_types_are_refused() {
    let d = delimiter();
    let text = format!("a/B b\n{d}\nMSG: a/B\na/C c\n{d}\nMSG: a/C\na/B b\n");
    assert!(matches!(
        err("a/A", &text),
        Ros2MsgError::Resolve(e) if matches!(*e, ResolveError::Recursive { .. })
    ));
    let text = "a/A self_\n";
    assert!(matches!(err("a/A", text), Ros2MsgError::Parse { .. }));
    let text = "a/A me\n";
    assert!(matches!(
        err("a/A", text),
        Ros2MsgError::Resolve(e) if matches!(*e, ResolveError::Recursive { .. })
    ));
}

#[test]
fn root_not_defined_as_a_structure_is_refused() {
    // Blank root text, and the only section is another type: the root is then an
    // empty message (valid); a service name is not a structure.
    let d = delimiter();
    let text = format!("\n{d}\nSRV: a/srv/S\nint8 x\n---\n");
    assert_eq!(
        err("a/srv/S", &text),
        Ros2MsgError::RootNotDefined {
            root: "a/srv/S".into()
        }
    );
    let (read, root) = resolve_ros2msg("a/msg/Empty", "").unwrap();
    assert!(read.get_struct(&root).unwrap().members[0].placeholder);
}

#[test]
fn deeply_nested_chain_of_sections_reads_without_recursion() {
    let d = delimiter();
    let n = MAX_ROS2MSG_SECTIONS - 1;
    let mut text = String::from("a/T0 t\n");
    for i in 0..n {
        let body = if i + 1 < n {
            format!("a/T{} t", i + 1)
        } else {
            "int8 x".into()
        };
        text.push_str(&format!("{d}\nMSG: a/T{i}\n{body}\n"));
    }
    let (read, _) = resolve_ros2msg("a/Root", &text).unwrap();
    assert!(read.type_hash("a/msg/Root").is_some());
}

#[test]
fn definitions_as_mcap_ros2_tools_register_them_read() {
    // Schemas as mcap's ROS 2 writer is given them: `pkg/Type` roots, no final line
    // break, a comment first, an empty definition, bare nested names resolved in the
    // root's package.
    let d = delimiter();
    let cases: [(&str, String, &[&str]); 4] = [
        (
            "test_msgs/TestData",
            "string a\nint32 b".into(),
            &["a", "b"],
        ),
        (
            "std_msgs/String",
            "# std_msgs/String\nstring data".into(),
            &["data"],
        ),
        (
            "std_msgs/msg/Empty",
            String::new(),
            &[horus_idl::PLACEHOLDER_MEMBER],
        ),
        (
            "test_msgs/PointCloud",
            format!("Point[] points\n{d}\nMSG: test_msgs/Point\nfloat64 x\nfloat64 y"),
            &["points"],
        ),
    ];
    for (root, text, members) in cases {
        let (read, name) = resolve_ros2msg(root, &text).unwrap_or_else(|e| panic!("{root}: {e}"));
        let got: Vec<&str> = read
            .get_struct(&name)
            .unwrap()
            .members
            .iter()
            .map(|m| m.name.as_str())
            .collect();
        assert_eq!(got, members, "{root}");
    }
    // std_msgs/String read this way is the standard type.
    let (read, _) = resolve_ros2msg("std_msgs/String", "# std_msgs/String\nstring data").unwrap();
    assert_eq!(
        read.type_hash("std_msgs/msg/String"),
        standard().type_hash("std_msgs/msg/String")
    );
}
