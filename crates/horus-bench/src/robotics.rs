//! The standard robotics messages as benchmark payloads.
//!
//! [`MsgKind`] lists the message types the `robotics_messages` benchmark measures,
//! with the size on the wire and the rate such a message typically runs at on a
//! robot. Each type implements [`Wire`] so that the same measurement code moves
//! real horus message types and the plain byte payloads of [`crate::horus_wire`]:
//!
//! * fixed-size messages (`CmdVel` … `LaserScan`): the payload is every byte of the
//!   struct (the benchmark's sequence number overwrites the first and last 8 bytes;
//!   every bit pattern is a valid message, they are `Pod`);
//! * `PointCloud` and `Image`: the header is filled in properly (point count and
//!   step; width, height, encoding) and the payload is the tail (points, pixels),
//!   written in place in shared memory. The receiver checks the header against the
//!   tail it got ([`Wire::check`]).
//!
//! [`Spec`] names a payload either way, and [`with_spec!`](crate::with_spec) calls a
//! generic function with the matching message type.

use crate::horus_wire::Wire;
use horus::msgs::{BatteryState, CmdVel, Image, Imu, LaserScan, Odometry, PointCloud};
use horus::{Delivery, Publisher, Sample, SampleMut, SendError};
use serde::{Deserialize, Serialize};
use std::fmt;

/// Width of the benchmark image (VGA); the height follows from the payload size.
pub const IMAGE_WIDTH: u32 = 640;
/// Height of the benchmark image.
pub const IMAGE_HEIGHT: u32 = 480;

/// A message type of the `robotics_messages` benchmark.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum MsgKind {
    /// Velocity command, 16 B.
    CmdVel,
    /// Battery pack state, 104 B.
    BatteryState,
    /// Inertial measurement, 304 B.
    Imu,
    /// Pose + twist with covariances, 736 B.
    Odometry,
    /// 2-D lidar scan, 1,480 B.
    LaserScan,
    /// 1,000 `[x, y, z]` points.
    PointCloud1k,
    /// 10,000 `[x, y, z]` points.
    PointCloud10k,
    /// 640 × 480 RGB8 camera frame.
    Image,
}

impl MsgKind {
    /// Every kind, in the order of the tables.
    pub const ALL: [MsgKind; 8] = [
        MsgKind::CmdVel,
        MsgKind::BatteryState,
        MsgKind::Imu,
        MsgKind::Odometry,
        MsgKind::LaserScan,
        MsgKind::PointCloud1k,
        MsgKind::PointCloud10k,
        MsgKind::Image,
    ];

    /// Name in tables and on the command line.
    pub fn name(self) -> &'static str {
        match self {
            MsgKind::CmdVel => "CmdVel",
            MsgKind::BatteryState => "BatteryState",
            MsgKind::Imu => "Imu",
            MsgKind::Odometry => "Odometry",
            MsgKind::LaserScan => "LaserScan",
            MsgKind::PointCloud1k => "PointCloud(1K)",
            MsgKind::PointCloud10k => "PointCloud(10K)",
            MsgKind::Image => "Image(640x480 RGB)",
        }
    }

    /// Inverse of [`MsgKind::name`], ignoring case and punctuation (so
    /// `pointcloud1k` works); `image` alone also names [`MsgKind::Image`].
    pub fn parse(s: &str) -> anyhow::Result<Self> {
        let norm = |s: &str| -> String {
            s.chars()
                .filter(char::is_ascii_alphanumeric)
                .collect::<String>()
                .to_ascii_lowercase()
        };
        let key = norm(s);
        Self::ALL
            .into_iter()
            .find(|k| norm(k.name()) == key || (key == "image" && *k == MsgKind::Image))
            .ok_or_else(|| anyhow::anyhow!("unknown message type {s:?}"))
    }

    /// Bytes of the payload the benchmark writes and reads: the whole struct for
    /// fixed-size messages, the tail for `PointCloud` / `Image`.
    pub fn payload_len(self) -> usize {
        match self {
            MsgKind::CmdVel => size_of::<CmdVel>(),
            MsgKind::BatteryState => size_of::<BatteryState>(),
            MsgKind::Imu => size_of::<Imu>(),
            MsgKind::Odometry => size_of::<Odometry>(),
            MsgKind::LaserScan => size_of::<LaserScan>(),
            MsgKind::PointCloud1k => PointCloud::new(1_000, false).tail_len(),
            MsgKind::PointCloud10k => PointCloud::new(10_000, false).tail_len(),
            MsgKind::Image => Image::new(IMAGE_WIDTH, IMAGE_HEIGHT, Image::RGB8).tail_len(),
        }
    }

    /// Bytes of the whole message (header + tail).
    pub fn wire_bytes(self) -> usize {
        match self {
            MsgKind::PointCloud1k | MsgKind::PointCloud10k => {
                size_of::<PointCloud>() + self.payload_len()
            }
            MsgKind::Image => size_of::<Image>() + self.payload_len(),
            _ => self.payload_len(),
        }
    }

    /// The rate such a message typically runs at on a robot, Hz.
    pub fn typical_hz(self) -> f64 {
        match self {
            MsgKind::CmdVel => 1000.0,
            MsgKind::BatteryState => 1.0,
            MsgKind::Imu => 100.0,
            MsgKind::Odometry => 50.0,
            MsgKind::LaserScan => 10.0,
            MsgKind::PointCloud1k | MsgKind::PointCloud10k | MsgKind::Image => 30.0,
        }
    }
}

