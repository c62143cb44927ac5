//! ROS-typed channels: topics whose messages are ROS 2 messages (`sensor_msgs/msg/LaserScan`
//! …), recorded as ROS 2 itself records them — schema name = the ROS type name, schema
//! encoding `ros2msg` with the type's full definition, message encoding `cdr`, each message
//! exactly the wire bytes (encapsulation header and CDR body, copied, never converted) — so
//! that Foxglove, `mcap-ros2-support`, `rosbags` and rosbag2 read them as ROS 2 data.
//!
//! Channel metadata (MCAP `ros2` profile, as rosbag2's MCAP storage writes it, plus horus's
//! QoS for replay):
//!
//! | key | value |
//! |---|---|
//! | `offered_qos_profiles` | YAML list of one ROS 2 QoS profile (required by the profile) |
//! | `topic_type_hash` | the RIHS01 hash (`RIHS01_` + 64 hex digits), as rosbag2 writes it |
//! | `horus.qos` | the horus topic's QoS (JSON, as for fixed-layout topics) |
//! | `horus.durability` | the horus topic's durability (JSON, as for fixed-layout topics) |
//!
//! A latched (transient-local) topic's profile says `durability: transient_local`, as
//! rosbag2 writes it for such a publisher; reading a rosbag2 file, that (or rosbag2's older
//! numeric form `durability: 1`) makes the channel transient-local with its history depth.
//!
//! Reading accepts files written by rosbag2 as well: any channel with a `ros2msg` schema and
//! `cdr` messages and no horus description is ROS-typed; the hash and horus QoS may be absent.
//! Everything read is untrusted: names, hashes and definitions are checked and bounded here.

use std::collections::BTreeMap;

use horus::inspect::QosInfo;
use horus::msgs::Ros2Type;
use horus::{Durability, Overflow};

use crate::meta;

/// Message encoding of ROS-typed channels.
pub const MESSAGE_ENCODING: &str = "cdr";
/// Channel metadata key of the offered QoS profiles (MCAP `ros2` profile).
pub const OFFERED_QOS: &str = "offered_qos_profiles";
/// Channel metadata key of the RIHS01 type hash (rosbag2's).
pub const TYPE_HASH: &str = "topic_type_hash";
/// Longest type name accepted (`pkg/msg/Type`).
pub const MAX_TYPE_NAME: usize = 256;
/// Largest definition accepted from a file (full definitions of standard types are a few
/// KiB: `visualization_msgs/msg/Marker` 8.6 KiB; a horus topic's at most 64 KiB).
pub const MAX_DEFINITION_BYTES: usize = 1 << 20;
/// Most bytes of `ros2msg` definitions a reader keeps for all the schemas of a file
/// together; a channel whose schema's definition was not kept because of this is not
/// usable ([`Ros2Error::DefinitionsOverBudget`]).
pub const MAX_DEFINITIONS_BYTES: usize = 64 << 20;
/// Largest `offered_qos_profiles` value kept.
pub const MAX_QOS_BYTES: usize = 64 << 10;

/// The ROS 2 encapsulation header of little-endian plain CDR.
pub const CDR_LE: [u8; 4] = [0x00, 0x01, 0x00, 0x00];

/// What a recording states about a ROS-typed channel (validated).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Ros2Channel {
    /// `pkg/msg/Type`.
    pub name: String,
    /// The RIHS01 hash, when the file states one (rosbag2 before Iron does not).
    pub hash: Option<String>,
    /// The `ros2msg` definition.
    pub definition: String,
    /// The horus QoS, when recorded by horus.
    pub qos: Option<QosInfo>,
    /// The `offered_qos_profiles` text as stored (rosbag2's YAML).
    pub offered_qos_profiles: Option<String>,
    /// The topic's durability: horus's `horus.durability` when recorded by horus, else
    /// what the offered profile says (rosbag2), else volatile. Replay creates the topic so.
    pub durability: Durability,
}

