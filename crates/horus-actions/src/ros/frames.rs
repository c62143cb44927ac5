//! The bytes of the action-specific ROS 2 structures, built around the goal, feedback
//! and result messages without knowing their types.
//!
//! `Foo_SendGoal_Request` is `{ UUID goal_id; Foo_Goal goal }` and `Foo_FeedbackMessage`
//! `{ UUID goal_id; Foo_Feedback feedback }`: the 16-byte id ends at a multiple of 8, so
//! the goal's (feedback's) CDR body follows it unchanged (CDR aligns from the body's first
//! byte, and no member aligns to more than 8). `Foo_GetResult_Response` is
//! `{ int8 status; Foo_Result result }`: the result's alignment depends on the byte before
//! it, so that structure is encoded whole by the caller; its status is the body's first
//! byte. `Foo_SendGoal_Response` is `{ bool accepted; builtin_interfaces/Time stamp }`.

use horus_cdr::{CdrReader, DecodeError, ENCAPSULATION_CDR_LE};
use horus_ros_msgs::builtin_interfaces::msg::Time;

use crate::wire::GoalId;

/// Bytes of a goal id (`unique_identifier_msgs/UUID`).
const ID: usize = 16;

/// The UUID bytes of a goal id (big-endian).
pub(crate) fn uuid(id: GoalId) -> [u8; ID] {
    id.0.to_be_bytes()
}

/// The goal id of UUID bytes.
pub(crate) fn goal_id(uuid: [u8; ID]) -> GoalId {
    GoalId(u128::from_be_bytes(uuid))
}

/// A horus ROS-typed record (`[0 0 0 0]` + wire bytes) from wire bytes.
pub(crate) fn record(wire: &[u8]) -> Vec<u8> {
    let mut v = Vec::with_capacity(4 + wire.len());
    v.extend_from_slice(&[0; 4]);
    v.extend_from_slice(wire);
    v
}

/// The wire bytes of a horus ROS-typed record (`None`: shorter than the 8-byte frame).
pub(crate) fn wire(record: &[u8]) -> Option<&[u8]> {
    (record.len() >= 8).then(|| &record[4..])
}

/// `{ UUID id; M inner }` from `inner`'s wire bytes (checked to start with a CDR header).
pub(crate) fn with_id(id: GoalId, inner: &[u8]) -> Result<Vec<u8>, DecodeError> {
    CdrReader::from_message(inner)?;
    let mut v = Vec::with_capacity(inner.len() + ID);
    v.extend_from_slice(&inner[..4]);
    v.extend_from_slice(&uuid(id));
    v.extend_from_slice(&inner[4..]);
    Ok(v)
}

/// The id and the inner message's wire bytes of `{ UUID id; M inner }` (`Err`: not a CDR
/// message, or too short for the id). The inner bytes are not checked further.
pub(crate) fn split_id(wire: &[u8]) -> Result<(GoalId, Vec<u8>), DecodeError> {
    let mut r = CdrReader::from_message(wire)?;
    let id: [u8; ID] = r.read_array()?;
    let mut v = Vec::with_capacity(wire.len() - ID);
    v.extend_from_slice(&wire[..4]);
    v.extend_from_slice(&wire[4 + ID..]);
    Ok((goal_id(id), v))
}

/// The id alone of `{ UUID id; … }` (`Foo_GetResult_Request`).
pub(crate) fn read_id(wire: &[u8]) -> Result<GoalId, DecodeError> {
    let mut r = CdrReader::from_message(wire)?;
    Ok(goal_id(r.read_array()?))
}

/// `Foo_GetResult_Request` / a bare UUID message.
pub(crate) fn id_only(id: GoalId) -> Vec<u8> {
    let mut v = ENCAPSULATION_CDR_LE.to_vec();
    v.extend_from_slice(&uuid(id));
    v
}

/// `Foo_SendGoal_Response { accepted, stamp }`.
pub(crate) fn send_goal_response(accepted: bool, stamp: &Time) -> Vec<u8> {
    let mut v = ENCAPSULATION_CDR_LE.to_vec();
    v.extend_from_slice(&[u8::from(accepted), 0, 0, 0]);
    v.extend_from_slice(&stamp.sec.to_le_bytes());
    v.extend_from_slice(&stamp.nanosec.to_le_bytes());
    v
}

