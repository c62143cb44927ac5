//! Resolution across packages: unknown types, recursive types, types ROS 2 implies
//! from packages that are not loaded, duplicates, and loading from directories.

use horus_idl::{AddError, InterfaceKind, InterfaceSet, LoadError, ResolveError};

fn add(set: &mut InterfaceSet, package: &str, kind: InterfaceKind, name: &str, text: &str) {
    let file = format!("{package}/{kind}/{name}.{kind}");
    set.add_source(&file, package, name, kind, text.as_bytes())
        .unwrap();
}

#[test]
fn unknown_nested_type_has_file_line_and_column() {
    let mut set = InterfaceSet::standard().unwrap();
    add(
        &mut set,
        "my_pkg",
        InterfaceKind::Message,
        "Thing",
        "int32 a\ngeometry_msgs/Pointt p\n",
    );
    let e = set.resolve().unwrap_err();
    assert_eq!(
        e,
        ResolveError::UnknownType {
            file: "my_pkg/msg/Thing.msg".into(),
            line: 2,
            column: 1,
            type_name: "geometry_msgs/msg/Pointt".into(),
            field: "p".into(),
            owner: "my_pkg/msg/Thing".into(),
        }
    );
    assert!(e
        .to_string()
        .starts_with("my_pkg/msg/Thing.msg:2:1: unknown type"));
}

#[test]
fn bare_type_name_is_looked_up_in_the_same_package() {
    let mut set = InterfaceSet::new();
    add(&mut set, "my_pkg", InterfaceKind::Message, "A", "B b\n");
    add(&mut set, "my_pkg", InterfaceKind::Message, "B", "int32 x\n");
    set.resolve().unwrap();
    // ROS 2 has no special case for a bare `Header`: it is the package's own `Header`.
    let mut set = InterfaceSet::standard().unwrap();
    add(
        &mut set,
        "my_pkg",
        InterfaceKind::Message,
        "C",
        "Header header\n",
    );
    let e = set.resolve().unwrap_err();
    assert!(
        matches!(e, ResolveError::UnknownType { ref type_name, .. } if type_name == "my_pkg/msg/Header")
    );
}

#[test]
fn service_fields_refer_to_messages_not_to_services() {
    let mut set = InterfaceSet::standard().unwrap();
    add(
        &mut set,
        "my_pkg",
        InterfaceKind::Service,
        "Get",
        "Get_Request r\n---\n",
    );
    let e = set.resolve().unwrap_err();
    assert!(
        matches!(e, ResolveError::UnknownType { ref type_name, .. } if type_name == "my_pkg/msg/Get_Request")
    );
}

#[test]
fn self_containing_message_is_recursive() {
    let mut set = InterfaceSet::new();
    add(
        &mut set,
        "my_pkg",
        InterfaceKind::Message,
        "Node",
        "int32 v\nNode[] children\n",
    );
    let e = set.resolve().unwrap_err();
    assert_eq!(
        e,
        ResolveError::Recursive {
            file: "my_pkg/msg/Node.msg".into(),
            line: 2,
            column: 1,
            cycle: vec!["my_pkg/msg/Node".into(), "my_pkg/msg/Node".into()],
        }
    );
}

#[test]
fn mutually_containing_messages_across_packages_are_recursive() {
    let mut set = InterfaceSet::new();
    add(
        &mut set,
        "pkg_a",
        InterfaceKind::Message,
        "A",
        "int8 x\npkg_b/B b\n",
    );
    add(
        &mut set,
        "pkg_b",
        InterfaceKind::Message,
        "B",
        "pkg_c/C c\n",
    );
    add(
        &mut set,
        "pkg_c",
        InterfaceKind::Message,
        "C",
        "pkg_a/A[<=2] a\n",
    );
    let ResolveError::Recursive { cycle, line, .. } = set.resolve().unwrap_err() else {
        panic!("expected a recursion error")
    };
    assert_eq!(
        cycle,
        ["pkg_a/msg/A", "pkg_b/msg/B", "pkg_c/msg/C", "pkg_a/msg/A"]
    );
    assert_eq!(line, 2);
}

