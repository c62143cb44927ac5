//! A server as a readiness source for the scheduler's event-driven nodes:
//! ready while a request record is waiting for it.

use std::sync::Arc;
use std::time::Duration;

use horus_msgs::Message;
use horus_sched::Readiness;
use horus_shm::SubPlace;

use super::Server;

/// Ready while a server has a request record waiting; see
/// [`Server::readiness`]. Cheap to clone.
#[derive(Clone, Debug)]
pub struct ServerReadiness {
    place: Arc<SubPlace>,
}

impl ServerReadiness {
    /// Whether a request record is waiting (same as [`Server::has_pending`]).
    pub fn has_pending(&self) -> bool {
        self.place.has_pending()
    }
}

impl Readiness for ServerReadiness {
    fn ready(&self) -> bool {
        self.place.has_pending()
    }

    fn wait(&self, timeout: Duration) -> bool {
        self.place.wait_pending(timeout)
    }
}

impl<Req: Message, Resp: Message> Server<Req, Resp> {
    /// A [`Readiness`] source that is ready while this server has a request
    /// record waiting (it sleeps on the request channel's futex), for a
    /// node that owns the server and answers in its tick. With several
    /// servers, a record another server takes first makes it ready once for
    /// nothing (`try_recv` then returns `None`). The handle keeps the
    /// server's subscription reserved until it is dropped too.
    pub fn readiness(&self) -> ServerReadiness {
        ServerReadiness {
            place: Arc::clone(self.port().place()),
        }
    }
}
