//! The messages an action travels in (fixed-size POD), goal ids and the
//! goal status model.
//!
//! The user's goal, feedback and result types are carried as bytes in a
//! bounded `payload` field, tagged with their schema's layout hash so a
//! peer with another type is refused rather than misread.

use horus::{message, Message};

/// Largest goal, feedback or result type, in bytes.
pub const PAYLOAD_MAX: usize = 512;

/// Reply code: done.
pub(crate) const OK: u32 = 0;
/// Reply code: the server rejected the goal.
pub(crate) const REJECTED: u32 = 1;
/// Reply code: the server does not know (or no longer keeps) the goal.
pub(crate) const UNKNOWN: u32 = 2;
/// Reply code: the payload's type is not the server's.
pub(crate) const WRONG_TYPE: u32 = 3;
/// Reply code: the goal's result is not ready yet.
pub(crate) const PENDING: u32 = 4;

message! {
    /// A request to one of an action's services (`send_goal`, `cancel`, `get_result`).
    pub struct ActionRequest: "horus/ActionRequest", version 1 {
        /// Goal id, high 64 bits.
        pub id_hi: u64,
        /// Goal id, low 64 bits.
        pub id_lo: u64,
        /// Layout hash of the payload's type (0: no payload).
        pub schema: u64,
        /// Bytes of `payload` in use.
        pub len: u32,
        /// Unused, zero.
        pub _pad: u32,
        /// The goal (for `send_goal`).
        pub payload: [u8; 512],
    }
}

message! {
    /// An action service's answer.
    pub struct ActionResponse: "horus/ActionResponse", version 1 {
        /// Reply code (`OK`, `REJECTED`, `UNKNOWN`, `WRONG_TYPE`, `PENDING`).
        pub code: u32,
        /// The goal's status code ([`GoalStatus::code`]).
        pub status: u32,
        /// Layout hash of the payload's type (0: no payload).
        pub schema: u64,
        /// Bytes of `payload` in use.
        pub len: u32,
        /// Unused, zero.
        pub _pad: u32,
        /// The result (for `get_result`).
        pub payload: [u8; 512],
    }
}

message! {
    /// One feedback message of one goal (topic `<action>/feedback`).
    pub struct FeedbackMsg: "horus/ActionFeedback", version 1 {
        /// Goal id, high 64 bits.
        pub id_hi: u64,
        /// Goal id, low 64 bits.
        pub id_lo: u64,
        /// Layout hash of the payload's type.
        pub schema: u64,
        /// Bytes of `payload` in use.
        pub len: u32,
        /// Unused, zero.
        pub _pad: u32,
        /// The feedback.
        pub payload: [u8; 512],
    }
}

message! {
    /// A goal's new status (topic `<action>/status`), sent on every change.
    pub struct StatusMsg: "horus/ActionStatus", version 1 {
        /// Goal id, high 64 bits.
        pub id_hi: u64,
        /// Goal id, low 64 bits.
        pub id_lo: u64,
        /// [`GoalStatus::code`].
        pub status: u32,
        /// Unused, zero.
        pub _pad: u32,
    }
}

/// A goal's id: unique per client process and goal (the client's token in
/// the high half, a counter in the low half).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct GoalId(pub u128);

impl GoalId {
    pub(crate) fn from_parts(hi: u64, lo: u64) -> Self {
        GoalId((u128::from(hi) << 64) | u128::from(lo))
    }
    pub(crate) fn hi(self) -> u64 {
        (self.0 >> 64) as u64
    }
    pub(crate) fn lo(self) -> u64 {
        self.0 as u64
    }
}

impl std::fmt::Display for GoalId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:032x}", self.0)
    }
}

/// Where a goal stands (ROS 2's goal status model).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum GoalStatus {
    /// Accepted, not yet executing.
    Accepted,
    /// Executing.
    Executing,
    /// A cancel was requested and acknowledged; the server is winding down.
    Canceling,
    /// Finished with a result.
    Succeeded,
    /// Canceled, with a (partial) result.
    Canceled,
    /// The server gave up, with a result.
    Aborted,
}

impl GoalStatus {
    /// Its wire code.
    pub fn code(self) -> u32 {
        match self {
            GoalStatus::Accepted => 1,
            GoalStatus::Executing => 2,
            GoalStatus::Canceling => 3,
            GoalStatus::Succeeded => 4,
            GoalStatus::Canceled => 5,
            GoalStatus::Aborted => 6,
        }
    }

