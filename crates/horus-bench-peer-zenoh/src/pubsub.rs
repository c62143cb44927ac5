//! Zenoh publish/subscribe between two processes, measured like every other system.
//!
//! Round trip ([`round_trip`]): key expressions `horus-bench/<id>/ping` (A → B) and
//! `.../pong` (B → A). A writes message `seq` ([`payload::write`]) and `put`s it;
//! B receives it, copies it into a new reply (touch mode: first and last 8 bytes)
//! and `put`s that; A receives the reply and reads it ([`payload::check`]).
//!
//! Sessions ([`loopback_config`]): peer mode; A listens on `tcp/127.0.0.1:<port>`,
//! B connects to exactly that endpoint and listens nowhere; multicast and gossip
//! scouting are off, so nothing is discovered and nothing but 127.0.0.1 is ever
//! contacted. Publishers use `CongestionControl::Block` (nothing is dropped) and
//! `express(true)` (no batching, the latency setting). As in Zenoh's own
//! `z_ping`/`z_pong`, A waits in a blocking `recv` on the default FIFO channel
//! (each process's Zenoh runtime threads must run for a message to arrive, so
//! busy-polling on a pinned core would starve them) and B answers from the
//! subscriber callback, on Zenoh's receiving thread.
//!
//! Pinning ([`Pinning`]): `Processes` pins each whole process, Zenoh's runtime
//! threads included, to its CPU (set before the session opens, so every thread
//! inherits it); `Threads` opens the sessions unpinned and pins only A's measuring
//! thread, leaving Zenoh's threads to the scheduler.
//!
//! Two transports ([`Transport`]):
//! * `Tcp`: shared memory is disabled in the config, so every byte crosses the
//!   loopback TCP connection (Zenoh otherwise moves large messages through shared
//!   memory on its own). A and B `put` owned `Vec<u8>`s.
//! * `Shm`: shared memory enabled on both sides; each side allocates its messages
//!   from its own POSIX SHM provider (`ShmProviderBuilder::default_backend`,
//!   `BlockOn<GarbageCollect>` allocation), writes in place and `put`s the buffer;
//!   only a reference crosses the TCP link. Every receiver checks
//!   `payload().as_shm()`, so a run in which SHM silently fell back to copying
//!   fails instead of being reported as SHM.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};

use anyhow::{anyhow, ensure, Context};
use serde::{Deserialize, Serialize};
use zenoh::handlers::FifoChannelHandler;
use zenoh::pubsub::{Publisher, Subscriber};
use zenoh::qos::CongestionControl;
use zenoh::sample::Sample;
use zenoh::shm::{
    BlockOn, GarbageCollect, PosixShmProviderBackend, ShmProvider, ShmProviderBuilder,
};
use zenoh::{Session, Wait};

use horus_bench_core::affinity::{pin_current_thread, run_on_cpu};
use horus_bench_core::child::{self, ChildArgs, ChildProcess};
use horus_bench_core::harness::free_port;
use horus_bench_core::harness::{measure_round_trips, unique_id, Config, STALL_TIMEOUT};
use horus_bench_core::payload::{self, Touch};
use horus_bench_core::pubsub::ChildRole;
use horus_bench_core::stats::Summary;

/// Child role of the echo side.
pub const ECHO_ROLE: &str = "zenoh-echo";

/// The child roles of this peer, for the benchmark binary's child dispatch.
pub const CHILD_ROLES: &[ChildRole] = &[ChildRole {
    role: ECHO_ROLE,
    run: echo_child,
}];
/// How a pinned Zenoh pass is pinned.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Pinning {
    /// Each process, runtime threads included, on its CPU.
    Processes,
    /// Only A's measuring thread; Zenoh's threads unpinned.
    Threads,
}

impl Pinning {
    /// `processes` or `threads`.
    pub fn label(self) -> &'static str {
        match self {
            Pinning::Processes => "processes",
            Pinning::Threads => "threads",
        }
    }

    /// Inverse of [`Pinning::label`].
    pub fn parse(s: &str) -> anyhow::Result<Self> {
        match s {
            "processes" => Ok(Pinning::Processes),
            "threads" => Ok(Pinning::Threads),
            other => anyhow::bail!("unknown zenoh pinning {other:?} (processes|threads)"),
        }
    }
}

