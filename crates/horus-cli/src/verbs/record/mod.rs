//! `horus record`: every topic of a namespace (or a selection) into MCAP files that Foxglove,
//! the `mcap` Python library and `rosbags` (with `--no-logs`) read (library: `horus-record`).
//!
//! The recorder is an observer on every topic it records: it polls, never takes part in a
//! publisher's room check and never registers a wake-up, so attaching it changes nothing the
//! robot observes. What it misses (overwritten before it read them) is counted per topic,
//! written into each file's `horus.losses` metadata and printed at the end. New topics are
//! picked up while it runs; it stops on Ctrl-C, SIGTERM or `--duration`. A ROS-typed topic
//! (`sensor_msgs/msg/LaserScan` …) is recorded as ROS 2 records it: its ROS type and
//! definition, its wire bytes as they are (`horus_record::ros2`).
//!
//! Where a topic's recording starts: a topic that appears while the recorder runs (noticed
//! by an inotify watch on `/dev/shm`, else by the periodic listing) is recorded from the
//! oldest message still in its rings, so a recorder started before the robot loses nothing
//! of it; what was already overwritten before the recorder attached is counted as missed
//! (each publisher's ring numbers its messages from 1, so the first message read from a
//! ring tells how many came before). A topic that already existed when the recorder started
//! is recorded from its latched history (transient-local topics) or from its next message:
//! what it published earlier belongs to no recording — unless `--from-oldest` is given, which
//! records every topic as a new one (a recorder started beside a robot that may create its
//! topics first). Every channel stores its topic's durability, so `horus play` re-creates a
//! latched topic latched.

mod select;
mod sink;
mod watch;

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use clap::Args;
use horus::inspect::{list_topics, RawObserver, RawRosReader, TopicView};
use horus::StartAt;
use horus_record::foxlog::{self, LogTap};
use horus_record::{Compression, RecordingWriter, WriteError, WriterOptions};
use serde_json::json;
use sink::Sink;

use crate::output::Output;
use crate::table::Table;
use horus_launch::signals;

/// How often the namespace is listed for new topics (besides the inotify watch).
const DISCOVER_EVERY: Duration = Duration::from_millis(200);
/// After the watch saw a segment appear, how long topics that cannot be opened yet (being
/// created) are looked for again on every pass, at most every [`RETRY_EVERY`].
const RETRY_FOR: Duration = Duration::from_secs(1);
/// See [`RETRY_FOR`].
const RETRY_EVERY: Duration = Duration::from_millis(1);
/// Sleep when no topic had a message.
const IDLE: Duration = Duration::from_micros(200);
/// Most messages taken from one topic before the next topic gets its turn.
const BATCH: usize = 256;

/// Record topics to MCAP.
#[derive(Debug, Args)]
pub(crate) struct Record {
    /// Output file (with --max-size/--max-duration: <stem>_0.mcap, <stem>_1.mcap, …).
    #[arg(short, long)]
    output: Option<PathBuf>,
    /// Record only these topics (comma-separated or repeated).
    #[arg(long, value_delimiter = ',')]
    topics: Vec<String>,
    /// Record only topics whose name matches this regular expression.
    #[arg(long)]
    regex: Option<String>,
    /// Leave out topics whose name matches this regular expression (repeatable).
    #[arg(long)]
    exclude: Vec<String>,
    /// Namespace (default: `HORUS_NAMESPACE`, else one per user).
    #[arg(long)]
    namespace: Option<String>,
    /// Chunk compression: zstd, lz4 or none.
    #[arg(long, default_value = "zstd")]
    compression: Compression,
    /// Start a new file past this size (bytes; suffixes K, M, G).
    #[arg(long, value_parser = select::parse_size)]
    max_size: Option<u64>,
    /// Start a new file after this many seconds.
    #[arg(long)]
    max_duration: Option<f64>,
    /// Stop after this many seconds.
    #[arg(long)]
    duration: Option<f64>,
    /// Uncompressed bytes per chunk (suffixes K, M, G).
    #[arg(long, default_value = "1M", value_parser = select::parse_size)]
    chunk_size: u64,
    /// Do not record the namespace's log records (by default they go to `/log` as
    /// `foxglove.Log` JSON).
    #[arg(long)]
    no_logs: bool,
    /// Replace output files that already exist (by default an existing file is an error and
    /// is left untouched).
    #[arg(long)]
    overwrite: bool,
    /// Record topics that already exist when the recorder starts from the oldest message
    /// their rings still hold, as new ones are, counting what they published before that as
    /// missed (by default they start at their latched history or next message, and nothing
    /// earlier is counted). For a recorder started beside the robot, which may create its
    /// topics first; not for one joining a long-running system, where it would record what
    /// departed publishers left in their rings (stamped with the time it reads them) and
    /// count everything the rings ever overwrote as missed.
    #[arg(long)]
    from_oldest: bool,
}

