//! Services across the bridge, both ways: a horus server answers ROS 2 clients
//! ([`to_ros`]), a ROS 2 server answers horus clients ([`from_ros`]). Requests and replies
//! cross as the same CDR bytes on both sides, mapped onto DDS as rmw_fastrtps does
//! ([`endpoints`]).
//!
//! Every scan looks at both sides: horus services of ROS 2 types with a live server (other
//! than this bridge) are offered on DDS as ROS 2 services; ROS 2 services (a DDS reader on
//! a request topic) whose types horus knows are served in horus by this bridge. A service
//! served on both sides at once crosses neither way (each side's clients would get two
//! answers or none): it is refused and reported. ROS 2 nodes' own parameter services are
//! not bridged.

mod endpoints;
mod error;
mod from_ros;
mod names;
mod reaper;
mod record;
mod reply_hold;
mod status;
mod to_ros;
mod types;
mod workers;

use std::collections::{BTreeMap, HashSet};
use std::time::Duration;

pub use error::ServiceOpenError;
pub use status::{ServiceCounters, ServiceRouteStatus};

use crate::bridge::Context;
use crate::discovery::RemoteEndpoint;
use crate::names::{dds_type_name, ros_topic_name, ros_type_name};
use crate::status::Direction;
use crate::type_check::check_peer;
use from_ros::FromRos;
use reaper::Reaper;
use to_ros::ToRos;

/// How long the bridge waits by default for a service's answer before it gives the call up
/// (counted `timed_out`; [`BridgeConfig::call_timeout`](crate::BridgeConfig::call_timeout)).
/// An action's `get_result` call is not given up while its goal lasts: it is made again
/// after each timeout while its ROS 2 client is there (horus → ROS 2), or kept while the
/// horus client's process lives (ROS 2 → horus).
pub const CALL_TIMEOUT: Duration = Duration::from_secs(10);

/// Service routes kept per direction (open or closed): a service offered beyond them is
/// turned away and counted (each DDS reader on a request topic would otherwise cost a DDS
/// writer and reader and a horus service segment).
pub(crate) const MAX_SERVICE_ROUTES: usize = 64;

/// Scans after which a closed route whose service is no longer offered may be forgotten
/// (its counters with it) to make room for another service.
const FORGET_AFTER_SCANS: u32 = 10;

/// Refusals remembered (so that each is counted once); past this the memory is cleared
/// and a refusal still there is counted again.
const MAX_REFUSALS_SEEN: usize = 4096;

/// One service in one direction: its route when open, its status always.
struct Route<R> {
    open: Option<R>,
    status: ServiceRouteStatus,
    /// Scans since its service was last offered.
    gone: u32,
}

impl<R> Route<R> {
    fn new(direction: Direction, name: &str, type_name: &str) -> Route<R> {
        Route {
            open: None,
            status: new_status(direction, name, type_name),
            gone: 0,
        }
    }
}

/// The services crossing this bridge.
pub(crate) struct Services {
    me: u32,
    timeout: Duration,
    to_ros: BTreeMap<String, Route<ToRos>>,
    from_ros: BTreeMap<String, Route<FromRos>>,
    /// (direction, peer or reason) refusals already counted (each counted once).
    refusals_seen: HashSet<(Direction, String)>,
    /// Workers of closed horus → ROS 2 routes still finishing a call.
    reaper: Reaper,
    /// Services offered now but turned away ([`MAX_SERVICE_ROUTES`]), each counted once.
    turned_away_now: HashSet<(Direction, String)>,
    /// Services turned away since the bridge started.
    turned_away: u64,
}

/// A horus service with a live server other than this bridge: its request type's name.
struct LocalService {
    request_type: String,
}

impl Services {
    /// No services yet; calls wait at most `timeout` at the bridge.
    pub(crate) fn new(timeout: Duration) -> Services {
        Services {
            me: std::process::id(),
            timeout,
            to_ros: BTreeMap::new(),
            from_ros: BTreeMap::new(),
            refusals_seen: HashSet::new(),
            reaper: Reaper::default(),
            turned_away_now: HashSet::new(),
            turned_away: 0,
        }
    }

