//! What other DDS participants announce: their readers and writers, with the ROS 2 type
//! hash rmw puts in each endpoint's USER_DATA (`typehash=RIHS01_<64 hex>;`).

use rustdds::policy::{Durability, History, Liveliness, Reliability};
use rustdds::{
    discovery::{DiscoveredReaderData, DiscoveredWriterData},
    QosPolicies,
};

/// One reader or writer of another participant.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RemoteEndpoint {
    /// Its GUID, for people (`prefix:entity`).
    pub guid: String,
    /// The DDS topic (`rt/demo/scan`).
    pub topic: String,
    /// The DDS type (`sensor_msgs::msg::dds_::LaserScan_`).
    pub type_name: String,
    /// The RIHS01 type hash it announced, if any (rmw of Iron and later announce one).
    pub type_hash: Option<String>,
    /// Reliable (else best effort).
    pub reliable: bool,
    /// Transient-local (else volatile).
    pub transient_local: bool,
    /// Its history depth, when it announced `KeepLast`.
    pub depth: Option<u32>,
    /// Its DEADLINE period when finite (a reader requests it, a writer offers it).
    pub deadline: Option<std::time::Duration>,
    /// Its LIVELINESS when other than AUTOMATIC with an infinite lease, for people
    /// (`MANUAL_BY_TOPIC, lease 1s`).
    pub liveliness: Option<String>,
}

/// The endpoints of the other participants, at one moment.
#[derive(Clone, Debug, Default)]
pub struct RemoteEndpoints {
    /// Their readers.
    pub readers: Vec<RemoteEndpoint>,
    /// Their writers.
    pub writers: Vec<RemoteEndpoint>,
}

impl RemoteEndpoint {
    pub(crate) fn of_reader(r: &DiscoveredReaderData) -> RemoteEndpoint {
        let t = &r.subscription_topic_data;
        Self::new(
            format!("{:?}", r.reader_proxy.remote_reader_guid),
            t.topic_name().clone(),
            t.type_name().clone(),
            &r.user_data,
            &t.qos(),
        )
    }

    pub(crate) fn of_writer(w: &DiscoveredWriterData) -> RemoteEndpoint {
        let t = &w.publication_topic_data;
        Self::new(
            format!("{:?}", w.writer_proxy.remote_writer_guid),
            t.topic_name.clone(),
            t.type_name.clone(),
            &w.user_data,
            &t.qos(),
        )
    }

    fn new(
        guid: String,
        topic: String,
        type_name: String,
        user_data: &[u8],
        qos: &QosPolicies,
    ) -> RemoteEndpoint {
        RemoteEndpoint {
            guid,
            topic,
            type_name,
            type_hash: type_hash_of_user_data(user_data),
            reliable: matches!(qos.reliability(), Some(Reliability::Reliable { .. })),
            transient_local: matches!(
                qos.durability(),
                Some(Durability::TransientLocal | Durability::Transient | Durability::Persistent)
            ),
            depth: match qos.history() {
                Some(History::KeepLast { depth }) => u32::try_from(depth).ok(),
                _ => None,
            },
            deadline: qos
                .deadline()
                .filter(|d| d.0 != rustdds::Duration::INFINITE)
                .map(|d| d.0.to_std()),
            liveliness: qos.liveliness().and_then(liveliness_text),
        }
    }
}

/// `l` for people, `None` for AUTOMATIC with an infinite lease (what every endpoint meets).
fn liveliness_text(l: Liveliness) -> Option<String> {
    let (kind, lease) = match l {
        Liveliness::Automatic { lease_duration } => ("AUTOMATIC", lease_duration),
        Liveliness::ManualByParticipant { lease_duration } => {
            ("MANUAL_BY_PARTICIPANT", lease_duration)
        }
        Liveliness::ManualByTopic { lease_duration } => ("MANUAL_BY_TOPIC", lease_duration),
    };
    if lease == rustdds::Duration::INFINITE {
        (kind != "AUTOMATIC").then(|| kind.to_owned())
    } else {
        Some(format!("{kind}, lease {:?}", lease.to_std()))
    }
}

/// Longest USER_DATA looked at: rmw's `typehash=RIHS01_<64 hex>;` is 80 bytes; a peer's
/// longer data is searched only this far.
const MAX_USER_DATA: usize = 4096;

/// The `RIHS01_…` hash in `typehash=…;` of an endpoint's USER_DATA; `None` when absent or
/// not a well-formed RIHS01 hash (then only the type name is checked).
pub fn type_hash_of_user_data(user_data: &[u8]) -> Option<String> {
    let data = &user_data[..user_data.len().min(MAX_USER_DATA)];
    let text = std::str::from_utf8(data).ok()?;
    let value = text
        .split(';')
        .find_map(|kv| kv.trim_matches(char::from(0)).strip_prefix("typehash="))?;
    let hex = value.strip_prefix("RIHS01_")?;
    (hex.len() == 64 && hex.bytes().all(|b| b.is_ascii_hexdigit()))
        .then(|| format!("RIHS01_{}", hex.to_ascii_lowercase()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_liveliness_stricter_than_automatic_infinite_is_described() {
        let inf = rustdds::Duration::INFINITE;
        let sec = rustdds::Duration::from_secs(2);
        assert_eq!(
            liveliness_text(Liveliness::Automatic {
                lease_duration: inf
            }),
            None
        );
        assert_eq!(
            liveliness_text(Liveliness::Automatic {
                lease_duration: sec
            })
            .as_deref(),
            Some("AUTOMATIC, lease 2s")
        );
        assert_eq!(
            liveliness_text(Liveliness::ManualByTopic {
                lease_duration: inf
            })
            .as_deref(),
            Some("MANUAL_BY_TOPIC")
        );
    }

    #[test]
    fn type_hash_is_read_from_user_data() {
        let h = "a".repeat(64);
        let ud = format!("typehash=RIHS01_{h};");
        assert_eq!(
            type_hash_of_user_data(ud.as_bytes()),
            Some(format!("RIHS01_{h}"))
        );
        let ud = format!("other=1;typehash=RIHS01_{};", "B".repeat(64));
        assert_eq!(
            type_hash_of_user_data(ud.as_bytes()),
            Some(format!("RIHS01_{}", "b".repeat(64)))
        );
    }

    #[test]
    fn malformed_user_data_gives_no_hash() {
        for bad in [
            &b""[..],
            b"typehash=",
            b"typehash=RIHS01_abc;",
            b"typehash=RIHS02_aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa;",
            b"\xff\xfe typehash",
        ] {
            assert_eq!(type_hash_of_user_data(bad), None);
        }
        let mut huge = vec![b'x'; 1 << 20];
        huge.extend_from_slice(format!("typehash=RIHS01_{};", "a".repeat(64)).as_bytes());
        assert_eq!(type_hash_of_user_data(&huge), None);
    }
}
