//! Per-type mapping of horus messages to what a Foxglove client decodes.
//!
//! Standard messages with a Foxglove built-in schema are sent as JSON (`json` encoding, a
//! `jsonschema` schema named after the Foxglove type, so the 3-D and image panels show them):
//!
//! | horus            | Foxglove               | notes                                          |
//! |------------------|------------------------|------------------------------------------------|
//! | `LaserScan`      | `foxglove.LaserScan`   | frame `base_link` (the message has no frame)   |
//! | `PointCloud`     | `foxglove.PointCloud`  | points packed as in horus (x,y,z[,intensity])  |
//! | `Image`          | `foxglove.RawImage`    | pixels as sent, `step` kept                    |
//! | `Odometry`       | `foxglove.PoseInFrame` | pose of `child_frame_id` in `frame_id`         |
//! | `Odometry`       | `foxglove.FrameTransform` | on a second channel `<topic>/tf`: `frame_id` → `child_frame_id` |
//! | `Pose`           | `foxglove.PoseInFrame` | frame `world`, stamped with the receive time   |
//!
//! A ROS-typed topic (its description has a `ros2` section: `sensor_msgs/msg/LaserScan`,
//! `tf2_msgs/msg/TFMessage`, …) is advertised as ROS 2 itself would be: schema name = the ROS
//! type, schema encoding `ros2msg` with the type's definition, message encoding `cdr`, and
//! every message is the wire bytes as published (encapsulation header and CDR body, copied
//! once, never converted), so Foxglove's 3-D, Image and other panels draw the standard ROS 2
//! types directly.
//!
//! A type is recognised only when the topic's description is exactly the standard one (same
//! fields, offsets and sizes), so its bytes can be read as the struct. Everything else goes
//! through the generic path: the `ros2msg` schema generated from the description and the exact
//! CDR encoding of `horus-record`, which Foxglove decodes natively (`cdr` encoding). A
//! description CDR cannot express is sent as JSON decoded by
//! [`decode_message`](horus::inspect::decode_message).

use std::io::Write as _;

use base64::Engine as _;
use horus::inspect::decode_message;
use horus::msgs::{Image, LaserScan, MessageDescription, Odometry, PointCloud, Pose, Ros2Type};
use horus_record::{cdr::CdrPlan, ros2msg};

const TIME: &str =
    r#"{"type":"object","properties":{"sec":{"type":"integer"},"nsec":{"type":"integer"}}}"#;
const VEC3: &str = r#"{"type":"object","properties":{"x":{"type":"number"},"y":{"type":"number"},"z":{"type":"number"}}}"#;
const QUAT: &str = r#"{"type":"object","properties":{"x":{"type":"number"},"y":{"type":"number"},"z":{"type":"number"},"w":{"type":"number"}}}"#;

