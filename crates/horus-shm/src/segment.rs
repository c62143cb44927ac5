//! A named POSIX shared-memory segment mapped into this process.
//!
//! Created with `O_CREAT | O_EXCL` and mode `0600`, so a segment is never
//! silently shared with another user and two creators never both believe they
//! initialised it. The mapping is unmapped on drop; unlinking the name is a
//! separate, explicit step (the last participant does it).
//!
//! Every mapping is registered with [`crate::fault`], so another process
//! truncating the file does not kill this one: the pages it took become
//! private zero pages and the segment is marked lost ([`Segment::is_lost`]).
//! The first look that notices the loss removes the name, if it still names
//! this file, so that the topic can be created afresh.

use std::ffi::CString;
use std::io;
use std::ptr::NonNull;
use std::sync::atomic::{AtomicBool, Ordering};

use crate::error::SegmentError;
use crate::fault::Registration;

/// A mapped shared-memory segment.
#[derive(Debug)]
pub struct Segment {
    name: String,
    base: NonNull<u8>,
    len: usize,
    /// The file's identity when mapped, to tell it from a later segment of
    /// the same name.
    dev: u64,
    ino: u64,
    /// Our entry in the SIGBUS registry; dropped before unmapping.
    fault: Registration,
    /// Set once the name was released after the segment was found lost.
    released: AtomicBool,
}

// SAFETY: the mapping is process-wide memory with no thread affinity; all
// access to its contents goes through atomics or the guards built on top.
unsafe impl Send for Segment {}
// SAFETY: as above; `Segment` itself exposes only its address and length.
unsafe impl Sync for Segment {}

fn os(op: &'static str, name: &str) -> SegmentError {
    SegmentError::Os {
        op,
        name: name.to_owned(),
        source: io::Error::last_os_error(),
    }
}

impl Segment {
    /// Creates a new segment of `len` zeroed bytes. Fails with
    /// [`SegmentError::Exists`] if the name is taken.
    pub fn create(name: &str, len: usize) -> Result<Segment, SegmentError> {
        let cname = CString::new(name).expect("segment names are validated ASCII");
        // SAFETY: cname is a valid NUL-terminated string for the call.
        let fd = unsafe {
            libc::shm_open(
                cname.as_ptr(),
                libc::O_CREAT | libc::O_EXCL | libc::O_RDWR | libc::O_CLOEXEC,
                0o600 as libc::mode_t,
            )
        };
        if fd < 0 {
            return Err(match io::Error::last_os_error().raw_os_error() {
                Some(libc::EEXIST) => SegmentError::Exists(name.to_owned()),
                _ => os("shm_open(create)", name),
            });
        }
        let fd = Fd(fd);
        // SAFETY: fd is an open descriptor we own. The umask may have
        // narrowed the mode further; we only make sure it is not wider.
        if unsafe { libc::fchmod(fd.0, 0o600) } != 0 {
            let e = os("fchmod", name);
            Self::unlink(name);
            return Err(e);
        }
        // SAFETY: fd is an open descriptor we own; ftruncate extends the new
        // file with zero pages.
        if unsafe { libc::ftruncate(fd.0, len as libc::off_t) } != 0 {
            let e = os("ftruncate", name);
            Self::unlink(name);
            return Err(e);
        }
        Self::map(name, &fd, len).inspect_err(|_| Self::unlink(name))
    }

