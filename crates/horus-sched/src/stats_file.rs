//! Naming, creating, publishing to and removing the statistics file (layout
//! in [`crate::stats_shm`]).
//!
//! The file is `/dev/shm/horus.<namespace>.sched.<scheduler>`, the namespace
//! being `HORUS_NAMESPACE` or `u<uid>` (the same scheme as the topic
//! segments). It is created `0600` with `O_EXCL`; a file left by a process
//! that died is detected (pid + process start time) and replaced. It is
//! removed when the scheduler stops cleanly.

use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::time::{Duration, SystemTime};

use horus_shm::{init, Segment, SegmentError};

use crate::stats::SchedulerStats;
use crate::stats_shm::{
    encode_name, encode_node, encode_percentiles, h, seqlock_write, ShmHeader, ShmRecord,
    HEADER_WORDS, MAGIC, VERSION,
};

/// Directory of the statistics files.
pub const STATS_DIR: &str = "/dev/shm";

/// The namespace in force: `HORUS_NAMESPACE` if set and non-empty, else
/// `u<uid>`.
pub fn namespace() -> String {
    match std::env::var("HORUS_NAMESPACE") {
        Ok(ns) if !ns.is_empty() => ns,
        // SAFETY: getuid has no preconditions and cannot fail.
        _ => format!("u{}", unsafe { libc::getuid() }),
    }
}

/// Path of the statistics file of scheduler `scheduler` in `namespace`.
pub fn stats_path(namespace: &str, scheduler: &str) -> PathBuf {
    Path::new(STATS_DIR).join(format!("horus.{namespace}.sched.{scheduler}"))
}

/// Why the statistics file could not be created.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StatsFileError {
    /// The namespace or scheduler name has characters outside
    /// `[A-Za-z0-9_.-]` or is empty or longer than 63 bytes.
    #[error("invalid name {0:?} for a statistics file: 1 to 63 bytes of [A-Za-z0-9_.-]")]
    InvalidName(String),
    /// A live process (or one being created right now) owns the file:
    /// another scheduler with the same name in the same namespace.
    #[error("{path}: in use by process {pid} (another scheduler with this name?)")]
    InUse {
        /// The file.
        path: PathBuf,
        /// Its owner (0 if not known yet).
        pid: u32,
    },
    /// A system call failed.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The OS error.
        source: std::io::Error,
    },
}

pub(crate) fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 63
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-'))
}

/// Start time (clock ticks since boot, field 22 of `/proc/<pid>/stat`).
/// `None` for a process that does not exist, and for a zombie (state `Z`:
/// exited, not yet reaped) or a dying task (`X`): neither writes its table
/// again, and a parent may leave a zombie unreaped indefinitely.
pub(crate) fn process_start_time(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name may contain spaces and ')': split after the last ')'.
    let rest = &stat[stat.rfind(')')? + 1..];
    let mut fields = rest.split_whitespace();
    if matches!(fields.next()?, "Z" | "X" | "x") {
        return None;
    }
    fields.nth(18)?.parse().ok()
}

/// Whether the process (pid + start time, robust to pid reuse) is alive.
fn process_alive(pid: u32, start: u64) -> bool {
    pid != 0 && process_start_time(pid).is_some_and(|s| start == 0 || s == start)
}

/// The writer's mapping of the statistics file.
pub(crate) struct StatsPublisher {
    path: PathBuf,
    /// The file, mapped (horus-shm's segment: created `0600` with `O_EXCL`;
    /// another process truncating it makes the cut pages private zero pages
    /// instead of killing the scheduler — statistics then stop being
    /// visible; the robot runs on).
    seg: Segment,
    capacity: usize,
}

impl StatsPublisher {
    /// Creates the file for `nodes` records, replacing a stale one.
    pub(crate) fn create(
        namespace: &str,
        scheduler: &str,
        nodes: usize,
    ) -> Result<StatsPublisher, StatsFileError> {
        for name in [namespace, scheduler] {
            if !valid_name(name) {
                return Err(StatsFileError::InvalidName(name.to_owned()));
            }
        }
        let path = stats_path(namespace, scheduler);
        // The shm name of the file (STATS_DIR is where shm names live);
        // valid_name allows no '/' and no NUL.
        let name = format!("/horus.{namespace}.sched.{scheduler}");
        let len = std::mem::size_of::<ShmHeader>() + nodes * std::mem::size_of::<ShmRecord>();
        let seg = match Segment::create(&name, len) {
            Err(SegmentError::Exists(_)) => {
                remove_if_stale(&path)?;
                Segment::create(&name, len)
            }
            other => other,
        }
        .map_err(|e| StatsFileError::Io {
            path: path.clone(),
            source: match e {
                SegmentError::Os { source, .. } => source,
                e => std::io::Error::other(e),
            },
        })?;
        let publisher = StatsPublisher {
            path,
            seg,
            capacity: nodes,
        };
        publisher.init_header(scheduler, nodes);
        Ok(publisher)
    }

    fn header(&self) -> &ShmHeader {
        // SAFETY: the mapping is at least size_of::<ShmHeader>() bytes, page
        // aligned (so aligned for the header), lives as long as `self`, and
        // ShmHeader consists of atomics, valid for any bit pattern (the file
        // starts zeroed).
        unsafe { &*self.seg.base().cast::<ShmHeader>() }
    }

