//! The one list of message types that Python can use, and their schema
//! tables exported to Python.
//!
//! The Python package builds its NumPy dtypes and message classes from
//! [`SchemaInfo`] at import time: the Rust `message!` definitions stay the
//! single source of truth for names, versions, layouts and hashes.

use horus::msgs::{
    BatteryState, CmdVel, EmergencyStop, Header, Image, Imu, JointState, LaserScan, Odometry,
    PointCloud, Pose, Pose2D, Quaternion, Time, Twist, Vector3,
};
use horus::Message;
use pyo3::prelude::*;

use horus_tensor::TensorRef;

/// Calls `$m!` with every message type the Python package knows: every
/// standard message of `horus-msgs` (a unit test checks the list against
/// `STANDARD_SCHEMAS`) and this crate's [`TensorRef`].
macro_rules! for_each_message {
    ($m:ident) => {
        $m!(
            Time,
            Header,
            Vector3,
            Quaternion,
            Pose2D,
            Pose,
            Twist,
            CmdVel,
            EmergencyStop,
            Imu,
            LaserScan,
            BatteryState,
            Odometry,
            JointState,
            PointCloud,
            Image,
            TensorRef
        )
    };
}
pub(crate) use for_each_message;

/// One field of a message, as declared in its `message!` definition.
#[pyclass(module = "horus._horus", frozen, get_all)]
#[derive(Clone, Debug)]
pub(crate) struct FieldInfo {
    /// Field name.
    name: String,
    /// Rust type as written (`f32`, `[f64; 4]`, `Vector3`, `[[u8; 32]; 16]`).
    ty: String,
    /// Byte offset from the start of the message.
    offset: usize,
    /// Size in bytes.
    size: usize,
}

#[pymethods]
impl FieldInfo {
    fn __repr__(&self) -> String {
        format!(
            "FieldInfo(name={:?}, ty={:?}, offset={}, size={})",
            self.name, self.ty, self.offset, self.size
        )
    }
}

/// The schema of one message type: its identity and its field table.
#[pyclass(module = "horus._horus", frozen, get_all)]
#[derive(Clone, Debug)]
pub(crate) struct SchemaInfo {
    /// Rust type name, e.g. `CmdVel` (nested fields refer to these names).
    type_name: String,
    /// Schema name, e.g. `horus/CmdVel`.
    name: String,
    /// Schema version.
    version: u32,
    /// Size of the fixed part in bytes.
    size: u32,
    /// Alignment in bytes.
    align: u32,
    /// Layout hash computed by the Rust compiler from the field list.
    layout_hash: u64,
    /// Whether a variable-size tail follows the fixed part.
    has_tail: bool,
    /// Every field in declaration order.
    fields: Vec<FieldInfo>,
    /// Rust's `Display` of the schema id.
    display: String,
}

#[pymethods]
impl SchemaInfo {
    /// `horus/CmdVel v1 (16 B, layout 0x…)`, as Rust prints a `SchemaId`.
    fn __str__(&self) -> String {
        self.display.clone()
    }

    fn __repr__(&self) -> String {
        format!("<SchemaInfo {}>", self.display)
    }
}

fn info_of<T: Message>(type_name: &str) -> SchemaInfo {
    SchemaInfo {
        type_name: type_name.to_owned(),
        name: T::SCHEMA.name().to_owned(),
        version: T::SCHEMA.version(),
        size: T::SCHEMA.size(),
        align: T::SCHEMA.align(),
        layout_hash: T::SCHEMA.layout_hash(),
        has_tail: T::HAS_TAIL,
        display: T::SCHEMA.to_string(),
        fields: T::FIELDS
            .iter()
            .map(|f| FieldInfo {
                name: f.name.to_owned(),
                ty: f.ty.to_owned(),
                offset: f.offset,
                size: f.size,
            })
            .collect(),
    }
}

/// Every message type the package knows, in dependency order (a nested
/// type comes before the messages that contain it).
pub(crate) fn all_schemas() -> Vec<SchemaInfo> {
    macro_rules! infos {
        ($($t:ident),*) => { vec![$(info_of::<$t>(stringify!($t))),*] };
    }
    for_each_message!(infos)
}

/// Named constants of the message types (point steps, image encodings,
/// stop reasons …), taken from the Rust definitions.
pub(crate) fn constants() -> Vec<(&'static str, &'static str, u64)> {
    let mut v = vec![
        (
            "PointCloud",
            "POINT_STEP_XYZ",
            u64::from(PointCloud::POINT_STEP_XYZ),
        ),
        (
            "PointCloud",
            "POINT_STEP_XYZI",
            u64::from(PointCloud::POINT_STEP_XYZI),
        ),
        (
            "PointCloud",
            "FLAG_DENSE",
            u64::from(PointCloud::FLAG_DENSE),
        ),
        (
            "EmergencyStop",
            "REASON_UNSPECIFIED",
            u64::from(EmergencyStop::REASON_UNSPECIFIED),
        ),
        (
            "EmergencyStop",
            "REASON_MANUAL",
            u64::from(EmergencyStop::REASON_MANUAL),
        ),
        (
            "EmergencyStop",
            "REASON_SOFTWARE",
            u64::from(EmergencyStop::REASON_SOFTWARE),
        ),
        (
            "EmergencyStop",
            "REASON_WATCHDOG",
            u64::from(EmergencyStop::REASON_WATCHDOG),
        ),
        (
            "EmergencyStop",
            "REASON_COLLISION",
            u64::from(EmergencyStop::REASON_COLLISION),
        ),
        (
            "EmergencyStop",
            "REASON_LOW_BATTERY",
            u64::from(EmergencyStop::REASON_LOW_BATTERY),
        ),
        (
            "EmergencyStop",
            "REASON_HARDWARE_FAULT",
            u64::from(EmergencyStop::REASON_HARDWARE_FAULT),
        ),
        (
            "EmergencyStop",
            "REASON_COMMUNICATION_LOST",
            u64::from(EmergencyStop::REASON_COMMUNICATION_LOST),
        ),
    ];
    v.extend([
        ("Image", "MONO8", u64::from(Image::MONO8)),
        ("Image", "MONO16", u64::from(Image::MONO16)),
        ("Image", "RGB8", u64::from(Image::RGB8)),
        ("Image", "BGR8", u64::from(Image::BGR8)),
        ("Image", "RGBA8", u64::from(Image::RGBA8)),
        ("Image", "BGRA8", u64::from(Image::BGRA8)),
        ("Image", "YUYV", u64::from(Image::YUYV)),
        ("Image", "DEPTH32F", u64::from(Image::DEPTH32F)),
        ("TensorRef", "POINTS", u64::from(TensorRef::POINTS)),
    ]);
    v
}

/// Every known image encoding: `(code, name, bytes per pixel)`.
pub(crate) fn image_encodings() -> Vec<(u32, &'static str, usize)> {
    (0..=255u32)
        .filter_map(|code| {
            Some((
                code,
                Image::encoding_name(code)?,
                Image::encoding_bytes_per_pixel(code)?,
            ))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_standard_message_is_listed() {
        let ours: Vec<_> = all_schemas().iter().map(|s| s.name.clone()).collect();
        for s in horus::msgs::STANDARD_SCHEMAS {
            assert!(ours.iter().any(|n| n == s.name()), "{} missing", s.name());
        }
    }

    #[test]
    fn display_matches_rust() {
        let s = info_of::<CmdVel>("CmdVel");
        assert_eq!(s.__str__(), CmdVel::SCHEMA.to_string());
    }
}
