//! `horus ros2`: horus and ROS 2 nodes see each other's topics. One bridge process per
//! host speaks horus shared memory locally and DDS (RTPS, through RustDDS) to ROS 2 nodes;
//! only ROS 2 interface types cross, and their CDR bytes go from shared memory to DDS and
//! back unconverted (docs/ros2-bridge.md).
//!
//! ```no_run
//! use horus_ros2::{Bridge, BridgeConfig};
//!
//! let config = BridgeConfig::from_env(&horus_shm::name::namespace())?;
//! let mut bridge = Bridge::start(config)?;
//! // Runs until the closure returns false; it sees the status after every scan.
//! let stop = std::sync::atomic::AtomicBool::new(false);
//! bridge.run(|_status| !stop.load(std::sync::atomic::Ordering::Relaxed));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
#![warn(missing_docs)]

mod action;
mod bridge;
mod config;
mod dds;
mod discovery;
mod discovery_refusals;
mod enclave;
mod filter;
mod fragment_refusals;
mod inbound;
mod local;
pub mod names;
mod node_name;
mod outbound;
mod participant_info;
mod qos;
pub mod raw;
mod ros_graph;
mod ros_node;
mod route_error;
mod route_thread;
mod sequence_gaps;
mod service;
mod status;
mod type_check;

pub use bridge::{Bridge, BridgeStartError};
pub use config::{parse_domain_id, BridgeConfig, ConfigError, MAX_DOMAIN_ID, NODE_NAME_ENV};
pub use dds::{Dds, DdsStartError};
pub use discovery::{type_hash_of_user_data, RemoteEndpoint, RemoteEndpoints};
pub use discovery_refusals::DdsDiscoveryRefusals;
pub use enclave::{EnclaveError, RosEnclave, ENCLAVE_ENV};
pub use filter::{Filter, PatternError};
pub use fragment_refusals::DdsFragmentRefusals;
pub use node_name::{NodeNameError, RosNodeName, DEFAULT_NODE_NAME, MAX_NODE_NAME_BYTES};
pub use ros_graph::{
    RosGraph, RosGraphService, RosGraphTopic, MAX_GRAPH_ENTRIES, MAX_TYPES_PER_NAME,
};
pub use ros_node::RosNodeError;
pub use route_error::RouteError;
pub use service::{ServiceCounters, ServiceOpenError, ServiceRouteStatus, CALL_TIMEOUT};
pub use status::{
    read_status_file, status_file_path, BridgeStatus, Direction, RouteCounters, StatusReadError,
    TopicStatus,
};
pub use type_check::{check_peer, PayloadCheck, TypeMismatch};
