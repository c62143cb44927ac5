//! The serving end of a ROS-typed action, on bytes: goals, feedback and results are
//! ROS 2 wire bytes (encapsulation header and CDR body). [`RosActionServer`](super::RosActionServer)
//! encodes and decodes a generated action's types over it; bindings use it directly.

use std::time::Duration;

use horus::inspect::{self, RawRosPublisher};

use super::owned::Owned;
use horus::{RawRequest, RawServer, ServiceError};
use horus_cdr::{decode_message, encode_message, DecodeError};
use horus_ros_msgs::action_msgs::msg::{GoalInfo, GoalStatus as RosGoalStatus, GoalStatusArray};
use horus_ros_msgs::action_msgs::srv::{CancelGoal_Request, CancelGoal_Response};
use horus_ros_msgs::builtin_interfaces::msg::Time;
use horus_ros_msgs::unique_identifier_msgs::msg::UUID;

use super::error::{RosGoalError, RosOpenError};
use super::frames;
use super::types::{self, RosActionTypes};
use crate::error::GoalError;
use crate::goal_table::{GoalTable, ResultAnswer};
use crate::wire::{GoalId, GoalStatus};

/// Most goals listed in one status message (active goals first).
pub const MAX_STATUS_LIST: usize = 4096;

/// Largest CDR body of feedback and status messages (the topics' `max_tail_bytes`).
pub const TOPIC_MAX_BODY: usize = 1 << 20;

/// Depth of the feedback and status topics (as the fixed-layout actions'): a client that
/// reads feedback later than the server publishes it keeps the last 64 messages. Chunks
/// are committed as written, so small messages cost little of their 1 MiB bound.
pub const TOPIC_DEPTH: u32 = 64;

/// A goal a client sent, waiting for [`RawRosActionServer::accept`] or
/// [`RawRosActionServer::reject`]. Dropping it rejects the goal.
pub struct RawRosNewGoal {
    id: GoalId,
    goal: Vec<u8>,
    req: Option<RawRequest>,
}

impl RawRosNewGoal {
    /// The goal's id.
    pub fn id(&self) -> GoalId {
        self.id
    }
    /// The goal's wire bytes (`Foo_Goal`: encapsulation header and CDR body), not checked.
    pub fn goal_cdr(&self) -> &[u8] {
        &self.goal
    }
}

impl Drop for RawRosNewGoal {
    fn drop(&mut self) {
        if let Some(req) = self.req.take() {
            let _ = req.reply(&frames::record(&frames::send_goal_response(
                false,
                &Time::default(),
            )));
        }
    }
}

/// Requests and messages refused because their bytes were not what their type says.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MalformedCounts {
    /// `send_goal` requests (answered "not accepted").
    pub send_goal: u64,
    /// `cancel_goal` requests (answered `ERROR_REJECTED`).
    pub cancel_goal: u64,
    /// `get_result` requests (answered with status unknown).
    pub get_result: u64,
}

/// Serves a ROS-typed action on bytes. Same semantics as
/// [`ActionServer`](crate::ActionServer) (status model, cancel, result retention); the
/// services and topics are ROS 2's (`name/_action/send_goal`, …).
pub struct RawRosActionServer {
    name: String,
    send_goal: RawServer,
    cancel: RawServer,
    get_result: RawServer,
    feedback: Owned<RawRosPublisher>,
    status: Owned<RawRosPublisher>,
    /// A `GetResult` response with status unknown and the default result.
    unknown: Vec<u8>,
    /// Each goal's status, acceptance stamp and `GetResult` response record; result
    /// calls waiting.
    goals: GoalTable<Time, Vec<u8>, RawRequest>,
    malformed: MalformedCounts,
}

fn service(
    ns: &str,
    name: &str,
    req: horus::msgs::Ros2Type,
    resp: horus::msgs::Ros2Type,
) -> Result<RawServer, RosOpenError> {
    let description = horus::description::ServiceDescription::ros2(req, resp).map_err(|e| {
        ServiceError::Invalid {
            service: name.to_owned(),
            reason: e.to_string(),
        }
    })?;
    Ok(RawServer::create(ns, name, &description)?)
}

