//! After the run: reads every report and send log, reconciles (see
//! [`crate::analysis`]), decides the checks, prints the figures and writes
//! the JSON.

use std::path::Path;
use std::time::Duration;

use serde::Serialize;
use serde_json::json;

use crate::analysis::{self, PubInput, SubResult};
use crate::child::{Role, TopicKind};
use crate::options::Options;
use crate::report::{self, PubReport, SendLog, SubReport};

/// Language of a child.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub(crate) enum Lang {
    Rust,
    Python,
}

/// What became of a child.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub(crate) enum Fate {
    Running,
    /// SIGKILLed by the orchestrator; some were left as zombies a while.
    Killed {
        reaped_late: bool,
    },
    /// Exited without being asked to (or failed while stopping).
    ExitedUnexpectedly(String),
    /// Exited 0 when asked to stop.
    Stopped,
    /// Had to be killed at the end.
    DidNotStop,
}

/// One child of the run.
#[derive(Clone, Debug)]
pub(crate) struct Record {
    pub(crate) id: u64,
    pub(crate) role: Role,
    pub(crate) topic: TopicKind,
    pub(crate) lang: Lang,
    pub(crate) pid: u32,
    pub(crate) fate: Fate,
}

/// Everything the summary needs.
pub(crate) struct Run<'a> {
    pub(crate) opts: &'a Options,
    pub(crate) namespace: &'a str,
    pub(crate) dir: &'a Path,
    /// Why Python children were disabled (None: they ran).
    pub(crate) python: Option<String>,
    pub(crate) records: &'a [Record],
    pub(crate) elapsed: Duration,
    pub(crate) shm_leftovers: Vec<String>,
}

/// Figures of one topic.
#[derive(Clone, Debug, Default, Serialize)]
struct Figures {
    publishers_started: [u64; 2],
    subscribers_started: [u64; 2],
    killed: u64,
    reaped_late: u64,
    never_reported: u64,
    sent: u64,
    received: u64,
    pairs: u64,
    window_strict: u64,
    missing_strict: i64,
    missing_loose: i64,
    overrun: u64,
    malformed: u64,
    corrupt: u64,
    gaps: u64,
    out_of_order: u64,
    timed_out: u64,
    rejected: u64,
    pool_exhausted: u64,
    subscribers_reconciled: u64,
    subscribers_checked: u64,
    max_send_ms: f64,
    max_recv_ms: f64,
}

