//! `horus doctor`: what a namespace has in `/dev/shm` (live or stale), which other namespaces
//! are there, and whether this machine lets horus do what it needs (locked memory, SCHED_FIFO,
//! `membarrier`, `/dev/shm` space). Exit status 1 when something is wrong, with advice.
//!
//! Read-only: nothing in `/dev/shm` is modified (dead endpoints are reported, never
//! reclaimed); the only probe with an effect sets SCHED_FIFO on a thread of its own.

mod shm;
mod system;

use std::process::ExitCode;

use clap::Args;
use serde::Serialize;
use serde_json::json;

use crate::output::Output;
use crate::table::Table;
use shm::{Entry, State};

/// Check the namespace's shared memory and the machine's limits.
#[derive(Debug, Args)]
pub(crate) struct Doctor {
    /// Namespace (default: `HORUS_NAMESPACE`, else one per user).
    #[arg(long)]
    namespace: Option<String>,
}

/// How a check came out.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
enum Status {
    Ok,
    /// Worth knowing; horus works (real-time nodes may fall back).
    Warn,
    /// Something is wrong: exit status 1.
    Fail,
}

#[derive(Debug, Serialize)]
struct Check {
    check: &'static str,
    status: Status,
    detail: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    advice: Option<String>,
}

fn check(check: &'static str, status: Status, detail: String, advice: Option<String>) -> Check {
    Check {
        check,
        status,
        detail,
        advice,
    }
}