impl Ros2Channel {
    /// The type to publish this channel's messages as on a horus topic. The hash is checked
    /// against the one computed from the definition (`horus_idl`, bounded) when the
    /// definition can be read; a file without a hash (rosbag2 before Iron) gets the computed
    /// one. The result is validated as a topic's description would be.
    pub fn ros2_type(&self) -> Result<Ros2Type, Ros2Error> {
        let computed = horus_idl::resolve_ros2msg(&self.name, &self.definition)
            .map_err(|e| e.to_string())
            .and_then(|(r, root)| {
                r.type_hash(&root.to_string())
                    .ok_or_else(|| format!("no hash for {root}"))
            })
            .map(|h| h.to_string());
        let hash = match (&self.hash, computed) {
            (Some(stated), Ok(computed)) if *stated != computed => {
                return Err(Ros2Error::HashMismatch {
                    stated: stated.clone(),
                    computed,
                })
            }
            (Some(stated), _) => stated.clone(),
            (None, Ok(computed)) => computed,
            (None, Err(why)) => return Err(Ros2Error::NoHash(why)),
        };
        let ty = Ros2Type::new(&self.name, &hash, &self.definition);
        ty.validate()
            .map_err(|e| Ros2Error::Unpublishable(e.to_string()))?;
        Ok(ty)
    }

    /// The channel metadata this channel was read from (the keys horus uses), to copy the
    /// channel into another file.
    pub fn metadata(&self) -> BTreeMap<String, String> {
        let mut m = BTreeMap::new();
        if let Some(q) = &self.offered_qos_profiles {
            m.insert(OFFERED_QOS.into(), q.clone());
        }
        if let Some(h) = &self.hash {
            m.insert(TYPE_HASH.into(), h.clone());
        }
        if let Some(q) = &self.qos {
            m.insert(meta::QOS.into(), meta::qos_to_json(q).to_string());
            m.insert(
                meta::DURABILITY.into(),
                meta::durability_to_json(self.durability).to_string(),
            );
        }
        m
    }
}

/// Why a channel is not a usable ROS-typed channel.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Ros2Error {
    /// The schema name is not `pkg/msg/Type` (or `pkg/srv/…`, `pkg/action/…`).
    #[error("schema name {0:?} is not a ROS 2 type name (pkg/msg/Type)")]
    TypeName(String),
    /// The `topic_type_hash` is not `RIHS01_` and 64 lower-case hex digits.
    #[error("{TYPE_HASH} {0:?} is not a RIHS01 hash")]
    Hash(String),
    /// The definition is larger than [`MAX_DEFINITION_BYTES`].
    #[error("definition of {0} bytes, more than the {MAX_DEFINITION_BYTES} accepted")]
    DefinitionTooLarge(usize),
    /// The file's definitions together exceed what a reader keeps
    /// ([`MAX_DEFINITIONS_BYTES`], the value given).
    #[error("the file's schema definitions exceed {0} bytes in all; this one was not kept")]
    DefinitionsOverBudget(usize),
    /// The definition is not UTF-8.
    #[error("definition is not UTF-8")]
    DefinitionNotUtf8,
    /// The stated `topic_type_hash` is not the hash of the definition.
    #[error("{TYPE_HASH} {stated} is not the hash of the definition ({computed})")]
    HashMismatch {
        /// The hash the file states.
        stated: String,
        /// The hash of the definition.
        computed: String,
    },
    /// No hash stated, and none could be computed from the definition (why).
    #[error("no {TYPE_HASH}, and the definition does not give one: {0}")]
    NoHash(String),
    /// The type cannot travel on a horus topic (e.g. a definition over 64 KiB).
    #[error("cannot be published on a horus topic: {0}")]
    Unpublishable(String),
    /// The recorded horus QoS does not parse.
    #[error("horus.qos: {0}")]
    Qos(String),
    /// The recorded horus durability does not parse or does not fit the QoS.
    #[error("horus.durability: {0}")]
    Durability(String),
}

