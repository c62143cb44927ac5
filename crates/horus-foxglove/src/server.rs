//! The bridge: a listener thread accepting clients, one thread per client (client.rs), and
//! the pump, which owns the channels (discovery.rs), observes the subscribed topics, encodes
//! each message once (schemas.rs) and hands the shared payload to every subscribed client's
//! queue (send.rs).
//!
//! The pump reads as an observer that polls (it never registers a wake-up and publishers never
//! count it), so attaching the bridge or a slow client changes nothing the robot observes.
//!
//! What clients can make it hold is bounded (limits.rs): connections (threads), each
//! client's queue (send.rs), subscriptions, the size of a client's message, and the event
//! stream (a client that is refused again and again is counted, not logged each time).

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::io::Write as _;
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::mpsc::{self, Receiver, SyncSender, TrySendError};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use horus::inspect::RawObserver;
use horus_record::foxlog::{self, LogTap};

use crate::access::{AccessPolicy, Refusal};
use crate::catch_up;
use crate::client::{self, ClientShared};
use crate::discovery::Discovery;
use crate::limits::{Limits, HANDSHAKE_SLOTS};
use crate::protocol;
use crate::schemas::ChannelSchema;
use crate::send::Outgoing;
use crate::subs::SubTable;

/// How often the namespace is listed for new and removed topics.
const DISCOVER_EVERY: Duration = Duration::from_millis(200);
/// Sleep of the pump when no subscribed topic had a message.
const IDLE: Duration = Duration::from_micros(500);
/// Sleep of the pump when no client subscribes to anything (greeting a new client waits
/// at most this long).
const UNSUBSCRIBED: Duration = Duration::from_millis(20);
/// Most messages taken from one topic before the next topic gets its turn.
const BATCH: usize = 64;
/// Channel id of `/log` (topic channels count up from 1).
pub const LOG_CHANNEL: u32 = u32::MAX;
/// Most events waiting in [`Bridge::events`]' stream; past it events are counted as
/// dropped ([`BridgeStats::events_dropped`]) instead of held.
pub const EVENT_QUEUE: usize = 4096;

/// What the bridge serves: the namespace's topics and, on the `/log` channel
/// (`foxglove.Log`, JSON), the log records of its processes (unless `topics` leaves `/log`
/// out).
#[derive(Clone, Debug)]
pub struct BridgeOptions {
    /// Address to listen on (port 0: any free port, see [`Bridge::local_addr`]).
    pub address: SocketAddr,
    /// The namespace whose topics are served.
    pub namespace: String,
    /// Serve only these topics (`None`: every topic, new ones as they appear).
    pub topics: Option<BTreeSet<String>>,
    /// Who may connect (origins, token; see [`crate::access`]).
    pub access: AccessPolicy,
    /// Caps on connections, subscriptions and client messages.
    pub limits: Limits,
}

impl BridgeOptions {
    /// Every topic of `namespace` on `address`, with the default access policy and limits.
    pub fn new(address: SocketAddr, namespace: &str) -> BridgeOptions {
        BridgeOptions {
            address,
            namespace: namespace.to_owned(),
            topics: None,
            access: AccessPolicy::default(),
            limits: Limits::default(),
        }
    }
}

/// Why the bridge could not start.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    /// The address could not be bound.
    #[error("cannot listen on {address}: {source}")]
    Bind {
        /// The address.
        address: SocketAddr,
        /// Why.
        source: std::io::Error,
    },
    /// A thread could not be started.
    #[error("cannot start a thread: {0}")]
    Thread(std::io::Error),
}

