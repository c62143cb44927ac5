//! The calling end of a ROS-typed action, on bytes (see [`RawRosActionServer`](super::RawRosActionServer)).

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use horus::inspect::RawRosReader;
use horus::msgs::Ros2Type;
use horus::RawClient;
use horus_cdr::{decode_message, encode_message};
use horus_ros_msgs::action_msgs::msg::{GoalInfo, GoalStatusArray};
use horus_ros_msgs::action_msgs::srv::{CancelGoal_Request, CancelGoal_Response};
use horus_ros_msgs::unique_identifier_msgs::msg::UUID;

use super::error::{RosActionError, RosOpenError};
use super::frames;
use super::owned::Owned;
use super::server::topic;
use super::types::{self, RosActionTypes};
use crate::client::FEEDBACK_KEPT;
use crate::error::ActionError;
use crate::wire::{GoalId, GoalStatus};

/// Most topic messages read per pump (bounds a hostile publisher).
const PUMP_MAX: usize = 1024;

/// Messages of the action's topics that were not what their type says (skipped).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TopicMalformed {
    /// Feedback messages without a goal id.
    pub feedback: u64,
    /// Status messages that are not a `GoalStatusArray`.
    pub status: u64,
}

struct Tracked {
    status: GoalStatus,
    feedback: VecDeque<Vec<u8>>,
}

/// One of the action's services: opened when first called (the server creates it).
struct Svc {
    name: String,
    types: (Ros2Type, Ros2Type),
    client: Option<RawClient>,
}

impl Svc {
    fn get(&mut self, ns: &str, action: &str) -> Result<&mut RawClient, ActionError> {
        if let Some(c) = self.client.take() {
            return Ok(self.client.insert(c));
        }
        // No such service yet (or not readable): no server has created it.
        let c = RawClient::open(ns, &self.name)
            .map_err(|_| ActionError::NoServer(action.to_owned()))?;
        let d = c.description();
        let is = |t: &Option<Ros2Type>, want: &Ros2Type| {
            t.as_ref()
                .is_some_and(|t| t.type_name == want.type_name && t.type_hash == want.type_hash)
        };
        if !is(&d.request.ros2, &self.types.0) || !is(&d.response.ros2, &self.types.1) {
            return Err(ActionError::WrongType);
        }
        Ok(self.client.insert(c))
    }
}

struct Shared {
    name: String,
    ns: String,
    send_goal: Svc,
    cancel: Svc,
    get_result: Svc,
    feedback: Owned<RawRosReader>,
    status: Owned<RawRosReader>,
    goals: HashMap<GoalId, Tracked>,
    malformed: TopicMalformed,
}

impl Shared {
    fn pump(&mut self) {
        for _ in 0..PUMP_MAX {
            let Some(m) = self.status.try_recv() else {
                break;
            };
            let Ok(a) = decode_message::<GoalStatusArray>(m.cdr()) else {
                self.malformed.status += 1;
                continue;
            };
            for s in a.status_list {
                let id = frames::goal_id(s.goal_info.goal_id.uuid);
                let (Some(t), Some(s)) = (self.goals.get_mut(&id), status_of(s.status)) else {
                    continue;
                };
                // Never step back from a final status (messages may be lost or late).
                if !t.status.is_terminal() {
                    t.status = s;
                }
            }
        }
        for _ in 0..PUMP_MAX {
            let Some(m) = self.feedback.try_recv() else {
                break;
            };
            let Ok((id, f)) = frames::split_id(m.cdr()) else {
                self.malformed.feedback += 1;
                continue;
            };
            let Some(t) = self.goals.get_mut(&id) else {
                continue;
            };
            if t.feedback.len() == FEEDBACK_KEPT {
                t.feedback.pop_front();
            }
            t.feedback.push_back(f);
        }
    }

    /// Calls one of the services with wire bytes `req`; returns the response's wire bytes.
    fn call(
        sh: &Mutex<Shared>,
        which: fn(&mut Shared) -> &mut Svc,
        req: &[u8],
        timeout: Duration,
    ) -> Result<Vec<u8>, ActionError> {
        let mut g = lock(sh);
        let (ns, name) = (g.ns.clone(), g.name.clone());
        // The RawClient is taken out while the call waits: other handles stay usable.
        let svc = which(&mut g);
        svc.get(&ns, &name)?;
        let Some(mut client) = svc.client.take() else {
            return Err(ActionError::NoServer(name));
        };
        drop(g);
        let r = client.call(&frames::record(req), timeout);
        let mut g = lock(sh);
        let svc = which(&mut g);
        if svc.client.is_none() {
            svc.client = Some(client);
        }
        drop(g);
        let resp = r.map_err(|e| ActionError::from_call(e, &name))?;
        frames::wire(&resp)
            .map(<[u8]>::to_vec)
            .ok_or(ActionError::Malformed)
    }
}

