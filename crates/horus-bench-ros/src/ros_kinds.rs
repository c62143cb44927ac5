//! The ROS 2 messages of the `ros_messages` benchmark: which, how each is built in a
//! loan, and how a receiver reads every byte of it through its view.
//!
//! * `Image` and `PointCloud2`: built with `publish_with`, the fields written by the
//!   CDR writer and the pixels / points produced in place in the loaned chunk
//!   ([`CdrWriter::write_slice_with`]), every byte written once with the fill of
//!   [`horus_bench::payload`] (the sequence number in the data's first and last 8 bytes).
//! * `LaserScan`, `JointState`, `TFMessage`: an owned message (as a driver holds it)
//!   whose stamp carries the sequence number, sent with `publish`, which sizes it and
//!   encodes every field into the loan.
//!
//! The reader ([`Workload::read`]) walks the view: every string's bytes, every number,
//! every array element (`Image`/`PointCloud2` data: [`horus_bench::payload::check`]'s
//! checksum; float arrays: a wrapping sum of their bit patterns, as fast as that
//! checksum), and returns the sequence number it found.

use horus::cdr::{CdrWriter, EncodeError, RosMessage};
use horus::ros::{Ros, RosSendError};
use horus::{Delivery, Publisher};
use serde::{Deserialize, Serialize};

pub use crate::ros_loads::{CloudLoad, ImageLoad, JointsLoad, ScanLoad, TfLoad};

/// A message of the `ros_messages` benchmark.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum RosKind {
    /// `sensor_msgs/Image`, 640 × 480 `rgb8`.
    Image,
    /// `sensor_msgs/PointCloud2`, 10,000 `x y z` float32 points (12 B each).
    Cloud10k,
    /// `sensor_msgs/PointCloud2`, 100,000 `x y z` float32 points.
    Cloud100k,
    /// `sensor_msgs/PointCloud2`, 65,536 `x y z intensity` points: 1 MiB of data.
    Cloud1MiB,
    /// `sensor_msgs/LaserScan`, 360 ranges and intensities.
    Scan360,
    /// `sensor_msgs/LaserScan`, 1,080 ranges and intensities.
    Scan1080,
    /// `sensor_msgs/JointState`, 30 named joints (position, velocity, effort).
    Joints30,
    /// `tf2_msgs/TFMessage`, 50 transforms.
    Tf50,
}

impl RosKind {
    /// Every kind, in table order.
    pub const ALL: [RosKind; 8] = [
        RosKind::Image,
        RosKind::Cloud10k,
        RosKind::Cloud100k,
        RosKind::Cloud1MiB,
        RosKind::Scan360,
        RosKind::Scan1080,
        RosKind::Joints30,
        RosKind::Tf50,
    ];

    /// Name in tables and on the command line.
    pub fn name(self) -> &'static str {
        match self {
            RosKind::Image => "Image 640x480 rgb8",
            RosKind::Cloud10k => "PointCloud2 10K",
            RosKind::Cloud100k => "PointCloud2 100K",
            RosKind::Cloud1MiB => "PointCloud2 1 MiB",
            RosKind::Scan360 => "LaserScan 360",
            RosKind::Scan1080 => "LaserScan 1080",
            RosKind::Joints30 => "JointState 30",
            RosKind::Tf50 => "TFMessage 50",
        }
    }

    /// Inverse of [`RosKind::name`] or of its `Debug` form, ignoring case and punctuation.
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
            .find(|k| norm(k.name()) == key || norm(&format!("{k:?}")) == key)
            .ok_or_else(|| anyhow::anyhow!("unknown ROS message {s:?}"))
    }

    /// Bytes of the CDR body (what a fixed-layout message of the same size carries).
    pub fn body_len(self) -> usize {
        with_ros_kind!(self, body_len_of())
    }
}

fn body_len_of<W: Workload>(kind: RosKind) -> usize {
    W::new(kind).body_len()
}

/// Calls `$f::<W>(kind, args…)` with the [`Workload`] of `$kind`.
macro_rules! with_ros_kind {
    ($kind:expr, $f:ident ( $($arg:expr),* )) => {{
        use $crate::ros_kinds::*;
        let kind: RosKind = $kind;
        match kind {
            RosKind::Image => $f::<ImageLoad>(kind, $($arg),*),
            RosKind::Cloud10k | RosKind::Cloud100k | RosKind::Cloud1MiB => {
                $f::<CloudLoad>(kind, $($arg),*)
            }
            RosKind::Scan360 | RosKind::Scan1080 => $f::<ScanLoad>(kind, $($arg),*),
            RosKind::Joints30 => $f::<JointsLoad>(kind, $($arg),*),
            RosKind::Tf50 => $f::<TfLoad>(kind, $($arg),*),
        }
    }};
}
pub(crate) use with_ros_kind;

