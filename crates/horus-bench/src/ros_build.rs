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
//! * [`BuildMethod::Publish`] — the size computed by a counting pass, then `write_cdr`
//!   (what `publish(&msg)` does before sending);
//! * [`BuildMethod::MemcpyNoLoan`] — the bytes copied into a plain buffer, no loan: the
//!   floor.
//!
//! Each sample times a batch of [`BATCH`] messages (so the two clock reads weigh
//! little); the stamp of the owned message changes with every message.

use std::hint::black_box;

use anyhow::ensure;
use horus::cdr::CdrWriter;
use horus::ros::Ros;
use horus::{Overflow, Publisher, Topic};
use serde::{Deserialize, Serialize};

use crate::affinity::run_on_cpu;
use crate::harness::{measure_round_trip_samples, unique_id, Config};
use crate::ros_kinds::{with_ros_kind, RosKind, Workload};
use crate::stats::Summary;

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
    /// Counting pass for the size, then `write_cdr` into the loan.
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
            BuildMethod::Publish => "built in a loan (publish: size pass + write_cdr)",
            BuildMethod::MemcpyNoLoan => "memcpy into a plain buffer (no loan)",
        }
    }
}

/// Per-batch times of building `kind` with `method`, on `cpu`.
pub fn loan_build(
    cfg: &Config,
    kind: RosKind,
    method: BuildMethod,
    cpu: Option<usize>,
) -> anyhow::Result<Summary> {
    run_on_cpu(cpu, || with_ros_kind!(kind, build_as(cfg, method)))
}

fn build_as<W: Workload>(
    kind: RosKind,
    cfg: &Config,
    method: BuildMethod,
) -> anyhow::Result<Summary> {
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
    let samples = measure_round_trip_samples(cfg, |seq| {
        for k in 0..u64::from(BATCH) {
            build_one(&mut w, &mut p, method, &bytes, &mut plain, seq * 64 + k)?;
        }
        Ok(())
    })?;
    samples.summary()
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
    let len = match method {
        BuildMethod::Publish => {
            w.stamp(seq);
            w.body_len() // the counting pass publish() runs
        }
        _ => bytes.len(),
    };
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
