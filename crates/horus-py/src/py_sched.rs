//! Python nodes run by the horus scheduler.
//!
//! A Python node is any object with `tick(ctx)` (and optionally `init()`,
//! `shutdown()`, `enter_safe_state()`), or a plain function used as `tick`.
//! [`PyNode`] implements `horus_sched::Node` by calling it with the GIL; the
//! scheduler itself (rates, budgets, deadlines, failure policies, watchdogs,
//! statistics) is the Rust one, run with the GIL released.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use horus_sched::{
    FailurePolicy, Frequency, MissPolicy, Node, NodeConfig, NodeError, StopHandle, StopReason,
    TickContext, WatchdogAction,
};
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::gc::PyVisit;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use pyo3::PyTraverseError;

use crate::errors::HorusError;
use crate::rust_nodes::RustNode;

/// What a tick asked of the scheduler through its context.
#[derive(Default)]
struct Requests {
    stop: bool,
    estop: Option<String>,
}

/// The context a Python tick receives: timing of this tick, and requests
/// (stop, emergency stop) applied when the tick returns.
#[pyclass(module = "horus._horus", frozen)]
pub(crate) struct TickInfo {
    /// Node name.
    #[pyo3(get)]
    name: String,
    /// Scheduler time of this tick, seconds since the scheduler started
    /// (simulated in deterministic mode).
    #[pyo3(get)]
    now: f64,
    /// When this tick was due, seconds since the scheduler started.
    #[pyo3(get)]
    release_time: f64,
    /// Ticks of this node before this one.
    #[pyo3(get)]
    tick_index: u64,
    /// The node's period in seconds (None for event-driven nodes).
    #[pyo3(get)]
    period: Option<f64>,
    /// Whether time is simulated (deterministic mode).
    #[pyo3(get)]
    is_simulated: bool,
    requests: Mutex<Requests>,
}

#[pymethods]
impl TickInfo {
    /// Asks the scheduler to stop after this tick.
    fn request_stop(&self) {
        self.requests.lock().unwrap_or_else(|p| p.into_inner()).stop = true;
    }

    /// Raises an emergency stop: every node enters its safe state.
    fn emergency_stop(&self, reason: String) {
        self.requests
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .estop = Some(reason);
    }
}

/// The first Python error that should end `run()` (Ctrl-C during a tick).
type Interrupt = Arc<Mutex<Option<PyErr>>>;

struct PyNode {
    name: String,
    obj: Py<PyAny>,
    /// `obj` is a function: it is the tick.
    is_fn: bool,
    interrupt: Interrupt,
}

impl PyNode {
    fn call(
        &self,
        method: &str,
        args: impl for<'py> FnOnce(Python<'py>) -> PyResult<Vec<Bound<'py, PyAny>>>,
    ) -> Result<(), NodeError> {
        // The scheduler may drop (and shut its nodes down) while the
        // interpreter is finalizing; Python code can no longer run then.
        Python::try_attach(|py| {
            // Ctrl-C while the scheduler runs: stop it, and re-raise from run().
            if let Err(e) = py.check_signals() {
                self.interrupt
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .get_or_insert(e);
                return Err(NodeError::msg("interrupted"));
            }
            let obj = self.obj.bind(py);
            let result = if self.is_fn {
                if method != "tick" {
                    return Ok(());
                }
                args(py).and_then(|a| obj.call1(pyo3::types::PyTuple::new(py, a)?))
            } else {
                match obj.getattr(method) {
                    Ok(f) => args(py).and_then(|a| f.call1(pyo3::types::PyTuple::new(py, a)?)),
                    Err(_) if method != "tick" => return Ok(()),
                    Err(e) => Err(e),
                }
            };
            result.map(drop).map_err(|e| {
                if e.is_instance_of::<pyo3::exceptions::PyKeyboardInterrupt>(py) {
                    self.interrupt
                        .lock()
                        .unwrap_or_else(|p| p.into_inner())
                        .get_or_insert(e);
                    return NodeError::msg("interrupted");
                }
                let text = e.to_string();
                e.print(py);
                NodeError::msg(format!("{}.{method}: {text}", self.name))
            })
        })
        .unwrap_or(Ok(()))
    }
}

impl Node for PyNode {
    fn name(&self) -> &str {
        &self.name
    }

