//! A latched topic's shape — its QoS, durability and message description — as one host's
//! bridge tells it to the others (`<domain>/td/<host>/<topic>`), so that they can create the
//! topic before any subscriber there does (`latched_copy`).
//!
//! Wire form: one line of JSON (the QoS and the latched depth: compact JSON holds no raw
//! newline), a newline, then the description JSON as the topic's segment stores it.
//! Untrusted on the receiving side: the whole reply is bounded by
//! `limits.max_description_bytes` before it is read (`describer`), the QoS line by
//! [`MAX_QOS_LINE`], the description by `horus::description::parse_message` (its own byte
//! limit, then validation); the QoS is checked here and again by the segment layer.

use horus::inspect::{QosInfo, TopicView};
use horus::Overflow;
use horus_msgs::MessageDescription;
use serde::{Deserialize, Serialize};

/// Longest QoS line accepted.
const MAX_QOS_LINE: usize = 1024;

/// The QoS line.
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct QosLine {
    depth: u32,
    overflow: String,
    max_publishers: u32,
    max_subscribers: u32,
    inline_bytes: u32,
    chunk_bytes: u64,
    chunks_per_publisher: u32,
    latched: u32,
}

/// A remote latched topic's shape, parsed and checked.
#[derive(Debug)]
pub(crate) struct TopicShape {
    pub(crate) qos: QosInfo,
    /// Messages kept per publisher (≥ 1).
    pub(crate) latched: u32,
    pub(crate) description: MessageDescription,
}

impl TopicShape {
    /// About how many bytes the topic's segment takes (rings and chunk pools of every
    /// publisher place): what a created copy is charged against
    /// `limits.max_latched_copy_bytes`.
    pub(crate) fn segment_bytes(&self) -> u64 {
        let q = &self.qos;
        let per_publisher = u64::from(q.chunks_per_publisher)
            .saturating_mul(q.chunk_bytes)
            .saturating_add(u64::from(q.depth).saturating_mul(u64::from(q.inline_bytes) + 64));
        u64::from(q.max_publishers).saturating_mul(per_publisher)
    }
}

/// The shape of a local latched topic, in wire form (`None`: not latched, an unknown overflow
/// code, or no readable description).
pub(crate) fn encode(view: &TopicView) -> Option<Vec<u8>> {
    let latched = view.durability().latched();
    let q = view.qos();
    let overflow = match q.overflow? {
        Overflow::DropOldest => "DropOldest",
        Overflow::Reject => "Reject",
        Overflow::Block { .. } => "Block",
    };
    if latched == 0 || view.description().is_err() {
        return None;
    }
    let line = QosLine {
        depth: q.depth,
        overflow: overflow.to_owned(),
        max_publishers: q.max_publishers,
        max_subscribers: q.max_subscribers,
        inline_bytes: q.inline_bytes,
        chunk_bytes: q.chunk_bytes,
        chunks_per_publisher: q.chunks_per_publisher,
        latched,
    };
    let mut out = serde_json::to_vec(&line).ok()?;
    out.push(b'\n');
    out.extend_from_slice(&view.description_bytes());
    Some(out)
}

/// Parses a shape from another host (see the module's documentation for the bounds).
pub(crate) fn parse(bytes: &[u8]) -> Result<TopicShape, String> {
    let split = bytes
        .iter()
        .take(MAX_QOS_LINE + 1)
        .position(|b| *b == b'\n')
        .ok_or_else(|| format!("no QoS line of at most {MAX_QOS_LINE} bytes"))?;
    let line: QosLine =
        serde_json::from_slice(&bytes[..split]).map_err(|e| format!("invalid QoS line: {e}"))?;
    let description = horus::description::parse_message(&bytes[split + 1..])
        .map_err(|e| format!("invalid description: {e}"))?;
    let overflow = match line.overflow.as_str() {
        "DropOldest" => Overflow::DropOldest,
        "Reject" => Overflow::Reject,
        // The timeout is each publisher's own; the segment records only the policy.
        "Block" => Overflow::Block {
            timeout: std::time::Duration::from_secs(1),
        },
        other => return Err(format!("unknown overflow policy {other:?}")),
    };
    if line.latched == 0 || line.latched > line.depth {
        return Err(format!(
            "latched depth {} not in 1..={} (the topic's depth)",
            line.latched, line.depth
        ));
    }
    Ok(TopicShape {
        qos: QosInfo {
            depth: line.depth,
            overflow: Some(overflow),
            max_publishers: line.max_publishers,
            max_subscribers: line.max_subscribers,
            inline_bytes: line.inline_bytes,
            chunk_bytes: line.chunk_bytes,
            chunks_per_publisher: line.chunks_per_publisher,
        },
        latched: line.latched,
        description,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(latched: u32, overflow: &str) -> Vec<u8> {
        format!(
            "{{\"depth\":8,\"overflow\":\"{overflow}\",\"max_publishers\":8,\"max_subscribers\":16,\
             \"inline_bytes\":64,\"chunk_bytes\":0,\"chunks_per_publisher\":0,\"latched\":{latched}}}\n"
        )
        .into_bytes()
    }

    fn description() -> Vec<u8> {
        serde_json::to_vec(&MessageDescription::of::<horus::msgs::CmdVel>()).unwrap()
    }

    #[test]
    fn a_shape_round_trips_and_every_bad_part_is_refused() {
        let mut ok = line(3, "Block");
        ok.extend(description());
        let s = parse(&ok).unwrap();
        assert_eq!((s.qos.depth, s.latched), (8, 3));
        assert!(matches!(s.qos.overflow, Some(Overflow::Block { .. })));
        assert_eq!(s.segment_bytes(), 8 * 8 * (64 + 64));

        let with = |l: Vec<u8>, d: &[u8]| {
            let mut b = l;
            b.extend_from_slice(d);
            parse(&b).unwrap_err()
        };
        assert!(with(line(0, "Block"), &description()).contains("latched depth"));
        assert!(with(line(9, "Block"), &description()).contains("latched depth"));
        assert!(with(line(3, "Sometimes"), &description()).contains("overflow"));
        assert!(with(line(3, "Block"), b"{}").contains("invalid description"));
        assert!(with(b"{\"depth\":8}\n".to_vec(), &description()).contains("QoS line"));
        assert!(with(b"[1,2\n".to_vec(), &description()).contains("QoS line"));
        // A QoS line without its newline within the bound is not searched further.
        let long = vec![b' '; MAX_QOS_LINE + 10];
        assert!(parse(&long).unwrap_err().contains("no QoS line"));
        assert!(parse(b"").unwrap_err().contains("no QoS line"));
    }
}
