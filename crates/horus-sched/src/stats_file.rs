//! Naming, creating, publishing to and removing the statistics file (layout
//! in [`crate::stats_shm`]).
//!
//! The file is `/dev/shm/horus.<namespace>.sched.<scheduler>`, the namespace
//! being `HORUS_NAMESPACE` or `u<uid>` (the same scheme as the topic
//! segments). It is created `0600` with `O_EXCL` as a horus-shm segment; its
//! header carries a horus-shm owner word (the writer's pid + start time
//! token) and a membership word (the writer's place bit, `CLOSING`), and it
//! is judged by horus-shm's rules: a published file by `place::classify` of
//! the owner word, one that cannot be read by `Unopened` → `Verdict` (the
//! same verdicts as channels, tensor pools and service tables).
//! [`judge_stats`] judges without changing anything, [`remove_stale_stats`]
//! acts on the same verdict. A scheduler starting replaces a file of its name
//! unless a live writer owns it (or it is being created). It is removed when
//! the scheduler stops cleanly.
//!
//! Removing is horus-shm's closing protocol, as for channels: whoever removes
//! a file (its writer stopping, `horus clean`, a scheduler replacing a dead
//! one's file) first reclaims a dead writer's place (its membership bit
//! cleared under the reclaiming owner word), then must win
//! `place::try_close` — `CLOSING` set while no place is active — and only
//! the winner unlinks, and only the file it opened (`unlink_if_same`). So
//! two removers of one stale file never both unlink by name, and the second
//! can never unlink the new file a scheduler created in its place.

use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::time::{Duration, SystemTime};

use horus_shm::place::{self, Owner};
use horus_shm::{init, ProcessId, Segment, SegmentError, SegmentFate, Unopened, Verdict};

