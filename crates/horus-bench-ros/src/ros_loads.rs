//! The [`Workload`]s of the `ros_messages` benchmark, one per message type: how each
//! message is built in a loan and read through its view (see [`crate::ros_kinds`]).

use std::hint::black_box;

use anyhow::ensure;
use horus::cdr::{CdrWriter, EncodeError, RosMessage};
use horus::ros::{Ros, RosSendError};
use horus::{Delivery, Publisher};
use horus_bench::payload::{self, Touch};
use horus_ros_msgs::builtin_interfaces::msg::Time;
use horus_ros_msgs::geometry_msgs::msg::{
    Quaternion, Transform, TransformStamped, TransformStampedView, Vector3,
};
use horus_ros_msgs::sensor_msgs::msg::{
    Image, ImageView, JointState, JointStateView, LaserScan, LaserScanView, PointCloud2,
    PointCloud2View, PointField,
};
use horus_ros_msgs::std_msgs::msg::{Header, HeaderView};
use horus_ros_msgs::tf2_msgs::msg::{TFMessage, TFMessageView};

use crate::ros_kinds::{RosKind, Workload};

fn stamp(seq: u64) -> Time {
    Time {
        sec: (seq / 1_000_000_000) as i32,
        nanosec: (seq % 1_000_000_000) as u32,
    }
}

/// The sequence number in a header's stamp, with the frame id's bytes summed.
fn read_header(h: HeaderView<'_>) -> u64 {
    black_box(str_sum(h.frame_id()));
    let t = h.stamp();
    t.sec() as u64 * 1_000_000_000 + u64::from(t.nanosec())
}

fn str_sum(s: &str) -> u64 {
    s.bytes().map(u64::from).sum()
}

/// Reads every element once: a wrapping sum of the bit patterns (vectorised, like the
/// fixed path's checksum; a float sum would be one dependent add per element).
fn f32_sum(v: &[f32]) -> u64 {
    v.iter()
        .fold(0u64, |acc, x| acc.wrapping_add(u64::from(x.to_bits())))
}

/// As [`f32_sum`], for `f64`.
fn f64_sum(v: &[f64]) -> u64 {
    v.iter().fold(0u64, |acc, x| acc.wrapping_add(x.to_bits()))
}

fn header(frame: &str) -> Header {
    Header {
        stamp: Time::default(),
        frame_id: frame.to_owned(),
    }
}

/// `sensor_msgs/Image`, its pixels produced in place.
pub struct ImageLoad {
    fields: Image,
    pixels: usize,
}

impl Workload for ImageLoad {
    type M = Image;
    fn new(_: RosKind) -> Self {
        let (width, height) = (640u32, 480u32);
        Self {
            fields: Image {
                header: header("camera_optical"),
                height,
                width,
                encoding: "rgb8".to_owned(),
                is_bigendian: 0,
                step: width * 3,
                data: Vec::new(),
            },
            pixels: (width * height * 3) as usize,
        }
    }
    fn body_len(&self) -> usize {
        // The data is a u8 sequence (no padding): the fields' size plus the pixels.
        self.fields.cdr_size().expect("image fields encode") + self.pixels
    }
    fn stamp(&mut self, seq: u64) {
        self.fields.header.stamp = stamp(seq);
    }
    fn write_body(&self, w: &mut CdrWriter<'_>, seq: u64) -> Result<(), EncodeError> {
        let f = &self.fields;
        f.header.write_cdr(w)?;
        w.write(f.height)?;
        w.write(f.width)?;
        w.write_string("encoding", &f.encoding, None)?;
        w.write(f.is_bigendian)?;
        w.write(f.step)?;
        write_data(w, self.pixels, seq)
    }
    fn read(v: ImageView<'_>) -> anyhow::Result<u64> {
        let seq = read_header(v.header());
        black_box((
            v.height(),
            v.width(),
            str_sum(v.encoding()),
            v.is_bigendian(),
            v.step(),
        ));
        ensure!(
            v.data().len() == (v.step() * v.height()) as usize,
            "image data size"
        );
        payload::check(v.data(), seq, Touch::Full)?;
        Ok(seq)
    }
}

/// A `uint8[] data` of `n` bytes, every byte written in place (the benchmark fill).
fn write_data(w: &mut CdrWriter<'_>, n: usize, seq: u64) -> Result<(), EncodeError> {
    w.write_count("data", n, None)?;
    w.write_slice_with::<u8>("data", n, |out| payload::write(out, seq, Touch::Full))
}

/// `sensor_msgs/PointCloud2`, its points produced in place.
pub struct CloudLoad {
    pub(crate) fields: PointCloud2,
    bytes: usize,
}

