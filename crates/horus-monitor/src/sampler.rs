//! The sampling thread: finds the namespace's topics, polls each one's counters and
//! observer every [`POLL`], and turns what it has into a [`Snapshot`] on request.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use horus::inspect::{list_topics, TopicView};
use horus_tf::SurveyReader;

use crate::delivered::DeliveredRow;
use crate::logs::LogTail;
use crate::model::{
    field_rows, LatencyRow, Losses, OwnCounts, PublisherRow, Snapshot, SubscriberRow, TopicRow,
};
use crate::probe::TopicProbe;
use crate::text::{overflow_text, process_alive, process_name};
use crate::tf::TfFrames;

/// How often the topics' counters and observers are read. A latency figure is the time from
/// a message's stamp to the poll that read it, so it includes up to one poll period.
pub(crate) const POLL: Duration = Duration::from_millis(1);
/// Log lines a snapshot carries.
const LOG_LINES: usize = 50;
/// How often the namespace is searched for new (and gone) topics.
const DISCOVERY: Duration = Duration::from_millis(500);
/// How often `tf` and `tf_static` are read for the tf view (what `horus tf frames` does).
const TF_POLL: Duration = Duration::from_millis(5);

/// What the thread and the snapshots share.
#[derive(Default)]
struct State {
    probes: BTreeMap<String, TopicProbe>,
    /// Topics that could not be opened, and why.
    unreadable: BTreeMap<String, String>,
    /// The tf survey (`None` until it could start: see `tf_error`).
    tf: Option<SurveyReader>,
    /// Why the tf topics could not be observed at the last try.
    tf_error: Option<String>,
}

