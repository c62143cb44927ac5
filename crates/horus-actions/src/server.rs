//! The serving end of an action, polled from a node's tick.

use std::collections::HashMap;
use std::marker::PhantomData;
use std::time::{Duration, Instant};

use horus::msgs::prelude::Zeroable;
use horus::{Message, Publisher, Request, Server};

use crate::endpoints::Endpoints;
use crate::error::{GoalError, OpenError};
use crate::wire::{
    self, ActionRequest, ActionResponse, FeedbackMsg, GoalId, GoalStatus, Payload, RawPayload,
    RawSpec, StatusMsg,
};

/// How long a finished goal's result is kept unless configured.
pub const DEFAULT_RETENTION: Duration = Duration::from_secs(15);

/// Most `get_result` calls held (waiting for a goal to finish) at once;
/// beyond, the oldest is answered "pending" and the client asks again.
const MAX_HELD: usize = 256;

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

struct Goal {
    status: GoalStatus,
    /// The result, once finished, and when it finished.
    done: Option<(ActionResponse, Instant)>,
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
    goals: HashMap<GoalId, Goal>,
    held: Vec<(GoalId, Req)>,
    cancels: Vec<GoalId>,
    retention: Duration,
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
            goals: HashMap::new(),
            held: Vec::new(),
            cancels: Vec::new(),
            retention: DEFAULT_RETENTION,
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
        self.retention = retention;
    }

    /// Whether a goal, cancel or result request is waiting (for a
    /// scheduler's readiness check; copies nothing, moves nothing).
    pub fn has_pending(&self) -> bool {
        self.send_goal.has_pending() || self.cancel.has_pending() || self.get_result.has_pending()
    }

    /// Answers cancel and result requests and drops expired results.
    /// Bounded by the services' queue depths.
    pub fn poll(&mut self) {
        let now = Instant::now();
        let retention = self.retention;
        self.goals.retain(|_, g| match &g.done {
            Some((_, at)) => now.duration_since(*at) < retention,
            None => true,
        });
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
            if self.goals.contains_key(&id) {
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
        self.goals.insert(
            id,
            Goal {
                status: GoalStatus::Accepted,
                done: None,
            },
        );
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
        self.transition(id, GoalStatus::Executing, |s| s == GoalStatus::Accepted)
    }

    /// Goals whose cancel was requested since the last call (each is now
    /// `Canceling`; finish it with [`ActionServer::canceled`], or with
    /// [`ActionServer::succeed`] / [`ActionServer::abort`]).
    pub fn take_cancel_requests(&mut self) -> Vec<GoalId> {
        self.poll();
        std::mem::take(&mut self.cancels)
    }

    /// The status of a goal this server keeps.
    pub fn status(&self, id: GoalId) -> Option<GoalStatus> {
        self.goals.get(&id).map(|g| g.status)
    }

    /// Goals accepted and not finished.
    pub fn active_goals(&self) -> Vec<GoalId> {
        let mut v: Vec<_> = self
            .goals
            .iter()
            .filter(|(_, g)| !g.status.is_terminal())
            .map(|(id, _)| *id)
            .collect();
        v.sort();
        v
    }

    /// Publishes feedback for an active goal (clients read it or not).
    pub fn publish_feedback(&mut self, id: GoalId, feedback: &F) -> Result<(), GoalError> {
        match self.goals.get(&id) {
            Some(g) if !g.status.is_terminal() => {}
            Some(g) => {
                return Err(GoalError::InvalidTransition {
                    id,
                    from: g.status,
                    to: g.status,
                })
            }
            None => return Err(GoalError::UnknownGoal(id)),
        }
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

    fn finish(&mut self, id: GoalId, to: GoalStatus, result: &R) -> Result<(), GoalError> {
        let ok = |s: GoalStatus| match to {
            GoalStatus::Canceled => s == GoalStatus::Canceling,
            _ => !s.is_terminal(),
        };
        self.transition(id, to, ok)?;
        let mut resp = answer(wire::OK, Some(to));
        (resp.schema, resp.len) = result.put(&self.specs.2, &mut resp.payload);
        if let Some(g) = self.goals.get_mut(&id) {
            g.done = Some((resp, Instant::now()));
        }
        // Answer the result calls that were waiting for this goal.
        let (now, later): (Vec<_>, Vec<_>) = std::mem::take(&mut self.held)
            .into_iter()
            .partition(|(g, _)| *g == id);
        self.held = later;
        for (_, req) in now {
            let _ = req.reply(&resp);
        }
        Ok(())
    }

    fn transition(
        &mut self,
        id: GoalId,
        to: GoalStatus,
        allowed: impl Fn(GoalStatus) -> bool,
    ) -> Result<(), GoalError> {
        let g = self.goals.get_mut(&id).ok_or(GoalError::UnknownGoal(id))?;
        if !allowed(g.status) {
            return Err(GoalError::InvalidTransition {
                id,
                from: g.status,
                to,
            });
        }
        g.status = to;
        self.publish_status(id, to);
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
        let Some(g) = self.goals.get_mut(&id) else {
            let _ = req.reply(&answer(wire::UNKNOWN, None));
            return;
        };
        let s = g.status;
        if matches!(s, GoalStatus::Accepted | GoalStatus::Executing) {
            g.status = GoalStatus::Canceling;
            self.cancels.push(id);
            self.publish_status(id, GoalStatus::Canceling);
        }
        let now = self.goals.get(&id).map_or(s, |g| g.status);
        let _ = req.reply(&answer(wire::OK, Some(now)));
    }

    /// A result request: answered now if the goal finished, else held
    /// until it does (the client's call times out otherwise).
    fn on_get_result(&mut self, req: Req) {
        let id = GoalId::from_parts(req.id_hi, req.id_lo);
        match self.goals.get(&id) {
            None => {
                let _ = req.reply(&answer(wire::UNKNOWN, None));
            }
            Some(Goal {
                done: Some((resp, _)),
                ..
            }) => {
                let _ = req.reply(resp);
            }
            Some(_) => {
                if self.held.len() >= MAX_HELD {
                    let (_, old) = self.held.remove(0);
                    let _ = old.reply(&answer(wire::PENDING, None));
                }
                self.held.push((id, req));
            }
        }
    }
}

fn answer(code: u32, status: Option<GoalStatus>) -> ActionResponse {
    let mut r = ActionResponse::zeroed();
    r.code = code;
    r.status = status.map_or(0, GoalStatus::code);
    r
}
