//! The ROS 2 discovery range every process of a run gets (`ROS_AUTOMATIC_DISCOVERY_RANGE`).
//!
//! Under `LOCALHOST`, rmw_fastrtps appends its own shared-memory and UDPv4 transports to the
//! ones a Fast DDS XML profile declares (`ros2/fastdds-large-messages.xml` declares both), so
//! an rclpy node then has two UDPv4 transports and sends every datagram to the bridge twice.
//! Under `SYSTEM_DEFAULT` it leaves the profile's transports alone and sends each once.
//!
//! `SYSTEM_DEFAULT` is used only inside the benchmark's private network namespace with only
//! `lo`, and there without a multicast route: rclpy nodes find each other through
//! `ROS_STATIC_PEERS=127.0.0.1` (the bridge's RustDDS announces itself to the localhost SPDP
//! ports on its own). Not with multicast routed to `lo`: the bridge's RustDDS readers
//! announce the multicast locator 239.255.0.1:7401 besides their unicast one, and Fast DDS
//! then sends every datagram to both, so the bridge again gets each twice (a capture on `lo`
//! shows it). Without a route the multicast copy is not sent.

use anyhow::bail;

/// A ROS 2 automatic discovery range.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DiscoveryRange {
    /// `LOCALHOST`: 127.0.0.1 as the only peer, no multicast (rmw_fastrtps adds transports
    /// of its own to a profile's: every datagram sent twice).
    Localhost,
    /// `SYSTEM_DEFAULT`: the middleware's defaults (Fast DDS: multicast discovery), the
    /// profile's transports as declared.
    SystemDefault,
}

impl DiscoveryRange {
    /// Command-line name.
    pub fn name(self) -> &'static str {
        match self {
            DiscoveryRange::Localhost => "localhost",
            DiscoveryRange::SystemDefault => "system-default",
        }
    }

    /// Parses [`DiscoveryRange::name`].
    pub fn parse(s: &str) -> anyhow::Result<DiscoveryRange> {
        match s.trim() {
            "localhost" => Ok(DiscoveryRange::Localhost),
            "system-default" => Ok(DiscoveryRange::SystemDefault),
            other => bail!("unknown discovery range {other:?} (localhost or system-default)"),
        }
    }

    /// The value of `ROS_AUTOMATIC_DISCOVERY_RANGE`.
    pub fn env_value(self) -> &'static str {
        match self {
            DiscoveryRange::Localhost => "LOCALHOST",
            DiscoveryRange::SystemDefault => "SYSTEM_DEFAULT",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_parse_back() {
        for r in [DiscoveryRange::Localhost, DiscoveryRange::SystemDefault] {
            assert_eq!(DiscoveryRange::parse(r.name()).unwrap(), r);
        }
        assert!(DiscoveryRange::parse("SUBNET").is_err());
    }
}