    fn record(&self, i: usize) -> &ShmRecord {
        debug_assert!(i < self.capacity);
        let off = std::mem::size_of::<ShmHeader>() + i * std::mem::size_of::<ShmRecord>();
        debug_assert!(off + std::mem::size_of::<ShmRecord>() <= self.seg.len());
        // SAFETY: `i < capacity`, so the record lies inside the mapping;
        // 256 + i·384 is 8-byte aligned; records are atomics, valid for any
        // bit pattern; the borrow is tied to `self`, which owns the mapping.
        unsafe { &*self.seg.base().add(off).cast::<ShmRecord>() }
    }

    fn init_header(&self, scheduler: &str, nodes: usize) {
        let hd = self.header();
        let relaxed = Ordering::Relaxed;
        hd.version.store(VERSION, relaxed);
        hd.header_size
            .store(std::mem::size_of::<ShmHeader>() as u32, relaxed);
        hd.record_size
            .store(std::mem::size_of::<ShmRecord>() as u32, relaxed);
        hd.capacity.store(nodes as u32, relaxed);
        hd.count.store(nodes as u32, relaxed);
        hd.pid.store(std::process::id(), relaxed);
        hd.process_start
            .store(process_start_time(std::process::id()).unwrap_or(0), relaxed);
        let mut name = [0; 8];
        encode_name(scheduler, &mut name);
        for (slot, w) in hd.name.iter().zip(name) {
            slot.store(w, relaxed);
        }
        // A reader that sees the magic (Acquire) sees every field above.
        init::publish(&self.seg, MAGIC);
    }

    /// Writes `stats` into the file (node `i` into record `i`).
    pub(crate) fn publish(&self, stats: &SchedulerStats) {
        let hd = self.header();
        let mut w = [0_u64; HEADER_WORDS];
        w[h::PUBLISHES] = hd.data[h::PUBLISHES].load(Ordering::Relaxed) + 1;
        w[h::TAKEN_AT_UNIX_NS] = stats
            .taken_at
            .duration_since(SystemTime::UNIX_EPOCH)
            .unwrap_or(Duration::ZERO)
            .as_nanos() as u64;
        w[h::UPTIME_NS] = stats.uptime.as_nanos() as u64;
        w[h::FLAGS] = u64::from(stats.simulated);
        w[h::MEMORY_LOCK] = stats.memory_lock.encode();
        encode_percentiles(&stats.main_loop.round, &mut w[h::ROUNDS..]);
        seqlock_write(&hd.seq, &hd.data, &w);
        for (i, node) in stats.nodes.iter().enumerate().take(self.capacity) {
            let rec = self.record(i);
            seqlock_write(&rec.seq, &rec.data, &encode_node(node));
        }
    }
}

impl Drop for StatsPublisher {
    fn drop(&mut self) {
        // The mapping goes with `seg`; the name goes now.
        let _ = std::fs::remove_file(&self.path);
    }
}

/// Removes the statistics file at `path` if its writer is dead (or it is
/// garbage older than a second); a live writer's file is never touched and
/// is reported as [`StatsFileError::InUse`]. For `horus clean`.
pub fn remove_stale_stats(path: &Path) -> Result<(), StatsFileError> {
    remove_if_stale(path)
}

/// Whether the scheduler writing the statistics file at `path` is alive
/// (pid + process start time, so a reused pid is not mistaken for it; an
/// unreaped zombie is dead). Read-only: for tools such as `horus node list`.
pub fn stats_writer_alive(path: &Path) -> Result<bool, crate::ReadStatsError> {
    let (pid, start) = crate::stats_reader::read_owner(path)?;
    Ok(process_alive(pid, start))
}

/// An existing file: remove it if its writer is dead (or it is garbage older
/// than a second); otherwise report who owns it.
fn remove_if_stale(path: &Path) -> Result<(), StatsFileError> {
    match crate::stats_reader::read_owner(path) {
        Ok((pid, start)) if process_alive(pid, start) => {
            return Err(StatsFileError::InUse {
                path: path.to_owned(),
                pid,
            })
        }
        Ok(_) => {}
        Err(_) => {
            // Unreadable header: either garbage or a writer between create
            // and publishing its magic. Only a young file can be the latter.
            let young = std::fs::metadata(path)
                .and_then(|m| m.modified())
                .ok()
                .and_then(|t| t.elapsed().ok())
                .is_some_and(|age| age < Duration::from_secs(1));
            if young {
                return Err(StatsFileError::InUse {
                    path: path.to_owned(),
                    pid: 0,
                });
            }
        }
    }
    match std::fs::remove_file(path) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(source) => Err(StatsFileError::Io {
            path: path.to_owned(),
            source,
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writer_of_a_live_table_is_alive_and_a_missing_table_is_an_error() {
        let ns = format!("sched-alive-{}", std::process::id());
        let publisher = StatsPublisher::create(&ns, "s", 1).unwrap();
        let path = stats_path(&ns, "s");
        assert!(stats_writer_alive(&path).unwrap());
        drop(publisher);
        assert!(stats_writer_alive(&path).is_err());
    }
}
