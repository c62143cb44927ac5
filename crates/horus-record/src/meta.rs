//! What a recording keeps besides the messages: per channel, the horus identity of the
//! message type (schema name, version, layout hash, the JSON description) and the topic's
//! QoS, as MCAP channel metadata; per file, the messages the recorder missed.
//!
//! Channel metadata keys (all strings, as MCAP requires):
//! `horus.schema` (name), `horus.version`, `horus.layout_hash` (`0x` + 16 hex digits),
//! `horus.description` (the JSON [`MessageDescription`]), `horus.qos` (JSON, see
//! [`qos_to_json`]). A file's losses are a metadata record named [`LOSSES`] mapping each
//! topic to `"<missed>"` messages.

use std::collections::BTreeMap;
use std::time::Duration;

use horus::inspect::QosInfo;
use horus::msgs::MessageDescription;
use horus::Overflow;
use serde_json::{json, Value};

/// Metadata record holding the messages missed per topic.
pub const LOSSES: &str = "horus.losses";
/// Metadata record describing the recording session (recorder version, namespace).
pub const SESSION: &str = "horus.session";

const SCHEMA: &str = "horus.schema";
const VERSION: &str = "horus.version";
const HASH: &str = "horus.layout_hash";
const DESCRIPTION: &str = "horus.description";
pub(crate) const QOS: &str = "horus.qos";

/// Why a channel's metadata does not describe a horus topic.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MetaError {
    /// A key is missing.
    #[error("channel metadata has no {0}")]
    Missing(&'static str),
    /// A value does not parse.
    #[error("channel metadata {key}: {reason}")]
    Bad {
        /// The key.
        key: &'static str,
        /// Why.
        reason: String,
    },
}

/// Everything a recorded channel needs to be published again.
#[derive(Clone, Debug, PartialEq)]
pub struct ChannelMeta {
    /// The validated description of the message type.
    pub description: MessageDescription,
    /// The topic's QoS when recorded.
    pub qos: QosInfo,
}

/// The overflow policy as JSON.
fn overflow_json(o: Option<Overflow>) -> Value {
    match o {
        Some(Overflow::DropOldest) => json!({"policy": "drop-oldest"}),
        Some(Overflow::Reject) => json!({"policy": "reject"}),
        Some(Overflow::Block { timeout }) => {
            json!({"policy": "block", "timeout_ns": timeout.as_nanos() as u64})
        }
        None => json!({"policy": "unknown"}),
    }
}

/// QoS as the JSON stored under `horus.qos`.
pub fn qos_to_json(q: &QosInfo) -> Value {
    json!({
        "depth": q.depth,
        "overflow": overflow_json(q.overflow),
        "max_publishers": q.max_publishers,
        "max_subscribers": q.max_subscribers,
        "inline_bytes": q.inline_bytes,
        "chunk_bytes": q.chunk_bytes,
        "chunks_per_publisher": q.chunks_per_publisher,
    })
}

fn qos_from_json(v: &Value) -> Option<QosInfo> {
    let u32_of = |k: &str| v.get(k)?.as_u64().and_then(|x| u32::try_from(x).ok());
    let o = v.get("overflow")?;
    let overflow = match o.get("policy")?.as_str()? {
        "drop-oldest" => Some(Overflow::DropOldest),
        "reject" => Some(Overflow::Reject),
        "block" => Some(Overflow::Block {
            timeout: Duration::from_nanos(o.get("timeout_ns")?.as_u64()?),
        }),
        _ => None,
    };
    Some(QosInfo {
        depth: u32_of("depth")?,
        overflow,
        max_publishers: u32_of("max_publishers")?,
        max_subscribers: u32_of("max_subscribers")?,
        inline_bytes: u32_of("inline_bytes")?,
        chunk_bytes: v.get("chunk_bytes")?.as_u64()?,
        chunks_per_publisher: u32_of("chunks_per_publisher")?,
    })
}

