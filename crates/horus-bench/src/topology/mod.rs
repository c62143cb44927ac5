//! horus between M publishers and K subscribers on one topic — in one thread, in
//! threads of one process, or in separate processes — measured one way for all.
//!
//! **Round trip** ([`round_trips`]). Topic `data` carries the message under test
//! (M publishers, K subscribers); topic `ack/<i>` carries 16-byte acknowledgements
//! back to publisher `i` (K publishers, 1 subscriber). Each publisher, in a closed
//! loop and concurrently with the others, writes message `seq` (tagged with its
//! index, [`tag`]) and sends it; *every* subscriber receives it, reads it (the
//! whole payload in `full` mode) and checks it is the next message of that
//! publisher, then acknowledges on `ack/<i>`; the sample ends when the publisher
//! holds all K acks. So a 1:1 sample is a ping-pong with a 16-byte answer, and an
//! M:K sample is "until every subscriber has it, and the publisher knows".
//! Samples of all publishers are pooled ([`Samples::merge`]).
//!
//! **Burst** ([`burst`]). Each publisher sends `warmup + count` messages as fast as
//! the `Overflow::Block` QoS lets it (nothing can be dropped); each subscriber
//! checks every message (per-publisher sequence, no gap, no overrun) and, when it
//! has all of a publisher's messages, acknowledges them on `ack/<i>`. Throughput =
//! `M × count` / (last subscriber's last receive − first publisher's first measured
//! send), both read from `CLOCK_MONOTONIC` ([`crate::sysclock`]) so they compare
//! across processes.
//!
//! **Placement.** [`Placement::SameThread`] (1:1 only) keeps all four endpoints in
//! the calling thread: a loopback, reported as such and never as IPC.
//! [`Placement::Threads`] runs every endpoint on its own thread of this process;
//! [`Placement::Processes`] runs every endpoint in its own process (a re-exec of
//! the benchmark binary, [`crate::child`]), so 4:4 is eight processes. With
//! `cpus`, a 1:1 pair is pinned (publisher on `cpus[0]`, subscriber on `cpus[1]`);
//! larger shapes are left to the scheduler unless [`round_trips_pinned`] gives
//! every endpoint a CPU of its own.

mod endpoint;
use endpoint::same_thread_as;
mod place;

use std::time::Duration;

use anyhow::{ensure, Context};
use serde::{Deserialize, Serialize};

use crate::harness::{unique_id, Samples};
use crate::payload::{self, Touch};
use crate::pubsub::horus::Wait;
use crate::robotics::{with_spec, Spec};
use crate::stats::{Summary, Throughput};

pub use place::child_main;

/// Child role of a publisher endpoint.
pub const PUB_ROLE: &str = "topology-pub";
/// Child role of a subscriber endpoint.
pub const SUB_ROLE: &str = "topology-sub";
/// How long the parent waits for a child's result.
const RESULT_TIMEOUT: Duration = Duration::from_secs(900);

/// Where the endpoints run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Placement {
    /// All endpoints in the calling thread (loopback; 1:1 only).
    SameThread,
    /// One thread per endpoint, one process.
    Threads,
    /// One process per endpoint.
    Processes,
}

impl Placement {
    /// Label used in tables.
    pub fn label(self) -> &'static str {
        match self {
            Placement::SameThread => "same thread",
            Placement::Threads => "cross-thread",
            Placement::Processes => "cross-process",
        }
    }
}

/// Who talks to whom, where, and how they wait.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Shape {
    /// Publishers on `data` (M).
    pub pubs: usize,
    /// Subscribers on `data` (K).
    pub subs: usize,
    /// Where the endpoints run.
    pub placement: Placement,
    /// How receivers wait (busy-poll `try_recv`, or futex `recv`).
    pub wait: Wait,
    /// `[publisher, subscriber]` CPUs for a pinned 1:1 shape.
    pub cpus: Option<[usize; 2]>,
}

