//! `RosActionClient`, `RosGoalHandle`, `RosActionServer` and `RosNewGoal`, as seen from
//! Python: actions of ROS 2 types (`horus.interfaces` action classes) over
//! `horus_actions::ros`'s raw endpoints. Goals, feedback and results cross as ROS 2 wire
//! bytes; `python/horus/_ros_action.py` encodes and decodes them with the classes, so a
//! Python end meets a Rust `RosActionServer<A>` / `RosActionClient<A>` of the same action.
//!
//! The classes are written by [`action_classes!`] (shared with the fixed-layout actions,
//! `py_action.rs`); this file gives what is this flavour's own: the constructors (the
//! action's ROS 2 types), the malformed counts, the errors of ROS-typed endpoints, and
//! finishing a goal with a `Foo_GetResult_Response`. Blocking waits: see
//! [`crate::py_action_core`].

use horus::msgs::Ros2Type;
use horus_actions::ros::{
    RawRosActionClient, RawRosActionServer, RawRosGoalHandle, RawRosNewGoal, RosActionError,
    RosActionTypes, RosGoalError, RosOpenError,
};
use horus_actions::{ActionError as RustActionError, GoalId, GoalStatus};
use pyo3::prelude::*;

use crate::action_errors::{action_error, goal_error};
use crate::errors::ActionError;
use crate::py_action_core::{action_classes, ClientError, NewGoalBytes};

/// One ROS 2 type as Python gives it: (type name, RIHS01 hash, ros2msg definition).
type TypeTriple = (String, String, String);

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

/// An error of a ROS-typed endpoint that is not one of the fixed-layout actions': an
/// `ActionError` naming the action.
fn ros_error(action: &str, e: impl std::fmt::Display) -> PyErr {
    with_action(
        action,
        ActionError::new_err(format!("action {action:?}: {e}")),
    )
}

/// An error opening a ROS-typed endpoint; another type under one of the action's names is
/// `ActionTypeError`, as it is at a call (`WrongType`).
fn open_error(action: &str, e: RosOpenError) -> PyErr {
    match e {
        RosOpenError::Service(horus::ServiceError::SchemaMismatch { .. }) => with_action(
            action,
            crate::errors::ActionTypeError::new_err(format!("action {action:?}: {e}")),
        ),
        e => ros_error(action, e),
    }
}

fn ros_action_error(action: &str, e: RosActionError) -> PyErr {
    match e {
        RosActionError::Action(e) => action_error(action, e),
        e => ros_error(action, e),
    }
}

fn ros_goal_error(action: &str, e: RosGoalError) -> PyErr {
    match e {
        RosGoalError::Goal(e) => goal_error(action, e),
        e => ros_error(action, e),
    }
}

action_classes! {
    /// Sends goals to a ROS-typed action and follows them.
    client RosActionClient over RawRosActionClient {}
    with {
        #[new]
        #[pyo3(signature = (types, name, *, namespace=None))]
        fn new(types: [TypeTriple; 5], name: &str, namespace: Option<&str>) -> PyResult<Self> {
            let c = RawRosActionClient::open(name, namespace, &self::types(types))
                .map_err(|e| open_error(name, e))?;
            Ok(RosActionClient {
                name: name.to_owned(),
                inner: crate::endpoint::Endpoint::new(c, "action client"),
            })
        }

        /// Feedback and status messages skipped as malformed: (feedback, status).
        fn malformed(&self) -> PyResult<(u64, u64)> {
            let m = self.inner.lock()?.malformed();
            Ok((m.feedback, m.status))
        }
    }

    /// One goal sent by a RosActionClient (its id is its UUID, big-endian; feedback is
    /// `Foo_Feedback` wire bytes, the result a `Foo_GetResult_Response`'s).
    handle RosGoalHandle over RawRosGoalHandle;

    /// Serves a ROS-typed action. Poll it from a tick (`next_goal`, `poll`). Goals finish
    /// with a `response`: a `Foo_GetResult_Response`'s wire bytes (its status is set
    /// here).
    server RosActionServer over RawRosActionServer {}
    finished with response;
    with {
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
                server.set_result_retention(crate::seconds::duration("result_retention", r)?);
            }
            Ok(RosActionServer {
                name: name.to_owned(),
                inner: crate::endpoint::Endpoint::new(server, "action server"),
            })
        }

        /// Requests refused as malformed: (send_goal, cancel_goal, get_result).
        fn malformed(&self) -> PyResult<(u64, u64, u64)> {
            let m = self.server()?.malformed();
            Ok((m.send_goal, m.cancel_goal, m.get_result))
        }

        /// Publishes feedback (wire bytes of one `Foo_Feedback`) for an active goal.
        fn publish_feedback(&self, goal_id: u128, feedback: &[u8]) -> PyResult<()> {
            self.server()?
                .publish_feedback(GoalId(goal_id), feedback)
                .map_err(|e| ros_goal_error(&self.name, e))
        }
    }

    /// A goal waiting for RosActionServer.accept or reject (its bytes are a `Foo_Goal`'s,
    /// not checked: decode them). Dropping it unanswered refuses it.
    new_goal RosNewGoal over RawRosNewGoal;
}

impl RosActionClient {
    /// What `send_goal` sends: the goal's wire bytes as given (the client checks them).
    fn goal_payload<'a>(&self, goal: &'a [u8]) -> PyResult<&'a [u8]> {
        Ok(goal)
    }
}

impl RosActionServer {
    /// Finishes a goal as `to` with `response` (a `Foo_GetResult_Response`'s wire bytes).
    fn finish(&self, goal_id: u128, to: GoalStatus, response: &[u8]) -> PyResult<()> {
        self.server()?
            .finish(GoalId(goal_id), to, response)
            .map_err(|e| ros_goal_error(&self.name, e))
    }
}

impl ClientError for RosActionError {
    fn as_action(&self) -> Option<&RustActionError> {
        match self {
            RosActionError::Action(e) => Some(e),
            _ => None,
        }
    }
    fn into_py(self, action: &str) -> PyErr {
        ros_action_error(action, self)
    }
}

impl NewGoalBytes for RawRosNewGoal {
    fn goal_id(&self) -> GoalId {
        self.id()
    }
    fn goal_bytes(&self) -> Vec<u8> {
        self.goal_cdr().to_vec()
    }
}
