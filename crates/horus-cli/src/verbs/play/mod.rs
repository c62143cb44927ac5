//! `horus play FILE`: publishes a recording's messages on their topics with their original
//! relative timing (scaled by `--rate`), creating topics that do not exist from the
//! description and QoS stored in the file, and publishing the exact recorded bytes.
//! ROS-typed channels (horus's, and rosbag2's `ros2msg`/`cdr` channels) are published on
//! ROS-typed topics of the same type, hash and definition, as the recorded wire bytes; a
//! ROS 2 topic name's leading `/` is dropped (`/scan` → `scan`). A topic recorded latched
//! (transient-local: `horus.durability`, or a rosbag2 profile's `transient_local`) is created
//! latched, so a subscriber that joins after a replayed `tf_static` still receives it.
//!
//! On a terminal, space pauses and resumes and `s` publishes one message while paused.
//! `--clock TOPIC` publishes the recorded time (`horus/Time`) for nodes on simulated time.
//! At the end it reports, per topic, what was published and the timing error (how late each
//! message went out against its schedule: median and max).

mod keys;

use std::collections::HashMap;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use clap::Args;
use horus::inspect::{open_or_create_topic_durable, RawPublisher, RawRosPublisher, TopicView};
use horus::msgs::Time;
use horus_record::ros2::{Ros2Channel, Ros2Error};
use horus_record::{foxlog, RecordedMessage, RecordingReader};
use serde_json::json;

use crate::output::Output;
use crate::table::Table;
use horus_launch::signals;
use keys::{Key, Keys};

/// How often the clock topic is published, in recorded time.
const CLOCK_PERIOD_NS: u64 = 10_000_000;
/// Largest message (CDR body) of a topic created for a recording that states no horus QoS
/// (rosbag2's): what a typed `Topic<Ros<M>>` opens with by default, so typed endpoints meet
/// it; a larger message fails to publish and is counted.
const ROSBAG_MAX_MESSAGE: usize = 1 << 20;
/// Lateness samples kept for the timing report.
const MAX_SAMPLES: usize = 1 << 20;

/// Publish a recording.
#[derive(Debug, Args)]
pub(crate) struct Play {
    /// The recording (MCAP written by `horus record`).
    file: PathBuf,
    /// Speed factor (2 = twice as fast).
    #[arg(long, default_value_t = 1.0)]
    rate: f64,
    /// Start again from the beginning at the end, until interrupted.
    #[arg(long = "loop")]
    repeat: bool,
    /// Publish only these topics (comma-separated or repeated).
    #[arg(long, value_delimiter = ',')]
    topics: Vec<String>,
    /// Skip this many seconds from the start of the recording.
    #[arg(long, default_value_t = 0.0)]
    start_offset: f64,
    /// Publish at most this many seconds of the recording (after the offset).
    #[arg(long)]
    duration: Option<f64>,
    /// Publish the recorded time as `horus/Time` on this topic (every 10 ms of recorded time).
    #[arg(long)]
    clock: Option<String>,
    /// Do not read keys from the terminal.
    #[arg(long)]
    no_keys: bool,
    /// Namespace (default: `HORUS_NAMESPACE`, else one per user).
    #[arg(long)]
    namespace: Option<String>,
}

/// How a channel's messages are published.
enum Publisher {
    /// A fixed-layout topic: the horus bytes decoded from the file's CDR.
    Horus(RawPublisher),
    /// A ROS-typed topic: the wire bytes as recorded.
    Ros(RawRosPublisher),
}

/// One recorded channel's publisher (or why it has none).
struct Outlet {
    topic: String,
    /// Kept open: the segment lives while we publish.
    publisher: Result<(TopicView, Publisher), String>,
    published: u64,
    failed: u64,
    lateness_us: Vec<f64>,
}

struct Player {
    ns: String,
    outlets: HashMap<u16, Outlet>,
    order: Vec<u16>,
    clock: Option<(horus::Publisher<Time>, u64)>,
    bytes: Vec<u8>,
}

