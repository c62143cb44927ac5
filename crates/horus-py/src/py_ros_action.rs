//! `RosActionClient`, `RosGoalHandle`, `RosActionServer` and `RosNewGoal`, as seen from
//! Python: actions of ROS 2 types (`horus.interfaces` action classes) over
//! `horus_actions::ros`'s raw endpoints. Goals, feedback and results cross as ROS 2 wire
//! bytes; `python/horus/_ros_action.py` encodes and decodes them with the classes, so a
//! Python end meets a Rust `RosActionServer<A>` / `RosActionClient<A>` of the same action.
//!
//! Blocking waits release the GIL and check signals between slices, as `py_action.rs`.

use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

use horus::msgs::Ros2Type;
use horus_actions::ros::{
    RawRosActionClient, RawRosActionServer, RawRosGoalHandle, RawRosNewGoal, RosActionError,
    RosActionTypes, RosGoalError, RosOpenError,
};
use horus_actions::{ActionError as RustActionError, GoalId, GoalStatus};
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyBytes;

use crate::action_errors::{action_error, goal_error, server_gone, status_name, ActionError};

/// Longest single result call of `result` (signals are checked between calls).
const RESULT_SLICE: Duration = Duration::from_millis(100);

/// Signals are checked at least this often while `next_goal` waits.
const SIGNAL_SLICE: Duration = Duration::from_millis(50);

/// One ROS 2 type as Python gives it: (type name, RIHS01 hash, ros2msg definition).
type TypeTriple = (String, String, String);

fn lock<'a, T>(m: &'a Mutex<T>, what: &str) -> PyResult<MutexGuard<'a, T>> {
    match m.try_lock() {
        Ok(g) => Ok(g),
        Err(std::sync::TryLockError::WouldBlock) => Err(PyRuntimeError::new_err(format!(
            "this {what} is in use by another thread; make one per thread"
        ))),
        Err(std::sync::TryLockError::Poisoned(p)) => Ok(p.into_inner()),
    }
}

fn seconds(what: &str, t: f64) -> PyResult<Duration> {
    Duration::try_from_secs_f64(t)
        .map_err(|_| PyValueError::new_err(format!("{what} must be >= 0 s, not {t}")))
}

/// The action's types from (send_goal request, send_goal response, get_result request,
/// get_result response, feedback message) triples.
fn types(t: [TypeTriple; 5]) -> RosActionTypes {
    let ty = |(n, h, d): &TypeTriple| Ros2Type::new(n, h, d);
    RosActionTypes {
        send_goal_request: ty(&t[0]),
        send_goal_response: ty(&t[1]),
        get_result_request: ty(&t[2]),
        get_result_response: ty(&t[3]),
        feedback_message: ty(&t[4]),
    }
}

fn with_action(action: &str, err: PyErr) -> PyErr {
    Python::attach(|py| {
        // Setting an attribute on a fresh exception instance cannot fail.
        let _ = err.value(py).setattr("action", action);
    });
    err
}

fn open_error(action: &str, e: RosOpenError) -> PyErr {
    with_action(
        action,
        ActionError::new_err(format!("action {action:?}: {e}")),
    )
}

fn ros_action_error(action: &str, e: RosActionError) -> PyErr {
    match e {
        RosActionError::Action(e) => action_error(action, e),
        e => with_action(
            action,
            ActionError::new_err(format!("action {action:?}: {e}")),
        ),
    }
}

fn ros_goal_error(action: &str, e: RosGoalError) -> PyErr {
    match e {
        RosGoalError::Goal(e) => goal_error(action, e),
        e => with_action(
            action,
            ActionError::new_err(format!("action {action:?}: {e}")),
        ),
    }
}

/// Sends goals to a ROS-typed action and follows them.
#[pyclass(module = "horus._horus", frozen)]
pub(crate) struct RosActionClient {
    name: String,
    inner: Mutex<RawRosActionClient>,
}

#[pymethods]
impl RosActionClient {
    #[new]
    #[pyo3(signature = (types, name, *, namespace=None))]
    fn new(types: [TypeTriple; 5], name: &str, namespace: Option<&str>) -> PyResult<Self> {
        let c = RawRosActionClient::open(name, namespace, &self::types(types))
            .map_err(|e| open_error(name, e))?;
        Ok(RosActionClient {
            name: name.to_owned(),
            inner: Mutex::new(c),
        })
    }

    /// The action's name.
    #[getter]
    fn name(&self) -> &str {
        &self.name
    }

    /// Feedback and status messages skipped as malformed: (feedback, status).
    fn malformed(&self) -> PyResult<(u64, u64)> {
        let m = lock(&self.inner, "action client")?.malformed();
        Ok((m.feedback, m.status))
    }

