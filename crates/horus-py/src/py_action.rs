//! `ActionClient`, `GoalHandle`, `ActionServer` and `NewGoal`, as seen
//! from Python, over `horus_actions` with raw payloads: goal, feedback and
//! result are fixed-size standard messages named at run time
//! ([`crate::dyn_service::raw_spec`]) and cross as the bytes of their
//! fixed part, so one instantiation serves every type triple and a Python
//! end meets a typed Rust end of the same types.
//!
//! Blocking waits release the GIL. `GoalHandle.result` waits in slices of
//! [`RESULT_SLICE`] (one result call each) and checks signals between them,
//! so Ctrl-C raises `KeyboardInterrupt` promptly; `send_goal` and `cancel`
//! are single calls whose timeout bounds how long a Ctrl-C waits.
//! `ActionServer.next_goal(timeout)` polls in 1-ms naps without the GIL.

use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

use horus_actions::{ActionError as RustActionError, GoalId, RawPayload, RawSpec};
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyBytes;

use crate::action_errors::{
    action_error, goal_error, open_error, server_gone, status_name, ActionError,
};

type RawClient = horus_actions::ActionClient<RawPayload, RawPayload, RawPayload>;
type RawHandle = horus_actions::GoalHandle<RawPayload, RawPayload>;
type RawServer = horus_actions::ActionServer<RawPayload, RawPayload, RawPayload>;

/// Longest single result call of `GoalHandle.result` (signals are checked
/// between calls).
const RESULT_SLICE: Duration = Duration::from_millis(100);

/// Signals are checked at least this often while `next_goal` waits.
const SIGNAL_SLICE: Duration = Duration::from_millis(50);

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

fn specs(goal: &str, feedback: &str, result: &str) -> PyResult<(RawSpec, RawSpec, RawSpec)> {
    let one = |s: &str| {
        crate::dyn_service::raw_spec(s).ok_or_else(|| {
            PyValueError::new_err(format!(
                "actions carry fixed-size messages: goal, feedback and result must each be one of {:?}, not {s:?}",
                crate::dyn_service::service_schemas()
            ))
        })
    };
    Ok((one(goal)?, one(feedback)?, one(result)?))
}

fn check_len(action: &str, what: &str, spec: &RawSpec, bytes: &[u8]) -> PyResult<RawPayload> {
    if bytes.len() != spec.size {
        return Err(PyValueError::new_err(format!(
            "action {action:?}: got {} {what} bytes, {} has {}",
            bytes.len(),
            spec.name,
            spec.size
        )));
    }
    Ok(RawPayload(bytes.to_vec()))
}

/// Sends goals to an action and follows them.
#[pyclass(module = "horus._horus", frozen)]
pub(crate) struct ActionClient {
    name: String,
    goal: RawSpec,
    inner: Mutex<RawClient>,
}

#[pymethods]
impl ActionClient {
    #[new]
    #[pyo3(signature = (goal_schema, feedback_schema, result_schema, name, *, namespace=None))]
    fn new(
        goal_schema: &str,
        feedback_schema: &str,
        result_schema: &str,
        name: &str,
        namespace: Option<&str>,
    ) -> PyResult<Self> {
        let s = specs(goal_schema, feedback_schema, result_schema)?;
        let c = RawClient::open_raw(name, namespace, s).map_err(|e| open_error(name, e))?;
        Ok(ActionClient {
            name: name.to_owned(),
            goal: s.0,
            inner: Mutex::new(c),
        })
    }

    /// The action's name.
    #[getter]
    fn name(&self) -> &str {
        &self.name
    }

    /// Sends a goal (exactly the bytes of one goal message) and waits at
    /// most `timeout` seconds for the server to accept it.
    #[pyo3(signature = (goal, timeout=5.0))]
    fn send_goal(&self, py: Python<'_>, goal: &[u8], timeout: f64) -> PyResult<GoalHandle> {
        let t = seconds("timeout", timeout)?;
        let g = check_len(&self.name, "goal", &self.goal, goal)?;
        let mut c = lock(&self.inner, "action client")?;
        let c: &mut RawClient = &mut c;
        let r = py.detach(|| c.send_goal(&g, t));
        py.check_signals()?;
        let h = r.map_err(|e| action_error(&self.name, e))?;
        Ok(GoalHandle {
            action: self.name.clone(),
            id: h.id().0,
            inner: h,
        })
    }

