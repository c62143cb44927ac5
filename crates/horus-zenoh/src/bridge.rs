//! The bridge: one Zenoh session, a loop that keeps what crosses in line with what each host
//! has, and the status it reports.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use zenoh::liveliness::LivelinessToken;
use zenoh::sample::SampleKind;
use zenoh::{Session, Wait};

use crate::history_serve::{HistoryServer, HistorySpec};
use crate::inbound::{Inbound, InboundSpec, Origins, Senders, Writers};
use crate::keys::{Keys, SchemaKey, TokenKind};
use crate::latched_copy::{LatchedCopies, Round};
use crate::local::{LocalScan, LocalService, LocalTopic};
use crate::outbound::{epoch_now, Outbound, OutboundSpec, StallLimits, NO_PLACE};
use crate::refusals::{Refusals, Refused};
use crate::remote::{HostSchema, RemoteView};
use horus::description::ServiceDescription;

use crate::describer::Describer;
use crate::service_in::{parse_service_description, ForwardTo, ServiceIn};
use crate::service_out::{CallLimits, RefusedService, ServiceOut};
use crate::status::{
    remove_status_file, write_status_file, BridgeStatus, LiveCounters, ServiceCounters,
    ServiceStatus, TopicIssue, TopicRefusal, TopicStatus,
};
use crate::{BridgeConfig, BridgeError};

/// How often the status (and its file) is refreshed.
const STATUS_EVERY: Duration = Duration::from_millis(250);

/// How long before a failed start of a topic or service is tried again.
const RETRY_AFTER: Duration = Duration::from_secs(1);

/// How long a topic keeps crossing after its last local publisher left (the sending side) or
/// its last remote offer went (the receiving side): what was still in the ring, in Zenoh's
/// queues or on the wire gets through instead of being dropped with the workers.
const LINGER: Duration = Duration::from_secs(2);

/// A running bridge. Dropping it (or [`Bridge::stop`]) stops it: its tokens vanish, so the
/// other hosts stop sending to it and stand in for its services no more.
pub struct Bridge {
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
    status: Arc<Mutex<BridgeStatus>>,
}

impl Bridge {
    /// Opens the Zenoh session and starts bridging `cfg.namespace`.
    pub fn start(cfg: BridgeConfig) -> Result<Bridge, BridgeError> {
        cfg.validate()?;
        let session = crate::session::open(&cfg)?;
        let keys = Keys::new(&cfg.domain);
        let refusals = Refusals::default();
        let remote = RemoteView::new(
            cfg.limits.max_hosts,
            cfg.limits.max_tokens_per_host,
            refusals.clone(),
        );
        let (r, k, me) = (remote.clone(), keys.clone(), cfg.host.clone());
        let liveliness = session
            .liveliness()
            .declare_subscriber(keys.all_tokens())
            .history(true)
            .callback(move |s| r.apply(&k, &me, s.key_expr().as_str(), s.kind() == SampleKind::Put))
            .wait()
            .map_err(|e| BridgeError::Declare {
                what: "liveliness subscriber".into(),
                reason: e.to_string(),
            })?;
        let status = Arc::new(Mutex::new(BridgeStatus {
            host: cfg.host.clone(),
            domain: cfg.domain.clone(),
            namespace: cfg.namespace.clone(),
            pid: std::process::id(),
            epoch: epoch_now(),
            peers: Vec::new(),
            topics: Vec::new(),
            services: Vec::new(),
            open_to_network: cfg.open_to_network(),
            refusals: Vec::new(),
            hosts_refused: 0,
            malformed_tokens: 0,
        }));
        let stop = Arc::new(AtomicBool::new(false));
        let mut state = State {
            scan: LocalScan::new(&cfg.namespace),
            describer: Describer::new(
                cfg.limits.describes_in_flight,
                cfg.limits.max_description_bytes,
                parse_service_description,
            ),
            copies: LatchedCopies::new(
                cfg.limits.describes_in_flight,
                cfg.limits.max_description_bytes,
            ),
            refusals,
            refused_seen: HashSet::new(),
            hosts_seen: HashMap::new(),
            cfg,
            keys,
            session,
            remote,
            tokens: HashMap::new(),
            topics: BTreeMap::new(),
            services: BTreeMap::new(),
            status: Arc::clone(&status),
        };
        let flag = Arc::clone(&stop);
        let thread = std::thread::Builder::new()
            .name("horus-bridge".into())
            .spawn(move || {
                let _liveliness = liveliness;
                state.run(&flag);
            })
            .map_err(BridgeError::Thread)?;
        Ok(Bridge {
            stop,
            thread: Some(thread),
            status,
        })
    }