    /// The status of a wire code (`None`: not a status).
    pub fn from_code(code: u32) -> Option<Self> {
        Some(match code {
            1 => GoalStatus::Accepted,
            2 => GoalStatus::Executing,
            3 => GoalStatus::Canceling,
            4 => GoalStatus::Succeeded,
            5 => GoalStatus::Canceled,
            6 => GoalStatus::Aborted,
            _ => return None,
        })
    }

    /// Whether the goal has finished (succeeded, canceled or aborted).
    pub fn is_terminal(self) -> bool {
        matches!(
            self,
            GoalStatus::Succeeded | GoalStatus::Canceled | GoalStatus::Aborted
        )
    }
}

/// A goal, feedback or result type as an action carries it: every
/// fixed-size [`Message`] (its type known at compile time), or
/// [`RawPayload`] (the bytes of a type named at run time, for bindings
/// such as Python's: one code path for every type, no monomorphization per
/// type triple).
pub trait Payload: Sized {
    /// What a client or server must know of the type at run time (`()` for
    /// a [`Message`], a [`RawSpec`] for [`RawPayload`]).
    type Spec: Clone + Send + Sync + 'static;

    /// `Err(type name)` if the type does not fit a payload.
    fn check(spec: &Self::Spec) -> Result<(), &'static str>;

    /// Copies the value into `payload`; returns (schema hash, length).
    fn put(&self, spec: &Self::Spec, payload: &mut [u8; PAYLOAD_MAX]) -> (u64, u32);

    /// Reads a value from an untrusted payload: `None` unless the schema
    /// and length are exactly the type's.
    fn get(spec: &Self::Spec, schema: u64, len: u32, payload: &[u8; PAYLOAD_MAX]) -> Option<Self>;
}

impl<T: Message> Payload for T {
    type Spec = ();

    fn check(_: &()) -> Result<(), &'static str> {
        if fits::<T>() {
            Ok(())
        } else {
            Err(T::SCHEMA.name())
        }
    }

    fn put(&self, _: &(), payload: &mut [u8; PAYLOAD_MAX]) -> (u64, u32) {
        put(payload, self)
    }

    fn get(_: &(), schema: u64, len: u32, payload: &[u8; PAYLOAD_MAX]) -> Option<Self> {
        get::<T>(schema, len, payload)
    }
}

/// A message type named at run time: what [`RawPayload`] carries.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RawSpec {
    /// Schema name (for errors).
    pub name: &'static str,
    /// Layout hash of the schema (what the wire tags payloads with).
    pub layout_hash: u64,
    /// Size of the type's bytes.
    pub size: usize,
}

impl RawSpec {
    /// The spec of message type `T` (what a [`RawPayload`] peer of a typed
    /// endpoint uses).
    pub fn of<T: Message>() -> Self {
        RawSpec {
            name: T::SCHEMA.name(),
            layout_hash: T::SCHEMA.layout_hash(),
            size: std::mem::size_of::<T>(),
        }
    }
}

/// The bytes of one value of the type a [`RawSpec`] names. Bytes beyond
/// the spec's size are cut, missing ones are zeros: callers pass exactly
/// `size` bytes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RawPayload(pub Vec<u8>);

impl Payload for RawPayload {
    type Spec = RawSpec;

    fn check(spec: &RawSpec) -> Result<(), &'static str> {
        if spec.size <= PAYLOAD_MAX {
            Ok(())
        } else {
            Err(spec.name)
        }
    }

    fn put(&self, spec: &RawSpec, payload: &mut [u8; PAYLOAD_MAX]) -> (u64, u32) {
        let n = spec.size.min(PAYLOAD_MAX);
        let m = self.0.len().min(n);
        payload[..m].copy_from_slice(&self.0[..m]);
        payload[m..n].fill(0);
        (spec.layout_hash, n as u32)
    }

    fn get(spec: &RawSpec, schema: u64, len: u32, payload: &[u8; PAYLOAD_MAX]) -> Option<Self> {
        let n = spec.size;
        if schema != spec.layout_hash || len as usize != n || n > PAYLOAD_MAX {
            return None;
        }
        Some(RawPayload(payload[..n].to_vec()))
    }
}

