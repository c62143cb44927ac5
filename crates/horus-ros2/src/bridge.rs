//! The bridge: one loop that rescans both sides every `scan_interval` (opening a route
//! for each topic that has a publisher on one side and a matching subscriber on the other,
//! closing it when either leaves) and in between moves service calls along. Each open
//! topic route moves its messages on a thread of its own (route_thread.rs), woken by its
//! source (the horus subscriber's futex, the DDS reader's readiness): the loop neither
//! polls topics nor adds latency to them, and one route that waits holds no other.

use std::collections::{BTreeMap, HashSet};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::config::BridgeConfig;
use crate::dds::{Dds, DdsStartError};
use crate::discovery::{RemoteEndpoint, RemoteEndpoints};
use crate::inbound::Inbound;
use crate::local::{LocalScan, LocalTopic};
use crate::names;
use crate::outbound::Outbound;
use crate::qos::{serves, ReaderKind};
use crate::route_thread::{OwnPlace, SharedCounters, Stopping};
use crate::status::{
    remove_status_file, write_status_file, BridgeStatus, Direction, RouteCounters, TopicStatus,
};
use crate::type_check::{check_peer, TypeMismatch};

/// What the bridge loop lends the parts that plug into it (topics here; services in
/// `service/`): the DDS participant and the settings.
pub(crate) struct Context<'a> {
    /// The DDS participant, its publisher and subscriber.
    #[allow(dead_code)]
    pub(crate) dds: &'a Dds,
    /// The bridge's settings.
    #[allow(dead_code)]
    pub(crate) config: &'a BridgeConfig,
}