    fn init(&mut self) -> Result<(), NodeError> {
        self.call("init", |_| Ok(vec![]))
    }

    fn tick(&mut self, ctx: &TickContext<'_>) -> Result<(), NodeError> {
        let info = Arc::new(Mutex::new(None::<Py<TickInfo>>));
        let slot = Arc::clone(&info);
        let name = self.name.clone();
        let r = self.call("tick", move |py| {
            let t = Py::new(
                py,
                TickInfo {
                    name,
                    now: ctx.now().as_secs_f64(),
                    release_time: ctx.release_time().as_secs_f64(),
                    tick_index: ctx.tick_index(),
                    period: ctx.period().map(|p| p.as_secs_f64()),
                    is_simulated: ctx.is_simulated(),
                    requests: Mutex::new(Requests::default()),
                },
            )?;
            *slot.lock().unwrap_or_else(|p| p.into_inner()) = Some(t.clone_ref(py));
            Ok(vec![t.into_bound(py).into_any()])
        });
        if let Some(t) = info.lock().unwrap_or_else(|p| p.into_inner()).take() {
            let req =
                std::mem::take(&mut *t.get().requests.lock().unwrap_or_else(|p| p.into_inner()));
            if let Some(reason) = req.estop {
                ctx.emergency_stop(&reason);
            }
            if req.stop {
                ctx.request_stop();
            }
        }
        if r.is_err()
            && self
                .interrupt
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .is_some()
        {
            ctx.request_stop();
            return Ok(());
        }
        r
    }

    fn shutdown(&mut self) -> Result<(), NodeError> {
        self.call("shutdown", |_| Ok(vec![]))
    }

    fn enter_safe_state(&mut self) {
        let _ = self.call("enter_safe_state", |_| Ok(vec![]));
    }
}

fn reason_name(r: &StopReason) -> String {
    match r {
        StopReason::Elapsed => "elapsed".into(),
        StopReason::Requested => "requested".into(),
        StopReason::Signal => "signal".into(),
        StopReason::EmergencyStop(e) => format!("emergency_stop: {e:?}"),
        other => format!("{other:?}"),
    }
}

/// The horus scheduler running Python nodes: rates, budgets, deadlines,
/// miss and failure policies, watchdogs, deterministic (simulated) time.
#[pyclass(module = "horus._horus", frozen)]
pub(crate) struct Scheduler {
    /// `None` once cleared by the garbage collector.
    inner: Mutex<Option<horus_sched::Scheduler>>,
    /// The Python node objects (also held by the scheduler's nodes), for
    /// the garbage collector: nodes usually reach this scheduler back
    /// through their module's globals, a cycle it must be able to break.
    nodes: Mutex<Vec<Py<PyAny>>>,
    stop: StopHandle,
    interrupt: Interrupt,
}

#[pymethods]
impl Scheduler {
    #[new]
    #[pyo3(signature = (*, name=None, tick_rate=None, deterministic=false, namespace=None, publish_stats=false))]
    fn new(
        name: Option<String>,
        tick_rate: Option<f64>,
        deterministic: bool,
        namespace: Option<String>,
        publish_stats: bool,
    ) -> PyResult<Self> {
        let mut s = horus_sched::Scheduler::new()
            .deterministic(deterministic)
            .publish_stats(publish_stats)
            .handle_signals(false);
        if let Some(n) = name {
            s = s.name(n);
        }
        if let Some(ns) = namespace {
            s = s.namespace(ns);
        }
        if let Some(hz) = tick_rate {
            s = s.tick_rate(frequency(hz)?);
        }
        let stop = s.stop_handle();
        Ok(Scheduler {
            inner: Mutex::new(Some(s)),
            nodes: Mutex::new(Vec::new()),
            stop,
            interrupt: Arc::default(),
        })
    }

