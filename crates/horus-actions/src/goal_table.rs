//! The goals an action server keeps, whatever its wire: one table serves
//! [`ActionServer`](crate::ActionServer) (fixed-layout messages) and
//! [`RawRosActionServer`](crate::ros::RawRosActionServer) (ROS 2 wire bytes).
//!
//! It holds each goal's status (ROS 2's model: `Accepted` → `Executing` →
//! `Succeeded` / `Aborted`, or on a cancel request `Canceling` → `Canceled`), the
//! result of a finished goal until it expires, the cancel requests not yet taken by
//! the application, and the result requests waiting for a goal to finish. It does no
//! I/O: what differs between the servers is a type parameter or a closure —
//!
//! - `Meta`: what a server keeps beside a goal's status (ROS 2: the acceptance stamp,
//!   which its status array and cancel policy need; the horus wire: nothing);
//! - `Done`: a finished goal's answer to a result request, already encoded (an
//!   `ActionResponse`, or a `Foo_GetResult_Response` record);
//! - `Held`: a result request waiting for its goal (each server's request type);
//! - the status encoding: the table keeps [`GoalStatus`]; each server publishes
//!   changes in its own form after a transition (one `StatusMsg` per change, or the
//!   whole `GoalStatusArray`).
//!
//! Both servers use the same goal id type ([`GoalId`]; ROS 2's UUIDs are its
//! big-endian bytes), so the table is not generic over it.

use std::collections::{HashMap, VecDeque};
use std::time::{Duration, Instant};

use crate::error::GoalError;
use crate::wire::{GoalId, GoalStatus};

/// How long a finished goal's result is kept unless configured.
pub const DEFAULT_RETENTION: Duration = Duration::from_secs(15);

/// Most result requests held (waiting for a goal to finish) at once; beyond, the
/// oldest is answered [`ResultAnswer::Pending`] and its client asks again.
const MAX_HELD: usize = 256;

/// One goal the server keeps.
struct Goal<Meta, Done> {
    status: GoalStatus,
    meta: Meta,
    /// The answer to result requests, once finished, and when it finished.
    done: Option<(Done, Instant)>,
}

/// What a result request is answered with.
pub(crate) enum ResultAnswer<'a, Done> {
    /// The goal finished: its result.
    Finished(&'a Done),
    /// The server does not keep the goal (never accepted, or its result expired).
    Unknown,
    /// The goal has not finished and the request is let go (more than `MAX_HELD`
    /// are waiting): the goal's status now; the client asks again.
    Pending(GoalStatus),
}

/// Goals whose cancel [`GoalTable::cancel_where`] requested.
pub(crate) struct Canceling {
    /// The picked goals that are not finished (all now `Canceling`, including those that
    /// already were), in the table's order.
    pub(crate) goals: Vec<GoalId>,
    /// Whether any goal's status changed (a status update is due).
    pub(crate) changed: bool,
}

/// The goals of one action server (see the module docs).
pub(crate) struct GoalTable<Meta, Done, Held> {
    goals: HashMap<GoalId, Goal<Meta, Done>>,
    /// Result requests waiting for their goal, oldest first.
    held: VecDeque<(GoalId, Held)>,
    /// Goals whose cancel was requested and not yet taken by the application.
    cancels: Vec<GoalId>,
    retention: Duration,
}

impl<Meta, Done, Held> GoalTable<Meta, Done, Held> {
    /// An empty table keeping results for [`DEFAULT_RETENTION`].
    pub(crate) fn new() -> Self {
        GoalTable {
            goals: HashMap::new(),
            held: VecDeque::new(),
            cancels: Vec::new(),
            retention: DEFAULT_RETENTION,
        }
    }

    /// How long a finished goal's result stays available.
    pub(crate) fn set_retention(&mut self, retention: Duration) {
        self.retention = retention;
    }

    /// Drops the finished goals whose result is older than the retention.
    pub(crate) fn expire(&mut self) {
        let now = Instant::now();
        let retention = self.retention;
        self.goals.retain(|_, g| match &g.done {
            Some((_, at)) => now.duration_since(*at) < retention,
            None => true,
        });
    }

    /// Whether the table keeps goal `id` (a new goal with this id is refused).
    pub(crate) fn contains(&self, id: GoalId) -> bool {
        self.goals.contains_key(&id)
    }

    /// Keeps a newly accepted goal (status `Accepted`).
    pub(crate) fn insert(&mut self, id: GoalId, meta: Meta) {
        let goal = Goal {
            status: GoalStatus::Accepted,
            meta,
            done: None,
        };
        self.goals.insert(id, goal);
    }

    /// The status of goal `id`, if kept.
    pub(crate) fn status(&self, id: GoalId) -> Option<GoalStatus> {
        self.goals.get(&id).map(|g| g.status)
    }