    /// Opens an existing segment and maps all of it. `min_len` is the least
    /// size a valid segment can have (its header); a smaller file is reported
    /// as truncated rather than mapped.
    pub fn open(name: &str, min_len: usize) -> Result<Segment, SegmentError> {
        let cname = CString::new(name).expect("segment names are validated ASCII");
        // SAFETY: cname is a valid NUL-terminated string for the call.
        let fd = unsafe { libc::shm_open(cname.as_ptr(), libc::O_RDWR | libc::O_CLOEXEC, 0) };
        if fd < 0 {
            return Err(match io::Error::last_os_error().raw_os_error() {
                Some(libc::ENOENT) => SegmentError::NotFound(name.to_owned()),
                _ => os("shm_open(open)", name),
            });
        }
        let fd = Fd(fd);
        // SAFETY: an all-zero stat is a valid value to be overwritten.
        let mut st: libc::stat = unsafe { std::mem::zeroed() };
        // SAFETY: fd is open and st is a valid out-pointer.
        if unsafe { libc::fstat(fd.0, &mut st) } != 0 {
            return Err(os("fstat", name));
        }
        // Another user's file under our name (/dev/shm is world-writable: anyone can create
        // a name first), or one that others may write: never map it. Our own segments are
        // created 0600 (`create`), so this refuses nothing horus made for us. (Read bits for
        // others are not refused: they cannot change what we read.)
        // SAFETY: geteuid has no preconditions and cannot fail.
        let euid = unsafe { libc::geteuid() };
        if st.st_uid != euid || st.st_mode & 0o022 != 0 {
            return Err(SegmentError::Foreign {
                name: name.to_owned(),
                owner: st.st_uid,
                mode: st.st_mode & 0o7777,
                euid,
            });
        }
        let len = st.st_size as u64;
        if len < min_len as u64 {
            return Err(SegmentError::Truncated {
                name: name.to_owned(),
                actual: len,
                expected: min_len as u64,
            });
        }
        Self::map(name, &fd, len as usize)
    }

    fn map(name: &str, fd: &Fd, len: usize) -> Result<Segment, SegmentError> {
        // SAFETY: a fresh shared mapping of an fd we hold open; the kernel
        // chooses the address. The fd may be closed after mmap returns.
        let ptr = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED,
                fd.0,
                0,
            )
        };
        if ptr == libc::MAP_FAILED {
            return Err(os("mmap", name));
        }
        let base: NonNull<u8> =
            NonNull::new(ptr.cast()).expect("mmap never returns null on success");
        let fault = Registration::new(base.as_ptr(), len);
        let (dev, ino) = identity(fd.0).unwrap_or((0, 0));
        Ok(Segment {
            name: name.to_owned(),
            base,
            len,
            dev,
            ino,
            fault,
            released: AtomicBool::new(false),
        })
    }

    /// Whether the file was truncated under this mapping: some page of it
    /// was touched beyond the file's end and replaced by a private zero
    /// page. Its contents can no longer be trusted or shared; report an
    /// error. Costs one relaxed load while the segment is intact. The first
    /// call that sees the loss also removes the segment's name if it still
    /// names this file ([`Segment::unlink_if_same`]).
    #[inline]
    pub fn is_lost(&self) -> bool {
        if self.fault.is_lost() {
            self.on_lost();
            true
        } else {
            false
        }
    }

    #[cold]
    fn on_lost(&self) {
        // Relaxed: only decides which of the looks does the unlink.
        if !self.released.swap(true, Ordering::Relaxed) {
            self.unlink_if_same();
        }
    }

    /// Touches the last page of the mapping, then returns [`Segment::is_lost`].
    /// A truncation takes the last page first, so this notices any
    /// truncation by a whole page or more even if nothing else of this
    /// mapping has been touched since (the touch faults and is repaired).
    pub fn probe_lost(&self) -> bool {
        if !self.fault.is_lost() && self.len > 0 {
            // SAFETY: base + len - 1 is inside the mapping; a volatile read
            // of a byte is valid for any contents. If the page is gone the
            // read faults and the fault handler maps a zero page (the
            // mapping is registered), so the read completes.
            unsafe { std::ptr::read_volatile(self.base.as_ptr().add(self.len - 1)) };
        }
        self.is_lost()
    }

    /// Whether this mapping is protected against truncation (the fault
    /// registry had room for it).
    pub fn is_protected(&self) -> bool {
        self.fault.is_protected()
    }

    /// Removes the segment's name if it still names the file this segment
    /// mapped (same device and inode), so a stale handle never removes a
    /// newer segment created under the same name. Returns whether it
    /// unlinked. (A process that replaces the name between our check and
    /// the unlink can still lose it: the window is two system calls wide.)
    pub fn unlink_if_same(&self) -> bool {
        let Ok(cname) = CString::new(self.name.as_str()) else {
            return false;
        };
        // SAFETY: cname is a valid NUL-terminated string for the call.
        let fd = unsafe { libc::shm_open(cname.as_ptr(), libc::O_RDONLY | libc::O_CLOEXEC, 0) };
        if fd < 0 {
            return false;
        }
        let fd = Fd(fd);
        if identity(fd.0) != Some((self.dev, self.ino)) || self.ino == 0 {
            return false;
        }
        // SAFETY: cname is a valid NUL-terminated string for the call.
        unsafe { libc::shm_unlink(cname.as_ptr()) == 0 }
    }

    /// Removes the name (existing mappings stay valid). Errors are ignored:
    /// the name may already be gone.
    pub fn unlink(name: &str) {
        if let Ok(cname) = CString::new(name) {
            // SAFETY: cname is a valid NUL-terminated string for the call.
            unsafe { libc::shm_unlink(cname.as_ptr()) };
        }
    }

    /// The segment's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Start of the mapping (page aligned).
    pub fn base(&self) -> *mut u8 {
        self.base.as_ptr()
    }

    /// Length of the mapping in bytes.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the mapping is empty (never, for a valid segment).
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

