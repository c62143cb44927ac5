//! Raw RTPS datagrams and the bridge process's resource use, for the tests that play a
//! hostile DDS peer by sending UDP datagrams no DDS library would write (DATA_FRAGs of
//! gigabytes, floods of discovery announcements) and measure what the bridge kept.
//!
//! Included by path (`#[path = "common/raw_rtps.rs"]`) only in those tests.

#![allow(dead_code)]

/// The 20-byte RTPS header (RTPS 9.4.4) of a datagram from participant `prefix`: protocol
/// 2.3, vendor RustDDS's id.
pub(crate) fn header(prefix: &[u8]) -> Vec<u8> {
    let mut d = Vec::with_capacity(1500);
    d.extend_from_slice(b"RTPS");
    d.extend_from_slice(&[2, 3, 0x01, 0x12]); // protocol 2.3, vendor RustDDS
    d.extend_from_slice(&prefix[..12]);
    d
}

/// Appends a submessage (RTPS 9.4.5.1: id, flags, length of `body` little-endian) to `d`.
pub(crate) fn push_submessage(d: &mut Vec<u8>, id: u8, flags: u8, body: &[u8]) {
    d.push(id);
    d.push(flags);
    d.extend_from_slice(&u16::try_from(body.len()).unwrap().to_le_bytes());
    d.extend_from_slice(body);
}

/// The CPU time process `pid` has used (user + system, `/proc/PID/stat`), in clock ticks.
pub(crate) fn cpu_ticks(pid: u32) -> u64 {
    let s = std::fs::read_to_string(format!("/proc/{pid}/stat")).expect("bridge alive");
    // After the command name's closing parenthesis: state is field 3, utime 14, stime 15.
    let fields: Vec<&str> = s[s.rfind(')').unwrap() + 2..].split(' ').collect();
    fields[11].parse::<u64>().unwrap() + fields[12].parse::<u64>().unwrap()
}

/// The resident memory of process `pid` now (`VmRSS`), in bytes.
pub(crate) fn rss(pid: u32) -> u64 {
    status_kib(pid, "VmRSS:") * 1024
}

/// The peak resident memory of process `pid` (`VmHWM`), in bytes.
pub(crate) fn peak_rss(pid: u32) -> u64 {
    status_kib(pid, "VmHWM:") * 1024
}

/// The value of the `/proc/PID/status` line starting with `key`, in KiB.
fn status_kib(pid: u32, key: &str) -> u64 {
    let s = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("bridge alive");
    s.lines()
        .find_map(|l| l.strip_prefix(key))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or_else(|| panic!("no {key} in /proc/{pid}/status"))
}