/// What a benchmark moves: raw bytes of a given size, or a robotics message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Spec {
    /// `n` bytes ([`crate::horus_wire`]: inline up to 512 B, else a pool chunk).
    Bytes(usize),
    /// A standard message.
    Msg(MsgKind),
}

impl Spec {
    /// Bytes written and read per message (see [`MsgKind::payload_len`]).
    pub fn payload_len(self) -> usize {
        match self {
            Spec::Bytes(n) => n,
            Spec::Msg(k) => k.payload_len(),
        }
    }

    /// Bytes of the whole message.
    pub fn wire_bytes(self) -> usize {
        match self {
            Spec::Bytes(n) => n,
            Spec::Msg(k) => k.wire_bytes(),
        }
    }

    /// Encodes for a child-process argument.
    pub fn to_arg(self) -> String {
        match self {
            Spec::Bytes(n) => n.to_string(),
            Spec::Msg(k) => format!("{k:?}"),
        }
    }

    /// Inverse of [`Spec::to_arg`].
    pub fn from_arg(s: &str) -> anyhow::Result<Self> {
        if let Ok(n) = s.parse() {
            return Ok(Spec::Bytes(n));
        }
        MsgKind::ALL
            .into_iter()
            .find(|k| format!("{k:?}") == s)
            .map(Spec::Msg)
            .ok_or_else(|| anyhow::anyhow!("bad payload spec {s:?}"))
    }
}

impl fmt::Display for Spec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Spec::Bytes(n) => write!(f, "{} B", crate::report::size(*n)),
            Spec::Msg(k) => write!(f, "{} ({} B)", k.name(), k.wire_bytes()),
        }
    }
}

/// Calls `$f::<T>(args…)` with the message type that carries `$spec`.
macro_rules! with_spec {
    ($spec:expr, $f:ident ( $($arg:expr),* )) => {{
        use $crate::robotics::{MsgKind, Spec};
        use ::horus::msgs as m;
        match $spec {
            Spec::Bytes(n) => $crate::horus_wire::by_size!(n, $f($($arg),*)),
            Spec::Msg(MsgKind::CmdVel) => $f::<m::CmdVel>($($arg),*),
            Spec::Msg(MsgKind::BatteryState) => $f::<m::BatteryState>($($arg),*),
            Spec::Msg(MsgKind::Imu) => $f::<m::Imu>($($arg),*),
            Spec::Msg(MsgKind::Odometry) => $f::<m::Odometry>($($arg),*),
            Spec::Msg(MsgKind::LaserScan) => $f::<m::LaserScan>($($arg),*),
            Spec::Msg(MsgKind::PointCloud1k | MsgKind::PointCloud10k) => $f::<m::PointCloud>($($arg),*),
            Spec::Msg(MsgKind::Image) => $f::<m::Image>($($arg),*),
        }
    }};
}
pub(crate) use with_spec;

