//! ROS 2 CDR bytes through horus-idl's non-allocating checker (`horus_idl::cdr::CdrCheck`,
//! what the ROS 2 bridge runs on every payload a DDS peer sends before it enters shared
//! memory), held against the decoder (`decode_prefix`).
//!
//! The first byte picks the message type, the rest is the CDR (encapsulation header
//! included). The checker must never panic or run unbounded, and must give the decoder's
//! verdict: the same end for what the decoder accepts, the decoder's error otherwise.
#![no_main]

use std::sync::OnceLock;

use horus_idl::cdr::{decode_prefix, CdrCheck};
use horus_idl::{InterfaceSet, TypeName};
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
    "sensor_msgs/msg/LaserScan",
    "tf2_msgs/msg/TFMessage",
];

fn checks() -> &'static Vec<CdrCheck> {
    static C: OnceLock<Vec<CdrCheck>> = OnceLock::new();
    C.get_or_init(|| {
        let r = InterfaceSet::standard()
            .expect("vendored packages load")
            .resolve()
            .expect("vendored packages resolve");
        TYPES
            .iter()
            .map(|t| CdrCheck::new(r.clone(), TypeName::parse(t).unwrap()))
            .collect()
    })
}

fn resolved() -> &'static horus_idl::Resolved {
    static R: OnceLock<horus_idl::Resolved> = OnceLock::new();
    R.get_or_init(|| {
        InterfaceSet::standard()
            .expect("vendored packages load")
            .resolve()
            .expect("vendored packages resolve")
    })
}

fuzz_target!(|data: &[u8]| {
    let Some((&pick, bytes)) = data.split_first() else {
        return;
    };
    let check = &checks()[usize::from(pick) % TYPES.len()];
    let want = decode_prefix(resolved(), check.root(), bytes).map(|(_, end)| end);
    assert_eq!(check.check_prefix(bytes), want);
});