use crate::stats::SchedulerStats;
use crate::stats_shm::{
    encode_name, encode_node, encode_percentiles, h, seqlock_write, ShmHeader, ShmRecord,
    HEADER_WORDS, MAGIC, VERSION, WRITER,
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
    /// Not a statistics file this build can read (garbage, another layout
    /// version): kept by `horus clean`, as horus-shm's cleaners keep such
    /// segments.
    #[error("{path}: unreadable, kept ({why})")]
    Unreadable {
        /// The file.
        path: PathBuf,
        /// Why it could not be read.
        why: String,
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

/// The writer's mapping of the statistics file.
pub(crate) struct StatsPublisher {
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
        // A namespace as every segment's (no `.`: else namespace `a` with scheduler
        // `b.sched.c` and namespace `a.sched.b` with scheduler `c` would be one file).
        if horus_shm::name::validate_namespace(namespace).is_err() {
            return Err(StatsFileError::InvalidName(namespace.to_owned()));
        }
        let path = stats_path(namespace, scheduler);
        // The shm name of the file (STATS_DIR is where shm names live);
        // valid_name allows no '/' and no NUL.
        let name = format!("/horus.{namespace}.sched.{scheduler}");
        let len = std::mem::size_of::<ShmHeader>() + nodes * std::mem::size_of::<ShmRecord>();
        let seg = create_replacing(&name, &path, len)?;
        let publisher = StatsPublisher {
            seg,
            capacity: nodes,
        };
        publisher.init_header(scheduler, nodes);
        Ok(publisher)
    }

    fn header(&self) -> &ShmHeader {
        header(&self.seg)
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
        hd.pid.store(ProcessId::current().pid, relaxed);
        // A new file's owner and membership words are 0: neither the claim
        // nor the join can fail.
        let claimed = place::try_claim(&hd.owner);
        let joined = place::join(&hd.membership, WRITER);
        debug_assert!(claimed && joined, "a new statistics file has no member");
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
        // The writer leaves before it frees its place: dying in between
        // leaves a dead owner with no bit, which a remover reclaims (the
        // other order would leave a free owner with its bit set for good).
        // The mapping goes with `seg`; the name goes now, unless a remover
        // already closed the file (then the name is its to remove).
        let hd = self.header();
        place::leave(&hd.membership, WRITER);
        place::free(&hd.owner);
        if place::try_close(&hd.membership) {
            self.seg.unlink_if_same();
        }
    }
}

/// The header of a mapped statistics file.
fn header(seg: &Segment) -> &ShmHeader {
    // SAFETY: every mapping of a statistics file made here is at least
    // size_of::<ShmHeader>() bytes (`create` sizes it so, `Segment::open` is
    // given that minimum), page aligned (so aligned for the header) and lives
    // as long as `seg`; ShmHeader consists of atomics, valid for any bit
    // pattern (the file starts zeroed).
    unsafe { &*seg.base().cast::<ShmHeader>() }
}

/// Creates the file `name` (at `path`) of `len` bytes, replacing a file of
/// that name that no live writer owns. A file that another remover has
/// closed but not yet unlinked is waited for, at most [`REPLACE_WAIT`].
fn create_replacing(name: &str, path: &Path, len: usize) -> Result<Segment, StatsFileError> {
    let deadline = std::time::Instant::now() + REPLACE_WAIT;
    loop {
        match Segment::create(name, len) {
            Err(SegmentError::Exists(_)) => {}
            other => {
                return other.map_err(|e| StatsFileError::Io {
                    path: path.to_owned(),
                    source: match e {
                        SegmentError::Os { source, .. } => source,
                        e => std::io::Error::other(e),
                    },
                })
            }
        }
        match replace(path)? {
            Closed::Removed => {}
            Closed::ByAnother | Closed::Changed if std::time::Instant::now() < deadline => {
                std::thread::sleep(place::TAKE_POLL)
            }
            Closed::ByAnother | Closed::Changed => {
                return Err(StatsFileError::InUse {
                    path: path.to_owned(),
                    pid: 0,
                })
            }
        }
    }
}

/// Longest a starting scheduler waits for another process that is removing
/// the old file of its name (a remover unlinks right after it closes).
const REPLACE_WAIT: Duration = Duration::from_secs(1);

/// What [`Held::close_if_unused`] did.
#[derive(Debug, PartialEq, Eq)]
enum Closed {
    /// This process closed the file and unlinked it.
    Removed,
    /// Another process had closed it: the name is its to remove.
    ByAnother,
    /// It changed since it was judged (gone, or created anew): look again.
    Changed,
}

/// A remover's read-write mapping of a statistics file of this layout.
struct Held {
    seg: Segment,
}

impl Held {
    /// Maps the file at `path` read-write and checks it is a published
    /// statistics file of this layout. `None`: it is gone, or a new one is
    /// being created under its name (it changed since it was judged). Any
    /// other file is not touched ([`StatsFileError::Unreadable`]).
    fn open(path: &Path) -> Result<Option<Held>, StatsFileError> {
        let unreadable = |why: String| StatsFileError::Unreadable {
            path: path.to_owned(),
            why,
        };
        let seg = match Segment::open(&shm_name(path), std::mem::size_of::<ShmHeader>()) {
            Ok(seg) => seg,
            Err(SegmentError::NotFound(_)) => return Ok(None),
            Err(e) => return Err(unreadable(e.to_string())),
        };
        let hd = header(&seg);
        // Acquire: the header fields the creator wrote before publishing the
        // magic are visible (init::publish's Release).
        let magic = hd.magic.load(Ordering::Acquire);
        let version = hd.version.load(Ordering::Relaxed);
        if magic == 0 {
            return Ok(None);
        }
        if magic != MAGIC || version != VERSION {
            return Err(unreadable(format!(
                "magic {magic:#x}, version {version}: not a statistics file of layout {VERSION}"
            )));
        }
        Ok(Some(Held { seg }))
    }

    /// Reclaims a dead writer's place, then closes and unlinks the file if
    /// no place is active; a live writer's is left alone
    /// ([`StatsFileError::InUse`]).
    fn close_if_unused(&self, path: &Path) -> Result<Closed, StatsFileError> {
        let hd = header(&self.seg);
        // Clearing the dead writer's bit is idempotent: a reclaimer before
        // us may have died after it.
        place::reclaim_if_dead(&hd.owner, || {
            place::leave(&hd.membership, WRITER);
        });
        if place::try_close(&hd.membership) {
            self.seg.unlink_if_same();
            return Ok(Closed::Removed);
        }
        // Relaxed: only the bit decides; nothing it published is read after.
        if hd.membership.load(Ordering::Relaxed) & place::CLOSING != 0 {
            return Ok(Closed::ByAnother);
        }
        Err(StatsFileError::InUse {
            path: path.to_owned(),
            pid: hd.pid.load(Ordering::Relaxed),
        })
    }
}

/// What a statistics file is, judged without changing anything (what
/// [`remove_stale_stats`] does with it).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StatsVerdict {
    /// Its writer (the owner word's process) is alive: kept.
    Live {
        /// The writer's pid.
        pid: u32,
    },
    /// Its writer is dead: removed.
    Stale {
        /// The dead writer's pid.
        pid: u32,
    },
    /// Its header could not be read; horus-shm's verdict (an uninitialised
    /// one is removed, the rest kept).
    Unopened(Verdict),
}