/// Why the bridge could not start.
#[derive(Debug, thiserror::Error)]
pub enum BridgeStartError {
    /// The DDS participant could not start.
    #[error(transparent)]
    Dds(#[from] DdsStartError),
    /// The bridge's ROS 2 node announcement could not be set up.
    #[error(transparent)]
    RosNode(#[from] crate::ros_node::RosNodeError),
}

/// One topic in one direction: its route when open, its counters always.
struct Route<R> {
    open: Option<R>,
    /// The status; its `counters` are filled from `counters` when reported.
    status: TopicStatus,
    /// The counters, shared with the route's thread while one runs.
    counters: SharedCounters,
    /// From ROS 2: the writers' sequence numbers (survive the reader being reopened).
    sequences: crate::inbound::SharedGaps,
}

impl<R> Route<R> {
    fn new(status: TopicStatus) -> Route<R> {
        Route {
            open: None,
            status,
            counters: SharedCounters::default(),
            sequences: Default::default(),
        }
    }
}

/// Closes a route (if open): its thread is asked to stop and handed to `stopping`.
fn close<R: RouteStop>(open: &mut Option<R>, stopping: &mut Stopping) {
    if let Some(r) = open.take() {
        stopping.add(r.stop_thread());
    }
}

/// A route with a thread to stop.
trait RouteStop {
    fn stop_thread(self) -> Option<std::thread::JoinHandle<()>>;
}

impl RouteStop for Outbound {
    fn stop_thread(self) -> Option<std::thread::JoinHandle<()>> {
        self.stop()
    }
}

impl RouteStop for Inbound {
    fn stop_thread(self) -> Option<std::thread::JoinHandle<()>> {
        self.stop()
    }
}

/// A running bridge. Call [`Bridge::run`] (or [`Bridge::step`] in a loop).
///
/// Fields drop in declaration order: the routes and services (the DDS readers and
/// writers) go first, while the participant's threads still run, so that a reliable or
/// transient-local writer's last messages and the endpoints' removal are still announced;
/// `dds` (the participant) is declared last for that reason.
pub struct Bridge {
    config: BridgeConfig,
    local: LocalScan,
    /// Services crossing (service/).
    services: crate::service::Services,
    outbound: BTreeMap<String, Route<Outbound>>,
    inbound: BTreeMap<String, Route<Inbound>>,
    last_scan: Option<Instant>,
    /// Per topic, the bridge's own horus publisher place (from ROS 2), which the route to
    /// ROS 2 of the same topic skips (no echo).
    own_places: BTreeMap<String, OwnPlace>,
    /// Threads of closed routes still finishing (joined before `dds` drops).
    stopping: Stopping,
    /// Whether a service route is open (the loop then polls them between scans).
    services_active: bool,
    /// Endpoint pairs whose mismatch was already counted (counted once each).
    mismatches_seen: std::collections::HashSet<(Direction, String)>,
    /// The ROS 2 side as the last scan discovered it (for `horus topic/service list`).
    ros_graph: crate::ros_graph::RosGraph,
    /// The bridge as a ROS 2 node (`ros_discovery_info`).
    ros_node: crate::ros_node::RosNode,
    /// Last: dropped after every reader and writer above (see the type's docs).
    dds: Dds,
}

/// Polls an idle loop makes before it sleeps (while a service route is open).
const IDLE_SPINS: u32 = 64;
/// The idle loop's sleep while a service route is open: bounds the latency a service call
/// sees when the bridge was idle. Without service routes the loop sleeps until the next
/// scan (topic routes have threads of their own).
const IDLE_SLEEP: Duration = Duration::from_micros(500);

impl Bridge {
    /// Joins the DDS domain of `config` and starts watching its horus namespace.
    pub fn start(config: BridgeConfig) -> Result<Bridge, BridgeStartError> {
        let dds = Dds::start(&config)?;
        let ros_node = crate::ros_node::RosNode::start(&dds, config.node_name.clone())?;
        let call_timeout = config.call_timeout;
        Ok(Bridge {
            local: LocalScan::new(&config.namespace),
            config,
            dds,
            outbound: BTreeMap::new(),
            inbound: BTreeMap::new(),
            last_scan: None,
            own_places: BTreeMap::new(),
            stopping: Stopping::default(),
            services_active: false,
            mismatches_seen: Default::default(),
            ros_graph: Default::default(),
            ros_node,
            services: crate::service::Services::new(call_timeout),
        })
    }

    /// Runs until `keep_going` (called after every scan with the bridge's status) returns
    /// false, writing the status file when it changed and removing it at the end.
    pub fn run(&mut self, mut keep_going: impl FnMut(&BridgeStatus) -> bool) {
        let pid = std::process::id();
        let mut idle = 0u32;
        let mut last_written = None;
        loop {
            let (scanned, moved) = self.step();
            if scanned {
                let st = self.status();
                if last_written.as_ref() != Some(&st) {
                    let _ = write_status_file(&st);
                }
                let go = keep_going(&st);
                last_written = Some(st);
                if !go {
                    break;
                }
            }
            if moved {
                idle = 0;
            } else if !self.services_active {
                // Nothing to poll: topics move on their own threads; sleep to the scan.
                let next = self.last_scan.map_or(Duration::ZERO, |t| {
                    self.config.scan_interval.saturating_sub(t.elapsed())
                });
                std::thread::sleep(next);
            } else if idle < IDLE_SPINS {
                idle += 1;
                std::hint::spin_loop();
            } else {
                std::thread::sleep(IDLE_SLEEP);
            }
        }
        remove_status_file(&self.config.namespace, pid);
    }

    /// One turn of the loop: rescans both sides when a scan is due, then moves the service
    /// calls that are waiting (topic routes move on their own threads). Returns (whether it
    /// scanned, whether any call moved).
    pub fn step(&mut self) -> (bool, bool) {
        let due = self
            .last_scan
            .is_none_or(|t| t.elapsed() >= self.config.scan_interval);
        if due {
            self.scan();
            self.last_scan = Some(Instant::now());
        }
        let cx = Context {
            dds: &self.dds,
            config: &self.config,
        };
        let moved = self.services.pump(&cx);
        (due, moved)
    }

    /// The bridge's context for the parts that plug into it.
    #[allow(dead_code)]
    pub(crate) fn context(&self) -> Context<'_> {
        Context {
            dds: &self.dds,
            config: &self.config,
        }
    }

    /// What the bridge reports now.
    pub fn status(&self) -> BridgeStatus {
        let mut topics: Vec<TopicStatus> = self
            .outbound
            .values()
            .map(|r| (&r.status, &r.counters))
            .chain(self.inbound.values().map(|r| (&r.status, &r.counters)))
            .map(|(s, c)| TopicStatus {
                counters: c.get(),
                ..s.clone()
            })
            .collect();
        topics.sort_by(|a, b| (&a.horus_topic, a.direction).cmp(&(&b.horus_topic, b.direction)));
        BridgeStatus {
            namespace: self.config.namespace.clone(),
            domain_id: self.config.domain_id,
            pid: std::process::id(),
            topics,
            services: self
                .services
                .status()
                .iter()
                .filter_map(|s| serde_json::to_value(s).ok())
                .collect(),
            ros_graph: self.ros_graph.clone(),
            dds_fragments_refused: crate::fragment_refusals::DdsFragmentRefusals::now(),
            dds_discovery_refused: crate::discovery_refusals::DdsDiscoveryRefusals::now(),
            dds_held_back: rustdds::horus_ack_window::withheld(),
        }
    }

    fn scan(&mut self) {
        let locals = self.local.topics();
        let remote = self.dds.remote_endpoints();
        self.ros_graph = crate::ros_graph::RosGraph::of(&remote);
        // Actions' status topics are offered transient-local, as rcl_action's are (action/).
        self.scan_outbound(&crate::action::offered_to_ros(&locals), &remote);
        self.scan_inbound(&locals, &remote);
        let cx = Context {
            dds: &self.dds,
            config: &self.config,
        };
        self.services.scan(&cx);
        self.services_active = self
            .services
            .status()
            .iter()
            .any(|s| s.get("active") == Some(&serde_json::Value::Bool(true)));
        self.stopping.collect();
        // After the routes opened or closed: the node lists what the participant has now.
        self.ros_node.announce(&self.dds);
    }

    /// horus → ROS 2: a horus publisher and at least one ROS 2 reader of the same type.
    fn scan_outbound(&mut self, locals: &BTreeMap<String, LocalTopic>, remote: &RemoteEndpoints) {
        for (name, t) in locals {
            let wanted = self.outbound_wanted(name, t, remote);
            let route = self.outbound.entry(name.clone());
            let Some((dds_topic, dds_type, readers, refused)) = wanted else {
                if let std::collections::btree_map::Entry::Occupied(mut e) = route {
                    close(&mut e.get_mut().open, &mut self.stopping);
                    e.get_mut().status.active = false;
                    e.get_mut().status.refused = None;
                }
                continue;
            };
            let r = route
                .or_insert_with(|| Route::new(new_status(Direction::ToRos, name, &t.ty.type_name)));
            r.status.refused = refused.as_ref().map(ToString::to_string);
            if let Some(m) = &refused {
                if self
                    .mismatches_seen
                    .insert((Direction::ToRos, m.peer.clone()))
                {
                    r.status.refusals += 1;
                }
            }
            if readers == 0 {
                close(&mut r.open, &mut self.stopping);
            } else if r.open.is_none() {
                let Some(view) = self.local.view(name) else {
                    continue;
                };
                let skip = self.own_places.entry(name.clone()).or_default().clone();
                let c = r.counters.clone();
                match Outbound::open(&self.dds, view, t, &dds_topic, &dds_type, skip, c) {
                    Ok(o) => {
                        r.open = Some(o);
                        r.counters.lock().opened += 1;
                    }
                    Err(e) => r.status.refused = Some(e.to_string()),
                }
            }
            r.status.active = r.open.is_some();
        }
        for (name, r) in self.outbound.iter_mut() {
            if !locals.contains_key(name) {
                close(&mut r.open, &mut self.stopping);
                r.status.active = false;
            }
        }
    }

    /// For a horus topic that may go to ROS 2: its DDS names, how many remote readers
    /// match, and a mismatch with one that does not. `None`: it does not go (no horus
    /// publisher, filtered out, not a ROS 2 name, no remote reader at all).
    fn outbound_wanted(
        &self,
        name: &str,
        t: &LocalTopic,
        remote: &RemoteEndpoints,
    ) -> Option<(String, String, usize, Option<TypeMismatch>)> {
        if !t.has_publisher || !self.config.to_ros.allows(name) {
            return None;
        }
        let dds_topic = names::dds_topic_name(name).ok()?;
        let dds_type = names::dds_type_name(&t.ty.type_name)?;
        let readers: Vec<&RemoteEndpoint> = remote
            .readers
            .iter()
            .filter(|r| r.topic == dds_topic)
            .collect();
        if readers.is_empty() {
            return None;
        }
        let mut refused = None;
        let mut matching = 0;
        let mut other_type = false;
        for r in readers {
            match check_peer(&dds_type, &t.ty.type_hash, r) {
                Ok(()) if !serves(t.durability, r) => {
                    refused.get_or_insert(TypeMismatch::durability(name, r));
                }
                Ok(()) => match TypeMismatch::timing(name, r) {
                    // DDS would not match it with the bridge's writer.
                    Some(m) => {
                        refused.get_or_insert(m);
                    }
                    None => matching += 1,
                },
                Err(m) => {
                    other_type = true;
                    refused.get_or_insert(m);
                }
            }
        }
        // DDS matches a reader by topic name alone: a reader of another type would get
        // this writer's messages too, so while one is there the route stays closed.
        if other_type {
            matching = 0;
        }
        Some((dds_topic, dds_type, matching, refused))
    }

    /// ROS 2 → horus: at least one ROS 2 writer of the horus topic's type and a horus
    /// subscriber.
    fn scan_inbound(&mut self, locals: &BTreeMap<String, LocalTopic>, remote: &RemoteEndpoints) {
        let mut by_topic: BTreeMap<String, Vec<&RemoteEndpoint>> = BTreeMap::new();
        for w in &remote.writers {
            if let Ok(h) = names::horus_topic_of_dds(&w.topic) {
                by_topic.entry(h).or_default().push(w);
            }
        }
        for (name, r) in self.inbound.iter_mut() {
            // A route whose writers all left carries what its reader acknowledged of them
            // before it closes (Inbound::drained), as long as its horus subscriber is there.
            let writers_or_their_samples =
                by_topic.contains_key(name) || r.open.as_ref().is_some_and(|i| !i.drained());
            let keep =
                writers_or_their_samples && locals.get(name).is_some_and(|t| t.has_subscriber);
            if !keep {
                close(&mut r.open, &mut self.stopping);
                r.status.active = false;
                r.status.refused = None;
                // No horus subscriber holds what crossed: a later one is new, and gets the
                // writers' latched history as a new ROS 2 subscriber would.
                // The counters first, as the route's thread locks them.
                let mut c = r.counters.lock();
                r.sequences
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .forget_all(&mut c);
            }
        }
        for (name, writers) in by_topic {
            if !self.config.from_ros.allows(&name) {
                continue;
            }
            let Some(t) = locals.get(&name).filter(|t| t.has_subscriber) else {
                continue;
            };
            let (Some(dds_type), Ok(dds_topic)) = (
                names::dds_type_name(&t.ty.type_name),
                names::dds_topic_name(&name),
            ) else {
                continue;
            };
            let mut matching = Vec::new();
            let mut refused = None;
            let present: HashSet<String> = writers.iter().map(|w| w.guid.clone()).collect();
            for w in writers {
                match check_peer(&dds_type, &t.ty.type_hash, w) {
                    Ok(()) => matching.push(w),
                    Err(m) => {
                        refused.get_or_insert(m);
                    }
                }
            }
            let r = self.inbound.entry(name.clone()).or_insert_with(|| {
                Route::new(new_status(Direction::FromRos, &name, &t.ty.type_name))
            });
            r.status.refused = refused.as_ref().map(ToString::to_string);
            if let Some(m) = &refused {
                if self
                    .mismatches_seen
                    .insert((Direction::FromRos, m.peer.clone()))
                {
                    r.status.refusals += 1;
                }
            }
            if matching.is_empty() {
                match r.open.as_mut().filter(|i| !i.drained()) {
                    // Writers that left: carried until the reader runs empty.
                    Some(i) => i.accept_writers(HashSet::new(), HashSet::new(), present),
                    None => close(&mut r.open, &mut self.stopping),
                }
            } else {
                let accepted: HashSet<String> = matching.iter().map(|w| w.guid.clone()).collect();
                let with_history: HashSet<String> = matching
                    .iter()
                    .filter(|w| w.transient_local)
                    .map(|w| w.guid.clone())
                    .collect();
                // The route refuses the writers no longer accepted before anything else
                // changes: a reader swapped in below would otherwise be handed their
                // history under the old verdicts.
                if let Some(i) = r.open.as_mut() {
                    i.accept_writers(accepted.clone(), with_history.clone(), present.clone());
                }
                let kind = ReaderKind::of(&matching);
                if let Some(i) = r.open.as_mut().filter(|i| i.kind != kind) {
                    // Only the DDS reader is replaced: the bridge's horus publisher, and
                    // the latched history it keeps for horus subscribers joining later,
                    // stay (inbound.rs). Should that fail, the route opens anew below.
                    match i.reopen_reader(&self.dds, t, &dds_topic, &dds_type, kind) {
                        Ok(()) => r.counters.lock().opened += 1,
                        Err(_) => close(&mut r.open, &mut self.stopping),
                    }
                }
                // Forgotten only now that the route refuses them: before, its thread could
                // carry a sample of a writer just forgotten and so remember it again, and
                // if that writer were accepted again later, what it had refused meanwhile
                // would count as refused and as a gap (lost) both (found in review).
                {
                    // Writers that left whose samples the route still carries keep theirs
                    // (the route forgets them once its reader runs empty).
                    let carried = r
                        .open
                        .as_ref()
                        .map_or_else(|| accepted.clone(), Inbound::carried);
                    // The counters first, as the route's thread locks them.
                    let mut c = r.counters.lock();
                    r.sequences
                        .lock()
                        .unwrap_or_else(|p| p.into_inner())
                        .forget_writers_except(&carried, &mut c);
                }
                if r.open.is_none() {
                    let Some(view) = self.local.view(&name) else {
                        continue;
                    };
                    let max = self.config.max_message_bytes;
                    let shared = (
                        r.counters.clone(),
                        Arc::clone(&r.sequences),
                        self.own_places.entry(name.clone()).or_default().clone(),
                    );
                    let writers = (accepted, with_history, present);
                    match Inbound::open(
                        &self.dds, view, t, &dds_topic, &dds_type, kind, max, shared, writers,
                    ) {
                        Ok(i) => {
                            r.open = Some(i);
                            r.counters.lock().opened += 1;
                        }
                        Err(e) => r.status.refused = Some(e.to_string()),
                    }
                }
            }
            r.status.active = r.open.is_some();
        }
    }
}

fn new_status(direction: Direction, horus_topic: &str, type_name: &str) -> TopicStatus {
    TopicStatus {
        direction,
        horus_topic: horus_topic.to_owned(),
        ros_topic: names::ros_topic_name(horus_topic).unwrap_or_default(),
        type_name: type_name.to_owned(),
        active: false,
        refused: None,
        refusals: 0,
        counters: RouteCounters::default(),
    }
}

impl Drop for Bridge {
    /// Stops every route's thread and waits for them, while the DDS participant (dropped
    /// after this) still runs: their readers and writers go first (see the type's docs).
    fn drop(&mut self) {
        for r in self.outbound.values_mut() {
            close(&mut r.open, &mut self.stopping);
        }
        for r in self.inbound.values_mut() {
            close(&mut r.open, &mut self.stopping);
        }
        self.stopping.join_all();
    }
}
