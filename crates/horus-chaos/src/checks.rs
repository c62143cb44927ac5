//! The checks of a run, each with a one-line verdict (and, when it fails,
//! the first few examples of what broke it).

use serde::Serialize;

use crate::analysis::{self, SubResult};
use crate::child::{Role, TopicKind};
use crate::report::{self, PubReport, SubReport};
use crate::summary::{lang_of, ms, Fate, Run, TopicData};

#[derive(Clone, Debug, Serialize)]
pub(crate) struct Check {
    pub(crate) name: &'static str,
    pub(crate) passed: bool,
    pub(crate) detail: String,
}

/// At most this many examples per failed check.
const EXAMPLES: usize = 6;

fn check(name: &'static str, problems: Vec<String>, ok_detail: String) -> Check {
    let passed = problems.is_empty();
    let detail = if passed {
        ok_detail
    } else {
        let mut d = problems[..problems.len().min(EXAMPLES)].join("; ");
        if problems.len() > EXAMPLES {
            d += &format!("; … {} in all", problems.len());
        }
        d
    };
    Check {
        name,
        passed,
        detail,
    }
}

fn describe_sub(run: &Run<'_>, t: TopicKind, r: &SubResult) -> String {
    let mut d = format!(
        "sub {} ({}, {}): counted losses {} vs missing [{}, {}]",
        r.subscriber,
        lang_of(run, r.subscriber),
        t.name(),
        r.counted_losses,
        r.missing_strict,
        r.missing_loose
    );
    for p in r
        .pairs
        .iter()
        .filter(|p| p.missing_strict != 0 || p.gaps != 0 || p.out_of_order != 0)
        .take(3)
    {
        d += &format!(
            ", from pub {} ({}): window {}, received {}, missing {}..{}, gaps {}, out of order {}",
            p.publisher,
            lang_of(run, p.publisher),
            p.window_strict,
            p.received,
            p.missing_strict,
            p.missing_loose,
            p.gaps,
            p.out_of_order
        );
    }
    if r.unknown_publishers > 0 {
        d += &format!(", {} unknown publishers", r.unknown_publishers);
    }
    d
}