/// Whether `s` is a ROS 2 type name: `pkg/msg/Type` (also `srv`, `action`), package
/// `[a-z][a-z0-9_]*`, type `[A-Za-z][A-Za-z0-9_]*`.
pub fn valid_type_name(s: &str) -> bool {
    let mut parts = s.split('/');
    let (Some(pkg), Some(kind), Some(ty), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return false;
    };
    let pkg_ok = pkg.as_bytes().first().is_some_and(u8::is_ascii_lowercase)
        && pkg
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_');
    let ty_ok = ty.as_bytes().first().is_some_and(u8::is_ascii_alphabetic)
        && ty.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_');
    s.len() <= MAX_TYPE_NAME && pkg_ok && matches!(kind, "msg" | "srv" | "action") && ty_ok
}

/// Whether `s` is a RIHS01 hash string.
pub fn valid_hash(s: &str) -> bool {
    horus_idl::TypeHash::parse(s).is_some()
}

/// A duration field of a QoS profile: infinite, as rosbag2 writes `RMW_DURATION_INFINITE`.
const INFINITE: &str = "\n    sec: 9223372036\n    nsec: 854775807";

/// The `offered_qos_profiles` YAML for a horus topic's QoS: history keep-last with the
/// topic's depth (a transient-local topic's: its history depth, what a ROS 2 publisher keeps
/// for late joiners); `reliable` unless the topic drops its oldest messages for slow readers
/// (`best_effort`); `volatile` or `transient_local`; no deadline, lifespan or lease;
/// automatic liveliness. The form is rosbag2's (version 9 metadata: names, not numbers),
/// which `rosbags` and `ros2 bag` parse.
pub fn offered_qos_yaml(q: &QosInfo, durability: Durability) -> String {
    let reliability = match q.overflow {
        Some(Overflow::DropOldest) => "best_effort",
        _ => "reliable",
    };
    let (durability, depth) = match durability {
        Durability::Volatile => ("volatile", q.depth),
        Durability::TransientLocal { depth } => ("transient_local", depth),
    };
    format!(
        "- history: keep_last\n  depth: {depth}\n  reliability: {reliability}\n  durability: {durability}\n  \
         deadline:{INFINITE}\n  lifespan:{INFINITE}\n  liveliness: automatic\n  \
         liveliness_lease_duration:{INFINITE}\n  avoid_ros_namespace_conventions: false\n"
    )
}

/// The durability an `offered_qos_profiles` YAML states (rosbag2's): transient-local when
/// its first profile says `durability: transient_local` (or rosbag2's older numeric `1`),
/// keeping its history `depth` (at least 1, at most `max_depth`: the rings of the topic it is
/// replayed on); anything else is volatile. Reads only `key: value` lines of the first
/// profile (the text is bounded by [`MAX_QOS_BYTES`] before it gets here).
pub fn durability_of_offered_qos(yaml: &str, max_depth: u32) -> Durability {
    let mut latched = false;
    let mut depth: Option<u32> = None;
    for (i, line) in yaml.lines().enumerate() {
        let line = line.trim();
        // A second profile begins: the first one decides.
        if line.starts_with('-') && i > 0 {
            break;
        }
        let line = line.trim_start_matches('-').trim();
        match line.split_once(':').map(|(k, v)| (k.trim(), v.trim())) {
            Some(("durability", v)) => latched = matches!(v, "transient_local" | "1"),
            Some(("depth", v)) => depth = v.parse().ok(),
            _ => {}
        }
    }
    match (latched, max_depth) {
        (false, _) | (_, 0) => Durability::Volatile,
        (true, max) => Durability::TransientLocal {
            depth: depth.unwrap_or(1).clamp(1, max),
        },
    }
}

/// The channel metadata of a ROS-typed topic.
pub fn to_metadata(
    t: &Ros2Type,
    qos: &QosInfo,
    durability: Durability,
) -> BTreeMap<String, String> {
    let mut m = BTreeMap::new();
    m.insert(OFFERED_QOS.into(), offered_qos_yaml(qos, durability));
    m.insert(TYPE_HASH.into(), t.type_hash.clone());
    m.insert(meta::QOS.into(), meta::qos_to_json(qos).to_string());
    m.insert(
        meta::DURABILITY.into(),
        meta::durability_to_json(durability).to_string(),
    );
    m
}

