//! What the bridge reports per service and direction: calls carried and every way a call
//! failed, each counted where it happened.

use serde::{Deserialize, Serialize};

use crate::status::Direction;

/// A service's counters at this bridge, in one direction, since the bridge started (they
/// survive the route closing and opening again).
///
/// `to_ros` (a horus server answers ROS 2 clients): requests come from DDS, are called on
/// the horus service, replies go back to DDS. `from_ros` (a ROS 2 server answers horus
/// clients): requests come from the horus service, are written to DDS, replies come back.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct ServiceCounters {
    /// Calls answered: a reply carried back to the caller.
    pub calls: u64,
    /// Request bytes carried (encapsulation header + CDR body).
    pub request_bytes: u64,
    /// Reply bytes carried.
    pub reply_bytes: u64,
    /// Calls whose server did not answer within the bridge's call timeout.
    pub timed_out: u64,
    /// Calls whose server died (or left) holding the request.
    pub server_died: u64,
    /// Calls that found no server (to ROS 2 only: the horus server left).
    pub no_server: u64,
    /// Calls the server dropped unanswered or could not answer.
    pub unanswered: u64,
    /// Requests or replies that are not CDR of the service's types (dropped).
    pub malformed: u64,
    /// Requests or replies larger than the bridge carries (dropped).
    pub oversize: u64,
    /// Requests dropped because too many calls were already waiting at the bridge.
    pub overloaded: u64,
    /// Replies that came after the bridge gave the call up, or for no call it made.
    pub late: u64,
    /// Replies whose caller had already left.
    pub caller_gone: u64,
    /// Calls given up because their route closed while they waited (not called, or their
    /// answer no longer carried back).
    pub abandoned: u64,
    /// DDS writes that failed.
    pub write_failed: u64,
    /// Replies (to ROS 2) that waited for their caller's reply reader to match the bridge's
    /// reply writer before they were written (DDS discovery had not finished on the
    /// bridge's side; then also counted in `calls` when written).
    pub held_for_reader: u64,
    /// Replies (to ROS 2) dropped because their caller's reply reader did not match the
    /// bridge's reply writer within the call timeout (a write then would reach nobody).
    pub no_reply_reader: u64,
    /// Times the route opened.
    pub opened: u64,
}

/// One service in one direction.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ServiceRouteStatus {
    /// Which way calls cross: `to_ros` (horus server, ROS 2 clients) or `from_ros` (ROS 2
    /// server, horus clients).
    pub direction: Direction,
    /// The horus service (`demo/add`).
    pub horus_service: String,
    /// The ROS 2 service (`/demo/add`).
    pub ros_service: String,
    /// The ROS 2 service type (`std_srvs/srv/SetBool`).
    pub type_name: String,
    /// Whether calls cross now.
    pub active: bool,
    /// Why it does not cross although both sides have an endpoint, else `None`.
    pub refused: Option<String>,
    /// Times a mismatch was found (counted once per peer endpoint).
    pub refusals: u64,
    /// Its counters.
    pub counters: ServiceCounters,
}
