//! Building a ROS 2 message in a loan against copying its bytes: the cost of the CDR
//! writer over a `memcpy`, in one process on one CPU.
//!
//! Every method loans a chunk of the message's size from the same `Topic<Ros<M>>`
//! publisher, fills the whole body, and drops the loan unsent (the chunk goes back to
//! the pool), so the methods differ only in how the body is written:
//!
//! * [`BuildMethod::Memcpy`] — the body's bytes, encoded once before, copied in;
//! * [`BuildMethod::Write`] — `write_cdr` of the owned message into the loan, the size
//!   known (what `publish_with(len, |w| msg.write_cdr(w))` does);
//! * [`BuildMethod::Publish`] — `Publisher::loan_encoded(&msg)`: what `publish(&msg)`
//!   does before sending (the chunk loaned, the message encoded into it in one pass);
//! * [`BuildMethod::MemcpyNoLoan`] — the bytes copied into a plain buffer, no loan: the
//!   floor.
//!
//! Each sample times a batch of [`BATCH`] messages (so the two clock reads weigh
//! little); the stamp of the owned message changes with every message. The methods take
//! turns batch by batch, their order rotating, so each method's batches are spread over
//! the same stretch of time as every other's.

use std::hint::black_box;

use anyhow::{ensure, Context};
use horus::cdr::CdrWriter;
use horus::ros::Ros;
use horus::{Overflow, Publisher, Topic};
use horus_bench::affinity::run_on_cpu;
use horus_bench::clock::Clock;
use horus_bench::harness::{unique_id, Config};
use horus_bench::stats::Summary;
use serde::{Deserialize, Serialize};

use crate::ros_kinds::{with_ros_kind, RosKind, Workload};

/// Messages per timed sample.
pub const BATCH: u32 = 16;

/// How the body is written into the loan.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum BuildMethod {
    /// Copy of the encoded bytes into the loan.
    Memcpy,
    /// `write_cdr` into the loan, size known.
    Write,
    /// `loan_encoded` of the owned message: publish without the send.
    Publish,
    /// Copy of the encoded bytes into a plain buffer (no loan).
    MemcpyNoLoan,
}

impl BuildMethod {
    /// Every method, in table order.
    pub const ALL: [BuildMethod; 4] = [
        BuildMethod::Memcpy,
        BuildMethod::Write,
        BuildMethod::Publish,
        BuildMethod::MemcpyNoLoan,
    ];

    /// Label in tables.
    pub fn label(self) -> &'static str {
        match self {
            BuildMethod::Memcpy => "memcpy of its bytes into a loan",
            BuildMethod::Write => "built in a loan (publish_with: write_cdr, size known)",
            BuildMethod::Publish => "built in a loan (publish: loan_encoded, one pass)",
            BuildMethod::MemcpyNoLoan => "memcpy into a plain buffer (no loan)",
        }
    }
}

/// Per-batch times of building `kind` with every method of [`BuildMethod::ALL`], on
/// `cpu`, in that order. The methods are interleaved batch by batch (`first` picks the
/// method that leads; the order rotates with every sample), so that a disturbance of the
/// machine — another process, a frequency change — lands on every method alike and the
/// ratios of their medians compare batches measured under the same conditions.
pub fn loan_builds(
    cfg: &Config,
    kind: RosKind,
    first: usize,
    cpu: Option<usize>,
) -> anyhow::Result<Vec<Summary>> {
    run_on_cpu(cpu, || with_ros_kind!(kind, build_all(cfg, first)))
}

