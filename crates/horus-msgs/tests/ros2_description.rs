//! The `ros2` section of a message description: what a valid one holds, and each way a
//! hostile one is refused.

use horus_msgs::{
    rihs01_layout_hash, CmdVel, DescriptionError, MessageDescription, Ros2Type, TypeDescription,
};

const HASH: &str = "RIHS01_d1e2f3a4b5c6d7e8f90112233445566778899aabbccddeeff001122334455667";

fn ty() -> Ros2Type {
    Ros2Type::new(
        "demo_msgs/msg/Blob",
        HASH,
        "string name\nfloat32[] values\n",
    )
}

fn refused(d: &MessageDescription) -> String {
    match d.validate() {
        Err(DescriptionError::Ros2(why)) => why,
        other => panic!("expected a Ros2 error, got {other:?}"),
    }
}

#[test]
fn a_ros2_description_holds_the_frame_of_its_type() {
    let d = MessageDescription::ros2(ty()).unwrap();
    assert_eq!(d.types.len(), 1);
    let root = d.root();
    assert_eq!(root.name, "demo_msgs/msg/Blob");
    assert_eq!((root.version, root.size, root.align), (1, 8, 8));
    assert!(root.has_tail && root.fields.is_empty());
    assert_eq!(root.layout_hash, 0xd1e2_f3a4_b5c6_d7e8);
    assert_eq!(d.ros2.as_ref().unwrap().encoding, "cdr");
    assert_eq!(d.ros2.as_ref().unwrap().schema_encoding, "ros2msg");
}

#[test]
fn fixed_layout_descriptions_have_no_ros2_section() {
    assert_eq!(MessageDescription::of::<CmdVel>().ros2, None);
}

#[test]
fn rihs01_hashes_are_parsed_strictly() {
    assert_eq!(rihs01_layout_hash(HASH), Some(0xd1e2_f3a4_b5c6_d7e8));
    for bad in [
        "",
        "RIHS01_",
        &HASH[..HASH.len() - 1],
        &format!("{HASH}0"),
        &HASH.replace("RIHS01_", "RIHS02_"),
        &HASH.replace('d', "D"),
        &HASH.replacen('1', "g", 2),
        &HASH.replacen('e', "é", 1),
    ] {
        assert_eq!(rihs01_layout_hash(bad), None, "{bad:?}");
    }
}

/// Breaks one thing of a section.
type Breaker = Box<dyn Fn(&mut Ros2Type)>;

#[test]
fn malformed_sections_are_refused() {
    let cases: Vec<(&str, Breaker)> = vec![
        ("empty name", Box::new(|t| t.type_name.clear())),
        ("long name", Box::new(|t| t.type_name = "a".repeat(257))),
        (
            "odd name",
            Box::new(|t| t.type_name = "demo msgs/msg/X".into()),
        ),
        (
            "short hash",
            Box::new(|t| t.type_hash = "RIHS01_abc".into()),
        ),
        ("json encoding", Box::new(|t| t.encoding = "json".into())),
        (
            "idl schema",
            Box::new(|t| t.schema_encoding = "ros2idl".into()),
        ),
        (
            "long definition",
            Box::new(|t| t.definition = "#".repeat(Ros2Type::MAX_DEFINITION + 1)),
        ),
    ];
    for (what, break_it) in cases {
        let mut t = ty();
        break_it(&mut t);
        assert!(
            matches!(t.validate(), Err(DescriptionError::Ros2(_))),
            "{what}"
        );
        assert!(MessageDescription::ros2(t.clone()).is_err(), "{what}");
        let mut d = MessageDescription::ros2(ty()).unwrap();
        d.ros2 = Some(t);
        refused(&d);
    }
    let mut t = ty();
    t.definition = "#".repeat(Ros2Type::MAX_DEFINITION);
    assert!(
        MessageDescription::ros2(t).is_ok(),
        "the bound itself is allowed"
    );
}

#[test]
fn a_frame_that_does_not_match_its_section_is_refused() {
    let frame = |f: &dyn Fn(&mut TypeDescription)| {
        let mut d = MessageDescription::ros2(ty()).unwrap();
        f(&mut d.types[0]);
        d
    };
    refused(&frame(&|t| t.layout_hash ^= 1));
    refused(&frame(&|t| t.name = "demo_msgs/msg/Other".into()));
    refused(&frame(&|t| t.size = 16));
    refused(&frame(&|t| t.align = 4));
    refused(&frame(&|t| t.has_tail = false));
    refused(&frame(&|t| t.version = 2));
    refused(&frame(&|t| {
        t.fields = MessageDescription::of::<CmdVel>().types[0].fields.clone()
    }));
    let mut two = MessageDescription::ros2(ty()).unwrap();
    two.types
        .push(MessageDescription::of::<CmdVel>().types[0].clone());
    refused(&two);
    let mut none = MessageDescription::ros2(ty()).unwrap();
    none.types.clear();
    assert_eq!(none.validate(), Err(DescriptionError::Empty));
}

#[test]
fn a_ros2_section_on_a_fixed_layout_type_is_refused() {
    let mut d = MessageDescription::of::<CmdVel>();
    d.ros2 = Some(ty());
    refused(&d);
}
