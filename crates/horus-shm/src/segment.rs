//! A named POSIX shared-memory segment mapped into this process.
//!
//! Created with `O_CREAT | O_EXCL` and mode `0600`, so a segment is never
//! silently shared with another user and two creators never both believe they
//! initialised it. The mapping is unmapped on drop; unlinking the name is a
//! separate, explicit step (the last participant does it).

use std::ffi::CString;
use std::io;
use std::ptr::NonNull;

use crate::error::SegmentError;

/// A mapped shared-memory segment.
#[derive(Debug)]
pub struct Segment {
    name: String,
    base: NonNull<u8>,
    len: usize,
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
        Ok(Segment {
            name: name.to_owned(),
            base: NonNull::new(ptr.cast()).expect("mmap never returns null on success"),
            len,
        })
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
        // SAFETY: base/len describe a mapping created by `map` and not yet
        // unmapped; every borrow into it is tied to the lifetime of `self`.
        unsafe { libc::munmap(self.base.as_ptr().cast(), self.len) };
    }
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