    /// Every goal kept, in no order: id, status and what the server keeps beside it.
    pub(crate) fn iter(&self) -> impl Iterator<Item = (GoalId, GoalStatus, &Meta)> {
        self.goals.iter().map(|(id, g)| (*id, g.status, &g.meta))
    }

    /// What the server keeps beside goal `id`, if kept.
    pub(crate) fn meta(&self, id: GoalId) -> Option<&Meta> {
        self.goals.get(&id).map(|g| &g.meta)
    }

    /// Goals accepted and not finished, in id order.
    pub(crate) fn active(&self) -> Vec<GoalId> {
        let mut v: Vec<_> = self
            .goals
            .iter()
            .filter(|(_, g)| !g.status.is_terminal())
            .map(|(id, _)| *id)
            .collect();
        v.sort();
        v
    }

    /// `Ok` if goal `id` is kept and not finished (feedback may be published for it).
    pub(crate) fn check_active(&self, id: GoalId) -> Result<(), GoalError> {
        match self.status(id) {
            Some(s) if !s.is_terminal() => Ok(()),
            Some(s) => Err(GoalError::InvalidTransition { id, from: s, to: s }),
            None => Err(GoalError::UnknownGoal(id)),
        }
    }

    /// Moves an `Accepted` goal to `Executing`.
    pub(crate) fn execute(&mut self, id: GoalId) -> Result<(), GoalError> {
        self.transition(id, GoalStatus::Executing, |s| s == GoalStatus::Accepted)
    }

    /// Finishes goal `id` as `to` (`Succeeded` or `Aborted` from any unfinished status,
    /// `Canceled` from `Canceling`) and keeps `done()`, its answer to result requests.
    /// Checked in this order: `to` is final, then `done()` (an error there changes
    /// nothing), then the transition. Waiting result requests are answered by
    /// [`release_held`](Self::release_held), after the server published the change.
    pub(crate) fn finish<E: From<GoalError>>(
        &mut self,
        id: GoalId,
        to: GoalStatus,
        done: impl FnOnce() -> Result<Done, E>,
    ) -> Result<(), E> {
        if !to.is_terminal() {
            let from = self.status(id).ok_or(GoalError::UnknownGoal(id))?;
            return Err(GoalError::InvalidTransition { id, from, to }.into());
        }
        let done = done()?;
        let allowed = |s: GoalStatus| match to {
            GoalStatus::Canceled => s == GoalStatus::Canceling,
            _ => !s.is_terminal(),
        };
        self.transition(id, to, allowed)?;
        if let Some(g) = self.goals.get_mut(&id) {
            g.done = Some((done, Instant::now()));
        }
        Ok(())
    }

    /// Answers the result requests held for goal `id` with its result (none if it has
    /// not finished).
    pub(crate) fn release_held(&mut self, id: GoalId, mut reply: impl FnMut(Held, &Done)) {
        let Some((done, _)) = self.goals.get(&id).and_then(|g| g.done.as_ref()) else {
            return;
        };
        let (now, later): (VecDeque<_>, VecDeque<_>) = std::mem::take(&mut self.held)
            .into_iter()
            .partition(|(g, _)| *g == id);
        self.held = later;
        for (_, req) in now {
            reply(req, done);
        }
    }

