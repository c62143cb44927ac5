//! What the two flavours of actions seen from Python share: `py_action.rs`
//! (`ActionClient`, `GoalHandle`, `ActionServer`, `NewGoal`: fixed-size messages
//! named at run time) and `py_ros_action.rs` (`RosActionClient`, `RosGoalHandle`,
//! `RosActionServer`, `RosNewGoal`: ROS 2 wire bytes).
//!
//! [`action_classes!`] writes the four classes of one flavour: their fields, and every
//! method the flavours have alike (the client's `name`, `send_goal`, `handle`; the
//! handle's whole surface; the server's `name`, `has_pending`, `poll`, `next_goal`,
//! `accept`, `reject`, `execute`, `take_cancel_requests`, `status`, `active_goals`;
//! the new goal's whole surface). Each flavour's file gives what differs: the Rust
//! endpoint types, extra fields, its constructors and the methods whose arguments or
//! errors differ, and a few hooks (how a goal's bytes become what its client sends,
//! [`ClientError`], [`NewGoalBytes`]).
//!
//! Blocking waits release the GIL. A handle's `result` waits in slices of
//! [`RESULT_SLICE`] (one result call each) and checks signals between them, so Ctrl-C
//! raises `KeyboardInterrupt` promptly; `send_goal` and `cancel` are single calls whose
//! timeout bounds how long a Ctrl-C waits. A server's `next_goal(timeout)` polls in
//! 1-ms naps without the GIL, checking signals every [`SIGNAL_SLICE`].

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use horus_actions::{ActionError as RustActionError, GoalId, GoalStatus, RawPayload};
use pyo3::prelude::*;

use crate::action_errors::{action_error, server_gone};
use crate::endpoint::closed_error;

/// Longest single result call of a handle's `result` (signals are checked between
/// calls).
pub(crate) const RESULT_SLICE: Duration = Duration::from_millis(100);

/// Signals are checked at least this often while a server's `next_goal` waits.
pub(crate) const SIGNAL_SLICE: Duration = Duration::from_millis(50);

/// Feedback and results as a handle gives them to Python: their bytes.
pub(crate) trait WireBytes {
    /// The bytes Python gets.
    fn wire_bytes(&self) -> &[u8];
}

impl WireBytes for RawPayload {
    fn wire_bytes(&self) -> &[u8] {
        &self.0
    }
}

impl WireBytes for Vec<u8> {
    fn wire_bytes(&self) -> &[u8] {
        self
    }
}

/// A client-side error of one flavour.
pub(crate) trait ClientError {
    /// The error as the fixed-layout actions' error, where it is one (timeouts and a
    /// missing server are handled alike by both flavours).
    fn as_action(&self) -> Option<&RustActionError>;
    /// The Python exception for it, naming `action`.
    fn into_py(self, action: &str) -> PyErr;
}

impl ClientError for RustActionError {
    fn as_action(&self) -> Option<&RustActionError> {
        Some(self)
    }
    fn into_py(self, action: &str) -> PyErr {
        action_error(action, self)
    }
}

/// The Python exception for a client's call that failed with `e`: `ClosedError` when a
/// `close()` of the `what` (from another thread) stopped it, else `e`'s own.
pub(crate) fn call_error<E: ClientError>(e: E, action: &str, what: &str) -> PyErr {
    if matches!(
        e.as_action(),
        Some(RustActionError::Call(horus::CallError::Stopped))
    ) {
        return crate::errors::ClosedError::new_err(format!(
            "this {what} is closed: the call was withdrawn"
        ));
    }
    e.into_py(action)
}

/// A new goal of one flavour's server: its id and the bytes Python sees.
pub(crate) trait NewGoalBytes {
    /// The goal's id.
    fn goal_id(&self) -> GoalId;
    /// A copy of the goal's bytes.
    fn goal_bytes(&self) -> Vec<u8>;
}

