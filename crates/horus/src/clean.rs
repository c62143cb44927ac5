//! Removing what dead processes left behind in `/dev/shm` (the library side
//! of `horus clean`).
//!
//! Topic segments and service segments are normally unlinked by their last
//! endpoint and a scheduler's statistics table by its scheduler; when every
//! owner was killed, nobody is left to do it. [`clean_stale`] removes those
//! of one namespace and never touches a segment or table a live process
//! uses.

use std::path::PathBuf;

pub use horus_shm::{CleanError, SegmentFate, SegmentReport};

/// What happened to one scheduler statistics table.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StatsFate {
    /// Its scheduler was dead: removed.
    Removed,
    /// Owned by a live scheduler (pid 0: one being created right now): kept.
    Live {
        /// The owner.
        pid: u32,
    },
    /// Could not be examined or removed: kept.
    Error(String),
}

/// What [`clean_stale`] found and did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CleanReport {
    /// Every topic segment of the namespace, with its fate.
    pub topics: Vec<SegmentReport>,
    /// Every service segment of the namespace, with its fate: tables
    /// (`horus.<ns>.sv.<service>`; when live, `publishers` counts clients
    /// and `subscribers` servers), request channels (`sq`: clients publish,
    /// servers subscribe) and response channels (`sr`, one per client:
    /// servers publish, the client subscribes).
    pub services: Vec<SegmentReport>,
    /// Every scheduler statistics table of the namespace, with its fate.
    pub schedulers: Vec<(PathBuf, StatsFate)>,
    /// Log segments (`horus.<ns>.log.<pid>`, horus-log) of dead processes, removed
    /// (their last records go with them; `horus log` shows them until then).
    pub logs: Vec<PathBuf>,
    /// The network bridge's status file (`horus.<ns>.bridge`, horus-zenoh) and its
    /// temporary files, when the bridge that wrote them is dead: removed.
    pub bridge_status: Vec<PathBuf>,
}

impl CleanReport {
    /// How many files were removed.
    pub fn removed(&self) -> usize {
        let topics = self
            .topics
            .iter()
            .chain(&self.services)
            .filter(|r| {
                matches!(
                    r.fate,
                    SegmentFate::Removed | SegmentFate::RemovedUninitialised
                )
            })
            .count();
        let schedulers = self
            .schedulers
            .iter()
            .filter(|(_, f)| *f == StatsFate::Removed)
            .count();
        topics + schedulers + self.logs.len() + self.bridge_status.len()
    }
}

/// Removes the topic segments, service segments and scheduler statistics
/// tables of `namespace` whose owners are all dead; reports everything it
/// found.
pub fn clean_stale(namespace: &str) -> Result<CleanReport, CleanError> {
    let topics = horus_shm::remove_stale_channels(namespace)?;
    // Tables first: reclaiming a dead client's place also removes its
    // response channel. Then the request channels, then response channels
    // left without a table.
    let mut services = crate::service::clean::clean_tables(namespace)?;
    services.extend(horus_shm::remove_stale_channels_of_kind(namespace, "sq")?);
    services.extend(crate::service::clean::clean_response_channels(namespace)?);
    let prefix = format!("horus.{namespace}.sched.");
    let dir = horus_sched::STATS_DIR;
    let mut paths: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(CleanError::List)?
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().starts_with(&prefix))
        .map(|e| e.path())
        .collect();
    paths.sort();
    let schedulers = paths
        .into_iter()
        .map(|path| {
            let fate = match horus_sched::remove_stale_stats(&path) {
                Ok(()) => StatsFate::Removed,
                Err(horus_sched::StatsFileError::InUse { pid, .. }) => StatsFate::Live { pid },
                Err(e) => StatsFate::Error(e.to_string()),
            };
            (path, fate)
        })
        .collect();
    let logs = match horus_log::remove_dead(namespace) {
        Ok(names) => names
            .into_iter()
            .map(|n| PathBuf::from(format!("/dev/shm{n}")))
            .collect(),
        Err(horus_log::LogError::List(e)) => return Err(CleanError::List(e)),
        // The namespace was validated by the channel scan above.
        Err(_) => Vec::new(),
    };
    Ok(CleanReport {
        topics,
        services,
        schedulers,
        logs,
        bridge_status: remove_dead_bridge_status(namespace),
    })
}

/// Removes `horus.<namespace>.bridge` (and `….bridge.<pid>.tmp`) when the bridge process that
/// wrote it is gone. The file is JSON with the writer's `pid`; one that cannot be read as such
/// is left alone (it is not ours to judge).
fn remove_dead_bridge_status(namespace: &str) -> Vec<PathBuf> {
    let name = format!("horus.{namespace}.bridge");
    let Ok(entries) = std::fs::read_dir("/dev/shm") else {
        return Vec::new();
    };
    let mut removed = Vec::new();
    for e in entries.filter_map(|e| e.ok()) {
        let file = e.file_name().to_string_lossy().into_owned();
        let pid = if file == name {
            std::fs::read(e.path())
                .ok()
                .and_then(|t| serde_json::from_slice::<serde_json::Value>(&t).ok())
                .and_then(|v| v.get("pid")?.as_u64())
        } else if let Some(rest) = file.strip_prefix(&format!("{name}.")) {
            rest.strip_suffix(".tmp").and_then(|p| p.parse().ok())
        } else {
            continue;
        };
        let Some(pid) = pid.and_then(|p| u32::try_from(p).ok()) else {
            continue;
        };
        if !std::path::Path::new(&format!("/proc/{pid}")).exists()
            && std::fs::remove_file(e.path()).is_ok()
        {
            removed.push(e.path());
        }
    }
    removed.sort();
    removed
}
