//! `Loan`: a message written in place in shared memory, exported to Python as a
//! counted buffer.

use std::ffi::c_int;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use pyo3::ffi;
use pyo3::prelude::*;

use super::publisher::PubState;
use super::Publisher;
use crate::buffer::export;
use crate::dynamic::{self, DynPublisher};
use crate::errors::LoanViewsAliveError;

/// A message being written in place in shared memory. Export it as a buffer
/// (NumPy) to write the header and tail, then `send()` it, or `discard()`
/// it.
///
/// # Views never outlive the loan
///
/// Once sent, the memory belongs to the subscribers (Rust ones hold `&T`
/// into it); once discarded, to the pool, which recycles it for the next
/// loan. So no Python view of it may be writable afterwards. A buffer view
/// cannot be revoked (NumPy keeps the raw pointer), so the loan makes sure
/// none is alive instead:
///
/// * the memory is exported only through this object's buffer protocol,
///   and every export is counted (`__getbuffer__` +1, `__releasebuffer__`
///   −1). Any object that can reach the memory from Python — a NumPy
///   array, and every slice, reshape or `np.asarray` of it (they keep their
///   base array, hence its export, alive), a memoryview, a ctypes or
///   `Message` view — holds one export;
/// * `send()` and `discard()` refuse with `LoanViewsAliveError` while the
///   count is not zero, and the loan stays outstanding (its memory still
///   ours): a write through a live view lands in a message nobody reads yet;
/// * after `send()`/`discard()`, `__getbuffer__` refuses, so no new view
///   appears; with no view left, writing after the send is impossible;
/// * a `Loan` object freed while outstanding (its views hold references to
///   it, so none is alive then) discards its loan.
///
/// Counting is exact because exports and the check happen under the
/// publisher's lock; only raw addresses taken out of a view (`ctypes.data`)
/// escape it, and they are the caller's own unsafety.
#[pyclass(module = "horus._horus", frozen)]
pub(crate) struct Loan {
    pub(super) publisher: Py<Publisher>,
    /// Start of the loaned region (header, padding, tail).
    pub(super) addr: usize,
    pub(super) len: usize,
    pub(super) tail_offset: usize,
    pub(super) tail_len: usize,
    pub(super) id: u64,
    /// Buffer views of the region alive now.
    pub(super) exports: Arc<AtomicUsize>,
}

impl Loan {
    fn is_current(&self, st: &PubState) -> bool {
        st.loan_id == Some(self.id)
    }

    /// Refuses to give the memory up while views of it are alive.
    fn check_no_views(&self, py: Python<'_>, p: &Publisher, what: &str) -> PyResult<()> {
        // Acquire: pairs with the Release decrement in `__releasebuffer__`,
        // so the released views' writes happen before the memory is handed
        // on. Increments happen under the publisher lock, which we hold.
        let n = self.exports.load(Ordering::Acquire);
        if n == 0 {
            return Ok(());
        }
        let err = LoanViewsAliveError::new_err(format!(
            "topic {:?}: cannot {what} the loan: {n} view(s) of its memory are alive \
             (NumPy arrays or memoryviews made from it, e.g. `pts = msg.points`, and \
             their slices); writes through them after the {what} would reach memory \
             that is no longer ours. Delete them (`del pts`) first. The loan stays \
             outstanding (it is discarded when it and its views are freed).",
            p.topic
        ));
        // Setting an attribute on a fresh exception instance cannot fail.
        let _ = err.value(py).setattr("views", n);
        Err(err)
    }
}

#[pymethods]
impl Loan {
    /// Where the tail starts in the buffer.
    #[getter]
    fn tail_offset(&self) -> usize {
        self.tail_offset
    }

    /// Bytes of tail.
    #[getter]
    fn tail_len(&self) -> usize {
        self.tail_len
    }

    /// Whether the loan is still outstanding (not sent nor discarded, and
    /// its publisher not closed).
    #[getter]
    fn active(&self, py: Python<'_>) -> PyResult<bool> {
        let p = self.publisher.bind(py).get();
        if p.inner.is_closed() {
            return Ok(false);
        }
        Ok(self.is_current(&*p.state()?))
    }

