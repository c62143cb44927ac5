//! Subscribers as [`Readiness`] sources for event-driven nodes.

use std::sync::Arc;
use std::time::Duration;

use horus_msgs::Message;
use horus_sched::Readiness;
use horus_shm::SubPlace;

use crate::Subscriber;

impl<T: Message> Subscriber<T> {
    /// Whether a message is waiting, without receiving it: the next
    /// `try_recv` will almost surely return one (a slot found corrupt, or a
    /// message overwritten under `DropOldest` in between, is counted and
    /// skipped instead). Copies nothing; a few loads per publisher place.
    pub fn has_pending(&self) -> bool {
        self.port().has_pending()
    }

    /// A [`Readiness`] source that is ready while this subscriber has a
    /// message waiting: give it to
    /// [`NodeConfig::event`](horus_sched::NodeConfig::event) and let the
    /// node own the subscriber. It watches this subscriber's cursor, so it
    /// becomes not-ready as the node consumes; the node ticks once per
    /// message if each tick receives one (a tick that drains everything
    /// makes later ones unnecessary, and they do not happen).
    ///
    /// Its `wait` sleeps on the topic's futex (woken by any publisher, in
    /// any process) when the subscriber was made with
    /// [`WaitMode::Futex`](crate::WaitMode::Futex), the default; for a
    /// [`WaitMode::BusyPoll`](crate::WaitMode::BusyPoll) subscriber it
    /// re-checks every millisecond.
    ///
    /// The handle keeps the subscriber's place on the topic reserved (not
    /// its cursor moving) until it is dropped too.
    pub fn readiness(&self) -> SubscriberReadiness {
        SubscriberReadiness {
            place: Arc::clone(self.port().place()),
        }
    }
}

/// Ready while a subscriber has a message waiting; see
/// [`Subscriber::readiness`]. Cheap to clone; clones watch the same cursor.
#[derive(Clone, Debug)]
pub struct SubscriberReadiness {
    place: Arc<SubPlace>,
}

impl SubscriberReadiness {
    /// Whether a message is waiting (same as [`Subscriber::has_pending`]).
    pub fn has_pending(&self) -> bool {
        self.place.has_pending()
    }
}

impl Readiness for SubscriberReadiness {
    fn ready(&self) -> bool {
        self.place.has_pending()
    }

    fn wait(&self, timeout: Duration) -> bool {
        self.place.wait_pending(timeout)
    }
}

/// A subscriber is itself a readiness source (ready = a message is
/// waiting). Useful when something else than the node reads it; a node that
/// owns its subscriber uses [`Subscriber::readiness`] instead.
impl<T: Message> Readiness for Subscriber<T> {
    fn ready(&self) -> bool {
        self.has_pending()
    }

    fn wait(&self, timeout: Duration) -> bool {
        self.port().place().wait_pending(timeout)
    }
}
