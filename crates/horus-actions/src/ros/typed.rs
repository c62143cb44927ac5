//! Servers and clients of a generated ROS 2 action (`horus_cdr::RosAction`): goals,
//! feedback and results are the action's own types, encoded as CDR.

use std::marker::PhantomData;
use std::time::Duration;

use horus_cdr::{
    decode_message, encode_message, CdrReader, CdrWriter, DecodeError, EncodeError, RosAction,
    RosMessage, ENCAPSULATION_CDR_LE,
};

use super::client::{RawRosActionClient, RawRosGoalHandle, TopicMalformed};
use super::error::{RosActionError, RosGoalError, RosOpenError};
use super::server::{MalformedCounts, RawRosActionServer, RawRosNewGoal};
use super::types::RosActionTypes;
use crate::error::GoalError;
use crate::wire::{GoalId, GoalStatus};

/// A `Foo_GetResult_Response { status, result }`'s wire bytes (written as the generated
/// type writes them, without needing it).
pub(crate) fn result_response<R: RosMessage>(
    status: i8,
    result: &R,
) -> Result<Vec<u8>, EncodeError> {
    let mut count = CdrWriter::counting();
    count.write(status)?;
    result.write_cdr(&mut count)?;
    let mut out = vec![0u8; 4 + count.finish()];
    out[..4].copy_from_slice(&ENCAPSULATION_CDR_LE);
    let mut w = CdrWriter::new(&mut out[4..]);
    w.write(status)?;
    result.write_cdr(&mut w)?;
    Ok(out)
}

/// The result of a `Foo_GetResult_Response`'s wire bytes.
pub(crate) fn read_result<R: RosMessage>(wire: &[u8]) -> Result<R, DecodeError> {
    let mut r = CdrReader::from_message(wire)?;
    let _status: i8 = r.read()?;
    R::read_cdr(&mut r)
}

/// A goal a client sent, decoded, waiting for [`RosActionServer::accept`] or
/// [`RosActionServer::reject`]. Dropping it rejects the goal.
pub struct RosNewGoal<A: RosAction> {
    raw: RawRosNewGoal,
    goal: A::Goal,
}

impl<A: RosAction> RosNewGoal<A> {
    /// The goal's id.
    pub fn id(&self) -> GoalId {
        self.raw.id()
    }
    /// The goal.
    pub fn goal(&self) -> &A::Goal {
        &self.goal
    }
}

/// Serves the generated ROS 2 action `A` (e.g. `tf2_msgs::action::LookupTransform`) on
/// ROS 2's services and topics: `name/_action/send_goal` (`A::SendGoal`),
/// `name/_action/cancel_goal` (`action_msgs/srv/CancelGoal`), `name/_action/get_result`
/// (`A::GetResult`), `name/_action/feedback` (`A::FeedbackMessage`) and
/// `name/_action/status` (`action_msgs/msg/GoalStatusArray`). Goals, feedback and results
/// are of any length (the topics' and services' tails; feedback and status up to
/// [`TOPIC_MAX_BODY`](super::TOPIC_MAX_BODY) bytes). Semantics as
/// [`ActionServer`](crate::ActionServer)'s: poll it from a tick.
pub struct RosActionServer<A: RosAction> {
    raw: RawRosActionServer,
    undecodable: u64,
    _a: PhantomData<fn() -> A>,
}

impl<A: RosAction> RosActionServer<A>
where
    A::Result: Default,
{
    /// Serves action `name` in the default namespace.
    pub fn new(name: &str) -> Result<Self, RosOpenError> {
        Self::open(name, None)
    }

    /// Serves action `name` in namespace `ns`.
    pub fn new_in(name: &str, ns: &str) -> Result<Self, RosOpenError> {
        Self::open(name, Some(ns))
    }

    fn open(name: &str, ns: Option<&str>) -> Result<Self, RosOpenError> {
        let default =
            result_response(0, &A::Result::default()).map_err(RosOpenError::DefaultResult)?;
        Ok(RosActionServer {
            raw: RawRosActionServer::new(name, ns, &RosActionTypes::of::<A>(), &default)?,
            undecodable: 0,
            _a: PhantomData,
        })
    }
}