/// Reads a ROS-typed channel: `name` and `definition` from its schema, the rest from its
/// metadata. Bounded: the name, definition and QoS text are checked before they are kept.
pub fn from_channel(
    name: &str,
    definition: &[u8],
    metadata: &BTreeMap<String, String>,
) -> Result<Ros2Channel, Ros2Error> {
    if !valid_type_name(name) {
        let shown: String = name.chars().take(MAX_TYPE_NAME).collect();
        return Err(Ros2Error::TypeName(shown));
    }
    if definition.len() > MAX_DEFINITION_BYTES {
        return Err(Ros2Error::DefinitionTooLarge(definition.len()));
    }
    let definition = std::str::from_utf8(definition)
        .map_err(|_| Ros2Error::DefinitionNotUtf8)?
        .to_owned();
    let hash = match metadata.get(TYPE_HASH) {
        Some(h) if valid_hash(h) => Some(h.clone()),
        // An empty value states no hash (a recorder that knows none).
        Some(h) if h.is_empty() => None,
        Some(h) => return Err(Ros2Error::Hash(h.chars().take(80).collect())),
        None => None,
    };
    let qos = metadata
        .get(meta::QOS)
        .map(|q| meta::qos_from_str(q).map_err(Ros2Error::Qos))
        .transpose()?;
    let offered_qos_profiles = metadata
        .get(OFFERED_QOS)
        .filter(|q| q.len() <= MAX_QOS_BYTES)
        .cloned();
    // The depth of the topic it is replayed on: the recorded horus QoS, else what play
    // creates for a rosbag2 channel (a typed endpoint's default).
    let max_depth = qos.map_or(horus::inspect::ros_qos(0).depth, |q| q.depth);
    let durability = match (metadata.get(meta::DURABILITY), &qos) {
        (Some(d), Some(q)) => meta::durability_from_str(d, q).map_err(Ros2Error::Durability)?,
        _ => offered_qos_profiles
            .as_deref()
            .map_or(Durability::Volatile, |y| {
                durability_of_offered_qos(y, max_depth)
            }),
    };
    Ok(Ros2Channel {
        name: name.to_owned(),
        hash,
        definition,
        qos,
        offered_qos_profiles,
        durability,
    })
}

/// The horus topic a recorded ROS 2 topic is published on: ROS 2's `/scan` is horus's
/// `scan` (horus names have no leading `/`).
pub fn horus_topic_name(recorded: &str) -> &str {
    recorded.strip_prefix('/').unwrap_or(recorded)
}

