//! The bridge: a listener thread accepting clients, one thread per client (client.rs), and
//! the pump, which owns the channels (discovery.rs), observes the subscribed topics, encodes
//! each message once (schemas.rs) and hands the shared payload to every subscribed client's
//! queue (send.rs).
//!
//! The pump reads as an observer that polls (it never registers a wake-up and publishers never
//! count it), so attaching the bridge or a slow client changes nothing the robot observes.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::net::{SocketAddr, TcpListener};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use horus::inspect::RawObserver;
use horus_record::foxlog::{self, LogTap};

use crate::client::{self, ClientShared};
use crate::discovery::Discovery;
use crate::protocol;
use crate::schemas::ChannelSchema;
use crate::send::Outgoing;

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
    /// A client's handshake failed.
    Refused {
        /// Its address.
        client: SocketAddr,
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
}

/// The bridge's counters.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct BridgeStats {
    /// Every connected client.
    pub clients: Vec<ClientStats>,
    /// Per topic: messages the bridge's observer missed (overwritten before it read them).
    pub missed: BTreeMap<String, u64>,
}

struct Shared {
    stop: AtomicBool,
    /// Clients accepted but not yet greeted by the pump.
    pending: Mutex<Vec<Arc<ClientShared>>>,
    clients: Mutex<Vec<Arc<ClientShared>>>,
    /// Channel id → topic (for statistics).
    topics: Mutex<BTreeMap<u32, String>>,
    missed: Mutex<BTreeMap<String, u64>>,
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

fn now_ns() -> u64 {
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
        let shared = Arc::new(Shared {
            stop: AtomicBool::new(false),
            pending: Mutex::new(Vec::new()),
            clients: Mutex::new(Vec::new()),
            topics: Mutex::new(BTreeMap::new()),
            missed: Mutex::new(BTreeMap::new()),
        });
        let (tx, rx) = mpsc::channel();
        let mut threads = Vec::new();
        let (s, t) = (shared.clone(), tx.clone());
        threads.push(
            std::thread::Builder::new()
                .name("foxglove-accept".into())
                .spawn(move || accept_loop(listener, s, t))
                .map_err(StartError::Thread)?,
        );
        let s = shared.clone();
        threads.push(
            std::thread::Builder::new()
                .name("foxglove-pump".into())
                .spawn(move || pump(opts, s, tx))
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
                }
            })
            .collect();
        BridgeStats {
            clients,
            missed: lock(&self.shared.missed).clone(),
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

fn accept_loop(listener: TcpListener, shared: Arc<Shared>, events: Sender<Event>) {
    let mut clients: Vec<JoinHandle<()>> = Vec::new();
    while !shared.stop.load(Ordering::Relaxed) {
        match listener.accept() {
            Ok((stream, addr)) => {
                let (s, ev) = (shared.clone(), events.clone());
                let spawned = std::thread::Builder::new()
                    .name(format!("foxglove-{addr}"))
                    .spawn(move || serve_client(stream, addr, s, ev));
                if let Ok(h) = spawned {
                    clients.push(h);
                }
                clients.retain(|h| !h.is_finished());
            }
            Err(_) => std::thread::sleep(Duration::from_millis(20)),
        }
    }
    for h in clients {
        let _ = h.join();
    }
}

fn serve_client(
    stream: std::net::TcpStream,
    addr: SocketAddr,
    shared: Arc<Shared>,
    events: Sender<Event>,
) {
    let _ = stream.set_nonblocking(false);
    let ws = match client::handshake(stream) {
        Ok(ws) => ws,
        Err(why) => {
            let _ = events.send(Event::Refused { client: addr, why });
            return;
        }
    };
    let (me, wake) = match client::new_client(addr) {
        Ok(x) => x,
        Err(e) => {
            let _ = events.send(Event::Refused {
                client: addr,
                why: e.to_string(),
            });
            return;
        }
    };
    lock(&shared.pending).push(me.clone());
    let _ = events.send(Event::Connected { client: addr });
    let r = client::run(ws, me.clone(), wake, &shared.stop);
    me.queue.close();
    let _ = events.send(Event::Disconnected {
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
fn pump(opts: BridgeOptions, shared: Arc<Shared>, events: Sender<Event>) {
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
        let _ = events.send(Event::Advertised {
            id: LOG_CHANNEL,
            topic: foxlog::TOPIC.to_owned(),
            schema: foxlog::SCHEMA_NAME.to_owned(),
            encoding: foxlog::MESSAGE_ENCODING.to_owned(),
        });
    }
    let mut observers: HashMap<u32, RawObserver> = HashMap::new();
    let mut next_discover = Instant::now();
    let mut scratch = Vec::new();
    while !shared.stop.load(Ordering::Relaxed) {
        if Instant::now() >= next_discover {
            next_discover = Instant::now() + DISCOVER_EVERY;
            discover(&mut disc, &shared, &events, &mut observers);
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
        // Observe exactly the channels someone subscribes to.
        let wanted: BTreeSet<u32> = clients.iter().flat_map(|c| c.channels()).collect();
        observers.retain(|id, _| wanted.contains(id));
        for id in &wanted {
            if observers.contains_key(id) {
                continue;
            }
            if let Some(ch) = disc.get(*id) {
                match ch.view.observer(false) {
                    Ok(o) => {
                        observers.insert(*id, o);
                    }
                    Err(e) => {
                        let _ = events.send(Event::Skipped {
                            topic: ch.topic.clone(),
                            why: e.to_string(),
                        });
                    }
                }
            }
        }
        let mut any = false;
        if let Some(l) = logs.as_mut() {
            any |= l.pass(wanted.contains(&LOG_CHANNEL), &clients, &shared) > 0;
        }
        for (id, obs) in observers.iter_mut() {
            let Some(ch) = disc.get(*id) else { continue };
            for _ in 0..BATCH {
                let Some(m) = obs.try_recv() else { break };
                any = true;
                let recv = now_ns();
                if ch.mapping.encode(&m.bytes, recv, &mut scratch).is_err() {
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
            if missed + malformed > 0 {
                lock(&shared.missed).insert(ch.topic.clone(), missed + malformed);
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

fn discover(
    disc: &mut Discovery,
    shared: &Shared,
    events: &Sender<Event>,
    observers: &mut HashMap<u32, RawObserver>,
) {
    let Ok(change) = disc.poll() else { return };
    for (topic, why) in change.skipped {
        let _ = events.send(Event::Skipped { topic, why });
    }
    if change.added.is_empty() && change.removed.is_empty() {
        return;
    }
    let clients: Vec<_> = lock(&shared.clients).clone();
    let mut topics = lock(&shared.topics);
    if !change.removed.is_empty() {
        for id in &change.removed {
            observers.remove(id);
            for c in &clients {
                c.remove_channel(*id);
            }
            let _ = events.send(Event::Unadvertised {
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
            let _ = events.send(Event::Advertised {
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
}
