//! What an action client keeps of the goals it follows, whatever its wire: one
//! bookkeeping serves [`ActionClient`](crate::ActionClient) (fixed-layout messages)
//! and [`RawRosActionClient`](crate::ros::RawRosActionClient) (ROS 2 wire bytes).
//!
//! - [`GoalIds`]: the ids a client gives its goals (its token and a counter);
//! - [`ClientGoals`]: each followed goal's latest status and unread feedback (`F`: a
//!   decoded feedback value, or wire bytes), filled by the client's pump from its
//!   status and feedback topics;
//! - [`Followed`]: one goal followed through a client's shared state (a goal handle's
//!   part that is the same for both clients: status, feedback, noting an answer's
//!   status, and forgetting the goal when dropped).

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard};

use crate::wire::{GoalId, GoalStatus};

/// Feedback messages kept per goal for a client that does not read them
/// (older ones are dropped).
pub const FEEDBACK_KEPT: usize = 64;

/// Most topic messages a client reads per pump (bounds a hostile publisher).
pub(crate) const PUMP_MAX: usize = 1024;

/// A unique high half for a client's goal ids: process id and a
/// per-process client counter, salted with the clock.
fn client_token() -> u64 {
    use std::sync::atomic::{AtomicU32, Ordering};
    // Relaxed: only uniqueness of the returned values matters.
    static N: AtomicU32 = AtomicU32::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    let n = N.fetch_add(1, Ordering::Relaxed);
    (u64::from(std::process::id()) << 32) | u64::from(n.wrapping_mul(0x9e37_79b9) ^ nanos)
}

/// The ids one client gives its goals: its token in the high half, a counter from 1
/// in the low half.
pub(crate) struct GoalIds {
    token: u64,
    next: u64,
}

impl GoalIds {
    /// A new client's ids (a token of its own).
    pub(crate) fn new() -> Self {
        GoalIds {
            token: client_token(),
            next: 1,
        }
    }

    /// The next goal's id.
    pub(crate) fn next_id(&mut self) -> GoalId {
        let id = GoalId::from_parts(self.token, self.next);
        self.next += 1;
        id
    }
}

/// One followed goal.
struct Tracked<F> {
    status: GoalStatus,
    feedback: VecDeque<F>,
}

impl<F> Tracked<F> {
    fn accepted() -> Self {
        Tracked {
            status: GoalStatus::Accepted,
            feedback: VecDeque::new(),
        }
    }
}

/// The goals a client follows: latest status and unread feedback (`F`) of each.
pub(crate) struct ClientGoals<F> {
    goals: HashMap<GoalId, Tracked<F>>,
}

impl<F> ClientGoals<F> {
    /// Follows no goal.
    pub(crate) fn new() -> Self {
        ClientGoals {
            goals: HashMap::new(),
        }
    }

    /// Follows goal `id` afresh (status `Accepted`, no feedback), before its
    /// `send_goal` call: status published while the call waits is kept.
    pub(crate) fn track_new(&mut self, id: GoalId) {
        self.goals.insert(id, Tracked::accepted());
    }

    /// Follows goal `id` (as `Accepted`) unless it is followed already.
    pub(crate) fn track(&mut self, id: GoalId) {
        self.goals.entry(id).or_insert_with(Tracked::accepted);
    }

    /// Stops following goal `id`.
    pub(crate) fn forget(&mut self, id: GoalId) {
        self.goals.remove(&id);
    }

    /// Whether goal `id` is followed (its feedback is worth decoding).
    pub(crate) fn tracks(&self, id: GoalId) -> bool {
        self.goals.contains_key(&id)
    }

    /// A status heard for goal `id` (a status message, an answer). Never steps back
    /// from a final status: messages may be lost or late.
    pub(crate) fn note(&mut self, id: GoalId, s: GoalStatus) {
        if let Some(t) = self.goals.get_mut(&id) {
            if !t.status.is_terminal() {
                t.status = s;
            }
        }
    }

    /// Files feedback under goal `id` if followed, dropping its oldest beyond
    /// [`FEEDBACK_KEPT`].
    pub(crate) fn push_feedback(&mut self, id: GoalId, f: F) {
        let Some(t) = self.goals.get_mut(&id) else {
            return;
        };
        if t.feedback.len() == FEEDBACK_KEPT {
            t.feedback.pop_front();
        }
        t.feedback.push_back(f);
    }