/// The horus QoS from its JSON text (`horus.qos`).
pub(crate) fn qos_from_str(s: &str) -> Result<QosInfo, String> {
    let v: Value = serde_json::from_str(s).map_err(|e| e.to_string())?;
    qos_from_json(&v).ok_or_else(|| "missing or out-of-range fields".into())
}

/// The channel metadata of a topic.
pub fn to_metadata(d: &MessageDescription, qos: &QosInfo) -> BTreeMap<String, String> {
    let root = d.root();
    let mut m = BTreeMap::new();
    m.insert(SCHEMA.into(), root.name.clone());
    m.insert(VERSION.into(), root.version.to_string());
    m.insert(HASH.into(), format!("{:#018x}", root.layout_hash));
    m.insert(
        DESCRIPTION.into(),
        serde_json::to_string(d).expect("a description serialises"),
    );
    m.insert(QOS.into(), qos_to_json(qos).to_string());
    m
}

/// Reads a channel's metadata back, validating the description (untrusted: it comes from a
/// file) and checking it against the stated schema name, version and layout hash.
pub fn from_metadata(m: &BTreeMap<String, String>) -> Result<ChannelMeta, MetaError> {
    let get = |k: &'static str| m.get(k).ok_or(MetaError::Missing(k));
    let bad = |key: &'static str, reason: String| MetaError::Bad { key, reason };
    // The one parser of untrusted description JSON (its own byte limit, then validation).
    let description = horus::description::parse_message(get(DESCRIPTION)?.as_bytes())
        .map_err(|e| bad(DESCRIPTION, e.to_string()))?;
    let root = description.root();
    let hash = get(HASH)?;
    let hash = u64::from_str_radix(hash.trim_start_matches("0x"), 16)
        .map_err(|e| bad(HASH, e.to_string()))?;
    let version: u32 = get(VERSION)?
        .parse()
        .map_err(|e: std::num::ParseIntError| bad(VERSION, e.to_string()))?;
    if *get(SCHEMA)? != root.name || version != root.version || hash != root.layout_hash {
        return Err(bad(
            DESCRIPTION,
            format!(
                "describes {} v{} ({:#018x}), the channel states {} v{version} ({hash:#018x})",
                root.name,
                root.version,
                root.layout_hash,
                get(SCHEMA)?
            ),
        ));
    }
    let qos = qos_from_str(get(QOS)?).map_err(|e| bad(QOS, e))?;
    Ok(ChannelMeta { description, qos })
}

#[cfg(test)]
mod tests {
    use super::*;
    use horus::msgs::PointCloud;

    fn qos() -> QosInfo {
        QosInfo {
            depth: 4,
            overflow: Some(Overflow::Block {
                timeout: Duration::from_millis(250),
            }),
            max_publishers: 2,
            max_subscribers: 8,
            inline_bytes: 16,
            chunk_bytes: 1 << 20,
            chunks_per_publisher: 12,
        }
    }

    #[test]
    fn round_trips() {
        let d = MessageDescription::of::<PointCloud>();
        let back = from_metadata(&to_metadata(&d, &qos())).unwrap();
        assert_eq!(
            back,
            ChannelMeta {
                description: d,
                qos: qos()
            }
        );
    }

    #[test]
    fn tampering_is_refused() {
        let d = MessageDescription::of::<PointCloud>();
        let mut m = to_metadata(&d, &qos());
        m.insert(HASH.into(), "0x0000000000000001".into());
        assert!(from_metadata(&m).is_err());
        let mut m = to_metadata(&d, &qos());
        m.remove(QOS);
        assert_eq!(from_metadata(&m), Err(MetaError::Missing(QOS)));
        let mut m = to_metadata(&d, &qos());
        m.insert(DESCRIPTION.into(), "{\"types\": []}".into());
        assert!(from_metadata(&m).is_err());
    }
}