#[derive(Clone, Debug, Serialize)]
struct Check {
    name: &'static str,
    passed: bool,
    detail: String,
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

struct TopicData {
    kind: TopicKind,
    figures: Figures,
    subs: Vec<(u64, SubResult)>,
    pub_reports: Vec<PubReport>,
    sub_reports: Vec<SubReport>,
}

fn ms(ns: u64) -> f64 {
    ns as f64 / 1e6
}

fn lang_of(run: &Run<'_>, id: u64) -> String {
    run.records
        .iter()
        .find(|r| r.id == id)
        .map(|r| format!("{:?}", r.lang).to_lowercase())
        .unwrap_or_default()
}

fn gather(run: &Run<'_>, kind: TopicKind) -> anyhow::Result<TopicData> {
    let mut f = Figures::default();
    let mut pubs: Vec<(u64, Option<PubReport>, SendLog)> = Vec::new();
    let mut sub_reports = Vec::new();
    for r in run.records.iter().filter(|r| r.topic == kind) {
        let lang = usize::from(r.lang == Lang::Python);
        if let Fate::Killed { reaped_late } = r.fate {
            f.killed += 1;
            f.reaped_late += u64::from(reaped_late);
        }
        let path = report::report_path(run.dir, r.id);
        match r.role {
            Role::Pub => {
                f.publishers_started[lang] += 1;
                let rep: Option<PubReport> = report::read(&path)?;
                f.never_reported += u64::from(rep.is_none());
                let log = SendLog::read(&report::log_path(run.dir, r.id))?;
                pubs.push((r.id, rep, log));
            }
            Role::Sub => {
                f.subscribers_started[lang] += 1;
                match report::read::<SubReport>(&path)? {
                    Some(rep) => sub_reports.push(rep),
                    None => f.never_reported += 1,
                }
            }
        }
    }
    let inputs: Vec<PubInput<'_>> = pubs
        .iter()
        .map(|(id, _, log)| PubInput { id: *id, log })
        .collect();
    for (_, rep, log) in &pubs {
        f.sent += log.committed;
        if let Some(rep) = rep {
            f.timed_out += rep.timed_out;
            f.rejected += rep.rejected;
            f.pool_exhausted += rep.pool_exhausted;
            f.max_send_ms = f.max_send_ms.max(ms(rep.max_call_ns));
        }
    }
    let mut subs = Vec::new();
    for s in &sub_reports {
        let r = analysis::subscriber(&inputs, s);
        f.received += s.received;
        f.overrun += s.overrun;
        f.malformed += s.malformed;
        f.corrupt += s.corrupt;
        f.max_recv_ms = f.max_recv_ms.max(ms(s.max_call_ns));
        f.pairs += r.pairs.len() as u64;
        f.window_strict += r.pairs.iter().map(|p| p.window_strict).sum::<u64>();
        f.missing_strict += r.missing_strict;
        f.missing_loose += r.missing_loose;
        f.gaps += r.pairs.iter().map(|p| p.gaps).sum::<u64>();
        f.out_of_order += r.pairs.iter().map(|p| p.out_of_order).sum::<u64>();
        f.subscribers_checked += 1;
        f.subscribers_reconciled += u64::from(r.reconciled);
        subs.push((s.id, r));
    }
    Ok(TopicData {
        kind,
        figures: f,
        subs,
        pub_reports: pubs.into_iter().filter_map(|(_, r, _)| r).collect(),
        sub_reports,
    })
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

fn checks(run: &Run<'_>, topics: &[TopicData]) -> Vec<Check> {
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
    let limit = run.opts.block_timeout + run.opts.stall_grace;
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
            if p.max_call_ns > limit.as_nanos() as u64 {
                stall.push(format!(
                    "pub {}: a send took {:.1} ms",
                    p.id,
                    ms(p.max_call_ns)
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
            if s.max_call_ns > limit.as_nanos() as u64 {
                stall.push(format!(
                    "sub {}: a recv overran its timeout by {:.1} ms",
                    s.id,
                    ms(s.max_call_ns)
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
            "no send or recv call stalled beyond the Block timeout ({} ms) + {} ms scheduling grace",
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

const METHOD: &str = "\
method: every message carries (publisher id, sequence number, send stamp, checksum); each
publisher logs the stamp of every message before sending it (pwrite, survives SIGKILL) and
each subscriber reports, every 50 ms, per publisher: first/last sequence, receipts, gaps,
and receipts before/after its join. For a pair, 'sent while both were alive' is the run of
the publisher's sequence numbers from the first stamped after the subscriber joined to the
last the subscriber received (killed) or the publisher's last send (drained at the end),
with a loose bound that also admits messages that may have been in flight at either edge.
A subscriber reconciles when its counted losses (overrun + malformed) lie between the sums
of its strict and loose missing counts; under Block every strict missing count, gap and
overrun must be zero.";

/// Prints the figures and checks, writes the JSON; returns whether every
/// check passed.
pub(crate) fn report(run: &Run<'_>) -> anyhow::Result<bool> {
    let topics = TopicKind::ALL
        .into_iter()
        .map(|k| gather(run, k))
        .collect::<anyhow::Result<Vec<_>>>()?;
    let checks = checks(run, &topics);
    let passed = checks.iter().all(|c| c.passed);

    println!("\n{METHOD}\n");
    println!(
        "chaos: {:.1} s, seed {}, {} processes started",
        run.elapsed.as_secs_f64(),
        run.opts.seed,
        run.records.len()
    );
    if let Some(why) = &run.python {
        println!("chaos: !!! PYTHON CHILDREN DISABLED ({why}): this was a Rust-only run !!!");
    }
    print_table(&topics);
    println!();
    for c in &checks {
        println!(
            "  [{}] {:<15} {}",
            if c.passed { " ok " } else { "FAIL" },
            c.name,
            c.detail
        );
    }
    println!(
        "\nchaos: {}",
        if passed {
            "all checks passed".to_string()
        } else {
            let failed: Vec<&str> = checks
                .iter()
                .filter(|c| !c.passed)
                .map(|c| c.name)
                .collect();
            format!("FAILED: {}", failed.join(", "))
        }
    );

    if let Some(path) = &run.opts.json {
        let failing: Vec<serde_json::Value> = topics
            .iter()
            .flat_map(|t| {
                t.subs
                    .iter()
                    .filter(|(_, r)| {
                        !r.reconciled
                            || (t.kind == TopicKind::Block && !analysis::block_lossless(r))
                    })
                    .take(50)
                    .map(move |(_, r)| json!({"topic": t.kind.name(), "result": r}))
            })
            .collect();
        let doc = json!({
            "benchmark": "chaos",
            "passed": passed,
            "config": {
                "seconds": run.opts.seconds,
                "publishers_per_topic": run.opts.publishers,
                "subscribers_per_topic": run.opts.subscribers,
                "python_per_topic": run.opts.python,
                "seed": run.opts.seed,
                "kill_min_ms": run.opts.kill_min.as_millis() as u64,
                "kill_max_ms": run.opts.kill_max.as_millis() as u64,
                "block_timeout_ms": run.opts.block_timeout.as_millis() as u64,
                "stall_grace_ms": run.opts.stall_grace.as_millis() as u64,
                "namespace": run.namespace,
            },
            "python": {"enabled": run.python.is_none(), "reason_disabled": run.python},
            "elapsed_s": run.elapsed.as_secs_f64(),
            "method": METHOD,
            "topics": topics.iter().map(|t| (t.kind.name(), &t.figures)).collect::<std::collections::BTreeMap<_, _>>(),
            "checks": checks,
            "errors": checks.iter().filter(|c| !c.passed).map(|c| format!("{}: {}", c.name, c.detail)).collect::<Vec<_>>(),
            "failing_subscribers": failing,
            "shm_leftovers": run.shm_leftovers,
        });
        std::fs::write(path, serde_json::to_vec_pretty(&doc)?)?;
        println!("chaos: JSON written to {}", path.display());
    }
    Ok(passed)
}

/// A table row: label and how to show a topic's figure.
type Row = (&'static str, fn(&Figures) -> String);

fn print_table(topics: &[TopicData]) {
    let rows: [Row; 17] = [
        ("publishers started (rust/python)", |f| {
            format!("{}/{}", f.publishers_started[0], f.publishers_started[1])
        }),
        ("subscribers started (rust/python)", |f| {
            format!("{}/{}", f.subscribers_started[0], f.subscribers_started[1])
        }),
        ("SIGKILLed (reaped late)", |f| {
            format!("{} ({})", f.killed, f.reaped_late)
        }),
        ("killed before first report", |f| {
            f.never_reported.to_string()
        }),
        ("messages sent", |f| f.sent.to_string()),
        ("messages received (all subscribers)", |f| {
            f.received.to_string()
        }),
        ("publisher–subscriber pairs", |f| f.pairs.to_string()),
        ("sent while both alive (strict, Σ pairs)", |f| {
            f.window_strict.to_string()
        }),
        ("missing: strict .. loose", |f| {
            format!("{} .. {}", f.missing_strict, f.missing_loose)
        }),
        ("counted overruns", |f| f.overrun.to_string()),
        ("sequence gaps", |f| f.gaps.to_string()),
        ("out of order / corrupt / malformed", |f| {
            format!("{} / {} / {}", f.out_of_order, f.corrupt, f.malformed)
        }),
        ("sends timed out (Block) / rejected", |f| {
            format!("{} / {}", f.timed_out, f.rejected)
        }),
        ("pool exhausted", |f| f.pool_exhausted.to_string()),
        ("subscribers reconciled", |f| {
            format!("{}/{}", f.subscribers_reconciled, f.subscribers_checked)
        }),
        ("longest send (ms)", |f| format!("{:.1}", f.max_send_ms)),
        ("longest recv beyond its timeout (ms)", |f| {
            format!("{:.1}", f.max_recv_ms)
        }),
    ];
    println!(
        "| {:<42} | {:>15} | {:>15} |",
        "",
        topics[0].kind.name(),
        topics[1].kind.name()
    );
    println!("|{}|{}|{}|", "-".repeat(44), "-".repeat(17), "-".repeat(17));
    for (label, f) in rows {
        println!(
            "| {:<42} | {:>15} | {:>15} |",
            label,
            f(&topics[0].figures),
            f(&topics[1].figures)
        );
    }
}
