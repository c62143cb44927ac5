//! Reading a statistics file written by another process.
//!
//! The file is untrusted input: the writer may be an older or newer horus,
//! may have crashed mid-write, or may be hostile. Everything is validated —
//! magic, version, structure sizes, capacity and count against the file size,
//! every enum code — before use, and every failure is a typed
//! [`ReadStatsError`]. The reader maps the file read-only and only ever does
//! atomic loads from it.
//!
//! Known limit: a writer that shrinks the file while we read it would make
//! the kernel raise SIGBUS; the scheduler never truncates its file.

use std::fs::File;
use std::os::unix::io::AsRawFd;
use std::path::{Path, PathBuf};
use std::ptr::NonNull;
use std::sync::atomic::Ordering;
use std::time::{Duration, SystemTime};

use horus_shm::init::VersionError;

use crate::rt::MemoryLock;
use crate::stats::{LoopStats, SchedulerStats};
use crate::stats_shm::{
    decode_name, decode_node, decode_percentiles, h, seqlock_read, ShmHeader, ShmRecord,
    HEADER_WORDS, MAGIC, MAX_RECORDS, RECORD_WORDS, VERSION,
};

/// Why a statistics file could not be read.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ReadStatsError {
    /// Opening, sizing or mapping the file failed (for example it does not
    /// exist: the scheduler is not running or stopped cleanly).
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The OS error.
        source: std::io::Error,
    },
    /// The file is smaller than what its header says it holds (or than a header).
    #[error("statistics file too small: {size} bytes, layout needs {needed}")]
    TooSmall {
        /// Actual size.
        size: u64,
        /// Size the layout needs.
        needed: u64,
    },
    /// Not a horus statistics file (or its writer has not finished creating it).
    #[error("not a horus statistics file (magic {found:#018x})")]
    BadMagic {
        /// The first 8 bytes.
        found: u64,
    },
    /// Written by a horus with another layout version.
    #[error("statistics layout version {found} is not supported (this reader: {supported})")]
    UnsupportedVersion {
        /// The file's version.
        found: u32,
        /// The version this reader understands.
        supported: u32,
    },
    /// A structure size or count in the header is inconsistent.
    #[error("corrupt statistics header: {what} is {found}, expected {expected}")]
    BadHeader {
        /// Which field.
        what: &'static str,
        /// Its value.
        found: u64,
        /// What it should be (or the bound it exceeds).
        expected: u64,
    },
    /// A record stayed mid-update through every retry: its writer crashed
    /// during a write or is stuck.
    #[error("record {record:?} stayed mid-update (writer crashed or stuck)")]
    Torn {
        /// The record index, `None` for the header figures.
        record: Option<usize>,
    },
    /// A record holds an invalid value.
    #[error("record {record}: invalid {field}")]
    BadRecord {
        /// The record index.
        record: usize,
        /// The invalid field.
        field: &'static str,
    },
}

/// A read-only mapping, unmapped on drop.
struct Mapping {
    ptr: NonNull<u8>,
    len: usize,
    /// A writer (or anyone) truncating the file while we read must not kill
    /// the reader: cut pages read as zeros, and the read reports it.
    fault: horus_shm::fault::Registration,
}

impl Mapping {
    fn open(path: &Path) -> Result<Mapping, ReadStatsError> {
        let io = |source| ReadStatsError::Io {
            path: path.to_owned(),
            source,
        };
        let file = File::open(path).map_err(io)?;
        let size = file.metadata().map_err(io)?.len();
        let needed = std::mem::size_of::<ShmHeader>() as u64;
        if size < needed {
            return Err(ReadStatsError::TooSmall { size, needed });
        }
        let len = usize::try_from(size).map_err(|_| ReadStatsError::TooSmall { size, needed })?;
        // SAFETY: read-only shared mapping of `len` bytes of an open regular
        // file; the kernel picks the address; the fd may close afterwards.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ,
                libc::MAP_SHARED,
                file.as_raw_fd(),
                0,
            )
        };
        if p == libc::MAP_FAILED {
            return Err(io(std::io::Error::last_os_error()));
        }
        let ptr = NonNull::new(p.cast()).expect("mmap returned null without MAP_FAILED");
        let fault = horus_shm::fault::Registration::new(p.cast(), len);
        Ok(Mapping { ptr, len, fault })
    }

    fn header(&self) -> &ShmHeader {
        debug_assert!(self.len >= std::mem::size_of::<ShmHeader>());
        // SAFETY: `open` checked len >= size_of::<ShmHeader>(); the mapping
        // is page aligned; the header is made of atomics (any bit pattern is
        // valid) and we only load from them; the borrow is tied to `self`.
        unsafe { &*self.ptr.as_ptr().cast::<ShmHeader>() }
    }

    /// Record `i`; the caller has checked it lies inside the mapping.
    fn record(&self, i: usize) -> &ShmRecord {
        let off = std::mem::size_of::<ShmHeader>() + i * std::mem::size_of::<ShmRecord>();
        debug_assert!(off + std::mem::size_of::<ShmRecord>() <= self.len);
        // SAFETY: bounds checked by `validate` (count <= capacity and the
        // file holds capacity records) and asserted above; 8-byte aligned
        // offset in a page-aligned mapping; atomics only, loads only.
        unsafe { &*self.ptr.as_ptr().add(off).cast::<ShmRecord>() }
    }

    /// Checks the header; returns the number of records to read.
    fn validate(&self) -> Result<usize, ReadStatsError> {
        let hd = self.header();
        // Acquire pairs with the writer's Release store of the magic, which
        // comes after every static header field.
        let magic = hd.magic.load(Ordering::Acquire);
        let version = hd.version.load(Ordering::Relaxed);
        horus_shm::init::check_version(magic, version, MAGIC, VERSION).map_err(|e| match e {
            VersionError::BadMagic { found } => ReadStatsError::BadMagic { found },
            VersionError::Version { found, expected } => ReadStatsError::UnsupportedVersion {
                found,
                supported: expected,
            },
        })?;
        let check = |what, found: u32, expected: usize| {
            if found as usize == expected {
                Ok(())
            } else {
                Err(ReadStatsError::BadHeader {
                    what,
                    found: u64::from(found),
                    expected: expected as u64,
                })
            }
        };
        check(
            "header_size",
            hd.header_size.load(Ordering::Relaxed),
            std::mem::size_of::<ShmHeader>(),
        )?;
        check(
            "record_size",
            hd.record_size.load(Ordering::Relaxed),
            std::mem::size_of::<ShmRecord>(),
        )?;
        let capacity = hd.capacity.load(Ordering::Relaxed);
        if capacity > MAX_RECORDS {
            return Err(ReadStatsError::BadHeader {
                what: "capacity",
                found: u64::from(capacity),
                expected: u64::from(MAX_RECORDS),
            });
        }
        let needed = std::mem::size_of::<ShmHeader>() as u64
            + u64::from(capacity) * std::mem::size_of::<ShmRecord>() as u64;
        if (self.len as u64) < needed {
            return Err(ReadStatsError::TooSmall {
                size: self.len as u64,
                needed,
            });
        }
        let count = hd.count.load(Ordering::Relaxed);
        if count > capacity {
            return Err(ReadStatsError::BadHeader {
                what: "count",
                found: u64::from(count),
                expected: u64::from(capacity),
            });
        }
        Ok(count as usize)
    }
}

