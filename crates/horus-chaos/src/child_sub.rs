//! The subscribing child: receives, checks every message, and keeps per
//! publisher counts (see [`PairCounts`]). On the stop file it drains what is
//! left (rings of departed publishers included) and reports a final time.
//! The receiving loop never touches the file system: its reports are written,
//! and the stop file looked for, by a [`ReportWriter`] thread.

use std::time::{Duration, Instant};

use horus::prelude::*;

use crate::child::{join, ChildArgs, Role};
use crate::report::{self, SubReport, REPORT_EVERY};
use crate::report_writer::ReportWriter;
use crate::wire;

/// Timeout of each `recv` (so reports are handed over and the stop flag is
/// looked at).
const RECV_TIMEOUT: Duration = Duration::from_millis(50);

/// Runs the subscriber; `opening` is when the topic began to be opened.
pub(crate) fn run(
    args: &ChildArgs,
    topic: &Topic<Header>,
    opening: Instant,
) -> anyhow::Result<i32> {
    let report_path = report::report_path(&args.dir, args.id);
    let join_start_ns = wire::now_ns();
    let mut sub = join(|| topic.subscriber())?;
    let mut rep = SubReport {
        id: args.id,
        pid: std::process::id(),
        join_start_ns,
        join_done_ns: wire::now_ns(),
        ..SubReport::default()
    };
    rep.written_ns = rep.join_done_ns;
    rep.join_ns = opening.elapsed().as_nanos() as u64;
    let mut writer = ReportWriter::start(report_path, &args.dir, Role::Sub)?;
    writer.offer(rep.clone());
    let mut next_report = Instant::now() + REPORT_EVERY;
    let mut last_call_end = Instant::now();
    loop {
        let t0 = Instant::now();
        let pause = t0.duration_since(last_call_end).as_nanos() as u64;
        if pause > rep.max_pause_ns {
            rep.max_pause_ns = pause;
            rep.max_pause_end_ns = wire::now_ns();
        }
        let got = sub.recv_timeout(RECV_TIMEOUT);
        last_call_end = Instant::now();
        let spent = last_call_end.duration_since(t0);
        let beyond = if got.is_ok() {
            spent
        } else {
            spent.saturating_sub(RECV_TIMEOUT)
        };
        rep.max_call_ns = rep.max_call_ns.max(beyond.as_nanos() as u64);
        if let Ok(msg) = got {
            observe(&mut rep, &msg);
        }
        if Instant::now() >= next_report {
            writer.check()?;
            if writer.stop_requested() {
                // Publishers are gone: take whatever is still in the rings.
                while let Some(msg) = sub.try_recv() {
                    observe(&mut rep, &msg);
                }
                fill(&mut rep, &sub.stats());
                rep.is_final = true;
                writer.finish(&rep)?;
                return Ok(0);
            }
            fill(&mut rep, &sub.stats());
            writer.offer(rep.clone());
            next_report = Instant::now() + REPORT_EVERY;
        }
    }
}

fn observe(rep: &mut SubReport, msg: &Header) {
    match wire::decode(msg) {
        Some(d) => {
            rep.received += 1;
            rep.pairs.entry(d.publisher).or_default().observe(
                u64::from(d.seq),
                d.stamp,
                rep.join_start_ns,
                rep.join_done_ns,
            );
        }
        None => rep.corrupt += 1,
    }
}

fn fill(rep: &mut SubReport, s: &horus::SubscriberStats) {
    rep.horus_received = s.received;
    rep.overrun = s.overrun;
    rep.malformed = s.malformed;
    rep.written_ns = wire::now_ns();
}