/// Something that happened, for the bridge's log.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Event {
    /// A topic is advertised.
    Advertised {
        /// Channel id.
        id: u32,
        /// Topic.
        topic: String,
        /// Schema name.
        schema: String,
        /// Message encoding.
        encoding: String,
    },
    /// A topic's segment is gone.
    Unadvertised {
        /// Channel id.
        id: u32,
        /// Topic.
        topic: String,
    },
    /// A topic could not be served.
    Skipped {
        /// Topic.
        topic: String,
        /// Why.
        why: String,
    },
    /// A client connected.
    Connected {
        /// Its address.
        client: SocketAddr,
    },
    /// A client left (or failed: `error`).
    Disconnected {
        /// Its address.
        client: SocketAddr,
        /// The error that ended it, if any.
        error: Option<String>,
    },
    /// A client was refused: its connection (before or right after the upgrade), or one of
    /// its messages or subscriptions (reported once per client and kind; every one is counted
    /// in [`BridgeStats::refused`]).
    Refused {
        /// Its address.
        client: SocketAddr,
        /// The key in [`BridgeStats::refused`].
        kind: &'static str,
        /// Why.
        why: String,
    },
}

/// One client's counters.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClientStats {
    /// Its address.
    pub client: SocketAddr,
    /// Messages handed to its socket.
    pub sent: u64,
    /// Messages dropped for it because it fell behind, per topic.
    pub dropped: BTreeMap<String, u64>,
    /// Channels it subscribes to.
    pub subscriptions: usize,
}

/// The bridge's counters.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct BridgeStats {
    /// Every connected client.
    pub clients: Vec<ClientStats>,
    /// Per topic: messages the bridge's observer missed (overwritten before it read them),
    /// malformed ones, and ones the topic's mapping could not encode (e.g. a ROS-typed
    /// message without a CDR header).
    pub missed: BTreeMap<String, u64>,
    /// Refusals so far, by kind: connections (`origin`, `host`, `token_missing`,
    /// `token_wrong`, `subprotocol`, `handshake`, `too_many_clients`,
    /// `too_many_connections`, `oversized_message`) and requests of connected clients
    /// (`subscription_cap`, `unknown_channel`, `bad_message`: one per subscription or
    /// message refused).
    pub refused: BTreeMap<String, u64>,
    /// Subscriptions of all clients together.
    pub subscriptions: usize,
    /// Events not queued because nobody read [`Bridge::events`] ([`EVENT_QUEUE`]).
    pub events_dropped: u64,
}

pub(crate) struct Shared {
    pub(crate) stop: AtomicBool,
    pub(crate) limits: Limits,
    access: AccessPolicy,
    /// Whether the bridge listens on a loopback address (the `Host` check).
    bound_loopback: bool,
    /// Clients accepted but not yet greeted by the pump.
    pending: Mutex<Vec<Arc<ClientShared>>>,
    clients: Mutex<Vec<Arc<ClientShared>>>,
    /// Clients past their handshake (each holds a slot until its thread ends).
    sessions: AtomicUsize,
    /// Every client's subscriptions.
    subs: Arc<SubTable>,
    /// Channel id → topic (for statistics; every channel ever advertised).
    topics: Mutex<BTreeMap<u32, String>>,
    missed: Mutex<BTreeMap<String, u64>>,
    refused: Mutex<BTreeMap<&'static str, u64>>,
    events: SyncSender<Event>,
    events_dropped: AtomicU64,
}

impl Shared {
    /// Counts `n` refusals of `kind`.
    pub(crate) fn count_refusal(&self, kind: &'static str, n: u64) {
        *lock(&self.refused).entry(kind).or_default() += n;
    }