impl Player {
    fn outlet(&mut self, r: &RecordingReader, id: u16) -> &mut Outlet {
        let ns = &self.ns;
        let order = &mut self.order;
        self.outlets.entry(id).or_insert_with(|| {
            order.push(id);
            let ch = r.channel(id).expect("messages only on known channels");
            let publisher = match (&ch.meta, &ch.ros2) {
                (_, Some(ros)) => ros2_outlet(ns, &ch.topic, ros),
                (Err(e), None) => Err(format!("no horus description: {e}")),
                // A latched topic is created latched again (a replayed `tf_static`).
                (Ok(meta), None) => open_or_create_topic_durable(
                    ns,
                    &ch.topic,
                    &meta.description,
                    &meta.qos,
                    meta.durability,
                )
                .map_err(|e| e.to_string())
                .and_then(|view| {
                    let p = view
                        .publisher(meta.description.root().size)
                        .map_err(|e| e.to_string())?;
                    Ok((view, Publisher::Horus(p)))
                }),
            };
            if let Err(e) = &publisher {
                eprintln!("horus play: not publishing {}: {e}", ch.topic);
            }
            Outlet {
                topic: ch.topic.clone(),
                publisher,
                published: 0,
                failed: 0,
                lateness_us: Vec::new(),
            }
        })
    }

    fn publish(&mut self, r: &RecordingReader, m: &RecordedMessage, due: Instant) {
        if let Some((clock, last)) = &mut self.clock {
            if *last == 0 || m.log_time >= *last + CLOCK_PERIOD_NS {
                *last = m.log_time;
                let _ = clock.send(Time::from_nanos(m.log_time));
            }
        }
        let mut bytes = std::mem::take(&mut self.bytes);
        let decoded = r.horus_bytes(m, &mut bytes);
        let o = self.outlet(r, m.channel);
        if let Ok((_, p)) = &mut o.publisher {
            let sent = match (p, decoded) {
                (Publisher::Ros(p), _) => p.send_cdr(&m.cdr).map(drop).map_err(|e| e.to_string()),
                (Publisher::Horus(p), Some(Ok(()))) => {
                    p.send(&bytes).map(drop).map_err(|e| e.to_string())
                }
                (Publisher::Horus(_), Some(Err(e))) => Err(e.to_string()),
                (Publisher::Horus(_), None) => Err("no description".into()),
            };
            match sent {
                Ok(_) => {
                    o.published += 1;
                    if o.lateness_us.len() < MAX_SAMPLES {
                        o.lateness_us.push(
                            Instant::now().saturating_duration_since(due).as_secs_f64() * 1e6,
                        );
                    }
                }
                Err(e) => {
                    if o.failed == 0 {
                        eprintln!("horus play: {}: {e}", o.topic);
                    }
                    o.failed += 1;
                }
            }
        }
        self.bytes = bytes;
    }
}

/// The publisher of a ROS-typed channel (horus's, or a rosbag2 recording's): its type (hash
/// checked against the definition), the recorded horus QoS or a typed endpoint's defaults,
/// on the topic named without ROS 2's leading `/`.
fn ros2_outlet(
    ns: &str,
    topic: &str,
    ros: &Result<Ros2Channel, Ros2Error>,
) -> Result<(TopicView, Publisher), String> {
    let ros = ros.as_ref().map_err(|e| format!("ROS 2 channel: {e}"))?;
    let ty = ros.ros2_type().map_err(|e| e.to_string())?;
    let qos = ros
        .qos
        .unwrap_or_else(|| horus::inspect::ros_qos(ROSBAG_MAX_MESSAGE));
    let topic = horus_record::ros2::horus_topic_name(topic);
    let view =
        horus::inspect::open_or_create_ros_topic_durable(ns, topic, &ty, &qos, ros.durability)
            .map_err(|e| e.to_string())?;
    let p = view.ros_publisher().map_err(|e| e.to_string())?;
    Ok((view, Publisher::Ros(p)))
}

fn secs(name: &str, v: f64) -> anyhow::Result<Duration> {
    Duration::try_from_secs_f64(v).map_err(|e| anyhow::anyhow!("--{name}: {e}"))
}

pub(crate) fn run(a: Play, out: &Output) -> anyhow::Result<ExitCode> {
    if !(a.rate.is_finite() && a.rate > 0.0) {
        anyhow::bail!("--rate must be a positive number");
    }
    let offset_ns = secs("start-offset", a.start_offset)?.as_nanos() as u64;
    let window_ns = a
        .duration
        .map(|d| secs("duration", d).map(|d| d.as_nanos() as u64))
        .transpose()?;
    signals::install()?;
    let ns = a.namespace.clone().unwrap_or_else(horus::namespace);
    let clock = match &a.clock {
        Some(name) => Some((
            horus::Topic::<Time>::builder(name)
                .namespace(&ns)
                .open()?
                .publisher()?,
            0,
        )),
        None => None,
    };
    let mut player = Player {
        ns,
        outlets: HashMap::new(),
        order: Vec::new(),
        clock,
        bytes: Vec::new(),
    };
    let mut keys = Keys::new(!a.no_keys && !out.is_json());
    if keys.active() {
        eprintln!("horus play: space pauses/resumes, s steps one message while paused");
    }
    let started = Instant::now();
    let mut result = Ok(());
    loop {
        if let Err(e) = play_once(&a, offset_ns, window_ns, &mut player, &mut keys) {
            result = Err(e);
            break;
        }
        if !a.repeat || signals::count() > 0 {
            break;
        }
    }
    drop(keys);
    report(out, &player, started.elapsed());
    result?;
    Ok(ExitCode::SUCCESS)
}