/// The crate version this was built against (for the method text).
pub const VERSION: &str = "1.10";
/// The exact settings, for the method text.
pub const SETTINGS: &str = "peer mode; A listens on tcp/127.0.0.1:<free port>, B connects to it \
    and listens nowhere; multicast + gossip scouting off; publishers CongestionControl::Block, \
    express(true); A: default FIFO handler, blocking recv; B: echoes from the subscriber \
    callback (as z_ping/z_pong); zenoh (tcp): transport/shared_memory disabled, payloads are \
    Vec<u8>; zenoh (shm): shared memory enabled, payloads allocated from a POSIX SHM provider and \
    written in place, receivers check as_shm()";

/// How the payload crosses between the processes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Transport {
    /// Bytes over the loopback TCP link.
    Tcp,
    /// Zenoh shared-memory buffers (a reference over the link).
    Shm,
}

impl Transport {
    /// System name in tables.
    pub fn system(self) -> &'static str {
        match self {
            Transport::Tcp => "zenoh",
            Transport::Shm => "zenoh-shm",
        }
    }
}

/// Arguments of the echo child (as JSON).
#[derive(Debug, Clone, Serialize, Deserialize)]
struct EchoArgs {
    endpoint: String,
    id: String,
    size: usize,
    rounds: u64,
    touch: Touch,
    transport: Transport,
    cpu: Option<usize>,
    pinning: Pinning,
}

/// The session settings as `(key, json5 value)` pairs: peer mode, no scouting, only
/// the given loopback endpoints.
pub fn loopback_config(
    listen: Option<&str>,
    connect: Option<&str>,
    shm: bool,
) -> Vec<(&'static str, String)> {
    let list = |e: Option<&str>| match e {
        Some(e) => format!("[\"{e}\"]"),
        None => "[]".to_owned(),
    };
    vec![
        ("mode", "\"peer\"".to_owned()),
        ("scouting/multicast/enabled", "false".to_owned()),
        ("scouting/gossip/enabled", "false".to_owned()),
        ("listen/endpoints", list(listen)),
        ("connect/endpoints", list(connect)),
        ("transport/shared_memory/enabled", shm.to_string()),
    ]
}

/// A session opened with [`loopback_config`]: listening on and connecting to the
/// endpoints given (`tcp/<ip>:<port>`), shared memory on if `shm`.
pub fn open(listen: Option<&str>, connect: Option<&str>, shm: bool) -> anyhow::Result<Session> {
    let mut config = zenoh::Config::default();
    for (key, value) in loopback_config(listen, connect, shm) {
        config
            .insert_json5(key, &value)
            .map_err(|e| anyhow!("zenoh config {key} = {value}: {e}"))?;
    }
    zenoh::open(config)
        .wait()
        .map_err(|e| anyhow!("opening zenoh session: {e}"))
}

type Rx = Subscriber<FifoChannelHandler<Sample>>;

fn publisher(session: &Session, key: String) -> anyhow::Result<Publisher<'static>> {
    session
        .declare_publisher(key)
        .congestion_control(CongestionControl::Block)
        .express(true)
        .wait()
        .map_err(|e| anyhow!("declaring zenoh publisher: {e}"))
}

fn subscriber(session: &Session, key: String) -> anyhow::Result<Rx> {
    session
        .declare_subscriber(key)
        .wait()
        .map_err(|e| anyhow!("declaring zenoh subscriber: {e}"))
}

/// Waits until `publisher` has a matching subscriber (declarations propagate
/// asynchronously).
fn wait_matched(publisher: &Publisher<'_>) -> anyhow::Result<()> {
    let deadline = Instant::now() + child::READY_TIMEOUT;
    loop {
        let status = publisher
            .matching_status()
            .wait()
            .map_err(|e| anyhow!("zenoh matching status: {e}"))?;
        if status.matching() {
            return Ok(());
        }
        ensure!(Instant::now() < deadline, "zenoh peer never matched");
        std::thread::sleep(Duration::from_millis(2));
    }
}

fn recv(rx: &Rx) -> anyhow::Result<Sample> {
    rx.recv_timeout(STALL_TIMEOUT)
        .map_err(|e| anyhow!("zenoh recv: {e}"))?
        .ok_or_else(|| anyhow!("no zenoh message within {STALL_TIMEOUT:?}"))
}

/// One side's way of building messages.
enum Sender {
    Bytes,
    Shm(ShmProvider<PosixShmProviderBackend>),
}

impl Sender {
    fn new(transport: Transport, size: usize) -> anyhow::Result<Self> {
        Ok(match transport {
            Transport::Tcp => Sender::Bytes,
            Transport::Shm => {
                let pool = 8 * size.next_multiple_of(4096) + (1 << 20);
                let provider = ShmProviderBuilder::default_backend(pool)
                    .wait()
                    .map_err(|e| anyhow!("creating zenoh SHM provider of {pool} B: {e}"))?;
                Sender::Shm(provider)
            }
        })
    }