impl Shape {
    /// `M:K`.
    pub fn label(&self) -> String {
        format!("{}:{}", self.pubs, self.subs)
    }
}

/// What the endpoints do once started.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Job {
    /// Closed-loop round trips, per publisher.
    Rtt {
        /// Untimed round trips.
        warmup: u64,
        /// Timed round trips.
        iters: u64,
    },
    /// Send-only: bursts of sends, each timed on the publisher alone, then
    /// acknowledged (the ring is empty again) before the next ([`send_only`]).
    SendOnly {
        /// Untimed bursts.
        warmup: u64,
        /// Timed bursts.
        bursts: u64,
        /// Sends per burst.
        burst: u64,
    },
    /// One-way burst, per publisher.
    Burst {
        /// Messages before the measured ones.
        warmup: u64,
        /// Measured messages.
        count: u64,
    },
}

impl Job {
    fn per_publisher(self) -> u64 {
        match self {
            Job::Rtt { warmup, iters } => warmup + iters,
            Job::Burst { warmup, count } => warmup + count,
            Job::SendOnly {
                warmup,
                bursts,
                burst,
            } => (warmup + bursts) * burst,
        }
    }
}

/// Everything one endpoint needs (the argument of a child process, as JSON).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Role {
    /// Namespace of this run's topics.
    pub ns: String,
    /// What travels on `data`.
    pub spec: Spec,
    /// M and K.
    pub pubs: usize,
    /// K.
    pub subs: usize,
    /// This endpoint's index among the publishers or subscribers.
    pub index: usize,
    /// How receivers wait.
    pub wait: Wait,
    /// How much of each payload is written and read.
    pub touch: Touch,
    /// What to do.
    pub job: Job,
    /// CPU to pin this endpoint to.
    pub cpu: Option<usize>,
}

/// What a publisher endpoint reports.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub enum PubOutcome {
    /// Its round-trip samples.
    Rtt(Samples),
    /// Its send-only samples: ns per send, one per timed burst.
    SendOnly(Samples),
    /// `CLOCK_MONOTONIC` just before its first measured send.
    Burst {
        /// ns.
        start_ns: u64,
    },
}

/// What a subscriber endpoint reports.
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
pub struct SubOutcome {
    /// Messages received and checked.
    pub received: u64,
    /// `CLOCK_MONOTONIC` right after the last message.
    pub end_ns: u64,
}

/// Publisher `index`'s message `seq` as one number: the index in the top 16 bits.
pub fn tag(index: usize, seq: u64) -> u64 {
    debug_assert!(index < 1 << 16 && seq < 1 << 48);
    ((index as u64) << 48) | seq
}

/// Inverse of [`tag`].
pub fn untag(tag: u64) -> (usize, u64) {
    ((tag >> 48) as usize, tag & ((1 << 48) - 1))
}

/// Round trips of `spec` in `shape`; each publisher runs `warmup` + `iters`.
pub fn round_trips(
    spec: Spec,
    shape: Shape,
    touch: Touch,
    warmup: u64,
    iters: u64,
) -> anyhow::Result<Summary> {
    round_trips_pinned(spec, shape, touch, warmup, iters, None)
}

/// [`round_trips`] with every endpoint pinned to a CPU of its own: `pin` holds one
/// CPU per endpoint, the M publishers first, then the K subscribers (it overrides
/// `shape.cpus`); `None` is [`round_trips`].
pub fn round_trips_pinned(
    spec: Spec,
    shape: Shape,
    touch: Touch,
    warmup: u64,
    iters: u64,
    pin: Option<&[usize]>,
) -> anyhow::Result<Summary> {
    let job = Job::Rtt { warmup, iters };
    let (pubs, _) = run(spec, shape, touch, job, pin)?;
    let samples = pubs.into_iter().map(|p| match p {
        PubOutcome::Rtt(s) => Ok(s),
        _ => anyhow::bail!("publisher reported no round trips"),
    });
    Samples::merge(samples.collect::<anyhow::Result<Vec<_>>>()?).summary()
}