/// `accepted` of a `Foo_SendGoal_Response`.
pub(crate) fn read_accepted(wire: &[u8]) -> Result<bool, DecodeError> {
    let mut r = CdrReader::from_message(wire)?;
    let accepted = r.read_bool()?;
    let _sec: i32 = r.read()?;
    let _nanosec: u32 = r.read()?;
    Ok(accepted)
}

/// `status` of a `Foo_GetResult_Response`.
pub(crate) fn read_status(wire: &[u8]) -> Result<i8, DecodeError> {
    CdrReader::from_message(wire)?.read::<i8>()
}

/// A `Foo_GetResult_Response`'s bytes with `status` written in (`wire` has been checked
/// to hold the status byte).
pub(crate) fn set_status(wire: &mut [u8], status: i8) {
    wire[4] = status.to_le_bytes()[0];
}

/// The time now as ROS 2 stamps it (since the Unix epoch; 0 if the clock is before it).
pub(crate) fn now() -> Time {
    let d = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    Time {
        sec: i32::try_from(d.as_secs()).unwrap_or(i32::MAX),
        nanosec: d.subsec_nanos(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use horus_cdr::{decode_message, encode_message};
    use horus_ros_msgs::tf2_msgs::action::{
        LookupTransform_Feedback, LookupTransform_FeedbackMessage,
        LookupTransform_GetResult_Request, LookupTransform_Goal, LookupTransform_SendGoal_Request,
        LookupTransform_SendGoal_Response,
    };
    use horus_ros_msgs::unique_identifier_msgs::msg::UUID;

    const ID: GoalId = GoalId(0x0123_4567_89ab_cdef_fedc_ba98_7654_3210);

    fn goal() -> LookupTransform_Goal {
        LookupTransform_Goal {
            target_frame: "map".into(),
            source_frame: "base_link".into(),
            fixed_frame: "odom".into(),
            advanced: true,
            ..Default::default()
        }
    }

    #[test]
    fn a_goal_behind_its_id_is_the_generated_send_goal_request() {
        let g = goal();
        let composed = with_id(ID, &encode_message(&g).unwrap()).unwrap();
        let req = LookupTransform_SendGoal_Request {
            goal_id: UUID { uuid: uuid(ID) },
            goal: g.clone(),
        };
        assert_eq!(composed, encode_message(&req).unwrap());
        let (id, inner) = split_id(&composed).unwrap();
        assert_eq!(
            (id, decode_message::<LookupTransform_Goal>(&inner).unwrap()),
            (ID, g)
        );
    }

    #[test]
    fn feedback_behind_its_id_is_the_generated_feedback_message() {
        let f = encode_message(&LookupTransform_Feedback {}).unwrap();
        let m = LookupTransform_FeedbackMessage {
            goal_id: UUID { uuid: uuid(ID) },
            feedback: LookupTransform_Feedback {},
        };
        assert_eq!(with_id(ID, &f).unwrap(), encode_message(&m).unwrap());
    }

    #[test]
    fn hand_built_structures_are_the_generated_ones() {
        let stamp = Time { sec: 7, nanosec: 9 };
        let r = LookupTransform_SendGoal_Response {
            accepted: true,
            stamp: stamp.clone(),
        };
        assert_eq!(
            send_goal_response(true, &stamp),
            encode_message(&r).unwrap()
        );
        assert!(read_accepted(&encode_message(&r).unwrap()).unwrap());
        let q = LookupTransform_GetResult_Request {
            goal_id: UUID { uuid: uuid(ID) },
        };
        assert_eq!(id_only(ID), encode_message(&q).unwrap());
        assert_eq!(read_id(&id_only(ID)).unwrap(), ID);
    }

    #[test]
    fn short_or_headerless_bytes_are_errors_not_panics() {
        for bad in [
            &[][..],
            &[0, 1, 0, 0][..],
            &[0, 1, 0, 0, 1, 2, 3][..],
            &[9, 9, 9, 9, 0, 0, 0, 0][..],
        ] {
            assert!(split_id(bad).is_err());
            assert!(read_id(bad).is_err());
            assert!(read_accepted(bad).is_err());
        }
        assert!(with_id(ID, &[]).is_err() && with_id(ID, &[9, 9, 9, 9]).is_err());
        assert!(read_status(&[0, 1, 0, 0]).is_err());
        assert_eq!(wire(&[0; 7]), None);
    }
}