impl Drop for Segment {
    fn drop(&mut self) {
        // Unregister first (waiting for a fault handler working on this
        // mapping), so no handler maps a page over the range once it is
        // unmapped and possibly reused.
        self.fault.release();
        // SAFETY: base/len describe a mapping created by `map` and not yet
        // unmapped; every borrow into it is tied to the lifetime of `self`.
        unsafe { libc::munmap(self.base.as_ptr().cast(), self.len) };
    }
}

/// Device and inode of an open file.
fn identity(fd: libc::c_int) -> Option<(u64, u64)> {
    // SAFETY: an all-zero stat is a valid value to be overwritten.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: fd is open and st is a valid out-pointer.
    if unsafe { libc::fstat(fd, &mut st) } != 0 {
        return None;
    }
    Some((st.st_dev as u64, st.st_ino as u64))
}

struct Fd(libc::c_int);

impl Drop for Fd {
    fn drop(&mut self) {
        // SAFETY: we own this descriptor and close it exactly once.
        unsafe { libc::close(self.0) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unique(tag: &str) -> String {
        format!("/horus.test.seg.{}.{}", std::process::id(), tag)
    }

    #[test]
    fn create_is_exclusive_and_0600() {
        let name = unique("excl");
        let s = Segment::create(&name, 4096).unwrap();
        assert!(matches!(
            Segment::create(&name, 4096),
            Err(SegmentError::Exists(_))
        ));
        let meta = std::fs::metadata(format!("/dev/shm{name}")).unwrap();
        use std::os::unix::fs::PermissionsExt;
        assert_eq!(meta.permissions().mode() & 0o777, 0o600);
        drop(s);
        Segment::unlink(&name);
        assert!(matches!(
            Segment::open(&name, 64),
            Err(SegmentError::NotFound(_))
        ));
    }

    #[test]
    fn segment_of_another_user_or_writable_by_others_is_refused() {
        use std::os::unix::fs::PermissionsExt;
        let name = unique("foreign");
        let s = Segment::create(&name, 4096).unwrap();
        let path = format!("/dev/shm{name}");
        // Readable and writable by anyone: what another user's squatting file would be.
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o666)).unwrap();
        let err = Segment::open(&name, 64).unwrap_err();
        assert!(
            matches!(err, SegmentError::Foreign { mode: 0o666, .. }),
            "{err}"
        );
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
        // SAFETY: geteuid has no preconditions.
        if unsafe { libc::geteuid() } == 0 {
            // As root, hand the file to another user: refused although its mode is 0600.
            std::os::unix::fs::chown(&path, Some(65534), None).unwrap();
            let err = Segment::open(&name, 64).unwrap_err();
            assert!(
                matches!(err, SegmentError::Foreign { owner: 65534, .. }),
                "{err}"
            );
            std::os::unix::fs::chown(&path, Some(0), None).unwrap();
        }
        assert!(Segment::open(&name, 64).is_ok());
        drop(s);
        Segment::unlink(&name);
    }