    /// A handle on goal `goal_id` (sent by another handle): its result and
    /// cancel work; status and feedback follow from now on.
    fn handle(&self, goal_id: u128) -> PyResult<GoalHandle> {
        let h = lock(&self.inner, "action client")?.handle(GoalId(goal_id));
        Ok(GoalHandle {
            action: self.name.clone(),
            id: goal_id,
            inner: h,
        })
    }
}

/// One goal sent by an ActionClient.
#[pyclass(module = "horus._horus", frozen)]
pub(crate) struct GoalHandle {
    action: String,
    id: u128,
    inner: RawHandle,
}

#[pymethods]
impl GoalHandle {
    /// The goal's 128-bit id.
    #[getter]
    fn id(&self) -> u128 {
        self.id
    }

    /// The goal's latest known status (never blocks).
    #[getter]
    fn status(&self) -> &'static str {
        status_name(self.inner.status())
    }

    /// The oldest feedback bytes not yet read, or None (never blocks; up to
    /// 64 unread messages are kept per goal).
    fn feedback<'py>(&self, py: Python<'py>) -> Option<Bound<'py, PyBytes>> {
        self.inner.feedback().map(|f| PyBytes::new(py, &f.0))
    }

    /// Asks the server to cancel; waits at most `timeout` seconds for the
    /// acknowledgement. Returns the status then ("canceling", or the final
    /// status if the goal had finished).
    #[pyo3(signature = (timeout=1.0))]
    fn cancel(&self, py: Python<'_>, timeout: f64) -> PyResult<&'static str> {
        let t = seconds("timeout", timeout)?;
        let r = py.detach(|| self.inner.cancel(t));
        py.check_signals()?;
        r.map(status_name)
            .map_err(|e| action_error(&self.action, e))
    }

    /// Waits at most `timeout` seconds for the goal to finish; returns its
    /// final status and the result bytes.
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
                Ok((s, r)) => return Ok((status_name(s), PyBytes::new(py, &r.0))),
                Err(RustActionError::Timeout(_)) if !left.is_zero() => {}
                Err(RustActionError::Timeout(_)) => {
                    return Err(action_error(&self.action, RustActionError::Timeout(total)))
                }
                // The server answered an earlier slice's call, so it ran
                // when the wait began: it is gone now.
                Err(RustActionError::NoServer(_)) if !first => {
                    return Err(server_gone(&self.action))
                }
                Err(e) => return Err(action_error(&self.action, e)),
            }
            first = false;
            py.check_signals()?;
        }
    }

    fn __repr__(&self) -> String {
        format!("GoalHandle({:032x}, {:?})", self.id, self.status())
    }
}

/// Serves an action. Poll it from a tick (`next_goal`, `poll`), or wait in
/// `next_goal(timeout)`. One server per action.
#[pyclass(module = "horus._horus", frozen)]
pub(crate) struct ActionServer {
    name: String,
    specs: (RawSpec, RawSpec, RawSpec),
    inner: Mutex<RawServer>,
}

impl ActionServer {
    fn server(&self) -> PyResult<MutexGuard<'_, RawServer>> {
        lock(&self.inner, "action server")
    }

    fn payload(&self, what: &str, spec: &RawSpec, bytes: &[u8]) -> PyResult<RawPayload> {
        check_len(&self.name, what, spec, bytes)
    }
}

