//! The calling end of a ROS-typed action, on bytes (see [`RawRosActionServer`](super::RawRosActionServer)).

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use horus::inspect::RawRosReader;
use horus::msgs::Ros2Type;
use horus::{RawClient, ServiceError};
use horus_cdr::{decode_message, encode_message};
use horus_ros_msgs::action_msgs::msg::{GoalInfo, GoalStatusArray};
use horus_ros_msgs::action_msgs::srv::{CancelGoal_Request, CancelGoal_Response};
use horus_ros_msgs::unique_identifier_msgs::msg::UUID;

use super::error::{RosActionError, RosOpenError};
use super::frames;
use super::owned::Owned;
use super::server::topic;
use super::types::{self, RosActionTypes};
use crate::client_goals::{lock, ClientGoals, Followed, Follows, GoalIds, PUMP_MAX};
use crate::error::ActionError;
use crate::wire::{GoalId, GoalStatus};

/// How often a result waits again for a `get_result` service nobody serves yet.
const NO_SERVER_POLL: Duration = Duration::from_millis(10);

/// Messages of the action's topics that were not what their type says (skipped).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TopicMalformed {
    /// Feedback messages without a goal id.
    pub feedback: u64,
    /// Status messages that are not a `GoalStatusArray`.
    pub status: u64,
}

/// One of the action's services: opened, or created with its ROS 2 types, when the client
/// opens (so that the ROS 2 bridge can learn the types of a ROS 2 server's action and
/// serve it, as for a typed service's client); opened again on a call if that failed.
struct Svc {
    name: String,
    types: (Ros2Type, Ros2Type),
    client: Option<RawClient>,
}

impl Svc {
    fn new(name: String, req: &Ros2Type, resp: &Ros2Type) -> Svc {
        Svc {
            name,
            types: (req.clone(), resp.clone()),
            client: None,
        }
    }

    /// Its client, opened (or the service created) now if it is not yet.
    fn connect(&mut self, ns: &str) -> Result<&mut RawClient, ServiceError> {
        if let Some(c) = self.client.take() {
            return Ok(self.client.insert(c));
        }
        let c = RawClient::create_ros(ns, &self.name, &self.types.0, &self.types.1)?;
        Ok(self.client.insert(c))
    }

    /// Its client for a call of `action`.
    fn get(&mut self, ns: &str, action: &str) -> Result<&mut RawClient, ActionError> {
        match self.connect(ns) {
            Ok(c) => Ok(c),
            Err(ServiceError::SchemaMismatch { .. }) => Err(ActionError::WrongType),
            // Not readable, or no room: as before, no server to call.
            Err(_) => Err(ActionError::NoServer(action.to_owned())),
        }
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
    /// Followed goals; feedback kept as `Foo_Feedback` wire bytes.
    goals: ClientGoals<Vec<u8>>,
    malformed: TopicMalformed,
}

impl Follows for Shared {
    type Feedback = Vec<u8>;

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
                if let Some(s) = status_of(s.status) {
                    self.goals.note(id, s);
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
            self.goals.push_feedback(id, f);
        }
    }

    fn goals(&mut self) -> &mut ClientGoals<Vec<u8>> {
        &mut self.goals
    }
}

impl Shared {
    /// Calls one of the services with wire bytes `req`; returns the response's wire bytes.
    /// `stop`: see [`RawClient::call_or_stop`].
    fn call(
        sh: &Mutex<Shared>,
        which: fn(&mut Shared) -> &mut Svc,
        req: &[u8],
        timeout: Duration,
        stop: &dyn Fn() -> bool,
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
        let r = client.call_or_stop(&frames::record(req), timeout, stop);
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

    /// [`Shared::call`] for a goal the server already accepted: a service nobody serves yet
    /// is waited for within `timeout` (the ROS 2 bridge serves a ROS 2 server's three action
    /// services each as it matches it, so `cancel_goal` or `get_result` can come a moment
    /// after `send_goal` answered). Still unserved at the deadline: `NoServer`; a call that
    /// reached a server and ran out of time: `Timeout(timeout)`.
    fn call_accepted(
        sh: &Mutex<Shared>,
        which: fn(&mut Shared) -> &mut Svc,
        req: &[u8],
        deadline: Instant,
        timeout: Duration,
        stop: &dyn Fn() -> bool,
    ) -> Result<Vec<u8>, ActionError> {
        let mut no_server = None;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(no_server.unwrap_or(ActionError::Timeout(timeout)));
            }
            match Shared::call(sh, which, req, left, stop) {
                Err(ActionError::Timeout(_)) => return Err(ActionError::Timeout(timeout)),
                // Stopped while nobody served it yet: withdrawn as a call would be.
                Err(ActionError::NoServer(_)) if stop() => {
                    return Err(ActionError::Call(horus::CallError::Stopped))
                }
                Err(e @ ActionError::NoServer(_)) => {
                    no_server = Some(e);
                    std::thread::sleep(left.min(NO_SERVER_POLL));
                }
                r => return r,
            }
        }
    }
}