impl Workload for CloudLoad {
    type M = PointCloud2;
    fn new(kind: RosKind) -> Self {
        let (points, names): (u32, &[&str]) = match kind {
            RosKind::Cloud10k => (10_000, &["x", "y", "z"]),
            RosKind::Cloud100k => (100_000, &["x", "y", "z"]),
            _ => (65_536, &["x", "y", "z", "intensity"]),
        };
        let step = 4 * names.len() as u32;
        let fields = names
            .iter()
            .enumerate()
            .map(|(k, name)| PointField {
                name: (*name).to_owned(),
                offset: 4 * k as u32,
                datatype: PointField::FLOAT32,
                count: 1,
            })
            .collect();
        Self {
            fields: PointCloud2 {
                header: header("lidar"),
                height: 1,
                width: points,
                fields,
                is_bigendian: false,
                point_step: step,
                row_step: step * points,
                data: Vec::new(),
                is_dense: true,
            },
            bytes: (step * points) as usize,
        }
    }
    fn body_len(&self) -> usize {
        self.fields.cdr_size().expect("cloud fields encode") + self.bytes
    }
    fn stamp(&mut self, seq: u64) {
        self.fields.header.stamp = stamp(seq);
    }
    fn write_body(&self, w: &mut CdrWriter<'_>, seq: u64) -> Result<(), EncodeError> {
        let f = &self.fields;
        f.header.write_cdr(w)?;
        w.write(f.height)?;
        w.write(f.width)?;
        w.write_count("fields", f.fields.len(), None)?;
        for e in &f.fields {
            e.write_cdr(w)?;
        }
        w.write_bool(f.is_bigendian)?;
        w.write(f.point_step)?;
        w.write(f.row_step)?;
        write_data(w, self.bytes, seq)?;
        w.write_bool(f.is_dense)
    }
    fn read(v: PointCloud2View<'_>) -> anyhow::Result<u64> {
        let seq = read_header(v.header());
        for f in v.fields().iter() {
            black_box((str_sum(f.name()), f.offset(), f.datatype(), f.count()));
        }
        black_box((
            v.height(),
            v.width(),
            v.is_bigendian(),
            v.point_step(),
            v.is_dense(),
        ));
        ensure!(
            v.data().len() == (v.row_step() * v.height()) as usize,
            "cloud data size"
        );
        payload::check(v.data(), seq, Touch::Full)?;
        Ok(seq)
    }
}

/// `sensor_msgs/LaserScan`: ranges and intensities held by the driver, encoded by `publish`.
pub struct ScanLoad {
    msg: LaserScan,
    /// Allocations that keep moved arrays from coming back to their old places.
    spacers: Vec<Vec<f32>>,
}

impl Workload for ScanLoad {
    type M = LaserScan;
    fn new(kind: RosKind) -> Self {
        let n = if kind == RosKind::Scan360 { 360 } else { 1080 };
        let step = std::f32::consts::TAU / n as f32;
        Self {
            msg: LaserScan {
                header: header("laser"),
                angle_min: -std::f32::consts::PI,
                angle_max: std::f32::consts::PI - step,
                angle_increment: step,
                time_increment: 1e-4,
                scan_time: 0.1,
                range_min: 0.05,
                range_max: 30.0,
                ranges: (0..n).map(|k| 1.0 + k as f32 * 0.01).collect(),
                intensities: (0..n).map(|k| (k % 256) as f32).collect(),
            },
            spacers: Vec::new(),
        }
    }
    fn place_apart(&mut self, bodies: &[usize]) {
        // Where the arrays' elements go in the body: after the header, the seven floats
        // and the ranges' count; the intensities after the ranges and their count.
        let mut w = CdrWriter::counting();
        self.msg.header.write_cdr(&mut w).expect("a header encodes");
        let ranges_at = w.position().next_multiple_of(4) + 7 * 4 + 4;
        let intensities_at = ranges_at + 4 * self.msg.ranges.len() + 4;
        let m = &mut self.msg;
        for (v, at) in [
            (&mut m.ranges, ranges_at),
            (&mut m.intensities, intensities_at),
        ] {
            let dst: Vec<usize> = bodies.iter().map(|b| b + at).collect();
            crate::ros_build::move_apart(v, &dst, &mut self.spacers);
        }
    }
    fn body_len(&self) -> usize {
        self.msg.cdr_size().expect("scan encodes")
    }
    fn stamp(&mut self, seq: u64) {
        self.msg.header.stamp = stamp(seq);
    }
    fn write_body(&self, w: &mut CdrWriter<'_>, _: u64) -> Result<(), EncodeError> {
        self.msg.write_cdr(w)
    }
    fn publish(
        &mut self,
        p: &mut Publisher<Ros<LaserScan>>,
        seq: u64,
    ) -> Result<Delivery, RosSendError> {
        self.stamp(seq);
        p.publish(&self.msg)
    }
    fn owned(&self) -> Option<&LaserScan> {
        Some(&self.msg)
    }
    fn read(v: LaserScanView<'_>) -> anyhow::Result<u64> {
        let seq = read_header(v.header());
        black_box((
            v.angle_min(),
            v.angle_max(),
            v.angle_increment(),
            v.time_increment(),
        ));
        black_box((v.scan_time(), v.range_min(), v.range_max()));
        black_box((f32_sum(v.ranges()), f32_sum(v.intensities())));
        Ok(seq)
    }
}