    /// Builds a `size`-byte message with `fill` and publishes it.
    fn put(
        &self,
        tx: &Publisher<'_>,
        size: usize,
        fill: impl FnOnce(&mut [u8]),
    ) -> anyhow::Result<()> {
        let r = match self {
            Sender::Bytes => {
                let mut msg = vec![0u8; size];
                fill(&mut msg);
                tx.put(msg).wait()
            }
            Sender::Shm(provider) => {
                let mut buf = provider
                    .alloc(size)
                    .with_policy::<BlockOn<GarbageCollect>>()
                    .wait()
                    .map_err(|e| anyhow!("zenoh SHM allocation of {size} B: {e:?}"))?;
                fill(&mut buf[..]);
                tx.put(buf).wait()
            }
        };
        r.map_err(|e| anyhow!("zenoh put: {e}"))
    }
}

/// The received payload as one slice (copied only if Zenoh fragmented it), after
/// checking that an SHM run really received shared memory.
fn received(sample: &Sample, transport: Transport) -> anyhow::Result<std::borrow::Cow<'_, [u8]>> {
    if transport == Transport::Shm {
        ensure!(
            sample.payload().as_shm().is_some(),
            "zenoh delivered the message by copy, not in shared memory"
        );
    }
    Ok(sample.payload().to_bytes())
}

/// Round trips of `size` bytes; A on `cpus[0]`, the echo process on `cpus[1]`.
pub fn round_trip(
    cfg: &Config,
    size: usize,
    transport: Transport,
    cpus: Option<[usize; 2]>,
    pinning: Pinning,
) -> anyhow::Result<Summary> {
    match (pinning, cpus) {
        // On a fresh pinned thread: Zenoh's runtime threads, spawned from it when
        // the session opens, inherit the CPU.
        (Pinning::Processes, Some([a, _])) => run_on_cpu(Some(a), || {
            round_trip_on(cfg, size, transport, cpus, pinning)
        }),
        _ => round_trip_on(cfg, size, transport, cpus, pinning),
    }
}

fn round_trip_on(
    cfg: &Config,
    size: usize,
    transport: Transport,
    cpus: Option<[usize; 2]>,
    pinning: Pinning,
) -> anyhow::Result<Summary> {
    let shm = transport == Transport::Shm;
    let id = unique_id();
    let endpoint = format!("tcp/127.0.0.1:{}", free_port()?);
    let session = open(Some(&endpoint), None, shm)?;
    let tx = publisher(&session, format!("horus-bench/{id}/ping"))?;
    let rx = subscriber(&session, format!("horus-bench/{id}/pong"))?;
    let sender = Sender::new(transport, size)?;
    let args = EchoArgs {
        endpoint,
        id,
        size,
        rounds: cfg.rounds(),
        touch: cfg.touch,
        transport,
        cpu: cpus.map(|c| c[1]),
        pinning,
    };
    let mut child = ChildProcess::spawn(ECHO_ROLE, &[serde_json::to_string(&args)?])?;
    child.wait_ready()?;
    wait_matched(&tx)?;
    let touch = cfg.touch;
    let measure = || {
        measure_round_trips(cfg, |seq| {
            sender.put(&tx, size, |buf| payload::write(buf, seq, touch))?;
            let reply = recv(&rx)?;
            payload::check(&received(&reply, transport)?, seq, touch)
        })
    };
    let summary = match pinning {
        Pinning::Processes => measure()?, // already on A's CPU
        Pinning::Threads => run_on_cpu(cpus.map(|c| c[0]), measure)?,
    };
    // End marker: B exits only after this, i.e. after A has read every reply.
    sender.put(&tx, size, |buf| {
        payload::write(buf, u64::MAX - 1, Touch::Ends)
    })?;
    child.finish()?;
    drop((tx, rx, sender));
    session
        .close()
        .wait()
        .map_err(|e| anyhow!("closing zenoh session: {e}"))?;
    Ok(summary)
}