fn pose_schema() -> String {
    format!(r#"{{"type":"object","properties":{{"position":{VEC3},"orientation":{QUAT}}}}}"#)
}

fn object(title: &str, props: &[(&str, String)]) -> String {
    let body: Vec<String> = props.iter().map(|(k, v)| format!("\"{k}\":{v}")).collect();
    format!(
        r#"{{"title":"{title}","type":"object","properties":{{{}}}}}"#,
        body.join(",")
    )
}

/// Bytes before the wire bytes in a ROS-typed topic's message (`[0 0 0 0][00 01 00 00]…`).
const ROS2_FRAME_RESERVED: usize = 4;

const NUM: &str = r#"{"type":"number"}"#;
const INT: &str = r#"{"type":"integer"}"#;
const STR: &str = r#"{"type":"string"}"#;
const BYTES: &str = r#"{"type":"string","contentEncoding":"base64"}"#;
const NUMS: &str = r#"{"type":"array","items":{"type":"number"}}"#;

/// How one topic's messages reach a client.
pub enum Mapping {
    /// `horus/LaserScan` → `foxglove.LaserScan`.
    LaserScan,
    /// `horus/PointCloud` → `foxglove.PointCloud`.
    PointCloud,
    /// `horus/Image` → `foxglove.RawImage`.
    Image,
    /// `horus/Odometry` → `foxglove.PoseInFrame`.
    Odometry,
    /// `horus/Odometry` → `foxglove.FrameTransform` (the derived `<topic>/tf` channel).
    OdometryTransform,
    /// `horus/Pose` → `foxglove.PoseInFrame`.
    Pose,
    /// Any other type: `ros2msg` schema, CDR bytes.
    Cdr(CdrPlan),
    /// A type CDR cannot express: JSON as `horus topic echo` prints it.
    Json(Box<MessageDescription>),
    /// A ROS-typed topic: `ros2msg` schema = its definition, the wire bytes as they are.
    Ros2(Box<Ros2Type>),
}

/// What a channel advertisement states about its messages.
pub struct ChannelSchema {
    /// Message encoding (`json` or `cdr`).
    pub encoding: &'static str,
    /// Schema name (`foxglove.LaserScan`, `horus/msg/CmdVel`, …).
    pub name: String,
    /// Schema encoding (`jsonschema` or `ros2msg`).
    pub schema_encoding: &'static str,
    /// The schema text.
    pub text: String,
}

/// Why a message could not be encoded for Foxglove.
#[derive(Debug, thiserror::Error)]
pub enum EncodeError {
    /// The bytes do not have the size the description states.
    #[error("message of {got} bytes, the type needs {need}")]
    Size {
        /// Bytes received.
        got: usize,
        /// Bytes the type needs (at least, with a tail).
        need: usize,
    },
    /// The generic CDR encoder refused the bytes.
    #[error("cdr: {0}")]
    Cdr(#[from] horus_record::cdr::CdrError),
    /// The JSON decoder refused the bytes.
    #[error("decode: {0}")]
    Decode(#[from] horus::inspect::DecodeError),
}

fn fixed<M: bytemuck::Pod>(bytes: &[u8], tail: bool) -> Result<M, EncodeError> {
    let need = std::mem::size_of::<M>();
    if bytes.len() < need || (!tail && bytes.len() != need) {
        return Err(EncodeError::Size {
            got: bytes.len(),
            need,
        });
    }
    Ok(bytemuck::pod_read_unaligned(&bytes[..need]))
}

fn time(ns: u64) -> String {
    format!(
        r#"{{"sec":{},"nsec":{}}}"#,
        ns / 1_000_000_000,
        ns % 1_000_000_000
    )
}

/// A finite float as JSON (non-finite values, which JSON cannot hold, as `null`).
fn num(x: f64) -> String {
    if x.is_finite() {
        format!("{x}")
    } else {
        "null".into()
    }
}

/// Frame name from NUL-padded bytes (lossy: a bad peer's bytes never fail the message).
fn frame(b: &[u8]) -> String {
    let end = b.iter().position(|&x| x == 0).unwrap_or(b.len());
    serde_json::Value::String(String::from_utf8_lossy(&b[..end]).into_owned()).to_string()
}

fn pose_json(p: &Pose) -> String {
    format!(
        r#"{{"position":{{"x":{},"y":{},"z":{}}},"orientation":{{"x":{},"y":{},"z":{},"w":{}}}}}"#,
        num(p.position.x),
        num(p.position.y),
        num(p.position.z),
        num(p.orientation.x),
        num(p.orientation.y),
        num(p.orientation.z),
        num(p.orientation.w)
    )
}

/// Appends `data` as base64 to `out` (encoded in place: no intermediate string).
fn base64_into(out: &mut Vec<u8>, data: &[u8]) {
    let start = out.len();
    out.resize(start + data.len().div_ceil(3) * 4, 0);
    let n = base64::engine::general_purpose::STANDARD
        .encode_slice(data, &mut out[start..])
        .expect("sized for the padded encoding");
    out.truncate(start + n);
}

impl Mapping {
    /// The mapping for a validated description.
    pub fn for_description(d: &MessageDescription) -> Mapping {
        if let Some(ty) = &d.ros2 {
            Mapping::Ros2(Box::new(ty.clone()))
        } else if *d == MessageDescription::of::<LaserScan>() {
            Mapping::LaserScan
        } else if *d == MessageDescription::of::<PointCloud>() {
            Mapping::PointCloud
        } else if *d == MessageDescription::of::<Image>() {
            Mapping::Image
        } else if *d == MessageDescription::of::<Odometry>() {
            Mapping::Odometry
        } else if *d == MessageDescription::of::<Pose>() {
            Mapping::Pose
        } else {
            match CdrPlan::new(d) {
                Ok(plan) => Mapping::Cdr(plan),
                Err(_) => Mapping::Json(Box::new(d.clone())),
            }
        }
    }

    /// What the advertisement says; `d` is the description the mapping was made from.
    pub fn schema(&self, d: &MessageDescription) -> ChannelSchema {
        let json = |name: &str, text: String| ChannelSchema {
            encoding: "json",
            name: name.into(),
            schema_encoding: "jsonschema",
            text,
        };
        fn stamped(extra: &[(&'static str, String)]) -> Vec<(&'static str, String)> {
            let mut v = vec![("timestamp", TIME.to_owned()), ("frame_id", STR.to_owned())];
            v.extend(extra.iter().cloned());
            v
        }
        match self {
            Mapping::LaserScan => json(
                "foxglove.LaserScan",
                object(
                    "foxglove.LaserScan",
                    &stamped(&[
                        ("pose", pose_schema()),
                        ("start_angle", NUM.into()),
                        ("end_angle", NUM.into()),
                        ("ranges", NUMS.into()),
                        ("intensities", NUMS.into()),
                    ]),
                ),
            ),
            Mapping::PointCloud => {
                let field = object(
                    "foxglove.PackedElementField",
                    &[
                        ("name", STR.into()),
                        ("offset", INT.into()),
                        ("type", INT.into()),
                    ],
                );
                json(
                    "foxglove.PointCloud",
                    object(
                        "foxglove.PointCloud",
                        &stamped(&[
                            ("pose", pose_schema()),
                            ("point_stride", INT.into()),
                            ("fields", format!(r#"{{"type":"array","items":{field}}}"#)),
                            ("data", BYTES.into()),
                        ]),
                    ),
                )
            }
            Mapping::Image => json(
                "foxglove.RawImage",
                object(
                    "foxglove.RawImage",
                    &stamped(&[
                        ("width", INT.into()),
                        ("height", INT.into()),
                        ("encoding", STR.into()),
                        ("step", INT.into()),
                        ("data", BYTES.into()),
                    ]),
                ),
            ),
            Mapping::OdometryTransform => json(
                "foxglove.FrameTransform",
                object(
                    "foxglove.FrameTransform",
                    &[
                        ("timestamp", TIME.to_owned()),
                        ("parent_frame_id", STR.to_owned()),
                        ("child_frame_id", STR.to_owned()),
                        ("translation", VEC3.to_owned()),
                        ("rotation", QUAT.to_owned()),
                    ],
                ),
            ),
            Mapping::Odometry | Mapping::Pose => json(
                "foxglove.PoseInFrame",
                object("foxglove.PoseInFrame", &stamped(&[("pose", pose_schema())])),
            ),
            Mapping::Cdr(_) => {
                let s = ros2msg::generate(d);
                ChannelSchema {
                    encoding: "cdr",
                    name: s.name,
                    schema_encoding: ros2msg::ENCODING,
                    text: s.text,
                }
            }
            Mapping::Json(_) => json(&d.root().name, r#"{"type":"object"}"#.into()),
            Mapping::Ros2(ty) => ChannelSchema {
                encoding: "cdr",
                name: ty.type_name.clone(),
                schema_encoding: ros2msg::ENCODING,
                text: ty.definition.clone(),
            },
        }
    }

    /// Encodes one message (`bytes`: fixed part and tail, as received) into `out`;
    /// `recv_ns` stamps messages that carry no stamp of their own.
    pub fn encode(&self, bytes: &[u8], recv_ns: u64, out: &mut Vec<u8>) -> Result<(), EncodeError> {
        out.clear();
        match self {
            Mapping::LaserScan => {
                let s: LaserScan = fixed(bytes, false)?;
                let ranges: Vec<String> = s.valid_ranges().iter().map(|&r| num(r.into())).collect();
                let _ = write!(
                    out,
                    r#"{{"timestamp":{},"frame_id":"base_link","pose":{},"start_angle":{},"end_angle":{},"ranges":[{}],"intensities":[]}}"#,
                    time(s.stamp_ns),
                    pose_json(&Pose::IDENTITY),
                    num(s.angle_min.into()),
                    num(s.angle_max.into()),
                    ranges.join(",")
                );
            }
            Mapping::PointCloud => {
                let c: PointCloud = fixed(bytes, true)?;
                let tail = &bytes[std::mem::size_of::<PointCloud>()..];
                let data = &tail[..c.tail_len().min(tail.len())];
                // foxglove.NumericType FLOAT32 = 7.
                let mut fields = String::from(
                    r#"{"name":"x","offset":0,"type":7},{"name":"y","offset":4,"type":7},{"name":"z","offset":8,"type":7}"#,
                );
                if c.has_intensity() {
                    fields.push_str(r#",{"name":"intensity","offset":12,"type":7}"#);
                }
                let _ = write!(
                    out,
                    r#"{{"timestamp":{},"frame_id":{},"pose":{},"point_stride":{},"fields":[{}],"data":""#,
                    time(c.stamp_ns),
                    frame(&c.frame_id),
                    pose_json(&Pose::IDENTITY),
                    c.point_step,
                    fields
                );
                base64_into(out, data);
                out.extend_from_slice(b"\"}");
            }
            Mapping::Image => {
                let im: Image = fixed(bytes, true)?;
                let tail = &bytes[std::mem::size_of::<Image>()..];
                let want = (im.step as usize).saturating_mul(im.height as usize);
                let data = &tail[..want.min(tail.len())];
                let enc = match im.encoding {
                    Image::MONO8 => "mono8",
                    Image::MONO16 => "mono16",
                    Image::RGB8 => "rgb8",
                    Image::BGR8 => "bgr8",
                    Image::RGBA8 => "rgba8",
                    Image::BGRA8 => "bgra8",
                    Image::YUYV => "yuyv",
                    Image::DEPTH32F => "32FC1",
                    _ => "unknown",
                };
                let _ = write!(
                    out,
                    r#"{{"timestamp":{},"frame_id":{},"width":{},"height":{},"encoding":"{enc}","step":{},"data":""#,
                    time(im.stamp_ns),
                    frame(&im.frame_id),
                    im.width,
                    im.height,
                    im.step
                );
                base64_into(out, data);
                out.extend_from_slice(b"\"}");
            }
            Mapping::Odometry => {
                let o: Odometry = fixed(bytes, false)?;
                let _ = write!(
                    out,
                    r#"{{"timestamp":{},"frame_id":{},"pose":{}}}"#,
                    time(o.stamp_ns),
                    frame(&o.frame_id),
                    pose_json(&o.pose)
                );
            }
            Mapping::OdometryTransform => {
                let o: Odometry = fixed(bytes, false)?;
                let p = &o.pose;
                let _ = write!(
                    out,
                    r#"{{"timestamp":{},"parent_frame_id":{},"child_frame_id":{},"translation":{{"x":{},"y":{},"z":{}}},"rotation":{{"x":{},"y":{},"z":{},"w":{}}}}}"#,
                    time(o.stamp_ns),
                    frame(&o.frame_id),
                    frame(&o.child_frame_id),
                    num(p.position.x),
                    num(p.position.y),
                    num(p.position.z),
                    num(p.orientation.x),
                    num(p.orientation.y),
                    num(p.orientation.z),
                    num(p.orientation.w)
                );
            }
            Mapping::Pose => {
                let p: Pose = fixed(bytes, false)?;
                let _ = write!(
                    out,
                    r#"{{"timestamp":{},"frame_id":"world","pose":{}}}"#,
                    time(recv_ns),
                    pose_json(&p)
                );
            }
            Mapping::Cdr(plan) => plan.encode(bytes, out)?,
            Mapping::Ros2(_) => {
                // The chunk: 4 reserved bytes, then the wire bytes (header and body).
                let wire = bytes.get(ROS2_FRAME_RESERVED..).unwrap_or_default();
                horus_record::ros2::check_wire(wire)?;
                out.extend_from_slice(wire);
            }
            Mapping::Json(d) => {
                let v = decode_message(d, bytes)?;
                serde_json::to_writer(&mut *out, &v).expect("writing JSON to a Vec never fails");
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;

    fn encode<M: horus::msgs::Message>(m: &M, tail: &[u8]) -> Value {
        let d = MessageDescription::of::<M>();
        let mut bytes = bytemuck::bytes_of(m).to_vec();
        bytes.extend_from_slice(tail);
        let mut out = Vec::new();
        Mapping::for_description(&d)
            .encode(&bytes, 99, &mut out)
            .unwrap();
        serde_json::from_slice(&out).unwrap()
    }

    #[test]
    fn image_becomes_raw_image_with_its_pixels() {
        let mut im: Image = bytemuck::Zeroable::zeroed();
        (im.width, im.height, im.step, im.encoding) = (2, 2, 6, Image::RGB8);
        im.stamp_ns = 3_000_000_005;
        im.frame_id[..3].copy_from_slice(b"cam");
        let px: Vec<u8> = (0..12).collect();
        let v = encode(&im, &px);
        assert_eq!(v["encoding"], "rgb8");
        assert_eq!(
            (v["width"].as_u64(), v["step"].as_u64()),
            (Some(2), Some(6))
        );
        assert_eq!(v["frame_id"], "cam");
        assert_eq!(v["timestamp"], serde_json::json!({"sec": 3, "nsec": 5}));
        let data = base64::engine::general_purpose::STANDARD
            .decode(v["data"].as_str().unwrap())
            .unwrap();
        assert_eq!(data, px);
    }

    #[test]
    fn odometry_and_pose_become_pose_in_frame() {
        let mut o: Odometry = bytemuck::Zeroable::zeroed();
        o.set_frame_id("odom").unwrap();
        o.pose.position.x = 1.5;
        o.pose.orientation.w = 1.0;
        let v = encode(&o, &[]);
        assert_eq!(v["frame_id"], "odom");
        assert_eq!(v["pose"]["position"]["x"], 1.5);
        assert_eq!(v["pose"]["orientation"]["w"], 1.0);
        let d = MessageDescription::of::<Odometry>();
        o.set_child_frame_id("base_link").unwrap();
        let mut out = Vec::new();
        let tf = Mapping::OdometryTransform;
        tf.encode(bytemuck::bytes_of(&o), 0, &mut out).unwrap();
        let v: Value = serde_json::from_slice(&out).unwrap();
        assert_eq!(tf.schema(&d).name, "foxglove.FrameTransform");
        assert_eq!(
            (v["parent_frame_id"].as_str(), v["child_frame_id"].as_str()),
            (Some("odom"), Some("base_link"))
        );
        assert_eq!(v["translation"]["x"], 1.5);
        let v = encode(&Pose::IDENTITY, &[]);
        assert_eq!(v["frame_id"], "world");
        assert_eq!(v["timestamp"]["nsec"], 99, "stamped with the receive time");
    }

    #[test]
    fn ros_typed_topics_keep_their_type_definition_and_wire_bytes() {
        let hash = "RIHS01_00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff";
        let ty = Ros2Type::new(
            "geometry_msgs/msg/Vector3",
            hash,
            "float64 x\nfloat64 y\nfloat64 z\n",
        );
        let d = MessageDescription::ros2(ty.clone()).unwrap();
        let m = Mapping::for_description(&d);
        let s = m.schema(&d);
        assert_eq!(
            (
                s.encoding,
                s.name.as_str(),
                s.schema_encoding,
                s.text.as_str()
            ),
            (
                "cdr",
                "geometry_msgs/msg/Vector3",
                "ros2msg",
                ty.definition.as_str()
            )
        );
        let mut chunk = vec![0, 0, 0, 0, 0, 1, 0, 0];
        for v in [1.5f64, -2.0, 0.25] {
            chunk.extend_from_slice(&v.to_le_bytes());
        }
        let mut out = Vec::new();
        m.encode(&chunk, 0, &mut out).unwrap();
        assert_eq!(out, chunk[4..], "the wire bytes, as published");
        assert!(
            m.encode(&[0, 0, 0, 0, 0, 0, 0, 0], 0, &mut out).is_err(),
            "big-endian"
        );
        assert!(m.encode(&[0, 0, 0], 0, &mut out).is_err());
    }

    #[test]
    fn non_finite_ranges_are_null_and_sizes_are_checked() {
        let mut s: LaserScan = bytemuck::Zeroable::zeroed();
        s.num_ranges = 2;
        s.ranges[0] = f32::NAN;
        s.ranges[1] = 0.25;
        let v = encode(&s, &[]);
        assert_eq!(v["ranges"], serde_json::json!([null, 0.25]));
        let mut out = Vec::new();
        assert!(Mapping::LaserScan.encode(&[0u8; 10], 0, &mut out).is_err());
    }
}