/// Copies `value` into `payload`; returns (schema hash, length).
/// Callers check `size_of::<T>() <= PAYLOAD_MAX` first.
fn put<T: Message>(payload: &mut [u8; PAYLOAD_MAX], value: &T) -> (u64, u32) {
    let bytes = bytemuck::bytes_of(value);
    payload[..bytes.len()].copy_from_slice(bytes);
    (T::SCHEMA.layout_hash(), bytes.len() as u32)
}

/// Reads a `T` from an untrusted payload: `None` unless the schema and
/// length are exactly `T`'s.
fn get<T: Message>(schema: u64, len: u32, payload: &[u8; PAYLOAD_MAX]) -> Option<T> {
    let n = std::mem::size_of::<T>();
    if schema != T::SCHEMA.layout_hash() || len as usize != n || n > PAYLOAD_MAX {
        return None;
    }
    Some(bytemuck::pod_read_unaligned(&payload[..n]))
}

/// Whether `T` fits in a payload.
fn fits<T: Message>() -> bool {
    std::mem::size_of::<T>() <= PAYLOAD_MAX && !T::HAS_TAIL
}

#[cfg(test)]
mod tests {
    use super::*;
    use horus::msgs::prelude::Zeroable;

    #[test]
    fn status_codes_round_trip_and_others_are_refused() {
        use GoalStatus::*;
        for s in [Accepted, Executing, Canceling, Succeeded, Canceled, Aborted] {
            assert_eq!(GoalStatus::from_code(s.code()), Some(s));
        }
        assert_eq!(GoalStatus::from_code(0), None);
        assert_eq!(GoalStatus::from_code(u32::MAX), None);
        assert!(!Canceling.is_terminal() && Canceled.is_terminal());
    }

    #[test]
    fn payloads_decode_only_with_their_own_schema_and_length() {
        let mut m = StatusMsg::zeroed();
        m.status = 3;
        let mut p = [0u8; PAYLOAD_MAX];
        let (schema, len) = put(&mut p, &m);
        assert_eq!(get::<StatusMsg>(schema, len, &p), Some(m));
        // Another type, a wrong or hostile length: refused, never misread.
        assert_eq!(get::<FeedbackMsg>(schema, len, &p), None);
        assert_eq!(get::<StatusMsg>(schema, len + 1, &p), None);
        assert_eq!(get::<StatusMsg>(schema, u32::MAX, &p), None);
        assert_eq!(get::<StatusMsg>(schema ^ 1, len, &p), None);
    }

    #[test]
    fn raw_payloads_read_what_typed_ones_write_and_the_other_way() {
        let spec = RawSpec::of::<StatusMsg>();
        let mut m = StatusMsg::zeroed();
        m.status = 5;
        let mut p = [0u8; PAYLOAD_MAX];
        let (schema, len) = Payload::put(&m, &(), &mut p);
        let raw = RawPayload::get(&spec, schema, len, &p).expect("same type");
        assert_eq!(raw.0, bytemuck::bytes_of(&m));
        let mut q = [0xffu8; PAYLOAD_MAX];
        let (schema, len) = raw.put(&spec, &mut q);
        assert_eq!(<StatusMsg as Payload>::get(&(), schema, len, &q), Some(m));
        // Another type's spec, a hostile length, an oversized spec: refused.
        assert_eq!(
            RawPayload::get(&RawSpec::of::<FeedbackMsg>(), schema, len, &q),
            None
        );
        assert_eq!(RawPayload::get(&spec, schema, u32::MAX, &q), None);
        let huge = RawSpec {
            size: PAYLOAD_MAX + 1,
            ..spec
        };
        assert_eq!(RawPayload::check(&huge), Err(spec.name));
        assert_eq!(RawPayload::get(&huge, schema, huge.size as u32, &q), None);
        // Short input is padded with zeros, never read past.
        let (_, len) = RawPayload(vec![1]).put(&spec, &mut q);
        assert_eq!((len as usize, q[0], q[1]), (spec.size, 1, 0));
    }

    #[test]
    fn goal_ids_split_into_halves() {
        let id = GoalId::from_parts(0x1234, 0x5678);
        assert_eq!((id.hi(), id.lo()), (0x1234, 0x5678));
        assert_eq!(id.to_string(), format!("{:016x}{:016x}", 0x1234, 0x5678));
    }
}
