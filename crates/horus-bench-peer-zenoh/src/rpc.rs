//! Zenoh queryables between two processes: the client's querier `get`s, the
//! server's queryable replies.
//!
//! Sessions as in [`crate::pubsub`]: peer mode, the client listens on
//! `tcp/127.0.0.1:<free port>`, the server connects to exactly that endpoint,
//! scouting off, shared memory off (every byte crosses the loopback TCP link).
//! The client declares a querier (Zenoh's object for repeated queries) with
//! `CongestionControl::Block`, `express(true)` (sent at once, not batched: Zenoh's
//! latency setting, as its `z_ping` uses), `QueryTarget::BestMatching` and
//! `ConsolidationMode::None` (a reply is delivered as it arrives instead of being
//! held for consolidation); each call is one `get` with the request as its
//! payload and the default FIFO handler, waited for with a blocking `recv`. The
//! server answers from the queryable's callback on Zenoh's receiving thread (as
//! `z_queryable` does) with an express reply. Only the client's measuring thread
//! is pinned when pinned: Zenoh's runtime threads are left to the scheduler (the
//! `peers` benchmark's default).

use std::collections::VecDeque;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use anyhow::{anyhow, ensure, Context};
use zenoh::handlers::FifoChannelHandler;
use zenoh::qos::CongestionControl;
use zenoh::query::{ConsolidationMode, Querier, Query, QueryTarget, Reply};
use zenoh::Wait;

use crate::pubsub::open;
use horus_bench_core::affinity::run_on_cpu;
use horus_bench_core::child::{self, signal_ready, ChildProcess};
use horus_bench_core::harness::free_port;
use horus_bench_core::harness::{unique_id, STALL_TIMEOUT};
use horus_bench_core::payload::{self, Touch};
use horus_bench_core::rpc::driver::measure_all;
use horus_bench_core::rpc::{self, Caller, Measured, ServeArgs, Spec, System, END};

/// The exact settings, for the method text.
pub const SETTINGS: &str = "peer mode over tcp/127.0.0.1 (client listens, server connects, \
    scouting off, shared memory off); querier with CongestionControl::Block, express(true), \
    QueryTarget::BestMatching, ConsolidationMode::None; one get per call (default FIFO handler, \
    blocking recv); queryable answers from its callback with an express reply; request and \
    response are Vec<u8> payloads; pinned: only the client's measuring thread; Zenoh's \
    transport/unicast/lowlatency mode is not used: it cannot fragment, so it cannot carry the \
    64 KiB and 1 MiB payloads";

struct ZenohCaller<'c> {
    querier: Querier<'static>,
    flight: VecDeque<FifoChannelHandler<Reply>>,
    size: usize,
    touch: Touch,
    child: &'c mut ChildProcess,
}

impl Caller for ZenohCaller<'_> {
    fn start(&mut self, seq: u64) -> anyhow::Result<()> {
        let mut request = vec![0u8; self.size];
        payload::write(&mut request, seq, self.touch);
        let replies = self
            .querier
            .get()
            .payload(request)
            .wait()
            .map_err(|e| anyhow!("zenoh get: {e}"))?;
        self.flight.push_back(replies);
        Ok(())
    }

    fn finish(&mut self, seq: u64) -> anyhow::Result<()> {
        let replies = self.flight.pop_front().context("no call in flight")?;
        let reply = match replies.recv_timeout(STALL_TIMEOUT) {
            Ok(Some(r)) => r,
            Ok(None) => {
                self.child.check_alive()?;
                anyhow::bail!("no zenoh reply within {STALL_TIMEOUT:?}")
            }
            Err(e) => anyhow::bail!("zenoh query ended without a reply: {e}"),
        };
        let sample = reply
            .into_result()
            .map_err(|e| anyhow!("zenoh reply error: {e:?}"))?;
        let bytes = sample.payload().to_bytes();
        payload::check(&bytes, seq, self.touch)
    }
}

/// Waits until the querier sees the server's queryable.
fn wait_matched(querier: &Querier<'_>) -> anyhow::Result<()> {
    let deadline = Instant::now() + child::READY_TIMEOUT;
    loop {
        let status = querier
            .matching_status()
            .wait()
            .map_err(|e| anyhow!("zenoh matching status: {e}"))?;
        if status.matching() {
            return Ok(());
        }
        ensure!(Instant::now() < deadline, "zenoh queryable never matched");
        std::thread::sleep(Duration::from_millis(2));
    }
}

