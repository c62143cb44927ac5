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

use std::path::PathBuf;
use std::time::Duration;

use crate::channel::Channel;
use crate::error::{OpenError, SegmentError};
use crate::records;

/// Directory POSIX shared memory lives in.
const SHM_DIR: &str = "/dev/shm";

/// A segment whose creator never published its header is left alone this
/// long (it may still be initialising it).
const INIT_GRACE: Duration = Duration::from_secs(5);

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
    let prefix = segment_prefix(namespace, kind)?;
    let mut reports = Vec::new();
    let entries = std::fs::read_dir(SHM_DIR).map_err(CleanError::List)?;
    let mut names: Vec<String> = entries
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| n.starts_with(&prefix))
        .collect();
    names.sort();
    for file in names {
        let path = PathBuf::from(SHM_DIR).join(&file);
        let fate = clean_one(&format!("/{file}"), &path);
        reports.push(SegmentReport { path, fate });
    }
    Ok(reports)
}

fn clean_one(shm_name: &str, path: &std::path::Path) -> SegmentFate {
    match Channel::open_existing_now(shm_name) {
        Ok(chan) => {
            chan.reclaim_dead();
            if records::try_close(chan.membership()) {
                crate::segment::Segment::unlink(shm_name);
                SegmentFate::Removed
            } else {
                let (publishers, subscribers) = chan.members();
                SegmentFate::Live {
                    publishers,
                    subscribers,
                }
            }
        }
        Err(OpenError::NotInitialized(_))
        | Err(OpenError::Segment(SegmentError::Truncated { .. }))
            if young(path) =>
        {
            SegmentFate::Initialising
        }
        Err(OpenError::NotInitialized(_)) => {
            crate::segment::Segment::unlink(shm_name);
            SegmentFate::RemovedUninitialised
        }
        Err(OpenError::Segment(SegmentError::NotFound(_))) => SegmentFate::Removed,
        Err(e) => SegmentFate::Unreadable(e.to_string()),
    }
}

fn young(path: &std::path::Path) -> bool {
    std::fs::metadata(path)
        .and_then(|m| m.modified())
        .ok()
        .and_then(|t| t.elapsed().ok())
        .is_none_or(|age| age < INIT_GRACE)
}