#[test]
fn deep_chain_resolves_without_recursion_on_depth() {
    let mut set = InterfaceSet::new();
    let n = 5000;
    for i in 0..n {
        let text = if i + 1 < n {
            format!("T{} next\n", i + 1)
        } else {
            "int32 end\n".into()
        };
        add(
            &mut set,
            "deep",
            InterfaceKind::Message,
            &format!("T{i}"),
            &text,
        );
    }
    let resolved = set.resolve().unwrap();
    assert_eq!(resolved.structs().count(), n);
}

#[test]
fn service_without_service_msgs_loaded_names_the_missing_type() {
    let mut set = InterfaceSet::new();
    add(&mut set, "my_pkg", InterfaceKind::Service, "Ping", "---\n");
    let e = set.resolve().unwrap_err();
    assert!(
        matches!(
            e,
            ResolveError::MissingImpliedType { ref type_name, ref owner, .. }
                if type_name == "service_msgs/msg/ServiceEventInfo" && owner == "my_pkg/srv/Ping_Event"
        ),
        "{e:?}"
    );
}

#[test]
fn action_implies_ros2s_types() {
    let mut set = InterfaceSet::standard().unwrap();
    add(
        &mut set,
        "my_pkg",
        InterfaceKind::Action,
        "Fib",
        "int32 order\n---\nint32[] seq\n---\nint32[] partial\n",
    );
    let resolved = set.resolve().unwrap();
    let a = resolved
        .actions()
        .find(|a| a.name.package == "my_pkg")
        .unwrap();
    assert_eq!(
        a.send_goal.request.to_string(),
        "my_pkg/action/Fib_SendGoal_Request"
    );
    assert_eq!(
        a.get_result.event.to_string(),
        "my_pkg/action/Fib_GetResult_Event"
    );
    assert_eq!(
        a.feedback_message.to_string(),
        "my_pkg/action/Fib_FeedbackMessage"
    );
    for name in resolved.type_names().filter(|n| n.starts_with("my_pkg/")) {
        assert!(resolved.type_hash(name).is_some(), "{name}");
    }
    assert_eq!(
        resolved
            .type_names()
            .filter(|n| n.starts_with("my_pkg/"))
            .count(),
        13
    );
}

#[test]
fn same_interface_twice_is_refused() {
    let mut set = InterfaceSet::new();
    add(&mut set, "my_pkg", InterfaceKind::Message, "A", "int32 x\n");
    let e = set
        .add_source(
            "other/A.msg",
            "my_pkg",
            "A",
            InterfaceKind::Message,
            b"int32 y\n",
        )
        .unwrap_err();
    assert!(
        matches!(e, AddError::Duplicate { ref first_file, .. } if first_file == "my_pkg/msg/A.msg")
    );
}

#[test]
fn package_dir_that_does_not_exist_is_an_error() {
    let mut set = InterfaceSet::new();
    let e = set
        .add_package_dir("nope", std::path::Path::new("/nonexistent/horus-idl-test"))
        .unwrap_err();
    assert!(matches!(e, LoadError::Io { .. }));
}

#[test]
fn oversized_file_in_a_package_dir_is_refused_without_reading_it_all() {
    let dir = std::env::temp_dir().join(format!("horus-idl-big-{}", std::process::id()));
    std::fs::create_dir_all(dir.join("msg")).unwrap();
    let big = vec![b'#'; horus_idl::limits::MAX_FILE_BYTES + 10];
    std::fs::write(dir.join("msg/Big.msg"), big).unwrap();
    let mut set = InterfaceSet::new();
    let e = set.add_package_dir("big_pkg", &dir).unwrap_err();
    std::fs::remove_dir_all(&dir).unwrap();
    assert!(
        matches!(e, LoadError::Add(AddError::Parse(ref p)) if matches!(p.kind, horus_idl::ParseErrorKind::FileTooLarge { .. })),
        "{e:?}"
    );
}
