//! The calls a service client has in flight, so that its `close()`
//! withdraws them.
//!
//! A Rust `PendingCall` keeps its client's state (and so the client's place
//! in the service) alive until it is dropped. `Client.close()` must release
//! that place now and withdraw the calls, as its documentation says: it
//! drops every `PendingCall` not in use, and a thread waiting on one (in
//! `call()` or `PendingCall.wait()`) sees [`InFlight::is_closed`] within a
//! polling slice and drops its call itself.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError, TryLockError, Weak};

use crate::dyn_service::DynPending;

/// A call in flight as a Python `PendingCall` holds it: `None` once its
/// result was taken or it was withdrawn.
pub(crate) type Call = Mutex<Option<Box<dyn DynPending>>>;

/// A [`Call`] shared by its `PendingCall` and its client's [`InFlight`].
pub(crate) type Slot = Arc<Call>;

/// The `PendingCall`s of one client, and whether the client was closed.
#[derive(Default)]
pub(crate) struct InFlight {
    /// Set by [`close`](Self::close), under `calls`'s lock. Release/Acquire:
    /// a waiter that sees it drops its call.
    closed: AtomicBool,
    calls: Mutex<Vec<Weak<Call>>>,
}

impl InFlight {
    /// Keeps `slot` for `close()`; `false` (the caller drops the call) if
    /// the client was closed meanwhile.
    pub(crate) fn register(&self, slot: &Slot) -> bool {
        let mut calls = self.calls.lock().unwrap_or_else(PoisonError::into_inner);
        if self.closed.load(Ordering::Acquire) {
            return false;
        }
        // Calls settled and dropped since go, so the list stays as long as
        // the calls alive.
        calls.retain(|w| w.strong_count() > 0);
        calls.push(Arc::downgrade(slot));
        true
    }

    /// Whether the client was closed: its calls are withdrawn.
    pub(crate) fn is_closed(&self) -> bool {
        self.closed.load(Ordering::Acquire)
    }

    /// Withdraws every call in flight: each one not in use is dropped now,
    /// one a thread waits on is dropped by that thread (it sees `closed`).
    pub(crate) fn close(&self) {
        let calls = {
            let mut calls = self.calls.lock().unwrap_or_else(PoisonError::into_inner);
            self.closed.store(true, Ordering::Release);
            std::mem::take(&mut *calls)
        };
        for slot in calls.iter().filter_map(Weak::upgrade) {
            let taken = match slot.try_lock() {
                Ok(mut g) => g.take(),
                Err(TryLockError::Poisoned(p)) => p.into_inner().take(),
                // A thread is in a call on it; it drops it on seeing `closed`.
                Err(TryLockError::WouldBlock) => None,
            };
            drop(taken);
        }
    }
}
