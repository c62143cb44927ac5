//! What each child tells the orchestrator, through files in the run
//! directory (a SIGKILLed child cannot report at the end, so it reports all
//! the time and only what it reported counts):
//!
//! * `<id>.json` — its counters, rewritten every [`REPORT_EVERY`] (write to
//!   `<id>.json.tmp`, then rename: a reader sees the old or the new report,
//!   never half of one). Every report is one consistent snapshot: the child
//!   fills it between two messages (a subscriber then hands it to the thread
//!   that writes it, see `report_writer`).
//! * `<id>.log` (publishers) — the send log, written with `pwrite` straight
//!   into the page cache so it survives SIGKILL: word 0 is the number of
//!   successful sends, word `1 + n` the stamp of message `n`, written before
//!   its send is attempted (so every message any subscriber can hold has its
//!   stamp in the log).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::Context;
use serde::{Deserialize, Serialize};

/// How often a child rewrites its report.
pub(crate) const REPORT_EVERY: Duration = Duration::from_millis(50);

/// A publisher's counters.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct PubReport {
    pub(crate) id: u64,
    pub(crate) pid: u32,
    /// Messages sent successfully (sequence numbers `0..sent`), our count.
    pub(crate) sent: u64,
    /// The library's own `sent` counter, read in the same snapshot.
    pub(crate) horus_sent: u64,
    pub(crate) timed_out: u64,
    pub(crate) rejected: u64,
    pub(crate) pool_exhausted: u64,
    pub(crate) undelivered: u64,
    /// Longest single `send` call, ns.
    pub(crate) max_call_ns: u64,
    /// Opening the topic and taking a place, ns.
    pub(crate) join_ns: u64,
    /// Set in the last report of a clean exit.
    #[serde(rename = "final")]
    pub(crate) is_final: bool,
    pub(crate) error: Option<String>,
}

/// What one subscriber saw of one publisher.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct PairCounts {
    /// First and last (highest) sequence number received.
    pub(crate) first: u64,
    pub(crate) last: u64,
    /// Messages received (including any out of order).
    pub(crate) received: u64,
    /// Sequence numbers skipped between consecutive receipts.
    pub(crate) gaps: u64,
    /// Receipts whose sequence number was not above the last one.
    pub(crate) out_of_order: u64,
    /// Receipts stamped before the subscriber started joining, and the
    /// highest sequence number among them.
    pub(crate) before_start: u64,
    pub(crate) max_seq_before_start: Option<u64>,
    /// Receipts stamped after the subscriber had joined.
    pub(crate) after_done: u64,
}

impl PairCounts {
    /// Records one receipt of `seq` stamped `stamp`.
    pub(crate) fn observe(&mut self, seq: u64, stamp: u64, join_start: u64, join_done: u64) {
        if self.received == 0 {
            self.first = seq;
            self.last = seq;
        } else if seq <= self.last {
            self.out_of_order += 1;
        } else {
            self.gaps += seq - self.last - 1;
            self.last = seq;
        }
        self.received += 1;
        if stamp < join_start {
            self.before_start += 1;
            self.max_seq_before_start = self.max_seq_before_start.max(Some(seq));
        }
        if stamp >= join_done {
            self.after_done += 1;
        }
    }
}

/// A subscriber's counters.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct SubReport {
    pub(crate) id: u64,
    pub(crate) pid: u32,
    /// CLOCK_MONOTONIC just before `subscriber()` was called and just after
    /// it returned: messages stamped after `join_done` must reach it.
    pub(crate) join_start_ns: u64,
    pub(crate) join_done_ns: u64,
    /// CLOCK_MONOTONIC when this report was filled.
    pub(crate) written_ns: u64,
    /// Messages received with a valid checksum (our count).
    pub(crate) received: u64,
    /// Messages whose checksum failed.
    pub(crate) corrupt: u64,
    /// The library's counters, read in the same snapshot.
    pub(crate) horus_received: u64,
    pub(crate) overrun: u64,
    pub(crate) malformed: u64,
    /// Longest single `recv` call beyond its own timeout, ns.
    pub(crate) max_call_ns: u64,
    /// Longest time between the end of one `recv` call and the start of the
    /// next (the subscriber not reading: it holds `Block` publishers), ns,
    /// and CLOCK_MONOTONIC when that pause ended.
    #[serde(default)]
    pub(crate) max_pause_ns: u64,
    #[serde(default)]
    pub(crate) max_pause_end_ns: u64,
    /// Opening the topic and taking a place, ns.
    pub(crate) join_ns: u64,
    #[serde(rename = "final")]
    pub(crate) is_final: bool,
    pub(crate) error: Option<String>,
    /// Per publisher id.
    pub(crate) pairs: BTreeMap<u64, PairCounts>,
}

