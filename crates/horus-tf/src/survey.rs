//! What is being broadcast: every frame seen on `tf` and `tf_static` with its parent, rate,
//! last stamp and the process that publishes it (what `horus tf frames`, the monitor's tf
//! view and tf2's `view_frames` show). Built from the messages themselves, by an observer
//! of both topics: the robot cannot tell it is watched.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use horus::inspect::{RawRosReader, RawRosSample, TopicView};
use horus_ros_msgs::tf2_msgs::msg::TFMessage;

use crate::broadcaster_topics::{TF_STATIC_TOPIC, TF_TOPIC};

/// Most frames a survey keeps; transforms of further frames are counted in
/// [`FrameSurvey::frames_dropped`] (a hostile publisher cannot grow it without bound).
pub const MAX_SURVEY_FRAMES: usize = 4096;

/// One frame as seen on the topics.
#[derive(Clone, Debug, PartialEq)]
pub struct SeenFrame {
    /// The frame (`child_frame_id`, leading `/` removed).
    pub frame: String,
    /// Its parent (`header.frame_id` of its newest transform, leading `/` removed).
    pub parent: String,
    /// Whether its transforms came on `tf_static`.
    pub is_static: bool,
    /// Transforms of it received while surveyed.
    pub transforms: u64,
    /// Transforms per second over the survey (dynamic frames seen at least twice).
    pub rate_hz: Option<f64>,
    /// `header.stamp` of its newest transform, ns since the epoch.
    pub last_stamp_ns: i64,
    /// How long ago its newest transform was received.
    pub since_received: Duration,
    /// Process id of the publisher of its newest transform, if still known.
    pub publisher_pid: Option<u32>,
    /// That process's name (`/proc/PID/comm`), if readable.
    pub publisher_name: Option<String>,
}

#[derive(Clone, Debug)]
struct Entry {
    parent: String,
    is_static: bool,
    transforms: u64,
    first_received: Instant,
    last_received: Instant,
    last_stamp_ns: i64,
    publisher_pid: Option<u32>,
}

/// Frames seen on `tf` and `tf_static`, fed with [`record`](Self::record) or by a
/// [`SurveyReader`].
#[derive(Clone, Debug, Default)]
pub struct FrameSurvey {
    frames: BTreeMap<String, Entry>,
    frames_dropped: u64,
    undecodable: u64,
}

fn stamp_ns(sec: i32, nanosec: u32) -> i64 {
    i64::from(sec) * 1_000_000_000 + i64::from(nanosec)
}

fn frame_name(id: &str) -> &str {
    id.trim_start_matches('/')
}

impl FrameSurvey {
    /// An empty survey.
    pub fn new() -> Self {
        Self::default()
    }

    /// Records one `TFMessage` (its CDR wire bytes, encapsulation header first) received at
    /// `now` from process `pid`. Bytes that are not a `TFMessage` are counted
    /// ([`undecodable`](Self::undecodable)) and change nothing.
    pub fn record(&mut self, cdr: &[u8], is_static: bool, pid: Option<u32>, now: Instant) {
        let buf = horus_ros_msgs::horus_cdr::CdrBuf::new(cdr);
        let Ok(view) = horus_ros_msgs::horus_cdr::view_message::<TFMessage>(buf.bytes()) else {
            self.undecodable += 1;
            return;
        };
        for t in view.transforms().iter() {
            let child = frame_name(t.child_frame_id());
            let parent = frame_name(t.header().frame_id());
            let stamp = t.header().stamp();
            let stamp = stamp_ns(stamp.sec(), stamp.nanosec());
            if let Some(e) = self.frames.get_mut(child) {
                e.parent.clear();
                e.parent.push_str(parent);
                e.is_static = is_static;
                e.transforms += 1;
                e.last_received = now;
                e.last_stamp_ns = stamp;
                e.publisher_pid = pid;
            } else if self.frames.len() < MAX_SURVEY_FRAMES {
                self.frames.insert(
                    child.to_owned(),
                    Entry {
                        parent: parent.to_owned(),
                        is_static,
                        transforms: 1,
                        first_received: now,
                        last_received: now,
                        last_stamp_ns: stamp,
                        publisher_pid: pid,
                    },
                );
            } else {
                self.frames_dropped += 1;
            }
        }
    }