    fn truncate(name: &str, len: u64) {
        std::fs::OpenOptions::new()
            .write(true)
            .open(format!("/dev/shm{name}"))
            .unwrap()
            .set_len(len)
            .unwrap();
    }

    fn read_word(s: &Segment, offset: usize) -> u64 {
        assert!(offset + 8 <= s.len());
        // SAFETY: in bounds (asserted), 8-aligned offsets of a page-aligned
        // mapping; a volatile read of plain bytes.
        unsafe { std::ptr::read_volatile(s.base().add(offset).cast::<u64>()) }
    }

    #[test]
    fn truncated_to_zero_reads_zeros_and_is_lost() {
        let name = unique("trunc0");
        let s = Segment::create(&name, 4 * 4096).unwrap();
        // SAFETY: offset 0 of a fresh 16 KiB mapping, 8-aligned.
        unsafe { std::ptr::write_volatile(s.base().cast::<u64>(), 0xfeed) };
        assert!(!s.is_lost());
        truncate(&name, 0);
        // Without the fault handler this read would kill the test process.
        assert_eq!(read_word(&s, 0), 0);
        assert!(s.is_lost());
        // Noticing the loss removed the name: it can be created afresh.
        assert!(matches!(
            Segment::open(&name, 8),
            Err(SegmentError::NotFound(_))
        ));
        let fresh = Segment::create(&name, 4096).unwrap();
        assert!(!fresh.is_lost());
        // Writes go to this process's private page, harmlessly.
        // SAFETY: as above.
        unsafe { std::ptr::write_volatile(s.base().add(8192).cast::<u64>(), 7) };
        drop(s);
        assert!(!fresh.is_lost());
        drop(fresh);
        Segment::unlink(&name);
    }

    #[test]
    fn truncated_to_half_is_found_by_probe() {
        let name = unique("trunchalf");
        let s = Segment::create(&name, 4 * 4096).unwrap();
        truncate(&name, 2 * 4096);
        // The first half is intact: reading it notices nothing.
        assert_eq!(read_word(&s, 0), 0);
        assert!(!s.is_lost());
        assert!(s.probe_lost());
        assert!(s.is_lost());
        assert!(matches!(
            Segment::open(&name, 8),
            Err(SegmentError::NotFound(_))
        ));
    }

    #[test]
    fn concurrent_faults_and_drops_reuse_registry_slots_safely() {
        let threads: Vec<_> = (0..4)
            .map(|t| {
                std::thread::spawn(move || {
                    for i in 0..50 {
                        let name = unique(&format!("churn{t}.{i}"));
                        let s = Segment::create(&name, 3 * 4096).unwrap();
                        // A slot just freed by another thread starts clean.
                        assert!(!s.is_lost());
                        truncate(&name, if i % 2 == 0 { 0 } else { 4096 });
                        for page in 0..3 {
                            assert_eq!(read_word(&s, page * 4096), 0);
                        }
                        assert!(s.probe_lost());
                        drop(s);
                        Segment::unlink(&name);
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
    }

    #[test]
    fn stale_handle_never_unlinks_a_newer_segment_of_the_same_name() {
        let name = unique("stale");
        let old = Segment::create(&name, 4096).unwrap();
        Segment::unlink(&name);
        let new = Segment::create(&name, 4096).unwrap();
        assert!(!old.unlink_if_same());
        assert!(Segment::open(&name, 8).is_ok());
        assert!(new.unlink_if_same());
        assert!(matches!(
            Segment::open(&name, 8),
            Err(SegmentError::NotFound(_))
        ));
    }

    #[test]
    fn short_file_is_truncated_error() {
        let name = unique("short");
        let _s = Segment::create(&name, 100).unwrap();
        assert!(matches!(
            Segment::open(&name, 4096),
            Err(SegmentError::Truncated { actual: 100, .. })
        ));
        Segment::unlink(&name);
    }
}