/// The namespace's log rings, recorded into the `/log` channel.
struct Logs {
    tap: LogTap,
    ch: usize,
}

/// How a topic's messages are taken off its rings.
enum Observer {
    /// A fixed-layout topic: the horus bytes.
    Horus(RawObserver),
    /// A ROS-typed topic: the wire bytes (encapsulation header and CDR body), and how many
    /// messages were not ROS 2 CDR (no little-endian encapsulation header: a publisher that
    /// broke the protocol), skipped and counted as malformed.
    Ros(RawRosReader, u64),
}

/// One message taken off a ring.
struct Taken {
    /// The bytes as they are recorded.
    bytes: Vec<u8>,
    /// The publisher place (ring) it came from.
    source: usize,
    /// Its number in that ring (from 1).
    seq: u64,
}

impl Observer {
    /// The next message.
    fn try_recv(&mut self) -> Option<Taken> {
        match self {
            Observer::Horus(o) => o.try_recv().map(|m| Taken {
                bytes: m.bytes,
                source: m.source,
                seq: m.seq,
            }),
            Observer::Ros(o, bad) => loop {
                let s = o.try_recv()?;
                if horus_record::ros2::check_wire(s.cdr()).is_ok() {
                    break Some(Taken {
                        bytes: s.cdr().to_vec(),
                        source: s.source(),
                        seq: s.seq(),
                    });
                }
                *bad += 1;
            },
        }
    }

    /// Received, missed (overrun) and malformed so far.
    fn counts(&self) -> (u64, u64, u64) {
        match self {
            Observer::Horus(o) => o.counts(),
            Observer::Ros(o, bad) => {
                let (received, missed, malformed) = o.counts();
                (received, missed, malformed + bad)
            }
        }
    }
}

struct Recorded {
    view: TopicView,
    obs: Observer,
    /// The channel's index in the sink.
    ch: usize,
    /// Messages dropped because the writer fell too far behind (already reported).
    dropped: u64,
    /// Observer's missed + malformed count already reported to the writer.
    missed_seen: u64,
    /// For a topic that appeared while recording (read from its oldest message): the rings
    /// whose first message was already read. Messages numbered below a ring's first one were
    /// overwritten before the recorder attached: counted in `before`.
    first_read: Option<HashSet<usize>>,
    /// Messages overwritten before the recorder attached (see `first_read`).
    before: u64,
}

/// Receive times: the wall clock at start plus monotonic time since, so log times never go
/// backwards even if the wall clock is stepped.
struct Clock {
    base_ns: u64,
    start: Instant,
}

impl Clock {
    fn new() -> Clock {
        let base_ns = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(0);
        Clock {
            base_ns,
            start: Instant::now(),
        }
    }

    fn now_ns(&self) -> u64 {
        self.base_ns + self.start.elapsed().as_nanos() as u64
    }
}

fn seconds(name: &str, v: Option<f64>) -> anyhow::Result<Option<Duration>> {
    v.map(Duration::try_from_secs_f64)
        .transpose()
        .map_err(|e| anyhow::anyhow!("--{name}: {e}"))
}

