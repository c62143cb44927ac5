//! The supervisor: starts processes when their `after:`/`after_topic:` conditions hold,
//! reaps them, restarts them by policy, and stops everything in reverse start order on
//! SIGINT/SIGTERM, when every process has ended, when a `required:` process ends, or when
//! a process cannot be started. One loop on the main thread polls all of it every 10 ms.

use std::collections::HashMap;
use std::process::ExitStatus;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::child::Running;
use crate::output::{event, Label, Sink};
use crate::restart::Decision;
use crate::signals;
use crate::spec::{Plan, ProcessSpec};
use crate::summary::{Ending, ProcessReport, Summary, NOT_STARTED_STOPPING};
use crate::topic_wait::has_live_publisher;

/// How often the loop looks at everything.
const TICK: Duration = Duration::from_millis(10);
/// How often `after_topic:` segments are read.
const TOPIC_POLL: Duration = Duration::from_millis(50);
/// How long a SIGKILLed process is waited for before it is given up on.
const KILL_WAIT: Duration = Duration::from_secs(5);
/// How long the output of ended processes is waited for before the summary.
const DRAIN_WAIT: Duration = Duration::from_secs(2);

enum State {
    /// Not started yet: waiting for `after:` processes, then for `after_topic:` topics
    /// (since when they have been waited for).
    Waiting {
        topics_since: Option<Instant>,
    },
    Running(Running),
    /// Ended; restarted at `until`.
    Backoff {
        until: Instant,
    },
    /// Ended for good (or never started).
    Ended,
}

struct Proc {
    spec: ProcessSpec,
    label: Label,
    state: State,
    starts: u32,
    /// Position in the start order (first start).
    started_as: Option<usize>,
    last_pid: Option<u32>,
    last_status: Option<ExitStatus>,
    /// The current (last) run was sent SIGTERM by the shutdown / SIGKILLed.
    term_sent: bool,
    killed: bool,
    /// Why it never started, or why the launch gave up on it.
    problem: Option<String>,
    pumps: Vec<JoinHandle<()>>,
    last_topic_poll: Option<Instant>,
    topic_error: Option<String>,
}

/// Why [`run`] could not supervise a plan (nothing was started then).
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// The SIGINT/SIGTERM handlers could not be installed.
    #[error("cannot install the SIGINT/SIGTERM handlers: {0}")]
    Signals(#[source] std::io::Error),
}

/// Runs `plan` to the end: starts its processes, supervises them, stops them in reverse
/// start order on SIGINT/SIGTERM (or when a `required:` process ends, or when every process
/// has ended), and returns what happened to every process. Their output goes to stdout with
/// each line labelled by process; with `json`, to stderr (stdout is then the caller's, for
/// the summary as JSON).
pub fn run(plan: Plan, json: bool) -> Result<Summary, RunError> {
    signals::install().map_err(RunError::Signals)?;
    let width = plan
        .processes
        .iter()
        .map(|p| p.name.len())
        .max()
        .unwrap_or(0);
    let procs = plan
        .processes
        .into_iter()
        .enumerate()
        .map(|(i, spec)| Proc {
            label: Label::new(&spec.name, i, width),
            spec,
            state: State::Waiting { topics_since: None },
            starts: 0,
            started_as: None,
            last_pid: None,
            last_status: None,
            term_sent: false,
            killed: false,
            problem: None,
            pumps: Vec::new(),
            last_topic_poll: None,
            topic_error: None,
        })
        .collect();
    let mut sup = Supervisor {
        index: HashMap::new(),
        procs,
        out: if json { Sink::Stderr } else { Sink::Stdout },
        next_start: 0,
        failed_to_start: false,
    };
    for (i, p) in sup.procs.iter().enumerate() {
        sup.index.insert(p.spec.name.clone(), i);
    }
    let reason = sup.supervise();
    event(&format!("stopping: {reason}"));
    sup.shutdown();
    sup.drain();
    Ok(sup.summary(reason))
}

struct Supervisor {
    procs: Vec<Proc>,
    index: HashMap<String, usize>,
    out: Sink,
    next_start: usize,
    /// A process could not be started (spawn error, `after_topic:` timeout).
    failed_to_start: bool,
}

impl Supervisor {
    /// Runs until something asks for the shutdown; returns why.
    fn supervise(&mut self) -> String {
        loop {
            if signals::count() > 0 {
                let sig = signals::last_name();
                // One of our processes asking for the stop (the demo's monitor does).
                let by = signals::last_sender().and_then(|pid| {
                    self.procs.iter().find(|p| match &p.state {
                        State::Running(run) => run.pid() == pid,
                        _ => false,
                    })
                });
                return match by {
                    Some(p) => format!(
                        "{sig} from {} (pid {})",
                        p.spec.name,
                        p.last_pid.unwrap_or(0)
                    ),
                    None => format!("{sig} received"),
                };
            }
            for i in 0..self.procs.len() {
                if let Some(reason) = self.reap(i, false) {
                    return reason;
                }
            }
            for i in 0..self.procs.len() {
                if let Some(reason) = self.advance(i) {
                    return reason;
                }
            }
            if self.procs.iter().all(|p| matches!(p.state, State::Ended)) {
                return "every process has ended".into();
            }
            std::thread::sleep(TICK);
        }
    }

