//! Log records as `foxglove.Log` messages (JSON, with the `foxglove.Log` JSON schema), and
//! [`LogTap`]: every log ring of a namespace followed as a reader.
//!
//! `horus record` writes them into a `/log` channel and the Foxglove bridge streams them on
//! one, so Foxglove's Log panel shows the robot's logs next to its topics.
//!
//! The tap never consumes: it copies records out of each process's ring the way `horus log`
//! does, so the process's own drain thread (its console) sees everything it would without
//! it. Records the tap could not read (overwritten first: counted in 32-byte ring cells, as
//! the reader reports them; malformed) and those the writer dropped (ring full) while the
//! tap followed are counted as missed.

use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

use horus_log::{Level, LogRecord, LogSegment};
use serde_json::{json, Value};

/// How often the namespace is listed for new log segments.
const DISCOVER_EVERY: Duration = Duration::from_millis(200);

/// Least time between two reads of the rings (a poll sooner returns nothing): logs are
/// not latency-critical, and the rings hold far more than this much logging.
const READ_EVERY: Duration = Duration::from_millis(5);

/// The channel log records are recorded and streamed on.
pub const TOPIC: &str = "/log";

/// Schema name.
pub const SCHEMA_NAME: &str = "foxglove.Log";

/// Schema encoding of [`SCHEMA`].
pub const SCHEMA_ENCODING: &str = "jsonschema";

/// Message encoding.
pub const MESSAGE_ENCODING: &str = "json";

/// The `foxglove.Log` JSON schema.
pub const SCHEMA: &str = r#"{"title":"foxglove.Log","description":"A log message","type":"object","properties":{"timestamp":{"type":"object","title":"time","properties":{"sec":{"type":"integer","minimum":0},"nsec":{"type":"integer","minimum":0,"maximum":999999999}},"description":"Timestamp of log message"},"level":{"title":"foxglove.LogLevel","description":"Log level","oneOf":[{"title":"UNKNOWN","const":0},{"title":"DEBUG","const":1},{"title":"INFO","const":2},{"title":"WARNING","const":3},{"title":"ERROR","const":4},{"title":"FATAL","const":5}]},"message":{"type":"string","description":"Log message"},"name":{"type":"string","description":"Process or node name"},"file":{"type":"string","description":"Filename"},"line":{"type":"integer","minimum":0,"description":"Line number in the file"}}}"#;

/// The `/log` channel's schema, for [`crate::RecordingWriter::add_raw_channel`].
pub fn raw_schema() -> crate::RawSchema<'static> {
    crate::RawSchema {
        name: SCHEMA_NAME,
        schema_encoding: SCHEMA_ENCODING,
        text: SCHEMA,
        message_encoding: MESSAGE_ENCODING,
    }
}

/// The `foxglove.LogLevel` of a horus level (trace and debug are DEBUG).
pub fn level(l: Level) -> u8 {
    match l {
        Level::Trace | Level::Debug => 1,
        Level::Info => 2,
        Level::Warn => 3,
        Level::Error => 4,
    }
}

/// The `foxglove.Log` JSON of one record: the message with its `key=value` fields, the name
/// `<target> (<process>[<pid>])`.
pub fn to_json(r: &LogRecord) -> Vec<u8> {
    let v: Value = json!({
        "timestamp": {
            "sec": r.unix_ns / 1_000_000_000,
            "nsec": r.unix_ns % 1_000_000_000,
        },
        "level": level(r.level),
        "message": r.message_with_fields(),
        "name": format!("{} ({}[{}])", r.target, r.process, r.pid),
        "file": r.file,
        "line": r.line,
    });
    v.to_string().into_bytes()
}

/// One followed segment.
struct Followed {
    seg: LogSegment,
    next: u64,
    /// The writer's dropped count before what we follow (0 for a segment found after the
    /// start: its drops are the recording's).
    dropped_base: u64,
    dropped_seen: u64,
    /// Whether its name was in /dev/shm at the last look.
    listed: bool,
    /// Whether its process was running at the last look (checked only then: it reads
    /// /proc).
    alive: bool,
}

/// What one [`LogTap::poll`] found.
#[derive(Debug, Default)]
pub struct TapBatch {
    /// New records, per process in order.
    pub records: Vec<LogRecord>,
    /// Records lost since the last poll: overwritten before read (cells), malformed, and
    /// dropped by a writer whose ring was full.
    pub missed: u64,
}

/// Every log segment of a namespace: those present at [`LogTap::start`] from their records
/// written since, those that appear later (new processes, picked up at each
/// [`poll`](LogTap::poll)) from their first record.
pub struct LogTap {
    namespace: String,
    open: BTreeMap<u32, Followed>,
    /// Segments that are not valid log segments (tried once).
    skipped: BTreeSet<String>,
    last_discovery: Option<Instant>,
    last_read: Option<Instant>,
}

impl LogTap {
    /// A tap on `namespace`'s log segments; the segments there now are opened here and
    /// followed from their current end (what they held before is not this tap's).
    pub fn start(namespace: &str) -> LogTap {
        let mut tap = LogTap {
            namespace: namespace.to_owned(),
            open: BTreeMap::new(),
            skipped: BTreeSet::new(),
            last_discovery: None,
            last_read: None,
        };
        tap.from_now();
        tap
    }

