//! Bounds on untrusted input: every interface file is read and parsed within these.

/// Largest interface file accepted, in bytes. The largest standard file
/// (`sensor_msgs/msg/CameraInfo.msg`) is about 10 KiB.
pub const MAX_FILE_BYTES: usize = 1 << 20;

/// Longest line accepted, in bytes (comments included).
pub const MAX_LINE_BYTES: usize = 4096;

/// Most fields plus constants in one message (one section of a `.srv`/`.action`).
pub const MAX_MEMBERS: usize = 4096;

/// Largest array size, sequence bound or string bound. CDR encodes lengths as
/// `uint32`, so nothing larger can be represented on the wire.
pub const MAX_BOUND: u64 = u32::MAX as u64;

/// Most interface files read from one package directory.
pub const MAX_FILES_PER_PACKAGE: usize = 10_000;

/// Most sections (the root type's text plus each `MSG:`/`SRV:`/`ACTION:` part) in one
/// `ros2msg` definition; the whole definition is bounded by [`MAX_FILE_BYTES`]. The
/// standard type with the most dependencies (`visualization_msgs/msg/MarkerArray`)
/// has about a dozen.
pub const MAX_ROS2MSG_SECTIONS: usize = 1024;