pub(crate) fn run(args: Doctor, out: &Output) -> anyhow::Result<ExitCode> {
    let from_env = std::env::var("HORUS_NAMESPACE").is_ok_and(|v| !v.is_empty());
    let (ns, source) = match args.namespace {
        Some(ns) => (ns, "--namespace"),
        None if from_env => (horus::namespace(), "HORUS_NAMESPACE"),
        None => (horus::namespace(), "default: one per user"),
    };
    let mut checks = Vec::new();
    let files = match shm::horus_files() {
        Ok(f) => f,
        Err(e) => {
            checks.push(check(
                "shm",
                Status::Fail,
                format!("cannot list {}: {e}", shm::SHM_DIR),
                Some("horus needs a tmpfs mounted on /dev/shm".into()),
            ));
            Vec::new()
        }
    };
    let (entries, others) = shm::survey(&ns, &files)?;
    files_checks(&ns, &entries, &mut checks);
    let space = system::space(shm::SHM_DIR);
    space_check(&space, &mut checks);
    let memlock = system::memlock();
    let rtprio = system::rtprio();
    let cap_nice = system::capability(system::CAP_SYS_NICE);
    let cap_lock = system::capability(system::CAP_IPC_LOCK);
    let fifo = system::sched_fifo_allowed();
    let membarrier = system::membarrier_global();
    system_checks(
        (memlock, cap_lock),
        (rtprio, cap_nice),
        &fifo,
        &membarrier,
        &mut checks,
    );
    let failed = checks.iter().any(|c| c.status == Status::Fail);

    if out.is_json() {
        out.json_line(&json!({
            "namespace": ns,
            "namespace_source": source,
            "files": entries,
            "other_namespaces": others,
            "system": {
                "shm_space": space.as_ref().ok(),
                "memlock": memlock,
                "rtprio": rtprio,
                "cap_sys_nice": cap_nice,
                "cap_ipc_lock": cap_lock,
                "sched_fifo_allowed": fifo.is_ok(),
                "sched_fifo_error": fifo.as_ref().err(),
                "membarrier_global": membarrier.as_ref().ok(),
            },
            "checks": checks,
            "ok": !failed,
        }));
    } else {
        print_text(&ns, source, &entries, &others, &checks);
    }
    Ok(if failed {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

fn files_checks(ns: &str, entries: &[Entry], checks: &mut Vec<Check>) {
    let stale: Vec<&Entry> = entries
        .iter()
        .filter(|e| matches!(e.state, State::Stale(_)))
        .collect();
    let unreadable: Vec<&Entry> = entries
        .iter()
        .filter(|e| matches!(e.state, State::Unreadable(_)))
        .collect();
    let bytes: u64 = entries.iter().map(|e| e.bytes).sum();
    checks.push(check(
        "namespace files",
        Status::Ok,
        format!("{} file(s), {} in /dev/shm", entries.len(), human(bytes)),
        None,
    ));
    if !stale.is_empty() {
        checks.push(check(
            "stale files",
            Status::Fail,
            format!(
                "{} file(s) whose owners are all dead: {}",
                stale.len(),
                names(&stale)
            ),
            Some(format!("run `horus clean --namespace {ns}`")),
        ));
    }
    if !unreadable.is_empty() {
        checks.push(check(
            "unreadable files",
            Status::Fail,
            format!(
                "{} file(s) this horus cannot read (another version, or garbage): {}",
                unreadable.len(),
                names(&unreadable)
            ),
            Some("`horus clean` keeps them; remove them by hand once nothing uses them".into()),
        ));
    }
}

fn names(entries: &[&Entry]) -> String {
    entries
        .iter()
        .map(|e| e.file.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}

fn space_check(space: &Result<system::Space, String>, checks: &mut Vec<Check>) {
    match space {
        Ok(s) => {
            let pct = if s.total_bytes == 0 {
                0.0
            } else {
                100.0 * s.free_bytes as f64 / s.total_bytes as f64
            };
            let detail = format!(
                "{} free of {} ({pct:.0} %)",
                human(s.free_bytes),
                human(s.total_bytes)
            );
            let (status, advice) = if s.free_bytes < 16 << 20 || pct < 5.0 {
                (
                    Status::Fail,
                    Some(
                        "free space in /dev/shm (stale files? `horus clean`), or remount it larger"
                            .into(),
                    ),
                )
            } else if pct < 20.0 {
                (Status::Warn, None)
            } else {
                (Status::Ok, None)
            };
            checks.push(check("shm space", status, detail, advice));
        }
        Err(e) => checks.push(check(
            "shm space",
            Status::Fail,
            format!("statvfs {}: {e}", shm::SHM_DIR),
            Some("horus needs a tmpfs mounted on /dev/shm".into()),
        )),
    }
}

fn limit_text(l: Option<system::Limit>) -> String {
    match l {
        None => "unknown".into(),
        Some(l) => {
            let v = |x: Option<u64>| x.map_or("unlimited".into(), |b| b.to_string());
            format!("soft {}, hard {}", v(l.soft), v(l.hard))
        }
    }
}

fn yes_no(v: Option<bool>) -> &'static str {
    v.map_or("unknown", |c| if c { "yes" } else { "no" })
}

fn system_checks(
    (memlock, cap_lock): (Option<system::Limit>, Option<bool>),
    (rtprio, cap_nice): (Option<system::Limit>, Option<bool>),
    fifo: &Result<(), String>,
    membarrier: &Result<bool, String>,
    checks: &mut Vec<Check>,
) {
    let enough = memlock.is_some_and(|l| l.soft.is_none()) || cap_lock == Some(true);
    checks.push(check(
        "RLIMIT_MEMLOCK",
        if enough { Status::Ok } else { Status::Warn },
        format!(
            "{} (bytes); CAP_IPC_LOCK {}",
            limit_text(memlock),
            yes_no(cap_lock)
        ),
        (!enough).then(|| {
            "schedulers with real-time nodes lock their memory (mlockall) when allowed; raise it \
             with `ulimit -l unlimited` or a memlock line in /etc/security/limits.conf"
                .into()
        }),
    ));
    let detail = format!(
        "RLIMIT_RTPRIO {}; CAP_SYS_NICE {}",
        limit_text(rtprio),
        yes_no(cap_nice)
    );
    match fifo {
        Ok(()) => checks.push(check(
            "SCHED_FIFO",
            Status::Ok,
            format!("allowed ({detail})"),
            None,
        )),
        Err(e) => checks.push(check(
            "SCHED_FIFO",
            Status::Warn,
            format!("refused: {e} ({detail})"),
            Some(
                "real-time nodes will run at normal priority; allow it with an rtprio line in \
                 /etc/security/limits.conf or CAP_SYS_NICE"
                    .into(),
            ),
        )),
    }
    match membarrier {
        Ok(true) => checks.push(check(
            "membarrier",
            Status::Ok,
            "MEMBARRIER_CMD_GLOBAL available".into(),
            None,
        )),
        Ok(false) | Err(_) => checks.push(check(
            "membarrier",
            Status::Warn,
            format!(
                "MEMBARRIER_CMD_GLOBAL not available{}",
                membarrier
                    .as_ref()
                    .err()
                    .map_or(String::new(), |e| format!(": {e}"))
            ),
            Some("blocking (futex) subscribers rely on it; use busy-poll subscribers".into()),
        )),
    }
}

/// Bytes for people: `512 B`, `12.0 KiB`, `3.4 MiB`, `1.2 GiB`.
fn human(b: u64) -> String {
    let f = b as f64;
    if b < 1 << 10 {
        format!("{b} B")
    } else if b < 1 << 20 {
        format!("{:.1} KiB", f / 1024.0)
    } else if b < 1 << 30 {
        format!("{:.1} MiB", f / (1024.0 * 1024.0))
    } else {
        format!("{:.1} GiB", f / (1024.0 * 1024.0 * 1024.0))
    }
}

fn print_text(
    ns: &str,
    source: &str,
    entries: &[Entry],
    others: &[shm::OtherNamespace],
    checks: &[Check],
) {
    println!("namespace {ns} ({source})");
    println!();
    if entries.is_empty() {
        println!("nothing of this namespace in /dev/shm");
    } else {
        let mut t = Table::new(&["kind", "name", ">size", "state", "detail"]);
        for e in entries {
            let (state, detail) = match &e.state {
                State::Live(d) => ("live", d.clone()),
                State::Stale(d) => ("STALE", d.clone()),
                State::Initialising => ("initialising", String::new()),
                State::Unreadable(d) => ("UNREADABLE", d.clone()),
                State::NotJudged => ("-", "not judged".into()),
            };
            t.row(vec![
                e.kind.into(),
                e.name.clone(),
                human(e.bytes),
                state.into(),
                detail,
            ]);
        }
        t.print();
    }
    if !others.is_empty() {
        println!();
        let list: Vec<String> = others
            .iter()
            .map(|o| format!("{} ({} files, {})", o.namespace, o.files, human(o.bytes)))
            .collect();
        println!("other namespaces: {}", list.join(", "));
    }
    println!();
    let mut t = Table::new(&["", "check", "detail"]);
    for c in checks {
        let status = match c.status {
            Status::Ok => "ok",
            Status::Warn => "warn",
            Status::Fail => "FAIL",
        };
        t.row(vec![status.into(), c.check.into(), c.detail.clone()]);
    }
    t.print();
    for c in checks.iter().filter(|c| c.advice.is_some()) {
        println!("{}: {}", c.check, c.advice.as_deref().unwrap_or_default());
    }
}