    /// Queues an event, or counts it as dropped if nobody reads them.
    pub(crate) fn emit(&self, e: Event) {
        if let Err(TrySendError::Full(_)) = self.events.try_send(e) {
            // Relaxed: a statistic.
            self.events_dropped.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// Whether `channel` was ever advertised.
    pub(crate) fn is_channel(&self, channel: u32) -> bool {
        lock(&self.topics).contains_key(&channel)
    }

    fn refuse(&self, client: SocketAddr, r: &Refusal) {
        self.count_refusal(r.kind(), 1);
        self.emit(Event::Refused {
            client,
            kind: r.kind(),
            why: r.to_string(),
        });
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// A running bridge; stopped on [`Bridge::stop`] or drop.
pub struct Bridge {
    addr: SocketAddr,
    shared: Arc<Shared>,
    events: Option<Receiver<Event>>,
    threads: Vec<JoinHandle<()>>,
}

pub(crate) fn now_ns() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(0)
}

impl Bridge {
    /// Binds the address and starts serving.
    pub fn start(opts: BridgeOptions) -> Result<Bridge, StartError> {
        let listener = TcpListener::bind(opts.address).map_err(|source| StartError::Bind {
            address: opts.address,
            source,
        })?;
        let addr = listener.local_addr().map_err(|source| StartError::Bind {
            address: opts.address,
            source,
        })?;
        listener.set_nonblocking(true).map_err(StartError::Thread)?;
        let (tx, rx) = mpsc::sync_channel(EVENT_QUEUE);
        let shared = Arc::new(Shared {
            stop: AtomicBool::new(false),
            limits: opts.limits,
            access: opts.access.clone(),
            bound_loopback: addr.ip().is_loopback(),
            pending: Mutex::new(Vec::new()),
            clients: Mutex::new(Vec::new()),
            sessions: AtomicUsize::new(0),
            subs: Arc::new(SubTable::default()),
            topics: Mutex::new(BTreeMap::new()),
            missed: Mutex::new(BTreeMap::new()),
            refused: Mutex::new(BTreeMap::new()),
            events: tx,
            events_dropped: AtomicU64::new(0),
        });
        let mut threads = Vec::new();
        let s = shared.clone();
        threads.push(
            std::thread::Builder::new()
                .name("foxglove-accept".into())
                .spawn(move || accept_loop(listener, s))
                .map_err(StartError::Thread)?,
        );
        let s = shared.clone();
        threads.push(
            std::thread::Builder::new()
                .name("foxglove-pump".into())
                .spawn(move || pump(opts, s))
                .map_err(StartError::Thread)?,
        );
        Ok(Bridge {
            addr,
            shared,
            events: Some(rx),
            threads,
        })
    }

    /// The address it listens on.
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// The event stream (once; later calls return `None`).
    pub fn events(&mut self) -> Option<Receiver<Event>> {
        self.events.take()
    }

    /// Counters now.
    pub fn stats(&self) -> BridgeStats {
        let topics = lock(&self.shared.topics).clone();
        let name = |id: u32| topics.get(&id).cloned().unwrap_or_else(|| format!("#{id}"));
        let clients = lock(&self.shared.clients)
            .iter()
            .map(|c| {
                let (sent, dropped) = c.queue.counts();
                ClientStats {
                    client: c.addr,
                    sent,
                    dropped: dropped.into_iter().map(|(k, v)| (name(k), v)).collect(),
                    subscriptions: c.subscriptions(),
                }
            })
            .collect();
        BridgeStats {
            clients,
            missed: lock(&self.shared.missed).clone(),
            refused: lock(&self.shared.refused)
                .iter()
                .map(|(k, v)| ((*k).to_owned(), *v))
                .collect(),
            subscriptions: self.shared.subs.total(),
            // Relaxed: a statistic.
            events_dropped: self.shared.events_dropped.load(Ordering::Relaxed),
        }
    }

    /// Stops every thread and closes every client.
    pub fn stop(mut self) {
        self.shutdown();
    }

    fn shutdown(&mut self) {
        // Relaxed: threads poll the flag; joining below is the synchronisation.
        self.shared.stop.store(true, Ordering::Relaxed);
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
    }
}

impl Drop for Bridge {
    fn drop(&mut self) {
        self.shutdown();
    }
}

/// Most threads serving connections: the clients and the handshakes in progress.
fn max_connections(limits: &Limits) -> usize {
    limits.max_clients + HANDSHAKE_SLOTS
}

fn accept_loop(listener: TcpListener, shared: Arc<Shared>) {
    let mut clients: Vec<JoinHandle<()>> = Vec::new();
    let cap = max_connections(&shared.limits);
    while !shared.stop.load(Ordering::Relaxed) {
        match listener.accept() {
            Ok((stream, addr)) => {
                clients.retain(|h| !h.is_finished());
                if clients.len() >= cap {
                    // No thread for it: answer at once (a few bytes into an empty socket
                    // buffer never block) and close.
                    let r = Refusal::TooManyConnections { cap };
                    refuse_at_once(stream, &r);
                    shared.refuse(addr, &r);
                    continue;
                }
                let s = shared.clone();
                let spawned = std::thread::Builder::new()
                    .name(format!("foxglove-{addr}"))
                    .spawn(move || serve_client(stream, addr, s));
                if let Ok(h) = spawned {
                    clients.push(h);
                }
            }
            Err(_) => std::thread::sleep(Duration::from_millis(20)),
        }
    }
    for h in clients {
        let _ = h.join();
    }
}

/// An HTTP error with the reason, written without waiting.
fn refuse_at_once(stream: TcpStream, r: &Refusal) {
    let body = format!("horus foxglove: {r}\n");
    let head = format!(
        "HTTP/1.1 {} Refused\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        r.http_status(),
        body.len()
    );
    let _ = stream.set_nonblocking(true);
    let _ = (&stream).write_all(format!("{head}{body}").as_bytes());
    let _ = stream.shutdown(std::net::Shutdown::Write);
}

/// A connected client's slot: released when its thread ends.
struct SessionSlot<'a>(&'a AtomicUsize);

impl Drop for SessionSlot<'_> {
    fn drop(&mut self) {
        // Relaxed: a counter bounded by `fetch_update` below; no data is published with it.
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
}

fn serve_client(stream: TcpStream, addr: SocketAddr, shared: Arc<Shared>) {
    let _ = stream.set_nonblocking(false);
    if let Err(r) = client::handshake(&stream, &shared.access, shared.bound_loopback) {
        shared.refuse(addr, &r);
        return;
    }
    let ws = client::websocket(stream, &shared.limits);
    let cap = shared.limits.max_clients;
    // Relaxed: the counter alone decides; nothing else is published through it.
    let reserved = shared
        .sessions
        .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| {
            (n < cap).then_some(n + 1)
        });
    if reserved.is_err() {
        let r = Refusal::TooManyClients { cap };
        shared.refuse(addr, &r);
        client::refuse_after_upgrade(
            ws,
            tungstenite::protocol::frame::coding::CloseCode::Again,
            &r.to_string(),
        );
        return;
    }
    let _slot = SessionSlot(&shared.sessions);
    let (me, wake) = match client::new_client(addr, shared.subs.clone()) {
        Ok(x) => x,
        Err(e) => {
            let r = Refusal::Handshake(e.to_string());
            shared.refuse(addr, &r);
            return;
        }
    };
    lock(&shared.pending).push(me.clone());
    shared.emit(Event::Connected { client: addr });
    let r = client::run(ws, me.clone(), wake, &shared);
    me.queue.close();
    me.clear();
    shared.emit(Event::Disconnected {
        client: addr,
        error: r.err(),
    });
}

/// The `/log` channel as advertised.
fn log_advertisement() -> serde_json::Value {
    protocol::channel_json(
        LOG_CHANNEL,
        foxlog::TOPIC,
        &ChannelSchema {
            encoding: foxlog::MESSAGE_ENCODING,
            name: foxlog::SCHEMA_NAME.into(),
            schema_encoding: foxlog::SCHEMA_ENCODING,
            text: foxlog::SCHEMA.into(),
        },
    )
}

/// The log rings while someone subscribes to `/log`.
struct LogFeed {
    tap: LogTap,
    /// Whether someone subscribed at the last pass (a new subscription starts at the
    /// records written from then on).
    streaming: bool,
    missed: u64,
}

impl LogFeed {
    /// Reads new records and hands them to the subscribed clients; returns how many.
    fn pass(&mut self, wanted: bool, clients: &[Arc<ClientShared>], shared: &Shared) -> usize {
        if !wanted {
            self.streaming = false;
            return 0;
        }
        if !self.streaming {
            self.streaming = true;
            self.tap.from_now();
        }
        let batch = self.tap.poll();
        for r in &batch.records {
            let payload = Arc::new(foxlog::to_json(r));
            for c in clients {
                if let Some(sub) = c.subscription(LOG_CHANNEL) {
                    c.queue.push_data(Outgoing {
                        channel: LOG_CHANNEL,
                        subscription: sub,
                        log_time_ns: r.unix_ns,
                        payload: payload.clone(),
                    });
                }
            }
        }
        if batch.missed > 0 {
            self.missed += batch.missed;
            lock(&shared.missed).insert(foxlog::TOPIC.to_owned(), self.missed);
        }
        batch.records.len()
    }
}

/// The pump: discovery, observers of subscribed channels, encoding, fan-out.
fn pump(opts: BridgeOptions, shared: Arc<Shared>) {
    let mut disc = Discovery::new(&opts.namespace, opts.topics.clone());
    let mut logs = opts
        .topics
        .as_ref()
        .is_none_or(|t| t.contains(foxlog::TOPIC))
        .then(|| LogFeed {
            tap: LogTap::start(&opts.namespace),
            streaming: false,
            missed: 0,
        });
    if logs.is_some() {
        lock(&shared.topics).insert(LOG_CHANNEL, foxlog::TOPIC.to_owned());
        shared.emit(Event::Advertised {
            id: LOG_CHANNEL,
            topic: foxlog::TOPIC.to_owned(),
            schema: foxlog::SCHEMA_NAME.to_owned(),
            encoding: foxlog::MESSAGE_ENCODING.to_owned(),
        });
    }
    let mut observers: HashMap<u32, Observed> = HashMap::new();
    // Per channel: messages its mapping could not encode (counted with the missed ones).
    let mut unencodable: HashMap<u32, u64> = HashMap::new();
    // The subscribed channels, updated only when they change (subs.rs).
    let mut wanted: BTreeSet<u32> = BTreeSet::new();
    let mut wanted_seen = 0u64;
    let mut next_discover = Instant::now();
    let mut scratch = Vec::new();
    while !shared.stop.load(Ordering::Relaxed) {
        let mut retry = false;
        if Instant::now() >= next_discover {
            next_discover = Instant::now() + DISCOVER_EVERY;
            retry = discover(&mut disc, &shared, &mut observers);
        }
        // Greet new clients: serverInfo and every channel, in order with later changes.
        let fresh: Vec<_> = lock(&shared.pending).drain(..).collect();
        if !fresh.is_empty() {
            let mut ads: Vec<_> = disc.channels().map(|c| c.advertisement()).collect();
            if logs.is_some() {
                ads.push(log_advertisement());
            }
            for c in &fresh {
                c.queue.push_text(protocol::server_info(&opts.namespace));
                if !ads.is_empty() {
                    c.queue.push_text(protocol::advertise(ads.clone()));
                }
            }
            lock(&shared.clients).extend(fresh);
        }
        let clients: Vec<Arc<ClientShared>> = {
            let mut cs = lock(&shared.clients);
            cs.retain(|c| !c.queue.is_closed());
            cs.clone()
        };
        // Observe exactly the channels someone subscribes to (looked at when they change,
        // and after discovery, which may have removed an observer).
        if let Some(w) = shared.subs.changed(&mut wanted_seen) {
            wanted = w;
            retry = true;
        }
        if retry {
            observers.retain(|id, _| wanted.contains(id));
            for id in &wanted {
                if observers.contains_key(id) {
                    continue;
                }
                if let Some(ch) = disc.get(*id) {
                    // From the latched history of a transient-local topic: the first
                    // subscribers get it through this observer, later ones in `go_live`.
                    match ch.view.observer(false) {
                        Ok(obs) => {
                            observers.insert(
                                *id,
                                Observed {
                                    obs,
                                    last: HashMap::new(),
                                },
                            );
                        }
                        Err(e) => {
                            shared.emit(Event::Skipped {
                                topic: ch.topic.clone(),
                                why: e.to_string(),
                            });
                        }
                    }
                }
            }
        }
        // New subscriptions go live here, between deliveries: a latched channel's history
        // first (catch_up.rs).
        for c in &clients {
            c.go_live(|id, sub| {
                let (Some(ch), Some(o)) = (disc.get(id), observers.get(&id)) else {
                    return;
                };
                match catch_up::send_history(ch, &o.last, c, sub, &mut scratch) {
                    Ok(0) => {}
                    Ok(lost) => *unencodable.entry(id).or_default() += lost,
                    Err(e) => shared.emit(Event::Skipped {
                        topic: ch.topic.clone(),
                        why: format!("latched history for a new client: {e}"),
                    }),
                }
            });
        }
        let mut any = false;
        if let Some(l) = logs.as_mut() {
            any |= l.pass(wanted.contains(&LOG_CHANNEL), &clients, &shared) > 0;
        }
        for (id, observed) in observers.iter_mut() {
            let Some(ch) = disc.get(*id) else { continue };
            let Observed { obs, last } = observed;
            for _ in 0..BATCH {
                // In place (a chunk is pinned only while it is encoded): the encoding is the
                // one copy, for a ROS-typed topic's wire bytes too.
                let Some(m) = obs.try_recv_sample() else {
                    break;
                };
                any = true;
                last.insert(m.source(), m.seq());
                let recv = now_ns();
                let encoded = ch.mapping.encode(m.bytes(), recv, &mut scratch);
                drop(m);
                if encoded.is_err() {
                    *unencodable.entry(*id).or_default() += 1;
                    continue;
                }
                // One payload for every client (the encoder's buffer moves into it).
                let payload = Arc::new(std::mem::take(&mut scratch));
                for c in &clients {
                    if let Some(sub) = c.subscription(*id) {
                        c.queue.push_data(Outgoing {
                            channel: *id,
                            subscription: sub,
                            log_time_ns: recv,
                            payload: payload.clone(),
                        });
                    }
                }
            }
            let (_, missed, malformed) = obs.counts();
            let lost = missed + malformed + unencodable.get(id).copied().unwrap_or(0);
            if lost > 0 {
                lock(&shared.missed).insert(ch.topic.clone(), lost);
            }
        }
        if !any {
            let log_streaming = logs.as_ref().is_some_and(|l| l.streaming);
            std::thread::sleep(if observers.is_empty() && !log_streaming {
                UNSUBSCRIBED
            } else {
                IDLE
            });
        }
    }
}

/// The observer of a subscribed channel, and per ring (publisher place) the number of the
/// last message it delivered: a later subscriber's latched history is what came up to there.
struct Observed {
    obs: RawObserver,
    last: HashMap<usize, u64>,
}

/// Looks at the namespace; returns whether channels were added or removed.
fn discover(disc: &mut Discovery, shared: &Shared, observers: &mut HashMap<u32, Observed>) -> bool {
    let Ok(change) = disc.poll() else {
        return false;
    };
    for (topic, why) in change.skipped {
        shared.emit(Event::Skipped { topic, why });
    }
    if change.added.is_empty() && change.removed.is_empty() {
        return false;
    }
    let clients: Vec<_> = lock(&shared.clients).clone();
    let mut topics = lock(&shared.topics);
    if !change.removed.is_empty() {
        for id in &change.removed {
            observers.remove(id);
            for c in &clients {
                c.remove_channel(*id);
            }
            shared.emit(Event::Unadvertised {
                id: *id,
                topic: topics.get(id).cloned().unwrap_or_default(),
            });
        }
        let text = protocol::unadvertise(&change.removed);
        for c in &clients {
            c.queue.push_text(text.clone());
        }
    }
    let mut ads = Vec::new();
    for id in &change.added {
        if let Some(ch) = disc.get(*id) {
            topics.insert(*id, ch.topic.clone());
            ads.push(ch.advertisement());
            shared.emit(Event::Advertised {
                id: *id,
                topic: ch.topic.clone(),
                schema: ch.schema.name.clone(),
                encoding: ch.schema.encoding.into(),
            });
        }
    }
    if !ads.is_empty() {
        let text = protocol::advertise(ads);
        for c in &clients {
            c.queue.push_text(text.clone());
        }
    }
    true
}