/// Judges the statistics file at `path` by horus-shm's rules: a valid
/// header by its owner word, any other by `Unopened` → `Verdict`.
pub fn judge_stats(path: &Path) -> StatsVerdict {
    match crate::stats_reader::read_owner(path) {
        Ok((pid, word)) if owner_alive(word) => StatsVerdict::Live { pid },
        Ok((pid, _)) => StatsVerdict::Stale { pid },
        Err(e) => StatsVerdict::Unopened(unopened(&e).verdict(path)),
    }
}

/// Why a header could not be read, as horus-shm's cleaners see it.
fn unopened(e: &crate::ReadStatsError) -> Unopened {
    use crate::ReadStatsError as E;
    match e {
        E::Io { source, .. } if source.kind() == std::io::ErrorKind::NotFound => Unopened::NotFound,
        // The magic is published last: 0 means not initialised (yet).
        E::BadMagic { found: 0 } => Unopened::NotInitialised,
        E::TooSmall { .. } => Unopened::Truncated(e.to_string()),
        e => Unopened::Other(e.to_string()),
    }
}

/// Whether an owner word names a live writer (or a live reclaimer).
fn owner_alive(word: u64) -> bool {
    matches!(place::classify(word), Owner::Alive | Owner::Busy)
}

/// Removes the statistics file at `path` if [`judge_stats`] finds it stale
/// (its writer dead, or its creator died before initialising it); a live
/// writer's file is reported as [`StatsFileError::InUse`], one that cannot
/// be read as [`StatsFileError::Unreadable`] and kept. For `horus clean`.
pub fn remove_stale_stats(path: &Path) -> Result<(), StatsFileError> {
    match judge_stats(path) {
        StatsVerdict::Live { pid } => Err(StatsFileError::InUse {
            path: path.to_owned(),
            pid,
        }),
        StatsVerdict::Stale { .. } => match Held::open(path)? {
            Some(held) => held.close_if_unused(path).map(|_| ()),
            // Gone, or created anew, since it was judged: nothing stale left.
            None => Ok(()),
        },
        StatsVerdict::Unopened(v) => match v.settle(&shm_name(path)) {
            SegmentFate::Initialising => Err(StatsFileError::InUse {
                path: path.to_owned(),
                pid: 0,
            }),
            SegmentFate::Unreadable(why) => Err(StatsFileError::Unreadable {
                path: path.to_owned(),
                why,
            }),
            _ => Ok(()),
        },
    }
}

/// Whether the scheduler writing the statistics file at `path` is alive
/// (its horus-shm owner word: pid + process start time, so a reused pid is
/// not mistaken for it; an unreaped zombie is dead). Read-only: for tools
/// such as `horus node list`.
pub fn stats_writer_alive(path: &Path) -> Result<bool, crate::ReadStatsError> {
    let (_, word) = crate::stats_reader::read_owner(path)?;
    Ok(owner_alive(word))
}

/// A scheduler starting finds a file of its name: it is replaced unless a
/// live writer owns it or it is being created (the name is this
/// scheduler's, so an unreadable one — garbage, another layout version — is
/// replaced too, as `horus clean` would not). A stale one goes through the
/// closing protocol ([`Held::close_if_unused`]).
fn replace(path: &Path) -> Result<Closed, StatsFileError> {
    match judge_stats(path) {
        StatsVerdict::Live { pid } => Err(StatsFileError::InUse {
            path: path.to_owned(),
            pid,
        }),
        StatsVerdict::Unopened(Verdict::Initialising) => Err(StatsFileError::InUse {
            path: path.to_owned(),
            pid: 0,
        }),
        StatsVerdict::Stale { .. } => match Held::open(path) {
            Ok(Some(held)) => held.close_if_unused(path),
            // Gone, or created anew, since it was judged: look again.
            Ok(None) => Ok(Closed::Changed),
            // No longer this layout since it was judged: as below.
            Err(_) => remove(path).map(|()| Closed::Removed),
        },
        StatsVerdict::Unopened(_) => remove(path).map(|()| Closed::Removed),
    }
}

/// The shm name of a file under [`STATS_DIR`].
fn shm_name(path: &Path) -> String {
    format!(
        "/{}",
        path.file_name()
            .map_or_else(String::new, |n| n.to_string_lossy().into_owned())
    )
}

