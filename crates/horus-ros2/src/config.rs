//! What one bridge process does: which horus namespace, which ROS 2 domain, which topics.

use std::num::NonZeroUsize;
use std::time::Duration;

use crate::enclave::{EnclaveError, RosEnclave, ENCLAVE_ENV};
use crate::filter::{Filter, PatternError};
use crate::node_name::{NodeNameError, RosNodeName};

/// The environment variable naming the bridge's ROS 2 node (`horus_bridge`,
/// `/robot1/horus_bridge`).
pub const NODE_NAME_ENV: &str = "HORUS_ROS2_NODE_NAME";

/// Highest ROS 2 domain id (DDS port arithmetic: `7400 + 250 * domain` must fit).
pub const MAX_DOMAIN_ID: u16 = 232;

/// A bridge's settings.
#[derive(Clone, Debug)]
pub struct BridgeConfig {
    /// The horus namespace whose topics cross (`HORUS_NAMESPACE`).
    pub namespace: String,
    /// The ROS 2 domain (`ROS_DOMAIN_ID`, default 0).
    pub domain_id: u16,
    /// Which horus topics go to ROS 2.
    pub to_ros: Filter,
    /// Which ROS 2 topics come into horus (patterns over the horus name, `demo/scan`).
    pub from_ros: Filter,
    /// How often both sides are scanned for endpoints appearing and leaving.
    pub scan_interval: Duration,
    /// Largest message (encapsulation header + CDR body) the bridge carries; larger ones are
    /// refused and counted.
    pub max_message_bytes: usize,
    /// The most bytes the process's DDS readers may hold in samples being reassembled from
    /// fragments, all readers together (`None`: 16 × the reassembly limit, 1 GiB unless
    /// `max_message_bytes` is above 64 MiB); past it a new sample's fragments are refused
    /// and counted (`over_process_budget`). Process-wide: the last bridge started sets it.
    /// Never 0 (a budget of nothing would refuse every fragmented sample; `Some(0)` once
    /// silently meant the default): a budget under the largest sample refuses the largest
    /// samples whatever else is held.
    pub max_reassembly_bytes: Option<NonZeroUsize>,
    /// The most payload bytes each reliable DDS reader of a route into a `Block` topic may
    /// hold of samples it acknowledged and the route has not taken yet, all its writers
    /// together (`None`: 256 MiB), beside its window of the topic's depth per writer. Past
    /// it a sample is held back like one beyond the window (not acknowledged, requested
    /// again once the route has taken enough; counted `held_back`, not lost); one sample
    /// more may be held at a time, a writer's next in order, so that every writer can move
    /// on whatever the budget (a sample larger than it included). Process-wide, for readers
    /// made after the bridge starts: the last bridge started sets it.
    pub max_held_bytes_per_reader: Option<NonZeroUsize>,
    /// Announce and accept DDS traffic on the loopback interface only (127.0.0.1: ROS 2's
    /// `ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST`). Off: every interface, as ROS 2's default.
    pub localhost_only: bool,
    /// How long a service call waits at the bridge for its answer before it is given up
    /// (default [`CALL_TIMEOUT`](crate::CALL_TIMEOUT), 10 s). An action's
    /// `get_result` call lasts as long as its goal (made again after each timeout while
    /// its client is there).
    pub call_timeout: Duration,
    /// The ROS 2 node the bridge's endpoints belong to in the ROS 2 graph (`ros2 node
    /// list`; default `/horus_bridge`, [`NODE_NAME_ENV`]).
    pub node_name: RosNodeName,
    /// The ROS 2 enclave the bridge's participant announces (`enclave=/;` in its
    /// participant USER_DATA, as every ROS 2 participant; default `/`,
    /// [`ENCLAVE_ENV`](crate::ENCLAVE_ENV)). A name in the graph only: the bridge does not
    /// use DDS Security.
    pub enclave: RosEnclave,
}

/// A setting that cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// `ROS_DOMAIN_ID` is not a number from 0 to 232.
    #[error("ROS_DOMAIN_ID {0:?}: not a domain id from 0 to 232")]
    DomainId(String),
    /// An allow or deny pattern is malformed.
    #[error(transparent)]
    Pattern(#[from] PatternError),
    /// The ROS 2 node name ([`NODE_NAME_ENV`]) is not one ROS 2 accepts.
    #[error(transparent)]
    NodeName(#[from] NodeNameError),
    /// The ROS 2 enclave ([`ENCLAVE_ENV`](crate::ENCLAVE_ENV)) is not one ROS 2 accepts.
    #[error(transparent)]
    Enclave(#[from] EnclaveError),
}

impl BridgeConfig {
    /// Defaults for `namespace`: domain from `ROS_DOMAIN_ID`, everything crosses, scans
    /// every 100 ms, messages up to 16 MiB, localhost only when
    /// `ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST` (or `ROS_LOCALHOST_ONLY=1`), ROS 2 node
    /// `/horus_bridge` unless [`NODE_NAME_ENV`] names another, enclave `/` unless
    /// [`ENCLAVE_ENV`](crate::ENCLAVE_ENV) names another.
    pub fn from_env(namespace: &str) -> Result<BridgeConfig, ConfigError> {
        let domain_id = match std::env::var("ROS_DOMAIN_ID") {
            Ok(s) if !s.trim().is_empty() => parse_domain_id(&s)?,
            _ => 0,
        };
        let range = std::env::var("ROS_AUTOMATIC_DISCOVERY_RANGE").unwrap_or_default();
        let legacy = std::env::var("ROS_LOCALHOST_ONLY").unwrap_or_default();
        let node_name = match std::env::var(NODE_NAME_ENV) {
            Ok(s) if !s.trim().is_empty() => RosNodeName::parse(s.trim())?,
            _ => RosNodeName::default(),
        };
        let enclave = match std::env::var(ENCLAVE_ENV) {
            Ok(s) if !s.trim().is_empty() => RosEnclave::parse(s.trim())?,
            _ => RosEnclave::default(),
        };
        Ok(BridgeConfig {
            namespace: namespace.to_owned(),
            domain_id,
            to_ros: Filter::default(),
            from_ros: Filter::default(),
            scan_interval: Duration::from_millis(100),
            max_message_bytes: 16 << 20,
            max_reassembly_bytes: None,
            max_held_bytes_per_reader: None,
            localhost_only: range.eq_ignore_ascii_case("LOCALHOST") || legacy == "1",
            call_timeout: crate::service::CALL_TIMEOUT,
            node_name,
            enclave,
        })
    }
}

/// Parses a ROS 2 domain id.
pub fn parse_domain_id(s: &str) -> Result<u16, ConfigError> {
    s.trim()
        .parse::<u16>()
        .ok()
        .filter(|d| *d <= MAX_DOMAIN_ID)
        .ok_or_else(|| ConfigError::DomainId(s.to_owned()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn domain_ids_are_bounded() {
        assert_eq!(parse_domain_id("42").unwrap(), 42);
        assert_eq!(parse_domain_id(" 0 ").unwrap(), 0);
        for bad in ["233", "-1", "x", "70000"] {
            assert!(parse_domain_id(bad).is_err(), "{bad}");
        }
    }
}
