//! Error enums, one per operation; every variant says what was refused and why.

use std::time::Duration;

/// Why the transform buffer could not be opened or created.
#[derive(Debug, thiserror::Error)]
pub enum OpenError {
    /// The namespace is not a valid name.
    #[error(transparent)]
    Name(#[from] horus_shm::NameError),
    /// Creating or mapping the segment failed.
    #[error(transparent)]
    Segment(#[from] horus_shm::SegmentError),
    /// The capacities asked for are out of range.
    #[error("invalid tf buffer capacities: {0}")]
    Config(String),
    /// The segment does not start with the tf magic: not a tf buffer, or garbage.
    #[error("segment {name} is not a horus tf buffer (magic {found:#018x})")]
    BadMagic {
        /// Segment name.
        name: String,
        /// What was found.
        found: u64,
    },
    /// A tf buffer of another layout version.
    #[error("tf segment {name} has layout version {found}, this build speaks {expected}")]
    Version {
        /// Segment name.
        name: String,
        /// Version found.
        found: u32,
        /// Version expected.
        expected: u32,
    },
    /// The header is inconsistent (sizes, offsets, capacities out of range).
    #[error("tf segment {name} is corrupt: {reason}")]
    Corrupt {
        /// Segment name.
        name: String,
        /// What is inconsistent.
        reason: String,
    },
    /// The creator never finished initialising the segment.
    #[error("tf segment {0} was never initialised (its creator may have died)")]
    NotInitialized(String),
    /// Every participant place is held by a live process.
    #[error("all {max} participant places of the tf buffer are held by live processes")]
    Full {
        /// Participant places of the segment.
        max: usize,
    },
    /// The segment kept being torn down by its last participant while we opened it.
    #[error("tf segment {0} kept closing while it was opened; try again")]
    Closing(String),
}

/// Why a transform was refused by [`crate::TfBuffer::set_transform`]. Nothing
/// was stored; the refusal is counted ([`crate::TfBuffer::stats`]).
#[derive(Clone, Debug, thiserror::Error, PartialEq)]
pub enum SetError {
    /// A frame id is empty (after tf2's leading `/` is stripped).
    #[error("empty {which} frame id")]
    EmptyFrameId {
        /// `"parent"` (header.frame_id) or `"child"` (child_frame_id).
        which: &'static str,
    },
    /// A frame id is longer than the buffer holds.
    #[error("frame id {frame:?} is {len} bytes; at most {max} are stored")]
    FrameIdTooLong {
        /// The first bytes of the frame id.
        frame: String,
        /// Its length in bytes.
        len: usize,
        /// The longest accepted.
        max: usize,
    },
    /// A frame id contains a control character (tf2 accepts any string; a
    /// frame id with a newline or NUL is refused here so tools print it safely).
    #[error("frame id {frame:?} contains a control character")]
    BadFrameId {
        /// The frame id.
        frame: String,
    },
    /// `child_frame_id` equals `header.frame_id` (tf2: `TF_SELF_TRANSFORM`).
    #[error("frame {frame:?} cannot be its own parent")]
    SelfParent {
        /// The frame.
        frame: String,
    },
    /// A NaN or infinite value in the translation or rotation (tf2: `TF_NAN_INPUT`).
    #[error("transform of {child:?} has a NaN or infinite component")]
    NotFinite {
        /// The child frame.
        child: String,
    },
    /// The rotation is too far from a unit quaternion: `| |q|² − 1 |` is at
    /// least tf2's `QUATERNION_NORMALIZATION_TOLERANCE` (0.01; tf2:
    /// `TF_DENORMALIZED_QUATERNION`). Closer ones are normalised and stored.
    #[error("rotation of {child:?} is not a unit quaternion (|q|² = {norm2})")]
    DenormalizedQuaternion {
        /// The child frame.
        child: String,
        /// The squared norm found.
        norm2: f64,
    },
    /// A dynamic transform stamped further ahead of this host's clock than
    /// the writer's `max_future` (it would expire every older sample).
    #[error(
        "transform of {child:?} is stamped {stamp_ns} ns, {ahead:?} ahead of this host's clock \
         (at most {max:?} accepted)"
    )]
    StampInFuture {
        /// The child frame.
        child: String,
        /// The stamp.
        stamp_ns: i64,
        /// How far ahead of the clock.
        ahead: Duration,
        /// The writer's limit.
        max: Duration,
    },
    /// A dynamic transform older than the newest one of its frame minus the
    /// buffer's window (tf2: `TF_OLD_DATA`).
    #[error("transform of {child:?} at {stamp_ns} ns is older than the window {window:?} before its newest at {newest_ns} ns")]
    TooOld {
        /// The child frame.
        child: String,
        /// The stamp.
        stamp_ns: i64,
        /// The newest stamp of the frame.
        newest_ns: i64,
        /// The buffer's window.
        window: Duration,
    },
    /// A dynamic transform not newer than the newest of its frame. tf2
    /// ignores a repeated stamp (`TF_REPEATED_DATA`) and inserts an older one
    /// in order; this buffer keeps each frame's history append-only, so both
    /// are refused.
    #[error(
        "transform of {child:?} at {stamp_ns} ns is not newer than its newest at {newest_ns} ns"
    )]
    NotNewer {
        /// The child frame.
        child: String,
        /// The stamp.
        stamp_ns: i64,
        /// The newest stamp of the frame.
        newest_ns: i64,
    },
    /// A static transform for a frame that has dynamic ones, or the reverse:
    /// a frame is static or dynamic from its first transform on.
    #[error("frame {child:?} is {existing}; a {offered} transform for it is refused")]
    KindConflict {
        /// The child frame.
        child: String,
        /// What the frame is (`"static"` or `"dynamic"`).
        existing: &'static str,
        /// What was offered.
        offered: &'static str,
    },
    /// Making `parent` the parent of `child` would close a loop (`child` is
    /// already an ancestor of `parent` in the latest tree).
    #[error("making {parent:?} the parent of {child:?} would close a loop")]
    WouldLoop {
        /// The child frame.
        child: String,
        /// The parent frame.
        parent: String,
    },
    /// The frame table is full.
    #[error("the tf buffer holds its maximum of {max} frames; {frame:?} is refused")]
    TooManyFrames {
        /// The frame that did not fit.
        frame: String,
        /// The table's capacity.
        max: usize,
    },
    /// Another live process held the writer lease for longer than the wait.
    #[error("the tf writer lease stayed held by live process {pid} for {waited:?}")]
    WriterBusy {
        /// The holder's pid.
        pid: u32,
        /// How long we waited.
        waited: Duration,
    },
    /// The shared segment is inconsistent (a peer wrote garbage).
    #[error("tf buffer is corrupt: {0}")]
    Corrupt(String),
}