    /// A result request for goal `id`: answered now if the goal finished or is not
    /// kept, else held until it finishes. Holding it beyond `MAX_HELD` lets the oldest
    /// held request go ([`ResultAnswer::Pending`]).
    pub(crate) fn request_result(
        &mut self,
        id: GoalId,
        req: Held,
        mut reply: impl FnMut(Held, ResultAnswer<'_, Done>),
    ) {
        match self.goals.get(&id) {
            None => reply(req, ResultAnswer::Unknown),
            Some(Goal {
                done: Some((done, _)),
                ..
            }) => reply(req, ResultAnswer::Finished(done)),
            Some(_) => {
                if self.held.len() >= MAX_HELD {
                    if let Some((old_id, old)) = self.held.pop_front() {
                        let s = self.status(old_id).unwrap_or(GoalStatus::Accepted);
                        reply(old, ResultAnswer::Pending(s));
                    }
                }
                self.held.push_back((id, req));
            }
        }
    }

    /// Requests the cancel of every unfinished goal `pick` selects: each not yet
    /// `Canceling` becomes `Canceling` and is queued for
    /// [`take_cancels`](Self::take_cancels).
    pub(crate) fn cancel_where(&mut self, pick: impl Fn(GoalId, &Meta) -> bool) -> Canceling {
        let mut out = Canceling {
            goals: Vec::new(),
            changed: false,
        };
        for (id, g) in self.goals.iter_mut() {
            if !pick(*id, &g.meta) || g.status.is_terminal() {
                continue;
            }
            if g.status != GoalStatus::Canceling {
                g.status = GoalStatus::Canceling;
                self.cancels.push(*id);
                out.changed = true;
            }
            out.goals.push(*id);
        }
        out
    }

    /// Goals whose cancel was requested since the last call.
    pub(crate) fn take_cancels(&mut self) -> Vec<GoalId> {
        std::mem::take(&mut self.cancels)
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
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    type Table = GoalTable<u32, &'static str, u32>;

    fn answers(t: &mut Table, id: GoalId, req: u32) -> Vec<(u32, String)> {
        let mut out = Vec::new();
        t.request_result(id, req, |r, a| {
            let a = match a {
                ResultAnswer::Finished(d) => format!("done {d}"),
                ResultAnswer::Unknown => "unknown".to_owned(),
                ResultAnswer::Pending(s) => format!("pending {s:?}"),
            };
            out.push((r, a));
        });
        out
    }

    #[test]
    fn goals_move_through_the_status_model_and_refuse_other_moves() {
        let mut t = Table::new();
        let id = GoalId(7);
        assert_eq!(t.execute(id), Err(GoalError::UnknownGoal(id)));
        t.insert(id, 0);
        assert_eq!(t.active(), vec![id]);
        t.execute(id).unwrap();
        assert_eq!(t.status(id), Some(GoalStatus::Executing));
        let again = t.execute(id).unwrap_err();
        assert!(matches!(again, GoalError::InvalidTransition { .. }));
        // Canceled only from Canceling; a final status only once.
        let r = t.finish::<GoalError>(id, GoalStatus::Canceled, || Ok("x"));
        assert!(r.is_err());
        t.finish::<GoalError>(id, GoalStatus::Succeeded, || Ok("r"))
            .unwrap();
        assert!(t
            .finish::<GoalError>(id, GoalStatus::Aborted, || Ok("r"))
            .is_err());
        assert_eq!(t.active(), Vec::<GoalId>::new());
        assert!(t.check_active(id).is_err());
        // A non-final `to` is refused before the result is made.
        let r = t.finish::<GoalError>(id, GoalStatus::Executing, || unreachable!());
        assert!(matches!(r, Err(GoalError::InvalidTransition { .. })));
    }

    #[test]
    fn result_requests_wait_for_the_goal_and_the_oldest_is_let_go_beyond_the_bound() {
        let mut t = Table::new();
        let id = GoalId(1);
        assert_eq!(answers(&mut t, id, 0), vec![(0, "unknown".to_owned())]);
        t.insert(id, 0);
        for req in 0..MAX_HELD as u32 {
            assert!(answers(&mut t, id, req).is_empty());
        }
        let over = answers(&mut t, id, 999);
        assert_eq!(over, vec![(0, "pending Accepted".to_owned())]);
        t.finish::<GoalError>(id, GoalStatus::Aborted, || Ok("r"))
            .unwrap();
        let mut released = Vec::new();
        t.release_held(id, |req, d| released.push((req, *d)));
        assert_eq!(released.len(), MAX_HELD);
        assert_eq!(released[0], (1, "r"));
        assert_eq!(answers(&mut t, id, 5), vec![(5, "done r".to_owned())]);
    }

    #[test]
    fn cancels_pick_unfinished_goals_and_queue_each_once() {
        let mut t = Table::new();
        for (i, stamp) in [(1, 10), (2, 20), (3, 30)] {
            t.insert(GoalId(i), stamp);
        }
        t.finish::<GoalError>(GoalId(3), GoalStatus::Succeeded, || Ok("r"))
            .unwrap();
        let c = t.cancel_where(|_, stamp| *stamp <= 30);
        assert!(c.changed);
        let mut picked = c.goals;
        picked.sort();
        assert_eq!(picked, vec![GoalId(1), GoalId(2)]);
        // Already canceling: listed again, not queued again.
        let c = t.cancel_where(|id, _| id == GoalId(1));
        assert!(!c.changed);
        assert_eq!(c.goals, vec![GoalId(1)]);
        let mut taken = t.take_cancels();
        taken.sort();
        assert_eq!(taken, vec![GoalId(1), GoalId(2)]);
        assert!(t.take_cancels().is_empty());
    }

    #[test]
    fn finished_goals_expire_after_the_retention_and_unfinished_ones_stay() {
        let mut t = Table::new();
        t.set_retention(Duration::ZERO);
        t.insert(GoalId(1), 0);
        t.insert(GoalId(2), 0);
        t.finish::<GoalError>(GoalId(1), GoalStatus::Succeeded, || Ok("r"))
            .unwrap();
        t.expire();
        assert!(!t.contains(GoalId(1)));
        assert!(t.contains(GoalId(2)));
    }
}
