//! The calling end of an action: send goals, follow their status and
//! feedback, cancel them, wait for their results.

use std::marker::PhantomData;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use horus::msgs::prelude::Zeroable;
use horus::{Client, Message, Subscriber};

pub use crate::client_goals::FEEDBACK_KEPT;
use crate::client_goals::{lock, ClientGoals, Followed, Follows, GoalIds, PUMP_MAX};
use crate::endpoints::Endpoints;
use crate::error::{ActionError, OpenError};
use crate::wire::{
    self, ActionRequest, ActionResponse, FeedbackMsg, GoalId, GoalStatus, Payload, RawPayload,
    RawSpec, StatusMsg,
};

struct Shared<F: Payload> {
    name: String,
    feedback_spec: F::Spec,
    send_goal: Client<ActionRequest, ActionResponse>,
    cancel: Client<ActionRequest, ActionResponse>,
    get_result: Client<ActionRequest, ActionResponse>,
    feedback: Subscriber<FeedbackMsg>,
    status: Subscriber<StatusMsg>,
    goals: ClientGoals<F>,
    _ep: Endpoints,
}

impl<F: Payload> Follows for Shared<F> {
    type Feedback = F;

    /// Files the status and feedback messages that arrived under their goals.
    fn pump(&mut self) {
        for _ in 0..PUMP_MAX {
            let Some(m) = self.status.try_recv() else {
                break;
            };
            let id = GoalId::from_parts(m.id_hi, m.id_lo);
            if let Some(s) = GoalStatus::from_code(m.status) {
                self.goals.note(id, s);
            }
        }
        for _ in 0..PUMP_MAX {
            let Some(m) = self.feedback.try_recv() else {
                break;
            };
            let id = GoalId::from_parts(m.id_hi, m.id_lo);
            if !self.goals.tracks(id) {
                continue;
            }
            if let Some(f) = F::get(&self.feedback_spec, m.schema, m.len, &m.payload) {
                self.goals.push_feedback(id, f);
            }
        }
    }

    fn goals(&mut self) -> &mut ClientGoals<F> {
        &mut self.goals
    }
}

/// Sends goals of type `G` to an action and follows them (feedback `F`,
/// results `R`).
pub struct ActionClient<G: Payload, F: Payload, R: Payload> {
    shared: Arc<Mutex<Shared<F>>>,
    goal_spec: G::Spec,
    result_spec: R::Spec,
    ids: GoalIds,
    _t: PhantomData<fn(G) -> R>,
}

impl<G: Message, F: Message, R: Message> ActionClient<G, F, R> {
    /// Opens action `name` in the default namespace.
    pub fn open(name: &str) -> Result<Self, OpenError> {
        Self::open_ns(name, None, ((), (), ()))
    }

    /// Opens action `name` in namespace `ns`.
    pub fn open_in(name: &str, ns: &str) -> Result<Self, OpenError> {
        Self::open_ns(name, Some(ns), ((), (), ()))
    }
}

impl ActionClient<RawPayload, RawPayload, RawPayload> {
    /// Opens action `name` (in namespace `ns`, else the default) with goal,
    /// feedback and result types named at run time (`specs`: goal,
    /// feedback, result), for bindings. Same wire and semantics as a typed
    /// client: it meets typed servers of the same types.
    pub fn open_raw(
        name: &str,
        ns: Option<&str>,
        specs: (RawSpec, RawSpec, RawSpec),
    ) -> Result<Self, OpenError> {
        Self::open_ns(name, ns, specs)
    }
}

impl<G: Payload, F: Payload, R: Payload> ActionClient<G, F, R> {
    fn open_ns(
        name: &str,
        ns: Option<&str>,
        specs: (G::Spec, F::Spec, R::Spec),
    ) -> Result<Self, OpenError> {
        crate::endpoints::check_types::<G, F, R>(&specs)?;
        let (goal_spec, feedback_spec, result_spec) = specs;
        let ep = Endpoints::open(name, ns)?;
        let shared = Shared {
            name: name.to_owned(),
            feedback_spec,
            send_goal: ep.send_goal.client()?,
            cancel: ep.cancel.client()?,
            get_result: ep.get_result.client()?,
            // Subscribed before any goal is sent: no status or feedback of
            // this client's goals is missed.
            feedback: ep.feedback.subscriber()?,
            status: ep.status.subscriber()?,
            goals: ClientGoals::new(),
            _ep: ep,
        };
        Ok(ActionClient {
            shared: Arc::new(Mutex::new(shared)),
            goal_spec,
            result_spec,
            ids: GoalIds::new(),
            _t: PhantomData,
        })
    }

    /// Sends a goal and waits at most `timeout` for the server to accept
    /// it. Returns its handle (status `Accepted`).
    pub fn send_goal(
        &mut self,
        goal: &G,
        timeout: Duration,
    ) -> Result<GoalHandle<F, R>, ActionError> {
        self.send_goal_or_stop(goal, timeout, || false)
    }