    /// Every frame seen, by name, as of `now`. Frames that appear only as parents (roots
    /// such as `map`) are not listed: see [`roots`](Self::roots).
    pub fn frames(&self, now: Instant) -> Vec<SeenFrame> {
        self.frames
            .iter()
            .map(|(frame, e)| {
                let span = e.last_received.duration_since(e.first_received);
                let rate_hz = (!e.is_static && e.transforms > 1 && !span.is_zero())
                    .then(|| (e.transforms - 1) as f64 / span.as_secs_f64());
                SeenFrame {
                    frame: frame.clone(),
                    parent: e.parent.clone(),
                    is_static: e.is_static,
                    transforms: e.transforms,
                    rate_hz,
                    last_stamp_ns: e.last_stamp_ns,
                    since_received: now.saturating_duration_since(e.last_received),
                    publisher_pid: e.publisher_pid,
                    publisher_name: e.publisher_pid.and_then(process_name),
                }
            })
            .collect()
    }

    /// Frames that are parents but never children: the roots of the trees.
    pub fn roots(&self) -> Vec<String> {
        let mut roots: Vec<String> = self
            .frames
            .values()
            .map(|e| e.parent.clone())
            .filter(|p| !self.frames.contains_key(p))
            .collect();
        roots.sort();
        roots.dedup();
        roots
    }

    /// Transforms of frames beyond [`MAX_SURVEY_FRAMES`], not kept.
    pub fn frames_dropped(&self) -> u64 {
        self.frames_dropped
    }

    /// Messages that were not valid `TFMessage`s (skipped).
    pub fn undecodable(&self) -> u64 {
        self.undecodable
    }
}

/// The name of process `pid` (`/proc/PID/comm`), if it lives and is readable.
pub fn process_name(pid: u32) -> Option<String> {
    let comm = std::fs::read_to_string(format!("/proc/{pid}/comm")).ok()?;
    Some(comm.trim_end().to_owned())
}

/// Why a survey could not start.
#[derive(Debug, thiserror::Error)]
pub enum SurveyError {
    /// `tf` or `tf_static` exists but could not be observed.
    #[error("observing {topic}: {reason}")]
    Observe {
        /// The topic.
        topic: &'static str,
        /// Why.
        reason: String,
    },
}

/// Observers of `tf` and `tf_static` feeding a [`FrameSurvey`]; a topic that does not
/// exist yet is looked for again on each [`poll`](Self::poll).
pub struct SurveyReader {
    namespace: String,
    topics: [(&'static str, Option<(TopicView, RawRosReader)>); 2],
    survey: FrameSurvey,
}

impl SurveyReader {
    /// Observers of the namespace's `tf` and `tf_static` (each opened when it exists).
    pub fn new(namespace: &str) -> Result<Self, SurveyError> {
        let mut r = SurveyReader {
            namespace: namespace.to_owned(),
            topics: [(TF_TOPIC, None), (TF_STATIC_TOPIC, None)],
            survey: FrameSurvey::new(),
        };
        r.attach()?;
        Ok(r)
    }

    fn attach(&mut self) -> Result<(), SurveyError> {
        for (topic, slot) in &mut self.topics {
            if slot.is_some() {
                continue;
            }
            let Ok(view) = TopicView::open(&self.namespace, topic) else {
                continue; // not created yet
            };
            let reader = view.ros_observer(false).map_err(|e| SurveyError::Observe {
                topic,
                reason: e.to_string(),
            })?;
            *slot = Some((view, reader));
        }
        Ok(())
    }

    /// Reads every message waiting on both topics into the survey; returns how many.
    pub fn poll(&mut self) -> Result<usize, SurveyError> {
        self.attach()?;
        let now = Instant::now();
        let mut n = 0;
        for (topic, slot) in &mut self.topics {
            let Some((view, reader)) = slot else { continue };
            let is_static = *topic == TF_STATIC_TOPIC;
            // Publisher places and their processes, read once per poll.
            let places: Vec<(usize, u32)> = view
                .snapshot()
                .publishers
                .iter()
                .map(|p| (p.place, p.pid))
                .collect();
            while let Some(sample) = reader.try_recv() {
                let pid = publisher_pid(&places, &sample);
                self.survey.record(sample.cdr(), is_static, pid, now);
                n += 1;
            }
        }
        Ok(n)
    }

    /// Polls for `window`, then returns the survey.
    pub fn observe(mut self, window: Duration) -> Result<FrameSurvey, SurveyError> {
        let end = Instant::now() + window;
        loop {
            self.poll()?;
            if Instant::now() >= end {
                return Ok(self.survey);
            }
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    /// The survey so far.
    pub fn survey(&self) -> &FrameSurvey {
        &self.survey
    }

    /// Messages missed (overwritten before this observer read them), summed over both topics.
    pub fn missed(&self) -> u64 {
        self.topics
            .iter()
            .filter_map(|(_, s)| s.as_ref())
            .map(|(_, r)| r.counts().1)
            .sum()
    }
}

fn publisher_pid(places: &[(usize, u32)], sample: &RawRosSample) -> Option<u32> {
    places
        .iter()
        .find(|(place, _)| *place == sample.source())
        .map(|(_, pid)| *pid)
}