    /// Goal `id`'s latest known status (`Accepted` if nothing was heard).
    pub(crate) fn status(&self, id: GoalId) -> GoalStatus {
        self.goals
            .get(&id)
            .map_or(GoalStatus::Accepted, |t| t.status)
    }

    /// Goal `id`'s oldest unread feedback.
    pub(crate) fn pop_feedback(&mut self, id: GoalId) -> Option<F> {
        self.goals.get_mut(&id)?.feedback.pop_front()
    }
}

/// A client's state shared by its goal handles: its followed goals, and the pump that
/// files what arrived on its status and feedback topics under them.
pub(crate) trait Follows {
    /// What a feedback message is kept as.
    type Feedback;
    /// Files the status and feedback messages that arrived (bounded per call).
    fn pump(&mut self);
    /// The goals followed.
    fn goals(&mut self) -> &mut ClientGoals<Self::Feedback>;
}

/// Locks a client's shared state; a panic in another holder does not make it unusable
/// (every update leaves it consistent).
pub(crate) fn lock<S>(m: &Mutex<S>) -> MutexGuard<'_, S> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// One goal followed through a client's shared state `S`. Dropping it stops following
/// the goal (the goal itself goes on).
pub(crate) struct Followed<S: Follows> {
    id: GoalId,
    shared: Arc<Mutex<S>>,
}

impl<S: Follows> Followed<S> {
    /// Follows a goal about to be sent (afresh: see [`ClientGoals::track_new`]).
    pub(crate) fn new_goal(shared: &Arc<Mutex<S>>, id: GoalId) -> Self {
        lock(shared).goals().track_new(id);
        Followed {
            id,
            shared: Arc::clone(shared),
        }
    }

    /// Follows goal `id` (sent by another handle) from now on.
    pub(crate) fn existing(shared: &Arc<Mutex<S>>, id: GoalId) -> Self {
        lock(shared).goals().track(id);
        Followed {
            id,
            shared: Arc::clone(shared),
        }
    }

    /// The goal's id.
    pub(crate) fn id(&self) -> GoalId {
        self.id
    }

    /// The client's shared state.
    pub(crate) fn shared(&self) -> &Arc<Mutex<S>> {
        &self.shared
    }

    /// The goal's latest known status (pumps first; never blocks).
    pub(crate) fn status(&self) -> GoalStatus {
        let mut sh = lock(&self.shared);
        sh.pump();
        sh.goals().status(self.id)
    }

    /// The goal's oldest unread feedback (pumps first; never blocks).
    pub(crate) fn feedback(&self) -> Option<S::Feedback> {
        let mut sh = lock(&self.shared);
        sh.pump();
        sh.goals().pop_feedback(self.id)
    }

    /// A status the server answered for the goal.
    pub(crate) fn note(&self, s: GoalStatus) {
        lock(&self.shared).goals().note(self.id, s);
    }
}

impl<S: Follows> Drop for Followed<S> {
    fn drop(&mut self) {
        lock(&self.shared).goals().forget(self.id);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_final_status_is_never_stepped_back_from() {
        let mut g = ClientGoals::<u8>::new();
        let id = GoalId(1);
        g.note(id, GoalStatus::Executing); // not followed: ignored
        assert!(!g.tracks(id));
        g.track(id);
        g.note(id, GoalStatus::Succeeded);
        g.note(id, GoalStatus::Executing); // late
        assert_eq!(g.status(id), GoalStatus::Succeeded);
        g.track(id); // already followed: kept as is
        assert_eq!(g.status(id), GoalStatus::Succeeded);
        g.track_new(id);
        assert_eq!(g.status(id), GoalStatus::Accepted);
    }

    #[test]
    fn unread_feedback_is_bounded_and_read_oldest_first() {
        let mut g = ClientGoals::<usize>::new();
        let id = GoalId(2);
        g.push_feedback(id, 0); // not followed: dropped
        g.track(id);
        for f in 0..FEEDBACK_KEPT + 3 {
            g.push_feedback(id, f);
        }
        assert_eq!(g.pop_feedback(id), Some(3));
        g.forget(id);
        assert_eq!(g.pop_feedback(id), None);
    }

    #[test]
    fn goal_ids_count_up_under_one_token() {
        let mut ids = GoalIds::new();
        let (a, b) = (ids.next_id(), ids.next_id());
        assert_eq!(a.hi(), b.hi());
        assert_eq!((a.lo(), b.lo()), (1, 2));
    }
}