/// Waits at most `timeout` seconds for a goal's result, in calls of at most
/// [`RESULT_SLICE`] (`call(slice)`) without the GIL, checking signals and whether the
/// handle was `closed()` (`ClosedError`) between them.
pub(crate) fn wait_result<T: Send, E: ClientError + Send>(
    py: Python<'_>,
    action: &str,
    timeout: f64,
    call: impl Fn(Duration) -> Result<(GoalStatus, T), E> + Sync,
    closed: impl Fn() -> bool,
) -> PyResult<(GoalStatus, T)> {
    let total = crate::seconds::timeout("timeout", timeout)?;
    let deadline = Instant::now() + total;
    let mut first = true;
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        let slice = left.min(RESULT_SLICE);
        let e = match py.detach(|| call(slice)) {
            Ok(r) => return Ok(r),
            Err(e) => e,
        };
        match e.as_action() {
            Some(RustActionError::Timeout(_)) if !left.is_zero() => {}
            Some(RustActionError::Timeout(_)) => {
                return Err(action_error(action, RustActionError::Timeout(total)))
            }
            // The server answered an earlier slice's call (it created the service), so
            // it ran when the wait began: it is gone now.
            Some(RustActionError::NoServer(_)) if !first => return Err(server_gone(action)),
            _ => return Err(e.into_py(action)),
        }
        first = false;
        if closed() {
            return Err(closed_error("goal handle"));
        }
        py.check_signals()?;
    }
}

/// Waits at most `timeout` seconds for `next(server)` to give a goal, polling in 1-ms
/// naps without the GIL and checking signals every [`SIGNAL_SLICE`]; `ClosedError`
/// as soon as `closed` is set (by `close()` from another thread).
pub(crate) fn wait_next_goal<S: Send, G: Send>(
    py: Python<'_>,
    server: &mut S,
    timeout: f64,
    next: impl Fn(&mut S) -> Option<G> + Sync,
    closed: &AtomicBool,
) -> PyResult<Option<G>> {
    let deadline = Instant::now() + crate::seconds::timeout("timeout", timeout)?;
    loop {
        let slice_end = (Instant::now() + SIGNAL_SLICE).min(deadline);
        let g = py.detach(|| loop {
            if let Some(g) = next(server) {
                return Some(g);
            }
            // Acquire: pairs with `close()`'s Release store.
            if Instant::now() >= slice_end || closed.load(Ordering::Acquire) {
                return None;
            }
            std::thread::sleep(Duration::from_millis(1));
        });
        if g.is_some() {
            return Ok(g);
        }
        if closed.load(Ordering::Acquire) {
            return Err(closed_error("action server"));
        }
        if Instant::now() >= deadline {
            return Ok(None);
        }
        py.check_signals()?;
    }
}

