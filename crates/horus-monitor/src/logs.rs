//! The latest log lines of the namespace's processes (their `horus-log` rings), for the
//! log pane: every process's new records at each refresh, merged by time, the newest kept.
//!
//! A reader only: it copies records out of the rings and never consumes them (the
//! processes and `horus log` see the same records). Formatting is `horus log`'s.

use std::collections::{BTreeMap, VecDeque};

use horus_log::LogSegment;

/// One process's ring being followed.
struct Followed {
    seg: LogSegment,
    /// Where to continue reading.
    next: u64,
}

/// The lines the pane shows.
#[derive(Clone, Debug, Default)]
pub(crate) struct LogLines {
    /// Oldest first.
    pub(crate) lines: Vec<String>,
    /// Log segments (processes) read.
    pub(crate) processes: usize,
    /// Records the writers dropped (ring full), summed over processes.
    pub(crate) dropped: u64,
    /// Records this reader missed (overwritten before it read them) or skipped as malformed.
    pub(crate) missed: u64,
}

/// Follows the log rings of one namespace.
pub(crate) struct LogTail {
    namespace: String,
    max: usize,
    open: BTreeMap<u32, Followed>,
    /// Segment names that could not be opened (reported once, not retried).
    bad: BTreeMap<String, String>,
    lines: VecDeque<(u64, String)>,
    missed: u64,
}

impl LogTail {
    /// Keeps the newest `max` lines of `namespace`.
    pub(crate) fn new(namespace: &str, max: usize) -> LogTail {
        LogTail {
            namespace: namespace.to_owned(),
            max,
            open: BTreeMap::new(),
            bad: BTreeMap::new(),
            lines: VecDeque::new(),
            missed: 0,
        }
    }

    /// Reads what was logged since the last call.
    pub(crate) fn poll(&mut self) -> Result<LogLines, String> {
        let segments = horus_log::segments(&self.namespace).map_err(|e| e.to_string())?;
        for e in segments {
            if self.open.contains_key(&e.pid) || self.bad.contains_key(&e.name) {
                continue;
            }
            match LogSegment::open(&e.name) {
                Ok(seg) => {
                    self.open.insert(e.pid, Followed { seg, next: 0 });
                }
                Err(err) => {
                    self.bad.insert(e.name, err.to_string());
                }
            }
        }
        let mut new: Vec<(u64, String)> = Vec::new();
        let mut dropped = 0;
        for f in self.open.values_mut() {
            let batch = f.seg.read_from(f.next, true);
            f.next = batch.next;
            self.missed += batch.missed_cells + batch.malformed;
            dropped += f.seg.counters().dropped;
            // Only the newest `max` of a batch can be shown.
            let skip = batch.records.len().saturating_sub(self.max);
            new.extend(
                batch
                    .records
                    .iter()
                    .skip(skip)
                    .map(|r| (r.unix_ns, r.human())),
            );
        }
        // Each process's records are in order; across processes, by time.
        new.sort_by_key(|(t, _)| *t);
        self.lines.extend(new);
        while self.lines.len() > self.max {
            self.lines.pop_front();
        }
        Ok(LogLines {
            lines: self.lines.iter().map(|(_, l)| l.clone()).collect(),
            processes: self.open.len(),
            dropped,
            missed: self.missed,
        })
    }
}
