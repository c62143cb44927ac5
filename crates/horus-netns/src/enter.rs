//! Running code of the calling process inside a namespace: `setns(2)` moves only
//! the calling thread, so [`enter_current_thread`] suits a fresh process's main
//! thread before it starts any other (they inherit it) and [`run_in`] runs a
//! closure on a new thread that enters the namespace first.

use std::os::fd::AsRawFd;

use crate::error::NetnsError;

/// Moves the calling thread into the named network namespace (`/run/netns/<name>`,
/// where `ip netns add` mounts it). Threads it starts afterwards are in it too;
/// sockets it opens afterwards belong to it.
pub fn enter_current_thread(name: &str) -> Result<(), NetnsError> {
    let err = |source| NetnsError::Enter {
        name: name.to_owned(),
        source,
    };
    let file = std::fs::File::open(format!("/run/netns/{name}")).map_err(err)?;
    // SAFETY: `file` is an open descriptor of a namespace file for the whole call;
    // CLONE_NEWNET asks the kernel to check it is a network namespace. The call
    // changes only this thread's namespace and touches no memory of ours.
    let rc = unsafe { libc::setns(file.as_raw_fd(), libc::CLONE_NEWNET) };
    if rc != 0 {
        return Err(err(std::io::Error::last_os_error()));
    }
    Ok(())
}

/// Runs `f` on a new thread inside the named network namespace and returns its
/// result; the caller's thread stays where it is. A panic in `f` is propagated.
pub fn run_in<R, F>(name: &str, f: F) -> Result<R, NetnsError>
where
    R: Send,
    F: FnOnce() -> R + Send,
{
    std::thread::scope(|scope| {
        let handle = scope.spawn(move || {
            enter_current_thread(name)?;
            Ok(f())
        });
        match handle.join() {
            Ok(result) => result,
            Err(panic) => std::panic::resume_unwind(panic),
        }
    })
}