    /// Reaps process `i` if it ended; decides on its restart unless `stopping`. Returns a
    /// reason to shut down (a required process ended for good).
    fn reap(&mut self, i: usize, stopping: bool) -> Option<String> {
        let p = &mut self.procs[i];
        let State::Running(run) = &mut p.state else {
            return None;
        };
        let status = run.try_wait()?;
        let pid = run.pid();
        let State::Running(run) = std::mem::replace(&mut p.state, State::Ended) else {
            unreachable!("matched above");
        };
        // Finished pumps are dropped (a process restarted for ever must not pile them up).
        p.pumps.retain(|h| !h.is_finished());
        p.pumps.extend(run.pumps);
        p.last_status = Some(status);
        let name = p.spec.name.clone();
        if stopping {
            event(&format!("{name} (pid {pid}) ended: {status}"));
            return None;
        }
        let restarts = p.starts.saturating_sub(1);
        match p.spec.restart.decide(status, restarts) {
            Decision::Restart(delay) => {
                event(&format!(
                    "{name} (pid {pid}) ended: {status}; restart {} ({}) in {delay:?}",
                    restarts + 1,
                    p.spec.restart.describe()
                ));
                p.state = State::Backoff {
                    until: Instant::now() + delay,
                };
                None
            }
            Decision::Exhausted => {
                event(&format!(
                    "{name} (pid {pid}) ended: {status}; not restarted: all {restarts} restarts used"
                ));
                p.problem = Some(format!("gave up after {restarts} restarts"));
                self.ended_for_good(i)
            }
            Decision::Stay => {
                event(&format!("{name} (pid {pid}) ended: {status}"));
                self.ended_for_good(i)
            }
        }
    }

    fn ended_for_good(&self, i: usize) -> Option<String> {
        let p = &self.procs[i];
        p.spec
            .required
            .then(|| format!("required process {} has ended", p.spec.name))
    }

    /// Starts process `i` if it is due. Returns a reason to shut down (it cannot start).
    fn advance(&mut self, i: usize) -> Option<String> {
        let now = Instant::now();
        match self.procs[i].state {
            State::Waiting { topics_since } => {
                let mut topics_since = topics_since;
                let deps_started = self.procs[i]
                    .spec
                    .after
                    .iter()
                    .all(|(d, _)| self.procs[self.index[d]].started_as.is_some());
                if !deps_started {
                    return None;
                }
                if !self.procs[i].spec.after_topic.is_empty() {
                    let since = *topics_since.get_or_insert(now);
                    self.procs[i].state = State::Waiting {
                        topics_since: Some(since),
                    };
                    match self.topics_ready(i, now) {
                        Some(true) => {}
                        Some(false) if now - since < self.procs[i].spec.after_topic_timeout => {
                            return None;
                        }
                        None => return None,
                        Some(false) => return Some(self.topic_timeout(i)),
                    }
                }
                self.start(i)
            }
            State::Backoff { until } if now >= until => self.start(i),
            _ => None,
        }
    }

    /// Whether every `after_topic:` of `i` has a live publisher (`None`: not polled now).
    fn topics_ready(&mut self, i: usize, now: Instant) -> Option<bool> {
        let p = &mut self.procs[i];
        if p.last_topic_poll.is_some_and(|t| now - t < TOPIC_POLL) {
            return None;
        }
        p.last_topic_poll = Some(now);
        let ns = p.spec.effective_namespace();
        for topic in &p.spec.after_topic {
            match has_live_publisher(&ns, topic) {
                Ok(true) => {}
                Ok(false) => return Some(false),
                Err(e) => {
                    p.topic_error = Some(e);
                    return Some(false);
                }
            }
        }
        Some(true)
    }

    fn topic_timeout(&mut self, i: usize) -> String {
        let p = &mut self.procs[i];
        let ns = p.spec.effective_namespace();
        let mut why = format!(
            "not started: no live publisher on {} (namespace {ns:?}) within {:?}",
            p.spec.after_topic.join(", "),
            p.spec.after_topic_timeout
        );
        if let Some(e) = &p.topic_error {
            why += &format!(" (last error: {e})");
        }
        event(&format!("{}: {why}", p.spec.name));
        p.problem = Some(why);
        p.state = State::Ended;
        self.failed_to_start = true;
        format!("{} could not start", p.spec.name)
    }

