//! The tables of the `ros_messages` binary: ROS 2 messages against the fixed-layout
//! path of the same bytes, and loan builds against a memcpy.

use horus_bench::markdown::Table;
use horus_bench::report::ns;

use crate::ros_rows::{BuildComparison, Ratios, RttComparison};

fn range_ns(v: &[u64]) -> String {
    let (lo, hi) = (v.iter().min(), v.iter().max());
    match (lo, hi) {
        (Some(&lo), Some(&hi)) => format!("{}–{}", ns(lo), ns(hi)),
        _ => "–".to_owned(),
    }
}

fn ratio(r: &Ratios) -> [String; 2] {
    [
        format!("{:.3}", r.median),
        format!("{:.3}–{:.3}", r.min, r.max),
    ]
}

/// Round trips: per message and pinning, the range over rounds of each path's median
/// and the per-round ratio ROS ÷ fixed.
pub fn ros_round_trips(c: &[RttComparison]) -> Table {
    let mut t = Table::new([
        "message",
        "CDR body",
        "pinned",
        "rounds",
        "ROS p50 (range)",
        "fixed p50 (range)",
        "ROS ÷ fixed median",
        "ROS ÷ fixed min–max",
    ])
    .left(0);
    for c in c {
        let [m, r] = ratio(&c.ratios);
        t.row([
            c.kind.name().to_owned(),
            format!("{} B", c.body_bytes),
            if c.pinned { "CPUs 0,1" } else { "no" }.to_owned(),
            c.ratios.each.len().to_string(),
            range_ns(&c.ros_ns),
            range_ns(&c.fixed_ns),
            m,
            r,
        ]);
    }
    t.note(
        "p50 (range) = the smallest and largest of the rounds' median round trips. Ratio = the \
         ROS path's median ÷ the fixed-layout path's median in the same round (each path in 4 \
         blocks, the two alternating block by block), one per round. Both: two processes, busy-poll, every byte \
         written by the sender and read by the receiver.",
    );
    t
}

/// Loan builds: per message and method, ns per message (range over rounds) and the
/// per-round ratio to the memcpy into a loan.
pub fn ros_loan_builds(c: &[BuildComparison]) -> Table {
    let mut t = Table::new([
        "message",
        "CDR body",
        "method",
        "rounds",
        "per message (range)",
        "÷ memcpy median",
        "÷ memcpy min–max",
    ])
    .left(0)
    .left(2);
    for c in c {
        let [m, r] = ratio(&c.ratios);
        let lo = c.ns_per_msg.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = c.ns_per_msg.iter().copied().fold(0.0, f64::max);
        t.row([
            c.kind.name().to_owned(),
            format!("{} B", c.body_bytes),
            c.method.label().to_owned(),
            c.ratios.each.len().to_string(),
            format!("{}–{}", ns(lo.round() as u64), ns(hi.round() as u64)),
            m,
            r,
        ]);
    }
    t.note(
        "One process pinned to one CPU; each method loans a chunk of the body's size from the \
         same publisher, writes the whole body and drops the loan unsent; the methods take turns \
         batch by batch. Per message = a round's median of 16-message batches ÷ 16. Ratio = this method ÷ the memcpy into a \
         loan in the same round.",
    );
    t
}