/// One pass over the file.
fn play_once(
    a: &Play,
    offset_ns: u64,
    window_ns: Option<u64>,
    player: &mut Player,
    keys: &mut Keys,
) -> anyhow::Result<()> {
    let mut r = RecordingReader::open(&a.file)?;
    let mut t0: Option<u64> = None;
    let mut origin: Option<Instant> = None;
    let mut paused = false;
    while signals::count() == 0 {
        let Some(m) = r.next_message()? else {
            break;
        };
        // Log records (`/log`, `foxglove.Log`) are not a topic: not published, and their
        // times (when each process wrote them) do not move the playback's start.
        if r.channel(m.channel)
            .is_some_and(|c| c.schema_name == foxlog::SCHEMA_NAME)
        {
            continue;
        }
        let from = *t0.get_or_insert(m.log_time) + offset_ns;
        if m.log_time < from {
            continue;
        }
        if window_ns.is_some_and(|w| m.log_time - from > w) {
            break;
        }
        let topic = &r.channel(m.channel).expect("known channel").topic;
        if !a.topics.is_empty() && !a.topics.contains(topic) {
            continue;
        }
        let rel = Duration::from_secs_f64((m.log_time - from) as f64 / 1e9 / a.rate);
        let origin_at = *origin.get_or_insert_with(Instant::now);
        let mut due = origin_at + rel;
        // Wait for the message's time, handling keys; a pause shifts the schedule.
        let mut step = false;
        loop {
            if signals::count() > 0 {
                return Ok(());
            }
            match keys.poll() {
                Some(Key::Toggle) => {
                    paused = !paused;
                    eprintln!("horus play: {}", if paused { "paused" } else { "playing" });
                }
                Some(Key::Step) if paused => step = true,
                _ => {}
            }
            if paused && !step {
                let pause_start = Instant::now();
                std::thread::sleep(Duration::from_millis(10));
                let shift = pause_start.elapsed();
                origin = origin.map(|o| o + shift);
                due += shift;
                continue;
            }
            let now = Instant::now();
            if step || now >= due {
                break;
            }
            // Sleep in slices so keys and signals stay responsive.
            std::thread::sleep((due - now).min(Duration::from_millis(20)));
        }
        if step {
            // A stepped message goes out now; later ones keep their spacing from it.
            let now = Instant::now();
            if now > due {
                origin = origin.map(|o| o + (now - due));
            }
            due = now;
        }
        player.publish(&r, &m, due);
    }
    Ok(())
}

fn percentile(v: &mut [f64], p: f64) -> f64 {
    if v.is_empty() {
        return 0.0;
    }
    v.sort_by(f64::total_cmp);
    v[((v.len() - 1) as f64 * p).round() as usize]
}

fn report(out: &Output, player: &Player, elapsed: Duration) {
    let mut rows = Vec::new();
    for id in &player.order {
        let o = &player.outlets[id];
        let mut late = o.lateness_us.clone();
        let median = percentile(&mut late, 0.5);
        let max = late.last().copied().unwrap_or(0.0);
        rows.push((o, median, max));
    }
    if out.is_json() {
        out.json_line(&json!({
            "seconds": elapsed.as_secs_f64(),
            "topics": rows.iter().map(|(o, median, max)| json!({
                "topic": o.topic,
                "published": o.published,
                "failed": o.failed,
                "skipped": o.publisher.as_ref().err(),
                "late_median_us": median,
                "late_max_us": max,
            })).collect::<Vec<_>>(),
        }));
        return;
    }
    let mut t = Table::new(&[
        "topic",
        ">published",
        ">failed",
        ">late p50 µs",
        ">late max µs",
        "note",
    ]);
    for (o, median, max) in &rows {
        t.row(vec![
            o.topic.clone(),
            o.published.to_string(),
            o.failed.to_string(),
            format!("{median:.1}"),
            format!("{max:.1}"),
            o.publisher.as_ref().err().cloned().unwrap_or_default(),
        ]);
    }
    println!("played for {:.1} s", elapsed.as_secs_f64());
    print!("{}", t.render());
}