    /// Looks at both sides and opens or closes service routes.
    pub(crate) fn scan(&mut self, cx: &Context<'_>) {
        let locals = self.local_services(&cx.config.namespace);
        let remote = cx.dds.remote_endpoints();
        let mut ros_servers: BTreeMap<String, Vec<&RemoteEndpoint>> = BTreeMap::new();
        let mut ros_clients: BTreeMap<String, Vec<&RemoteEndpoint>> = BTreeMap::new();
        for r in &remote.readers {
            if let Some(s) = names::service_of_request_topic(&r.topic) {
                ros_servers.entry(s).or_default().push(r);
            }
        }
        for w in &remote.writers {
            if let Some(s) = names::service_of_request_topic(&w.topic) {
                ros_clients.entry(s).or_default().push(w);
            }
        }
        self.reaper.reap_finished();
        self.turned_away_now.retain(|(d, n)| match d {
            Direction::ToRos => locals.contains_key(n),
            _ => ros_servers.contains_key(n),
        });
        self.scan_to_ros(cx, &locals, &ros_servers, &ros_clients);
        self.scan_from_ros(cx, &locals, &ros_servers);
    }

    /// The namespace's horus services that have a live server other than this bridge.
    fn local_services(&self, namespace: &str) -> BTreeMap<String, LocalService> {
        let mut out = BTreeMap::new();
        for l in horus::list_services(namespace).unwrap_or_default() {
            let Ok(s) = &l.snapshot else { continue };
            if s.servers.iter().any(|e| e.alive && e.pid != self.me) {
                // "pkg/srv/Foo_Request v1" → "pkg/srv/Foo_Request"
                let request_type = s.request_type.split(' ').next().unwrap_or("").to_owned();
                out.insert(l.name, LocalService { request_type });
            }
        }
        out
    }

    /// Counts a service turned away by [`MAX_SERVICE_ROUTES`] (once while it is offered).
    fn turn_away(&mut self, dir: Direction, name: &str) {
        if self.turned_away_now.insert((dir, name.to_owned())) {
            self.turned_away += 1;
        }
    }

    /// Counts a refusal once per (direction, key).
    fn refuse(&mut self, dir: Direction, key: String, status: &mut ServiceRouteStatus) {
        if self.refusals_seen.len() >= MAX_REFUSALS_SEEN {
            self.refusals_seen.clear();
        }
        if self.refusals_seen.insert((dir, key)) {
            status.refusals += 1;
        }
    }

    /// horus server → ROS 2 clients.
    fn scan_to_ros(
        &mut self,
        cx: &Context<'_>,
        locals: &BTreeMap<String, LocalService>,
        ros_servers: &BTreeMap<String, Vec<&RemoteEndpoint>>,
        ros_clients: &BTreeMap<String, Vec<&RemoteEndpoint>>,
    ) {
        // Routes whose horus server left close once their calls are finished (so that
        // each call's outcome is counted).
        for (name, r) in self.to_ros.iter_mut() {
            if !locals.contains_key(name) {
                if r.open.as_ref().is_none_or(|o| o.waiting() == 0) {
                    r.open = None;
                }
                r.status.active = r.open.is_some();
                r.gone += 1;
            }
        }
        for (name, l) in locals {
            let Some(srv_type) = names::service_type_of_request(&l.request_type) else {
                continue; // not a ROS-typed service
            };
            if !cx.config.to_ros.allows(name) || ros_topic_name(name).is_err() {
                continue;
            }
            let mut route = match self.to_ros.remove(name) {
                Some(r) => r,
                None if !make_room(&mut self.to_ros) => {
                    self.turn_away(Direction::ToRos, name);
                    continue;
                }
                None => Route::new(Direction::ToRos, name, srv_type),
            };
            route.gone = 0;
            if ros_servers.contains_key(name) {
                if let Some(mut o) = route.open.take() {
                    o.abandon(&mut route.status.counters);
                }
                route.status.refused = Some(both_sides(name));
                self.refuse(Direction::ToRos, format!("both:{name}"), &mut route.status);
            } else {
                route.status.refused = None;
                if route.open.is_none() {
                    let max = cx.config.max_message_bytes;
                    let (ns, t) = (&cx.config.namespace, self.timeout);
                    match ToRos::open(cx.dds, ns, name, t, max, &self.reaper) {
                        Ok(o) => {
                            route.open = Some(o);
                            route.status.counters.opened += 1;
                        }
                        Err(e) => route.status.refused = Some(e.to_string()),
                    }
                }
                if let Some(o) = &route.open {
                    // Lasting calls (an action's get_result) last while their client is there.
                    o.set_clients(
                        ros_clients
                            .get(name)
                            .into_iter()
                            .flatten()
                            .map(|w| w.guid.clone()),
                    );
                    // ROS 2 clients of another type or hash: refused (their requests, if
                    // DDS matches them at all, fail the CDR check).
                    let (req_dds, req_hash) = o.request_type();
                    for w in ros_clients.get(name).into_iter().flatten() {
                        if let Err(m) = check_peer(&req_dds, &req_hash, w) {
                            route.status.refused = Some(m.to_string());
                            self.refuse(Direction::ToRos, m.peer.clone(), &mut route.status);
                        }
                    }
                }
            }
            route.status.active = route.open.is_some() && route.status.refused.is_none();
            self.to_ros.insert(name.clone(), route);
        }
    }

