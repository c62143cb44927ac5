//! One-way latency from the publish stamp a message carries.
//!
//! horus stamps are nanoseconds since the UNIX epoch on the wall clock (`horus::msgs::Time`).
//! The stamp is found through the topic's description: a `stamp_ns: u64` field of the
//! message, else a nested message (a `Header`, say) holding one, else a `stamp` field of type
//! `horus/Time`; for a ROS 2-typed topic, `header.stamp` (`builtin_interfaces/msg/Time`) when
//! the header is the message's first member (`ros_type`). A message's latency is the monitor's clock when it read the message minus
//! that stamp. Stamps that cannot be publish times (in the future, or older than
//! [`PLAUSIBLE`]: a counter, a replayed recording, a simulated clock) are counted, not used.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use horus::msgs::{FieldKind, MessageDescription, Scalar, TypeDescription};

/// Stamps further in the past than this are not publish times of a live message.
pub(crate) const PLAUSIBLE: Duration = Duration::from_secs(60);

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
        let root = d.root();
        if let Some(off) = own_stamp(d, root) {
            return Some(StampField {
                path: off.0,
                offset: off.1,
                encoding: StampEncoding::Nanos,
            });
        }
        // One level down: a header-like nested message. `header` first, then in field order.
        let mut nested: Vec<_> = root
            .fields
            .iter()
            .filter_map(|f| match &f.kind {
                FieldKind::Message(ty) => Some((f, d.get(ty)?)),
                _ => None,
            })
            .collect();
        nested.sort_by_key(|(f, _)| f.name != "header");
        nested.into_iter().find_map(|(f, inner)| {
            let (path, off) = own_stamp(d, inner)?;
            Some(StampField {
                path: format!("{}.{path}", f.name),
                offset: f.offset.checked_add(off)?,
                encoding: StampEncoding::Nanos,
            })
        })
    }

    /// The stamp of one message's bytes, if it holds the field.
    pub(crate) fn read(&self, bytes: &[u8]) -> Option<u64> {
        if self.encoding == StampEncoding::RosTime {
            return crate::ros_type::read(bytes, self.offset);
        }
        let end = self.offset.checked_add(8)?;
        let b: [u8; 8] = bytes.get(self.offset..end)?.try_into().ok()?;
        Some(u64::from_le_bytes(b))
    }
}

/// A `stamp_ns: u64` of `ty` itself, or a `stamp: horus/Time`.
fn own_stamp(d: &MessageDescription, ty: &TypeDescription) -> Option<(String, usize)> {
    let u64_named = |name: &str| {
        ty.fields
            .iter()
            .find(|f| f.name == name && matches!(f.kind, FieldKind::Scalar(Scalar::U64)))
    };
    if let Some(f) = u64_named("stamp_ns") {
        return Some(("stamp_ns".into(), f.offset));
    }
    let f = ty.fields.iter().find(|f| {
        f.name == "stamp" && matches!(&f.kind, FieldKind::Message(t) if t == "horus/Time")
    })?;
    let time = d.get("horus/Time")?;
    let nanos = time
        .fields
        .iter()
        .find(|f| f.name == "nanos" && matches!(f.kind, FieldKind::Scalar(Scalar::U64)))?;
    Some(("stamp.nanos".into(), f.offset.checked_add(nanos.offset)?))
}

/// The wall clock now, ns since the UNIX epoch.
pub(crate) fn now_ns() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX))
}

/// The latency of a message stamped `stamp` and read at `now` (both ns since the epoch), if
/// the stamp can be a publish time.
pub(crate) fn latency(stamp: u64, now: u64) -> Option<u64> {
    let age = now.checked_sub(stamp)?;
    (age <= PLAUSIBLE.as_nanos() as u64).then_some(age)
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
    use horus::msgs::{CmdVel, Header, LaserScan};

    horus::message! {
        /// A user message with a header.
        pub struct WithHeader: "monitor-test/WithHeader", version 1 {
            /// Something first, so the header is not at offset 0.
            pub value: f64,
            /// The header.
            pub header: Header,
        }
    }

    horus::message! {
        /// A message with a stamp of type Time.
        pub struct WithTime: "monitor-test/WithTime", version 1 {
            /// Something first.
            pub id: u32,
            /// Padding.
            pub _pad: u32,
            /// The stamp.
            pub stamp: horus::msgs::Time,
        }
    }

    horus::message! {
        /// No stamp anywhere.
        pub struct NoStamp: "monitor-test/NoStamp", version 1 {
            /// A counter.
            pub stamp: u64,
        }
    }

    #[test]
    fn a_root_stamp_ns_is_found_and_read() {
        let f = StampField::find(&MessageDescription::of::<CmdVel>()).unwrap();
        assert_eq!(f.path, "stamp_ns");
        let m = CmdVel::new(123_456, 0.5, 0.1);
        assert_eq!(f.read(bytemuck::bytes_of(&m)), Some(123_456));
        let f = StampField::find(&MessageDescription::of::<LaserScan>()).unwrap();
        assert_eq!(f.path, "stamp_ns");
    }

    #[test]
    fn a_header_stamp_is_found_at_its_nested_offset() {
        let f = StampField::find(&MessageDescription::of::<WithHeader>()).unwrap();
        assert_eq!(f.path, "header.stamp_ns");
        let mut m: WithHeader = bytemuck::Zeroable::zeroed();
        m.value = 2.5;
        m.header.stamp_ns = 987_654_321;
        assert_eq!(f.read(bytemuck::bytes_of(&m)), Some(987_654_321));
    }

    #[test]
    fn a_time_stamp_is_found() {
        let f = StampField::find(&MessageDescription::of::<WithTime>()).unwrap();
        assert_eq!(f.path, "stamp.nanos");
        let mut m: WithTime = bytemuck::Zeroable::zeroed();
        m.stamp = horus::msgs::Time::from_nanos(42);
        assert_eq!(f.read(bytemuck::bytes_of(&m)), Some(42));
    }

    #[test]
    fn no_stamp_no_field_and_short_messages_read_nothing() {
        assert_eq!(StampField::find(&MessageDescription::of::<NoStamp>()), None);
        let f = StampField {
            path: "x".into(),
            offset: 8,
            encoding: StampEncoding::Nanos,
        };
        assert_eq!(f.read(&[0; 15]), None);
        let f = StampField {
            path: "x".into(),
            offset: usize::MAX - 3,
            encoding: StampEncoding::Nanos,
        };
        assert_eq!(f.read(&[0; 64]), None);
    }

    #[test]
    fn implausible_stamps_give_no_latency() {
        let now = 1_800_000_000_000_000_000;
        assert_eq!(latency(now - 5_000, now), Some(5_000));
        assert_eq!(latency(now + 1, now), None, "from the future");
        assert_eq!(latency(3, now), None, "a counter, not a time");
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
