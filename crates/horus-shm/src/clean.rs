//! Finding and removing channel segments that nobody alive uses.
//!
//! A segment is normally unlinked by its last participant. When every
//! participant died (kill -9, power loss of a process tree), nobody is left to
//! do it and the file stays in `/dev/shm`. [`remove_stale_channels`] walks a
//! namespace's channel segments and, for each, reclaims the places of dead
//! processes (exactly as a joining endpoint would); a segment left with no
//! active place is closed and unlinked through the same `CLOSING` protocol
//! the last participant uses, so a process that opens it at that moment sees
//! [`crate::JoinError::Closing`] and recreates it. A segment with any live
//! participant is never touched.
//!
//! The walk ([`sweep`]) and the judgement of a segment that cannot be opened
//! ([`Unopened`] → [`Verdict`] → [`SegmentFate`]) are shared by every
//! cleaner of horus: service tables, tensor pools, the tf buffer, and
//! `horus doctor` (which judges without removing).

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::channel::Channel;
use crate::error::{OpenError, SegmentError};
use crate::init::InitError;

/// Directory POSIX shared memory lives in.
const SHM_DIR: &str = "/dev/shm";

/// A segment whose creator never published its header is left alone this
/// long (it may still be initialising it).
pub const INIT_GRACE: Duration = Duration::from_secs(5);

/// What happened to one segment of the namespace.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SegmentFate {
    /// All participants were dead (or none was left): unlinked.
    Removed,
    /// Creator died before initialising it: unlinked.
    RemovedUninitialised,
    /// At least one live participant: kept.
    Live {
        /// Active publisher places.
        publishers: u32,
        /// Active subscriber places.
        subscribers: u32,
    },
    /// Being created right now (header not yet published): kept.
    Initialising,
    /// Not a valid segment of this build (garbage, truncated, other layout
    /// version): kept, reported.
    Unreadable(String),
}

/// One channel segment found in the namespace.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SegmentReport {
    /// File path (`/dev/shm/horus.<ns>.t.<topic>`).
    pub path: PathBuf,
    /// What was done.
    pub fate: SegmentFate,
}

/// Why the namespace could not be scanned.
#[derive(Debug, thiserror::Error)]
pub enum CleanError {
    /// The namespace is not a valid name.
    #[error(transparent)]
    Name(#[from] crate::NameError),
    /// `/dev/shm` could not be listed.
    #[error("cannot list {SHM_DIR}: {0}")]
    List(std::io::Error),
}

/// The `/dev/shm` file-name prefix of `namespace`'s channel segments.
pub fn channel_prefix(namespace: &str) -> Result<String, crate::NameError> {
    segment_prefix(namespace, "t")
}

/// The `/dev/shm` file-name prefix of `namespace`'s segments of kind `kind`
/// (`t` topics; `sv`, `sq`, `sr` a service's table, request channel and
/// response channels): `horus.<namespace>.<kind>.`.
pub fn segment_prefix(namespace: &str, kind: &str) -> Result<String, crate::NameError> {
    // segment_name validates both parts; "x" is a placeholder name.
    let full = crate::name::segment_name(namespace, kind, "x")?;
    Ok(full
        .trim_start_matches('/')
        .trim_end_matches('x')
        .to_owned())
}

/// Removes the channel segments of `namespace` whose participants are all
/// dead, and reports every channel segment of the namespace with its fate.
pub fn remove_stale_channels(namespace: &str) -> Result<Vec<SegmentReport>, CleanError> {
    remove_stale_channels_of_kind(namespace, "t")
}

/// Like [`remove_stale_channels`], for the channels of kind `kind` (a
/// service's request channels `sq` and response channels `sr` are channels
/// too: clients and servers are their publishers and subscribers).
pub fn remove_stale_channels_of_kind(
    namespace: &str,
    kind: &str,
) -> Result<Vec<SegmentReport>, CleanError> {
    sweep(namespace, kind, clean_channel)
}

/// Runs `clean` on every segment of kind `kind` in `namespace` (sorted by
/// name), with its shm name (`/horus.<ns>.<kind>.<name>`) and file path,
/// and reports each with the fate `clean` gives it. The one walk every
/// stale-segment cleaner of horus takes (channels, service tables, tensor
/// pools); `clean` opens the segment without waiting (an opener that finds
/// it uninitialised hands the error to [`Unopened`]) and closes it through
/// its membership word if no live member is left.
pub fn sweep<F>(namespace: &str, kind: &str, mut clean: F) -> Result<Vec<SegmentReport>, CleanError>
where
    F: FnMut(&str, &Path) -> SegmentFate,
{
    let prefix = segment_prefix(namespace, kind)?;
    Ok(segment_files(&prefix)?
        .into_iter()
        .map(|file| {
            let path = PathBuf::from(SHM_DIR).join(&file);
            let fate = clean(&format!("/{file}"), &path);
            SegmentReport { path, fate }
        })
        .collect())
}

/// The `/dev/shm` file names that start with `prefix` and are longer than
/// it, sorted.
pub fn segment_files(prefix: &str) -> Result<Vec<String>, CleanError> {
    let entries = std::fs::read_dir(SHM_DIR).map_err(CleanError::List)?;
    let mut names: Vec<String> = entries
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| n.starts_with(prefix) && n.len() > prefix.len())
        .collect();
    names.sort();
    Ok(names)
}