    /// Adds a node: an object with `tick(ctx)` (optionally `init()`,
    /// `shutdown()`, `enter_safe_state()`) or a function `tick(ctx)`.
    ///
    /// `rate` Hz; `budget`/`deadline` seconds; `on_miss` 'warn' | 'skip' |
    /// 'safe_state' | 'stop'; `on_failure` 'fatal' | 'restart' | 'skip' |
    /// 'ignore' (with `max_failures`, `backoff` seconds); `watchdog` seconds
    /// with `watchdog_action` 'warn' | 'emergency_stop'; `compute=True` runs
    /// the node on the worker pool.
    #[pyo3(signature = (node, *, name=None, rate=None, order=None, budget=None, deadline=None,
                        on_miss=None, on_failure=None, max_failures=3, backoff=0.01,
                        watchdog=None, watchdog_action="emergency_stop", compute=false))]
    #[allow(clippy::too_many_arguments)]
    fn add(
        &self,
        py: Python<'_>,
        node: Py<PyAny>,
        name: Option<String>,
        rate: Option<f64>,
        order: Option<i32>,
        budget: Option<f64>,
        deadline: Option<f64>,
        on_miss: Option<&str>,
        on_failure: Option<&str>,
        max_failures: u32,
        backoff: f64,
        watchdog: Option<f64>,
        watchdog_action: &str,
        compute: bool,
    ) -> PyResult<()> {
        let bound = node.bind(py);
        // A node written in Rust: run as it is, without the GIL.
        let rust = bound.cast::<RustNode>().ok();
        let is_fn = rust.is_none() && !bound.hasattr("tick")? && bound.is_callable();
        if rust.is_none() && !is_fn && !bound.hasattr("tick")? {
            return Err(PyValueError::new_err(
                "a node needs a tick(ctx) method, or is a function (or is a RustNode)",
            ));
        }
        let name = match (name, &rust) {
            (Some(n), _) => n,
            (None, Some(r)) => r.get().default_name().to_owned(),
            (None, None) => match bound.getattr("name") {
                Ok(n) if n.is_instance_of::<pyo3::types::PyString>() => n.extract()?,
                _ => bound
                    .getattr("__name__")
                    .or_else(|_| bound.get_type().getattr("__name__"))?
                    .extract()?,
            },
        };
        let mut cfg = NodeConfig::new();
        if let Some(hz) = rate {
            cfg = cfg.rate(frequency(hz)?);
        }
        if let Some(o) = order {
            cfg = cfg.order(o);
        }
        if let Some(b) = budget {
            cfg = cfg.budget(crate::seconds::duration("budget", b)?);
        }
        if let Some(d) = deadline {
            cfg = cfg.deadline(crate::seconds::duration("deadline", d)?);
        }
        if let Some(m) = on_miss {
            cfg = cfg.on_miss(match m {
                "warn" => MissPolicy::Warn,
                "skip" => MissPolicy::Skip,
                "safe_state" => MissPolicy::SafeState,
                "stop" => MissPolicy::Stop,
                o => return Err(PyValueError::new_err(format!("unknown on_miss {o:?}"))),
            });
        }
        if let Some(f) = on_failure {
            let backoff = crate::seconds::duration("backoff", backoff)?;
            cfg = cfg.on_failure(match f {
                "fatal" => FailurePolicy::Fatal,
                "restart" => FailurePolicy::Restart {
                    max: max_failures,
                    backoff,
                },
                "skip" => FailurePolicy::Skip {
                    max: max_failures,
                    cooldown: backoff,
                },
                "ignore" => FailurePolicy::Ignore,
                o => return Err(PyValueError::new_err(format!("unknown on_failure {o:?}"))),
            });
        }
        if let Some(w) = watchdog {
            let action = match watchdog_action {
                "warn" => WatchdogAction::Warn,
                "emergency_stop" => WatchdogAction::EmergencyStop,
                o => {
                    return Err(PyValueError::new_err(format!(
                        "unknown watchdog_action {o:?}"
                    )))
                }
            };
            cfg = cfg.watchdog(crate::seconds::duration("watchdog", w)?, action);
        }
        if compute {
            cfg = cfg.compute();
        }
        if let Some(r) = rust {
            let mut s = self.lock()?;
            let sched = s.as_mut().ok_or_else(cleared)?;
            return sched
                .add(r.get().take()?, cfg.name(name))
                .map(drop)
                .map_err(|e| PyValueError::new_err(e.to_string()));
        }
        self.nodes
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(node.clone_ref(py));
        let node = PyNode {
            name: name.clone(),
            obj: node,
            is_fn,
            interrupt: Arc::clone(&self.interrupt),
        };
        let mut s = self.lock()?;
        s.as_mut()
            .ok_or_else(cleared)?
            .add(node, cfg.name(name))
            .map(drop)
            .map_err(|e| PyValueError::new_err(e.to_string()))
    }

    /// Runs until stopped (a node's `ctx.request_stop()`, `stop()` from
    /// another thread, an emergency stop, Ctrl-C). Returns why it stopped.
    fn run(&self, py: Python<'_>) -> PyResult<String> {
        self.run_inner(py, None)
    }

    /// Runs for `seconds` at most (simulated seconds in deterministic mode).
    fn run_for(&self, py: Python<'_>, seconds: f64) -> PyResult<String> {
        // `inf` runs until stopped, as `run()`.
        let d = crate::seconds::optional("seconds", Some(seconds))?;
        self.run_inner(py, d)
    }

    fn __traverse__(&self, visit: PyVisit<'_>) -> Result<(), PyTraverseError> {
        // Never block in the collector: a running scheduler is reachable
        // from the running frame anyway.
        if let Ok(nodes) = self.nodes.try_lock() {
            for n in nodes.iter() {
                // Two references each: ours, and the one its `PyNode` in the
                // scheduler holds (the collector must see every reference
                // we own, or it takes the node for externally reachable).
                visit.call(n)?;
                visit.call(n)?;
            }
        }
        Ok(())
    }

    fn __clear__(&self) {
        if let Ok(mut s) = self.inner.try_lock() {
            // Dropping the scheduler shuts its nodes down and releases them.
            drop(s.take());
            self.nodes.lock().unwrap_or_else(|p| p.into_inner()).clear();
        }
    }

    /// Asks a running scheduler to stop (from any thread).
    fn stop(&self) {
        self.stop.request_stop();
    }

    /// Per-node statistics: name, state, ticks, achieved_hz,
    /// deadline_misses, budget_overruns, failures, restarts, skipped,
    /// exec_p50/p99/max and jitter_p99 (seconds).
    fn stats<'py>(&self, py: Python<'py>) -> PyResult<Vec<Bound<'py, PyDict>>> {
        let stats = self.lock()?.as_ref().ok_or_else(cleared)?.stats();
        stats
            .nodes
            .iter()
            .map(|n| {
                let d = PyDict::new(py);
                d.set_item("name", &n.name)?;
                d.set_item("state", format!("{:?}", n.state))?;
                d.set_item("ticks", n.ticks)?;
                d.set_item("achieved_hz", n.achieved_hz)?;
                d.set_item("deadline_misses", n.deadline_misses)?;
                d.set_item("budget_overruns", n.budget_overruns)?;
                d.set_item("failures", n.failures)?;
                d.set_item("restarts", n.restarts)?;
                d.set_item("skipped", n.skipped)?;
                d.set_item("exec_p50", n.exec.p50.as_secs_f64())?;
                d.set_item("exec_p99", n.exec.p99.as_secs_f64())?;
                d.set_item("exec_max", n.exec.max.as_secs_f64())?;
                d.set_item("jitter_p99", n.jitter.p99.as_secs_f64())?;
                Ok(d)
            })
            .collect()
    }
}

impl Scheduler {
    fn lock(&self) -> PyResult<std::sync::MutexGuard<'_, Option<horus_sched::Scheduler>>> {
        self.inner.try_lock().map_err(|_| {
            PyRuntimeError::new_err("the scheduler is running (or in use by another thread)")
        })
    }

    fn run_inner(&self, py: Python<'_>, limit: Option<Duration>) -> PyResult<String> {
        let mut s = self.lock()?;
        let sched: &mut horus_sched::Scheduler = s.as_mut().ok_or_else(cleared)?;
        let r = py.detach(|| match limit {
            Some(d) => sched.run_for(d),
            None => sched.run(),
        });
        if let Some(e) = self
            .interrupt
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take()
        {
            return Err(e);
        }
        r.map(|reason| reason_name(&reason))
            .map_err(|e| HorusError::new_err(e.to_string()))
    }
}

fn cleared() -> PyErr {
    PyRuntimeError::new_err("the scheduler was cleared by the garbage collector")
}

fn frequency(hz: f64) -> PyResult<Frequency> {
    Frequency::try_from_hz(hz).map_err(|e| PyValueError::new_err(format!("rate {hz} Hz: {e}")))
}