impl Drop for Shared {
    /// Services this client never called are joined and left once, so that a service
    /// whose server was killed is reclaimed and unlinked as the called ones are when their
    /// client goes (else a killed server's `cancel_goal` stays in shared memory).
    fn drop(&mut self) {
        for svc in [&self.send_goal, &self.cancel, &self.get_result] {
            if svc.client.is_none() {
                drop(RawClient::open(&self.ns, &svc.name));
            }
        }
    }
}

fn lock(m: &Mutex<Shared>) -> MutexGuard<'_, Shared> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// A ROS 2 status code as a status (`None`: unknown or not a status).
pub(crate) fn status_of(code: i8) -> Option<GoalStatus> {
    u32::try_from(code).ok().and_then(GoalStatus::from_code)
}

/// Sends goals to a ROS-typed action on bytes and follows them.
pub struct RawRosActionClient {
    shared: Arc<Mutex<Shared>>,
    token: u64,
    next: u64,
}

impl RawRosActionClient {
    /// Opens action `name` in namespace `ns` (default: the process's) with the action's
    /// `types`. The feedback and status topics are subscribed now (nothing of a goal sent
    /// later is missed); the services are opened on first use (a server need not run yet).
    pub fn open(
        name: &str,
        ns: Option<&str>,
        types: &RosActionTypes,
    ) -> Result<Self, RosOpenError> {
        let ns = ns.map_or_else(horus::namespace, str::to_owned);
        let ep = |w: &str| types::endpoint(name, w);
        let svc = |w: &str, req: &Ros2Type, resp: &Ros2Type| Svc {
            name: ep(w),
            types: (req.clone(), resp.clone()),
            client: None,
        };
        let shared = Shared {
            send_goal: svc(
                "send_goal",
                &types.send_goal_request,
                &types.send_goal_response,
            ),
            cancel: svc(
                "cancel_goal",
                &types::cancel_request(),
                &types::cancel_response(),
            ),
            get_result: svc(
                "get_result",
                &types.get_result_request,
                &types.get_result_response,
            ),
            feedback: Owned::new(topic(&ns, &ep("feedback"), &types.feedback_message)?, |v| {
                v.ros_subscriber(false)
            })?,
            status: Owned::new(topic(&ns, &ep("status"), &types::status_array())?, |v| {
                v.ros_subscriber(false)
            })?,
            name: name.to_owned(),
            ns,
            goals: HashMap::new(),
            malformed: TopicMalformed::default(),
        };
        Ok(RawRosActionClient {
            shared: Arc::new(Mutex::new(shared)),
            token: crate::client::client_token(),
            next: 1,
        })
    }

    /// Feedback and status messages skipped as malformed so far.
    pub fn malformed(&self) -> TopicMalformed {
        lock(&self.shared).malformed
    }

    /// Sends a goal (`Foo_Goal` wire bytes) and waits at most `timeout` for the server to
    /// accept it. Bytes that are not a CDR message are refused
    /// ([`RosActionError::Decode`]) and nothing is sent.
    pub fn send_goal(
        &mut self,
        goal: &[u8],
        timeout: Duration,
    ) -> Result<RawRosGoalHandle, RosActionError> {
        let id = GoalId::from_parts(self.token, self.next);
        self.next += 1;
        let req = frames::with_id(id, goal).map_err(RosActionError::Decode)?;
        lock(&self.shared).goals.insert(
            id,
            Tracked {
                status: GoalStatus::Accepted,
                feedback: VecDeque::new(),
            },
        );
        let r = Shared::call(&self.shared, |s| &mut s.send_goal, &req, timeout)
            .and_then(|w| frames::read_accepted(&w).map_err(|_| ActionError::Malformed));
        match r {
            Ok(true) => Ok(RawRosGoalHandle {
                id,
                shared: Arc::clone(&self.shared),
            }),
            Ok(false) => {
                lock(&self.shared).goals.remove(&id);
                Err(ActionError::Rejected(id).into())
            }
            Err(e) => {
                lock(&self.shared).goals.remove(&id);
                Err(e.into())
            }
        }
    }

