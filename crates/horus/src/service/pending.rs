//! A call in flight: the handle [`Client::call_async`](super::Client::call_async)
//! returns.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use horus_msgs::Message;

use super::client::{lock, wait_or_stop};
use super::client_core::{ClientCore, Started};
use super::error::CallError;
use super::table::ClientCounter;
use crate::Sample;

/// A call in flight. Take its result with [`PendingCall::try_result`]
/// (never blocks) or [`PendingCall::wait`]. Its timeout is in force whether
/// or not anyone waits: once it passes, the call is withdrawn and its
/// result is [`CallError::Timeout`]. Dropping the handle before taking the
/// result withdraws the call (counted as `cancelled`; a response that still
/// comes is discarded and counted as `late`).
pub struct PendingCall<Resp> {
    core: Arc<Mutex<ClientCore<Sample<Resp>>>>,
    id: u64,
    deadline: Instant,
    /// See [`Started::quiet_until`].
    quiet_until: Option<Duration>,
    timeout: Duration,
    taken: bool,
}

impl<Resp: Message> PendingCall<Resp> {
    /// The handle on call `started`, whose timeout counts from its send.
    pub(crate) fn new(
        core: Arc<Mutex<ClientCore<Sample<Resp>>>>,
        started: Started,
        timeout: Duration,
    ) -> Self {
        PendingCall {
            core,
            id: started.id,
            deadline: started.sent + timeout,
            quiet_until: started.quiet_until(timeout),
            timeout,
            taken: false,
        }
    }

    /// The call's result if it is settled: the response, or why there is
    /// none (timeout passed, server died, no server, …). `None` while the
    /// call is still in flight. After a result was returned once, further
    /// calls return [`CallError::Taken`].
    pub fn try_result(&mut self) -> Option<Result<Sample<Resp>, CallError>> {
        if self.taken {
            return Some(Err(CallError::Taken));
        }
        let mut core = lock(&self.core);
        // The common empty poll returns here without moving a result value
        // (see `ClientCore::still_waiting`).
        if core.still_waiting(self.id, self.deadline, self.quiet_until) {
            return None;
        }
        let r = core.settle(self.id, self.deadline, self.timeout);
        drop(core);
        self.taken = r.is_some();
        r
    }

    /// Waits at most `timeout` (from now) for the result. On expiry the
    /// call is withdrawn: [`CallError::Timeout`].
    pub fn wait(self, timeout: Duration) -> Result<Sample<Resp>, CallError> {
        self.wait_or_stop(timeout, || false)
    }

    /// [`PendingCall::wait`], asking `stop` every few milliseconds while it waits (between
    /// the wait's own slices: no extra wake-ups); once `stop` says so, the call is
    /// withdrawn and the result is [`CallError::Stopped`]. For a binding whose `close()`
    /// from another thread must end a wait in progress.
    pub fn wait_or_stop(
        mut self,
        timeout: Duration,
        stop: impl Fn() -> bool,
    ) -> Result<Sample<Resp>, CallError> {
        if self.taken {
            return Err(CallError::Taken);
        }
        self.taken = true;
        let deadline = Instant::now() + timeout;
        wait_or_stop(&self.core, self.id, deadline, timeout, stop)
    }

    /// The call's id (unique per client).
    pub fn id(&self) -> u64 {
        self.id
    }
}

impl<Resp> Drop for PendingCall<Resp> {
    fn drop(&mut self) {
        if !self.taken {
            lock(&self.core).withdraw(self.id, ClientCounter::Cancelled);
        }
    }
}