fn clean_channel(shm_name: &str, path: &Path) -> SegmentFate {
    match Channel::open_existing_now(shm_name) {
        Ok(chan) => close_unused_channel(&chan),
        Err(e) => Unopened::from(&e).verdict(path).settle(shm_name),
    }
}

/// Reclaims the places of `chan`'s dead members and, if no place is left,
/// closes it and unlinks its name ([`Channel::unlink_if_unused`]); else
/// reports its live members.
pub fn close_unused_channel(chan: &Channel) -> SegmentFate {
    if chan.unlink_if_unused() {
        SegmentFate::Removed
    } else {
        let (publishers, subscribers) = chan.members();
        SegmentFate::Live {
            publishers,
            subscribers,
        }
    }
}

/// Why a cleaner (or a tool judging a segment) could not open it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Unopened {
    /// Its creator has not published the header (yet, or died first).
    NotInitialised,
    /// Shorter than a header (a creator between `shm_open` and `ftruncate`,
    /// or garbage); the error's text.
    Truncated(String),
    /// Gone (unlinked by someone else meanwhile).
    NotFound,
    /// Anything else (another layout version, a corrupt header, an OS
    /// error); the error's text.
    Other(String),
}

impl From<&SegmentError> for Unopened {
    fn from(e: &SegmentError) -> Unopened {
        match e {
            SegmentError::Truncated { .. } => Unopened::Truncated(e.to_string()),
            SegmentError::NotFound(_) => Unopened::NotFound,
            e => Unopened::Other(e.to_string()),
        }
    }
}

impl From<&OpenError> for Unopened {
    fn from(e: &OpenError) -> Unopened {
        match e {
            OpenError::NotInitialized(_) => Unopened::NotInitialised,
            OpenError::Segment(s) => s.into(),
            e => Unopened::Other(e.to_string()),
        }
    }
}

impl From<&InitError> for Unopened {
    fn from(e: &InitError) -> Unopened {
        match e {
            InitError::NotInitialised(_) => Unopened::NotInitialised,
            InitError::Segment(s) => s.into(),
        }
    }
}

impl Unopened {
    /// What this says about the segment at `path`: one never initialised
    /// (or still shorter than a header) is left alone for [`INIT_GRACE`]
    /// after its last change, as its creator may be initialising it.
    pub fn verdict(self, path: &Path) -> Verdict {
        match self {
            Unopened::NotInitialised | Unopened::Truncated(_) if is_young(path) => {
                Verdict::Initialising
            }
            Unopened::NotInitialised => Verdict::Uninitialised,
            Unopened::NotFound => Verdict::Gone,
            Unopened::Truncated(why) | Unopened::Other(why) => Verdict::Unreadable(why),
        }
    }
}

/// What a segment that could not be opened is, judged without changing it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Being created right now: keep it.
    Initialising,
    /// Its creator died before initialising it: garbage.
    Uninitialised,
    /// Removed meanwhile.
    Gone,
    /// Not readable by this build: keep it (not ours to judge).
    Unreadable(String),
}

impl Verdict {
    /// Acts on the verdict as a cleaner: an uninitialised segment
    /// `shm_name` is unlinked; the rest is kept.
    pub fn settle(self, shm_name: &str) -> SegmentFate {
        match self {
            Verdict::Initialising => SegmentFate::Initialising,
            Verdict::Uninitialised => {
                crate::segment::Segment::unlink(shm_name);
                SegmentFate::RemovedUninitialised
            }
            Verdict::Gone => SegmentFate::Removed,
            Verdict::Unreadable(why) => SegmentFate::Unreadable(why),
        }
    }
}

/// Whether the file at `path` changed less than [`INIT_GRACE`] ago (or
/// cannot be examined): a creator may still be initialising it.
pub fn is_young(path: &Path) -> bool {
    std::fs::metadata(path)
        .and_then(|m| m.modified())
        .ok()
        .and_then(|t| t.elapsed().ok())
        .is_none_or(|age| age < INIT_GRACE)
}
