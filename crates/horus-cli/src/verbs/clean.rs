//! `horus clean`: remove what dead processes left in `/dev/shm`.
//!
//! Only segments and statistics tables whose every owner is dead are removed; anything a live
//! process uses is kept and listed. Covers topic segments, service segments (tables, request
//! and response channels), scheduler statistics tables, the host's tf buffer and tensor pools.

use crate::output::Output;
use clap::Args;
use horus::clean::{SegmentFate, StatsFate};
use horus_tensor::PoolFate;
use horus_tf::StaleOutcome;
use serde_json::json;
use std::process::ExitCode;

/// Remove stale topic segments, service segments, scheduler statistics tables and tensor pools
/// of a namespace.
#[derive(Debug, Args)]
pub(crate) struct Clean {
    /// Namespace to clean (default: `HORUS_NAMESPACE`, else one per user).
    #[arg(long)]
    namespace: Option<String>,
}

pub(crate) fn run(args: Clean, out: &Output) -> anyhow::Result<ExitCode> {
    let ns = args.namespace.unwrap_or_else(horus::namespace);
    let report = horus::clean::clean_stale(&ns)?;
    // The host's tf buffer (horus-tf), judged by the same horus-shm cleanup.
    let tf = horus_tf::remove_stale(&ns)?;
    let tf_removed = matches!(
        tf,
        StaleOutcome::Removed | StaleOutcome::RemovedUninitialised
    );
    // Tensor pools (horus-tensor): removed when every holder is dead.
    let pools: Vec<_> = horus_tensor::remove_stale_pools(&ns)?
        .iter()
        .map(|r| (r.path.display().to_string(), pool_fate(&r.fate)))
        .collect();
    let pools_removed = pools
        .iter()
        .filter(|(_, f)| f.starts_with("removed"))
        .count();
    let removed = report.removed() + usize::from(tf_removed) + pools_removed;
    let tf_path = format!("/dev/shm{}", horus_tf::segment_name(&ns)?);
    let topics: Vec<_> = report
        .topics
        .iter()
        .map(|r| (r.path.display().to_string(), segment_fate(&r.fate)))
        .collect();
    let services: Vec<_> = report
        .services
        .iter()
        .map(|r| (r.path.display().to_string(), service_fate(&ns, r)))
        .collect();
    let schedulers: Vec<_> = report
        .schedulers
        .iter()
        .map(|(p, f)| (p.display().to_string(), stats_fate(f)))
        .collect();
    if out.is_json() {
        let list = |v: &[(String, String)]| {
            v.iter()
                .map(|(path, fate)| json!({ "path": path, "fate": fate }))
                .collect::<Vec<_>>()
        };
        out.json_line(&json!({
            "namespace": ns,
            "removed": removed,
            "segments": list(&topics),
            "services": list(&services),
            "schedulers": list(&schedulers),
            "logs": report.logs,
            "bridge_status": report.bridge_status,
            "tf_buffer": (tf != StaleOutcome::Absent)
                .then(|| json!({ "path": tf_path, "fate": tf_fate(&tf) })),
            "tensor_pools": list(&pools),
        }));
    } else {
        for (path, fate) in topics
            .iter()
            .chain(&services)
            .chain(&schedulers)
            .chain(&pools)
        {
            println!("{fate:<24} {path}");
        }
        for path in &report.logs {
            println!("{:<24} {}", "removed (dead log)", path.display());
        }
        for path in &report.bridge_status {
            println!("{:<24} {}", "removed (dead bridge)", path.display());
        }
        if tf != StaleOutcome::Absent {
            println!("{:<24} {tf_path}", tf_fate(&tf));
        }
        println!("namespace {ns}: removed {removed}");
    }
    Ok(ExitCode::SUCCESS)
}

fn segment_fate(f: &SegmentFate) -> String {
    match f {
        SegmentFate::Removed => "removed".into(),
        SegmentFate::RemovedUninitialised => "removed (uninitialised)".into(),
        SegmentFate::Live {
            publishers,
            subscribers,
        } => format!("live ({publishers} pub, {subscribers} sub)"),
        SegmentFate::Initialising => "kept (initialising)".into(),
        SegmentFate::Unreadable(why) => format!("kept (unreadable: {why})"),
    }
}

/// A service segment's fate; a live one names its clients and servers (a table, the request
/// channel) or its servers and client (a response channel).
fn service_fate(ns: &str, r: &horus::clean::SegmentReport) -> String {
    // Segment file names map `/` to `~`: `horus.<ns>.sr.<service>~<client>`.
    let response = format!("horus.{}.sr.", ns.trim_matches('/').replace('/', "~"));
    let is_response = r
        .path
        .file_name()
        .is_some_and(|f| f.to_string_lossy().starts_with(&response));
    match &r.fate {
        SegmentFate::Live {
            publishers,
            subscribers,
        } if is_response => format!("live ({publishers} server, {subscribers} client)"),
        SegmentFate::Live {
            publishers,
            subscribers,
        } => format!("live ({publishers} client, {subscribers} server)"),
        other => segment_fate(other),
    }
}

fn tf_fate(f: &StaleOutcome) -> String {
    match f {
        StaleOutcome::Absent => "absent".into(),
        StaleOutcome::Removed => "removed".into(),
        StaleOutcome::RemovedUninitialised => "removed (uninitialised)".into(),
        StaleOutcome::Live { participants } => format!("live ({participants} processes)"),
        StaleOutcome::Initialising => "kept (initialising)".into(),
        StaleOutcome::Unreadable(why) => format!("kept (unreadable: {why})"),
    }
}

fn pool_fate(f: &PoolFate) -> String {
    match f {
        PoolFate::Removed => "removed".into(),
        PoolFate::RemovedUninitialised => "removed (uninitialised)".into(),
        PoolFate::Live { holders } => format!("live ({holders} holders)"),
        PoolFate::Initialising => "kept (initialising)".into(),
        PoolFate::Unreadable(why) => format!("kept (unreadable: {why})"),
    }
}

fn stats_fate(f: &StatsFate) -> String {
    match f {
        StatsFate::Removed => "removed".into(),
        StatsFate::Live { pid } => format!("live (pid {pid})"),
        StatsFate::Error(e) => format!("kept ({e})"),
    }
}
