//! The ROS 2 side's graph as this bridge's DDS participant discovers it: every ROS 2 topic
//! (`rt/…`) with its types and how many publishers and subscribers other participants
//! announce, and every ROS 2 service (`rq/…Request`) with its types, servers and clients.
//! Written into the bridge's status so that `horus topic list` and `horus service list` show
//! the ROS 2 side (marked as such) next to horus's own.
//!
//! Bounded: a flood of discovery announcements makes at most [`MAX_GRAPH_ENTRIES`] topics
//! and as many services (the rest counted in [`RosGraph::left_out`]), each with at most
//! [`MAX_TYPES_PER_NAME`] type names, so the status file stays small.

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

use crate::discovery::RemoteEndpoints;
use crate::names::{horus_topic_of_dds, ros_type_name};

/// Topics (and, separately, services) kept in the graph; past this they are counted.
pub const MAX_GRAPH_ENTRIES: usize = 1024;

/// Type names kept per topic or service (several are an error on the ROS 2 side; a few
/// are enough to show it).
pub const MAX_TYPES_PER_NAME: usize = 4;

/// Longest name or type kept (longer ones are cut, marked with `…`).
const MAX_NAME_BYTES: usize = 256;

/// One ROS 2 topic.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RosGraphTopic {
    /// The ROS 2 name (`/demo/scan`).
    pub name: String,
    /// The horus topic it would cross as (`demo/scan`); `None` when the name has no horus
    /// counterpart.
    pub horus_name: Option<String>,
    /// Its ROS 2 types (`sensor_msgs/msg/LaserScan`; a DDS type that is not a ROS 2 one
    /// as DDS names it).
    pub types: Vec<String>,
    /// Writers announced by other participants.
    pub publishers: u32,
    /// Readers announced by other participants.
    pub subscribers: u32,
}

/// One ROS 2 service.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RosGraphService {
    /// The ROS 2 name (`/demo/add`).
    pub name: String,
    /// The horus service it would cross as (`demo/add`); `None` when it has none.
    pub horus_name: Option<String>,
    /// Its ROS 2 service types (`example_interfaces/srv/AddTwoInts`).
    pub types: Vec<String>,
    /// Servers (readers of its request topic).
    pub servers: u32,
    /// Clients (writers of its request topic).
    pub clients: u32,
}

/// The ROS 2 side, without this bridge's own endpoints.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct RosGraph {
    /// Topics by ROS 2 name.
    pub topics: Vec<RosGraphTopic>,
    /// Services by ROS 2 name.
    pub services: Vec<RosGraphService>,
    /// Topics and services past [`MAX_GRAPH_ENTRIES`], not listed.
    pub left_out: u64,
}

/// The ROS 2 name of a DDS topic name after its two-letter prefix (`rt/demo/scan` →
/// `/demo/scan`), cut to [`MAX_NAME_BYTES`].
fn ros_name(rest: &str) -> String {
    let mut name = format!("/{}", rest.trim_start_matches('/'));
    cut(&mut name);
    name
}

fn cut(s: &mut String) {
    if s.len() > MAX_NAME_BYTES {
        let mut at = MAX_NAME_BYTES;
        while !s.is_char_boundary(at) {
            at -= 1;
        }
        s.truncate(at);
        s.push('…');
    }
}

/// The ROS 2 type of a DDS type, else the DDS type itself (cut).
fn ros_type(dds: &str) -> String {
    let mut t = ros_type_name(dds).unwrap_or_else(|_| dds.to_owned());
    cut(&mut t);
    t
}

#[derive(Default)]
struct Entry {
    types: BTreeSet<String>,
    writers: u32,
    readers: u32,
}

impl Entry {
    fn add(&mut self, ty: String, writer: bool) {
        if self.types.len() < MAX_TYPES_PER_NAME {
            self.types.insert(ty);
        }
        if writer {
            self.writers = self.writers.saturating_add(1);
        } else {
            self.readers = self.readers.saturating_add(1);
        }
    }
}

/// Adds an endpoint to `map` unless `map` is full (then counts it in `left_out`, once per
/// name).
fn add(
    map: &mut BTreeMap<String, Entry>,
    left: &mut BTreeSet<String>,
    name: String,
    ty: String,
    writer: bool,
) {
    if let Some(e) = map.get_mut(&name) {
        e.add(ty, writer);
    } else if map.len() < MAX_GRAPH_ENTRIES {
        map.entry(name).or_default().add(ty, writer);
    } else if left.len() < MAX_GRAPH_ENTRIES {
        left.insert(name);
    }
}