    fn start(&mut self, i: usize) -> Option<String> {
        let out = self.out;
        let p = &mut self.procs[i];
        match Running::spawn(&p.spec, &p.label, out) {
            Ok(run) => {
                let pid = run.pid();
                if p.starts == 0 {
                    event(&format!("started {} (pid {pid})", p.spec.name));
                    p.started_as = Some(self.next_start);
                    self.next_start += 1;
                } else {
                    event(&format!(
                        "restarted {} (pid {pid}), restart {}",
                        p.spec.name, p.starts
                    ));
                }
                p.starts += 1;
                p.last_pid = Some(pid);
                p.state = State::Running(run);
                None
            }
            Err(e) => {
                let why = format!("cannot start `{}`: {e}", p.spec.argv.join(" "));
                event(&format!("{}: {why}", p.spec.name));
                p.problem = Some(why);
                p.state = State::Ended;
                self.failed_to_start = true;
                Some(format!("{} could not start", p.spec.name))
            }
        }
    }

    /// Stops every running process, latest started first: SIGTERM to its process group,
    /// then SIGKILL after its grace period; waits for each before the next. Processes not
    /// started yet are not started; a second SIGINT/SIGTERM kills what is left at once.
    fn shutdown(&mut self) {
        let signals_before = signals::count();
        for p in &mut self.procs {
            match p.state {
                State::Waiting { .. } => {
                    p.problem = Some(NOT_STARTED_STOPPING.into());
                    p.state = State::Ended;
                }
                State::Backoff { .. } => p.state = State::Ended,
                _ => {}
            }
        }
        let mut order: Vec<usize> = (0..self.procs.len())
            .filter(|&i| matches!(self.procs[i].state, State::Running(_)))
            .collect();
        order.sort_by_key(|&i| std::cmp::Reverse(self.procs[i].started_as));
        let mut kill_all = false;
        for i in order {
            self.reap(i, true);
            let State::Running(run) = &self.procs[i].state else {
                continue;
            };
            let (name, grace) = (
                self.procs[i].spec.name.clone(),
                self.procs[i].spec.stop_grace,
            );
            if kill_all {
                run.signal_group(libc::SIGKILL);
                self.procs[i].killed = true;
            } else {
                event(&format!("SIGTERM to {name} (pid {})", run.pid()));
                run.signal_group(libc::SIGTERM);
                self.procs[i].term_sent = true;
            }
            let term_at = Instant::now();
            let mut kill_at: Option<Instant> = None;
            loop {
                // Others may end meanwhile: record them too.
                for j in 0..self.procs.len() {
                    self.reap(j, true);
                }
                let p = &mut self.procs[i];
                let State::Running(run) = &p.state else {
                    break;
                };
                let second_signal = signals::count() > signals_before;
                if !p.killed && (second_signal || term_at.elapsed() >= grace) {
                    if second_signal {
                        kill_all = true;
                        event(&format!("second signal: SIGKILL to {name}"));
                    } else {
                        event(&format!("{name} did not stop within {grace:?}: SIGKILL"));
                    }
                    run.signal_group(libc::SIGKILL);
                    p.killed = true;
                    kill_at = Some(Instant::now());
                }
                if kill_at.is_some_and(|t| t.elapsed() >= KILL_WAIT) {
                    event(&format!(
                        "{name} (pid {}) survives SIGKILL: left running",
                        run.pid()
                    ));
                    p.problem = Some("survived SIGKILL".into());
                    p.state = State::Ended;
                    break;
                }
                std::thread::sleep(TICK);
            }
        }
    }

    /// Waits (a bounded time) for the last output of ended processes.
    fn drain(&mut self) {
        let deadline = Instant::now() + DRAIN_WAIT;
        let mut pumps: Vec<JoinHandle<()>> = self
            .procs
            .iter_mut()
            .flat_map(|p| p.pumps.drain(..))
            .collect();
        while Instant::now() < deadline && pumps.iter().any(|h| !h.is_finished()) {
            std::thread::sleep(TICK);
        }
        for h in pumps.drain(..).filter(|h| h.is_finished()) {
            let _ = h.join();
        }
    }

    fn summary(&self, reason: String) -> Summary {
        let processes = self
            .procs
            .iter()
            .map(|p| ProcessReport {
                name: p.spec.name.clone(),
                pid: p.last_pid,
                starts: p.starts,
                restarts: p.starts.saturating_sub(1),
                restart: p.spec.restart.describe(),
                ending: Ending::of(p.last_status, p.term_sent, p.killed, p.problem.clone()),
            })
            .collect();
        Summary::new(reason, processes, self.failed_to_start)
    }
}