impl Drop for Mapping {
    fn drop(&mut self) {
        // Unregister before unmapping (see horus_shm::fault).
        self.fault.release();
        // SAFETY: exactly the region mmap returned; no borrow outlives self.
        unsafe { libc::munmap(self.ptr.as_ptr().cast(), self.len) };
    }
}

/// Reads the statistics file at `path` (see [`stats_path`](crate::stats_path)).
///
/// ```no_run
/// let path = horus_sched::stats_path(&horus_sched::namespace(), "robot");
/// match horus_sched::read_stats(&path) {
///     Ok(stats) => {
///         for n in &stats.nodes {
///             println!("{}: {} ticks, p99 jitter {:?}", n.name, n.ticks, n.jitter.p99);
///         }
///     }
///     Err(e) => eprintln!("{e}"),
/// }
/// ```
pub fn read_stats(path: impl AsRef<Path>) -> Result<SchedulerStats, ReadStatsError> {
    let map = Mapping::open(path.as_ref())?;
    let count = map.validate()?;
    let hd = map.header();
    let mut w = [0_u64; HEADER_WORDS];
    if !seqlock_read(&hd.seq, &hd.data, &mut w) {
        return Err(ReadStatsError::Torn { record: None });
    }
    let name_words: Vec<u64> = hd.name.iter().map(|a| a.load(Ordering::Relaxed)).collect();
    let mut nodes = Vec::with_capacity(count);
    for i in 0..count {
        let rec = map.record(i);
        let mut rw = [0_u64; RECORD_WORDS];
        if !seqlock_read(&rec.seq, &rec.data, &mut rw) {
            return Err(ReadStatsError::Torn { record: Some(i) });
        }
        let node =
            decode_node(&rw).map_err(|field| ReadStatsError::BadRecord { record: i, field })?;
        nodes.push(node);
    }
    if map.fault.is_lost() {
        // Truncated while we read: what we copied may be zeros.
        let size = std::fs::metadata(path.as_ref()).map_or(0, |m| m.len());
        return Err(ReadStatsError::TooSmall {
            size,
            needed: map.len as u64,
        });
    }
    Ok(SchedulerStats {
        scheduler: decode_name(&name_words),
        pid: hd.pid.load(Ordering::Relaxed),
        taken_at: SystemTime::UNIX_EPOCH + Duration::from_nanos(w[h::TAKEN_AT_UNIX_NS]),
        uptime: Duration::from_nanos(w[h::UPTIME_NS]),
        simulated: w[h::FLAGS] & 1 != 0,
        memory_lock: MemoryLock::decode(w[h::MEMORY_LOCK]).ok_or(ReadStatsError::BadHeader {
            what: "memory_lock",
            found: w[h::MEMORY_LOCK],
            expected: MemoryLock::Failed.encode(),
        })?,
        main_loop: LoopStats {
            round: decode_percentiles(&w[h::ROUNDS..h::ROUNDS + 7]),
        },
        nodes,
    })
}

/// The writer's pid and owner word, if the header is valid.
pub(crate) fn read_owner(path: &Path) -> Result<(u32, u64), ReadStatsError> {
    let map = Mapping::open(path)?;
    map.validate()?;
    let hd = map.header();
    Ok((
        hd.pid.load(Ordering::Relaxed),
        hd.owner.load(Ordering::Relaxed),
    ))
}
