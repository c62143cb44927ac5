//! After the run: reads every report and send log, reconciles them (see
//! [`crate::analysis`]), then has the checks decided ([`crate::checks`]) and
//! the figures printed and written ([`crate::output`]).

use std::path::Path;
use std::time::Duration;

use serde::Serialize;

use crate::analysis::{self, PubInput, SubResult};
use crate::child::{Role, TopicKind};
use crate::options::Options;
use crate::report::{self, PubReport, SendLog, SubReport};
use crate::{checks, output};

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
    /// SIGKILLed by the orchestrator; some were reaped late, and seen in
    /// state Z (zombie) just before being reaped.
    Killed {
        reaped_late: bool,
        seen_as_zombie: bool,
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
pub(crate) struct Figures {
    pub(crate) publishers_started: [u64; 2],
    pub(crate) subscribers_started: [u64; 2],
    pub(crate) killed: u64,
    pub(crate) zombies: u64,
    pub(crate) never_reported: u64,
    pub(crate) sent: u64,
    pub(crate) received: u64,
    pub(crate) pairs: u64,
    pub(crate) window_strict: u64,
    pub(crate) missing_strict: i64,
    pub(crate) missing_loose: i64,
    pub(crate) overrun: u64,
    pub(crate) malformed: u64,
    pub(crate) corrupt: u64,
    pub(crate) gaps: u64,
    pub(crate) out_of_order: u64,
    pub(crate) timed_out: u64,
    pub(crate) rejected: u64,
    pub(crate) pool_exhausted: u64,
    pub(crate) subscribers_reconciled: u64,
    pub(crate) subscribers_checked: u64,
    pub(crate) max_send_ms: f64,
    pub(crate) max_recv_ms: f64,
    /// Longest a subscriber spent between two `recv` calls (not reading).
    pub(crate) max_pause_ms: f64,
    pub(crate) max_join_ms: f64,
}

pub(crate) struct TopicData {
    pub(crate) kind: TopicKind,
    pub(crate) figures: Figures,
    pub(crate) subs: Vec<(u64, SubResult)>,
    pub(crate) pub_reports: Vec<PubReport>,
    pub(crate) sub_reports: Vec<SubReport>,
}

pub(crate) fn ms(ns: u64) -> f64 {
    ns as f64 / 1e6
}

pub(crate) fn lang_of(run: &Run<'_>, id: u64) -> String {
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
        if let Fate::Killed { seen_as_zombie, .. } = r.fate {
            f.killed += 1;
            f.zombies += u64::from(seen_as_zombie);
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
            f.max_join_ms = f.max_join_ms.max(ms(rep.join_ns));
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
        f.max_pause_ms = f.max_pause_ms.max(ms(s.max_pause_ns));
        f.max_join_ms = f.max_join_ms.max(ms(s.join_ns));
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

/// Prints the figures and checks, writes the JSON; returns whether every
/// check passed.
pub(crate) fn report(run: &Run<'_>) -> anyhow::Result<bool> {
    let topics = TopicKind::ALL
        .into_iter()
        .map(|k| gather(run, k))
        .collect::<anyhow::Result<Vec<_>>>()?;
    let checks = checks::checks(run, &topics);
    let passed = checks.iter().all(|c| c.passed);
    output::print(run, &topics, &checks);
    if let Some(path) = &run.opts.json {
        output::write_json(path, run, &topics, &checks)?;
        println!("chaos: JSON written to {}", path.display());
    }
    Ok(passed)
}