pub(crate) fn checks(run: &Run<'_>, topics: &[TopicData]) -> Vec<Check> {
    let mut out = Vec::new();
    let bad_fates: Vec<String> = run
        .records
        .iter()
        .filter_map(|r| match &r.fate {
            Fate::ExitedUnexpectedly(why) => {
                Some(format!("child {} (pid {}) exited: {why}", r.id, r.pid))
            }
            Fate::DidNotStop => Some(format!(
                "child {} (pid {}) did not stop when asked",
                r.id, r.pid
            )),
            Fate::Running => Some(format!("child {} never accounted for", r.id)),
            _ => None,
        })
        .collect();
    out.push(check(
        "children",
        bad_fates,
        format!(
            "{} started; every one was killed by us or stopped cleanly when asked",
            run.records.len()
        ),
    ));

    let mut not_final = Vec::new();
    for r in run.records.iter().filter(|r| r.fate == Fate::Stopped) {
        let path = report::report_path(run.dir, r.id);
        let is_final = match r.role {
            Role::Pub => report::read::<PubReport>(&path)
                .ok()
                .flatten()
                .map(|p| p.is_final),
            Role::Sub => report::read::<SubReport>(&path)
                .ok()
                .flatten()
                .map(|s| s.is_final),
        };
        if is_final != Some(true) {
            not_final.push(format!("child {} stopped without a final report", r.id));
        }
    }
    out.push(check(
        "final_reports",
        not_final,
        "every survivor wrote a final report".into(),
    ));

    let mut block = Vec::new();
    let mut recon = Vec::new();
    let mut intact = Vec::new();
    let mut stall = Vec::new();
    let mut progress = Vec::new();
    let mut timeouts = Vec::new();
    let limit = (run.opts.block_timeout + run.opts.stall_grace).as_nanos() as u64;
    for t in topics {
        for (_, r) in &t.subs {
            if t.kind == TopicKind::Block && !analysis::block_lossless(r) {
                block.push(describe_sub(run, t.kind, r));
            }
            if !r.reconciled {
                recon.push(describe_sub(run, t.kind, r));
            }
        }
        for p in &t.pub_reports {
            if !analysis::counters_agree_pub(p) {
                recon.push(format!(
                    "pub {}: library sent {} vs own count {}",
                    p.id, p.horus_sent, p.sent
                ));
            }
            if p.max_call_ns > limit {
                stall.push(format!(
                    "pub {}: a send took {:.1} ms",
                    p.id,
                    ms(p.max_call_ns)
                ));
            }
            if p.join_ns > limit {
                stall.push(format!(
                    "pub {}: joining took {:.1} ms",
                    p.id,
                    ms(p.join_ns)
                ));
            }
            if t.kind == TopicKind::Block && p.timed_out > 0 {
                timeouts.push(format!(
                    "pub {} ({}): {} sends timed out (longest pause of a subscriber between two \
                     recv calls: {:.1} ms)",
                    p.id,
                    lang_of(run, p.id),
                    p.timed_out,
                    t.figures.max_pause_ms
                ));
            }
        }
        for s in &t.sub_reports {
            if !analysis::counters_agree_sub(s) {
                recon.push(format!(
                    "sub {}: library received {} vs own count {} + {} corrupt",
                    s.id, s.horus_received, s.received, s.corrupt
                ));
            }
            if s.corrupt + s.malformed > 0 {
                intact.push(format!(
                    "sub {}: {} corrupt, {} malformed",
                    s.id, s.corrupt, s.malformed
                ));
            }
            if s.max_call_ns > limit {
                stall.push(format!(
                    "sub {}: a recv overran its timeout by {:.1} ms",
                    s.id,
                    ms(s.max_call_ns)
                ));
            }
            if s.join_ns > limit {
                stall.push(format!(
                    "sub {}: joining took {:.1} ms",
                    s.id,
                    ms(s.join_ns)
                ));
            }
            if let Some(e) = &s.error {
                intact.push(format!("sub {}: {e}", s.id));
            }
        }
        if t.figures.out_of_order > 0 {
            intact.push(format!(
                "{}: {} messages out of order",
                t.kind.name(),
                t.figures.out_of_order
            ));
        }
        if t.figures.received == 0 || t.figures.window_strict == 0 {
            progress.push(format!("{}: nothing was delivered", t.kind.name()));
        }
    }
    out.push(check(
        "block_lossless",
        block,
        "Block: every pair received every message sent while both were alive; no gaps, no overruns"
            .into(),
    ));
    out.push(check(
        "block_no_timeout",
        timeouts,
        "Block: no send timed out (live subscribers never hold a publisher for the whole timeout; dead and zombie ones are noticed)".into(),
    ));
    out.push(check(
        "reconciled",
        recon,
        "every subscriber's counted losses lie within its missing bounds; library counters equal the children's own".into(),
    ));
    out.push(check(
        "intact",
        intact,
        "no corrupt, malformed or out-of-order message".into(),
    ));
    out.push(check(
        "no_stall",
        stall,
        format!(
            "no join, send or recv call stalled beyond the Block timeout ({} ms) + {} ms scheduling grace",
            run.opts.block_timeout.as_millis(),
            run.opts.stall_grace.as_millis()
        ),
    ));
    out.push(check(
        "shm_clean",
        run.shm_leftovers
            .iter()
            .map(|n| format!("/dev/shm/{n} left behind"))
            .collect(),
        format!("nothing of namespace {} left in /dev/shm", run.namespace),
    ));
    out.push(check(
        "progress",
        progress,
        "both topics delivered messages".into(),
    ));
    out
}