/// Why [`crate::TfBuffer::lookup_transform`] gave no transform.
#[derive(Clone, Debug, thiserror::Error, PartialEq)]
pub enum LookupError {
    /// No frame of that name has ever been set (tf2: `LookupException`).
    #[error("frame {frame:?} does not exist")]
    UnknownFrame {
        /// The frame id asked for.
        frame: String,
    },
    /// The two frames are in different trees (tf2: `ConnectivityException`).
    #[error(
        "{target_frame:?} and {source_frame:?} are not connected: their trees have roots \
         {target_root:?} and {source_root:?}"
    )]
    Disconnected {
        /// Target frame.
        target_frame: String,
        /// Source frame.
        source_frame: String,
        /// Root reached from the target.
        target_root: String,
        /// Root reached from the source.
        source_root: String,
    },
    /// The time is before the oldest transform of a frame on the path
    /// (tf2: `ExtrapolationException`, "into the past").
    #[error(
        "lookup would extrapolate into the past: {frame:?} at {requested_ns} ns, \
         its data spans {earliest_ns}..={latest_ns} ns"
    )]
    ExtrapolationPast {
        /// The frame whose history does not cover the time.
        frame: String,
        /// Time asked for (ns).
        requested_ns: i64,
        /// Oldest stamp held for that frame.
        earliest_ns: i64,
        /// Newest stamp held for that frame.
        latest_ns: i64,
    },
    /// The time is after the newest transform of a frame on the path
    /// (tf2: `ExtrapolationException`, "into the future").
    #[error(
        "lookup would extrapolate into the future: {frame:?} at {requested_ns} ns, \
         its data spans {earliest_ns}..={latest_ns} ns"
    )]
    ExtrapolationFuture {
        /// The frame whose history does not cover the time.
        frame: String,
        /// Time asked for (ns).
        requested_ns: i64,
        /// Oldest stamp held for that frame.
        earliest_ns: i64,
        /// Newest stamp held for that frame.
        latest_ns: i64,
    },
    /// Walking up from a frame did not reach a root within the bound: the
    /// parents form a loop (tf2: "the tf tree is invalid because it contains a loop").
    #[error("the tf tree contains a loop through {frame:?} (no root within {depth} steps)")]
    Loop {
        /// A frame on the loop.
        frame: String,
        /// Steps walked.
        depth: usize,
    },
    /// A frame's history kept being overwritten while it was read (the reader
    /// was slower than the writer by a whole ring, repeatedly).
    #[error("the history of {frame:?} kept changing under the reader ({tries} tries)")]
    Busy {
        /// The frame.
        frame: String,
        /// Reads tried.
        tries: u32,
    },
    /// The shared segment is inconsistent (a peer wrote garbage).
    #[error("tf buffer is corrupt: {0}")]
    Corrupt(String),
    /// [`crate::TfBuffer::wait_for_transform`] ran out of time; `last` is why
    /// the last try failed.
    #[error("no transform within {waited:?}: {last}")]
    Timeout {
        /// The timeout.
        waited: Duration,
        /// The last try's error.
        last: Box<LookupError>,
    },
}
