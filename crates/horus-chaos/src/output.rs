//! What a run prints and the JSON it writes.

use std::path::Path;

use serde_json::json;

use crate::analysis;
use crate::checks::Check;
use crate::child::TopicKind;
use crate::summary::{Figures, Run, TopicData};

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

/// Prints the method, the figures of both topics and the checks.
pub(crate) fn print(run: &Run<'_>, topics: &[TopicData], checks: &[Check]) {
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
    print_table(topics);
    println!();
    for c in checks {
        println!(
            "  [{}] {:<16} {}",
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
}

/// Writes the JSON document of the run to `path`.
pub(crate) fn write_json(
    path: &Path,
    run: &Run<'_>,
    topics: &[TopicData],
    checks: &[Check],
) -> anyhow::Result<()> {
    let passed = checks.iter().all(|c| c.passed);
    let failing: Vec<serde_json::Value> = topics
        .iter()
        .flat_map(|t| {
            t.subs
                .iter()
                .filter(|(_, r)| {
                    !r.reconciled || (t.kind == TopicKind::Block && !analysis::block_lossless(r))
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
    Ok(())
}

/// A table row: label and how to show a topic's figure.
type Row = (&'static str, fn(&Figures) -> String);

fn print_table(topics: &[TopicData]) {
    let rows: [Row; 19] = [
        ("publishers started (rust/python)", |f| {
            format!("{}/{}", f.publishers_started[0], f.publishers_started[1])
        }),
        ("subscribers started (rust/python)", |f| {
            format!("{}/{}", f.subscribers_started[0], f.subscribers_started[1])
        }),
        ("SIGKILLed (left as zombies 1-2 s)", |f| {
            format!("{} ({})", f.killed, f.zombies)
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
        ("longest pause between two recv calls (ms)", |f| {
            format!("{:.1}", f.max_pause_ms)
        }),
        ("longest join: open topic + take a place (ms)", |f| {
            format!("{:.1}", f.max_join_ms)
        }),
    ];
    println!(
        "| {:<44} | {:>15} | {:>15} |",
        "",
        topics[0].kind.name(),
        topics[1].kind.name()
    );
    println!("|{}|{}|{}|", "-".repeat(46), "-".repeat(17), "-".repeat(17));
    for (label, f) in rows {
        println!(
            "| {:<44} | {:>15} | {:>15} |",
            label,
            f(&topics[0].figures),
            f(&topics[1].figures)
        );
    }
}
