//! `generate_rust` and `Builder`: what they refuse, and the shape of what they write.
//! (The generated code itself is compiled and exercised by `horus-ros-msgs`' tests.)

use std::path::PathBuf;

use horus_idl::{InterfaceKind, InterfaceSet, Resolved};
use horus_idl_gen::{generate_rust, Builder, GenError, GenOptions};

fn set_with(files: &[(&str, &str, InterfaceKind, &str)]) -> Resolved {
    let mut set = InterfaceSet::standard().unwrap();
    for (package, name, kind, text) in files {
        set.add_source(
            &format!("{package}/{}/{name}.{}", kind.namespace(), kind.namespace()),
            package,
            name,
            *kind,
            text.as_bytes(),
        )
        .unwrap();
    }
    set.resolve().unwrap()
}

fn temp_dir(tag: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("horus-idl-gen-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn user_types_refer_to_mapped_standard_crate() {
    let r = set_with(&[(
        "my_msgs",
        "Tagged",
        InterfaceKind::Message,
        "std_msgs/Header header\nstring type\nint32 A=1\n",
    )]);
    let opts = GenOptions::default().extern_package("std_msgs", "horus_ros_msgs");
    let src = generate_rust(&r, &["my_msgs"], &opts).unwrap();
    assert!(src.contains("pub header: ::horus_ros_msgs::std_msgs::msg::Header,"));
    assert!(src.contains("pub r#type: ::std::string::String,"));
    assert!(src.contains("pub const A: i32 = 1_i32;"));
    assert!(src.contains("pub struct TaggedView<'a>"));
    assert!(src.contains("const TYPE_NAME: &'static str = \"my_msgs/msg/Tagged\";"));
    let hash = r.type_hash("my_msgs/msg/Tagged").unwrap().to_string();
    assert!(src.contains(&hash));
    assert!(src.contains("pub static REGISTRY"));
    let mut no_registry = opts;
    no_registry.registry = false;
    assert!(!generate_rust(&r, &["my_msgs"], &no_registry)
        .unwrap()
        .contains("REGISTRY"));
}

#[test]
fn a_nested_type_of_an_unmapped_package_is_refused() {
    let r = set_with(&[(
        "my_msgs",
        "Tagged",
        InterfaceKind::Message,
        "std_msgs/Header header\n",
    )]);
    let e = generate_rust(&r, &["my_msgs"], &GenOptions::default()).unwrap_err();
    match e {
        GenError::UnmappedPackage {
            user,
            used,
            package,
        } => {
            assert_eq!(user, "my_msgs/msg/Tagged");
            assert_eq!(used, "std_msgs/msg/Header");
            assert_eq!(package, "std_msgs");
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn unknown_and_doubly_given_packages_are_refused() {
    let r = set_with(&[]);
    assert!(matches!(
        generate_rust(&r, &["nope"], &GenOptions::default()),
        Err(GenError::UnknownPackage(p)) if p == "nope"
    ));
    let opts = GenOptions::default().extern_package("std_msgs", "x");
    assert!(matches!(
        generate_rust(&r, &["std_msgs"], &opts),
        Err(GenError::PackageTwice(p)) if p == "std_msgs"
    ));
}

#[test]
fn clashing_view_names_are_refused() {
    let r = set_with(&[
        ("my_msgs", "Foo", InterfaceKind::Message, "int32 a\n"),
        ("my_msgs", "FooView", InterfaceKind::Message, "int32 b\n"),
    ]);
    assert!(matches!(
        generate_rust(&r, &["my_msgs"], &GenOptions::default()),
        Err(GenError::NameClash(m)) if m.contains("FooView")
    ));
}

#[test]
fn a_type_named_self_is_refused() {
    let r = set_with(&[("my_msgs", "Self", InterfaceKind::Message, "int32 a\n")]);
    assert!(matches!(
        generate_rust(&r, &["my_msgs"], &GenOptions::default()),
        Err(GenError::NameClash(_))
    ));
}

#[test]
fn services_and_actions_get_marker_types() {
    let r = set_with(&[
        (
            "my_msgs",
            "Do",
            InterfaceKind::Service,
            "int32 a\n---\nbool ok\n",
        ),
        (
            "my_msgs",
            "Go",
            InterfaceKind::Action,
            "float64 x\n---\n---\nfloat32 p\n",
        ),
    ]);
    let opts = GenOptions::default().with_standard_packages_from("horus_ros_msgs");
    let src = generate_rust(&r, &["my_msgs"], &opts).unwrap();
    for item in [
        "pub mod srv {",
        "pub struct Do_Request {",
        "pub struct Do_Event {",
        "pub struct Do;",
        "const SERVICE_NAME: &'static str = \"my_msgs/srv/Do\";",
        "pub mod action {",
        "pub struct Go_SendGoal_Request {",
        "pub struct Go_FeedbackMessage {",
        "pub struct Go;",
        "pub struct Go_SendGoal;",
        "pub struct Go_GetResult;",
        "const ACTION_NAME: &'static str = \"my_msgs/action/Go\";",
        // An empty section: the placeholder member is written and read, not a field.
        "pub struct Go_Result {}",
    ] {
        assert!(src.contains(item), "missing {item}");
    }
}

#[test]
fn comments_become_docs_that_are_never_doctests() {
    let r = set_with(&[(
        "my_msgs",
        "Doc",
        InterfaceKind::Message,
        "# Top.\n#\n#     indented code?\n# ```\nint32 a # the a [m/s]\n",
    )]);
    let src = generate_rust(&r, &["my_msgs"], &GenOptions::default()).unwrap();
    assert!(src.contains("#[doc = \" Top.\"]"));
    assert!(src.contains("#[doc = \" indented code?\"]"));
    assert!(src.contains("#[doc = \" \\\\```\"]"));
    assert!(src.contains("#[doc = \" Unit: m/s.\"]"));
}

#[test]
fn builder_reports_parse_errors_with_file_line_and_column() {
    let dir = temp_dir("parse");
    std::fs::create_dir_all(dir.join("msg")).unwrap();
    std::fs::write(dir.join("msg/Bad.msg"), "int32 a\nfloat65 b\n").unwrap();
    let e = Builder::new()
        .package_dir("bad_msgs", &dir)
        .quiet()
        .generate_string()
        .unwrap_err();
    let text = e.to_string();
    assert!(matches!(e, GenError::Load(_)), "{e:?}");
    assert!(text.contains("Bad.msg:2:1"), "{text}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn builder_reports_unknown_types_with_their_position() {
    let dir = temp_dir("resolve");
    std::fs::create_dir_all(dir.join("msg")).unwrap();
    std::fs::write(dir.join("msg/Uses.msg"), "int32 a\nMissing m\n").unwrap();
    let e = Builder::new()
        .package_dir("my_msgs", &dir)
        .with_standard_packages_from("horus_ros_msgs")
        .quiet()
        .generate_string()
        .unwrap_err();
    assert!(matches!(e, GenError::Resolve(_)), "{e:?}");
    assert!(e.to_string().contains(":2:1"), "{e}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn builder_writes_the_out_file_and_leaves_it_alone_when_unchanged() {
    let dir = temp_dir("write");
    std::fs::create_dir_all(dir.join("pkg/msg")).unwrap();
    std::fs::write(dir.join("pkg/msg/Point2.msg"), "float64 x\nfloat64 y\n").unwrap();
    let out = dir.join("out.rs");
    let b = Builder::new()
        .package_dir("my_msgs", dir.join("pkg"))
        .out_file(&out)
        .quiet();
    assert_eq!(b.generate().unwrap(), out);
    let first = std::fs::metadata(&out).unwrap().modified().unwrap();
    let text = std::fs::read_to_string(&out).unwrap();
    assert!(text.contains("pub struct Point2 {"));
    b.generate().unwrap();
    assert_eq!(std::fs::metadata(&out).unwrap().modified().unwrap(), first);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn builder_without_out_dir_or_out_file_is_an_error() {
    if std::env::var_os("OUT_DIR").is_some() {
        return;
    }
    let e = Builder::new().quiet().generate().unwrap_err();
    assert!(matches!(e, GenError::NoOutDir));
}
