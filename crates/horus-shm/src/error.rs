//! Error enums, one per operation.

use std::io;

/// A namespace or topic name that cannot name a segment.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum NameError {
    /// Empty or too long.
    #[error("name {name:?} must be 1..={max} bytes")]
    Length {
        /// The rejected name.
        name: String,
        /// The longest accepted length.
        max: usize,
    },
    /// Contains a character outside `[A-Za-z0-9_./-]`.
    #[error("name {name:?} contains {character:?}; allowed are A-Z a-z 0-9 _ . / -")]
    Character {
        /// The rejected name.
        name: String,
        /// The first offending character.
        character: char,
    },
    /// A namespace with a `.`, which separates a segment name's parts (two
    /// namespaces would share segments).
    #[error("namespace {namespace:?} contains '.'; a namespace allows A-Z a-z 0-9 _ / -")]
    NamespaceDot {
        /// The rejected namespace.
        namespace: String,
    },
}

/// Why a shared-memory segment could not be created or mapped.
#[derive(Debug, thiserror::Error)]
pub enum SegmentError {
    /// The name is not valid.
    #[error(transparent)]
    Name(#[from] NameError),
    /// A segment with this name already exists (create only).
    #[error("segment {0} already exists")]
    Exists(String),
    /// No segment with this name exists (open only).
    #[error("segment {0} does not exist")]
    NotFound(String),
    /// The segment exists but is smaller than its header says or than a header.
    #[error("segment {name} is truncated: {actual} bytes, need {expected}")]
    Truncated {
        /// Segment name.
        name: String,
        /// Bytes present.
        actual: u64,
        /// Bytes required.
        expected: u64,
    },
    /// The file is another user's, or others may write it: a segment of ours is always
    /// ours alone (`0600`), so this is someone else's file under our name (open only).
    #[error(
        "segment {name} is not ours alone: owned by uid {owner} with mode {mode:04o} \
         (this process runs as uid {euid}); refusing to map it — remove it if it is stale"
    )]
    Foreign {
        /// Segment name.
        name: String,
        /// The file's owner.
        owner: u32,
        /// The file's permission bits.
        mode: u32,
        /// This process's effective user id.
        euid: u32,
    },
    /// An OS call failed.
    #[error("{op} on segment {name}: {source}")]
    Os {
        /// The failing call.
        op: &'static str,
        /// Segment name.
        name: String,
        /// The OS error.
        source: io::Error,
    },
}

/// Why a channel segment was rejected when opened.
#[derive(Debug, thiserror::Error)]
pub enum OpenError {
    /// Creating or mapping the segment failed.
    #[error(transparent)]
    Segment(#[from] SegmentError),
    /// The requested configuration is not valid.
    #[error("invalid channel configuration: {0}")]
    Config(String),
    /// The segment does not start with the horus magic: not ours, or garbage.
    #[error("segment {name} is not a horus channel (magic {found:#018x})")]
    BadMagic {
        /// Segment name.
        name: String,
        /// What was found.
        found: u64,
    },
    /// A horus segment of another layout version.
    #[error("segment {name} has layout version {found}, this build speaks {expected}")]
    Version {
        /// Segment name.
        name: String,
        /// Version found.
        found: u32,
        /// Version expected.
        expected: u32,
    },
    /// The header is inconsistent (sizes, offsets, capacities out of range).
    #[error("segment {name} is corrupt: {reason}")]
    Corrupt {
        /// Segment name.
        name: String,
        /// What is inconsistent.
        reason: String,
    },
    /// The creator never finished initialising the segment.
    #[error("segment {0} was never initialised (its creator may have died)")]
    NotInitialized(String),
    /// The segment carries another payload schema.
    #[error("schema mismatch on {name}")]
    SchemaMismatch {
        /// Segment name.
        name: String,
        /// The schema bytes the segment holds.
        found: Box<[u8; crate::layout::SCHEMA_BYTES]>,
    },
    /// The segment's capacities or QoS differ from the ones requested.
    #[error("segment {name} was created with {found}, requested {requested}")]
    ConfigMismatch {
        /// Segment name.
        name: String,
        /// Configuration in the segment.
        found: String,
        /// Configuration requested.
        requested: String,
    },
}

impl From<crate::init::InitError> for OpenError {
    fn from(e: crate::init::InitError) -> OpenError {
        match e {
            crate::init::InitError::Segment(e) => OpenError::Segment(e),
            crate::init::InitError::NotInitialised(name) => OpenError::NotInitialized(name),
        }
    }
}

impl OpenError {
    /// The error for segment `name` whose versioned header failed
    /// [`crate::init::check_version`].
    pub fn from_version(name: &str, e: crate::init::VersionError) -> OpenError {
        let name = name.to_owned();
        match e {
            crate::init::VersionError::BadMagic { found } => OpenError::BadMagic { name, found },
            crate::init::VersionError::Version { found, expected } => OpenError::Version {
                name,
                found,
                expected,
            },
        }
    }
}

/// Why a publisher or subscriber could not join a channel.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum JoinError {
    /// Every publisher (or subscriber) record is held by a live process.
    #[error("all {max} {role} places on the channel are taken by live participants")]
    Full {
        /// "publisher" or "subscriber".
        role: &'static str,
        /// The channel's capacity for that role.
        max: u32,
    },
    /// The channel is being torn down by its last participant; reopen it.
    #[error("the channel is closing")]
    Closing,
}

/// Why a publisher port refused a payload. Nothing was written.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum PayloadError {
    /// The payload does not fit the slot (inline) or the chunk.
    #[error("payload of {len} bytes exceeds the {capacity}-byte {place}")]
    TooLarge {
        /// Bytes offered.
        len: usize,
        /// Bytes that fit.
        capacity: usize,
        /// "slot" or "chunk".
        place: &'static str,
    },
}

/// Why a publisher has no room for its next message (see
/// [`crate::PublisherPort::make_room`]). Each refusal is counted once, by the
/// port, where it happens.
#[derive(Debug, thiserror::Error, Clone, Copy, PartialEq, Eq)]
pub enum RoomError {
    /// The ring is full (`Reject`): counted as `rejected`.
    #[error("the ring is full")]
    Full,
    /// Still full after waiting this long (`Block`): counted as `timed_out`.
    #[error("no room within {0:?}")]
    TimedOut(std::time::Duration),
    /// The segment was truncated by another process: this port is dead.
    #[error("the segment was truncated")]
    Lost,
}
