//! What a recording keeps besides the messages: per channel, the horus identity of the
//! message type (schema name, version, layout hash, the JSON description) and the topic's
//! QoS, as MCAP channel metadata; per file, the messages the recorder missed.
//!
//! Channel metadata keys (all strings, as MCAP requires):
//! `horus.schema` (name), `horus.version`, `horus.layout_hash` (`0x` + 16 hex digits),
//! `horus.description` (the JSON [`MessageDescription`]), `horus.qos` (JSON, see
//! [`qos_to_json`]), `horus.durability` (JSON, see [`durability_to_json`]; absent in
//! recordings made before latched topics: volatile). A file's losses are a metadata record named [`LOSSES`] mapping each
//! topic to `"<missed>"` messages.

use std::collections::BTreeMap;
use std::time::Duration;

use horus::inspect::QosInfo;
use horus::msgs::MessageDescription;
use horus::{Durability, Overflow};
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
pub(crate) const DURABILITY: &str = "horus.durability";

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
    /// The topic's durability when recorded (a latched topic is replayed latched).
    pub durability: Durability,
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

/// Durability as the JSON stored under `horus.durability` (what `horus topic info --json`
/// prints): `{"kind": "volatile"}` or `{"kind": "transient_local", "depth": N}`.
pub fn durability_to_json(d: Durability) -> Value {
    match d {
        Durability::Volatile => json!({"kind": "volatile"}),
        Durability::TransientLocal { depth } => json!({"kind": "transient_local", "depth": depth}),
    }
}

/// The durability from its JSON text (`horus.durability`), checked against the topic's QoS:
/// a history depth of 0 or deeper than the topic's rings is refused (untrusted: a file).
pub(crate) fn durability_from_str(s: &str, qos: &QosInfo) -> Result<Durability, String> {
    let v: Value = serde_json::from_str(s).map_err(|e| e.to_string())?;
    match v.get("kind").and_then(Value::as_str) {
        Some("volatile") => Ok(Durability::Volatile),
        Some("transient_local") => {
            let depth = v
                .get("depth")
                .and_then(Value::as_u64)
                .and_then(|d| u32::try_from(d).ok())
                .ok_or("transient_local without a depth")?;
            if depth == 0 || depth > qos.depth {
                return Err(format!(
                    "history depth {depth} outside 1..={} (the topic's depth)",
                    qos.depth
                ));
            }
            Ok(Durability::TransientLocal { depth })
        }
        _ => Err("kind is neither volatile nor transient_local".into()),
    }
}

/// The channel metadata of a topic.
pub fn to_metadata(
    d: &MessageDescription,
    qos: &QosInfo,
    durability: Durability,
) -> BTreeMap<String, String> {
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
    m.insert(
        DURABILITY.into(),
        durability_to_json(durability).to_string(),
    );
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
    let durability = match m.get(DURABILITY) {
        Some(s) => durability_from_str(s, &qos).map_err(|e| bad(DURABILITY, e))?,
        // Recorded before latched topics existed.
        None => Durability::Volatile,
    };
    Ok(ChannelMeta {
        description,
        qos,
        durability,
    })
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
        let latched = Durability::TransientLocal { depth: 3 };
        for durability in [Durability::Volatile, latched] {
            let back = from_metadata(&to_metadata(&d, &qos(), durability)).unwrap();
            assert_eq!(
                back,
                ChannelMeta {
                    description: d.clone(),
                    qos: qos(),
                    durability,
                }
            );
        }
        // A recording made before latched topics: volatile.
        let mut m = to_metadata(&d, &qos(), latched);
        m.remove(DURABILITY);
        assert_eq!(from_metadata(&m).unwrap().durability, Durability::Volatile);
    }

    #[test]
    fn a_bad_durability_is_refused() {
        let d = MessageDescription::of::<PointCloud>();
        for bad in [
            r#"{"kind": "transient_local", "depth": 0}"#,
            r#"{"kind": "transient_local", "depth": 5}"#,
            r#"{"kind": "transient_local", "depth": 4294967296}"#,
            r#"{"kind": "transient_local"}"#,
            r#"{"kind": "persistent"}"#,
            r#"[1, 2"#,
        ] {
            let mut m = to_metadata(&d, &qos(), Durability::Volatile);
            m.insert(DURABILITY.into(), bad.into());
            assert!(
                matches!(
                    from_metadata(&m),
                    Err(MetaError::Bad {
                        key: DURABILITY,
                        ..
                    })
                ),
                "{bad}"
            );
        }
    }

    #[test]
    fn tampering_is_refused() {
        let d = MessageDescription::of::<PointCloud>();
        let mut m = to_metadata(&d, &qos(), Durability::Volatile);
        m.insert(HASH.into(), "0x0000000000000001".into());
        assert!(from_metadata(&m).is_err());
        let mut m = to_metadata(&d, &qos(), Durability::Volatile);
        m.remove(QOS);
        assert_eq!(from_metadata(&m), Err(MetaError::Missing(QOS)));
        let mut m = to_metadata(&d, &qos(), Durability::Volatile);
        m.insert(DESCRIPTION.into(), "{\"types\": []}".into());
        assert!(from_metadata(&m).is_err());
    }
}