pub(crate) fn topic(
    ns: &str,
    name: &str,
    ty: &horus::msgs::Ros2Type,
) -> Result<inspect::TopicView, RosOpenError> {
    let mut qos = inspect::ros_qos(TOPIC_MAX_BODY);
    qos.depth = TOPIC_DEPTH;
    qos.chunks_per_publisher = 2 * TOPIC_DEPTH + 4;
    Ok(inspect::open_or_create_ros_topic(ns, name, ty, &qos)?)
}

impl RawRosActionServer {
    /// Serves action `name` in namespace `ns` (default: the process's) with the action's
    /// `types`. `default_result` is a `Foo_GetResult_Response` (wire bytes) holding the
    /// default result: result requests for goals the server does not know are answered
    /// with it (status `STATUS_UNKNOWN`), as ROS 2 does.
    pub fn new(
        name: &str,
        ns: Option<&str>,
        types: &RosActionTypes,
        default_result: &[u8],
    ) -> Result<Self, RosOpenError> {
        let ns = ns.map_or_else(horus::namespace, str::to_owned);
        frames::read_status(default_result).map_err(RosOpenError::DefaultResultNotCdr)?;
        let ep = |w: &str| types::endpoint(name, w);
        let send_goal = service(
            &ns,
            &ep("send_goal"),
            types.send_goal_request.clone(),
            types.send_goal_response.clone(),
        )?;
        let cancel = service(
            &ns,
            &ep("cancel_goal"),
            types::cancel_request(),
            types::cancel_response(),
        )?;
        let get_result = service(
            &ns,
            &ep("get_result"),
            types.get_result_request.clone(),
            types.get_result_response.clone(),
        )?;
        let feedback = Owned::new(
            topic(&ns, &ep("feedback"), &types.feedback_message)?,
            inspect::TopicView::ros_publisher,
        )?;
        let status = Owned::new(
            topic(&ns, &ep("status"), &types::status_array())?,
            inspect::TopicView::ros_publisher,
        )?;
        let mut unknown = default_result.to_vec();
        frames::set_status(&mut unknown, RosGoalStatus::STATUS_UNKNOWN);
        Ok(RawRosActionServer {
            name: name.to_owned(),
            send_goal,
            cancel,
            get_result,
            feedback,
            status,
            unknown,
            goals: GoalTable::new(),
            malformed: MalformedCounts::default(),
        })
    }

    /// The action's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// How long a finished goal's result stays available (default
    /// [`DEFAULT_RETENTION`](crate::DEFAULT_RETENTION)).
    pub fn set_result_retention(&mut self, retention: Duration) {
        self.goals.set_retention(retention);
    }

    /// Requests refused as malformed so far.
    pub fn malformed(&self) -> MalformedCounts {
        self.malformed
    }

    /// Whether a goal, cancel or result request is waiting.
    pub fn has_pending(&self) -> bool {
        self.send_goal.has_pending() || self.cancel.has_pending() || self.get_result.has_pending()
    }

    /// Answers cancel and result requests and drops expired results.
    pub fn poll(&mut self) {
        self.goals.expire();
        while let Some(req) = self.cancel.try_recv() {
            self.on_cancel(req);
        }
        while let Some(req) = self.get_result.try_recv() {
            self.on_get_result(req);
        }
    }