    /// ROS 2 server → horus clients.
    fn scan_from_ros(
        &mut self,
        cx: &Context<'_>,
        locals: &BTreeMap<String, LocalService>,
        ros_servers: &BTreeMap<String, Vec<&RemoteEndpoint>>,
    ) {
        for (name, r) in self.from_ros.iter_mut() {
            if !ros_servers.contains_key(name) {
                if let Some(mut o) = r.open.take() {
                    o.fail_pending(&mut r.status.counters);
                }
                r.status.active = false;
                r.status.refused = None;
                r.gone += 1;
            }
        }
        for (name, servers) in ros_servers {
            let Some(first) = servers.first() else {
                continue;
            };
            let Ok(req_type) = ros_type_name(&first.type_name) else {
                continue;
            };
            let Some(srv_type) = names::service_type_of_request(&req_type) else {
                continue;
            };
            if names::is_node_service(name, &req_type) || !cx.config.from_ros.allows(name) {
                continue;
            }
            let mut route = match self.from_ros.remove(name) {
                Some(r) => r,
                None if !make_room(&mut self.from_ros) => {
                    self.turn_away(Direction::FromRos, name);
                    continue;
                }
                None => Route::new(Direction::FromRos, name, srv_type),
            };
            route.gone = 0;
            route.status.refused = None;
            if locals.contains_key(name) {
                // A horus server of its own came up: the bridge's horus server leaves (its
                // calls fail, counted) so that horus clients get one answer.
                if let Some(mut o) = route.open.take() {
                    o.fail_pending(&mut route.status.counters);
                }
                route.status.refused = Some(both_sides(name));
                self.refuse(
                    Direction::FromRos,
                    format!("both:{name}"),
                    &mut route.status,
                );
            } else if let Some((req, resp)) = match &route.open {
                Some(o) => Some(o.types()),
                None => types::service_for_horus(&cx.config.namespace, name, &req_type),
            } {
                let req_dds = dds_type_name(&req.type_name).unwrap_or_default();
                let mut matching = 0;
                for s in servers {
                    match check_peer(&req_dds, &req.type_hash, s) {
                        Ok(()) => matching += 1,
                        Err(m) => {
                            route.status.refused = Some(m.to_string());
                            self.refuse(Direction::FromRos, m.peer.clone(), &mut route.status);
                        }
                    }
                }
                if matching > 0 && route.open.is_none() {
                    let (t, max) = (self.timeout, cx.config.max_message_bytes);
                    match FromRos::open(cx.dds, name, (&req, &resp), t, max) {
                        Ok(o) => {
                            route.open = Some(o);
                            route.status.counters.opened += 1;
                        }
                        Err(e) => {
                            let why = e.to_string();
                            self.refuse(Direction::FromRos, why.clone(), &mut route.status);
                            route.status.refused = Some(why);
                        }
                    }
                }
                if let Some(o) = route.open.as_mut() {
                    if let Err(e) = o.serve_when_matched(&cx.config.namespace, name) {
                        // Another horus service of this name (other types): refused.
                        let why = e.to_string();
                        self.refuse(Direction::FromRos, why.clone(), &mut route.status);
                        route.status.refused = Some(why);
                    }
                }
                if matching == 0 {
                    if let Some(mut o) = route.open.take() {
                        o.fail_pending(&mut route.status.counters);
                    }
                }
            } else {
                let why = format!(
                    "ROS 2 service {name}: type {srv_type} is not known to horus \
                     (no horus client of it, not built in)"
                );
                self.refuse(Direction::FromRos, why.clone(), &mut route.status);
                route.status.refused = Some(why);
            }
            route.status.active = route.open.as_ref().is_some_and(FromRos::serving);
            self.from_ros.insert(name.clone(), route);
        }
    }

