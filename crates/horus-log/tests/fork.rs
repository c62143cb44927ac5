//! Writers that die mid-record, and forked children. A process whose child is killed while
//! it writes into the parent's ring (a child that bypassed the fork handler, or a peer
//! scribbling on the segment) leaves a reservation that is never committed: the parent's
//! drain skips it after a while and counts it, instead of waiting at it for good while
//! every later record is dropped. A child forked the ordinary way logs into a segment of
//! its own. The children are real processes (`fork`), the parent is this test process.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use horus_log::{Console, LogSegment, Out, Value};

/// The tests fork: one at a time, so no other test thread holds a lock the child needs.
static SERIAL: Mutex<()> = Mutex::new(());

/// The messages the drain thread printed (the logger is this process's, shared by tests).
fn printed() -> &'static Mutex<Vec<String>> {
    static P: std::sync::OnceLock<Arc<Mutex<Vec<String>>>> = std::sync::OnceLock::new();
    P.get_or_init(|| {
        let p = Arc::new(Mutex::new(Vec::new()));
        let sink = Arc::clone(&p);
        let ns = format!("logtest-fork-{}", std::process::id());
        let guard = horus_log::Builder::new()
            .namespace(&ns)
            .console(Console::Func(Box::new(move |r| {
                sink.lock().unwrap().push(r.message.clone())
            })))
            .init()
            .unwrap();
        // Lives as long as the test process: shut down (segment removed) at its exit.
        std::mem::forget(guard);
        // SAFETY: registers a plain function; forked children end with `_exit`, which
        // does not run it.
        unsafe { libc::atexit(shutdown_at_exit) };
        p
    })
}

extern "C" fn shutdown_at_exit() {
    horus_log::shutdown();
}

fn namespace() -> String {
    format!("logtest-fork-{}", std::process::id())
}

/// Polls `cond` for at most 30 s (a bound that turns a hang into a failure, not a timing
/// assertion).
fn eventually(mut cond: impl FnMut() -> bool) -> bool {
    let end = Instant::now() + Duration::from_secs(30);
    while Instant::now() < end {
        if cond() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    cond()
}

fn wait_child(pid: libc::pid_t) -> i32 {
    let mut status = 0;
    // SAFETY: waits for our own child; `status` is a valid out pointer.
    let r = unsafe { libc::waitpid(pid, &mut status, 0) };
    assert_eq!(r, pid);
    status
}

/// A value whose encoding kills the writing process: it has reserved its record's cells
/// and written the record's header, and dies before committing.
struct DiesWhileEncoded;

impl Value for DiesWhileEncoded {
    fn encoded_len(&self) -> usize {
        40
    }
    fn encode(&self, _: &mut Out) {
        // SAFETY: ends the (child) process at once, no unwinding or atexit handlers.
        unsafe { libc::_exit(0) }
    }
}

fn own_segment() -> LogSegment {
    LogSegment::open(&horus_log::segment_name().unwrap()).unwrap()
}

#[test]
fn killed_writer_uncommitted_cell_is_skipped_and_counted() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let printed = printed();
    horus_log::info!("before the child");
    assert!(eventually(|| printed
        .lock()
        .unwrap()
        .iter()
        .any(|m| m == "before the child")));
    let head_before = own_segment().counters().head;
    // A child that writes into this process's ring (a raw fork: the fork handler that
    // gives a child its own logger does not run, as for a child of a build without it)
    // and dies between reserving its record and committing it.
    // SAFETY: clone with only SIGCHLD is fork(2); the child runs the write path (atomics
    // and copies into the mapped ring, no allocation or lock) and `_exit`s inside it.
    let pid = unsafe {
        libc::syscall(
            libc::SYS_clone,
            libc::SIGCHLD as libc::c_ulong,
            0usize,
            0usize,
            0usize,
            0usize,
        )
    } as libc::pid_t;
    assert!(pid >= 0, "clone failed");
    if pid == 0 {
        horus_log::info!("dies while writing"; value = DiesWhileEncoded);
        // SAFETY: not reached (the value ends the process); ends the child regardless.
        unsafe { libc::_exit(1) }
    }
    assert_eq!(
        wait_child(pid),
        0,
        "the child did not die inside its record"
    );
    let reserved = own_segment().counters().head - head_before;
    assert!(
        reserved > 0,
        "the child reserved nothing in the parent's ring"
    );
    // The parent goes on logging: every record is printed, the dead reservation skipped.
    for i in 0..200u32 {
        horus_log::info!("after {}", i);
    }
    let all_printed = eventually(|| {
        printed
            .lock()
            .unwrap()
            .iter()
            .filter(|m| m.starts_with("after "))
            .count()
            == 200
    });
    let counters = own_segment().counters();
    assert!(
        all_printed,
        "the drain waits at the dead child's reservation: {counters:?}"
    );
    assert_eq!(counters.abandoned, reserved, "{counters:?}");
    assert_eq!(counters.dropped, 0, "{counters:?}");
    let printed = printed.lock().unwrap();
    assert!(!printed.iter().any(|m| m.starts_with("dies while")));
    let after: Vec<_> = printed.iter().filter(|m| m.starts_with("after ")).collect();
    for (i, m) in after.iter().enumerate() {
        assert_eq!(**m, format!("after {i}"));
    }
}

#[test]
fn forked_child_logs_into_its_own_segment() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let printed = printed();
    let ns = namespace();
    horus_log::info!("parent before fork");
    // SAFETY: fork; the child logs (creating its own logger: a segment and a drain thread,
    // as a Python `multiprocessing` child does) and `_exit`s without running destructors.
    let pid = unsafe { libc::fork() };
    assert!(pid >= 0, "fork failed");
    if pid == 0 {
        horus_log::info!("from the child {}", 7u32);
        let own = horus_log::segment_name().unwrap_or_default();
        let ok = own.ends_with(&format!(".log.{}", std::process::id()));
        // SAFETY: ends the child; its segment stays, as a crashed process's does.
        unsafe { libc::_exit(if ok { 0 } else { 3 }) }
    }
    assert_eq!(
        wait_child(pid),
        0,
        "the child did not log into a segment of its own"
    );
    let name = horus_log::segments(&ns)
        .unwrap()
        .into_iter()
        .find(|e| e.pid == pid as u32)
        .expect("the child's segment")
        .name;
    let mut child = LogSegment::open(&name).unwrap();
    let batch = child.read_from(0, false);
    let msgs: Vec<_> = batch.records.iter().map(|r| r.message.as_str()).collect();
    assert_eq!(msgs, ["from the child 7"]);
    assert_eq!(batch.records[0].pid, pid as u32);
    drop(child);
    // Nothing of the child's in the parent's ring; the parent logs on.
    horus_log::info!("parent after fork");
    assert!(eventually(|| printed
        .lock()
        .unwrap()
        .iter()
        .any(|m| m == "parent after fork")));
    let parent = own_segment().read_from(0, false);
    assert!(parent
        .records
        .iter()
        .all(|r| !r.message.starts_with("from the child")));
    horus_log::remove_dead(&ns).unwrap();
    assert!(horus_log::segments(&ns)
        .unwrap()
        .iter()
        .all(|e| e.pid != pid as u32));
}