/// Why [`Sampler::start`] failed.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    /// The namespace's topics could not be listed.
    #[error(transparent)]
    Discover(#[from] horus::inspect::InspectError),
    /// The sampling thread could not be started.
    #[error("cannot start the sampling thread: {0}")]
    Thread(#[source] std::io::Error),
}

/// The sampling thread; stopped and joined on drop.
pub struct Sampler {
    namespace: String,
    /// Read on the caller's thread, at each snapshot.
    logs: Mutex<LogTail>,
    state: Arc<Mutex<State>>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl Sampler {
    /// Starts sampling `namespace`; its topics are found before this returns.
    pub fn start(namespace: &str) -> Result<Sampler, StartError> {
        let state = Arc::new(Mutex::new(State::default()));
        discover(namespace, &mut lock(&state))?;
        let stop = Arc::new(AtomicBool::new(false));
        let thread = {
            let (ns, state, stop) = (namespace.to_owned(), Arc::clone(&state), Arc::clone(&stop));
            std::thread::Builder::new()
                .name("monitor-sampler".into())
                .spawn(move || run(&ns, &state, &stop))
                .map_err(StartError::Thread)?
        };
        Ok(Sampler {
            namespace: namespace.to_owned(),
            logs: Mutex::new(LogTail::new(namespace, LOG_LINES)),
            state,
            stop,
            thread: Some(thread),
        })
    }

    /// Everything known now, rates and latencies over the last `window`.
    pub fn snapshot(&self, window: Duration) -> Snapshot {
        let now = Instant::now();
        let me = std::process::id();
        let (topics, unreadable, tf) = {
            let mut st = lock(&self.state);
            let topics = st
                .probes
                .iter_mut()
                .map(|(name, p)| topic_row(name, p, now, window, me))
                .collect();
            let unreadable = st
                .unreadable
                .iter()
                .map(|(n, e)| (n.clone(), e.clone()))
                .collect();
            let tf = st
                .tf
                .as_ref()
                .map(|r| TfFrames::of(r, st.tf_error.clone(), now))
                .unwrap_or_else(|| TfFrames {
                    error: st.tf_error.clone(),
                    ..TfFrames::default()
                });
            (topics, unreadable, tf)
        };
        let (schedulers, schedulers_error) = match crate::schedulers::read_all(&self.namespace) {
            Ok(t) => (t, None),
            Err(e) => (Vec::new(), Some(e.to_string())),
        };
        Snapshot {
            namespace: self.namespace.clone(),
            window_s: window.as_secs_f64(),
            topics,
            unreadable,
            schedulers,
            schedulers_error,
            tf,
            logs: self.logs.lock().unwrap_or_else(|p| p.into_inner()).poll(),
        }
    }
}

impl Drop for Sampler {
    fn drop(&mut self) {
        // Relaxed: a flag polled by the thread; nothing is published through it.
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
        // The observers leave here (last one out removes a finished robot's segment).
        let mut st = lock(&self.state);
        st.probes.clear();
        st.tf = None;
    }
}

fn lock(state: &Mutex<State>) -> MutexGuard<'_, State> {
    state.lock().unwrap_or_else(|p| p.into_inner())
}

fn run(ns: &str, state: &Mutex<State>, stop: &AtomicBool) {
    let mut next_discovery = Instant::now() + DISCOVERY;
    let mut next_tf = Instant::now();
    while !stop.load(Ordering::Relaxed) {
        let now = Instant::now();
        let mut st = lock(state);
        if now >= next_discovery {
            // A namespace that cannot be listed now may be listable later: keep what we have.
            let _ = discover(ns, &mut st);
            next_discovery = now + DISCOVERY;
        }
        if now >= next_tf {
            poll_tf(ns, &mut st);
            next_tf = now + TF_POLL;
        }
        for p in st.probes.values_mut() {
            p.poll(now);
        }
        drop(st);
        std::thread::sleep(POLL);
    }
}

/// Reads what `tf` and `tf_static` carried since the last call (starting the survey first if
/// it has not started yet); a failure is kept for the view and tried again next time.
fn poll_tf(ns: &str, st: &mut State) {
    if st.tf.is_none() {
        match SurveyReader::new(ns) {
            Ok(r) => st.tf = Some(r),
            Err(e) => {
                st.tf_error = Some(e.to_string());
                return;
            }
        }
    }
    if let Some(r) = &mut st.tf {
        st.tf_error = r.poll().err().map(|e| e.to_string());
    }
}

/// Opens the topics that appeared, forgets those gone or abandoned, and (re)joins observers.
fn discover(ns: &str, st: &mut State) -> Result<(), horus::inspect::InspectError> {
    let names = list_topics(ns)?;
    st.probes
        .retain(|name, p| names.binary_search(name).is_ok() && !p.abandoned());
    st.unreadable
        .retain(|name, _| names.binary_search(name).is_ok());
    for name in names {
        if st.probes.contains_key(&name) {
            continue;
        }
        match TopicView::open(ns, &name) {
            Ok(view) => {
                st.unreadable.remove(&name);
                st.probes.insert(name, TopicProbe::new(view));
            }
            Err(e) => {
                st.unreadable.insert(name, e.to_string());
            }
        }
    }
    for p in st.probes.values_mut() {
        p.retry_join();
    }
    Ok(())
}

fn topic_row(name: &str, p: &mut TopicProbe, now: Instant, window: Duration, me: u32) -> TopicRow {
    let rate = p.rate(now, window);
    let latency = p.latency(now, window);
    let (read, missed, malformed, implausible) = p.own_counts();
    let observing = p.observing();
    let view = p.view();
    let q = view.qos();
    let snap = p.snapshot();
    let publishers: Vec<PublisherRow> = snap
        .publishers
        .iter()
        .map(|x| PublisherRow {
            place: x.place,
            pid: x.pid,
            process: process_name(x.pid),
            alive: process_alive(x.pid),
            sent: x.sent,
            bytes_sent: x.bytes_sent,
            rejected: x.rejected,
            timed_out: x.timed_out,
            undelivered: x.undelivered,
            loan_failures: x.loan_failures,
            sequence: x.head,
        })
        .collect();
    let subscribers: Vec<SubscriberRow> = snap
        .subscribers
        .iter()
        // The monitor's own observer is not the robot's.
        .filter(|s| !(observing && s.observer && s.pid == me))
        .map(|s| SubscriberRow {
            place: s.place,
            pid: s.pid,
            process: process_name(s.pid),
            alive: process_alive(s.pid),
            observer: s.observer,
            received: s.received,
            overrun: s.overrun,
            skipped: s.skipped,
            malformed: s.malformed,
            backlog: s.backlog,
            delivered: DeliveredRow::of(&s.latency),
        })
        .collect();
    let delivered = DeliveredRow::merged(
        snap.subscribers
            .iter()
            .filter(|s| !s.observer)
            .map(|s| &s.latency),
    );
    let robot_subs = || subscribers.iter().filter(|s| !s.observer);
    let losses = Losses {
        overrun: robot_subs().map(|s| s.overrun).sum(),
        rejected: publishers.iter().map(|x| x.rejected).sum(),
        timed_out: publishers.iter().map(|x| x.timed_out).sum(),
        undelivered: publishers.iter().map(|x| x.undelivered).sum(),
        malformed: robot_subs().map(|s| s.malformed).sum(),
    };
    let latency_note = if latency.is_some() {
        None
    } else if let Err(e) = p.description() {
        Some(e.clone())
    } else if implausible > 0 && read == implausible {
        Some("the stamps are not wall-clock publish times".into())
    } else if p.stamp().is_none() {
        Some("no stamp field in the message".into())
    } else if let Some(e) = p.observer_error() {
        Some(e.to_owned())
    } else {
        Some("no message in the window".into())
    };
    TopicRow {
        name: name.to_owned(),
        type_name: view.schema().map(|s| s.name),
        schema: view.schema_text(),
        qos: format!(
            "depth {}, {}, {} B inline, {} chunks of {} B per publisher",
            q.depth,
            overflow_text(q.overflow),
            q.inline_bytes,
            q.chunks_per_publisher,
            q.chunk_bytes
        ),
        rate_hz: rate.hz,
        bytes_per_s: rate.bytes_per_s,
        latency: latency.map(|l| LatencyRow {
            field: p.stamp().map_or_else(String::new, |s| s.path.clone()),
            samples: l.samples,
            p50_us: l.p50_ns as f64 / 1e3,
            p99_us: l.p99_ns as f64 / 1e3,
            max_us: l.max_ns as f64 / 1e3,
        }),
        latency_note,
        delivered,
        losses,
        publishers,
        subscribers,
        monitor: OwnCounts {
            observing,
            read,
            missed,
            malformed,
            implausible_stamps: implausible,
        },
        fields: p.description().as_ref().map(field_rows).unwrap_or_default(),
    }
}