    /// Lists the namespace now and follows every segment there from what is committed now
    /// on (what they hold is not read); segments found later are read from their first
    /// record. (The bridge calls it when a client subscribes after nobody did.)
    pub fn from_now(&mut self) {
        self.last_discovery = Some(Instant::now());
        self.discover();
        for f in self.open.values_mut() {
            f.next = f.seg.counters().head;
            f.dropped_base = f.seg.counters().dropped;
            f.dropped_seen = 0;
        }
    }

    /// Looks for new segments (at most every 200 ms), then reads what every followed
    /// segment has committed (at most every 5 ms: a poll sooner finds nothing).
    /// A segment whose name is removed is read a last time and let go once its process is
    /// dead; a new segment of the same pid (pid reused) replaces a dead one.
    pub fn poll(&mut self) -> TapBatch {
        if self
            .last_discovery
            .is_none_or(|t| t.elapsed() >= DISCOVER_EVERY)
        {
            self.last_discovery = Some(Instant::now());
            self.discover();
        }
        let mut batch = TapBatch::default();
        if self.last_read.is_some_and(|t| t.elapsed() < READ_EVERY) {
            return batch;
        }
        self.last_read = Some(Instant::now());
        for f in self.open.values_mut() {
            // Wait at a record being written only while its writer can finish it.
            let b = f.seg.read_from(f.next, f.alive);
            if f.next == 0 {
                // First read of a segment from its beginning: what was overwritten before
                // its oldest readable record is lost too (cells).
                batch.missed += b.records.first().map_or(0, |r| r.position);
            }
            f.next = b.next;
            batch.missed += b.missed_cells + b.malformed;
            batch.records.extend(b.records);
            let dropped = f.seg.counters().dropped.saturating_sub(f.dropped_base);
            if dropped > f.dropped_seen {
                batch.missed += dropped - f.dropped_seen;
                f.dropped_seen = dropped;
            }
        }
        // Let go of a segment whose name is gone once its process is dead and it was read a
        // last time (above): the mapping would keep its memory alive.
        self.open.retain(|_, f| f.listed || f.alive);
        batch
    }

    /// Makes the next [`poll`](LogTap::poll) look for new segments whenever the last look
    /// was (a last poll before stopping sees every process that exists now).
    pub fn look_again(&mut self) {
        self.last_discovery = None;
        self.last_read = None;
    }

    fn discover(&mut self) {
        let Ok(entries) = horus_log::segments(&self.namespace) else {
            return;
        };
        for f in self.open.values_mut() {
            f.listed = false;
            f.alive = f.seg.is_alive();
        }
        for e in entries {
            if self.skipped.contains(&e.name) {
                continue;
            }
            if let Some(f) = self.open.get_mut(&e.pid) {
                f.listed = true;
                // Same segment still (its name resolves to our mapping) or a dead process's
                // segment we keep reading: nothing new.
                if f.alive || !pid_reused(&f.seg, &e.name) {
                    continue;
                }
            }
            match LogSegment::open(&e.name) {
                Ok(seg) => {
                    let alive = seg.is_alive();
                    self.open.insert(
                        e.pid,
                        Followed {
                            seg,
                            next: 0,
                            dropped_base: 0,
                            dropped_seen: 0,
                            listed: true,
                            alive,
                        },
                    );
                }
                Err(horus_log::LogError::Segment(_)) => {}
                Err(_) => {
                    self.skipped.insert(e.name);
                }
            }
        }
    }
}

/// Whether `name` is now a different (newer, live) segment than the dead one we follow.
fn pid_reused(old: &LogSegment, name: &str) -> bool {
    LogSegment::open(name).is_ok_and(|s| s.is_alive() && !old.is_alive())
}

#[cfg(test)]
mod tests {
    use super::*;
    use horus_log::Val;

    #[test]
    fn a_record_becomes_foxglove_log_json() {
        let r = LogRecord {
            position: 0,
            pid: 42,
            process: "demo".into(),
            tid: 43,
            unix_ns: 1_700_000_000_123_456_789,
            level: Level::Warn,
            target: "nav/planner".into(),
            file: "src/nav.rs".into(),
            line: 17,
            message: "obstacle at 1.2 m".into(),
            fields: vec![("code".into(), Val::U64(7)), ("ok".into(), Val::Bool(true))],
        };
        let v: Value = serde_json::from_slice(&to_json(&r)).unwrap();
        assert_eq!(
            v,
            json!({
                "timestamp": {"sec": 1_700_000_000u64, "nsec": 123_456_789u64},
                "level": 3,
                "message": "obstacle at 1.2 m code=7 ok=true",
                "name": "nav/planner (demo[42])",
                "file": "src/nav.rs",
                "line": 17,
            })
        );
        let schema: Value = serde_json::from_str(SCHEMA).unwrap();
        let props = schema["properties"].as_object().unwrap();
        assert_eq!(props.len(), v.as_object().unwrap().len());
        assert!(v.as_object().unwrap().keys().all(|k| props.contains_key(k)));
    }

    #[test]
    fn levels_map_to_foxglove_log_levels() {
        let got: Vec<u8> = [
            Level::Trace,
            Level::Debug,
            Level::Info,
            Level::Warn,
            Level::Error,
        ]
        .into_iter()
        .map(level)
        .collect();
        assert_eq!(got, [1, 1, 2, 3, 4]);
    }
}
