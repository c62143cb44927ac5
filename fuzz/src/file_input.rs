//! The fuzzer's bytes as a file: one anonymous memfd per thread, rewritten for each input and
//! opened by path through `/proc/self/fd`, so readers that take a path run unchanged and
//! nothing is left on disk or in `/dev/shm`.

use std::io::{Seek, Write};
use std::os::fd::{AsRawFd, FromRawFd};
use std::path::Path;

fn memfd() -> std::fs::File {
    // SAFETY: a NUL-terminated name and no flags; the result is checked.
    let fd = unsafe { libc::memfd_create(c"horus-fuzz-input".as_ptr(), 0) };
    assert!(fd >= 0, "memfd_create: {}", std::io::Error::last_os_error());
    // SAFETY: fd is a fresh descriptor we own.
    unsafe { std::fs::File::from_raw_fd(fd) }
}

/// Calls `read` with the path of a file holding exactly `data`.
pub fn with_file<R>(data: &[u8], read: impl FnOnce(&Path) -> R) -> R {
    thread_local! {
        static FILE: std::fs::File = memfd();
    }
    FILE.with(|f| {
        let mut f = f;
        f.set_len(0).expect("truncate");
        f.rewind().expect("rewind");
        f.write_all(data).expect("write");
        read(Path::new(&format!("/proc/self/fd/{}", f.as_raw_fd())))
    })
}