/// Sends per timed burst of [`send_only`]: 16, or 4 for payloads that travel
/// in pool chunks (the pool holds a chunk per ring slot). The data ring gets
/// `pubs × burst` slots, so it holds all publishers' bursts at once.
pub fn send_only_burst(spec: Spec) -> u64 {
    if spec.payload_len() > horus::INLINE_MAX {
        4
    } else {
        16
    }
}

/// Send-only cost of `spec` in `shape`, ns per `send` (the reference report's
/// "send-only"): each publisher times bursts of [`send_only_burst`] loan + write +
/// send calls on its own clock and divides by the burst; the subscribers receive
/// and check every message and acknowledge each burst, and the publisher waits for
/// every acknowledgement, untimed, before its next burst. The data ring holds
/// every publisher's whole burst (depth `pubs × burst`), so a timed send never
/// waits for room (`Overflow::Block` never blocks) and nothing is dropped: every
/// subscriber checks every sequence number. Samples of all publishers are pooled.
pub fn send_only(
    spec: Spec,
    shape: Shape,
    touch: Touch,
    warmup_bursts: u64,
    bursts: u64,
) -> anyhow::Result<Summary> {
    let job = Job::SendOnly {
        warmup: warmup_bursts,
        bursts,
        burst: send_only_burst(spec),
    };
    let (pubs, _) = run(spec, shape, touch, job, None)?;
    let samples = pubs.into_iter().map(|p| match p {
        PubOutcome::SendOnly(s) => Ok(s),
        _ => anyhow::bail!("publisher reported no send-only samples"),
    });
    Samples::merge(samples.collect::<anyhow::Result<Vec<_>>>()?).summary()
}

/// Lossless one-way throughput of `spec` in `shape`: `count` measured messages
/// per publisher, each delivered to (and checked by) every subscriber.
pub fn burst(
    spec: Spec,
    shape: Shape,
    touch: Touch,
    warmup: u64,
    count: u64,
) -> anyhow::Result<Throughput> {
    ensure!(count > 0, "a burst needs at least one message");
    let (pubs, subs) = run(spec, shape, touch, Job::Burst { warmup, count }, None)?;
    let start = pubs
        .iter()
        .filter_map(|p| match p {
            PubOutcome::Burst { start_ns } => Some(*start_ns),
            PubOutcome::Rtt(_) | PubOutcome::SendOnly(_) => None,
        })
        .min()
        .context("no publisher start time")?;
    let end = subs
        .iter()
        .map(|s| s.end_ns)
        .max()
        .context("no subscriber")?;
    let want = (warmup + count) * shape.pubs as u64;
    for s in &subs {
        ensure!(
            s.received == want,
            "a subscriber got {} of {want}",
            s.received
        );
    }
    Ok(Throughput::new(
        count * shape.pubs as u64,
        end.saturating_sub(start),
    ))
}

fn run(
    spec: Spec,
    shape: Shape,
    touch: Touch,
    job: Job,
    pin: Option<&[usize]>,
) -> anyhow::Result<(Vec<PubOutcome>, Vec<SubOutcome>)> {
    ensure!(shape.pubs >= 1 && shape.subs >= 1, "need M, K >= 1");
    ensure!(
        shape.pubs <= 16 && shape.subs <= 32,
        "horus topics hold 16 publishers, 32 subscribers"
    );
    ensure!(
        spec.payload_len() >= payload::MIN_SIZE,
        "payload below {} B",
        payload::MIN_SIZE
    );
    if let Some(p) = pin {
        ensure!(
            p.len() == shape.pubs + shape.subs,
            "{} CPUs for {} endpoints",
            p.len(),
            shape.pubs + shape.subs
        );
    }
    let ns = unique_id();
    let role = |index: usize, publisher: bool| Role {
        ns: ns.clone(),
        spec,
        pubs: shape.pubs,
        subs: shape.subs,
        index,
        wait: shape.wait,
        touch,
        job,
        cpu: match (pin, shape.cpus, shape.pubs * shape.subs) {
            (Some(p), _, _) => Some(if publisher {
                p[index]
            } else {
                p[shape.pubs + index]
            }),
            (None, Some([p, s]), 1) => Some(if publisher { p } else { s }),
            _ => None,
        },
    };
    match shape.placement {
        Placement::SameThread => {
            ensure!(
                shape.pubs == 1 && shape.subs == 1,
                "same thread is 1:1 only"
            );
            let r = role(0, true);
            crate::affinity::run_on_cpu(r.cpu, || with_spec!(spec, same_thread_as(&r)))
        }
        Placement::Threads => place::in_threads(shape, role),
        Placement::Processes => place::in_processes(shape, role),
    }
}

