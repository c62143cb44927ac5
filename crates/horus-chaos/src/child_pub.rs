//! The publishing child: sends numbered, stamped messages in bursts (some
//! longer than the history, so `DropOldest` subscribers get lapped and
//! `Block` publishers wait), logging every stamp before the attempt.

use std::fs::File;
use std::os::unix::fs::FileExt;
use std::time::{Duration, Instant};

use anyhow::Context;
use horus::prelude::*;

use crate::child::{join, stop_requested, ChildArgs, Role};
use crate::report::{self, PubReport, REPORT_EVERY};
use crate::wire;

/// Messages per burst; every [`LONG_EVERY`]th burst is [`LONG_BURST`].
const BURST: u32 = 8;
const LONG_BURST: u32 = 3 * wire::DEPTH;
const LONG_EVERY: u64 = 16;
/// Pause between bursts.
const PAUSE: Duration = Duration::from_millis(1);

/// Runs the publisher; `opening` is when the topic began to be opened.
pub(crate) fn run(
    args: &ChildArgs,
    topic: &Topic<Header>,
    opening: Instant,
) -> anyhow::Result<i32> {
    let log_path = report::log_path(&args.dir, args.id);
    let log =
        File::create(&log_path).with_context(|| format!("creating {}", log_path.display()))?;
    let report_path = report::report_path(&args.dir, args.id);
    let mut publisher = join(|| topic.publisher())?;
    let mut rep = PubReport {
        id: args.id,
        pid: std::process::id(),
        join_ns: opening.elapsed().as_nanos() as u64,
        ..PubReport::default()
    };
    let mut seq: u32 = 0;
    let mut next_report = Instant::now();
    for burst in 0u64.. {
        let n = if burst % LONG_EVERY == LONG_EVERY - 1 {
            LONG_BURST
        } else {
            BURST
        };
        for _ in 0..n {
            let stamp = wire::now_ns();
            log.write_at(&stamp.to_le_bytes(), 8 * (1 + u64::from(seq)))?;
            let t0 = Instant::now();
            let r = publisher.send(wire::encode(args.id, seq, stamp));
            rep.max_call_ns = rep.max_call_ns.max(t0.elapsed().as_nanos() as u64);
            if r.is_ok() {
                seq += 1;
                log.write_at(&u64::from(seq).to_le_bytes(), 0)?;
            }
            // A refused message is retried with the same number: the
            // sequence has no holes on the sending side.
        }
        std::thread::sleep(PAUSE);
        if Instant::now() >= next_report {
            let stop = stop_requested(&args.dir, Role::Pub);
            fill(&mut rep, seq, &publisher.stats());
            rep.is_final = stop;
            report::write_atomic(&report_path, &rep)?;
            if stop {
                return Ok(0);
            }
            next_report = Instant::now() + REPORT_EVERY;
        }
    }
    unreachable!("the burst loop only ends by returning")
}

fn fill(rep: &mut PubReport, seq: u32, s: &horus::PublisherStats) {
    rep.sent = u64::from(seq);
    rep.horus_sent = s.sent;
    rep.timed_out = s.timed_out;
    rep.rejected = s.rejected;
    rep.pool_exhausted = s.pool_exhausted;
    rep.undelivered = s.undelivered;
}