    /// Sends a goal (the wire bytes of one `Foo_Goal`) and waits at most `timeout`
    /// seconds for the server to accept it.
    #[pyo3(signature = (goal, timeout=5.0))]
    fn send_goal(&self, py: Python<'_>, goal: &[u8], timeout: f64) -> PyResult<RosGoalHandle> {
        let t = seconds("timeout", timeout)?;
        let mut c = lock(&self.inner, "action client")?;
        let c: &mut RawRosActionClient = &mut c;
        let r = py.detach(|| c.send_goal(goal, t));
        py.check_signals()?;
        let h = r.map_err(|e| ros_action_error(&self.name, e))?;
        Ok(RosGoalHandle {
            action: self.name.clone(),
            id: h.id().0,
            inner: h,
        })
    }

    /// A handle on goal `goal_id` (sent by another handle).
    fn handle(&self, goal_id: u128) -> PyResult<RosGoalHandle> {
        let h = lock(&self.inner, "action client")?.handle(GoalId(goal_id));
        Ok(RosGoalHandle {
            action: self.name.clone(),
            id: goal_id,
            inner: h,
        })
    }
}

/// One goal sent by a RosActionClient.
#[pyclass(module = "horus._horus", frozen)]
pub(crate) struct RosGoalHandle {
    action: String,
    id: u128,
    inner: RawRosGoalHandle,
}

#[pymethods]
impl RosGoalHandle {
    /// The goal's 128-bit id (its UUID, big-endian).
    #[getter]
    fn id(&self) -> u128 {
        self.id
    }

    /// The goal's latest known status (never blocks).
    #[getter]
    fn status(&self) -> &'static str {
        status_name(self.inner.status())
    }

    /// The oldest feedback not yet read (wire bytes of one `Foo_Feedback`), or None.
    fn feedback<'py>(&self, py: Python<'py>) -> Option<Bound<'py, PyBytes>> {
        self.inner.feedback().map(|f| PyBytes::new(py, &f))
    }

    /// Asks the server to cancel; returns "canceling", or the final status if the goal
    /// had finished.
    #[pyo3(signature = (timeout=1.0))]
    fn cancel(&self, py: Python<'_>, timeout: f64) -> PyResult<&'static str> {
        let t = seconds("timeout", timeout)?;
        let r = py.detach(|| self.inner.cancel(t));
        py.check_signals()?;
        r.map(status_name)
            .map_err(|e| ros_action_error(&self.action, e))
    }

    /// Waits at most `timeout` seconds for the goal to finish; returns its final status
    /// and the server's `Foo_GetResult_Response` wire bytes.
    #[pyo3(signature = (timeout=10.0))]
    fn result<'py>(
        &self,
        py: Python<'py>,
        timeout: f64,
    ) -> PyResult<(&'static str, Bound<'py, PyBytes>)> {
        let total = seconds("timeout", timeout)?;
        let deadline = Instant::now() + total;
        let mut first = true;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let slice = left.min(RESULT_SLICE);
            match py.detach(|| self.inner.result(slice)) {
                Ok((s, r)) => return Ok((status_name(s), PyBytes::new(py, &r))),
                Err(RosActionError::Action(RustActionError::Timeout(_))) if !left.is_zero() => {}
                Err(RosActionError::Action(RustActionError::Timeout(_))) => {
                    return Err(action_error(&self.action, RustActionError::Timeout(total)))
                }
                // The server answered before (it created the service), so it is gone now.
                Err(RosActionError::Action(RustActionError::NoServer(_))) if !first => {
                    return Err(server_gone(&self.action))
                }
                Err(e) => return Err(ros_action_error(&self.action, e)),
            }
            first = false;
            py.check_signals()?;
        }
    }

    fn __repr__(&self) -> String {
        format!("RosGoalHandle({:032x}, {:?})", self.id, self.status())
    }
}

/// Serves a ROS-typed action. Poll it from a tick (`next_goal`, `poll`).
#[pyclass(module = "horus._horus", frozen)]
pub(crate) struct RosActionServer {
    name: String,
    inner: Mutex<RawRosActionServer>,
}

impl RosActionServer {
    fn server(&self) -> PyResult<MutexGuard<'_, RawRosActionServer>> {
        lock(&self.inner, "action server")
    }

    fn finish(&self, goal_id: u128, to: GoalStatus, response: &[u8]) -> PyResult<()> {
        self.server()?
            .finish(GoalId(goal_id), to, response)
            .map_err(|e| ros_goal_error(&self.name, e))
    }
}

#[pymethods]
impl RosActionServer {
    #[new]
    #[pyo3(signature = (types, default_result, name, *, namespace=None, result_retention=None))]
    fn new(
        types: [TypeTriple; 5],
        default_result: &[u8],
        name: &str,
        namespace: Option<&str>,
        result_retention: Option<f64>,
    ) -> PyResult<Self> {
        let mut server =
            RawRosActionServer::new(name, namespace, &self::types(types), default_result)
                .map_err(|e| open_error(name, e))?;
        if let Some(r) = result_retention {
            server.set_result_retention(seconds("result_retention", r)?);
        }
        Ok(RosActionServer {
            name: name.to_owned(),
            inner: Mutex::new(server),
        })
    }

    /// The action's name.
    #[getter]
    fn name(&self) -> &str {
        &self.name
    }

