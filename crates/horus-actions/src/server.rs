//! The serving end of an action, polled from a node's tick.

use std::marker::PhantomData;
use std::time::Duration;

use horus::msgs::prelude::Zeroable;
use horus::{Message, Publisher, Request, Server};

use crate::endpoints::Endpoints;
use crate::error::{GoalError, OpenError};
pub use crate::goal_table::DEFAULT_RETENTION;
use crate::goal_table::{GoalTable, ResultAnswer};
use crate::wire::{
    self, ActionRequest, ActionResponse, FeedbackMsg, GoalId, GoalStatus, Payload, RawPayload,
    RawSpec, StatusMsg,
};

type Req = Request<ActionRequest, ActionResponse>;

/// A goal a client sent, waiting for [`ActionServer::accept`] or
/// [`ActionServer::reject`]. Dropping it rejects the goal.
pub struct NewGoal<G> {
    id: GoalId,
    goal: G,
    req: Req,
}

impl<G> NewGoal<G> {
    /// The goal's id.
    pub fn id(&self) -> GoalId {
        self.id
    }
    /// The goal.
    pub fn goal(&self) -> &G {
        &self.goal
    }
}

/// Serves an action: goals of type `G`, feedback `F`, results `R`.
///
/// Poll it from a tick: [`ActionServer::next_goal`] takes new goals (which
/// also answers cancel and result requests and drops expired results);
/// [`ActionServer::poll`] does the latter alone. Cancel requests are
/// acknowledged (`Canceling`) by that poll, whatever the goal's work is
/// doing. Run one server per action: goals live in the server that
/// accepted them, so a second server would not know them.
pub struct ActionServer<G: Payload, F: Payload, R: Payload> {
    name: String,
    specs: (G::Spec, F::Spec, R::Spec),
    send_goal: Server<ActionRequest, ActionResponse>,
    cancel: Server<ActionRequest, ActionResponse>,
    get_result: Server<ActionRequest, ActionResponse>,
    feedback: Publisher<FeedbackMsg>,
    status: Publisher<StatusMsg>,
    /// Each goal's status and result; result calls waiting (nothing kept beside a
    /// goal; results are the `get_result` answers).
    goals: GoalTable<(), ActionResponse, Req>,
    _ep: Endpoints,
    _t: PhantomData<fn(G) -> (F, R)>,
}

impl<G: Message, F: Message, R: Message> ActionServer<G, F, R> {
    /// Serves action `name` in the default namespace.
    pub fn new(name: &str) -> Result<Self, OpenError> {
        Self::open(name, None, ((), (), ()))
    }

    /// Serves action `name` in namespace `ns`.
    pub fn new_in(name: &str, ns: &str) -> Result<Self, OpenError> {
        Self::open(name, Some(ns), ((), (), ()))
    }
}

impl ActionServer<RawPayload, RawPayload, RawPayload> {
    /// Serves action `name` (in namespace `ns`, else the default) with
    /// goal, feedback and result types named at run time (`specs`: goal,
    /// feedback, result), for bindings. Same wire and semantics as a typed
    /// server: typed clients of the same types reach it.
    pub fn new_raw(
        name: &str,
        ns: Option<&str>,
        specs: (RawSpec, RawSpec, RawSpec),
    ) -> Result<Self, OpenError> {
        Self::open(name, ns, specs)
    }
}

impl<G: Payload, F: Payload, R: Payload> ActionServer<G, F, R> {
    fn open(
        name: &str,
        ns: Option<&str>,
        specs: (G::Spec, F::Spec, R::Spec),
    ) -> Result<Self, OpenError> {
        crate::endpoints::check_types::<G, F, R>(&specs)?;
        let ep = Endpoints::open(name, ns)?;
        Ok(ActionServer {
            name: name.to_owned(),
            specs,
            send_goal: ep.send_goal.server()?,
            cancel: ep.cancel.server()?,
            get_result: ep.get_result.server()?,
            feedback: ep.feedback.publisher()?,
            status: ep.status.publisher()?,
            goals: GoalTable::new(),
            _ep: ep,
            _t: PhantomData,
        })
    }

    /// The action's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// How long a finished goal's result stays available to `get_result`
    /// (default [`DEFAULT_RETENTION`]).
    pub fn set_result_retention(&mut self, retention: Duration) {
        self.goals.set_retention(retention);
    }

    /// Whether a goal, cancel or result request is waiting (for a
    /// scheduler's readiness check; copies nothing, moves nothing).
    pub fn has_pending(&self) -> bool {
        self.send_goal.has_pending() || self.cancel.has_pending() || self.get_result.has_pending()
    }

    /// Answers cancel and result requests and drops expired results.
    /// Bounded by the services' queue depths.
    pub fn poll(&mut self) {
        self.goals.expire();
        while let Some(req) = self.cancel.try_recv() {
            self.on_cancel(req);
        }
        while let Some(req) = self.get_result.try_recv() {
            self.on_get_result(req);
        }
    }

