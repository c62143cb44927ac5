//! What a namespace has in `/dev/shm`, judged without changing anything: topic and service
//! channels by their members' processes, service tables by their clients' and servers'
//! processes, scheduler statistics tables by their writer, tensor pools by their holders'
//! processes (horus-tensor's judge: the rule `horus clean` removes them by). Also which other
//! namespaces have files there.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use horus::sched::StatsVerdict;
use horus_shm::{is_young, Channel, OpenError, ProcessId, Unopened, Verdict};
use horus_tensor::PoolVerdict;
use serde::Serialize;

/// Directory POSIX shared memory lives in.
pub(super) const SHM_DIR: &str = "/dev/shm";

/// The kinds of horus file, by the kind part of `horus.<ns>.<kind>.<name>`.
const KINDS: [(&str, &str); 7] = [
    ("t", "topic"),
    ("sv", "service"),
    ("sq", "service requests"),
    ("sr", "service responses"),
    ("sched", "scheduler"),
    ("tp", "tensor pool"),
    ("log", "log"),
];

/// What a file's owners say about it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case", tag = "state", content = "detail")]
pub(super) enum State {
    /// Some owner is alive.
    Live(String),
    /// Every owner is dead (or it has none): `horus clean` removes it.
    Stale(String),
    /// Being created right now.
    Initialising,
    /// Not a file this build can read; `horus clean` keeps it.
    Unreadable(String),
    /// A kind doctor does not judge.
    NotJudged,
}

/// One file of the namespace.
#[derive(Clone, Debug, Serialize)]
pub(super) struct Entry {
    pub(super) file: String,
    pub(super) kind: &'static str,
    pub(super) name: String,
    pub(super) bytes: u64,
    #[serde(flatten)]
    pub(super) state: State,
}

/// Files of another namespace.
#[derive(Clone, Debug, Default, Serialize)]
pub(super) struct OtherNamespace {
    pub(super) namespace: String,
    pub(super) files: usize,
    pub(super) bytes: u64,
}

/// Every `horus.*` file name in `/dev/shm`, sorted.
pub(super) fn horus_files() -> std::io::Result<Vec<String>> {
    let mut v: Vec<String> = std::fs::read_dir(SHM_DIR)?
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| n.starts_with("horus."))
        .collect();
    v.sort();
    Ok(v)
}

/// The file-name form of a namespace (`/` maps to `~`, as in segment names).
fn file_ns(ns: &str) -> String {
    ns.trim_matches('/').replace('/', "~")
}

/// Splits `horus.<ns>.<kind>.<name>` into (namespace, kind, name): the namespace is everything
/// before the first dot-separated part that is a known kind (namespaces may contain dots).
fn split(file: &str) -> Option<(String, &'static str, String)> {
    let rest = file.strip_prefix("horus.")?;
    let parts: Vec<&str> = rest.split('.').collect();
    for i in 1..parts.len().saturating_sub(1) {
        if let Some((_, kind)) = KINDS.iter().find(|(k, _)| *k == parts[i]) {
            return Some((parts[..i].join("."), kind, parts[i + 1..].join(".")));
        }
    }
    None
}

fn size_of(path: &Path) -> u64 {
    std::fs::metadata(path).map_or(0, |m| m.len())
}

/// A segment that could not be opened, judged as `horus clean` would (horus-shm's verdict).
fn unopened_state(e: &OpenError, path: &Path) -> State {
    verdict_state(Unopened::from(e).verdict(path))
}

/// A segment horus-shm judged as unopenable.
fn verdict_state(v: Verdict) -> State {
    match v {
        Verdict::Initialising => State::Initialising,
        Verdict::Uninitialised => State::Stale("its creator never initialised it".into()),
        Verdict::Gone => State::Stale("gone while looking".into()),
        Verdict::Unreadable(why) => State::Unreadable(why),
    }
}

/// A tensor pool, judged by horus-tensor with the rule `horus clean` removes it by.
fn pool_state(shm_name: &str, path: &Path) -> State {
    match horus_tensor::judge_pool(shm_name, path) {
        PoolVerdict::Live { holders } => State::Live(format!("{holders} holder(s)")),
        PoolVerdict::Stale { dead_holders: 0 } => State::Stale("no holder".into()),
        PoolVerdict::Stale { dead_holders } => {
            State::Stale(format!("{dead_holders} holder(s), all processes dead"))
        }
        PoolVerdict::Unopened(v) => verdict_state(v),
        PoolVerdict::Unreadable(why) => State::Unreadable(why),
    }
}