    /// The next goal sent by a client, if any (after [`poll`](Self::poll)). A request
    /// that is not a `Foo_SendGoal_Request` is answered "not accepted" and counted
    /// ([`malformed`](Self::malformed)); a goal with an id this server keeps is refused.
    pub fn next_goal(&mut self) -> Option<RawRosNewGoal> {
        self.poll();
        while let Some(req) = self.send_goal.try_recv() {
            let split = frames::wire(req.bytes()).ok_or(DecodeError::NoHeader(0));
            let (id, goal) = match split.and_then(frames::split_id) {
                Ok(x) => x,
                Err(_) => {
                    self.malformed.send_goal += 1;
                    drop(RawRosNewGoal {
                        id: GoalId(0),
                        goal: Vec::new(),
                        req: Some(req),
                    });
                    continue;
                }
            };
            let new = RawRosNewGoal {
                id,
                goal,
                req: Some(req),
            };
            if self.goals.contains(id) {
                continue; // dropped: refused
            }
            return Some(new);
        }
        None
    }

    /// Accepts a goal: its status becomes `Accepted`.
    pub fn accept(&mut self, mut goal: RawRosNewGoal) -> GoalId {
        let id = goal.id;
        let stamp = frames::now();
        self.goals.insert(id, stamp.clone());
        self.publish_status();
        if let Some(req) = goal.req.take() {
            let _ = req.reply(&frames::record(&frames::send_goal_response(true, &stamp)));
        }
        id
    }

    /// Rejects a goal: the client's `send_goal` fails with `Rejected`.
    pub fn reject(&mut self, goal: RawRosNewGoal) {
        drop(goal);
    }

    /// Moves an accepted goal to `Executing`.
    pub fn execute(&mut self, id: GoalId) -> Result<(), GoalError> {
        self.goals.execute(id)?;
        self.publish_status();
        Ok(())
    }

    /// Goals whose cancel was requested since the last call (each is now `Canceling`).
    pub fn take_cancel_requests(&mut self) -> Vec<GoalId> {
        self.poll();
        self.goals.take_cancels()
    }

    /// The status of a goal this server keeps.
    pub fn status(&self, id: GoalId) -> Option<GoalStatus> {
        self.goals.status(id)
    }

    /// Goals accepted and not finished.
    pub fn active_goals(&self) -> Vec<GoalId> {
        self.goals.active()
    }

    /// Publishes feedback (`Foo_Feedback` wire bytes) for an active goal, as a
    /// `Foo_FeedbackMessage`.
    pub fn publish_feedback(&mut self, id: GoalId, feedback: &[u8]) -> Result<(), RosGoalError> {
        self.goals.check_active(id)?;
        let m = frames::with_id(id, feedback).map_err(RosGoalError::NotCdr)?;
        self.feedback.send_cdr(&m)?;
        Ok(())
    }

    /// Finishes a goal as `to` (`Succeeded`, `Aborted`, or `Canceled` from `Canceling`)
    /// with `response`, a `Foo_GetResult_Response` (its status is set to `to`).
    pub fn finish(
        &mut self,
        id: GoalId,
        to: GoalStatus,
        response: &[u8],
    ) -> Result<(), RosGoalError> {
        self.goals.finish(id, to, || {
            frames::read_status(response).map_err(RosGoalError::NotCdr)?;
            let mut resp = response.to_vec();
            frames::set_status(&mut resp, status_code(to));
            Ok::<_, RosGoalError>(frames::record(&resp))
        })?;
        self.publish_status();
        self.goals.release_held(id, |req, resp| {
            let _ = req.reply(resp);
        });
        Ok(())
    }

    /// Publishes the status of every goal kept (active ones first, at most
    /// [`MAX_STATUS_LIST`]), as ROS 2 servers do on every change.
    fn publish_status(&mut self) {
        let mut list: Vec<_> = self.goals.iter().collect();
        list.sort_by_key(|(id, status, stamp)| {
            (status.is_terminal(), stamp.sec, stamp.nanosec, *id)
        });
        let status_list = list
            .into_iter()
            .take(MAX_STATUS_LIST)
            .map(|(id, status, stamp)| RosGoalStatus {
                goal_info: info_of(id, stamp),
                status: status_code(status),
            })
            .collect();
        if let Ok(bytes) = encode_message(&GoalStatusArray { status_list }) {
            // DropOldest topic: a slow client loses old statuses, never blocks us.
            let _ = self.status.send_cdr(&bytes);
        }
    }