/// One session at `spec.size`: the client's measuring thread on `cpus[0]`.
pub fn run(spec: &Spec, cpus: Option<[usize; 2]>) -> anyhow::Result<Measured> {
    let endpoint = format!("tcp/127.0.0.1:{}", free_port()?);
    let key = format!("horus-bench/{}/rpc", unique_id());
    let session = open(Some(&endpoint), None, false)?;
    let querier = session
        .declare_querier(key.clone())
        .congestion_control(CongestionControl::Block)
        .express(true)
        .target(QueryTarget::BestMatching)
        .consolidation(ConsolidationMode::None)
        .timeout(STALL_TIMEOUT)
        .wait()
        .map_err(|e| anyhow!("declaring zenoh querier: {e}"))?;
    // The server connects to `endpoint` and declares its queryable under `key`.
    let mut child =
        ServeArgs::new(System::Zenoh, format!("{endpoint} {key}"), spec, cpus).spawn()?;
    wait_matched(&querier)?;
    let mut caller = ZenohCaller {
        querier,
        flight: VecDeque::new(),
        size: spec.size,
        touch: spec.touch,
        child: &mut child,
    };
    let measured = run_on_cpu(cpus.map(|c| c[0]), || measure_all(&mut caller, spec))?;
    drop(caller);
    rpc::release(child)?;
    session
        .close()
        .wait()
        .map_err(|e| anyhow!("closing zenoh session: {e}"))?;
    Ok(measured)
}

/// Server child of [`run`]: `a.id` is `<endpoint> <key>`.
pub fn serve(a: &ServeArgs) -> anyhow::Result<()> {
    let (endpoint, key) = a.id.split_once(' ').context("server id <endpoint> <key>")?;
    let session = open(None, Some(endpoint), false)?;
    let (done_tx, done_rx) = mpsc::channel::<anyhow::Result<()>>();
    let (size, touch) = (a.size, a.touch);
    let answer = move |query: Query| {
        let result = (|| {
            let body = query.payload().context("query without payload")?.to_bytes();
            ensure!(body.len() == size, "request of {} B", body.len());
            let seq = payload::read(&body, touch)?;
            let mut response = vec![0u8; size];
            payload::write(&mut response, seq, touch);
            query
                .reply(query.key_expr().clone(), response)
                .express(true)
                .wait()
                .map_err(|e| anyhow!("zenoh reply: {e}"))?;
            Ok(seq)
        })();
        match result {
            Ok(END) => {
                let _ = done_tx.send(Ok(()));
            }
            Ok(_) => {}
            Err(e) => {
                let _ = done_tx.send(Err(e));
            }
        }
    };
    let queryable = session
        .declare_queryable(key.to_owned())
        .callback(answer)
        .wait()
        .map_err(|e| anyhow!("declaring zenoh queryable: {e}"))?;
    signal_ready()?;
    // Bounded only by the client: it ends the session with the END call, or dies
    // (this process then dies with it: PR_SET_PDEATHSIG).
    let result = done_rx
        .recv()
        .map_err(|_| anyhow!("zenoh dropped the queryable"))?;
    // The last reply has reached the client once it releases this server.
    if result.is_ok() {
        rpc::await_release()?;
    }
    drop(queryable);
    session
        .close()
        .wait()
        .map_err(|e| anyhow!("closing zenoh session: {e}"))?;
    result
}

/// Zenoh queryables queried with a querier as an [`Rpc`](horus_bench_core::rpc::Rpc) peer.
#[derive(Debug, Clone, Copy)]
pub struct ZenohRpc;

impl horus_bench_core::peer::Peer for ZenohRpc {
    fn name(&self) -> &'static str {
        System::Zenoh.name()
    }

    fn settings(&self) -> String {
        SETTINGS.to_owned()
    }
}

impl rpc::Rpc for ZenohRpc {
    fn run(&self, spec: &Spec, cpus: Option<[usize; 2]>) -> anyhow::Result<Measured> {
        run(spec, cpus)
    }

    fn serve(&self, args: &ServeArgs) -> anyhow::Result<()> {
        serve(args)
    }
}