/// Checks that `wire` is a ROS 2 message horus can carry: at least the 4-byte encapsulation
/// header, and that header little-endian plain CDR (`00 01`, options ignored).
pub fn check_wire(wire: &[u8]) -> Result<(), crate::cdr::CdrError> {
    match wire {
        [0x00, 0x01, _, _, ..] => Ok(()),
        [a, b, _, _, ..] => Err(crate::cdr::CdrError::Encapsulation(u16::from_be_bytes([
            *a, *b,
        ]))),
        _ => Err(crate::cdr::CdrError::TooShort {
            got: wire.len(),
            need: 4,
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    const HASH: &str = "RIHS01_00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff";

    fn qos() -> QosInfo {
        QosInfo {
            depth: 8,
            overflow: Some(Overflow::Block {
                timeout: Duration::from_millis(5),
            }),
            max_publishers: 2,
            max_subscribers: 8,
            inline_bytes: 64,
            chunk_bytes: 1 << 16,
            chunks_per_publisher: 4,
        }
    }

    #[test]
    fn metadata_round_trips() {
        let t = Ros2Type::new("sensor_msgs/msg/Imu", HASH, "float64 x\n");
        let m = to_metadata(&t, &qos(), Durability::Volatile);
        let c = from_channel(&t.type_name, t.definition.as_bytes(), &m).unwrap();
        assert_eq!(c.metadata(), m);
        assert_eq!(c.hash.as_deref(), Some(HASH));
        assert_eq!(c.qos, Some(qos()));
        assert_eq!(c.definition, t.definition);
        assert_eq!(c.durability, Durability::Volatile);
        let offered = c.offered_qos_profiles.unwrap();
        assert!(offered.contains("depth: 8") && offered.contains("durability: volatile"));

        let latched = Durability::TransientLocal { depth: 2 };
        let m = to_metadata(&t, &qos(), latched);
        let c = from_channel(&t.type_name, t.definition.as_bytes(), &m).unwrap();
        assert_eq!(c.metadata(), m);
        assert_eq!(c.durability, latched);
        let offered = c.offered_qos_profiles.unwrap();
        assert!(
            offered.contains("depth: 2\n") && offered.contains("durability: transient_local\n"),
            "{offered}"
        );
    }

    #[test]
    fn a_rosbag2_transient_local_channel_is_latched() {
        // What rosbag2 writes (no horus keys): names (version 9) or numbers (older).
        let named = "- history: keep_last\n  depth: 1\n  reliability: reliable\n  \
                     durability: transient_local\n  liveliness: automatic\n";
        let numbered = "- history: 1\n  depth: 3\n  reliability: 1\n  durability: 1\n";
        let volatile = "- history: keep_last\n  depth: 10\n  durability: volatile\n";
        let deep = "- history: keep_last\n  depth: 100000\n  durability: transient_local\n";
        let second =
            "- depth: 1\n  durability: volatile\n- depth: 1\n  durability: transient_local\n";
        let max = horus::inspect::ros_qos(0).depth;
        for (yaml, want) in [
            (named, Durability::TransientLocal { depth: 1 }),
            (numbered, Durability::TransientLocal { depth: 3 }),
            (volatile, Durability::Volatile),
            (deep, Durability::TransientLocal { depth: max }),
            (second, Durability::Volatile),
        ] {
            let mut m = BTreeMap::new();
            m.insert(OFFERED_QOS.to_owned(), yaml.to_owned());
            let c = from_channel("tf2_msgs/msg/TFMessage", b"", &m).unwrap();
            assert_eq!(c.durability, want, "{yaml}");
        }
        // horus's own key must fit the recorded QoS.
        let t = Ros2Type::new("sensor_msgs/msg/Imu", HASH, "float64 x\n");
        let mut m = to_metadata(&t, &qos(), Durability::Volatile);
        m.insert(
            meta::DURABILITY.into(),
            r#"{"kind": "transient_local", "depth": 9}"#.into(),
        );
        assert!(matches!(
            from_channel(&t.type_name, t.definition.as_bytes(), &m),
            Err(Ros2Error::Durability(_))
        ));
    }

    #[test]
    fn names_hashes_and_definitions_are_checked() {
        let m = BTreeMap::new();
        for bad in [
            "Imu",
            "sensor_msgs/Imu",
            "sensor_msgs/msg/",
            "Sensor/msg/Imu",
            "a/b/c/d",
        ] {
            assert!(matches!(
                from_channel(bad, b"", &m),
                Err(Ros2Error::TypeName(_))
            ));
        }
        let mut m = BTreeMap::new();
        m.insert(TYPE_HASH.to_owned(), "RIHS01_xyz".to_owned());
        assert!(matches!(
            from_channel("a/msg/B", b"", &m),
            Err(Ros2Error::Hash(_))
        ));
        m.insert(TYPE_HASH.to_owned(), String::new());
        assert_eq!(from_channel("a/msg/B", b"", &m).unwrap().hash, None);
        assert_eq!(
            from_channel("a/msg/B", &[0xff], &BTreeMap::new()),
            Err(Ros2Error::DefinitionNotUtf8)
        );
        let huge = vec![b'a'; MAX_DEFINITION_BYTES + 1];
        assert_eq!(
            from_channel("a/msg/B", &huge, &BTreeMap::new()),
            Err(Ros2Error::DefinitionTooLarge(MAX_DEFINITION_BYTES + 1))
        );
    }

    #[test]
    fn wire_headers_are_checked() {
        assert!(check_wire(&[0, 1, 0, 0]).is_ok());
        assert!(check_wire(&[0, 1, 0, 0, 7]).is_ok());
        assert!(check_wire(&[0, 1, 0]).is_err());
        assert!(check_wire(&[0, 0, 0, 0, 1]).is_err(), "big-endian CDR");
    }
}
