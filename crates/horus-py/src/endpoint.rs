//! The native state of an endpoint that Python can `close()`.
//!
//! Every endpoint class (topics, publishers, subscribers, services, actions,
//! parameter handles, tensor pools) keeps its Rust endpoint in an
//! [`Endpoint`]: one thread uses it at a time (a second thread gets a
//! `RuntimeError` rather than a deadlock with the GIL), and `close()` drops it
//! at once, so its shared-memory places are released then, not when the
//! garbage collector frees the Python object. Any use after `close()` raises
//! `horus.ClosedError`; `close()` again does nothing.
//!
//! A `close()` from another thread while a call is in progress (a `recv`
//! waiting for a message) marks the endpoint closed at once and the state is
//! dropped when that call lets go of it ([`Open`]'s `Drop`).

use std::ops::{Deref, DerefMut};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, MutexGuard, TryLockError};

use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;

use crate::errors::ClosedError;

/// Locks `m` for one call, refusing (`RuntimeError`) when another thread holds
/// it: waiting here could deadlock with the GIL that thread may wait for.
pub(crate) fn lock<'a, T: ?Sized>(m: &'a Mutex<T>, what: &str) -> PyResult<MutexGuard<'a, T>> {
    match m.try_lock() {
        Ok(g) => Ok(g),
        Err(TryLockError::WouldBlock) => Err(PyRuntimeError::new_err(format!(
            "this {what} is in use by another thread; make one {what} per thread"
        ))),
        Err(TryLockError::Poisoned(p)) => Ok(p.into_inner()),
    }
}

/// The error raised by any use of a closed endpoint.
pub(crate) fn closed_error(what: &str) -> PyErr {
    ClosedError::new_err(format!("this {what} is closed"))
}

/// An endpoint's Rust state, `None` once closed.
pub(crate) struct Endpoint<T> {
    state: Mutex<Option<T>>,
    /// Set by `close()`. Release/Acquire: a thread that sees it also sees
    /// that no new call may start (the state is taken by whoever holds it).
    closed: AtomicBool,
    /// What Python calls it, for the errors ("publisher", "service client").
    what: &'static str,
}

/// The state of an open endpoint, locked for one call. If the endpoint is
/// closed meanwhile (from another thread), the state is dropped when this
/// guard is.
pub(crate) struct Open<'a, T> {
    guard: MutexGuard<'a, Option<T>>,
    closed: &'a AtomicBool,
}

impl<T> Endpoint<T> {
    pub(crate) fn new(state: T, what: &'static str) -> Self {
        Endpoint {
            state: Mutex::new(Some(state)),
            closed: AtomicBool::new(false),
            what,
        }
    }

    /// The state for one call: `ClosedError` once closed, `RuntimeError` while
    /// another thread uses it.
    pub(crate) fn lock(&self) -> PyResult<Open<'_, T>> {
        if self.closed.load(Ordering::Acquire) {
            return Err(closed_error(self.what));
        }
        let guard = lock(&self.state, self.what)?;
        if guard.is_none() {
            return Err(closed_error(self.what));
        }
        Ok(Open {
            guard,
            closed: &self.closed,
        })
    }

    /// The state if it is open and free now; `None` otherwise (for `Drop`
    /// code, which may neither wait nor raise).
    pub(crate) fn try_lock(&self) -> Option<Result<Open<'_, T>, ()>> {
        let guard = match self.state.try_lock() {
            Ok(g) => g,
            Err(TryLockError::Poisoned(p)) => p.into_inner(),
            Err(TryLockError::WouldBlock) => return Some(Err(())),
        };
        guard.as_ref()?;
        Some(Ok(Open {
            guard,
            closed: &self.closed,
        }))
    }

    /// Closes the endpoint: its state is dropped now, or, while another
    /// thread is in a call on it, when that call returns. Idempotent.
    pub(crate) fn close(&self) {
        self.closed.store(true, Ordering::Release);
        let taken = match self.state.try_lock() {
            Ok(mut g) => g.take(),
            Err(TryLockError::Poisoned(p)) => p.into_inner().take(),
            // The holder drops it when it lets go (`Open::drop`).
            Err(TryLockError::WouldBlock) => None,
        };
        drop(taken);
    }

    /// Closes the endpoint now if `ready` accepts its state (which it may
    /// tidy first); `ready`'s error leaves it open. A closed endpoint stays
    /// closed (`Ok`). Refuses with `RuntimeError` while another thread uses it.
    pub(crate) fn close_if(&self, ready: impl FnOnce(&mut T) -> PyResult<()>) -> PyResult<()> {
        let mut guard = lock(&self.state, self.what)?;
        let Some(state) = guard.as_mut() else {
            return Ok(());
        };
        ready(state)?;
        self.closed.store(true, Ordering::Release);
        let taken = guard.take();
        drop(guard);
        drop(taken);
        Ok(())
    }

    /// Whether `close()` was called.
    pub(crate) fn is_closed(&self) -> bool {
        self.closed.load(Ordering::Acquire)
    }

    /// The flag `close()` sets, for a wait that runs without the GIL while
    /// it holds the state (it must return, letting go of the state, once
    /// the flag is set).
    pub(crate) fn closed_flag(&self) -> &AtomicBool {
        &self.closed
    }
}

impl<T> Deref for Open<'_, T> {
    type Target = T;

    fn deref(&self) -> &T {
        match self.guard.as_ref() {
            Some(t) => t,
            // `Endpoint::lock`/`try_lock` hand out an `Open` only for a
            // `Some` state, and only `Open::drop` or a holder of the lock
            // takes it: while this guard lives, nobody else can.
            None => unreachable!("an Open endpoint's state is present"),
        }
    }
}

impl<T> DerefMut for Open<'_, T> {
    fn deref_mut(&mut self) -> &mut T {
        match self.guard.as_mut() {
            Some(t) => t,
            // See `deref`.
            None => unreachable!("an Open endpoint's state is present"),
        }
    }
}

impl<T> Drop for Open<'_, T> {
    fn drop(&mut self) {
        // Acquire: pairs with the Release store of a `close()` that found the
        // lock held by us and left the state for us to drop.
        if self.closed.load(Ordering::Acquire) {
            drop(self.guard.take());
        }
    }
}