/// `sensor_msgs/JointState`: 30 named joints, encoded by `publish`.
pub struct JointsLoad {
    msg: JointState,
}

impl Workload for JointsLoad {
    type M = JointState;
    fn new(_: RosKind) -> Self {
        let n = 30;
        let v = |scale: f64| (0..n).map(|k| k as f64 * scale).collect::<Vec<f64>>();
        Self {
            msg: JointState {
                header: header("base_link"),
                name: (0..n).map(|k| format!("arm_joint_{k:02}")).collect(),
                position: v(0.01),
                velocity: v(0.1),
                effort: v(1.5),
            },
        }
    }
    fn body_len(&self) -> usize {
        self.msg.cdr_size().expect("joint state encodes")
    }
    fn stamp(&mut self, seq: u64) {
        self.msg.header.stamp = stamp(seq);
    }
    fn write_body(&self, w: &mut CdrWriter<'_>, _: u64) -> Result<(), EncodeError> {
        self.msg.write_cdr(w)
    }
    fn publish(
        &mut self,
        p: &mut Publisher<Ros<JointState>>,
        seq: u64,
    ) -> Result<Delivery, RosSendError> {
        self.stamp(seq);
        p.publish(&self.msg)
    }
    fn owned(&self) -> Option<&JointState> {
        Some(&self.msg)
    }
    fn read(v: JointStateView<'_>) -> anyhow::Result<u64> {
        let seq = read_header(v.header());
        black_box(v.name().iter().map(str_sum).sum::<u64>());
        black_box((
            f64_sum(v.position()),
            f64_sum(v.velocity()),
            f64_sum(v.effort()),
        ));
        Ok(seq)
    }
}

/// `tf2_msgs/TFMessage`: 50 transforms, encoded by `publish`; the first one's stamp
/// carries the sequence number.
pub struct TfLoad {
    msg: TFMessage,
}

impl Workload for TfLoad {
    type M = TFMessage;
    fn new(_: RosKind) -> Self {
        let transforms = (0..50)
            .map(|k| TransformStamped {
                header: header(if k == 0 { "odom" } else { "base_link" }),
                child_frame_id: format!("link_{k:02}"),
                transform: Transform {
                    translation: Vector3 {
                        x: k as f64,
                        y: 0.5,
                        z: 0.25,
                    },
                    rotation: Quaternion {
                        x: 0.0,
                        y: 0.0,
                        z: 0.0,
                        w: 1.0,
                    },
                },
            })
            .collect();
        Self {
            msg: TFMessage { transforms },
        }
    }
    fn body_len(&self) -> usize {
        self.msg.cdr_size().expect("tf encodes")
    }
    fn stamp(&mut self, seq: u64) {
        for t in &mut self.msg.transforms {
            t.header.stamp = stamp(seq);
        }
    }
    fn write_body(&self, w: &mut CdrWriter<'_>, _: u64) -> Result<(), EncodeError> {
        self.msg.write_cdr(w)
    }
    fn publish(
        &mut self,
        p: &mut Publisher<Ros<TFMessage>>,
        seq: u64,
    ) -> Result<Delivery, RosSendError> {
        self.stamp(seq);
        p.publish(&self.msg)
    }
    fn owned(&self) -> Option<&TFMessage> {
        Some(&self.msg)
    }
    fn read(v: TFMessageView<'_>) -> anyhow::Result<u64> {
        let mut seq = None;
        for t in v.transforms().iter() {
            let s = read_transform(t);
            seq.get_or_insert(s);
        }
        seq.ok_or_else(|| anyhow::anyhow!("no transforms"))
    }
}

fn read_transform(t: TransformStampedView<'_>) -> u64 {
    let seq = read_header(t.header());
    black_box(str_sum(t.child_frame_id()));
    let (p, q) = (t.transform().translation(), t.transform().rotation());
    black_box((p.x(), p.y(), p.z(), q.x(), q.y(), q.z(), q.w()));
    seq
}
