//! What every horus cell uses: its topics, sending and receiving a
//! [`super::super::wire`] message as a [`Blob`]'s tail, proving a path before
//! timing it, and the CPU of a host (its process and its bridge's).

use std::time::{Duration, Instant};

use anyhow::{anyhow, bail, ensure, Context};
use horus::{LoanError, Overflow, Publisher, RecvError, Subscriber, Topic};

use crate::wire::{self, HEADER};
use horus_bench_core::child::READY_TIMEOUT;
use horus_bench_core::harness::STALL_TIMEOUT;
use horus_bench_core::sysclock::{monotonic_ns, CpuMeter, CpuUse};
use horus_bench_wire::Blob;

/// How often a hello is repeated while a path is being proven.
const HELLO_EVERY: Duration = Duration::from_millis(20);

/// How long a receiver waits in one `recv_timeout` before looking at its clock.
pub(super) const POLL: Duration = Duration::from_millis(50);

/// History depth for a payload size (the pool holds `2 × depth + 4` chunks of
/// the payload's size per publisher).
fn depth(size: usize) -> u32 {
    match size {
        s if s >= 1 << 20 => 4,
        s if s >= 65536 => 16,
        _ => 64,
    }
}

/// A `Block` topic of `size`-byte messages in `namespace`.
pub(super) fn topic(namespace: &str, name: &str, size: usize) -> anyhow::Result<Topic<Blob>> {
    Topic::<Blob>::builder(name)
        .namespace(namespace)
        .depth(depth(size))
        .overflow(Overflow::Block {
            timeout: STALL_TIMEOUT,
        })
        .max_tail_bytes(size.max(HEADER))
        .open()
        .with_context(|| format!("opening topic {name}"))
}

/// The reverse topic of a path check: acknowledgements are idempotent (a lost one
/// only brings another hello), so `DropOldest`: nothing ever waits on it.
pub(super) fn ack_topic(namespace: &str, id: &str) -> anyhow::Result<Topic<Blob>> {
    let name = name(id, "ack");
    Topic::<Blob>::builder(&name)
        .namespace(namespace)
        .depth(64)
        .overflow(Overflow::DropOldest)
        .max_tail_bytes(HEADER)
        .open()
        .with_context(|| format!("opening topic {name}"))
}

/// Publishes message `seq` of `size` bytes, written in place in a loaned chunk
/// (waiting while every chunk is held, as `Block` waits for room).
pub(super) fn send(p: &mut Publisher<Blob>, size: usize, seq: u64) -> anyhow::Result<()> {
    let size = size.max(HEADER);
    let deadline = Instant::now() + STALL_TIMEOUT;
    loop {
        match p.loan_slice(size) {
            Ok(mut s) => {
                s.len = size as u64;
                wire::write(s.tail_mut(), seq);
                return s
                    .send()
                    .map(drop)
                    .map_err(|e| anyhow!("horus send: {}", e.map(drop)));
            }
            Err(LoanError::PoolExhausted) if Instant::now() < deadline => {
                std::thread::yield_now();
            }
            Err(e) => bail!("horus loan: {e}"),
        }
    }
}

/// One received message: `(seq, stamp, arrival)`, every byte checked; `None`
/// after `timeout` without one.
pub(super) fn recv(
    s: &mut Subscriber<Blob>,
    size: usize,
    timeout: Duration,
) -> anyhow::Result<Option<(u64, u64, u64)>> {
    match s.recv_timeout(timeout) {
        Ok(m) => {
            let now = monotonic_ns();
            let (seq, stamp) = wire::read(m.tail(), size)?;
            Ok(Some((seq, stamp, now)))
        }
        Err(RecvError::Timeout(_)) => Ok(None),
        Err(e) => Err(anyhow!("horus recv: {e}")),
    }
}

/// Name of a cell's topic.
pub(super) fn name(id: &str, what: &str) -> String {
    format!("mh/{id}/{what}")
}

