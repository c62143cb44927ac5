//! Run-time descriptions: built from `message!`, self-consistent, and hostile ones refused.

use horus_msgs::{
    DescriptionError, FieldKind, Imu, Message, MessageDescription, Odometry, PointCloud, Scalar,
    STANDARD_SCHEMAS,
};

#[test]
fn nested_types_are_described_once_and_validate() {
    let d = MessageDescription::of::<Odometry>();
    assert_eq!(d.root().name, Odometry::SCHEMA.name());
    assert_eq!(d.root().layout_hash, Odometry::SCHEMA.layout_hash());
    assert_eq!(d.root().fields.len(), Odometry::FIELDS.len());
    let names: Vec<_> = d.types.iter().map(|t| t.name.as_str()).collect();
    for n in [
        "horus/Pose",
        "horus/Twist",
        "horus/Vector3",
        "horus/Quaternion",
    ] {
        assert_eq!(
            names.iter().filter(|x| **x == n).count(),
            1,
            "{n} in {names:?}"
        );
    }
    d.validate().unwrap();
}

#[test]
fn every_standard_message_describes_itself_consistently() {
    macro_rules! check {
        ($($t:ty),*) => {$(
            let d = MessageDescription::of::<$t>();
            d.validate().unwrap();
            assert_eq!(d.root().computed_hash(), <$t>::SCHEMA.layout_hash());
        )*};
    }
    check!(
        horus_msgs::CmdVel,
        horus_msgs::EmergencyStop,
        horus_msgs::Imu,
        horus_msgs::LaserScan,
        horus_msgs::Odometry,
        horus_msgs::PointCloud,
        horus_msgs::Image,
        horus_msgs::JointState,
        horus_msgs::BatteryState,
        horus_msgs::Pose,
        horus_msgs::Pose2D,
        horus_msgs::Twist,
        horus_msgs::Header,
        horus_msgs::Time
    );
    assert!(!STANDARD_SCHEMAS.is_empty());
}

#[test]
fn kinds_say_scalar_array_and_message() {
    let d = MessageDescription::of::<Imu>();
    let kinds: Vec<_> = d.root().fields.iter().map(|f| &f.kind).collect();
    assert!(kinds.iter().any(
        |k| matches!(k, FieldKind::Array { of, len: 27 } if **of == FieldKind::Scalar(Scalar::F64))
    ));
    let odom = MessageDescription::of::<Odometry>();
    assert!(odom
        .root()
        .fields
        .iter()
        .any(|f| matches!(&f.kind, FieldKind::Message(m) if m == "horus/Pose")));
    assert!(MessageDescription::of::<PointCloud>().root().has_tail);
}

#[test]
fn hostile_descriptions_are_refused() {
    let good = MessageDescription::of::<Odometry>();

    let mut d = good.clone();
    d.types[0].fields[0].offset = d.types[0].size;
    assert!(matches!(
        d.validate(),
        Err(DescriptionError::BadField { .. })
    ));

    let mut d = good.clone();
    d.types[0].fields[0].offset = usize::MAX;
    assert!(matches!(
        d.validate(),
        Err(DescriptionError::BadField { .. })
    ));

    let mut d = good.clone();
    d.types.retain(|t| t.name != "horus/Vector3");
    assert!(matches!(
        d.validate(),
        Err(DescriptionError::Unresolved { .. })
    ));

    let mut d = good.clone();
    d.types[0].fields[0].name.push('x');
    assert!(matches!(
        d.validate(),
        Err(DescriptionError::HashMismatch { .. })
    ));

    let mut d = good.clone();
    let dup = d.types[1].clone();
    d.types.push(dup);
    assert!(matches!(d.validate(), Err(DescriptionError::Duplicate(_))));

    // A type that contains itself: refused by the depth bound, not a stack overflow.
    let mut d = good.clone();
    let root = d.types[0].name.clone();
    d.types[0].fields[0].kind = FieldKind::Message(root);
    assert!(d.validate().is_err());

    let mut d = good.clone();
    d.types[0].fields[0].kind = FieldKind::Array {
        of: Box::new(FieldKind::Scalar(Scalar::U64)),
        len: usize::MAX,
    };
    assert!(matches!(
        d.validate(),
        Err(DescriptionError::BadField { .. })
    ));

    assert_eq!(
        MessageDescription {
            types: vec![],
            ros2: None
        }
        .validate(),
        Err(DescriptionError::Empty)
    );
}
