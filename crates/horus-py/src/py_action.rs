//! `ActionClient`, `GoalHandle`, `ActionServer` and `NewGoal`, as seen
//! from Python, over `horus_actions` with raw payloads: goal, feedback and
//! result are fixed-size standard messages named at run time
//! ([`crate::dyn_service::raw_spec`]) and cross as the bytes of their
//! fixed part, so one instantiation serves every type triple and a Python
//! end meets a typed Rust end of the same types.
//!
//! The classes are written by [`action_classes!`] (shared with the ROS-typed
//! actions, `py_ros_action.rs`); this file gives what is this flavour's own: the
//! constructors, the checks of goal, feedback and result lengths, and finishing a
//! goal with a result message. Blocking waits: see [`crate::py_action_core`].

use horus_actions::{GoalId, GoalStatus, RawPayload, RawSpec};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

use crate::action_errors::{goal_error, open_error};
use crate::py_action_core::{action_classes, NewGoalBytes};

type RawClient = horus_actions::ActionClient<RawPayload, RawPayload, RawPayload>;
type RawHandle = horus_actions::GoalHandle<RawPayload, RawPayload>;
type RawServer = horus_actions::ActionServer<RawPayload, RawPayload, RawPayload>;
type RawNewGoal = horus_actions::NewGoal<RawPayload>;

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

action_classes! {
    /// Sends goals to an action and follows them.
    client ActionClient over RawClient { goal: RawSpec }
    with {
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
                inner: crate::endpoint::Endpoint::new(c, "action client"),
            })
        }
    }

    /// One goal sent by an ActionClient.
    handle GoalHandle over RawHandle;

    /// Serves an action. Poll it from a tick (`next_goal`, `poll`), or wait in
    /// `next_goal(timeout)`. One server per action. Goals finish with a `result`: the
    /// bytes of one result message.
    server ActionServer over RawServer { specs: (RawSpec, RawSpec, RawSpec) }
    finished with result;
    with {
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
            let mut server =
                RawServer::new_raw(name, namespace, s).map_err(|e| open_error(name, e))?;
            if let Some(r) = result_retention {
                server.set_result_retention(crate::seconds::duration("result_retention", r)?);
            }
            Ok(ActionServer {
                name: name.to_owned(),
                specs: s,
                inner: crate::endpoint::Endpoint::new(server, "action server"),
            })
        }

        /// Publishes feedback (the bytes of one feedback message) for an active goal.
        fn publish_feedback(&self, goal_id: u128, feedback: &[u8]) -> PyResult<()> {
            let f = check_len(&self.name, "feedback", &self.specs.1, feedback)?;
            self.server()?
                .publish_feedback(GoalId(goal_id), &f)
                .map_err(|e| goal_error(&self.name, e))
        }
    }

    /// A goal waiting for ActionServer.accept or reject. Dropping it unanswered
    /// refuses the goal.
    new_goal NewGoal over RawNewGoal;
}

impl ActionClient {
    /// What `send_goal` sends: exactly the bytes of one goal message.
    fn goal_payload(&self, goal: &[u8]) -> PyResult<RawPayload> {
        check_len(&self.name, "goal", &self.goal, goal)
    }
}

impl ActionServer {
    /// Finishes a goal as `to` with `result` (exactly the bytes of one result message).
    fn finish(&self, goal_id: u128, to: GoalStatus, result: &[u8]) -> PyResult<()> {
        let r = check_len(&self.name, "result", &self.specs.2, result)?;
        self.server()?
            .finish(GoalId(goal_id), to, &r)
            .map_err(|e| goal_error(&self.name, e))
    }
}

impl NewGoalBytes for RawNewGoal {
    fn goal_id(&self) -> GoalId {
        self.id()
    }
    fn goal_bytes(&self) -> Vec<u8> {
        self.goal().0.clone()
    }
}