impl<A: RosAction> RosActionServer<A> {
    /// The action's name.
    pub fn name(&self) -> &str {
        self.raw.name()
    }

    /// How long a finished goal's result stays available.
    pub fn set_result_retention(&mut self, retention: Duration) {
        self.raw.set_result_retention(retention);
    }

    /// Requests refused as malformed so far (bytes that are not their structure; goals
    /// whose bytes do not decode as `A::Goal` are in `send_goal`).
    pub fn malformed(&self) -> MalformedCounts {
        let mut m = self.raw.malformed();
        m.send_goal += self.undecodable;
        m
    }

    /// Whether a goal, cancel or result request is waiting.
    pub fn has_pending(&self) -> bool {
        self.raw.has_pending()
    }

    /// Answers cancel and result requests and drops expired results.
    pub fn poll(&mut self) {
        self.raw.poll();
    }

    /// The next goal sent by a client, decoded. A goal whose bytes are not an `A::Goal`
    /// is rejected and counted ([`malformed`](Self::malformed)), never a panic.
    pub fn next_goal(&mut self) -> Option<RosNewGoal<A>> {
        loop {
            let raw = self.raw.next_goal()?;
            match decode_message::<A::Goal>(raw.goal_cdr()) {
                Ok(goal) => return Some(RosNewGoal { raw, goal }),
                Err(_) => {
                    self.undecodable += 1;
                    self.raw.reject(raw);
                }
            }
        }
    }

    /// Accepts a goal: its status becomes `Accepted`.
    pub fn accept(&mut self, goal: RosNewGoal<A>) -> GoalId {
        self.raw.accept(goal.raw)
    }

    /// Rejects a goal: the client's `send_goal` fails with `Rejected`.
    pub fn reject(&mut self, goal: RosNewGoal<A>) {
        self.raw.reject(goal.raw);
    }

    /// Moves an accepted goal to `Executing`.
    pub fn execute(&mut self, id: GoalId) -> Result<(), GoalError> {
        self.raw.execute(id)
    }

    /// Goals whose cancel was requested since the last call (each is now `Canceling`).
    pub fn take_cancel_requests(&mut self) -> Vec<GoalId> {
        self.raw.take_cancel_requests()
    }

    /// The status of a goal this server keeps.
    pub fn status(&self, id: GoalId) -> Option<GoalStatus> {
        self.raw.status(id)
    }

    /// Goals accepted and not finished.
    pub fn active_goals(&self) -> Vec<GoalId> {
        self.raw.active_goals()
    }

    /// Publishes feedback for an active goal. Feedback that cannot be encoded is
    /// [`RosGoalError::Encode`]: nothing is sent.
    pub fn publish_feedback(
        &mut self,
        id: GoalId,
        feedback: &A::Feedback,
    ) -> Result<(), RosGoalError> {
        let f = encode_message(feedback).map_err(RosGoalError::Encode)?;
        self.raw.publish_feedback(id, &f)
    }

    /// Finishes a goal as `Succeeded` with `result`.
    pub fn succeed(&mut self, id: GoalId, result: &A::Result) -> Result<(), RosGoalError> {
        self.finish(id, GoalStatus::Succeeded, result)
    }

    /// Finishes a goal as `Aborted` with `result`.
    pub fn abort(&mut self, id: GoalId, result: &A::Result) -> Result<(), RosGoalError> {
        self.finish(id, GoalStatus::Aborted, result)
    }

    /// Finishes a `Canceling` goal as `Canceled` with `result`.
    pub fn canceled(&mut self, id: GoalId, result: &A::Result) -> Result<(), RosGoalError> {
        self.finish(id, GoalStatus::Canceled, result)
    }

    /// A result that cannot be encoded is [`RosGoalError::Encode`]: the goal's status is
    /// unchanged and nothing is sent.
    fn finish(
        &mut self,
        id: GoalId,
        to: GoalStatus,
        result: &A::Result,
    ) -> Result<(), RosGoalError> {
        let r = result_response(super::server::status_code(to), result)
            .map_err(RosGoalError::Encode)?;
        self.raw.finish(id, to, &r)
    }
}

/// Sends goals to the generated ROS 2 action `A` and follows them (see
/// [`RosActionServer`] for the services and topics).
pub struct RosActionClient<A: RosAction> {
    raw: RawRosActionClient,
    _a: PhantomData<fn() -> A>,
}