    /// Moves calls along the open routes; whether anything moved.
    pub(crate) fn pump(&mut self, _cx: &Context<'_>) -> bool {
        let mut moved = 0;
        for r in self.to_ros.values_mut() {
            if let Some(o) = r.open.as_mut() {
                moved += o.pump(&mut r.status.counters);
            }
        }
        for r in self.from_ros.values_mut() {
            if let Some(o) = r.open.as_mut() {
                moved += o.pump(&mut r.status.counters);
            }
        }
        moved > 0
    }

    /// Every service route's status, by name then direction, as JSON; then, once services
    /// were turned away by [`MAX_SERVICE_ROUTES`], `{"turned_away": {"services": N,
    /// "max_service_routes": 64}}`.
    pub(crate) fn status(&self) -> Vec<serde_json::Value> {
        let mut v: Vec<serde_json::Value> = self
            .route_status()
            .iter()
            .filter_map(|s| serde_json::to_value(s).ok())
            .collect();
        if self.turned_away > 0 {
            v.push(serde_json::json!({"turned_away": {
                "services": self.turned_away,
                "max_service_routes": MAX_SERVICE_ROUTES,
            }}));
        }
        v
    }

    /// Every service route's status, by name then direction.
    fn route_status(&self) -> Vec<ServiceRouteStatus> {
        let mut v: Vec<ServiceRouteStatus> = self
            .to_ros
            .values()
            .map(|r| r.status.clone())
            .chain(self.from_ros.values().map(|r| r.status.clone()))
            .collect();
        v.sort_by(|a, b| (&a.horus_service, a.direction).cmp(&(&b.horus_service, b.direction)));
        v
    }
}

impl Drop for Services {
    /// Closes every route, then waits for the workers still in a call (each ends within
    /// one call timeout) so that their horus clients leave the services.
    fn drop(&mut self) {
        self.to_ros.clear();
        self.from_ros.clear();
        self.reaper.join_all();
    }
}

/// Whether `routes` has room for one more route: when full, the closed route gone
/// longest (at least [`FORGET_AFTER_SCANS`]) is forgotten.
fn make_room<R>(routes: &mut BTreeMap<String, Route<R>>) -> bool {
    if routes.len() < MAX_SERVICE_ROUTES {
        return true;
    }
    let oldest = routes
        .iter()
        .filter(|(_, r)| r.open.is_none() && r.gone >= FORGET_AFTER_SCANS)
        .max_by_key(|(_, r)| r.gone)
        .map(|(n, _)| n.clone());
    oldest.is_some_and(|n| routes.remove(&n).is_some())
}

fn both_sides(name: &str) -> String {
    format!("service {name} is served both by a horus server and by a ROS 2 server: not bridged")
}

fn new_status(direction: Direction, name: &str, type_name: &str) -> ServiceRouteStatus {
    ServiceRouteStatus {
        direction,
        horus_service: name.to_owned(),
        ros_service: ros_topic_name(name).unwrap_or_default(),
        type_name: type_name.to_owned(),
        active: false,
        refused: None,
        refusals: 0,
        counters: ServiceCounters::default(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn full(gone: u32) -> BTreeMap<String, Route<()>> {
        (0..MAX_SERVICE_ROUTES)
            .map(|i| {
                let mut r =
                    Route::new(Direction::FromRos, &format!("s{i}"), "std_srvs/srv/SetBool");
                r.gone = gone;
                (format!("s{i}"), r)
            })
            .collect()
    }

    /// Before, every service offered opened a route and closed ones were never forgotten.
    #[test]
    fn service_routes_are_capped_and_closed_ones_make_room() {
        let mut routes = full(0);
        assert!(
            !make_room(&mut routes),
            "a full map of recent routes has no room"
        );
        for r in routes.values_mut() {
            r.open = Some(());
            r.gone = FORGET_AFTER_SCANS;
        }
        assert!(!make_room(&mut routes), "open routes are never forgotten");
        let mut routes = full(FORGET_AFTER_SCANS);
        routes.get_mut("s3").unwrap().gone = FORGET_AFTER_SCANS + 5;
        assert!(make_room(&mut routes));
        assert_eq!(routes.len(), MAX_SERVICE_ROUTES - 1);
        assert!(
            !routes.contains_key("s3"),
            "the route gone longest is forgotten"
        );
    }
}