/// Child entry point for [`ECHO_ROLE`]: one JSON argument.
pub fn echo_child(mut args: ChildArgs) -> anyhow::Result<()> {
    let a: EchoArgs = serde_json::from_str(&args.next::<String>("echo json")?)?;
    if let (Pinning::Processes, Some(cpu)) = (a.pinning, a.cpu) {
        // Before the session opens: every Zenoh thread inherits the CPU.
        pin_current_thread(cpu).with_context(|| format!("pinning echo to CPU {cpu}"))?;
    }
    let session = open(None, Some(&a.endpoint), a.transport == Transport::Shm)?;
    let tx = Arc::new(publisher(&session, format!("horus-bench/{}/pong", a.id))?);
    let sender = Arc::new(Sender::new(a.transport, a.size)?);
    let served = Arc::new(AtomicU64::new(0));
    let (done_tx, done_rx) = mpsc::channel::<anyhow::Result<()>>();
    // The echo runs on Zenoh's receiving thread, as z_pong's does.
    let echo = {
        let (tx, sender, served) = (Arc::clone(&tx), Arc::clone(&sender), Arc::clone(&served));
        let (size, rounds, touch, transport) = (a.size, a.rounds, a.touch, a.transport);
        move |ping: Sample| {
            if served.fetch_add(1, Ordering::Relaxed) == rounds {
                let _ = done_tx.send(Ok(())); // the end marker
                return;
            }
            let answer = (|| {
                let msg = received(&ping, transport)?;
                ensure!(msg.len() == size, "message of {} B", msg.len());
                sender.put(&tx, size, |reply| match touch {
                    Touch::Full => reply.copy_from_slice(&msg),
                    Touch::Ends => payload::copy_ends(reply, &msg),
                })
            })();
            if let Err(e) = answer {
                let _ = done_tx.send(Err(e));
            }
        }
    };
    let rx = session
        .declare_subscriber(format!("horus-bench/{}/ping", a.id))
        .callback(echo)
        .wait()
        .map_err(|e| anyhow!("declaring zenoh subscriber: {e}"))?;
    wait_matched(&tx)?;
    child::signal_ready()?;
    let mut seen = 0;
    let result = loop {
        match done_rx.recv_timeout(STALL_TIMEOUT) {
            Ok(r) => break r,
            Err(mpsc::RecvTimeoutError::Timeout) => {
                let now = served.load(Ordering::Relaxed);
                ensure!(now != seen, "no zenoh message for {STALL_TIMEOUT:?}");
                seen = now;
            }
            Err(mpsc::RecvTimeoutError::Disconnected) => anyhow::bail!("zenoh dropped the echo"),
        }
    };
    drop(rx);
    session
        .close()
        .wait()
        .map_err(|e| anyhow!("closing zenoh session: {e}"))?;
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn config_only_names_loopback_and_disables_scouting() {
        for (listen, connect) in [
            (Some("tcp/127.0.0.1:7447"), None),
            (None, Some("tcp/127.0.0.1:7447")),
        ] {
            let cfg = loopback_config(listen, connect, true);
            let get = |k: &str| cfg.iter().find(|(key, _)| *key == k).unwrap().1.clone();
            assert_eq!(get("mode"), "\"peer\"");
            assert_eq!(get("scouting/multicast/enabled"), "false");
            assert_eq!(get("scouting/gossip/enabled"), "false");
            for key in ["listen/endpoints", "connect/endpoints"] {
                let v = get(key);
                assert!(v == "[]" || v == "[\"tcp/127.0.0.1:7447\"]", "{key} = {v}");
            }
        }
    }

    #[test]
    fn config_is_accepted_by_zenoh() {
        let mut config = zenoh::Config::default();
        for (key, value) in loopback_config(Some("tcp/127.0.0.1:7447"), None, false) {
            config.insert_json5(key, &value).unwrap();
        }
    }
}

/// Zenoh publish/subscribe as a [`PubSub`](horus_bench_core::pubsub::PubSub) peer: `zenoh` (TCP,
/// copy) or `zenoh-shm` (its shared memory, loan); blocking either way.
#[derive(Debug, Clone, Copy)]
pub struct ZenohPubSub {
    /// TCP loopback or shared memory.
    pub transport: Transport,
    /// What is pinned when the measurement is pinned.
    pub pinning: Pinning,
}

impl horus_bench_core::peer::Peer for ZenohPubSub {
    fn name(&self) -> &'static str {
        self.transport.system()
    }

    fn settings(&self) -> String {
        format!("zenoh {VERSION} (crate): {SETTINGS}")
    }
}

impl horus_bench_core::pubsub::PubSub for ZenohPubSub {
    fn mode(&self) -> horus_bench_core::harness::Mode {
        match self.transport {
            Transport::Shm => horus_bench_core::harness::Mode::Loan,
            Transport::Tcp => horus_bench_core::harness::Mode::Copy,
        }
    }

    fn busy_polls(&self) -> bool {
        false
    }

    fn round_trip(
        &self,
        cfg: &Config,
        size: usize,
        cpus: Option<[usize; 2]>,
    ) -> anyhow::Result<Summary> {
        round_trip(cfg, size, self.transport, cpus, self.pinning)
    }
}