    /// Requests refused as malformed: (send_goal, cancel_goal, get_result).
    fn malformed(&self) -> PyResult<(u64, u64, u64)> {
        let m = self.server()?.malformed();
        Ok((m.send_goal, m.cancel_goal, m.get_result))
    }

    /// Whether a goal, cancel or result request is waiting.
    #[getter]
    fn has_pending(&self) -> PyResult<bool> {
        Ok(self.server()?.has_pending())
    }

    /// Answers cancel and result requests and drops expired results.
    fn poll(&self) -> PyResult<()> {
        self.server()?.poll();
        Ok(())
    }

    /// The next goal a client sent, or None; with a `timeout` (seconds), waits that long.
    #[pyo3(signature = (timeout=0.0))]
    fn next_goal(&self, py: Python<'_>, timeout: f64) -> PyResult<Option<RosNewGoal>> {
        let deadline = Instant::now() + seconds("timeout", timeout)?;
        let mut s = self.server()?;
        let s: &mut RawRosActionServer = &mut s;
        loop {
            let slice_end = (Instant::now() + SIGNAL_SLICE).min(deadline);
            let g = py.detach(|| loop {
                if let Some(g) = s.next_goal() {
                    return Some(g);
                }
                if Instant::now() >= slice_end {
                    return None;
                }
                std::thread::sleep(Duration::from_millis(1));
            });
            if let Some(g) = g {
                return Ok(Some(RosNewGoal {
                    id: g.id().0,
                    goal: g.goal_cdr().to_vec(),
                    inner: Mutex::new(Some(g)),
                }));
            }
            if Instant::now() >= deadline {
                return Ok(None);
            }
            py.check_signals()?;
        }
    }

    /// Accepts a goal (status "accepted"); returns its id.
    fn accept(&self, goal: &RosNewGoal) -> PyResult<u128> {
        let g = goal.take()?;
        Ok(self.server()?.accept(g).0)
    }

    /// Rejects a goal: the client's send_goal raises GoalRejectedError.
    fn reject(&self, goal: &RosNewGoal) -> PyResult<()> {
        let g = goal.take()?;
        self.server()?.reject(g);
        Ok(())
    }

    /// Moves an accepted goal to "executing".
    fn execute(&self, goal_id: u128) -> PyResult<()> {
        self.server()?
            .execute(GoalId(goal_id))
            .map_err(|e| goal_error(&self.name, e))
    }

    /// Goals whose cancel was requested since the last call (each now "canceling").
    fn take_cancel_requests(&self) -> PyResult<Vec<u128>> {
        Ok(self
            .server()?
            .take_cancel_requests()
            .into_iter()
            .map(|i| i.0)
            .collect())
    }

    /// The status of a goal this server keeps, or None.
    fn status(&self, goal_id: u128) -> PyResult<Option<&'static str>> {
        Ok(self.server()?.status(GoalId(goal_id)).map(status_name))
    }

    /// Goals accepted and not finished.
    fn active_goals(&self) -> PyResult<Vec<u128>> {
        Ok(self
            .server()?
            .active_goals()
            .into_iter()
            .map(|i| i.0)
            .collect())
    }

    /// Publishes feedback (wire bytes of one `Foo_Feedback`) for an active goal.
    fn publish_feedback(&self, goal_id: u128, feedback: &[u8]) -> PyResult<()> {
        self.server()?
            .publish_feedback(GoalId(goal_id), feedback)
            .map_err(|e| ros_goal_error(&self.name, e))
    }

    /// Finishes a goal as "succeeded" with `response` (a `Foo_GetResult_Response`'s wire
    /// bytes; its status is set here).
    fn succeed(&self, goal_id: u128, response: &[u8]) -> PyResult<()> {
        self.finish(goal_id, GoalStatus::Succeeded, response)
    }

    /// Finishes a goal as "aborted" with `response`.
    fn abort(&self, goal_id: u128, response: &[u8]) -> PyResult<()> {
        self.finish(goal_id, GoalStatus::Aborted, response)
    }

    /// Finishes a "canceling" goal as "canceled" with `response`.
    fn canceled(&self, goal_id: u128, response: &[u8]) -> PyResult<()> {
        self.finish(goal_id, GoalStatus::Canceled, response)
    }
}

/// A goal waiting for RosActionServer.accept or reject. Dropping it unanswered refuses it.
#[pyclass(module = "horus._horus", frozen)]
pub(crate) struct RosNewGoal {
    id: u128,
    goal: Vec<u8>,
    inner: Mutex<Option<RawRosNewGoal>>,
}

impl RosNewGoal {
    fn take(&self) -> PyResult<RawRosNewGoal> {
        lock(&self.inner, "new goal")?
            .take()
            .ok_or_else(|| ActionError::new_err("the goal was already accepted or rejected"))
    }
}

#[pymethods]
impl RosNewGoal {
    /// The goal's id.
    #[getter]
    fn id(&self) -> u128 {
        self.id
    }

    /// The goal's wire bytes (a copy; not checked: decode them).
    #[getter]
    fn data<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        PyBytes::new(py, &self.goal)
    }
}