    /// The next goal sent by a client, if any (after [`ActionServer::poll`]).
    /// A goal of another type, or with an id this server already keeps, is
    /// refused here (the client gets `WrongType` or `Rejected`).
    pub fn next_goal(&mut self) -> Option<NewGoal<G>> {
        self.poll();
        while let Some(req) = self.send_goal.try_recv() {
            let id = GoalId::from_parts(req.id_hi, req.id_lo);
            let Some(goal) = G::get(&self.specs.0, req.schema, req.len, &req.payload) else {
                let _ = req.reply(&answer(wire::WRONG_TYPE, None));
                continue;
            };
            if self.goals.contains(id) {
                // A reused id: refuse rather than confuse two goals.
                let _ = req.reply(&answer(wire::REJECTED, None));
                continue;
            }
            return Some(NewGoal { id, goal, req });
        }
        None
    }

    /// Accepts a goal: its status becomes `Accepted`.
    pub fn accept(&mut self, goal: NewGoal<G>) -> GoalId {
        let id = goal.id;
        self.goals.insert(id, ());
        self.publish_status(id, GoalStatus::Accepted);
        let _ = goal
            .req
            .reply(&answer(wire::OK, Some(GoalStatus::Accepted)));
        id
    }

    /// Rejects a goal: the client's `send_goal` fails with `Rejected`.
    pub fn reject(&mut self, goal: NewGoal<G>) {
        let _ = goal.req.reply(&answer(wire::REJECTED, None));
    }

    /// Moves an accepted goal to `Executing`.
    pub fn execute(&mut self, id: GoalId) -> Result<(), GoalError> {
        self.goals.execute(id)?;
        self.publish_status(id, GoalStatus::Executing);
        Ok(())
    }

    /// Goals whose cancel was requested since the last call (each is now
    /// `Canceling`; finish it with [`ActionServer::canceled`], or with
    /// [`ActionServer::succeed`] / [`ActionServer::abort`]).
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

    /// Publishes feedback for an active goal (clients read it or not).
    pub fn publish_feedback(&mut self, id: GoalId, feedback: &F) -> Result<(), GoalError> {
        self.goals.check_active(id)?;
        let mut m = FeedbackMsg::zeroed();
        m.id_hi = id.hi();
        m.id_lo = id.lo();
        (m.schema, m.len) = feedback.put(&self.specs.1, &mut m.payload);
        // DropOldest topic: a slow client loses old feedback, never blocks us.
        let _ = self.feedback.send_ref(&m);
        Ok(())
    }

    /// Finishes a goal as `Succeeded` with `result`.
    pub fn succeed(&mut self, id: GoalId, result: &R) -> Result<(), GoalError> {
        self.finish(id, GoalStatus::Succeeded, result)
    }

    /// Finishes a goal as `Aborted` with `result`.
    pub fn abort(&mut self, id: GoalId, result: &R) -> Result<(), GoalError> {
        self.finish(id, GoalStatus::Aborted, result)
    }

    /// Finishes a `Canceling` goal as `Canceled` with `result`.
    pub fn canceled(&mut self, id: GoalId, result: &R) -> Result<(), GoalError> {
        self.finish(id, GoalStatus::Canceled, result)
    }

    /// Finishes a goal as `to` with `result`: `Succeeded` or `Aborted` from any
    /// unfinished status, `Canceled` from `Canceling` (as [`succeed`](Self::succeed),
    /// [`abort`](Self::abort), [`canceled`](Self::canceled)); another `to` is
    /// [`GoalError::InvalidTransition`].
    pub fn finish(&mut self, id: GoalId, to: GoalStatus, result: &R) -> Result<(), GoalError> {
        let specs = &self.specs;
        self.goals.finish(id, to, || {
            let mut resp = answer(wire::OK, Some(to));
            (resp.schema, resp.len) = result.put(&specs.2, &mut resp.payload);
            Ok::<_, GoalError>(resp)
        })?;
        self.publish_status(id, to);
        // Answer the result calls that were waiting for this goal.
        self.goals.release_held(id, |req, resp| {
            let _ = req.reply(resp);
        });
        Ok(())
    }

    fn publish_status(&mut self, id: GoalId, s: GoalStatus) {
        let m = StatusMsg {
            id_hi: id.hi(),
            id_lo: id.lo(),
            status: s.code(),
            _pad: 0,
        };
        let _ = self.status.send_ref(&m);
    }

    /// A cancel request: acknowledged at once (`Canceling`), or answered
    /// with the goal's final status if it already finished.
    fn on_cancel(&mut self, req: Req) {
        let id = GoalId::from_parts(req.id_hi, req.id_lo);
        if !self.goals.contains(id) {
            let _ = req.reply(&answer(wire::UNKNOWN, None));
            return;
        }
        if self.goals.cancel_where(|g, ()| g == id).changed {
            self.publish_status(id, GoalStatus::Canceling);
        }
        let now = self.goals.status(id);
        let _ = req.reply(&answer(wire::OK, now));
    }

    /// A result request: answered now if the goal finished, else held
    /// until it does (the client's call times out otherwise).
    fn on_get_result(&mut self, req: Req) {
        let id = GoalId::from_parts(req.id_hi, req.id_lo);
        self.goals.request_result(id, req, |req, a| {
            let _ = match a {
                ResultAnswer::Finished(resp) => req.reply(resp),
                ResultAnswer::Unknown => req.reply(&answer(wire::UNKNOWN, None)),
                ResultAnswer::Pending(_) => req.reply(&answer(wire::PENDING, None)),
            };
        });
    }
}

fn answer(code: u32, status: Option<GoalStatus>) -> ActionResponse {
    let mut r = ActionResponse::zeroed();
    r.code = code;
    r.status = status.map_or(0, GoalStatus::code);
    r
}