/// Most names `horus-<ms>[-N].mcap` tried before giving up.
const DEFAULT_NAME_TRIES: u32 = 1000;

/// A recording under a default name: `horus-<unix time in ms>.mcap`, then `-1`, `-2`, … if
/// that exists (two recorders started in the same millisecond, or a clock set back). Each
/// name is opened with O_EXCL, so an existing file is never replaced, even with
/// `--overwrite` (which applies to names given with `-o`).
fn create_default_named(opts: WriterOptions) -> anyhow::Result<RecordingWriter> {
    let ms = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis())
        .unwrap_or(0);
    for n in 0..DEFAULT_NAME_TRIES {
        let path = PathBuf::from(if n == 0 {
            format!("horus-{ms}.mcap")
        } else {
            format!("horus-{ms}-{n}.mcap")
        });
        let opts = WriterOptions {
            overwrite: false,
            ..opts.clone()
        };
        match RecordingWriter::create(&path, opts) {
            Ok(w) => return Ok(w),
            Err(WriteError::Exists { .. }) => continue,
            Err(e) => return Err(e.into()),
        }
    }
    anyhow::bail!("horus-{ms}.mcap and {DEFAULT_NAME_TRIES} numbered variants all exist; name the file with -o")
}

pub(crate) fn run(a: Record, out: &Output) -> anyhow::Result<ExitCode> {
    signals::install()?;
    let ns = a.namespace.clone().unwrap_or_else(horus::namespace);
    let filter = select::Filter::new(&a.topics, a.regex.as_deref(), &a.exclude)?;
    let duration = seconds("duration", a.duration)?;
    let mut session = BTreeMap::new();
    session.insert(
        "recorder".into(),
        format!("horus {}", env!("CARGO_PKG_VERSION")),
    );
    session.insert("namespace".into(), ns.clone());
    let opts = WriterOptions {
        compression: a.compression,
        chunk_size: a.chunk_size,
        max_size: a.max_size,
        max_duration: seconds("max-duration", a.max_duration)?,
        session,
        overwrite: a.overwrite,
        ..WriterOptions::default()
    };
    let writer = match &a.output {
        Some(p) => RecordingWriter::create(p, opts)?,
        None => create_default_named(opts)?,
    };
    let mut sink = Sink::start(writer);
    let clock = Clock::new();
    let started = Instant::now();
    let mut live: Vec<Recorded> = Vec::new();
    // Channels by topic (kept when a topic's segment goes away, reused if it returns).
    let mut channels: HashMap<String, usize> = HashMap::new();
    // Topics that cannot be recorded, reported once.
    let mut refused: HashMap<String, String> = HashMap::new();
    let mut last_discovery: Option<Instant> = None;
    let mut watch = watch::ShmWatch::new(horus_shm::channel_prefix(&ns)?);
    // Topics there when the recorder started: recorded from their latched history only
    // (with --from-oldest none are: every topic is recorded as a new one).
    let mut existing: HashSet<String> = if a.from_oldest {
        HashSet::new()
    } else {
        list_topics(&ns)?.into_iter().collect()
    };
    // Until when topics not yet openable are looked for on every pass.
    let mut retry_until: Option<Instant> = None;
    let mut logs = if a.no_logs {
        None
    } else {
        let logs = Logs {
            tap: LogTap::start(&ns),
            ch: sink.log_channel()?,
        };
        eprintln!(
            "horus record: recording {} ({})",
            foxlog::TOPIC,
            foxlog::SCHEMA_NAME
        );
        Some(logs)
    };
    while signals::count() == 0 && duration.is_none_or(|d| started.elapsed() < d) {
        if watch.appeared() {
            retry_until = Some(Instant::now() + RETRY_FOR);
            last_discovery = None;
        }
        let retrying = retry_until.is_some_and(|t| Instant::now() < t);
        let every = if retrying {
            RETRY_EVERY
        } else {
            DISCOVER_EVERY
        };
        if last_discovery.is_none_or(|t| t.elapsed() >= every) {
            last_discovery = Some(Instant::now());
            let pending = discover(
                &ns,
                &filter,
                &mut sink,
                &mut live,
                &mut channels,
                &mut refused,
                &mut existing,
            )?;
            if !pending {
                retry_until = None;
            }
        }
        let got = drain(&mut sink, &mut live, &clock, &mut existing)?
            + drain_logs(&mut sink, logs.as_mut())?;
        if got == 0 {
            std::thread::sleep(IDLE);
        }
    }
    // What is still in the rings when asked to stop is recorded too (also the log records
    // of processes that appeared since the last look).
    if let Some(l) = logs.as_mut() {
        l.tap.look_again();
    }
    while drain(&mut sink, &mut live, &clock, &mut existing)?
        + drain_logs(&mut sink, logs.as_mut())?
        > 0
    {}
    let totals = sink.join()?;
    report(out, &totals, started.elapsed(), &refused);
    Ok(ExitCode::SUCCESS)
}