/// The namespace's files with their state, and the other namespaces present.
pub(super) fn survey(
    ns: &str,
    files: &[String],
) -> anyhow::Result<(Vec<Entry>, Vec<OtherNamespace>)> {
    let mine = file_ns(ns);
    let services = horus::list_services(ns)?;
    let mut entries = Vec::new();
    let mut others: BTreeMap<String, OtherNamespace> = BTreeMap::new();
    for file in files {
        let path = PathBuf::from(SHM_DIR).join(file);
        let bytes = size_of(&path);
        let Some((file_namespace, kind, name)) = split(file) else {
            let o = others.entry("(unrecognised)".into()).or_default();
            o.namespace = "(unrecognised)".into();
            o.files += 1;
            o.bytes += bytes;
            continue;
        };
        if file_namespace != mine {
            let o = others.entry(file_namespace.clone()).or_default();
            o.namespace = file_namespace;
            o.files += 1;
            o.bytes += bytes;
            continue;
        }
        let state = match kind {
            "topic" | "service requests" | "service responses" => {
                channel_state(&format!("/{file}"), &path)
            }
            "service" => match services.iter().find(|l| l.path == path) {
                Some(l) => table_state(&l.snapshot, &path),
                None => State::Stale("gone while looking".into()),
            },
            "scheduler" => scheduler_state(&path),
            "log" => log_state(file),
            "tensor pool" => pool_state(&format!("/{file}"), &path),
            _ => State::NotJudged,
        };
        entries.push(Entry {
            file: file.clone(),
            kind,
            name: name.replace('~', "/"),
            bytes,
            state,
        });
    }
    Ok((entries, others.into_values().collect()))
}

fn alive(pid: u32) -> bool {
    // Channel snapshots carry the pid only: a reused pid would count as alive (the safe side).
    ProcessId { pid, start_time: 0 }.is_alive()
}

fn channel_state(shm_name: &str, path: &Path) -> State {
    match Channel::open_existing(shm_name, None) {
        Ok(chan) => {
            let snap = chan.snapshot();
            let pids: Vec<u32> = snap
                .publishers
                .iter()
                .map(|p| p.pid)
                .chain(snap.subscribers.iter().map(|s| s.pid))
                .collect();
            let live = pids.iter().filter(|&&p| alive(p)).count();
            let (pubs, subs) = (snap.publishers.len(), snap.subscribers.len());
            if live > 0 {
                State::Live(format!("{pubs} pub, {subs} sub"))
            } else if pids.is_empty() && is_young(path) {
                // Just opened; its endpoints are joining.
                State::Initialising
            } else if pids.is_empty() {
                State::Stale("no endpoint".into())
            } else {
                State::Stale(format!("{} endpoint(s), all processes dead", pids.len()))
            }
        }
        Err(e) => unopened_state(&e, path),
    }
}

fn table_state(snapshot: &Result<horus::ServiceSnapshot, OpenError>, path: &Path) -> State {
    match snapshot {
        Ok(s) => {
            let live_servers = s.servers.iter().filter(|e| e.alive).count();
            let live_clients = s.clients.iter().filter(|e| e.alive).count();
            if live_servers + live_clients > 0 {
                State::Live(format!("{live_servers} server, {live_clients} client"))
            } else if s.servers.is_empty() && s.clients.is_empty() {
                State::Stale("no client or server".into())
            } else {
                State::Stale("every client and server process is dead".into())
            }
        }
        Err(e) => unopened_state(e, path),
    }
}

/// A process's log segment (horus-log): live while its process runs.
fn log_state(file: &str) -> State {
    match horus_log::LogSegment::open(&format!("/{file}")) {
        Ok(s) if s.is_alive() => State::Live(format!("pid {} ({})", s.pid(), s.process())),
        Ok(s) => State::Stale(format!(
            "its process {} ({}) is dead; `horus log` shows its last records",
            s.pid(),
            s.process()
        )),
        Err(e) => State::Unreadable(e.to_string()),
    }
}

/// A scheduler statistics table, judged by horus-sched with the rule `horus clean` removes it
/// by (its horus-shm owner word; horus-shm's verdict when unreadable).
fn scheduler_state(path: &Path) -> State {
    match horus::sched::judge_stats(path) {
        StatsVerdict::Live { pid } => match horus::sched::read_stats(path) {
            Ok(s) => State::Live(format!("pid {pid}, {} nodes", s.nodes.len())),
            Err(e) => State::Live(format!("pid {pid}; table unreadable: {e}")),
        },
        StatsVerdict::Stale { pid } => State::Stale(format!("its scheduler process {pid} is dead")),
        StatsVerdict::Unopened(v) => verdict_state(v),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_names_split_at_the_first_known_kind() {
        assert_eq!(
            split("horus.demo.t.base~cmd_vel"),
            Some(("demo".into(), "topic", "base~cmd_vel".into()))
        );
        assert_eq!(
            split("horus.a.b.sched.robot"),
            Some(("a.b".into(), "scheduler", "robot".into()))
        );
        assert_eq!(
            split("horus.u0.sr.math~add~00000000000000ff"),
            Some((
                "u0".into(),
                "service responses",
                "math~add~00000000000000ff".into()
            ))
        );
        assert_eq!(split("horus.weird"), None);
        assert_eq!(split("other.u0.t.x"), None);
    }
}