impl Drop for Shared {
    /// Services this client could not open (each is opened when the client opens, or at
    /// a call after) are joined and left once, so that a service whose server was killed
    /// is reclaimed and unlinked as the opened ones are when their client goes (else a
    /// killed server's `cancel_goal` stays in shared memory).
    fn drop(&mut self) {
        for svc in [&self.send_goal, &self.cancel, &self.get_result] {
            if svc.client.is_none() {
                drop(RawClient::open(&self.ns, &svc.name));
            }
        }
    }
}

/// A ROS 2 status code as a status (`None`: unknown or not a status).
pub(crate) fn status_of(code: i8) -> Option<GoalStatus> {
    u32::try_from(code).ok().and_then(GoalStatus::from_code)
}

/// Sends goals to a ROS-typed action on bytes and follows them.
pub struct RawRosActionClient {
    shared: Arc<Mutex<Shared>>,
    ids: GoalIds,
}

impl RawRosActionClient {
    /// Opens action `name` in namespace `ns` (default: the process's) with the action's
    /// `types`. The feedback and status topics are subscribed now (nothing of a goal sent
    /// later is missed), and the services opened, each created with its ROS 2 types if no
    /// server made it yet (a server need not run yet; the ROS 2 bridge learns a ROS 2
    /// server's action types from them). An existing service of other types is
    /// [`RosOpenError::Service`]; one that cannot be made now is tried again on first use.
    pub fn open(
        name: &str,
        ns: Option<&str>,
        types: &RosActionTypes,
    ) -> Result<Self, RosOpenError> {
        let ns = ns.map_or_else(horus::namespace, str::to_owned);
        let ep = |w: &str| types::endpoint(name, w);
        let mut shared = Shared {
            send_goal: Svc::new(
                ep("send_goal"),
                &types.send_goal_request,
                &types.send_goal_response,
            ),
            cancel: Svc::new(
                ep("cancel_goal"),
                &types::cancel_request(),
                &types::cancel_response(),
            ),
            get_result: Svc::new(
                ep("get_result"),
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
            goals: ClientGoals::new(),
            malformed: TopicMalformed::default(),
        };
        // The services now, each created with its types if no server made it yet: a ROS 2
        // server's action is served in horus by the bridge only once it knows the types.
        // Another type there is refused now; a service that cannot be made now is tried
        // again by the first call that needs it.
        let ns = shared.ns.clone();
        for svc in [
            &mut shared.send_goal,
            &mut shared.cancel,
            &mut shared.get_result,
        ] {
            if let Err(e @ ServiceError::SchemaMismatch { .. }) = svc.connect(&ns) {
                return Err(e.into());
            }
        }
        Ok(RawRosActionClient {
            shared: Arc::new(Mutex::new(shared)),
            ids: GoalIds::new(),
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
        self.send_goal_or_stop(goal, timeout, || false)
    }

    /// [`RawRosActionClient::send_goal`], asking `stop` every few milliseconds while it
    /// waits; once `stop` says so, the call is withdrawn:
    /// `ActionError::Call(CallError::Stopped)`. For a binding whose `close()` from another
    /// thread must end a call in progress.
    pub fn send_goal_or_stop(
        &mut self,
        goal: &[u8],
        timeout: Duration,
        stop: impl Fn() -> bool,
    ) -> Result<RawRosGoalHandle, RosActionError> {
        let id = self.ids.next_id();
        let req = frames::with_id(id, goal).map_err(RosActionError::Decode)?;
        // Followed before the call; dropped (unfollowed) if the goal is not accepted.
        let goal = Followed::new_goal(&self.shared, id);
        let accepted = Shared::call(&self.shared, |s| &mut s.send_goal, &req, timeout, &stop)
            .and_then(|w| frames::read_accepted(&w).map_err(|_| ActionError::Malformed))?;
        if !accepted {
            return Err(ActionError::Rejected(id).into());
        }
        Ok(RawRosGoalHandle { goal })
    }

    /// A handle on goal `id` (sent by another handle): its result and cancel work;
    /// status and feedback follow from now on.
    pub fn handle(&self, id: GoalId) -> RawRosGoalHandle {
        RawRosGoalHandle {
            goal: Followed::existing(&self.shared, id),
        }
    }
}

/// One goal sent by a [`RawRosActionClient`]. Dropping it stops following the goal.
pub struct RawRosGoalHandle {
    goal: Followed<Shared>,
}

impl RawRosGoalHandle {
    /// The goal's id.
    pub fn id(&self) -> GoalId {
        self.goal.id()
    }

    /// The goal's latest known status (from the status topic; never blocks).
    pub fn status(&self) -> GoalStatus {
        self.goal.status()
    }

    /// The oldest feedback not yet read (`Foo_Feedback` wire bytes, not checked), if any.
    pub fn feedback(&self) -> Option<Vec<u8>> {
        self.goal.feedback()
    }

    /// Asks the server to cancel the goal; waits at most `timeout` for its answer.
    /// Returns `Canceling`, or the goal's final status if it had already finished. A
    /// `cancel_goal` service nobody serves yet is waited for within `timeout`, as in
    /// [`RawRosGoalHandle::result`]; still unserved at the deadline, the answer is `NoServer`.
    pub fn cancel(&self, timeout: Duration) -> Result<GoalStatus, RosActionError> {
        self.cancel_or_stop(timeout, || false)
    }

    /// [`RawRosGoalHandle::cancel`], asking `stop` every few milliseconds while it waits;
    /// once `stop` says so, the call is withdrawn: `ActionError::Call(CallError::Stopped)`.
    /// For a binding whose `close()` from another thread must end a call in progress.
    pub fn cancel_or_stop(
        &self,
        timeout: Duration,
        stop: impl Fn() -> bool,
    ) -> Result<GoalStatus, RosActionError> {
        let deadline = Instant::now() + timeout;
        let req = CancelGoal_Request {
            goal_info: GoalInfo {
                goal_id: UUID {
                    uuid: frames::uuid(self.id()),
                },
                stamp: Default::default(),
            },
        };
        let req = encode_message(&req).map_err(RosActionError::Encode)?;
        let w = Shared::call_accepted(
            self.goal.shared(),
            |s| &mut s.cancel,
            &req,
            deadline,
            timeout,
            &stop,
        )?;
        let r = decode_message::<CancelGoal_Response>(&w).map_err(RosActionError::Decode)?;
        match r.return_code {
            CancelGoal_Response::ERROR_NONE => {
                self.goal.note(GoalStatus::Canceling);
                Ok(GoalStatus::Canceling)
            }
            CancelGoal_Response::ERROR_REJECTED => Err(RosActionError::CancelRejected),
            CancelGoal_Response::ERROR_UNKNOWN_GOAL_ID => {
                Err(ActionError::UnknownGoal(self.id()).into())
            }
            CancelGoal_Response::ERROR_GOAL_TERMINATED => {
                let left = deadline.saturating_duration_since(Instant::now());
                let (s, _) = self.result_or_stop(left, &stop)?;
                Ok(s)
            }
            _ => Err(ActionError::Malformed.into()),
        }
    }

    /// Waits at most `timeout` for the goal to finish; returns its final status and the
    /// server's `Foo_GetResult_Response` (wire bytes; its first body byte is the status,
    /// the result follows). A `get_result` service nobody serves yet is waited for within
    /// `timeout` (the ROS 2 bridge serves a ROS 2 server's three action services each as it
    /// matches it, so `get_result` can come a moment after `send_goal` answered); still
    /// unserved at the deadline, the result is `NoServer`.
    pub fn result(&self, timeout: Duration) -> Result<(GoalStatus, Vec<u8>), RosActionError> {
        self.result_or_stop(timeout, &|| false)
    }

    fn result_or_stop(
        &self,
        timeout: Duration,
        stop: &dyn Fn() -> bool,
    ) -> Result<(GoalStatus, Vec<u8>), RosActionError> {
        let deadline = Instant::now() + timeout;
        let req = frames::id_only(self.id());
        loop {
            let w = Shared::call_accepted(
                self.goal.shared(),
                |s| &mut s.get_result,
                &req,
                deadline,
                timeout,
                stop,
            )?;
            let code = frames::read_status(&w).map_err(RosActionError::Decode)?;
            match status_of(code) {
                None if code == 0 => return Err(ActionError::UnknownGoal(self.id()).into()),
                None => return Err(ActionError::Malformed.into()),
                // The server let go of the call before the goal finished: ask again.
                Some(s) if !s.is_terminal() => continue,
                Some(s) => {
                    self.goal.note(s);
                    return Ok((s, w));
                }
            }
        }
    }
}