/// The four Python classes of one action flavour (see the module docs): a client, its
/// goal handle, a server and its new goal, over the flavour's Rust endpoints. The
/// flavour's file gives each class's docs, name and Rust type, and:
///
/// - `client Name over RustClient { extra fields } with { methods }`: the client's
///   `#[new]` and its other own methods; the file implements
///   `fn goal_payload(&self, goal: &[u8]) -> PyResult<T>` on it (what `send_goal` passes
///   by reference to the Rust client's `send_goal`), and [`ClientError`] for the Rust
///   client's error;
/// - `server Name over RustServer { extra fields } finished with arg; with { methods }`:
///   the server's `#[new]` and its other own methods (`publish_feedback`, …); the file
///   implements `fn finish(&self, goal_id: u128, to: GoalStatus, arg: &[u8]) ->
///   PyResult<()>` on it, which `succeed`, `abort` and `canceled` (Python argument
///   `arg`) call, and [`NewGoalBytes`] for the Rust new goal.
///
/// The methods written here call the Rust endpoints' methods of the same names, which
/// both flavours have with the same meaning.
macro_rules! action_classes {
    (
        $(#[$client_doc:meta])*
        client $Client:ident over $RawClient:ty { $($client_field:ident: $client_ty:ty),* $(,)? }
        with { $($client_methods:tt)* }

        $(#[$handle_doc:meta])*
        handle $Handle:ident over $RawHandle:ty;

        $(#[$server_doc:meta])*
        server $Server:ident over $RawServer:ty { $($server_field:ident: $server_ty:ty),* $(,)? }
        finished with $result:ident;
        with { $($server_methods:tt)* }

        $(#[$new_goal_doc:meta])*
        new_goal $NewGoal:ident over $RawNewGoal:ty;
    ) => {
        $(#[$client_doc])*
        #[::pyo3::pyclass(module = "horus._horus", frozen)]
        pub(crate) struct $Client {
            name: String,
            inner: $crate::endpoint::Endpoint<$RawClient>,
            $($client_field: $client_ty,)*
        }

        #[::pyo3::pymethods]
        impl $Client {
            $($client_methods)*

            /// The action's name.
            #[getter]
            fn name(&self) -> &str {
                &self.name
            }

            /// Sends a goal (its bytes) and waits at most `timeout` seconds for the
            /// server to accept it.
            #[pyo3(signature = (goal, timeout=5.0))]
            fn send_goal(
                &self,
                py: ::pyo3::Python<'_>,
                goal: &[u8],
                timeout: f64,
            ) -> ::pyo3::PyResult<$Handle> {
                let t = $crate::seconds::timeout("timeout", timeout)?;
                let g = self.goal_payload(goal)?;
                let mut c = self.inner.lock()?;
                let c: &mut $RawClient = &mut c;
                let closed = self.inner.closed_flag();
                // Acquire: pairs with `close()`'s Release store.
                let r = py.detach(|| {
                    c.send_goal_or_stop(&g, t, || {
                        closed.load(::std::sync::atomic::Ordering::Acquire)
                    })
                });
                py.check_signals()?;
                let h = r.map_err(|e| {
                    $crate::py_action_core::call_error(e, &self.name, "action client")
                })?;
                Ok($Handle {
                    action: self.name.clone(),
                    id: h.id().0,
                    inner: ::std::sync::Mutex::new(Some(::std::sync::Arc::new(h))),
                })
            }

            /// Leaves the action now: this client's places are released and any use
            /// after raises ClosedError; a `send_goal` waiting in another thread is
            /// withdrawn and raises ClosedError within a few milliseconds. Idempotent.
            fn close(&self) {
                self.inner.close();
            }

            /// Whether `close()` was called.
            #[getter]
            fn closed(&self) -> bool {
                self.inner.is_closed()
            }

            /// A handle on goal `goal_id` (sent by another handle): its result and
            /// cancel work; status and feedback follow from now on.
            fn handle(&self, goal_id: u128) -> ::pyo3::PyResult<$Handle> {
                let h = self.inner.lock()?
                    .handle(::horus_actions::GoalId(goal_id));
                Ok($Handle {
                    action: self.name.clone(),
                    id: goal_id,
                    inner: ::std::sync::Mutex::new(Some(::std::sync::Arc::new(h))),
                })
            }
        }

        $(#[$handle_doc])*
        #[::pyo3::pyclass(module = "horus._horus", frozen)]
        pub(crate) struct $Handle {
            action: String,
            id: u128,
            /// `None` once closed. A call clones the `Arc` and lets go of the
            /// lock, so a `result` waiting in one thread blocks nothing else;
            /// the handle's places go when the last clone does.
            inner: ::std::sync::Mutex<Option<::std::sync::Arc<$RawHandle>>>,
        }

        impl $Handle {
            fn raw(&self) -> ::pyo3::PyResult<::std::sync::Arc<$RawHandle>> {
                self.inner
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .clone()
                    .ok_or_else(|| $crate::endpoint::closed_error("goal handle"))
            }
        }

        #[::pyo3::pymethods]
        impl $Handle {
            /// The goal's 128-bit id.
            #[getter]
            fn id(&self) -> u128 {
                self.id
            }

            /// The goal's latest known status (never blocks).
            #[getter]
            fn status(&self) -> ::pyo3::PyResult<&'static str> {
                Ok($crate::action_errors::status_name(self.raw()?.status()))
            }

            /// Stops following the goal: the handle's places are released
            /// (the goal itself goes on) and any use after raises ClosedError; a
            /// `result` or `cancel` waiting in another thread raises ClosedError
            /// (a `cancel` is withdrawn). Idempotent.
            fn close(&self) {
                let taken = self.inner.lock().unwrap_or_else(|p| p.into_inner()).take();
                drop(taken);
            }

            /// Whether `close()` was called.
            #[getter]
            fn closed(&self) -> bool {
                self.inner.lock().unwrap_or_else(|p| p.into_inner()).is_none()
            }

            /// The oldest feedback bytes not yet read, or None (never blocks; up to 64
            /// unread messages are kept per goal).
            fn feedback<'py>(
                &self,
                py: ::pyo3::Python<'py>,
            ) -> ::pyo3::PyResult<Option<::pyo3::Bound<'py, ::pyo3::types::PyBytes>>> {
                use $crate::py_action_core::WireBytes;
                Ok(self
                    .raw()?
                    .feedback()
                    .map(|f| ::pyo3::types::PyBytes::new(py, f.wire_bytes())))
            }

            /// Asks the server to cancel; waits at most `timeout` seconds for its
            /// answer. Returns "canceling", or the final status if the goal had
            /// finished.
            #[pyo3(signature = (timeout=1.0))]
            fn cancel(
                &self,
                py: ::pyo3::Python<'_>,
                timeout: f64,
            ) -> ::pyo3::PyResult<&'static str> {
                let t = $crate::seconds::timeout("timeout", timeout)?;
                let raw = self.raw()?;
                let r = py.detach(|| raw.cancel_or_stop(t, || self.closed()));
                py.check_signals()?;
                r.map($crate::action_errors::status_name).map_err(|e| {
                    $crate::py_action_core::call_error(e, &self.action, "goal handle")
                })
            }

            /// Waits at most `timeout` seconds for the goal to finish; returns its
            /// final status and the result bytes.
            #[pyo3(signature = (timeout=10.0))]
            fn result<'py>(
                &self,
                py: ::pyo3::Python<'py>,
                timeout: f64,
            ) -> ::pyo3::PyResult<(&'static str, ::pyo3::Bound<'py, ::pyo3::types::PyBytes>)> {
                use $crate::py_action_core::WireBytes;
                let raw = self.raw()?;
                let (s, r) = $crate::py_action_core::wait_result(
                    py,
                    &self.action,
                    timeout,
                    |t| raw.result(t),
                    || self.closed(),
                )?;
                Ok((
                    $crate::action_errors::status_name(s),
                    ::pyo3::types::PyBytes::new(py, r.wire_bytes()),
                ))
            }

            fn __repr__(&self) -> String {
                format!(
                    "{}({:032x}, {:?})",
                    stringify!($Handle),
                    self.id,
                    self.status().unwrap_or("closed")
                )
            }
        }

        $(#[$server_doc])*
        #[::pyo3::pyclass(module = "horus._horus", frozen)]
        pub(crate) struct $Server {
            name: String,
            inner: $crate::endpoint::Endpoint<$RawServer>,
            $($server_field: $server_ty,)*
        }

        impl $Server {
            fn server(&self) -> ::pyo3::PyResult<$crate::endpoint::Open<'_, $RawServer>> {
                self.inner.lock()
            }
        }

        #[::pyo3::pymethods]
        impl $Server {
            $($server_methods)*

            /// The action's name.
            #[getter]
            fn name(&self) -> &str {
                &self.name
            }

            /// Leaves the action now: this server (goals it keeps are dropped with it)'s places are released and any use
            /// after raises ClosedError. Idempotent.
            fn close(&self) {
                self.inner.close();
            }

            /// Whether `close()` was called.
            #[getter]
            fn closed(&self) -> bool {
                self.inner.is_closed()
            }

            /// Whether a goal, cancel or result request is waiting.
            #[getter]
            fn has_pending(&self) -> ::pyo3::PyResult<bool> {
                Ok(self.server()?.has_pending())
            }

            /// Answers cancel and result requests and drops expired results.
            fn poll(&self) -> ::pyo3::PyResult<()> {
                self.server()?.poll();
                Ok(())
            }

            /// The next goal a client sent (after `poll`), or None. With a `timeout`
            /// (seconds), waits that long for one, polling. A goal the server cannot
            /// take (another type, bytes that are not a goal, an id it keeps) is
            /// refused here.
            #[pyo3(signature = (timeout=0.0))]
            fn next_goal(
                &self,
                py: ::pyo3::Python<'_>,
                timeout: f64,
            ) -> ::pyo3::PyResult<Option<$NewGoal>> {
                use $crate::py_action_core::NewGoalBytes;
                let mut s = self.server()?;
                let s: &mut $RawServer = &mut s;
                let g = $crate::py_action_core::wait_next_goal(
                    py,
                    s,
                    timeout,
                    |s| s.next_goal(),
                    self.inner.closed_flag(),
                )?;
                Ok(g.map(|g| $NewGoal {
                    id: g.goal_id().0,
                    goal: g.goal_bytes(),
                    inner: ::std::sync::Mutex::new(Some(g)),
                }))
            }

            /// Accepts a goal (status "accepted"); returns its id.
            fn accept(&self, goal: &$NewGoal) -> ::pyo3::PyResult<u128> {
                let g = goal.take()?;
                Ok(self.server()?.accept(g).0)
            }

            /// Rejects a goal: the client's send_goal raises GoalRejectedError.
            fn reject(&self, goal: &$NewGoal) -> ::pyo3::PyResult<()> {
                let g = goal.take()?;
                self.server()?.reject(g);
                Ok(())
            }

            /// Moves an accepted goal to "executing".
            fn execute(&self, goal_id: u128) -> ::pyo3::PyResult<()> {
                self.server()?
                    .execute(::horus_actions::GoalId(goal_id))
                    .map_err(|e| $crate::action_errors::goal_error(&self.name, e))
            }

            /// Goals whose cancel was requested since the last call (each now
            /// "canceling": finish it with canceled, succeed or abort).
            fn take_cancel_requests(&self) -> ::pyo3::PyResult<Vec<u128>> {
                Ok(self
                    .server()?
                    .take_cancel_requests()
                    .into_iter()
                    .map(|i| i.0)
                    .collect())
            }

            /// The status of a goal this server keeps, or None.
            fn status(&self, goal_id: u128) -> ::pyo3::PyResult<Option<&'static str>> {
                Ok(self
                    .server()?
                    .status(::horus_actions::GoalId(goal_id))
                    .map($crate::action_errors::status_name))
            }

            /// Goals accepted and not finished.
            fn active_goals(&self) -> ::pyo3::PyResult<Vec<u128>> {
                Ok(self
                    .server()?
                    .active_goals()
                    .into_iter()
                    .map(|i| i.0)
                    .collect())
            }

            #[doc = concat!("Finishes a goal as \"succeeded\" with `", stringify!($result), "`.")]
            fn succeed(&self, goal_id: u128, $result: &[u8]) -> ::pyo3::PyResult<()> {
                self.finish(goal_id, ::horus_actions::GoalStatus::Succeeded, $result)
            }

            #[doc = concat!("Finishes a goal as \"aborted\" with `", stringify!($result), "`.")]
            fn abort(&self, goal_id: u128, $result: &[u8]) -> ::pyo3::PyResult<()> {
                self.finish(goal_id, ::horus_actions::GoalStatus::Aborted, $result)
            }

            #[doc = concat!(
                "Finishes a \"canceling\" goal as \"canceled\" with `",
                stringify!($result),
                "`."
            )]
            fn canceled(&self, goal_id: u128, $result: &[u8]) -> ::pyo3::PyResult<()> {
                self.finish(goal_id, ::horus_actions::GoalStatus::Canceled, $result)
            }
        }

        $(#[$new_goal_doc])*
        #[::pyo3::pyclass(module = "horus._horus", frozen)]
        pub(crate) struct $NewGoal {
            id: u128,
            goal: Vec<u8>,
            inner: ::std::sync::Mutex<Option<$RawNewGoal>>,
        }

        impl $NewGoal {
            fn take(&self) -> ::pyo3::PyResult<$RawNewGoal> {
                $crate::endpoint::lock(&self.inner, "new goal")?
                    .take()
                    .ok_or_else(|| {
                        $crate::errors::ActionError::new_err(
                            "the goal was already accepted or rejected",
                        )
                    })
            }
        }

        #[::pyo3::pymethods]
        impl $NewGoal {
            /// The goal's id.
            #[getter]
            fn id(&self) -> u128 {
                self.id
            }

            /// The goal's bytes (a copy).
            #[getter]
            fn data<'py>(
                &self,
                py: ::pyo3::Python<'py>,
            ) -> ::pyo3::Bound<'py, ::pyo3::types::PyBytes> {
                ::pyo3::types::PyBytes::new(py, &self.goal)
            }
        }
    };
}

pub(crate) use action_classes;