    /// Buffer views of the loaned memory alive now.
    #[getter]
    fn views(&self) -> usize {
        self.exports.load(Ordering::Relaxed)
    }

    /// Publishes the loan. Raises LoanViewsAliveError while views of it
    /// are alive, and the SendError on refusal (history full, timeout); the
    /// loan then stays outstanding.
    fn send(&self, py: Python<'_>) -> PyResult<u32> {
        let p = self.publisher.bind(py).get();
        let mut st = p.state()?;
        if !self.is_current(&st) {
            return Err(p.err(dynamic::SendFailure::NoLoan));
        }
        self.check_no_views(py, p, "send")?;
        // While we hold `st`, no view can be made (`__getbuffer__` takes
        // the same lock), also while the GIL is released below.
        let r = if p.blocks {
            let inner: &mut dyn DynPublisher = &mut *st.publisher;
            py.detach(|| inner.send_loan())
        } else {
            st.publisher.send_loan()
        };
        let n = r.map_err(|e| p.err(e))?;
        st.end_loan();
        Ok(n)
    }

    /// Returns the memory to the pool unsent (no-op if already sent).
    /// Raises LoanViewsAliveError while views of it are alive (the pool
    /// would hand it to the next loan); the loan then stays outstanding.
    fn discard(&self, py: Python<'_>) -> PyResult<()> {
        let p = self.publisher.bind(py).get();
        let mut st = p.state()?;
        if self.is_current(&st) {
            self.check_no_views(py, p, "discard")?;
            st.publisher.drop_loan();
            st.end_loan();
        }
        Ok(())
    }

    unsafe fn __getbuffer__(
        slf: Bound<'_, Self>,
        view: *mut ffi::Py_buffer,
        flags: c_int,
    ) -> PyResult<()> {
        let this = slf.get();
        let p = this.publisher.bind(slf.py()).get();
        let st = p.state()?;
        if !this.is_current(&st) {
            return Err(p.err(dynamic::SendFailure::NoLoan));
        }
        // SAFETY: the region is loaned memory of the publisher (its staging
        // buffer or a chunk of the mapped channel). It stays mapped while the
        // publisher lives, which the view guarantees through its reference
        // to this loan (which references the publisher). It is writable and
        // stays ours while the view lives: send and discard refuse while
        // `exports` (incremented below, under the same lock) is not zero.
        unsafe {
            export(
                slf.as_any(),
                view,
                this.addr as *mut u8,
                this.len,
                false,
                flags,
            )?;
        }
        // Relaxed: increments are ordered with the check in
        // `check_no_views` by the publisher lock held here.
        this.exports.fetch_add(1, Ordering::Relaxed);
        drop(st);
        Ok(())
    }

    unsafe fn __releasebuffer__(&self, _view: *mut ffi::Py_buffer) {
        // Release: the view's accesses to the memory happen before a send
        // or discard that sees the decremented count (Acquire there).
        // Called once per successful `__getbuffer__`, so this never wraps.
        self.exports.fetch_sub(1, Ordering::Release);
    }
}

impl Drop for Loan {
    /// A loan freed unsent goes back to the pool. Its views reference this
    /// object, so none is alive now.
    fn drop(&mut self) {
        // `get` needs no GIL (frozen, Sync), and Drop may run without it.
        let p = self.publisher.get();
        let mut st = match p.inner.try_lock() {
            Some(Ok(st)) => st,
            // The publisher is closed: its loan went with it.
            None => return,
            // Another thread holds the publisher (and may wait for the GIL
            // we may hold): leave the id for its next `state()` to discard.
            // Release: pairs with the Acquire swap in `Publisher::state`.
            Some(Err(())) => {
                p.abandoned.store(self.id, Ordering::Release);
                return;
            }
        };
        if self.is_current(&st) {
            st.publisher.drop_loan();
            st.end_loan();
        }
    }
}