/// Opens every matching topic not yet recorded; returns whether one could not be opened yet
/// (being created: look again soon). A topic in `existing` (there when the recorder
/// started) starts at its latched history, any other at its oldest message; a topic whose
/// segment was lost leaves `existing` (it comes back as a new topic).
fn discover(
    ns: &str,
    filter: &select::Filter,
    sink: &mut Sink,
    live: &mut Vec<Recorded>,
    channels: &mut HashMap<String, usize>,
    refused: &mut HashMap<String, String>,
    existing: &mut HashSet<String>,
) -> anyhow::Result<bool> {
    let mut pending = false;
    for topic in list_topics(ns)? {
        if !filter.matches(&topic)
            || refused.contains_key(&topic)
            || live.iter().any(|r| r.view.name() == topic)
        {
            continue;
        }
        let view = match TopicView::open(ns, &topic) {
            Ok(v) => v,
            // Gone again, or being created: try at the next discovery.
            Err(_) => {
                pending = true;
                continue;
            }
        };
        let description = match view.description() {
            Ok(d) => d,
            Err(e) => {
                eprintln!("horus record: not recording {topic}: {e}");
                refused.insert(topic, e.to_string());
                continue;
            }
        };
        let ch = match channels.get(&topic) {
            Some(&ch) => ch,
            None => {
                let ch = if let Some(ty) = &description.ros2 {
                    // A ROS-typed topic: its ROS type, definition and wire bytes as they are.
                    sink.ros2_channel(&topic, ty, &view.qos(), view.durability())?
                } else {
                    // Refused here, before observing, if it cannot be recorded byte for byte.
                    if let Err(e) = horus_record::cdr::CdrPlan::new(&description) {
                        eprintln!("horus record: not recording {topic}: {e}");
                        refused.insert(topic, e.to_string());
                        continue;
                    }
                    sink.channel(&topic, &description, &view.qos(), view.durability())?
                };
                channels.insert(topic.clone(), ch);
                ch
            }
        };
        let new = !existing.contains(&topic);
        let start = if new {
            StartAt::Oldest
        } else {
            StartAt::Durability
        };
        let obs = if description.ros2.is_some() {
            view.ros_reader_at(false, true, start)
                .map(|o| Observer::Ros(o, 0))
                .map_err(|e| e.to_string())
        } else {
            view.observer_at(false, start)
                .map(Observer::Horus)
                .map_err(|e| e.to_string())
        };
        let obs = match obs {
            Ok(o) => o,
            Err(e) => {
                eprintln!("horus record: cannot observe {topic} yet: {e}");
                pending = true;
                continue;
            }
        };
        eprintln!(
            "horus record: recording {topic} ({})",
            description.root().name
        );
        live.push(Recorded {
            view,
            obs,
            ch,
            dropped: 0,
            missed_seen: 0,
            first_read: new.then(HashSet::new),
            before: 0,
        });
    }
    Ok(pending)
}

