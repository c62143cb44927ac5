//! What a failed horus cell leaves to go on: each host's bridge counters for the cell's
//! topics, read from the bridge's status file (`horus_zenoh::read_status_file`) and appended
//! to the failure, so that a flake in CI says where the messages went (sent, drained by the
//! stall watchdog, lost on the wire, published) instead of only "no message for 20 s".

use horus_zenoh::TopicCounters;

/// The horus namespace of one host of a session: the benchmark's pid and the session's port
/// (unique on this machine, recognisable in `/dev/shm`), then `a` or `b`.
pub fn host_namespace(bench_pid: u32, port: u16, letter: &str) -> String {
    format!("mh-{bench_pid}-{port}-{letter}")
}

/// The counters that say where a topic's messages went, on one line.
fn line(c: &TopicCounters) -> String {
    format!(
        "read {} sent {} send_failed {} slow_puts {} stalls {} stall_dropped {} received {} \
         wire_lost {} source_lost {} published {} publish_failed {}",
        c.read,
        c.sent,
        c.send_failed,
        c.slow_puts,
        c.stalls,
        c.stall_dropped,
        c.received,
        c.wire_lost,
        c.source_lost,
        c.published,
        c.publish_failed
    )
}

/// `what`'s bridge counters for every topic whose name contains `cell` (its topics and
/// acknowledgement topic), or why there are none.
pub fn bridge_counters(namespace: &str, what: &str, cell: &str) -> String {
    match horus_zenoh::read_status_file(namespace) {
        Ok(Some(s)) => {
            let topics: Vec<String> = s
                .topics
                .iter()
                .filter(|t| t.name.contains(cell))
                .map(|t| {
                    format!(
                        "{what} bridge, {}: {} (cut off for {} ms)",
                        t.name,
                        line(&t.counters),
                        t.cut_off_ms
                    )
                })
                .collect();
            if topics.is_empty() {
                format!("{what} bridge: no topic of cell {cell}")
            } else {
                topics.join("; ")
            }
        }
        Ok(None) => format!("{what} bridge: no status file (the bridge has stopped)"),
        Err(e) => format!("{what} bridge: {e}"),
    }
}

/// Removes what a session's two hosts left in `/dev/shm` when the session ends, however it
/// ends: a failed cell kills both host processes (their endpoints' segments stay behind),
/// then each host's bridge, whose stdin closed with its host, stops. Dropped after the
/// session's host processes (last field of `Session`): it waits for each bridge to be gone,
/// then removes every segment of the host's namespace whose owners are all dead, and says
/// what is left, if anything. After a clean close there is nothing left to remove.
#[derive(Debug)]
pub struct ShmCleanup {
    namespaces: [String; 2],
}

/// How long a bridge whose host was killed may take to stop.
const BRIDGE_GONE_WITHIN: std::time::Duration = horus_bench_core::child::EXIT_TIMEOUT;

impl ShmCleanup {
    /// For the session listening on `port` in this benchmark process.
    pub fn new(port: u16) -> ShmCleanup {
        let pid = std::process::id();
        ShmCleanup {
            namespaces: ["a", "b"].map(|l| host_namespace(pid, port, l)),
        }
    }
}

/// Whether the bridge of `namespace` still runs (its status file names a live process).
fn bridge_running(namespace: &str) -> bool {
    match horus_zenoh::read_status_file(namespace) {
        Ok(Some(s)) => {
            // SAFETY: kill with signal 0 sends nothing; it only checks that the pid exists.
            let rc = unsafe { libc::kill(s.pid as libc::pid_t, 0) };
            rc == 0
        }
        Ok(None) | Err(_) => false,
    }
}

impl Drop for ShmCleanup {
    fn drop(&mut self) {
        for ns in &self.namespaces {
            let deadline = std::time::Instant::now() + BRIDGE_GONE_WITHIN;
            while bridge_running(ns) && std::time::Instant::now() < deadline {
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
            if let Err(e) = super::link::check_clean(ns) {
                eprintln!("multi_host: cleaning {ns}: {e:#}");
            }
        }
    }
}