/// What every endpoint of a run reports.
type Outcomes = (Vec<PubOutcome>, Vec<SubOutcome>);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::robotics::MsgKind;

    fn shape(pubs: usize, subs: usize, placement: Placement, wait: Wait) -> Shape {
        Shape {
            pubs,
            subs,
            placement,
            wait,
            cpus: None,
        }
    }

    #[test]
    fn tags_round_trip() {
        assert_eq!(untag(tag(3, 12345)), (3, 12345));
    }

    #[test]
    fn every_thread_shape_completes() {
        for (m, k) in [(1, 1), (2, 1), (1, 2), (2, 2)] {
            let s = shape(m, k, Placement::Threads, Wait::Futex);
            let rtt = round_trips(Spec::Bytes(64), s, Touch::Full, 5, 20).unwrap();
            assert_eq!(rtt.iterations, 20 * m as u64);
            let t = burst(Spec::Bytes(64), s, Touch::Full, 5, 50).unwrap();
            assert_eq!(t.messages, 50 * m as u64);
        }
    }

    #[test]
    fn a_pin_list_needs_one_cpu_per_endpoint() {
        let s = shape(2, 2, Placement::Threads, Wait::Futex);
        let short = round_trips_pinned(Spec::Bytes(64), s, Touch::Full, 1, 5, Some(&[0, 0, 0]));
        assert!(short
            .unwrap_err()
            .to_string()
            .contains("3 CPUs for 4 endpoints"));
        // Every endpoint on CPU 0: legal (futex waits), just not parallel.
        let rtt = round_trips_pinned(Spec::Bytes(64), s, Touch::Full, 1, 5, Some(&[0; 4])).unwrap();
        assert_eq!(rtt.iterations, 10);
    }

    #[test]
    fn send_only_times_every_burst_of_every_route_without_loss() {
        // Subscribers check every sequence number and acknowledge each burst, so a
        // dropped or blocked send fails the run instead of skewing the figure.
        for s in [
            shape(1, 1, Placement::SameThread, Wait::Poll),
            shape(1, 1, Placement::Threads, Wait::Poll),
            shape(2, 2, Placement::Threads, Wait::Futex),
        ] {
            let so = send_only(Spec::Bytes(16), s, Touch::Full, 2, 10).unwrap();
            assert_eq!(so.iterations, 10 * s.pubs as u64, "{s:?}");
        }
        let big = shape(2, 1, Placement::Threads, Wait::Futex);
        let so = send_only(Spec::Bytes(64 * 1024), big, Touch::Full, 1, 5).unwrap();
        assert_eq!(so.iterations, 10);
    }

    #[test]
    fn same_thread_moves_robotics_messages() {
        let s = shape(1, 1, Placement::SameThread, Wait::Poll);
        for kind in [MsgKind::Imu, MsgKind::PointCloud1k] {
            let rtt = round_trips(Spec::Msg(kind), s, Touch::Full, 2, 10).unwrap();
            assert_eq!(rtt.iterations, 10);
            assert_eq!(
                burst(Spec::Msg(kind), s, Touch::Full, 2, 10)
                    .unwrap()
                    .messages,
                10
            );
        }
    }
}