    /// What the bridge reports now.
    pub fn status(&self) -> BridgeStatus {
        self.status
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// Stops the bridge and waits for it.
    pub fn stop(mut self) {
        self.halt();
    }

    fn halt(&mut self) {
        // Relaxed: a stop flag polled by the loop; joining the thread orders the rest.
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl Drop for Bridge {
    fn drop(&mut self) {
        self.halt();
    }
}

/// One topic as the bridge handles it.
#[derive(Default)]
struct TopicState {
    out: Option<Outbound>,
    inn: Option<Inbound>,
    own_place: Arc<AtomicUsize>,
    counters: Arc<LiveCounters>,
    origins: Origins,
    writers: Writers,
    senders: Senders,
    /// This host's latched history, served to other hosts while it offers the topic latched.
    history: Option<HistoryServer>,
    /// Set while the outbound stream is on the local topic (see `history_serve`).
    streaming: Arc<AtomicBool>,
    /// Hosts whose latched history the running inbound side has asked for (one that starts
    /// offering the topic latched later is asked too, by the same inbound side).
    history_hosts: Vec<String>,
    /// When each host last offered the topic (its messages are taken for `LINGER` after).
    offered_by: HashMap<String, Instant>,
    /// Stalls already attributed to the hosts sent to.
    stalls_seen: u64,
    /// Hosts refused by the policy (offers it may not take, wants it may not serve).
    refused: Vec<TopicRefusal>,
    sending_to: Vec<String>,
    receiving_from: Vec<String>,
    issues: Vec<TopicIssue>,
    failed_at: Option<Instant>,
    schema: String,
    /// When a local publisher was last seen.
    published_at: Option<Instant>,
    /// When another host last offered the topic.
    offered_at: Option<Instant>,
}

/// One service as the bridge handles it.
struct ServiceState {
    out: Option<ServiceOut>,
    /// A local server other hosts may not call: its call key refuses.
    refusing: Option<RefusedService>,
    inn: Option<(String, ServiceIn)>,
    issues: Vec<String>,
    failed_at: Option<Instant>,
}

struct State {
    cfg: BridgeConfig,
    keys: Keys,
    session: Session,
    remote: RemoteView,
    scan: LocalScan,
    tokens: HashMap<String, LivelinessToken>,
    topics: BTreeMap<String, TopicState>,
    services: BTreeMap<String, ServiceState>,
    status: Arc<Mutex<BridgeStatus>>,
    describer: Describer<ServiceDescription>,
    /// Other hosts' latched topics created here ahead of their subscribers.
    copies: LatchedCopies,
    refusals: Refusals,
    /// Remote tokens refused by the policy last time round: a refusal is counted once, when
    /// its token appears.
    refused_seen: HashSet<(Refused, String, String)>,
    /// When each host was last known (forgotten `limits.forget_host_after` after).
    hosts_seen: HashMap<String, Instant>,
}

impl State {
    fn run(&mut self, stop: &AtomicBool) {
        let mut last_status = Instant::now() - STATUS_EVERY;
        // Relaxed: see Bridge::halt.
        while !stop.load(Ordering::Relaxed) {
            let topics = self.scan.topics();
            let services = self.scan.services();
            self.forget_hosts();
            let mut refused = HashSet::new();
            self.update_tokens(&topics, &services);
            self.update_topics(&topics, &mut refused);
            self.update_copies(&topics);
            self.update_services(&services, &mut refused);
            self.count_refusals(refused);
            if last_status.elapsed() >= STATUS_EVERY {
                self.publish_status();
                last_status = Instant::now();
            }
            std::thread::sleep(self.cfg.scan_interval);
        }
        // Workers first (their threads end), then tokens with the session.
        self.topics.clear();
        self.copies.clear();
        self.services.clear();
        self.tokens.clear();
        if self.cfg.status_file {
            remove_status_file(&self.cfg.namespace, std::process::id());
        }
        let _ = self.session.close().wait();
    }

    /// Declares the tokens for what this host has now, and undeclares the rest.
    fn update_tokens(
        &mut self,
        topics: &BTreeMap<String, LocalTopic>,
        services: &BTreeMap<String, LocalService>,
    ) {
        let host = &self.cfg.host;
        let mut wanted: Vec<String> = vec![self.keys.token(
            TokenKind::Host,
            host,
            SchemaKey { id: 0, layout: 0 },
            "bridge",
        )];
        let policy = &self.cfg.policy;
        for (name, t) in topics.iter().filter(|(n, _)| self.cfg.filter.allows(n)) {
            if t.has_publisher && policy.leave.allows(name) {
                // Latched before offered: a host that sees the offer has seen the durability.
                let depth = t.durability.latched();
                if depth > 0 {
                    let depth = SchemaKey {
                        id: u64::from(depth),
                        layout: 0,
                    };
                    wanted.push(self.keys.token(TokenKind::Latched, host, depth, name));
                }
                wanted.push(self.keys.token(TokenKind::Offer, host, t.schema, name));
            }
            if t.has_subscriber && policy.enter.allows(name) {
                wanted.push(self.keys.token(TokenKind::Want, host, t.schema, name));
            }
        }
        for (name, s) in services.iter().filter(|(n, _)| self.cfg.filter.allows(n)) {
            if s.has_server && policy.call.allows(name) {
                wanted.push(
                    self.keys
                        .token(TokenKind::ServiceOffer, host, s.schema, name),
                );
            }
        }
        self.tokens.retain(|k, _| wanted.contains(k));
        for key in wanted {
            if self.tokens.contains_key(&key) {
                continue;
            }
            if let Ok(t) = self.session.liveliness().declare_token(key.clone()).wait() {
                self.tokens.insert(key, t);
            }
        }
    }

    /// Forgets hosts gone for longer than `limits.forget_host_after` (and the oldest gone
    /// ones beyond twice `limits.max_hosts`): their sequences, streams and refusal counters.
    fn forget_hosts(&mut self) {
        let now = Instant::now();
        for h in self.remote.host_names() {
            self.hosts_seen.insert(h, now);
        }
        let limits = &self.cfg.limits;
        let mut gone: Vec<String> = self
            .hosts_seen
            .iter()
            .filter(|(_, at)| now - **at >= limits.forget_host_after)
            .map(|(h, _)| h.clone())
            .collect();
        let keep = limits.max_hosts.saturating_mul(2);
        if self.hosts_seen.len() - gone.len() > keep {
            let mut by_age: Vec<(&String, &Instant)> = self
                .hosts_seen
                .iter()
                .filter(|(h, _)| !gone.contains(h))
                .collect();
            by_age.sort_by_key(|(_, at)| **at);
            let extra = by_age.len() - keep;
            gone.extend(by_age.into_iter().take(extra).map(|(h, _)| h.clone()));
        }
        if gone.is_empty() {
            return;
        }
        self.hosts_seen.retain(|h, _| !gone.contains(h));
        for st in self.topics.values() {
            st.origins
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .retain(|h, _| !gone.contains(h));
            st.writers
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .retain(|h, _| !gone.contains(h));
            st.senders
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .forget(&gone);
        }
        self.refusals.forget(&gone);
    }

    /// Counts the refusals whose tokens appeared since last time round.
    fn count_refusals(&mut self, now: HashSet<(Refused, String, String)>) {
        for r in now.difference(&self.refused_seen) {
            self.refusals.add(&r.1, r.0);
        }
        self.refused_seen = now;
    }

    fn update_topics(
        &mut self,
        topics: &BTreeMap<String, LocalTopic>,
        refused: &mut HashSet<(Refused, String, String)>,
    ) {
        // A topic gone from this host stops crossing; its counters stay in the status (they
        // are what reconciles with the other host's).
        self.topics.retain(|name, st| {
            if topics.contains_key(name) {
                return true;
            }
            st.out = None;
            st.inn = None;
            st.history = None;
            st.sending_to.clear();
            st.receiving_from.clear();
            st.counters.snapshot() != Default::default()
        });
        for (name, t) in topics {
            if !self.cfg.filter.allows(name) {
                self.topics.remove(name);
                continue;
            }
            let st = self.topics.entry(name.clone()).or_default();
            st.schema = format!("{} ({})", t.type_name, t.schema);
            st.issues.clear();
            let split = |hosts: Vec<HostSchema>, issues: &mut Vec<TopicIssue>| {
                let mut ok = Vec::new();
                for h in hosts {
                    if h.schema == t.schema {
                        ok.push(h.host);
                    } else {
                        issues.push(TopicIssue::SchemaMismatch {
                            topic: name.clone(),
                            host: h.host,
                            local: format!("{} ({})", t.type_name, t.schema),
                            remote: h.schema.to_string(),
                        });
                    }
                }
                ok
            };
            let now = Instant::now();
            if t.has_publisher {
                st.published_at = Some(now);
            }
            let mut wanters = split(self.remote.hosts(TokenKind::Want, name), &mut st.issues);
            let mut offerers = if t.has_subscriber {
                split(self.remote.hosts(TokenKind::Offer, name), &mut st.issues)
            } else {
                Vec::new()
            };
            st.refused.clear();
            let policy = &self.cfg.policy;
            for (allowed, hosts, what, direction) in [
                (
                    policy.leave.allows(name),
                    &mut wanters,
                    Refused::Want,
                    "leave",
                ),
                (
                    policy.enter.allows(name),
                    &mut offerers,
                    Refused::Publish,
                    "enter",
                ),
            ] {
                if allowed {
                    continue;
                }
                for h in hosts.drain(..) {
                    refused.insert((what, h.clone(), name.clone()));
                    st.refused.push(TopicRefusal {
                        host: h,
                        direction: direction.into(),
                    });
                }
            }
            st.sending_to = if t.has_publisher {
                wanters.clone()
            } else {
                Vec::new()
            };
            if !t.has_subscriber {
                // Nobody here wants the topic: what its publishers send meanwhile is not ours
                // to lose.
                st.origins.lock().unwrap_or_else(|e| e.into_inner()).clear();
                st.writers.lock().unwrap_or_else(|e| e.into_inner()).clear();
            }
            // The hosts among them that have the topic latched; a difference of durability
            // is an issue (the history still reaches the subscribers here at the time).
            let latched_tokens: Vec<HostSchema> = self
                .remote
                .hosts(TokenKind::Latched, name)
                .into_iter()
                .filter(|h| offerers.contains(&h.host))
                .collect();
            if t.durability.latched() == 0 {
                for h in &latched_tokens {
                    st.issues.push(TopicIssue::DurabilityMismatch {
                        topic: name.clone(),
                        host: h.host.clone(),
                        local: t.durability.to_string(),
                        // The token's depth (its schema's first hash).
                        remote: format!("transient-local ({})", h.schema.id),
                    });
                }
            }
            let latched: Vec<String> = latched_tokens.into_iter().map(|h| h.host).collect();
            st.history_hosts.retain(|h| latched.contains(h));
            if let Some(inn) = &st.inn {
                // A host that started offering it latched (again: a restarted bridge, a new
                // publisher) while this host receives it: its history is asked for.
                let new: Vec<String> = latched
                    .iter()
                    .filter(|h| !st.history_hosts.contains(h))
                    .cloned()
                    .collect();
                st.history_hosts.extend(new.iter().cloned());
                inn.ask_history_of(&self.session, new);
            }
            st.receiving_from = offerers;
            // A host's messages are taken while it offers the topic and for LINGER after
            // (what it still had in flight when its publisher left).
            for h in &st.receiving_from {
                st.offered_by.insert(h.clone(), now);
            }
            // A host whose bridge went (all its tokens gone: restarted, or unreachable) is
            // waited for as long as its sequences are kept: this host's publisher place on
            // the topic stays, and with it the latched history it holds for later
            // subscribers here; a host still there whose publishers left is not.
            let (remote, forget) = (&self.remote, self.cfg.limits.forget_host_after);
            st.offered_by
                .retain(|h, at| now - *at < LINGER || (!remote.knows(h) && now - *at < forget));
            st.senders.lock().unwrap_or_else(|e| e.into_inner()).allowed =
                st.offered_by.keys().cloned().collect();
            // Stalls of the outbound side, attributed to the hosts it was sending to.
            let stalls = st.counters.stalls.load(Ordering::Relaxed);
            if stalls > st.stalls_seen {
                for h in &st.sending_to {
                    for _ in st.stalls_seen..stalls {
                        self.refusals.add(h, Refused::Stall);
                    }
                }
                st.stalls_seen = stalls;
            }
            if !st.receiving_from.is_empty() {
                st.offered_at = Some(now);
            }
            let recent = |at: Option<Instant>| at.is_some_and(|at| now - at < LINGER);
            // Keep sending while someone wants it and a publisher is here or just left.
            let send = !wanters.is_empty() && recent(st.published_at);
            // Keep receiving while someone here wants it and a host offers it, just stopped, or
            // went with its bridge (see `offered_by`).
            let receive = t.has_subscriber && (recent(st.offered_at) || !st.offered_by.is_empty());
            let retry_ok = st.failed_at.is_none_or(|at| at.elapsed() >= RETRY_AFTER);
            // The history is served while a local publisher offers the topic latched.
            let serve = t.has_publisher && t.durability.latched() > 0 && policy.leave.allows(name);
            if !serve {
                st.history = None;
            } else if st.history.is_none() && retry_ok {
                let spec = HistorySpec {
                    namespace: self.cfg.namespace.clone(),
                    topic: name.clone(),
                    key: self.keys.history(&self.cfg.host, name),
                    shape_key: self.keys.topic_describe(&self.cfg.host, name),
                    schema: t.schema,
                    own_place: Arc::clone(&st.own_place),
                    streaming: Arc::clone(&st.streaming),
                    counters: Arc::clone(&st.counters),
                    max_messages: self.cfg.limits.max_history_messages,
                    max_bytes: self.cfg.limits.max_history_bytes,
                };
                match HistoryServer::start(&self.session, spec) {
                    Ok(h) => st.history = Some(h),
                    Err(reason) => {
                        st.failed_at = Some(Instant::now());
                        st.issues.push(TopicIssue::Local {
                            topic: name.clone(),
                            reason,
                        });
                    }
                }
            }
            if !send {
                st.out = None;
            } else if st.out.is_none() && retry_ok && t.has_publisher {
                let spec = OutboundSpec {
                    namespace: self.cfg.namespace.clone(),
                    topic: name.clone(),
                    data_key: self.keys.data(&self.cfg.host, name),
                    schema: t.schema,
                    overflow: t.overflow(),
                    own_place: Arc::clone(&st.own_place),
                    counters: Arc::clone(&st.counters),
                    stall: StallLimits {
                        after: self.cfg.limits.stall_after,
                        stalled_after: self.cfg.limits.stalled_reader_after,
                        cutoff: self.cfg.limits.stall_cutoff,
                    },
                    streaming: Arc::clone(&st.streaming),
                };
                match Outbound::start(&self.session, spec) {
                    Ok(o) => st.out = Some(o),
                    Err(reason) => {
                        st.failed_at = Some(Instant::now());
                        st.issues.push(TopicIssue::Local {
                            topic: name.clone(),
                            reason,
                        });
                    }
                }
            }
            if !receive {
                st.inn = None;
                st.own_place.store(NO_PLACE, Ordering::Relaxed);
            } else if st.inn.is_none() && retry_ok && !st.receiving_from.is_empty() {
                let spec = InboundSpec {
                    namespace: self.cfg.namespace.clone(),
                    topic: name.clone(),
                    keys: self.keys.clone(),
                    schema: t.schema,
                    own_place: Arc::clone(&st.own_place),
                    counters: Arc::clone(&st.counters),
                    origins: Arc::clone(&st.origins),
                    senders: Arc::clone(&st.senders),
                    max_message_bytes: self.cfg.limits.max_message_bytes,
                    max_seq_jump: self.cfg.limits.max_seq_jump,
                    max_places_per_host: self.cfg.limits.max_places_per_host,
                    writers: Arc::clone(&st.writers),
                    latched_hosts: latched.clone(),
                    max_history: (
                        self.cfg.limits.max_history_messages,
                        self.cfg.limits.max_history_bytes,
                    ),
                };
                match Inbound::start(&self.session, spec) {
                    Ok(i) => {
                        st.inn = Some(i);
                        st.history_hosts = latched;
                    }
                    Err(reason) => {
                        st.failed_at = Some(Instant::now());
                        st.issues.push(TopicIssue::Local {
                            topic: name.clone(),
                            reason,
                        });
                    }
                }
            }
        }
    }

    /// Creates other hosts' latched topics missing here (see `latched_copy`); what could not
    /// be created is reported on the topic.
    fn update_copies(&mut self, topics: &BTreeMap<String, LocalTopic>) {
        let (filter, enter) = (&self.cfg.filter, &self.cfg.policy.enter);
        let mut offers = self.remote.latched_offers();
        offers.retain(|name, _| filter.allows(name) && enter.allows(name));
        let issues = self.copies.update(Round {
            session: &self.session,
            keys: &self.keys,
            namespace: &self.cfg.namespace,
            offers,
            local: topics,
            max_bytes: self.cfg.limits.max_latched_copy_bytes,
            refusals: &self.refusals,
        });
        for issue in issues {
            if let TopicIssue::Local { topic, .. } = &issue {
                let st = self.topics.entry(topic.clone()).or_default();
                st.issues.retain(|i| i != &issue);
                st.issues.push(issue);
            }
        }
    }

    fn update_services(
        &mut self,
        local: &BTreeMap<String, LocalService>,
        refused: &mut HashSet<(Refused, String, String)>,
    ) {
        let remote = self.remote.services();
        let names: Vec<String> = local
            .keys()
            .chain(remote.keys())
            .filter(|n| self.cfg.filter.allows(n))
            .cloned()
            .collect();
        self.services.retain(|n, _| names.contains(n));
        self.describer.retain(|(name, host)| {
            remote
                .get(name)
                .is_some_and(|hs| hs.iter().any(|h| h.host == *host))
        });
        let mut stand_ins = self.services.values().filter(|s| s.inn.is_some()).count();
        for name in names {
            let served_here = local.get(&name).filter(|s| s.has_server);
            let st = self.services.entry(name.clone()).or_insert(ServiceState {
                out: None,
                refusing: None,
                inn: None,
                issues: Vec::new(),
                failed_at: None,
            });
            let retry_ok = st.failed_at.is_none_or(|at| at.elapsed() >= RETRY_AFTER);
            let callable = self.cfg.policy.call.allows(&name);
            // Offered: a local server exists (and other hosts may call it), or refused: its
            // call key answers with a refusal, counted per caller.
            match served_here {
                None => {
                    st.out = None;
                    st.refusing = None;
                }
                Some(_) if !callable => {
                    st.out = None;
                    if st.refusing.is_none() {
                        match RefusedService::start(
                            &self.session,
                            self.keys.call(&self.cfg.host, &name),
                            self.remote.clone(),
                            self.refusals.clone(),
                        ) {
                            Ok(r) => st.refusing = Some(r),
                            Err(e) => st.issues = vec![e],
                        }
                    }
                }
                Some(s) if st.out.is_none() && retry_ok => {
                    st.refusing = None;
                    match ServiceOut::start(
                        &self.session,
                        &self.cfg.namespace,
                        &name,
                        self.keys.call(&self.cfg.host, &name),
                        self.keys.describe(&self.cfg.host, &name),
                        s.schema,
                        CallLimits {
                            concurrent: self.cfg.concurrent_calls,
                            timeout: self.cfg.call_timeout,
                        },
                    ) {
                        Ok(o) => {
                            st.out = Some(o);
                            st.issues.clear();
                        }
                        Err(e) => {
                            st.failed_at = Some(Instant::now());
                            st.issues = vec![e];
                        }
                    }
                }
                Some(_) => {}
            }
            // Stood in for: another host serves it and no local server does.
            let hosts = remote.get(&name).cloned().unwrap_or_default();
            let local_schema = local.get(&name).map(|s| s.schema);
            let usable: Vec<&HostSchema> = hosts
                .iter()
                .filter(|h| local_schema.is_none_or(|s| s == h.schema))
                .collect();
            if served_here.is_some() || usable.is_empty() {
                if st.inn.take().is_some() {
                    stand_ins -= 1;
                }
                if served_here.is_none() && !hosts.is_empty() {
                    st.issues = vec![format!(
                        "served by {} with other types ({}) than this host's ({})",
                        hosts[0].host,
                        hosts[0].schema,
                        local_schema.map_or_else(String::new, |s| s.to_string())
                    )];
                }
                continue;
            }
            if !self.cfg.policy.stand_in.allows(&name) {
                for h in &usable {
                    refused.insert((Refused::StandIn, h.host.clone(), name.clone()));
                }
                st.issues = vec![format!(
                    "served by {}: not stood in for (policy.stand_in)",
                    usable[0].host
                )];
                continue;
            }
            // The host already stood in for keeps the service while it offers it: another
            // host offering it later (whatever its name) does not take it over.
            if st
                .inn
                .as_ref()
                .is_some_and(|(h, _)| usable.iter().any(|u| u.host == *h))
                || !retry_ok
            {
                continue;
            }
            if st.inn.take().is_some() {
                stand_ins -= 1;
            }
            let host = usable[0].host.clone();
            let schema: SchemaKey = usable[0].schema;
            if stand_ins >= self.cfg.limits.max_stand_ins {
                refused.insert((Refused::OverLimit, host.clone(), name.clone()));
                st.issues = vec![format!(
                    "served by {host}: not stood in for, {} services are already \
                     (limits.max_stand_ins)",
                    self.cfg.limits.max_stand_ins
                )];
                continue;
            }
            // The description is asked for off this loop; until it arrives, nothing here
            // waits for the other host.
            let id = (name.clone(), host.clone());
            let Some(described) =
                self.describer
                    .poll(&self.session, &id, &self.keys.describe(&host, &name))
            else {
                continue;
            };
            let started = described.and_then(|d| {
                ServiceIn::start(
                    &self.session,
                    &self.cfg.namespace,
                    &name,
                    &d,
                    ForwardTo {
                        call_key: self.keys.call(&host, &name),
                        schema,
                        call_timeout: self.cfg.call_timeout,
                        me: self.cfg.host.clone(),
                    },
                )
            });
            match started {
                Ok(s) => {
                    st.inn = Some((host, s));
                    st.issues.clear();
                    stand_ins += 1;
                }
                Err(e) => {
                    st.failed_at = Some(Instant::now());
                    st.issues = vec![e];
                }
            }
        }
    }

    fn publish_status(&mut self) {
        let topics = self
            .topics
            .iter()
            .filter(|(name, t)| {
                t.out.is_some()
                    || t.inn.is_some()
                    || self.copies.created_from(name).is_some()
                    || !t.issues.is_empty()
                    || !t.refused.is_empty()
                    || t.counters.snapshot() != Default::default()
            })
            .map(|(name, t)| TopicStatus {
                name: name.clone(),
                schema: t.schema.clone(),
                sending_to: t.sending_to.clone(),
                receiving_from: t.receiving_from.clone(),
                counters: t.counters.snapshot(),
                issues: t.issues.clone(),
                refused: t.refused.clone(),
                latched_copy_of: self.copies.created_from(name).map(str::to_owned),
                cut_off_ms: t.out.as_ref().map_or(0, |o| {
                    let until = *o.cut_off.lock().unwrap_or_else(|e| e.into_inner());
                    until.map_or(0, |u| {
                        u64::try_from(u.saturating_duration_since(Instant::now()).as_millis())
                            .unwrap_or(u64::MAX)
                    })
                }),
            })
            .collect();
        let services = self
            .services
            .iter()
            .filter(|(_, s)| {
                s.out.is_some() || s.refusing.is_some() || s.inn.is_some() || !s.issues.is_empty()
            })
            .map(|(name, s)| {
                let snap = |c: &crate::service_out::CallCounters| {
                    let l = |a: &std::sync::atomic::AtomicU64| a.load(Ordering::Relaxed);
                    (l(&c.ok), l(&c.failed))
                };
                let (served, serve_failed) = s.out.as_ref().map_or((0, 0), |o| snap(&o.counters));
                let (forwarded, forward_failed) =
                    s.inn.as_ref().map_or((0, 0), |(_, i)| snap(&i.counters));
                ServiceStatus {
                    name: name.clone(),
                    served_by: match (&s.out, &s.inn) {
                        (Some(_), _) => "local".into(),
                        (None, _) if s.refusing.is_some() => "local".into(),
                        (None, Some((h, _))) => h.clone(),
                        (None, None) => String::new(),
                    },
                    not_callable: s.refusing.is_some(),
                    counters: ServiceCounters {
                        served: served + serve_failed,
                        serve_failed,
                        forwarded: forwarded + forward_failed,
                        forward_failed,
                    },
                    issues: s.issues.clone(),
                }
            })
            .collect();
        let snapshot = {
            let mut st = self.status.lock().unwrap_or_else(|e| e.into_inner());
            st.peers = self.remote.peers();
            st.topics = topics;
            st.services = services;
            st.refusals = self.refusals.snapshot();
            st.hosts_refused = self.remote.hosts_refused();
            st.malformed_tokens = self.remote.malformed_tokens();
            st.clone()
        };
        if self.cfg.status_file {
            let _ = write_status_file(&snapshot);
        }
    }
}
