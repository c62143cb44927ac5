//! A user's own package, added the same way as the standard ones, covering every
//! part of the syntax; checked against type descriptions and hashes that ROS 2's own
//! generator (`rosidl_adapter` + `rosidl_generator_type_description`, kilted) wrote for
//! the same files (`tests/fixtures/horus_idl_test/**/*.json`).

mod common;

use std::path::Path;

use horus_idl::{
    standard_interfaces_dir, ArrayKind, ConstantType, DefaultValue, InterfaceSet, Primitive,
    ResolvedBase, TypeName, Value,
};

fn fixtures() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures"))
}

fn with_fixture_package() -> InterfaceSet {
    let mut set = InterfaceSet::standard().unwrap();
    let added = set
        .add_package_dir("horus_idl_test", &fixtures().join("horus_idl_test"))
        .unwrap();
    assert_eq!(added, 5);
    set
}

#[test]
fn user_package_hashes_match_ros2s_generator() {
    let resolved = with_fixture_package().resolve().unwrap();
    let mut checked = 0;
    for j in common::oracle_jsons(fixtures()) {
        let top = &j.description.type_description.type_name;
        assert_eq!(
            resolved.type_description(top).unwrap(),
            j.description,
            "{}",
            j.path.display()
        );
        for (name, hash) in &j.hashes {
            assert_eq!(
                &resolved.type_hash(name).unwrap().to_string(),
                hash,
                "{name}"
            );
            checked += 1;
        }
    }
    assert_eq!(checked, 29, "type hashes listed by the five json files");
}

#[test]
fn every_primitive_string_and_array_form_is_read() {
    let resolved = with_fixture_package().resolve().unwrap();
    let all = resolved
        .get_struct(&TypeName::msg("horus_idl_test", "AllTypes"))
        .unwrap();
    let member = |name: &str| all.members.iter().find(|m| m.name == name).unwrap();
    assert_eq!(
        member("c").member_type.base,
        ResolvedBase::Primitive(Primitive::Char)
    );
    let bs = member("bounded_strs");
    assert_eq!(bs.member_type.base, ResolvedBase::String { bound: Some(5) });
    assert_eq!(bs.member_type.array, ArrayKind::Bounded(3));
    assert_eq!(
        member("fixed").default,
        Some(DefaultValue::Array(vec![
            Value::Int(1),
            Value::Int(2),
            Value::Int(3)
        ]))
    );
    assert_eq!(
        member("strs").default,
        Some(DefaultValue::Array(vec![
            Value::String("a,b".into()),
            Value::String("c".into()),
            Value::String("d".into())
        ]))
    );
    assert_eq!(
        member("stamp").member_type.base,
        ResolvedBase::Nested(TypeName::msg("builtin_interfaces", "Time"))
    );
    let constant = |name: &str| all.constants.iter().find(|c| c.name == name).unwrap();
    assert_eq!(constant("U64_MAX").value, Value::Int(u64::MAX.into()));
    assert_eq!(constant("CHAR_C").value, Value::Int(0x41));
    assert_eq!(constant("W_C").constant_type, ConstantType::WString);
    assert_eq!(constant("W_C").value, Value::String("wide".into()));
    // As in ROS 2, '#' starts a comment even inside quotes.
    assert_eq!(constant("S_C").value, Value::String("\"hello".into()));
}

#[test]
fn standard_and_user_packages_share_one_loader() {
    // The user package refers to a standard type (builtin_interfaces/Time); without the
    // standard packages it does not resolve.
    let mut alone = InterfaceSet::new();
    alone
        .add_package_dir("horus_idl_test", &fixtures().join("horus_idl_test"))
        .unwrap();
    assert!(alone.resolve().is_err());
    assert!(standard_interfaces_dir().join("std_msgs/LICENSE").exists());
}
