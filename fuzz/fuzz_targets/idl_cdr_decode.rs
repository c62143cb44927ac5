//! ROS 2 CDR bytes through horus-idl's dynamic decoder (`horus_idl::cdr`).
//!
//! The first byte picks the message type, the rest is the CDR (encapsulation header
//! included). Decoding must give a value or a `CdrError`, never panic, run unbounded or
//! allocate more than the input pays for; a decoded value must encode, and decoding
//! that encoding must give the same bytes again.
#![no_main]

use std::sync::OnceLock;

use horus_idl::cdr::{decode, encode};
use horus_idl::{InterfaceSet, Resolved, TypeName};
use libfuzzer_sys::fuzz_target;

const TYPES: &[&str] = &[
    "std_msgs/msg/String",
    "std_msgs/msg/Empty",
    "std_msgs/msg/Bool",
    "std_msgs/msg/UInt8MultiArray",
    "sensor_msgs/msg/Imu",
    "sensor_msgs/msg/JointState",
    "sensor_msgs/msg/PointCloud2",
    "nav_msgs/msg/Odometry",
    "visualization_msgs/msg/MarkerArray",
    "diagnostic_msgs/msg/DiagnosticArray",
    "action_msgs/srv/CancelGoal_Event",
];

fn resolved() -> &'static (Resolved, Vec<TypeName>) {
    static R: OnceLock<(Resolved, Vec<TypeName>)> = OnceLock::new();
    R.get_or_init(|| {
        let r = InterfaceSet::standard()
            .expect("vendored packages load")
            .resolve()
            .expect("vendored packages resolve");
        let names = TYPES.iter().map(|t| TypeName::parse(t).unwrap()).collect();
        (r, names)
    })
}

fuzz_target!(|data: &[u8]| {
    let Some((&pick, bytes)) = data.split_first() else {
        return;
    };
    let (r, names) = resolved();
    let ty = &names[usize::from(pick) % names.len()];
    if let Ok(value) = decode(r, ty, bytes) {
        let once = encode(r, ty, &value).expect("a decoded value encodes");
        let again = decode(r, ty, &once).expect("our encoding decodes");
        assert_eq!(encode(r, ty, &again).expect("encodes again"), once);
    }
});