    /// `action_msgs/srv/CancelGoal`, with ROS 2's policy: a zero id and zero stamp cancel
    /// every goal; a zero id and a stamp, every goal accepted at or before it; an id, that
    /// goal (and, with a stamp, every goal accepted at or before it).
    fn on_cancel(&mut self, req: RawRequest) {
        let reply = |req: RawRequest, r: CancelGoal_Response| {
            if let Ok(b) = encode_message(&r) {
                let _ = req.reply(&frames::record(&b));
            }
        };
        let decoded = frames::wire(req.bytes())
            .ok_or(DecodeError::NoHeader(0))
            .and_then(decode_message::<CancelGoal_Request>);
        let Ok(CancelGoal_Request { goal_info }) = decoded else {
            self.malformed.cancel_goal += 1;
            let r = CancelGoal_Response {
                return_code: CancelGoal_Response::ERROR_REJECTED,
                goals_canceling: Vec::new(),
            };
            return reply(req, r);
        };
        let id = frames::goal_id(goal_info.goal_id.uuid);
        let stamp = (goal_info.stamp.sec, goal_info.stamp.nanosec);
        let by_stamp = stamp != (0, 0);
        let mut code = CancelGoal_Response::ERROR_NONE;
        if id != GoalId(0) {
            match self.goals.status(id) {
                None if !by_stamp => code = CancelGoal_Response::ERROR_UNKNOWN_GOAL_ID,
                Some(s) if s.is_terminal() && !by_stamp => {
                    code = CancelGoal_Response::ERROR_GOAL_TERMINATED
                }
                _ => {}
            }
        }
        let picked = self.goals.cancel_where(|gid, accepted| {
            (id == GoalId(0) && !by_stamp)
                || gid == id
                || (by_stamp && (accepted.sec, accepted.nanosec) <= stamp)
        });
        if picked.changed {
            self.publish_status();
        }
        let canceling: Vec<_> = picked
            .goals
            .into_iter()
            .filter_map(|gid| Some(info_of(gid, self.goals.meta(gid)?)))
            .collect();
        if code == CancelGoal_Response::ERROR_NONE && canceling.is_empty() && id != GoalId(0) {
            code = CancelGoal_Response::ERROR_UNKNOWN_GOAL_ID;
        }
        reply(
            req,
            CancelGoal_Response {
                return_code: code,
                goals_canceling: canceling,
            },
        );
    }

    /// A result request: answered now if the goal finished (or is unknown: status
    /// unknown), else held until it does.
    fn on_get_result(&mut self, req: RawRequest) {
        let id = frames::wire(req.bytes())
            .ok_or(DecodeError::NoHeader(0))
            .and_then(frames::read_id);
        let Ok(id) = id else {
            self.malformed.get_result += 1;
            let _ = req.reply(&frames::record(&self.unknown));
            return;
        };
        let unknown = &self.unknown;
        self.goals.request_result(id, req, |req, a| {
            let _ = match a {
                ResultAnswer::Finished(resp) => req.reply(resp),
                ResultAnswer::Unknown => req.reply(&frames::record(unknown)),
                // Let go before the goal finished: its status now (the client asks again).
                ResultAnswer::Pending(s) => {
                    let mut pending = unknown.clone();
                    frames::set_status(&mut pending, status_code(s));
                    req.reply(&frames::record(&pending))
                }
            };
        });
    }
}

/// A goal's `GoalInfo` (its UUID and acceptance stamp).
fn info_of(id: GoalId, stamp: &Time) -> GoalInfo {
    GoalInfo {
        goal_id: UUID {
            uuid: frames::uuid(id),
        },
        stamp: stamp.clone(),
    }
}

/// The ROS 2 status code of a status (the same numbers as [`GoalStatus::code`]).
pub(crate) fn status_code(s: GoalStatus) -> i8 {
    s.code() as i8
}
