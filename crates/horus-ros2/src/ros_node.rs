//! The bridge as a ROS 2 node: ROS 2 tools (`ros2 node list`, `ros2 topic info -v`,
//! rclpy's `get_node_names_and_namespaces`, `get_publisher_names_and_types_by_node`) learn
//! which node a DDS reader or writer belongs to from the `ros_discovery_info` topic, where
//! each participant publishes a `ParticipantEntitiesInfo` (participant_info.rs), reliable,
//! transient-local, keeping the last one. Without it they show the bridge's endpoints under
//! `_CREATED_BY_BARE_DDS_APP_`.
//!
//! The bridge publishes one node (`/horus_bridge` unless configured) owning every reader
//! and writer of its participant (topics both ways, services, actions) except this
//! announcement's own writer. The list is the participant's own endpoints as RustDDS's
//! discovery database holds them (`DomainParticipant::local_endpoint_guids`, a patch of the
//! vendored RustDDS: an endpoint is there from its creation until Discovery has processed
//! its drop), read at each scan; a new announcement is written when it changed, so it
//! follows routes opening and closing within a scan.

use std::collections::BTreeSet;

use bytes::Bytes;
use rustdds::no_key::DataWriter;
use rustdds::policy::{Durability, History, Reliability};
use rustdds::{QosPolicyBuilder, RTPSEntity, GUID};

use crate::dds::Dds;
use crate::node_name::RosNodeName;
use crate::participant_info::{participant_entities_info, Gid};
use crate::raw::{PassThrough, WireCdr};

/// The DDS topic of node announcements (no `rt/`: rmw names it outside ROS 2's names).
pub(crate) const DISCOVERY_TOPIC: &str = "ros_discovery_info";

/// Its DDS type.
const DISCOVERY_TYPE: &str = "rmw_dds_common::msg::dds_::ParticipantEntitiesInfo_";

/// The RIHS01 hash of `rmw_dds_common/msg/ParticipantEntitiesInfo` (the message is unchanged
/// since Iron: `share/rmw_dds_common/msg/ParticipantEntitiesInfo.json` of the ROS 2 venv),
/// announced in the writer's USER_DATA as rmw's own writer announces it.
const DISCOVERY_TYPE_HASH: &str =
    "RIHS01_91a0593bacdcc50ea9bdcf849a938b128412cc1ea821245c663bcd26f83c295e";

/// Why the node announcement's writer could not be made.
#[derive(Debug, thiserror::Error)]
#[error("DDS writer of {DISCOVERY_TOPIC}: {0}")]
pub struct RosNodeError(String);

/// The bridge's own readers and writers, by GID.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct OwnEndpoints {
    pub(crate) readers: BTreeSet<Gid>,
    pub(crate) writers: BTreeSet<Gid>,
}

/// The bridge's node in the ROS 2 graph.
pub(crate) struct RosNode {
    name: RosNodeName,
    participant: Gid,
    writer: DataWriter<WireCdr, PassThrough>,
    /// What the last announcement that was written said (`None`: none written yet).
    announced: Option<OwnEndpoints>,
}

impl RosNode {
    /// Creates the announcement's writer (as rmw does: reliable, transient-local, keep
    /// last 1, so that a ROS 2 node joining later gets the latest).
    pub(crate) fn start(dds: &Dds, name: RosNodeName) -> Result<RosNode, RosNodeError> {
        let err = |e: &dyn std::fmt::Debug| RosNodeError(format!("{e:?}"));
        let qos = QosPolicyBuilder::new()
            .reliability(Reliability::Reliable {
                max_blocking_time: rustdds::Duration::from_millis(0),
            })
            .durability(Durability::TransientLocal)
            .history(History::KeepLast { depth: 1 })
            .build();
        let writer = dds
            .raw_writer(DISCOVERY_TOPIC, DISCOVERY_TYPE, DISCOVERY_TYPE_HASH, qos)
            .map_err(|e| err(&e))?;
        Ok(RosNode {
            name,
            participant: dds.participant().guid().to_bytes(),
            writer,
            announced: None,
        })
    }

    /// Announces the node with the participant's endpoints now, if they changed since the
    /// last announcement written. A write that fails (a reader's window full) is tried
    /// again at the next call.
    pub(crate) fn announce(&mut self, dds: &Dds) {
        let now = self.own_endpoints(dds);
        if self.announced.as_ref() == Some(&now) {
            return;
        }
        let readers: Vec<Gid> = now.readers.iter().copied().collect();
        let writers: Vec<Gid> = now.writers.iter().copied().collect();
        let wire = participant_entities_info(self.participant, &self.name, &readers, &writers);
        if self.writer.write(WireCdr(Bytes::from(wire)), None).is_ok() {
            self.announced = Some(now);
        }
    }

    /// The readers and writers of this bridge's participant that exist now (its discovery
    /// database's local endpoints), without the announcement's own writer.
    fn own_endpoints(&self, dds: &Dds) -> OwnEndpoints {
        let (readers, writers) = dds.participant().local_endpoint_guids();
        let mine = self.writer.guid();
        OwnEndpoints {
            readers: readers.iter().map(GUID::to_bytes).collect(),
            writers: writers
                .iter()
                .filter(|g| **g != mine)
                .map(GUID::to_bytes)
                .collect(),
        }
    }
}
