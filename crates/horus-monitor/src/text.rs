//! Figures as `horus`'s verbs and the monitor show them: overflow policies, byte counts,
//! stamps, processes.

use horus::Overflow;

/// The overflow policy as text (`drop-oldest`, `reject`, `block(10ms)`).
pub fn overflow_text(o: Option<Overflow>) -> String {
    match o {
        Some(Overflow::DropOldest) => "drop-oldest".into(),
        Some(Overflow::Reject) => "reject".into(),
        Some(Overflow::Block { timeout }) => format!("block({timeout:?})"),
        None => "unknown".into(),
    }
}

/// Bytes for people: `512 B`, `1.50 KiB`, `2.00 MiB`.
pub fn human_bytes(b: f64) -> String {
    if b >= 1024.0 * 1024.0 {
        format!("{:.2} MiB", b / (1024.0 * 1024.0))
    } else if b >= 1024.0 {
        format!("{:.2} KiB", b / 1024.0)
    } else {
        format!("{b:.0} B")
    }
}

/// Bytes per second for people: `1.50 KiB/s`.
pub fn human_rate(b: f64) -> String {
    format!("{}/s", human_bytes(b))
}

/// A stamp in ns since the epoch as `seconds.nanoseconds`.
pub fn stamp_text(ns: i64) -> String {
    format!(
        "{}.{:09}",
        ns.div_euclid(1_000_000_000),
        ns.rem_euclid(1_000_000_000)
    )
}

/// Whether process `pid` exists (tools only report; liveness proper is the library's).
pub fn process_alive(pid: u32) -> bool {
    pid != 0 && std::path::Path::new(&format!("/proc/{pid}")).exists()
}

/// The command name of process `pid` (`/proc/<pid>/comm`), if readable.
pub fn process_name(pid: u32) -> Option<String> {
    std::fs::read_to_string(format!("/proc/{pid}/comm"))
        .ok()
        .map(|s| s.trim().to_owned())
}