fn remove(path: &Path) -> Result<(), StatsFileError> {
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

    /// The owner word of a process that does not exist (pid above pid_max).
    const DEAD_OWNER: u64 = 0x7fff_fff0_u64 << 32 | 1;

    #[test]
    fn a_stats_file_of_a_dead_owner_is_judged_stale_and_removed_a_live_one_kept() {
        let ns = format!("sched-judge-{}", std::process::id());
        let publisher = StatsPublisher::create(&ns, "s", 1).unwrap();
        let path = stats_path(&ns, "s");
        let pid = std::process::id();
        assert_eq!(judge_stats(&path), StatsVerdict::Live { pid });
        assert!(matches!(
            remove_stale_stats(&path),
            Err(StatsFileError::InUse { pid: p, .. }) if p == pid
        ));
        assert!(path.exists());
        // Its writer dies: the owner word names a dead process.
        publisher
            .header()
            .owner
            .store(DEAD_OWNER, Ordering::Relaxed);
        assert_eq!(judge_stats(&path), StatsVerdict::Stale { pid });
        remove_stale_stats(&path).unwrap();
        assert!(!path.exists());
        assert_eq!(judge_stats(&path), StatsVerdict::Unopened(Verdict::Gone));
    }

    /// Regression: two removers of one stale statistics file (`horus clean`,
    /// a scheduler replacing it) each unlinked it by name after judging it,
    /// so the later one unlinked the new file a scheduler of the same name
    /// had created in the meantime: that live scheduler's statistics
    /// vanished from /dev/shm. (The old code's late step was
    /// `remove_file(path)`, which takes the new file.)
    #[test]
    fn a_late_remover_of_a_stale_stats_file_never_unlinks_the_file_that_replaced_it() {
        let ns = format!("sched-late-remover-{}", std::process::id());
        let path = stats_path(&ns, "s");
        let old = StatsPublisher::create(&ns, "s", 1).unwrap();
        old.header().owner.store(DEAD_OWNER, Ordering::Relaxed);
        // Its writer died: the file stays.
        std::mem::forget(old);
        // A cleaner judges it stale and opens it ...
        assert!(matches!(judge_stats(&path), StatsVerdict::Stale { .. }));
        let late = Held::open(&path).unwrap().expect("the stale file");
        // ... while a scheduler of the same name replaces it with its own.
        let new = StatsPublisher::create(&ns, "s", 1).unwrap();
        let pid = std::process::id();
        assert_eq!(judge_stats(&path), StatsVerdict::Live { pid });
        // The late cleaner goes on with the file it opened.
        assert_eq!(late.close_if_unused(&path).unwrap(), Closed::ByAnother);
        assert_eq!(
            judge_stats(&path),
            StatsVerdict::Live { pid },
            "the new scheduler's file is still there"
        );
        drop(new);
        assert!(!path.exists(), "removed by its writer on a clean stop");
    }

    #[test]
    fn a_stats_file_whose_remover_died_mid_reclaim_is_removed_by_the_next() {
        let ns = format!("sched-dead-reclaimer-{}", std::process::id());
        let path = stats_path(&ns, "s");
        let publisher = StatsPublisher::create(&ns, "s", 1).unwrap();
        // A remover took the dead writer's place and died before it cleared
        // the writer's membership bit.
        publisher
            .header()
            .owner
            .store(place::reclaiming(DEAD_OWNER), Ordering::Relaxed);
        std::mem::forget(publisher);
        assert!(matches!(judge_stats(&path), StatsVerdict::Stale { .. }));
        remove_stale_stats(&path).unwrap();
        assert!(!path.exists());
    }

    #[test]
    fn an_unreadable_stats_file_is_kept_by_clean_and_replaced_by_its_scheduler() {
        let ns = format!("sched-unreadable-{}", std::process::id());
        let path = stats_path(&ns, "s");
        let publisher = StatsPublisher::create(&ns, "s", 1).unwrap();
        publisher
            .header()
            .version
            .store(VERSION + 1, Ordering::Relaxed);
        publisher
            .header()
            .owner
            .store(DEAD_OWNER, Ordering::Relaxed);
        std::mem::forget(publisher); // leaves the file, as a crash would
        let old = std::time::SystemTime::now() - Duration::from_secs(3600);
        std::fs::File::options()
            .write(true)
            .open(&path)
            .unwrap()
            .set_modified(old)
            .unwrap();
        assert!(matches!(
            judge_stats(&path),
            StatsVerdict::Unopened(Verdict::Unreadable(_))
        ));
        assert!(matches!(
            remove_stale_stats(&path),
            Err(StatsFileError::Unreadable { .. })
        ));
        assert!(path.exists());
        let publisher = StatsPublisher::create(&ns, "s", 1).unwrap();
        assert!(matches!(judge_stats(&path), StatsVerdict::Live { .. }));
        drop(publisher);
        assert!(!path.exists());
    }
}
