//! Whether a ROS 2 peer's endpoint carries the horus topic's type: the same DDS type name
//! and, when the peer announces one, the same RIHS01 hash. A mismatch is refused (the topic
//! does not cross with that peer), counted and reported with both types.

use std::fmt;

use crate::discovery::RemoteEndpoint;

/// A peer endpoint on a bridged topic that does not fit the horus topic.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TypeMismatch {
    /// The peer endpoint (GUID).
    pub peer: String,
    /// What is wrong, for people.
    pub reason: String,
}

impl fmt::Display for TypeMismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "refused ROS 2 endpoint {}: {}", self.peer, self.reason)
    }
}

impl TypeMismatch {
    /// A ROS 2 reader asking for transient-local on a volatile horus topic.
    pub(crate) fn durability(topic: &str, reader: &RemoteEndpoint) -> TypeMismatch {
        TypeMismatch {
            peer: reader.guid.clone(),
            reason: format!(
                "it asks for transient-local durability; horus topic {topic} is not latched"
            ),
        }
    }

    /// A ROS 2 reader requesting a deadline or a liveliness the bridge's writer does not
    /// offer (horus topics have neither): DDS would not match them, the reader would get
    /// nothing; `None` when it requests neither.
    pub(crate) fn timing(topic: &str, reader: &RemoteEndpoint) -> Option<TypeMismatch> {
        let asks: Vec<String> = reader
            .deadline
            .map(|d| format!("a deadline of {d:?}"))
            .into_iter()
            .chain(
                reader
                    .liveliness
                    .as_ref()
                    .map(|l| format!("liveliness {l}")),
            )
            .collect();
        (!asks.is_empty()).then(|| TypeMismatch {
            peer: reader.guid.clone(),
            reason: format!(
                "it asks for {}; horus topic {topic} has no deadline or liveliness to offer",
                asks.join(" and ")
            ),
        })
    }
}

/// Checks `peer` against the horus topic's DDS type name and RIHS01 hash.
pub fn check_peer(
    dds_type: &str,
    type_hash: &str,
    peer: &RemoteEndpoint,
) -> Result<(), TypeMismatch> {
    if peer.type_name != dds_type {
        return Err(TypeMismatch {
            peer: peer.guid.clone(),
            reason: format!(
                "type {} on {}, horus topic has {}",
                peer.type_name, peer.topic, dds_type
            ),
        });
    }
    match &peer.type_hash {
        Some(h) if !h.eq_ignore_ascii_case(type_hash) => Err(TypeMismatch {
            peer: peer.guid.clone(),
            reason: format!(
                "type {} on {} with hash {h}, horus topic has hash {type_hash}",
                peer.type_name, peer.topic
            ),
        }),
        _ => Ok(()),
    }
}

/// The check every payload from a DDS peer passes before it enters shared memory: CDR of
/// the horus topic's own type (`ros2msg` definition), as `horus_idl::cdr::decode_prefix`
/// reads it, without building a value or allocating per message
/// ([`horus_idl::cdr::CdrCheck`]); bounded by the payload's length.
#[derive(Debug, Clone)]
pub struct PayloadCheck(horus_idl::cdr::CdrCheck);

impl PayloadCheck {
    /// The check of `type_name` given its `ros2msg` definition; `None` when the definition
    /// does not resolve (then only the encapsulation header is checked, by RustDDS).
    pub fn new(type_name: &str, definition: &str) -> Option<PayloadCheck> {
        let (resolved, root) = horus_idl::resolve_ros2msg(type_name, definition).ok()?;
        Some(PayloadCheck(horus_idl::cdr::CdrCheck::new(resolved, root)))
    }

    /// Where the message at the start of `wire` (encapsulation header included) ends, or
    /// why it is not one of the type. RTPS pads a payload to a multiple of 4 bytes (and
    /// rmw's buffers may run on): what follows the message is not read.
    pub fn message_end(&self, wire: &[u8]) -> Result<usize, horus_idl::cdr::CdrError> {
        self.0.check_prefix(wire)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn peer(ty: &str, hash: Option<&str>) -> RemoteEndpoint {
        RemoteEndpoint {
            guid: "g".into(),
            topic: "rt/x".into(),
            type_name: ty.into(),
            type_hash: hash.map(str::to_owned),
            reliable: true,
            transient_local: false,
            depth: Some(10),
            deadline: None,
            liveliness: None,
        }
    }

    #[test]
    fn payloads_are_checked_against_the_topics_own_definition() {
        let c = PayloadCheck::new("std_msgs/msg/String", "string data\n").unwrap();
        assert_eq!(
            c.message_end(&[0, 1, 0, 0, 2, 0, 0, 0, b'x', 0, 0, 0]),
            Ok(10)
        );
        assert!(c
            .message_end(&[0, 1, 0, 0, 0xff, 0xff, 0xff, 0xff])
            .is_err());
        assert!(PayloadCheck::new("std_msgs/msg/String", "strin data\n").is_none());
    }

    #[test]
    fn a_reader_requesting_a_deadline_or_liveliness_is_refused_with_what_it_asks() {
        let t = "std_msgs::msg::dds_::String_";
        assert!(TypeMismatch::timing("x", &peer(t, None)).is_none());
        let mut r = peer(t, None);
        r.deadline = Some(std::time::Duration::from_millis(500));
        let e = TypeMismatch::timing("x", &r).unwrap();
        assert!(e.reason.contains("a deadline of 500ms"), "{e}");
        r.liveliness = Some("MANUAL_BY_TOPIC".into());
        let e = TypeMismatch::timing("x", &r).unwrap();
        assert!(
            e.reason.contains("500ms and liveliness MANUAL_BY_TOPIC"),
            "{e}"
        );
    }

    #[test]
    fn same_name_other_hash_is_refused() {
        let t = "std_msgs::msg::dds_::String_";
        let h1 = format!("RIHS01_{}", "1".repeat(64));
        let h2 = format!("RIHS01_{}", "2".repeat(64));
        assert!(check_peer(t, &h1, &peer(t, None)).is_ok());
        assert!(check_peer(t, &h1, &peer(t, Some(&h1))).is_ok());
        let e = check_peer(t, &h1, &peer(t, Some(&h2))).unwrap_err();
        assert!(e.reason.contains(&h2) && e.reason.contains(&h1), "{e}");
        let e = check_peer(t, &h1, &peer("std_msgs::msg::dds_::Int32_", None)).unwrap_err();
        assert!(e.reason.contains("Int32"), "{e}");
    }
}