fn build_all<W: Workload>(
    kind: RosKind,
    cfg: &Config,
    first: usize,
) -> anyhow::Result<Vec<Summary>> {
    let mut w = W::new(kind);
    let len = w.body_len();
    let ns = unique_id();
    let topic = Topic::<Ros<W::M>>::builder("build")
        .namespace(&ns)
        .depth(4)
        .overflow(Overflow::DropOldest)
        .max_publishers(1)
        .max_tail_bytes(len.next_power_of_two().max(4096))
        .open()?;
    let mut p = topic.publisher()?;
    // The encoded body (the bytes a memcpy copies), from the message as built.
    let bytes = {
        w.stamp(1);
        let mut body = vec![0u8; len];
        w.write_body(&mut CdrWriter::new(&mut body), 1)?;
        body
    };
    let mut plain = vec![0u8; len];
    // Where loans put the body (the same chunk, or a few in turn), and every source of a
    // large copy moved away from 4K aliasing with it, the memcpy's as the message's.
    let bodies: Vec<usize> = (0..8)
        .map(|_| Ok(p.loan_slice(len)?.tail_mut().as_ptr() as usize))
        .collect::<anyhow::Result<_>>()?;
    let mut bytes = bytes;
    let mut spacers = Vec::new();
    move_apart(&mut bytes, &bodies, &mut spacers);
    w.place_apart(&bodies);
    let methods = BuildMethod::ALL;
    let mut batch = |m: BuildMethod, seq: u64| -> anyhow::Result<()> {
        for k in 0..u64::from(BATCH) {
            build_one(&mut w, &mut p, m, &bytes, &mut plain, seq * 64 + k)?;
        }
        Ok(())
    };
    Clock::calibrate();
    for seq in 0..cfg.warmup {
        for m in methods {
            batch(m, seq)?;
        }
    }
    // Pre-faulted (written, then emptied), so that no page fault lands between two samples.
    let n = cfg.iterations as usize;
    let mut samples: Vec<Vec<u64>> = (0..methods.len())
        .map(|_| {
            let mut v = vec![0u64; n];
            v.clear();
            v
        })
        .collect();
    let mut wall = vec![0u64; methods.len()];
    for (i, seq) in (cfg.warmup..).take(n).enumerate() {
        for j in 0..methods.len() {
            let at = (first + i + j) % methods.len();
            let t0 = Clock::now();
            batch(methods[at], seq)?;
            let ns = Clock::elapsed_ns(t0, Clock::now());
            samples[at].push(ns);
            wall[at] += ns;
        }
    }
    samples
        .into_iter()
        .zip(wall)
        .map(|(s, wall)| Summary::from_samples(s, wall).context("no timed batches"))
        .collect()
}

/// Whether copying from `src` to `dst` meets 4K aliasing: the destination a little way
/// (under 256 bytes, or exactly) past the source modulo the 4 KiB page, so that the copy's
/// loads look like they depend on its own earlier stores. Measured on this benchmark's
/// machine (AMD EPYC, glibc's AVX-512 memcpy), a 4,320-byte copy takes ~45 ns at most
/// offsets, ~110 ns at 32–44 bytes and ~1.3 µs at 1–28 bytes: where the heap happens to put
/// a driver's array decided whole rounds of the loan-build comparison.
pub fn aliases(dst: usize, src: usize) -> bool {
    dst.wrapping_sub(src) % 4096 < 256
}

/// Reallocates `v` (keeping its contents; the old allocations are kept in `spacers` so
/// they are not handed back) until copying it to none of `dsts` aliases (at most 64 tries).
pub fn move_apart<T: Clone>(v: &mut Vec<T>, dsts: &[usize], spacers: &mut Vec<Vec<T>>) {
    for _ in 0..64 {
        let src = v.as_ptr() as usize;
        if !dsts.iter().any(|&d| aliases(d, src)) {
            return;
        }
        let moved = v.clone();
        spacers.push(std::mem::replace(v, moved));
    }
}

fn build_one<W: Workload>(
    w: &mut W,
    p: &mut Publisher<Ros<W::M>>,
    method: BuildMethod,
    bytes: &[u8],
    plain: &mut [u8],
    seq: u64,
) -> anyhow::Result<()> {
    if method == BuildMethod::MemcpyNoLoan {
        plain.copy_from_slice(bytes);
        black_box(&plain[plain.len() - 1]);
        return Ok(());
    }
    let len = bytes.len();
    if method == BuildMethod::Publish {
        w.stamp(seq);
        let msg = w
            .owned()
            .context("publish's build needs an owned message")?;
        let mut s = p.loan_encoded(msg)?;
        let body = s.tail_mut();
        ensure!(body.len() == len, "encoded other than {len} bytes");
        black_box(&body[len - 1]);
        return Ok(()); // dropped unsent, as below
    }
    let mut s = p.loan_slice(len)?;
    *s = Ros::new();
    match method {
        BuildMethod::Memcpy => s.tail_mut().copy_from_slice(bytes),
        _ => {
            if method == BuildMethod::Write {
                w.stamp(seq);
            }
            let mut cw = CdrWriter::new(s.tail_mut());
            w.write_body(&mut cw, seq)?;
            ensure!(cw.finish() == len, "wrote other than {len} bytes");
        }
    }
    black_box(&s.tail_mut()[len - 1]);
    Ok(()) // the loan is dropped unsent: its chunk goes back to the pool
}
