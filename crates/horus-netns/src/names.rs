//! Names of the namespaces this crate creates, and the removal of those left
//! behind by processes that died before dropping their hosts.
//!
//! A namespace is named `hx-<pid>-<n>-<tag>-<side>`: the creating process's pid,
//! a per-process counter, the caller's tag and `a` or `b`. Parallel tests (other
//! processes, other threads) therefore never collide, and a name whose pid no
//! longer runs belongs to a killed run: [`remove_stale`] deletes it. (A reused pid
//! only keeps a stale namespace alive until that process exits; it never removes
//! a live one.)

use std::sync::atomic::{AtomicU32, Ordering};

use crate::cmd;

/// Prefix of every namespace this crate creates.
pub(crate) const PREFIX: &str = "hx-";

static NEXT: AtomicU32 = AtomicU32::new(0);

/// A fresh `(n, base)` for this process: `base` is `hx-<pid>-<n>`.
pub(crate) fn fresh_base() -> (u32, String) {
    // Relaxed: only uniqueness of the value matters, it orders no other memory.
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    (n, format!("{PREFIX}{}-{n}", std::process::id()))
}

/// The pid encoded in one of our namespace names, `None` for anyone else's.
pub(crate) fn owner_pid(name: &str) -> Option<u32> {
    let rest = name.strip_prefix(PREFIX)?;
    let (pid, _) = rest.split_once('-')?;
    pid.parse().ok()
}

fn alive(pid: u32) -> bool {
    std::path::Path::new(&format!("/proc/{pid}")).exists()
}

/// Namespace names as `ip netns list` prints them (first word of each line).
pub(crate) fn list() -> Vec<String> {
    cmd::run("ip", &["netns", "list"])
        .unwrap_or_default()
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .map(str::to_owned)
        .collect()
}

/// Deletes our namespaces whose creating process is gone. Failures are ignored:
/// another process may be removing the same namespace at the same moment.
pub(crate) fn remove_stale() {
    for name in list() {
        if let Some(pid) = owner_pid(&name) {
            if !alive(pid) {
                let _ = cmd::run("ip", &["netns", "delete", &name]);
            }
        }
    }
}

/// The third octet of a pair's subnet `10.231.X.0/24`: distinct for the pairs of
/// one process (up to 254 at a time) and spread by pid across processes. Two pairs
/// that happen to share X do not interfere: each lives in its own two namespaces.
pub(crate) fn subnet_octet(n: u32) -> u8 {
    let mixed = std::process::id().wrapping_mul(37).wrapping_add(n);
    (mixed % 254 + 1) as u8
}

/// Checks a caller's tag: 1 to 8 of `[a-z0-9]` (it becomes part of interface names).
pub(crate) fn valid_tag(tag: &str) -> bool {
    (1..=8).contains(&tag.len())
        && tag
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn owner_pid_reads_only_our_names() {
        assert_eq!(owner_pid("hx-1234-0-t-a"), Some(1234));
        assert_eq!(owner_pid("hx-77-probe"), Some(77));
        assert_eq!(owner_pid("hx-x-0-t-a"), None);
        assert_eq!(owner_pid("someone-else"), None);
    }

    #[test]
    fn fresh_bases_differ() {
        assert_ne!(fresh_base().1, fresh_base().1);
    }

    #[test]
    fn tags() {
        assert!(valid_tag("bench1"));
        for bad in ["", "Bench", "a-b", "toolongtag"] {
            assert!(!valid_tag(bad), "{bad}");
        }
    }

    #[test]
    fn octet_is_a_host_subnet() {
        for n in 0..600 {
            assert!((1..=254).contains(&subnet_octet(n)));
        }
    }
}