/// Sender side of a path check: repeats a hello on every topic not yet
/// acknowledged until the receiver has acknowledged each (its index on `ack`).
pub(super) fn prove_paths(
    pubs: &mut [Publisher<Blob>],
    ack: &mut Subscriber<Blob>,
    size: usize,
) -> anyhow::Result<()> {
    let mut acked = vec![false; pubs.len()];
    let deadline = Instant::now() + READY_TIMEOUT;
    while acked.iter().any(|a| !a) {
        ensure!(
            Instant::now() < deadline,
            "{} of {} topics acknowledged by host B within {READY_TIMEOUT:?}",
            acked.iter().filter(|a| **a).count(),
            acked.len()
        );
        for (p, _) in pubs.iter_mut().zip(&acked).filter(|(_, a)| !**a) {
            send(p, size, wire::HELLO)?;
        }
        let until = Instant::now() + HELLO_EVERY;
        while let Some(left) = until.checked_duration_since(Instant::now()) {
            match recv(ack, HEADER, left)? {
                Some((i, _, _)) => {
                    if let Some(a) = acked.get_mut(i as usize) {
                        *a = true;
                    }
                }
                None => break,
            }
        }
    }
    Ok(())
}

/// How long a receiver may wait: long before the first message (the path is
/// still being set up), [`STALL_TIMEOUT`] between messages.
pub(super) struct Patience {
    last: Instant,
    limit: Duration,
}

impl Patience {
    pub(super) fn new() -> Self {
        Self {
            last: Instant::now(),
            limit: READY_TIMEOUT + STALL_TIMEOUT,
        }
    }

    /// A message arrived.
    pub(super) fn progress(&mut self) {
        self.last = Instant::now();
        self.limit = STALL_TIMEOUT;
    }

    /// Fails once nothing has arrived for too long.
    pub(super) fn check(&self, what: &str) -> anyhow::Result<()> {
        ensure!(
            self.last.elapsed() < self.limit,
            "{what}: no horus message for {:?}",
            self.limit
        );
        Ok(())
    }
}

/// CPU time of a process (user + system, all threads) from `/proc/<pid>/stat`, ns
/// (kernel clock ticks: usually 10 ms).
fn proc_cpu_ns(pid: u32) -> u64 {
    let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
        return 0;
    };
    // The command name (field 2) may hold spaces: count fields after its ')'.
    let Some((_, rest)) = stat.rsplit_once(')') else {
        return 0;
    };
    let fields: Vec<&str> = rest.split_whitespace().collect();
    // utime and stime are fields 14 and 15; `rest` starts at field 3.
    let ticks = |i: usize| fields.get(i - 3).and_then(|f| f.parse::<u64>().ok());
    // SAFETY: sysconf has no preconditions.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) }.max(1) as u64;
    ticks(14)
        .unwrap_or(0)
        .saturating_add(ticks(15).unwrap_or(0))
        * 1_000_000_000
        / hz
}

/// CPU use of a host: its process and its bridge process over a window.
#[derive(Debug, Clone, Copy)]
pub(super) struct HostCpu {
    own: CpuMeter,
    bridge_pid: u32,
    bridge_start: u64,
}

impl HostCpu {
    pub(super) fn start(bridge_pid: u32) -> Self {
        Self {
            own: CpuMeter::start(),
            bridge_pid,
            bridge_start: proc_cpu_ns(bridge_pid),
        }
    }

    pub(super) fn stop(&self) -> CpuUse {
        let own = self.own.stop();
        let bridge = proc_cpu_ns(self.bridge_pid).saturating_sub(self.bridge_start);
        let cpu_ns = own.cpu_ns + bridge;
        CpuUse {
            wall_ns: own.wall_ns,
            cpu_ns,
            percent: 100.0 * cpu_ns as f64 / own.wall_ns as f64,
        }
    }
}

/// Fails if anything of `namespace` is left in `/dev/shm` once its endpoints and
/// bridge are gone (after removing what dead owners left).
pub(super) fn check_clean(namespace: &str) -> anyhow::Result<()> {
    let prefix = format!("horus.{namespace}.");
    let left = || -> Vec<String> {
        std::fs::read_dir("/dev/shm")
            .map(|d| {
                d.filter_map(|e| e.ok()?.file_name().into_string().ok())
                    .filter(|n| n.starts_with(&prefix))
                    .collect()
            })
            .unwrap_or_default()
    };
    if left().is_empty() {
        return Ok(());
    }
    horus::clean::clean_stale(namespace).map_err(|e| anyhow!("cleaning {namespace}: {e}"))?;
    let left = left();
    ensure!(left.is_empty(), "left in /dev/shm: {left:?}");
    Ok(())
}