macro_rules! impl_struct_wire {
    ($($name:ident),*) => {$(
        impl Wire for $name {
            fn payload(sample: &Sample<Self>) -> &[u8] {
                bytemuck::bytes_of(&**sample)
            }
            fn loan(publisher: &mut Publisher<Self>, size: usize) -> anyhow::Result<SampleMut<'_, Self>> {
                anyhow::ensure!(size == size_of::<Self>(), "size {size} for {}", stringify!($name));
                Ok(publisher.loan()?)
            }
            fn payload_mut<'b>(sample: &'b mut SampleMut<'_, Self>) -> &'b mut [u8] {
                bytemuck::bytes_of_mut(&mut **sample)
            }
            fn send_copy(publisher: &mut Publisher<Self>, payload: &[u8]) -> Result<Delivery, SendError<()>> {
                publisher.send_ref(&bytemuck::pod_read_unaligned(payload))
            }
        }
    )*};
}

impl_struct_wire!(CmdVel, BatteryState, Imu, Odometry, LaserScan);

/// Header of a `size`-byte point tail: `[x, y, z]` points.
fn cloud_header(size: usize) -> anyhow::Result<PointCloud> {
    let step = PointCloud::POINT_STEP_XYZ as usize;
    anyhow::ensure!(
        size.is_multiple_of(step),
        "{size} B is not a whole number of points"
    );
    Ok(PointCloud::new(u32::try_from(size / step)?, false))
}

/// Header of a `size`-byte pixel tail: [`IMAGE_WIDTH`]-wide RGB8 rows.
fn image_header(size: usize) -> anyhow::Result<Image> {
    let row = IMAGE_WIDTH as usize * 3;
    anyhow::ensure!(
        size.is_multiple_of(row),
        "{size} B is not a whole number of rows"
    );
    Ok(Image::new(
        IMAGE_WIDTH,
        u32::try_from(size / row)?,
        Image::RGB8,
    ))
}

macro_rules! impl_tail_wire {
    ($name:ident, $header:ident) => {
        impl Wire for $name {
            fn payload(sample: &Sample<Self>) -> &[u8] {
                sample.tail()
            }
            fn loan(
                publisher: &mut Publisher<Self>,
                size: usize,
            ) -> anyhow::Result<SampleMut<'_, Self>> {
                let header = $header(size)?;
                let mut s = publisher.loan_slice(size)?;
                *s = header;
                Ok(s)
            }
            fn payload_mut<'b>(sample: &'b mut SampleMut<'_, Self>) -> &'b mut [u8] {
                sample.tail_mut()
            }
            fn send_copy(
                publisher: &mut Publisher<Self>,
                payload: &[u8],
            ) -> Result<Delivery, SendError<()>> {
                match $header(payload.len()) {
                    Ok(header) => publisher.send_with_tail(&header, payload),
                    Err(_) => Err(SendError::TooLarge((), 0)),
                }
            }
            fn check(sample: &Sample<Self>) -> anyhow::Result<()> {
                let (want, got) = (sample.tail_len(), sample.tail().len());
                anyhow::ensure!(
                    want == got,
                    "{} header promises {want} B, tail holds {got} B",
                    stringify!($name)
                );
                Ok(())
            }
        }
    };
}

impl_tail_wire!(PointCloud, cloud_header);
impl_tail_wire!(Image, image_header);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_match_the_published_reports() {
        let wire: Vec<usize> = MsgKind::ALL.iter().map(|k| k.wire_bytes()).collect();
        assert_eq!(
            wire,
            [
                16,
                104,
                304,
                736,
                1480,
                56 + 12_000,
                56 + 120_000,
                64 + 921_600
            ]
        );
    }

    #[test]
    fn names_and_specs_round_trip() {
        for k in MsgKind::ALL {
            assert_eq!(MsgKind::parse(k.name()).unwrap(), k);
            let spec = Spec::Msg(k);
            assert_eq!(Spec::from_arg(&spec.to_arg()).unwrap(), spec);
        }
        assert_eq!(Spec::from_arg("4096").unwrap(), Spec::Bytes(4096));
        assert!(MsgKind::parse("Pose9").is_err());
    }

    #[test]
    fn headers_follow_the_tail_size() {
        assert_eq!(cloud_header(12_000).unwrap().num_points, 1_000);
        assert!(cloud_header(13).is_err());
        assert_eq!(image_header(921_600).unwrap().height, 480);
        assert!(image_header(1000).is_err());
    }
}
