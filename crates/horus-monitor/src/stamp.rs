//! One-way latency from the publish stamp a message carries.
//!
//! For fixed-layout horus messages the stamp is where [`horus::stamp::StampField`] finds it
//! (the same rule the subscribers' own latency histograms use); for a ROS 2-typed topic,
//! `header.stamp` (`builtin_interfaces/msg/Time`) when the header is the message's first
//! member (`ros_type`). A message's latency is the monitor's clock when it read the message
//! minus that stamp; stamps that cannot be publish times are counted, not used
//! ([`horus::stamp::latency`]).

use horus::msgs::MessageDescription;
pub(crate) use horus::stamp::{latency, now_ns};

/// Where a message's stamp is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct StampField {
    /// The field, as a dotted path (`stamp_ns`, `header.stamp_ns`).
    pub(crate) path: String,
    /// Byte offset of the stamp from the start of the message.
    pub(crate) offset: usize,
    /// How the stamp is written there.
    pub(crate) encoding: StampEncoding,
}

/// How a stamp is written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum StampEncoding {
    /// A `u64` of ns since the epoch (horus's fixed-layout messages).
    Nanos,
    /// A ROS 2 `builtin_interfaces/msg/Time` in CDR: `int32 sec`, `uint32 nanosec`.
    RosTime,
}

impl StampField {
    /// Finds the stamp of the root type of `d` (a validated description: offsets in bounds).
    pub(crate) fn find(d: &MessageDescription) -> Option<StampField> {
        if let Some(ty) = &d.ros2 {
            let (path, offset) = crate::ros_type::find(ty)?;
            return Some(StampField {
                path,
                offset,
                encoding: StampEncoding::RosTime,
            });
        }
        let f = horus::stamp::StampField::find(d)?;
        Some(StampField {
            path: f.path,
            offset: f.offset,
            encoding: StampEncoding::Nanos,
        })
    }

    /// The stamp of one message's bytes, if it holds the field.
    pub(crate) fn read(&self, bytes: &[u8]) -> Option<u64> {
        match self.encoding {
            StampEncoding::RosTime => crate::ros_type::read(bytes, self.offset),
            StampEncoding::Nanos => horus::stamp::StampField {
                path: String::new(),
                offset: self.offset,
            }
            .read(bytes),
        }
    }
}

/// The `q` quantile (0..=1) of sorted samples, nearest rank.
pub(crate) fn quantile(sorted: &[u64], q: f64) -> Option<u64> {
    if sorted.is_empty() {
        return None;
    }
    let rank = (q * sorted.len() as f64).ceil() as usize;
    Some(sorted[rank.clamp(1, sorted.len()) - 1])
}

#[cfg(test)]
mod tests {
    use super::*;
    use horus::msgs::{CmdVel, Header};

    horus::message! {
        /// A user message with a header.
        pub struct WithHeader: "monitor-test/WithHeader", version 1 {
            /// Something first, so the header is not at offset 0.
            pub value: f64,
            /// The header.
            pub header: Header,
        }
    }

    #[test]
    fn fixed_layout_stamps_are_found_as_subscribers_find_them() {
        let f = StampField::find(&MessageDescription::of::<CmdVel>()).unwrap();
        assert_eq!(
            (f.path.as_str(), f.encoding),
            ("stamp_ns", StampEncoding::Nanos)
        );
        let m = CmdVel::new(123_456, 0.5, 0.1);
        assert_eq!(f.read(bytemuck::bytes_of(&m)), Some(123_456));
        let f = StampField::find(&MessageDescription::of::<WithHeader>()).unwrap();
        assert_eq!(f.path, "header.stamp_ns");
        let mut m: WithHeader = bytemuck::Zeroable::zeroed();
        m.header.stamp_ns = 987_654_321;
        assert_eq!(f.read(bytemuck::bytes_of(&m)), Some(987_654_321));
        assert_eq!(f.read(&[0; 4]), None);
    }

    #[test]
    fn quantiles_are_nearest_rank() {
        let v: Vec<u64> = (1..=100).collect();
        assert_eq!(quantile(&v, 0.5), Some(50));
        assert_eq!(quantile(&v, 0.99), Some(99));
        assert_eq!(quantile(&[7], 0.99), Some(7));
        assert_eq!(quantile(&[], 0.5), None);
    }
}
