//! Python exceptions of actions, one per `horus_actions::ActionError` and
//! `GoalError` variant, and the mapping from them.

use pyo3::prelude::*;

use crate::errors::{
    ActionError, ActionNoServerError, ActionServerDiedError, ActionTimeoutError, ActionTypeError,
    GoalRejectedError, InvalidTransitionError, UnknownGoalError,
};

fn set<'py>(py: Python<'py>, err: &PyErr, k: &str, v: impl IntoPyObject<'py>) {
    // Setting an attribute on a fresh exception instance cannot fail.
    let _ = err.value(py).setattr(k, v);
}

/// Lower-case name of a goal status, as Python sees it.
pub(crate) fn status_name(s: horus_actions::GoalStatus) -> &'static str {
    use horus_actions::GoalStatus::*;
    match s {
        Accepted => "accepted",
        Executing => "executing",
        Canceling => "canceling",
        Succeeded => "succeeded",
        Canceled => "canceled",
        Aborted => "aborted",
    }
}

pub(crate) fn open_error(action: &str, e: horus_actions::OpenError) -> PyErr {
    let err = ActionError::new_err(format!("action {action:?}: {e}"));
    Python::attach(|py| set(py, &err, "action", action));
    err
}

pub(crate) fn action_error(action: &str, e: horus_actions::ActionError) -> PyErr {
    use horus_actions::ActionError as E;
    let msg = format!("action {action:?}: {e}");
    Python::attach(|py| {
        let err = match &e {
            E::NoServer(_) => ActionNoServerError::new_err(msg),
            E::ServerDied { pid } => {
                let err = ActionServerDiedError::new_err(msg);
                set(py, &err, "pid", *pid);
                err
            }
            E::Timeout(_) => ActionTimeoutError::new_err(msg),
            E::Rejected(id) => {
                let err = GoalRejectedError::new_err(msg);
                set(py, &err, "goal_id", id.0);
                err
            }
            E::UnknownGoal(id) => {
                let err = UnknownGoalError::new_err(msg);
                set(py, &err, "goal_id", id.0);
                err
            }
            E::WrongType => ActionTypeError::new_err(msg),
            E::Call(_) | E::Malformed => ActionError::new_err(msg),
        };
        set(py, &err, "action", action);
        err
    })
}

/// The server died between two result calls of one wait: what the caller
/// waited on is gone, as `ServerDied` (pid unknown).
pub(crate) fn server_gone(action: &str) -> PyErr {
    let err = ActionServerDiedError::new_err(format!(
        "action {action:?}: the action server went away while the result was awaited"
    ));
    Python::attach(|py| {
        set(py, &err, "pid", py.None());
        set(py, &err, "action", action);
    });
    err
}

pub(crate) fn goal_error(action: &str, e: horus_actions::GoalError) -> PyErr {
    use horus_actions::GoalError as E;
    let msg = format!("action {action:?}: {e}");
    Python::attach(|py| {
        let err = match &e {
            E::UnknownGoal(id) => {
                let err = UnknownGoalError::new_err(msg);
                set(py, &err, "goal_id", id.0);
                err
            }
            E::InvalidTransition { id, from, to } => {
                let err = InvalidTransitionError::new_err(msg);
                set(py, &err, "goal_id", id.0);
                set(py, &err, "from_status", status_name(*from));
                set(py, &err, "to_status", status_name(*to));
                err
            }
        };
        set(py, &err, "action", action);
        err
    })
}
