//! Creating and opening the host's tf segment, and removing a stale one.
//!
//! One segment per namespace, `/dev/shm/horus.<namespace>.tf.buffer`, created
//! `0600` and `O_EXCL` by whoever needs it first (horus-shm's `Segment`). The
//! creator writes the header and takes its participant place before it
//! publishes the magic with Release; an opener that finds no magic yet waits
//! for it (at most 2 s, then [`OpenError::NotInitialized`]), copies the header
//! out once and validates it against the file size before using any offset.

use std::time::{Duration, Instant};

use horus_shm::init::{self, Created, InitError};
use horus_shm::{Segment, SegmentError, Unopened, Verdict};

use crate::error::OpenError;
use crate::layout::{Capacities, Layout, RawHeader, HEADER_SIZE, MAGIC, MAX_PARTICIPANTS};
use crate::mem::Mem;
use crate::members::{self, Closing};

/// How long an opener waits for a creator to publish the header, or for a
/// closer to finish.
const INIT_WAIT: Duration = Duration::from_secs(2);

/// The shm name of `namespace`'s tf buffer.
pub fn segment_name(namespace: &str) -> Result<String, horus_shm::NameError> {
    horus_shm::name::segment_name(namespace, "tf", "buffer")
}

/// Opens `name` or creates it with `caps`; returns the memory and our place.
pub(crate) fn open_or_create(
    name: &str,
    caps: Capacities,
    me: u64,
) -> Result<(Mem, usize), OpenError> {
    let layout = Layout::new(caps).map_err(OpenError::Config)?;
    let deadline = Instant::now() + INIT_WAIT;
    loop {
        let mem = match init::create_or_open(name, layout.total, HEADER_SIZE, deadline) {
            Ok(Created::New(seg)) => return Ok(initialise(seg, layout, me)),
            Ok(Created::Existing(seg, _)) => validated(name, seg)?,
            Err(e) => return Err(unopened(e)),
        };
        let place = members::join(&mem, me).ok_or(OpenError::Full {
            max: MAX_PARTICIPANTS,
        })?;
        match members::closing(&mem) {
            Closing::No => return Ok((mem, place)),
            state => {
                members::leave(&mem, place, me);
                if state == Closing::Closed {
                    if let crate::mem::Backing::Shm(seg) = &mem.backing {
                        seg.unlink_if_same();
                    }
                }
                if Instant::now() >= deadline {
                    return Err(OpenError::Closing(name.to_owned()));
                }
                std::thread::sleep(Duration::from_millis(1));
            }
        }
    }
}

fn initialise(seg: Segment, layout: Layout, me: u64) -> (Mem, usize) {
    let header = RawHeader::for_layout(&layout);
    // SAFETY: the segment was just created by us (O_EXCL) with `layout.total`
    // ≥ 4096 zeroed bytes, page aligned; nobody else reads or writes it
    // before the magic is published below. RawHeader is plain data.
    unsafe { std::ptr::write(seg.base().cast::<RawHeader>(), header) };
    let mem = Mem::shm(seg, layout);
    let place = members::join(&mem, me).expect("a new segment has free places");
    // The header and our place are visible to any opener that sees the magic.
    // (`mem` was made from `seg` just above: always shared memory.)
    if let crate::mem::Backing::Shm(seg) = &mem.backing {
        init::publish(seg, MAGIC);
    }
    (mem, place)
}

/// Opens an existing segment, waiting until `deadline` for its creator.
pub(crate) fn open_existing(name: &str, deadline: Instant) -> Result<Mem, OpenError> {
    let (seg, _) = init::open_initialised(name, HEADER_SIZE, deadline).map_err(unopened)?;
    validated(name, seg)
}

/// Validates the header of `seg`, a segment whose magic was published.
fn validated(name: &str, seg: Segment) -> Result<Mem, OpenError> {
    // SAFETY: `open_initialised` checked the mapping holds at least
    // HEADER_SIZE bytes; it is page aligned; RawHeader is plain data valid
    // for any bits. A volatile read copies it out once, so a peer changing it
    // later cannot change what we validated.
    let header = unsafe { std::ptr::read_volatile(seg.base().cast::<RawHeader>()) };
    let layout = header.validate(name, seg.len() as u64)?;
    Ok(Mem::shm(seg, layout))
}

fn unopened(e: InitError) -> OpenError {
    match e {
        InitError::Segment(e) => OpenError::Segment(e),
        InitError::NotInitialised(name) => OpenError::NotInitialized(name),
    }
}

/// What [`remove_stale`] found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StaleOutcome {
    /// No tf buffer in the namespace.
    Absent,
    /// Every participant was dead: the name was removed.
    Removed,
    /// The creator died before initialising it: the name was removed.
    RemovedUninitialised,
    /// Live participants hold it: kept.
    Live {
        /// Processes with it open.
        participants: usize,
    },
    /// Being created right now: kept.
    Initialising,
    /// Not a tf buffer this build can read (garbage, other version): kept,
    /// with the reason.
    Unreadable(String),
}

/// Removes `namespace`'s tf buffer if no live process has it open (every
/// participant was killed), as `horus clean` does for topics.
pub fn remove_stale(namespace: &str) -> Result<StaleOutcome, horus_shm::NameError> {
    let name = segment_name(namespace)?;
    let me = horus_shm::ProcessId::current().token();
    Ok(match open_existing(&name, Instant::now()) {
        Ok(mem) => {
            if members::try_close(&mem, me) {
                if let crate::mem::Backing::Shm(seg) = &mem.backing {
                    seg.unlink_if_same();
                }
                StaleOutcome::Removed
            } else {
                StaleOutcome::Live {
                    participants: members::live(&mem),
                }
            }
        }
        Err(OpenError::Segment(SegmentError::NotFound(_))) => StaleOutcome::Absent,
        // A segment still shorter than a header counts as uninitialised here.
        Err(OpenError::NotInitialized(_))
        | Err(OpenError::Segment(SegmentError::Truncated { .. })) => {
            stale_unopened(&name, Unopened::NotInitialised)
        }
        Err(e) => StaleOutcome::Unreadable(e.to_string()),
    })
}

/// horus-shm's judgement of a segment that could not be opened.
fn stale_unopened(name: &str, why: Unopened) -> StaleOutcome {
    match why.verdict(std::path::Path::new(&format!("/dev/shm{name}"))) {
        Verdict::Initialising => StaleOutcome::Initialising,
        Verdict::Uninitialised => {
            Segment::unlink(name);
            StaleOutcome::RemovedUninitialised
        }
        Verdict::Gone => StaleOutcome::Absent,
        Verdict::Unreadable(why) => StaleOutcome::Unreadable(why),
    }
}