/// `<dir>/<id>.json`.
pub(crate) fn report_path(dir: &Path, id: u64) -> PathBuf {
    dir.join(format!("{id}.json"))
}

/// `<dir>/<id>.log`.
pub(crate) fn log_path(dir: &Path, id: u64) -> PathBuf {
    dir.join(format!("{id}.log"))
}

/// Writes `value` to `path` atomically (temporary file, then rename).
pub(crate) fn write_atomic<T: Serialize>(path: &Path, value: &T) -> anyhow::Result<()> {
    let tmp = path.with_extension("json.tmp");
    std::fs::write(&tmp, serde_json::to_vec(value)?)
        .with_context(|| format!("writing {}", tmp.display()))?;
    std::fs::rename(&tmp, path).with_context(|| format!("renaming to {}", path.display()))?;
    Ok(())
}

/// Reads a report; `None` if the child never wrote one.
pub(crate) fn read<T: for<'de> Deserialize<'de>>(path: &Path) -> anyhow::Result<Option<T>> {
    match std::fs::read(path) {
        Ok(bytes) => Ok(Some(
            serde_json::from_slice(&bytes)
                .with_context(|| format!("parsing {}", path.display()))?,
        )),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e).with_context(|| format!("reading {}", path.display())),
    }
}

/// A publisher's send log: how many sends succeeded, and the stamp of
/// every message attempted (one more than `committed` when it died while
/// sending).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct SendLog {
    pub(crate) committed: u64,
    pub(crate) stamps: Vec<u64>,
}

impl SendLog {
    /// Parses `<id>.log`; an absent file is an empty log.
    pub(crate) fn read(path: &Path) -> anyhow::Result<SendLog> {
        let bytes = match std::fs::read(path) {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(SendLog::default()),
            Err(e) => return Err(e).with_context(|| format!("reading {}", path.display())),
        };
        let mut words = bytes
            .chunks_exact(8)
            .map(|c| u64::from_le_bytes(c.try_into().expect("chunks of 8")));
        let committed = words.next().unwrap_or(0);
        Ok(SendLog {
            committed,
            stamps: words.collect(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pair_counts_gaps_and_out_of_order() {
        let mut p = PairCounts::default();
        for seq in [3, 4, 7, 6, 8] {
            p.observe(seq, 100 + seq, 0, 0);
        }
        assert_eq!((p.first, p.last, p.received), (3, 8, 5));
        assert_eq!((p.gaps, p.out_of_order), (2, 1));
    }

    #[test]
    fn pair_counts_split_by_join_window() {
        let mut p = PairCounts::default();
        // Stamps 10, 20, 30, 40; joining started at 15 and ended at 35.
        for (seq, stamp) in [(0, 10), (1, 20), (2, 30), (3, 40)] {
            p.observe(seq, stamp, 15, 35);
        }
        assert_eq!(p.before_start, 1);
        assert_eq!(p.max_seq_before_start, Some(0));
        assert_eq!(p.after_done, 1);
    }

    #[test]
    fn reports_round_trip_through_json() {
        let mut r = SubReport {
            id: 9,
            ..SubReport::default()
        };
        r.pairs.insert(4, PairCounts::default());
        let back: SubReport = serde_json::from_slice(&serde_json::to_vec(&r).unwrap()).unwrap();
        assert_eq!(back, r);
    }
}