impl<A: RosAction> RosActionClient<A> {
    /// Opens action `name` in the default namespace.
    pub fn open(name: &str) -> Result<Self, RosOpenError> {
        Self::open_ns(name, None)
    }

    /// Opens action `name` in namespace `ns`.
    pub fn open_in(name: &str, ns: &str) -> Result<Self, RosOpenError> {
        Self::open_ns(name, Some(ns))
    }

    fn open_ns(name: &str, ns: Option<&str>) -> Result<Self, RosOpenError> {
        Ok(RosActionClient {
            raw: RawRosActionClient::open(name, ns, &RosActionTypes::of::<A>())?,
            _a: PhantomData,
        })
    }

    /// Feedback and status messages skipped as malformed so far.
    pub fn malformed(&self) -> TopicMalformed {
        self.raw.malformed()
    }

    /// Sends a goal and waits at most `timeout` for the server to accept it. A goal that
    /// cannot be encoded is [`RosActionError::Encode`]: nothing is sent.
    pub fn send_goal(
        &mut self,
        goal: &A::Goal,
        timeout: Duration,
    ) -> Result<RosGoalHandle<A>, RosActionError> {
        let g = encode_message(goal).map_err(RosActionError::Encode)?;
        Ok(RosGoalHandle {
            raw: self.raw.send_goal(&g, timeout)?,
            _a: PhantomData,
        })
    }

    /// A handle on goal `id` (sent by another handle).
    pub fn handle(&self, id: GoalId) -> RosGoalHandle<A> {
        RosGoalHandle {
            raw: self.raw.handle(id),
            _a: PhantomData,
        }
    }
}

/// One goal sent by a [`RosActionClient`]. Dropping it stops following the goal.
pub struct RosGoalHandle<A: RosAction> {
    raw: RawRosGoalHandle,
    _a: PhantomData<fn() -> A>,
}

impl<A: RosAction> RosGoalHandle<A> {
    /// The goal's id.
    pub fn id(&self) -> GoalId {
        self.raw.id()
    }

    /// The goal's latest known status (never blocks).
    pub fn status(&self) -> GoalStatus {
        self.raw.status()
    }

    /// The oldest feedback not yet read, if any (never blocks): `Some(Err(_))` for
    /// feedback whose bytes are not an `A::Feedback` (it is consumed; the next is read
    /// by the next call).
    pub fn feedback(&self) -> Option<Result<A::Feedback, DecodeError>> {
        self.raw
            .feedback()
            .map(|f| decode_message::<A::Feedback>(&f))
    }

    /// Asks the server to cancel the goal; waits at most `timeout` for its answer.
    /// Returns `Canceling`, or the goal's final status if it had already finished. A
    /// `cancel_goal` service nobody serves yet is waited for within `timeout`.
    pub fn cancel(&self, timeout: Duration) -> Result<GoalStatus, RosActionError> {
        self.raw.cancel(timeout)
    }

    /// Waits at most `timeout` for the goal to finish; returns its final status and
    /// result. A result whose bytes are not an `A::Result` is [`RosActionError::Decode`].
    pub fn result(&self, timeout: Duration) -> Result<(GoalStatus, A::Result), RosActionError> {
        let (s, w) = self.raw.result(timeout)?;
        let r = read_result::<A::Result>(&w).map_err(RosActionError::Decode)?;
        Ok((s, r))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use horus_ros_msgs::tf2_msgs::action::{
        LookupTransform_GetResult_Response, LookupTransform_Result,
    };

    #[test]
    fn a_result_response_is_the_generated_get_result_response() {
        let mut result = LookupTransform_Result::default();
        result.transform.child_frame_id = "tool0".into();
        result.error.error_string = "none".into();
        let want = LookupTransform_GetResult_Response {
            status: 4,
            result: result.clone(),
        };
        let bytes = result_response(4, &result).unwrap();
        assert_eq!(bytes, encode_message(&want).unwrap());
        assert_eq!(
            read_result::<LookupTransform_Result>(&bytes).unwrap(),
            result
        );
        assert!(read_result::<LookupTransform_Result>(&bytes[..bytes.len() - 1]).is_err());
    }
}