impl RosGraph {
    /// The graph of what the other participants announce.
    pub fn of(remote: &RemoteEndpoints) -> RosGraph {
        let mut topics: BTreeMap<String, Entry> = BTreeMap::new();
        let mut services: BTreeMap<String, Entry> = BTreeMap::new();
        let mut left = BTreeSet::new();
        let all = remote
            .writers
            .iter()
            .map(|e| (e, true))
            .chain(remote.readers.iter().map(|e| (e, false)));
        for (e, writer) in all {
            if let Some(rest) = e.topic.strip_prefix("rt/") {
                add(
                    &mut topics,
                    &mut left,
                    ros_name(rest),
                    ros_type(&e.type_name),
                    writer,
                );
            } else if let Some(rest) = e
                .topic
                .strip_prefix("rq/")
                .and_then(|r| r.strip_suffix("Request"))
            {
                let mut ty = ros_type(&e.type_name);
                if let Some(base) = ty.strip_suffix("_Request") {
                    ty = base.to_owned();
                }
                // A server reads requests, a client writes them.
                add(&mut services, &mut left, ros_name(rest), ty, writer);
            }
        }
        let horus = |name: &str| horus_topic_of_dds(&format!("rt{name}")).ok();
        RosGraph {
            topics: topics
                .into_iter()
                .map(|(name, e)| RosGraphTopic {
                    horus_name: horus(&name),
                    name,
                    types: e.types.into_iter().collect(),
                    publishers: e.writers,
                    subscribers: e.readers,
                })
                .collect(),
            services: services
                .into_iter()
                .map(|(name, e)| RosGraphService {
                    horus_name: horus(&name),
                    name,
                    types: e.types.into_iter().collect(),
                    servers: e.readers,
                    clients: e.writers,
                })
                .collect(),
            left_out: left.len() as u64,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::discovery::RemoteEndpoint;

    fn ep(topic: &str, ty: &str) -> RemoteEndpoint {
        RemoteEndpoint {
            guid: "g".into(),
            topic: topic.into(),
            type_name: ty.into(),
            type_hash: None,
            reliable: true,
            transient_local: false,
            depth: Some(10),
            deadline: None,
            liveliness: None,
        }
    }

    #[test]
    fn topics_and_services_of_the_ros2_side_are_named_and_typed_as_ros2_does() {
        let remote = RemoteEndpoints {
            writers: vec![
                ep("rt/chatter", "std_msgs::msg::dds_::String_"),
                ep("rt/chatter", "std_msgs::msg::dds_::String_"),
                ep(
                    "rq/demo/addRequest",
                    "example_interfaces::srv::dds_::AddTwoInts_Request_",
                ),
                ep("rt/odd-name", "NotRos"),
                ep(
                    "ros_discovery_info",
                    "rmw_dds_common::msg::dds_::ParticipantEntitiesInfo_",
                ),
            ],
            readers: vec![
                ep("rt/chatter", "std_msgs::msg::dds_::String_"),
                ep(
                    "rq/demo/addRequest",
                    "example_interfaces::srv::dds_::AddTwoInts_Request_",
                ),
                ep(
                    "rr/demo/addReply",
                    "example_interfaces::srv::dds_::AddTwoInts_Response_",
                ),
            ],
        };
        let g = RosGraph::of(&remote);
        assert_eq!(
            g.topics,
            vec![
                RosGraphTopic {
                    name: "/chatter".into(),
                    horus_name: Some("chatter".into()),
                    types: vec!["std_msgs/msg/String".into()],
                    publishers: 2,
                    subscribers: 1,
                },
                RosGraphTopic {
                    name: "/odd-name".into(),
                    horus_name: None,
                    types: vec!["NotRos".into()],
                    publishers: 1,
                    subscribers: 0,
                },
            ]
        );
        assert_eq!(
            g.services,
            vec![RosGraphService {
                name: "/demo/add".into(),
                horus_name: Some("demo/add".into()),
                types: vec!["example_interfaces/srv/AddTwoInts".into()],
                servers: 1,
                clients: 1,
            }]
        );
        assert_eq!(g.left_out, 0);
    }

    #[test]
    fn a_discovery_flood_keeps_the_graph_bounded() {
        let mut remote = RemoteEndpoints::default();
        let long = format!("rt/{}", "x".repeat(10_000));
        remote.writers.push(ep(&long, "a::msg::dds_::B_"));
        for i in 0..MAX_GRAPH_ENTRIES + 10 {
            remote
                .writers
                .push(ep(&format!("rt/t{i}"), "a::msg::dds_::B_"));
        }
        for i in 0..MAX_TYPES_PER_NAME + 5 {
            remote
                .readers
                .push(ep("rt/t0", &format!("a::msg::dds_::T{i}_")));
        }
        let g = RosGraph::of(&remote);
        assert_eq!(g.topics.len(), MAX_GRAPH_ENTRIES);
        assert_eq!(g.left_out, 11);
        let t0 = g.topics.iter().find(|t| t.name == "/t0").unwrap();
        assert_eq!(t0.types.len(), MAX_TYPES_PER_NAME);
        let cut = g
            .topics
            .iter()
            .find(|t| t.name.starts_with("/xxx"))
            .unwrap();
        assert!(
            cut.name.len() <= MAX_NAME_BYTES + '…'.len_utf8(),
            "{}",
            cut.name.len()
        );
    }
}
