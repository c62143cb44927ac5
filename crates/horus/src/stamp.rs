//! Where a fixed-layout message carries its publish stamp, and the delivery latency it
//! gives: what each subscriber records in its latency histogram and what tools (the
//! monitor) read.
//!
//! horus stamps are nanoseconds since the UNIX epoch on the wall clock
//! ([`Time`](crate::msgs::Time)). The stamp is found through the message's description: a
//! `stamp_ns: u64` field of the message, else a `stamp` field of type `horus/Time`, else the
//! same one level down in a nested message (a `Header`, say; `header` first, then in field
//! order). Stamps that cannot be publish times (in the future, or older than
//! [`PLAUSIBLE`]: a counter, a replayed recording, a simulated clock) give no latency.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use crate::msgs::{FieldKind, MessageDescription, Scalar, TypeDescription};

/// Stamps further in the past than this are not publish times of a live message.
pub const PLAUSIBLE: Duration = Duration::from_secs(60);

/// Where a fixed-layout message's stamp (`u64` ns since the epoch) is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StampField {
    /// The field, as a dotted path (`stamp_ns`, `header.stamp_ns`, `stamp.nanos`).
    pub path: String,
    /// Byte offset of the stamp from the start of the message.
    pub offset: usize,
}

impl StampField {
    /// Finds the stamp of the root type of `d` (a validated description: offsets in
    /// bounds). `None` for a message without one, and for ROS 2-typed messages (CDR: their
    /// stamp has no fixed offset in this sense).
    pub fn find(d: &MessageDescription) -> Option<StampField> {
        if d.ros2.is_some() {
            return None;
        }
        let root = d.root();
        if let Some((path, offset)) = own_stamp(d, root) {
            return Some(StampField { path, offset });
        }
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
            })
        })
    }

    /// The stamp of one message's bytes, if they hold the field.
    #[inline]
    pub fn read(&self, bytes: &[u8]) -> Option<u64> {
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
#[inline]
pub fn now_ns() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX))
}

/// The latency of a message stamped `stamp` and read at `now` (both ns since the epoch), if
/// the stamp can be a publish time.
#[inline]
pub fn latency(stamp: u64, now: u64) -> Option<u64> {
    let age = now.checked_sub(stamp)?;
    (age <= PLAUSIBLE.as_nanos() as u64).then_some(age)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::msgs::{CmdVel, Header, LaserScan};

    crate::message! {
        /// A user message with a header.
        pub struct WithHeader: "stamp-test/WithHeader", version 1 {
            /// Something first, so the header is not at offset 0.
            pub value: f64,
            /// The header.
            pub header: Header,
        }
    }

    crate::message! {
        /// A message with a stamp of type Time.
        pub struct WithTime: "stamp-test/WithTime", version 1 {
            /// Something first.
            pub id: u32,
            /// Padding.
            pub _pad: u32,
            /// The stamp.
            pub stamp: crate::msgs::Time,
        }
    }

    crate::message! {
        /// No stamp anywhere.
        pub struct NoStamp: "stamp-test/NoStamp", version 1 {
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
        m.stamp = crate::msgs::Time::from_nanos(42);
        assert_eq!(f.read(bytemuck::bytes_of(&m)), Some(42));
    }

    #[test]
    fn no_stamp_no_field_and_short_messages_read_nothing() {
        assert_eq!(StampField::find(&MessageDescription::of::<NoStamp>()), None);
        let f = StampField {
            path: "x".into(),
            offset: 8,
        };
        assert_eq!(f.read(&[0; 15]), None);
        let f = StampField {
            path: "x".into(),
            offset: usize::MAX - 3,
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
}