/// How one message type is built and read.
pub trait Workload {
    /// The ROS message.
    type M: RosMessage;
    /// The prepared message of `kind` (strings, fields, arrays allocated once).
    fn new(kind: RosKind) -> Self;
    /// Bytes of its CDR body.
    fn body_len(&self) -> usize;
    /// Puts `seq` into the message's stamp(s).
    fn stamp(&mut self, seq: u64);
    /// Writes the CDR body of message `seq` (stamped) with `w`.
    fn write_body(&self, w: &mut CdrWriter<'_>, seq: u64) -> Result<(), EncodeError>;
    /// Builds message `seq` in a loan of `p` and sends it (every byte written):
    /// `publish_with` of [`Workload::write_body`] unless a type says otherwise.
    fn publish(
        &mut self,
        p: &mut Publisher<Ros<Self::M>>,
        seq: u64,
    ) -> Result<Delivery, RosSendError> {
        self.stamp(seq);
        p.publish_with(self.body_len(), |w| self.write_body(w, seq))
    }
    /// Moves the owned message's arrays (reallocating them) until none of them, copied into
    /// a body starting at any of `bodies`, lands at a 4K-aliasing page offset from its
    /// source (see [`crate::ros_build::aliases`]); nothing for types built field by field.
    fn place_apart(&mut self, _bodies: &[usize]) {}
    /// The owned message that [`Workload::publish`] sends with `Publisher::publish` (the
    /// types a driver holds as owned messages); `None` for those built field by field.
    fn owned(&self) -> Option<&Self::M> {
        None
    }
    /// Reads every byte of a received message through its view; returns its sequence number.
    fn read(view: <Self::M as RosMessage>::View<'_>) -> anyhow::Result<u64>;
}

#[cfg(test)]
mod tests {
    use super::*;
    use horus::cdr::{decode_message, encode_message, view_message, CdrBuf};

    /// Message `seq` as the benchmark builds it: header `00 01 00 00` + body.
    pub(crate) fn built<W: Workload>(w: &mut W, seq: u64) -> Vec<u8> {
        w.stamp(seq);
        let mut body = vec![0u8; w.body_len()];
        let mut cw = CdrWriter::new(&mut body);
        w.write_body(&mut cw, seq).unwrap();
        assert_eq!(cw.finish(), body.len(), "body_len is the size written");
        [&[0u8, 1, 0, 0][..], &body].concat()
    }

    /// What the benchmark builds is a valid message, byte-identical to encoding its
    /// decoded value (so the in-place writes follow the generated field order), and
    /// the reader finds its sequence number through the view.
    fn built_is_the_encoded_message_and_reads_back<W: Workload>(kind: RosKind) {
        let mut w = W::new(kind);
        let message = built(&mut w, 1_234_567_891_234);
        let owned: W::M = decode_message(&message).unwrap();
        assert_eq!(encode_message(&owned).unwrap(), message, "{kind:?}");
        let aligned = CdrBuf::new(&message);
        let view = view_message::<W::M>(aligned.bytes()).unwrap();
        assert_eq!(W::read(view).unwrap(), 1_234_567_891_234, "{kind:?}");
    }

    #[test]
    fn every_kind_builds_a_valid_message_its_reader_reads() {
        for k in RosKind::ALL {
            with_ros_kind!(k, built_is_the_encoded_message_and_reads_back());
        }
    }

    #[test]
    fn kinds_parse_and_sizes_are_as_named() {
        for k in RosKind::ALL {
            assert_eq!(RosKind::parse(k.name()).unwrap(), k);
            assert_eq!(RosKind::parse(&format!("{k:?}")).unwrap(), k);
        }
        assert!(RosKind::parse("Pose").is_err());
        let cloud = CloudLoad::new(RosKind::Cloud1MiB);
        assert_eq!(cloud.body_len() - cloud.fields.cdr_size().unwrap(), 1 << 20);
        assert!(RosKind::Image.body_len() > 921_600);
        assert!(RosKind::Cloud100k.body_len() > 1_200_000);
    }
}