    /// [`ActionClient::send_goal`], asking `stop` every few milliseconds while it waits;
    /// once `stop` says so, the call is withdrawn: `ActionError::Call(CallError::Stopped)`.
    /// For a binding whose `close()` from another thread must end a call in progress.
    pub fn send_goal_or_stop(
        &mut self,
        goal: &G,
        timeout: Duration,
        stop: impl Fn() -> bool,
    ) -> Result<GoalHandle<F, R>, ActionError> {
        let id = self.ids.next_id();
        let mut req = ActionRequest::zeroed();
        req.id_hi = id.hi();
        req.id_lo = id.lo();
        (req.schema, req.len) = goal.put(&self.goal_spec, &mut req.payload);
        // Followed before the call: status published while we wait is kept. Dropped
        // (unfollowed) if the goal is not accepted.
        let goal = Followed::new_goal(&self.shared, id);
        let mut sh = lock(&self.shared);
        let name = sh.name.clone();
        // Waited for without the lock: other handles stay usable meanwhile.
        let r = sh.send_goal.call_async(&req);
        drop(sh);
        let resp = r
            .and_then(|p| p.wait_or_stop(timeout, stop))
            .map(|s| *s)
            .map_err(|e| ActionError::from_call(e, &name))?;
        match resp.code {
            wire::OK => Ok(GoalHandle {
                goal,
                result_spec: self.result_spec.clone(),
                _t: PhantomData,
            }),
            wire::REJECTED => Err(ActionError::Rejected(id)),
            wire::WRONG_TYPE => Err(ActionError::WrongType),
            _ => Err(ActionError::Malformed),
        }
    }

    /// A handle on goal `id` (for example one another handle was dropped
    /// for): its result and cancel work; status and feedback follow from
    /// now on.
    pub fn handle(&self, id: GoalId) -> GoalHandle<F, R> {
        GoalHandle {
            goal: Followed::existing(&self.shared, id),
            result_spec: self.result_spec.clone(),
            _t: PhantomData,
        }
    }
}

/// One goal sent by an [`ActionClient`]. Dropping it stops following the
/// goal (the goal itself goes on).
pub struct GoalHandle<F: Payload, R: Payload> {
    goal: Followed<Shared<F>>,
    result_spec: R::Spec,
    _t: PhantomData<fn() -> R>,
}

impl<F: Payload, R: Payload> GoalHandle<F, R> {
    /// The goal's id.
    pub fn id(&self) -> GoalId {
        self.goal.id()
    }

    /// The goal's latest known status (from the status topic; never blocks).
    pub fn status(&self) -> GoalStatus {
        self.goal.status()
    }

    /// The oldest feedback not yet read, if any (never blocks). Feedback
    /// not read is kept, up to [`FEEDBACK_KEPT`] messages per goal.
    pub fn feedback(&self) -> Option<F> {
        self.goal.feedback()
    }

    /// Asks the server to cancel the goal; waits at most `timeout` for its
    /// acknowledgement. Returns the status then: `Canceling`, or the final
    /// status if the goal had already finished.
    pub fn cancel(&self, timeout: Duration) -> Result<GoalStatus, ActionError> {
        self.cancel_or_stop(timeout, || false)
    }

    /// [`GoalHandle::cancel`], asking `stop` every few milliseconds while it waits; once
    /// `stop` says so, the call is withdrawn: `ActionError::Call(CallError::Stopped)`.
    /// For a binding whose `close()` from another thread must end a call in progress.
    pub fn cancel_or_stop(
        &self,
        timeout: Duration,
        stop: impl Fn() -> bool,
    ) -> Result<GoalStatus, ActionError> {
        let resp = self.call(|sh| &mut sh.cancel, timeout, &stop)?;
        let s = GoalStatus::from_code(resp.status).ok_or(ActionError::Malformed)?;
        self.goal.note(s);
        Ok(s)
    }

    /// Waits at most `timeout` for the goal to finish; returns its final
    /// status (`Succeeded`, `Canceled` or `Aborted`) and result.
    pub fn result(&self, timeout: Duration) -> Result<(GoalStatus, R), ActionError> {
        let deadline = Instant::now() + timeout;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(ActionError::Timeout(timeout));
            }
            let resp = match self.call(|sh| &mut sh.get_result, left, &|| false) {
                Err(ActionError::Timeout(_)) => return Err(ActionError::Timeout(timeout)),
                r => r?,
            };
            if resp.code == wire::PENDING {
                continue; // the server let go of the call; ask again
            }
            let s = GoalStatus::from_code(resp.status)
                .filter(|s| s.is_terminal())
                .ok_or(ActionError::Malformed)?;
            let r = R::get(&self.result_spec, resp.schema, resp.len, &resp.payload)
                .ok_or(ActionError::WrongType)?;
            self.goal.note(s);
            return Ok((s, r));
        }
    }

    fn call(
        &self,
        which: impl FnOnce(&mut Shared<F>) -> &mut Client<ActionRequest, ActionResponse>,
        timeout: Duration,
        stop: &dyn Fn() -> bool,
    ) -> Result<ActionResponse, ActionError> {
        let mut req = ActionRequest::zeroed();
        req.id_hi = self.id().hi();
        req.id_lo = self.id().lo();
        let mut sh = lock(self.goal.shared());
        let name = sh.name.clone();
        let pending = which(&mut sh).call_async(&req);
        // Waited for without the lock: a `result` blocking on one goal
        // leaves the client's other handles usable from other threads.
        drop(sh);
        let resp = pending
            .and_then(|p| p.wait_or_stop(timeout, stop))
            .map(|s| *s)
            .map_err(|e| ActionError::from_call(e, &name))?;
        match resp.code {
            wire::OK | wire::PENDING => Ok(resp),
            wire::UNKNOWN => Err(ActionError::UnknownGoal(self.id())),
            _ => Err(ActionError::Malformed),
        }
    }
}
