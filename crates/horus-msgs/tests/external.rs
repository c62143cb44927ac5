//! `message!` used from outside horus-msgs, the way an application defines its own messages.
//! Nothing from `bytemuck` is imported here: the macro must reach it through `$crate`.

mod app {
    /// Maximum number of waypoints in a [`Path2D`].
    pub(crate) const MAX_WAYPOINTS: usize = 8;

    horus_msgs::message! {
        /// A short planar path, nesting a standard message.
        pub struct Path2D: "app/Path2D", version 3 {
            /// Time the path was planned, ns since the UNIX epoch.
            pub stamp_ns: u64,
            /// Number of meaningful waypoints.
            pub len: u32,
            /// Reserved.
            pub _pad: u32,
            /// Waypoints.
            pub waypoints: [horus_msgs::Pose2D; MAX_WAYPOINTS],
        }
    }

    horus_msgs::message! {
        /// A blob header whose bytes follow in the tail.
        pub(crate) struct Blob: "app/Blob", version 1, tail {
            /// Number of bytes in the tail.
            pub len: u64,
        }
    }
}

use horus_msgs::Message;

#[test]
fn external_message_has_schema_and_fields() {
    use app::Path2D;
    assert_eq!(Path2D::SCHEMA.name(), "app/Path2D");
    assert_eq!(Path2D::SCHEMA.version(), 3);
    assert_eq!(Path2D::SCHEMA.size() as usize, 16 + 8 * 24);
    const { assert!(!Path2D::HAS_TAIL) };
    let names: Vec<_> = Path2D::FIELDS.iter().map(|f| f.name).collect();
    assert_eq!(names, ["stamp_ns", "len", "_pad", "waypoints"]);
    assert_eq!(
        Path2D::FIELDS[3].offset,
        core::mem::offset_of!(Path2D, waypoints)
    );
    assert_eq!(Path2D::FIELDS[3].ty, "[horus_msgs::Pose2D; MAX_WAYPOINTS]");
    const { assert!(app::Blob::HAS_TAIL) };
    assert_eq!(
        app::Blob::SCHEMA.to_string().split(' ').next(),
        Some("app/Blob")
    );
}

#[test]
fn external_message_is_pod() {
    fn round_trip<T: Message>(value: T) -> T {
        let bytes = horus_msgs::__bytemuck::bytes_of(&value).to_vec();
        horus_msgs::__bytemuck::pod_read_unaligned(&bytes)
    }
    let mut p: app::Path2D = horus_msgs::prelude::Zeroable::zeroed();
    p.len = 1;
    p.waypoints[0] = horus_msgs::Pose2D::new(1.0, 2.0, 3.0);
    assert_eq!(round_trip(p), p);
}