#[pymethods]
impl ActionServer {
    #[new]
    #[pyo3(signature = (goal_schema, feedback_schema, result_schema, name, *, namespace=None, result_retention=None))]
    fn new(
        goal_schema: &str,
        feedback_schema: &str,
        result_schema: &str,
        name: &str,
        namespace: Option<&str>,
        result_retention: Option<f64>,
    ) -> PyResult<Self> {
        let s = specs(goal_schema, feedback_schema, result_schema)?;
        let mut server = RawServer::new_raw(name, namespace, s).map_err(|e| open_error(name, e))?;
        if let Some(r) = result_retention {
            server.set_result_retention(seconds("result_retention", r)?);
        }
        Ok(ActionServer {
            name: name.to_owned(),
            specs: s,
            inner: Mutex::new(server),
        })
    }

    /// The action's name.
    #[getter]
    fn name(&self) -> &str {
        &self.name
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

    /// The next goal a client sent (after `poll`), or None. With a
    /// `timeout` (seconds), waits that long for one, polling. A goal of
    /// another type is refused here (the client gets ActionTypeError).
    #[pyo3(signature = (timeout=0.0))]
    fn next_goal(&self, py: Python<'_>, timeout: f64) -> PyResult<Option<NewGoal>> {
        let deadline = Instant::now() + seconds("timeout", timeout)?;
        let mut s = self.server()?;
        let s: &mut RawServer = &mut s;
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
                return Ok(Some(NewGoal {
                    id: g.id().0,
                    goal: g.goal().0.clone(),
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
    fn accept(&self, goal: &NewGoal) -> PyResult<u128> {
        let g = goal.take()?;
        Ok(self.server()?.accept(g).0)
    }

    /// Rejects a goal: the client's send_goal raises GoalRejectedError.
    fn reject(&self, goal: &NewGoal) -> PyResult<()> {
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

    /// Goals whose cancel was requested since the last call (each now
    /// "canceling": finish it with canceled, succeed or abort).
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

    /// Publishes feedback (the bytes of one feedback message) for an active goal.
    fn publish_feedback(&self, goal_id: u128, feedback: &[u8]) -> PyResult<()> {
        let f = self.payload("feedback", &self.specs.1, feedback)?;
        self.server()?
            .publish_feedback(GoalId(goal_id), &f)
            .map_err(|e| goal_error(&self.name, e))
    }

    /// Finishes a goal as "succeeded" with `result` (bytes of one result message).
    fn succeed(&self, goal_id: u128, result: &[u8]) -> PyResult<()> {
        let r = self.payload("result", &self.specs.2, result)?;
        self.server()?
            .succeed(GoalId(goal_id), &r)
            .map_err(|e| goal_error(&self.name, e))
    }

    /// Finishes a goal as "aborted" with `result`.
    fn abort(&self, goal_id: u128, result: &[u8]) -> PyResult<()> {
        let r = self.payload("result", &self.specs.2, result)?;
        self.server()?
            .abort(GoalId(goal_id), &r)
            .map_err(|e| goal_error(&self.name, e))
    }

    /// Finishes a "canceling" goal as "canceled" with `result`.
    fn canceled(&self, goal_id: u128, result: &[u8]) -> PyResult<()> {
        let r = self.payload("result", &self.specs.2, result)?;
        self.server()?
            .canceled(GoalId(goal_id), &r)
            .map_err(|e| goal_error(&self.name, e))
    }
}

/// A goal waiting for ActionServer.accept or reject. Dropping it unanswered
/// refuses the goal.
#[pyclass(module = "horus._horus", frozen)]
pub(crate) struct NewGoal {
    id: u128,
    goal: Vec<u8>,
    inner: Mutex<Option<horus_actions::NewGoal<RawPayload>>>,
}

impl NewGoal {
    fn take(&self) -> PyResult<horus_actions::NewGoal<RawPayload>> {
        lock(&self.inner, "new goal")?
            .take()
            .ok_or_else(|| ActionError::new_err("the goal was already accepted or rejected"))
    }
}

#[pymethods]
impl NewGoal {
    /// The goal's id.
    #[getter]
    fn id(&self) -> u128 {
        self.id
    }

    /// The goal's bytes (a copy).
    #[getter]
    fn data<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        PyBytes::new(py, &self.goal)
    }
}
