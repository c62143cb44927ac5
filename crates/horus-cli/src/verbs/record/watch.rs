//! New topics noticed as their segments are created: an inotify watch on `/dev/shm`, so the
//! recorder attaches to a new topic within a pass of its loop instead of at the next periodic
//! listing (a 500 Hz topic with 16-deep rings overwrites its first messages in 32 ms). What
//! the topic published before the recorder attached is read from its rings
//! ([`StartAt::Oldest`](horus::StartAt::Oldest)); the periodic listing stays as the fallback
//! (no inotify, or a full event queue).

use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

/// Bytes of one read of events (many events; a full buffer is read again next pass).
const EVENTS_BUF: usize = 16 << 10;
/// Size of `struct inotify_event` without its name.
const EVENT_HEADER: usize = 16;

/// A watch on `/dev/shm` for segments of one namespace.
pub(super) struct ShmWatch {
    fd: Option<OwnedFd>,
    prefix: String,
    buf: Vec<u8>,
}

impl ShmWatch {
    /// Watches for files named `prefix…` created in (or moved into) `/dev/shm`. Without
    /// inotify (or past the watch limit) it never reports: discovery falls back to listing.
    pub(super) fn new(prefix: String) -> ShmWatch {
        // SAFETY: inotify_init1 takes flags only and returns a new descriptor or -1.
        let raw = unsafe { libc::inotify_init1(libc::IN_NONBLOCK | libc::IN_CLOEXEC) };
        let fd = (raw >= 0).then(|| {
            // SAFETY: `raw` was just returned by inotify_init1 and is owned by nobody else.
            unsafe { OwnedFd::from_raw_fd(raw) }
        });
        let fd = fd.filter(|fd| {
            // SAFETY: a valid inotify descriptor and a NUL-terminated path.
            let wd = unsafe {
                libc::inotify_add_watch(
                    fd.as_raw_fd(),
                    c"/dev/shm".as_ptr(),
                    libc::IN_CREATE | libc::IN_MOVED_TO,
                )
            };
            wd >= 0
        });
        ShmWatch {
            fd,
            prefix,
            buf: vec![0; EVENTS_BUF],
        }
    }

    /// Whether a segment of the namespace appeared since the last call (also `true` when the
    /// kernel's event queue overflowed: something may have been missed). Never blocks.
    pub(super) fn appeared(&mut self) -> bool {
        let Some(fd) = &self.fd else { return false };
        let mut seen = false;
        loop {
            // SAFETY: reads at most `buf.len()` bytes into our buffer; the descriptor is
            // non-blocking, so this returns -1 (EAGAIN) when there is nothing to read.
            let n =
                unsafe { libc::read(fd.as_raw_fd(), self.buf.as_mut_ptr().cast(), self.buf.len()) };
            if n <= 0 {
                return seen;
            }
            seen |= self.scan(n as usize);
        }
    }

    /// Whether the `len` bytes of events in the buffer name a segment of the namespace.
    fn scan(&self, len: usize) -> bool {
        let mut at = 0;
        let mut seen = false;
        while at + EVENT_HEADER <= len {
            let word = |i: usize| {
                let b = &self.buf[at + i..at + i + 4];
                u32::from_ne_bytes([b[0], b[1], b[2], b[3]])
            };
            let mask = word(4);
            let name_len = word(12) as usize;
            let end = (at + EVENT_HEADER).saturating_add(name_len).min(len);
            let name = &self.buf[at + EVENT_HEADER..end];
            let name = name.split(|&b| b == 0).next().unwrap_or_default();
            seen |= mask & libc::IN_Q_OVERFLOW != 0 || name.starts_with(self.prefix.as_bytes());
            at = end;
        }
        seen
    }
}