/// Takes what every topic has ready; returns how many messages were taken.
fn drain(
    sink: &mut Sink,
    live: &mut Vec<Recorded>,
    clock: &Clock,
    existing: &mut HashSet<String>,
) -> anyhow::Result<usize> {
    let mut got = 0;
    for r in live.iter_mut() {
        for _ in 0..BATCH {
            let (_, overrun_before, malformed_before) = r.obs.counts();
            let Some(m) = r.obs.try_recv() else { break };
            if let Some(first) = &mut r.first_read {
                if first.insert(m.source) {
                    // The ring's messages 1..seq-1 came before this one: those the observer
                    // counted as overrun or skipped as malformed while reaching it (this
                    // receive) are counted already, the rest were gone before it attached.
                    let (_, overrun, malformed) = r.obs.counts();
                    let counted = (overrun - overrun_before) + (malformed - malformed_before);
                    r.before += m.seq.saturating_sub(1).saturating_sub(counted);
                }
            }
            if !sink.message(r.ch, clock.now_ns(), m.bytes)? {
                r.dropped += 1;
            }
            got += 1;
        }
        let (_, overrun, malformed) = r.obs.counts();
        let missed = overrun + malformed + r.dropped + r.before;
        if missed > r.missed_seen {
            sink.missed(r.ch, missed - r.missed_seen);
            r.missed_seen = missed;
        }
    }
    sink.flush()?;
    // A truncated segment: let go, so a recreated topic is found again (as a new topic).
    live.retain(|r| {
        let lost = r.view.is_lost();
        if lost {
            existing.remove(r.view.name());
        }
        !lost
    });
    Ok(got)
}

/// Takes the new log records of every process; returns how many were taken.
fn drain_logs(sink: &mut Sink, logs: Option<&mut Logs>) -> anyhow::Result<usize> {
    let Some(logs) = logs else { return Ok(0) };
    let batch = logs.tap.poll();
    let mut missed = batch.missed;
    for r in &batch.records {
        // Log time: when the record was written (the process's clock, calibrated).
        // Dropped when the writer fell too far behind: missed, like a topic's message.
        if !sink.message(logs.ch, r.unix_ns, foxlog::to_json(r))? {
            missed += 1;
        }
    }
    if missed > 0 {
        sink.missed(logs.ch, missed);
    }
    sink.flush()?;
    Ok(batch.records.len())
}

fn report(
    out: &Output,
    totals: &horus_record::RecordingTotals,
    elapsed: Duration,
    refused: &HashMap<String, String>,
) {
    // `/log` is listed only when some process logged (or a record was missed).
    let mut totals = totals.clone();
    totals
        .channels
        .retain(|c| c.topic != foxlog::TOPIC || c.messages > 0 || c.missed > 0);
    let totals = &totals;
    let files: Vec<String> = totals
        .files
        .iter()
        .map(|p| p.display().to_string())
        .collect();
    if out.is_json() {
        out.json_line(&json!({
            "files": files,
            "seconds": elapsed.as_secs_f64(),
            "topics": totals.channels.iter().map(|c| json!({
                "topic": c.topic,
                "type": c.schema,
                "messages": c.messages,
                "missed": c.missed,
                "bytes": c.bytes,
            })).collect::<Vec<_>>(),
            "not_recorded": refused,
        }));
        return;
    }
    let mut t = Table::new(&["topic", "type", ">messages", ">missed", ">bytes"]);
    for c in &totals.channels {
        t.row(vec![
            c.topic.clone(),
            c.schema.clone(),
            c.messages.to_string(),
            c.missed.to_string(),
            c.bytes.to_string(),
        ]);
    }
    println!(
        "recorded {:.1} s into {}",
        elapsed.as_secs_f64(),
        files.join(", ")
    );
    print!("{}", t.render());
    let missed: u64 = totals.channels.iter().map(|c| c.missed).sum();
    if missed > 0 {
        println!("{missed} messages missed (overwritten before the recorder read them)");
    }
}