    /// A handle on goal `id` (sent by another handle): its result and cancel work;
    /// status and feedback follow from now on.
    pub fn handle(&self, id: GoalId) -> RawRosGoalHandle {
        lock(&self.shared).goals.entry(id).or_insert(Tracked {
            status: GoalStatus::Accepted,
            feedback: VecDeque::new(),
        });
        RawRosGoalHandle {
            id,
            shared: Arc::clone(&self.shared),
        }
    }
}

/// One goal sent by a [`RawRosActionClient`]. Dropping it stops following the goal.
pub struct RawRosGoalHandle {
    id: GoalId,
    shared: Arc<Mutex<Shared>>,
}

impl RawRosGoalHandle {
    /// The goal's id.
    pub fn id(&self) -> GoalId {
        self.id
    }

    /// The goal's latest known status (from the status topic; never blocks).
    pub fn status(&self) -> GoalStatus {
        let mut sh = lock(&self.shared);
        sh.pump();
        sh.goals
            .get(&self.id)
            .map_or(GoalStatus::Accepted, |t| t.status)
    }

    /// The oldest feedback not yet read (`Foo_Feedback` wire bytes, not checked), if any.
    pub fn feedback(&self) -> Option<Vec<u8>> {
        let mut sh = lock(&self.shared);
        sh.pump();
        sh.goals.get_mut(&self.id)?.feedback.pop_front()
    }

    /// Asks the server to cancel the goal; waits at most `timeout` for its answer.
    /// Returns `Canceling`, or the goal's final status if it had already finished.
    pub fn cancel(&self, timeout: Duration) -> Result<GoalStatus, RosActionError> {
        let deadline = Instant::now() + timeout;
        let req = CancelGoal_Request {
            goal_info: GoalInfo {
                goal_id: UUID {
                    uuid: frames::uuid(self.id),
                },
                stamp: Default::default(),
            },
        };
        let req = encode_message(&req).map_err(RosActionError::Encode)?;
        let w = Shared::call(&self.shared, |s| &mut s.cancel, &req, timeout)?;
        let r = decode_message::<CancelGoal_Response>(&w).map_err(RosActionError::Decode)?;
        match r.return_code {
            CancelGoal_Response::ERROR_NONE => {
                self.note(GoalStatus::Canceling);
                Ok(GoalStatus::Canceling)
            }
            CancelGoal_Response::ERROR_REJECTED => Err(RosActionError::CancelRejected),
            CancelGoal_Response::ERROR_UNKNOWN_GOAL_ID => {
                Err(ActionError::UnknownGoal(self.id).into())
            }
            CancelGoal_Response::ERROR_GOAL_TERMINATED => {
                let left = deadline.saturating_duration_since(Instant::now());
                let (s, _) = self.result(left)?;
                Ok(s)
            }
            _ => Err(ActionError::Malformed.into()),
        }
    }

    /// Waits at most `timeout` for the goal to finish; returns its final status and the
    /// server's `Foo_GetResult_Response` (wire bytes; its first body byte is the status,
    /// the result follows).
    pub fn result(&self, timeout: Duration) -> Result<(GoalStatus, Vec<u8>), RosActionError> {
        let deadline = Instant::now() + timeout;
        let req = frames::id_only(self.id);
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(ActionError::Timeout(timeout).into());
            }
            let w = match Shared::call(&self.shared, |s| &mut s.get_result, &req, left) {
                Err(ActionError::Timeout(_)) => return Err(ActionError::Timeout(timeout).into()),
                r => r?,
            };
            let code = frames::read_status(&w).map_err(RosActionError::Decode)?;
            match status_of(code) {
                None if code == 0 => return Err(ActionError::UnknownGoal(self.id).into()),
                None => return Err(ActionError::Malformed.into()),
                // The server let go of the call before the goal finished: ask again.
                Some(s) if !s.is_terminal() => continue,
                Some(s) => {
                    self.note(s);
                    return Ok((s, w));
                }
            }
        }
    }

    fn note(&self, s: GoalStatus) {
        if let Some(t) = lock(&self.shared).goals.get_mut(&self.id) {
            if !t.status.is_terminal() {
                t.status = s;
            }
        }
    }
}

impl Drop for RawRosGoalHandle {
    fn drop(&mut self) {
        lock(&self.shared).goals.remove(&self.id);
    }
}
