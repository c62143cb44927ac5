//! Loans of ROS 2 messages: a message encoded in place in a loaned chunk, its large
//! primitive arrays (`PointCloud2.data`, `Image.data`, `LaserScan.ranges`) handed to
//! Python as writable NumPy views of the chunk, filled there and sent without a copy.
//!
//! # How a loan goes
//!
//! * `RosPublisher.loan(types, msg, lengths)`: every field named in `lengths` (a
//!   primitive array, not `bool`) gets a [`LoanedArray`] of that many elements in `msg`
//!   (the Python package's own copy of the user's message); the message is measured
//!   (every encoding rule checked: bounds, fixed lengths, strings), a chunk is loaned and
//!   the message is encoded into it, the loaned arrays' bytes left as the chunk held them
//!   (as `numpy.empty`). Each loaned field then becomes a writable NumPy view of its
//!   elements in the chunk.
//! * `RosLoan.send(types, msg)`: the views in the loaned fields are replaced by
//!   [`LoanedArray`]s saying where their elements are (so the message holds no view),
//!   then, with no view of the chunk left alive (see "Views" below), `msg` is encoded
//!   again into the chunk — any field changed since the loan is sent as it is now —
//!   skipping the loaned arrays' bytes, already in place. If a string grew and moved
//!   them, the body is laid out in a buffer of its own first (one copy) and copied in.
//!   Then the chunk is published with the body's length.
//!
//! # Views
//!
//! The chunk is exported through [`RosLoan`]'s buffer protocol only, and every export
//! is counted, as for fixed-layout loans (`py_topic::Loan`): each view made here holds
//! one (a memoryview is its base), and so does any slice, reshape or `np.asarray` of
//! it. `send` and `discard` refuse with `LoanViewsAliveError` while any is alive (the
//! loan stays outstanding and the message's views are put back); after them the buffer
//! protocol refuses, so no view of the sent (or recycled) chunk can write into it. The
//! message's loaned fields become empty read-only arrays then: the data went with the
//! message. A `RosLoan` freed while outstanding gives its chunk back (its views
//! reference it, so none is alive then); so does closing the publisher, which refuses
//! while views are alive (their memory must stay mapped).

use std::ffi::c_int;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use horus::inspect::RawPublisher;
use horus_idl::{ArrayKind, Primitive};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyMemoryView, PyString};

use super::decode::{dtype_index, DTYPES};
use super::encode::{fail, Enc, Sink, HEADER};
use super::errors::{CodecResult, Failure};
use super::plan::{byte_like, prim_size, Elem};
use super::pybuf::ContiguousBuf;
use super::topic::RosPublisher;
use super::RosTypes;
use crate::buffer::export;
use crate::dynamic::SendFailure;
use crate::endpoint::Open;
use crate::errors::LoanViewsAliveError;

/// Bytes before the CDR body in a chunk (4 reserved, then the encapsulation header).
pub(crate) const FRAME: usize = 8;

/// A ROS publisher's state: the raw publisher and its outstanding loan.
pub(crate) struct RosPubState {
    pub(crate) raw: RawPublisher,
    /// Id of the outstanding loan, if any (ids start at 1).
    loan_id: Option<u64>,
    /// Buffer views of the outstanding loan alive now (its `RosLoan`'s count).
    loan_views: Option<Arc<AtomicUsize>>,
    next_loan: u64,
}

impl RosPubState {
    pub(crate) fn new(raw: RawPublisher) -> Self {
        RosPubState {
            raw,
            loan_id: None,
            loan_views: None,
            next_loan: 1,
        }
    }

    /// Forgets the outstanding loan (sent, or its chunk given back).
    fn end_loan(&mut self) {
        self.loan_id = None;
        self.loan_views = None;
    }

    /// Gives back the loan `id` if it is the outstanding one (its `RosLoan` was freed).
    pub(crate) fn discard_abandoned(&mut self, id: u64) {
        if self.loan_id == Some(id) {
            self.raw.drop_loan();
            self.end_loan();
        }
    }

    /// Gives back the outstanding loan before the publisher closes; refuses while views
    /// of it are alive (their memory must stay mapped).
    pub(crate) fn close_loan(&mut self, topic: &str) -> PyResult<()> {
        if self.loan_id.is_none() {
            return Ok(());
        }
        // Acquire: pairs with the Release decrement of `__releasebuffer__`; increments
        // happen under the publisher lock, which the caller holds.
        let views = self
            .loan_views
            .as_ref()
            .map_or(0, |v| v.load(Ordering::Acquire));
        if views != 0 {
            return Err(LoanViewsAliveError::new_err(format!(
                "topic {topic:?}: cannot close the publisher: {views} view(s) of its \
                 outstanding loan's memory are alive; delete them first"
            )));
        }
        self.raw.drop_loan();
        self.end_loan();
        Ok(())
    }
}

/// A loaned primitive array standing in a message's field while its loan is encoded:
/// its `count` elements are in the loan's chunk at `src` (from the body's first byte),
/// or, when a loan is made, still to be placed. Made only by the loan itself.
#[pyclass(module = "horus._horus", frozen)]
pub(crate) struct LoanedArray {
    pub(crate) loan: u64,
    /// Which loaned field it belongs to (index into the loan's slots).
    pub(crate) slot: usize,
    pub(crate) src: Option<usize>,
    pub(crate) count: usize,
    pub(crate) prim: Primitive,
}

#[pymethods]
impl LoanedArray {
    fn __repr__(&self) -> String {
        format!(
            "<LoanedArray {}[{}] of a loan>",
            self.prim.msg_name(),
            self.count
        )
    }
}

/// Where a loaned array goes in the body being encoded.
struct Placed {
    slot: usize,
    pos: usize,
    count: usize,
    /// Where its bytes are now (`None`: not written yet).
    src: Option<usize>,
}

/// The first pass: measures the body and finds every encoding error (as `Counter`),
/// recording where each array of loan `loan` goes.
struct Plan {
    pos: usize,
    loan: u64,
    placed: Vec<Placed>,
}

impl Sink for Plan {
    fn pos(&self) -> usize {
        self.pos
    }

    fn put_with(&mut self, n: usize, _fill: impl FnOnce(&mut [u8])) -> CodecResult<()> {
        self.pos = self
            .pos
            .checked_add(n)
            .ok_or_else(|| fail("too_long", "message larger than the address space"))?;
        Ok(())
    }

    fn put_loaned(&mut self, a: &LoanedArray, n: usize) -> CodecResult<()> {
        if a.loan != self.loan {
            return Err(fail(
                "wrong_type",
                "an array of another loan (a loan's arrays travel only in its own message)",
            ));
        }
        self.placed.push(Placed {
            slot: a.slot,
            pos: self.pos,
            count: a.count,
            src: a.src,
        });
        self.put_with(n, |_| {})
    }
}

/// The second pass, when every loaned array is where it goes (or not written yet):
/// writes the body into the chunk, leaving the loaned arrays' bytes as they are.
struct InPlace {
    /// The body's first byte in the chunk, `cap` bytes ours alone (see `encode_body`).
    body: *mut u8,
    cap: usize,
    pos: usize,
}

impl Sink for InPlace {
    fn pos(&self) -> usize {
        self.pos
    }

    fn put_with(&mut self, n: usize, fill: impl FnOnce(&mut [u8])) -> CodecResult<()> {
        if self.pos.checked_add(n).is_none_or(|end| end > self.cap) {
            return Err(changed());
        }
        // SAFETY: `pos + n <= cap` (checked above), so the range is in the body, which
        // is ours alone while we encode (`encode_body`'s contract); the slice lives only
        // for this call, and nothing else references the chunk meanwhile.
        fill(unsafe { std::slice::from_raw_parts_mut(self.body.add(self.pos), n) });
        self.pos += n;
        Ok(())
    }

    fn put_loaned(&mut self, a: &LoanedArray, n: usize) -> CodecResult<()> {
        if a.src.is_some_and(|s| s != self.pos) {
            return Err(changed());
        }
        if self.pos.checked_add(n).is_none_or(|end| end > self.cap) {
            return Err(changed());
        }
        self.pos += n;
        Ok(())
    }
}

/// The second pass when a loaned array moved (a string before it changed length, an
/// array placed in another loaned field): the body is written into a buffer of its own,
/// the loaned arrays copied from where they are in the chunk, then copied in whole.
struct Relayout {
    out: Vec<u8>,
    /// The chunk's body (read only here; see `encode_body`).
    body: *const u8,
    cap: usize,
}

impl Sink for Relayout {
    fn pos(&self) -> usize {
        self.out.len()
    }

    fn put_with(&mut self, n: usize, fill: impl FnOnce(&mut [u8])) -> CodecResult<()> {
        let start = self.out.len();
        if start.checked_add(n).is_none_or(|end| end > self.cap) {
            return Err(changed());
        }
        self.out.resize(start + n, 0);
        fill(&mut self.out[start..]);
        Ok(())
    }

    fn put_loaned(&mut self, a: &LoanedArray, n: usize) -> CodecResult<()> {
        let Some(src) = a.src else {
            // Not written yet: nothing to carry over.
            return self.put_with(n, |_| {});
        };
        if src.checked_add(n).is_none_or(|end| end > self.cap) {
            return Err(changed());
        }
        // SAFETY: `src + n <= cap` (checked above): in the body, which nothing writes
        // while we encode (`encode_body`'s contract); `out` is our own buffer.
        let bytes = unsafe { std::slice::from_raw_parts(self.body.add(src), n) };
        self.put_with(n, |out| out.copy_from_slice(bytes))
    }
}

fn changed() -> Failure {
    fail(
        "changed",
        "the message changed while it was being encoded (changed by another thread?)",
    )
}

/// What `encode_body` made.
enum Encoded {
    /// The body's length and where each loaned array now is.
    Done(usize, Vec<Placed>),
    /// The body needs this many bytes, more than the chunk holds; nothing written.
    TooLarge(usize),
}

/// Encodes `obj` (structure `idx`) as the body of loan `loan` at `body` (`cap` bytes).
///
/// # Safety
/// `body..body + cap` is loaned memory exclusively ours for the whole call: no Python
/// view of it is alive and none can be made meanwhile (the caller holds the publisher
/// lock, which the loan's buffer export takes).
unsafe fn encode_body(
    codec: &super::Codec,
    idx: usize,
    obj: &Bound<'_, PyAny>,
    loan: u64,
    body: *mut u8,
    cap: usize,
) -> CodecResult<Encoded> {
    let mut plan = Enc {
        plans: &codec.plans,
        sink: Plan {
            pos: 0,
            loan,
            placed: Vec::new(),
        },
    };
    plan.structure(idx, obj, 0)?;
    let Plan {
        pos: len, placed, ..
    } = plan.sink;
    if len > cap {
        return Ok(Encoded::TooLarge(len));
    }
    let in_place = placed.iter().all(|p| p.src.is_none_or(|s| s == p.pos));
    let written = if in_place {
        let mut w = Enc {
            plans: &codec.plans,
            sink: InPlace { body, cap, pos: 0 },
        };
        w.structure(idx, obj, 0)?;
        w.sink.pos
    } else {
        let mut w = Enc {
            plans: &codec.plans,
            sink: Relayout {
                out: Vec::with_capacity(len),
                body,
                cap,
            },
        };
        w.structure(idx, obj, 0)?;
        let out = w.sink.out;
        // SAFETY: `out.len() <= cap` (Relayout checks every write); the body is ours
        // alone (the contract) and `out` is a buffer of our own, so they do not overlap.
        unsafe { std::ptr::copy_nonoverlapping(out.as_ptr(), body, out.len()) };
        out.len()
    };
    if written != len {
        return Err(changed());
    }
    Ok(Encoded::Done(len, placed))
}

/// One loaned field.
struct Slot {
    /// The Python attribute.
    attr: Py<PyString>,
    prim: Primitive,
}

/// A ROS 2 message being written in place in a loaned chunk (see the module's docs).
#[pyclass(module = "horus._horus", frozen)]
pub(crate) struct RosLoan {
    publisher: Py<RosPublisher>,
    id: u64,
    /// Address of the CDR body in the chunk (8-byte aligned), and the bytes it may take.
    body: usize,
    cap: usize,
    /// Buffer views of the chunk alive now.
    exports: Arc<AtomicUsize>,
    type_name: String,
    slots: Vec<Slot>,
    /// Per slot: where its elements are in the body now, and how many.
    layout: Mutex<Vec<(usize, usize)>>,
}

/// Read-only empty arrays, one per dtype (what a loaned field holds once its data went
/// with the message).
static SPENT: PyOnceLock<Vec<Py<PyAny>>> = PyOnceLock::new();

fn spent(py: Python<'_>, p: Primitive) -> PyResult<Bound<'_, PyAny>> {
    let arrays = SPENT.get_or_try_init(py, || -> PyResult<Vec<Py<PyAny>>> {
        let np = py.import("numpy")?;
        DTYPES
            .iter()
            .chain(std::iter::once(&"<f8"))
            .map(|d| {
                let a = np.call_method1("empty", (0, *d))?;
                a.call_method1("setflags", (false,))?;
                Ok(a.unbind())
            })
            .collect()
    })?;
    Ok(arrays[dtype_index(p)].bind(py).clone())
}

impl RosLoan {
    fn is_current(&self, st: &RosPubState) -> bool {
        st.loan_id == Some(self.id)
    }

    fn layout(&self) -> std::sync::MutexGuard<'_, Vec<(usize, usize)>> {
        match self.layout.lock() {
            Ok(g) => g,
            Err(p) => p.into_inner(),
        }
    }

    /// A writable NumPy view of `count` elements at `pos` of the body (one counted
    /// export: its base is a memoryview of this loan).
    fn view<'py>(
        slf: &Bound<'py, Self>,
        types: &RosTypes,
        prim: Primitive,
        pos: usize,
        count: usize,
    ) -> PyResult<Bound<'py, PyAny>> {
        let py = slf.py();
        let this = slf.get();
        // Counted by `__getbuffer__`, which refuses once the loan is over.
        let mv = PyMemoryView::from(slf.as_any())?;
        let end = count
            .checked_mul(prim_size(prim))
            .and_then(|n| n.checked_add(pos));
        if end.is_none_or(|e| e > this.cap) {
            return Err(PyValueError::new_err("loaned array past the chunk"));
        }
        let dtype = types.refs().dtypes[dtype_index(prim)].bind(py);
        // SAFETY: `pos + count × size <= cap` (checked above), in the body, which stays
        // mapped and ours while the loan is outstanding; `mv` (the array's base) holds
        // an export of the loan, so `send`/`discard` refuse while the array lives, and
        // only Python writes it meanwhile.
        unsafe {
            types
                .refs()
                .ndarray
                .view_mut(dtype, count, (this.body + pos) as *mut u8, mv.as_any())
        }
    }

    /// Puts the views into `msg`'s loaned fields that still hold this loan's markers.
    fn restore_views(slf: &Bound<'_, Self>, types: &RosTypes, msg: &Bound<'_, PyAny>) {
        let py = slf.py();
        let this = slf.get();
        let layout = this.layout().clone();
        for (i, slot) in this.slots.iter().enumerate() {
            let attr = slot.attr.bind(py);
            let ours = msg
                .getattr(attr)
                .ok()
                .and_then(|v| {
                    v.cast::<LoanedArray>()
                        .ok()
                        .map(|a| a.get().loan == this.id)
                })
                .unwrap_or(false);
            if !ours {
                continue;
            }
            let (pos, count) = layout[i];
            if let Ok(v) = Self::view(slf, types, slot.prim, pos, count) {
                let _ = msg.setattr(attr, v);
            }
        }
    }

    /// Replaces this loan's markers in `msg` by read-only empty arrays.
    fn spend(&self, py: Python<'_>, msg: &Bound<'_, PyAny>) -> PyResult<()> {
        for slot in &self.slots {
            let attr = slot.attr.bind(py);
            let Ok(v) = msg.getattr(attr) else { continue };
            if v.cast::<LoanedArray>()
                .is_ok_and(|a| a.get().loan == self.id)
            {
                msg.setattr(attr, spent(py, slot.prim)?)?;
            }
        }
        Ok(())
    }

    /// Replaces the views of this loan in `msg`'s loaned fields (any C-contiguous array
    /// of the field's element size lying in the body) by markers saying where their
    /// elements are, so the message holds no view. Fields holding anything else are
    /// left alone.
    fn take_views(&self, py: Python<'_>, msg: &Bound<'_, PyAny>) -> PyResult<()> {
        for (i, slot) in self.slots.iter().enumerate() {
            let attr = slot.attr.bind(py);
            let v = msg.getattr(attr)?;
            if v.cast::<LoanedArray>().is_ok() || v.is_instance_of::<PyString>() {
                continue;
            }
            let Some(buf) = ContiguousBuf::get(&v) else {
                continue;
            };
            let bytes = buf.bytes();
            let size = prim_size(slot.prim);
            let start = bytes.as_ptr() as usize;
            let inside = start >= self.body
                && start
                    .checked_add(bytes.len())
                    .is_some_and(|e| e <= self.body + self.cap);
            let fits = (buf.itemsize() == size || byte_like(slot.prim))
                && (start - self.body.min(start)).is_multiple_of(size)
                && bytes.len().is_multiple_of(size);
            if !(inside && fits) || bytes.is_empty() {
                continue;
            }
            let marker = LoanedArray {
                loan: self.id,
                slot: i,
                src: Some(start - self.body),
                count: bytes.len() / size,
                prim: slot.prim,
            };
            drop(buf);
            drop(v);
            msg.setattr(attr, Bound::new(py, marker)?)?;
        }
        Ok(())
    }

    /// Refuses to give the memory up while views of it are alive.
    fn check_no_views(&self, py: Python<'_>, topic: &str, what: &str) -> PyResult<()> {
        // Acquire: pairs with the Release decrement in `__releasebuffer__`, so the
        // released views' writes happen before the memory is handed on. Increments
        // happen under the publisher lock, which the caller holds.
        let n = self.exports.load(Ordering::Acquire);
        if n == 0 {
            return Ok(());
        }
        let err = LoanViewsAliveError::new_err(format!(
            "topic {topic:?}: cannot {what} the loan: {n} view(s) of its memory are alive \
             (NumPy arrays made from the loaned message's arrays, e.g. `d = msg.data`, and \
             their slices, or arrays of the loan put in other fields); writes through them \
             after the {what} would reach memory that is no longer ours. Delete them \
             (`del d`) first. The loan stays outstanding."
        ));
        // Setting an attribute on a fresh exception instance cannot fail.
        let _ = err.value(py).setattr("views", n);
        Err(err)
    }

    /// Encodes `msg` into the chunk and publishes it; the caller holds `st`.
    fn send_locked(
        &self,
        py: Python<'_>,
        p: &RosPublisher,
        st: &mut Open<'_, RosPubState>,
        types: &RosTypes,
        msg: &Bound<'_, PyAny>,
    ) -> PyResult<u32> {
        if !self.is_current(st) {
            return Err(p.err(SendFailure::NoLoan));
        }
        self.check_no_views(py, &p.topic, "send")?;
        let codec = types.codec();
        let idx = RosTypes::index(&codec, &self.type_name)?;
        // SAFETY: the body is the outstanding loan's (checked above), and no view of it
        // is alive (checked above) nor can be made while we hold `st`, which
        // `__getbuffer__` takes.
        let r = unsafe { encode_body(&codec, idx, msg, self.id, self.body as *mut u8, self.cap) };
        let len = match r.map_err(|e| e.into_py(py, &self.type_name))? {
            Encoded::TooLarge(size) => {
                return Err(p.err(SendFailure::TooLarge {
                    requested: Some(size),
                    max: self.cap,
                }))
            }
            Encoded::Done(len, placed) => {
                let mut layout = self.layout();
                for pl in placed {
                    layout[pl.slot] = (pl.pos, pl.count);
                }
                len
            }
        };
        let raw: &mut RawPublisher = &mut st.raw;
        let r = if p.blocks {
            py.detach(|| raw.send_loan(FRAME + len))
        } else {
            raw.send_loan(FRAME + len)
        };
        let n = r.map_err(|e| p.err(super::topic::send_failure(e)))?;
        st.end_loan();
        Ok(n)
    }
}

#[pymethods]
impl RosLoan {
    /// Whether the loan is still outstanding (not sent nor discarded, and its
    /// publisher not closed).
    #[getter]
    fn active(&self, py: Python<'_>) -> PyResult<bool> {
        let p = self.publisher.bind(py).get();
        if p.closed() {
            return Ok(false);
        }
        Ok(self.is_current(&*p.state()?))
    }

    /// Buffer views of the loaned memory alive now.
    #[getter]
    fn views(&self) -> usize {
        self.exports.load(Ordering::Relaxed)
    }

    /// The loaned fields: (attribute, offset of the elements in the CDR body, count).
    #[getter]
    fn fields(&self, py: Python<'_>) -> Vec<(String, usize, usize)> {
        let layout = self.layout();
        self.slots
            .iter()
            .zip(layout.iter())
            .map(|(s, &(pos, count))| (s.attr.bind(py).to_string(), pos, count))
            .collect()
    }

    /// Encodes `msg` (this loan's message: its loaned fields hold the views this loan
    /// made) into the chunk, its loaned arrays staying where they are, and publishes it.
    /// Returns the subscribers reached. Raises LoanViewsAliveError while other views of
    /// the chunk are alive, CdrEncodeError, LoanError (too large, or the loan is over)
    /// and the SendError on refusal; the loan then stays outstanding and `msg`'s loaned
    /// fields hold their views again. Once sent, they hold empty read-only arrays.
    fn send(slf: &Bound<'_, Self>, types: &RosTypes, msg: &Bound<'_, PyAny>) -> PyResult<u32> {
        let py = slf.py();
        let this = slf.get();
        let p = this.publisher.bind(py).get();
        this.take_views(py, msg)?;
        let r = {
            let mut st = p.state()?;
            this.send_locked(py, p, &mut st, types, msg)
        };
        // The publisher lock is released: views can be made again.
        match r {
            Ok(n) => {
                this.spend(py, msg)?;
                Ok(n)
            }
            Err(e) => {
                Self::restore_views(slf, types, msg);
                Err(e)
            }
        }
    }

    /// Gives the chunk back unsent (no-op if already sent or discarded). `msg`'s loaned
    /// fields let go of their views first (they become empty read-only arrays). Raises
    /// LoanViewsAliveError while other views of it are alive (the pool would hand the
    /// memory to the next loan); the loan then stays outstanding and `msg` as it was.
    #[pyo3(signature = (types, msg=None))]
    fn discard(
        slf: &Bound<'_, Self>,
        types: &RosTypes,
        msg: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<()> {
        let py = slf.py();
        let this = slf.get();
        let p = this.publisher.bind(py).get();
        if let Some(m) = msg {
            this.take_views(py, m)?;
        }
        let r = (|| {
            let mut st = p.state()?;
            if this.is_current(&st) {
                this.check_no_views(py, &p.topic, "discard")?;
                st.raw.drop_loan();
                st.end_loan();
            }
            Ok(())
        })();
        if let Some(m) = msg {
            match &r {
                Ok(()) => this.spend(py, m)?,
                Err(_) => Self::restore_views(slf, types, m),
            }
        }
        r
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
            return Err(p.err(SendFailure::NoLoan));
        }
        // SAFETY: the region is the CDR body of the outstanding loan's chunk: mapped
        // while the publisher lives (the view references this loan, which references
        // the publisher, and closing the publisher refuses while `exports` is not zero),
        // and ours while the view lives: send and discard refuse while `exports`
        // (incremented below, under the same lock) is not zero.
        unsafe {
            export(
                slf.as_any(),
                view,
                this.body as *mut u8,
                this.cap,
                false,
                flags,
            )?;
        }
        // Relaxed: increments are ordered with the check in `check_no_views` by the
        // publisher lock held here.
        this.exports.fetch_add(1, Ordering::Relaxed);
        drop(st);
        Ok(())
    }

    unsafe fn __releasebuffer__(&self, _view: *mut ffi::Py_buffer) {
        // Release: the view's accesses to the memory happen before a send or discard
        // that sees the decremented count (Acquire there). Called once per successful
        // `__getbuffer__`, so this never wraps.
        self.exports.fetch_sub(1, Ordering::Release);
    }
}

impl Drop for RosLoan {
    /// A loan freed unsent goes back to the pool. Its views reference this object, so
    /// none is alive now.
    fn drop(&mut self) {
        // `get` needs no GIL (frozen, Sync), and Drop may run without it.
        let p = self.publisher.get();
        match p.try_state() {
            // The publisher is closed: its loan went with it.
            None => {}
            Some(Ok(mut st)) => st.discard_abandoned(self.id),
            // Another thread holds the publisher (and may wait for the GIL we may hold):
            // leave the id for its next `state()` to discard.
            Some(Err(())) => p.abandon(self.id),
        }
    }
}

/// `RosPublisher.loan`: the loan of one message of `type_name`, its fields named in
/// `lengths` loaned arrays of that many elements, set in `msg` as writable views.
pub(crate) fn open_loan(
    slf: &Bound<'_, RosPublisher>,
    types: &RosTypes,
    msg: &Bound<'_, PyAny>,
    lengths: Vec<(String, usize)>,
) -> PyResult<RosLoan> {
    let py = slf.py();
    let p = slf.get();
    let codec = types.codec();
    let idx = RosTypes::index(&codec, p.type_name())?;
    let plan = &codec.plans.structs[idx];
    // The loaned fields: primitive arrays of the message itself, each named once.
    let mut slots: Vec<Slot> = Vec::with_capacity(lengths.len());
    let mut counts = Vec::with_capacity(lengths.len());
    for (name, count) in &lengths {
        let Some(f) = plan
            .fields
            .iter()
            .find(|f| !f.placeholder && f.attr.bind(py).to_str().is_ok_and(|a| a == name))
        else {
            return Err(PyTypeError::new_err(format!(
                "{} has no field {name:?} to loan",
                plan.name
            )));
        };
        let prim = match (f.elem, f.array) {
            (_, ArrayKind::Single)
            | (Elem::Prim(Primitive::Bool), _)
            | (Elem::Str { .. } | Elem::WStr { .. } | Elem::Nested(_), _) => {
                return Err(PyValueError::new_err(format!(
                    "{}.{name} cannot be loaned: only arrays of numbers and bytes can \
                     (bool arrays neither: any byte but 0/1 would reach the wire); assign it",
                    plan.name
                )))
            }
            (Elem::Prim(prim), _) => prim,
        };
        if slots
            .iter()
            .any(|s| s.attr.bind(py).to_str().is_ok_and(|a| a == name))
        {
            return Err(PyValueError::new_err(format!("{name:?} loaned twice")));
        }
        slots.push(Slot {
            attr: f.attr.clone_ref(py),
            prim,
        });
        counts.push(*count);
    }
    let mut st = p.state()?;
    if st.loan_id.is_some() {
        return Err(p.err(SendFailure::LoanOutstanding));
    }
    let id = st.next_loan;
    for (i, (slot, &count)) in slots.iter().zip(&counts).enumerate() {
        let marker = LoanedArray {
            loan: id,
            slot: i,
            src: None,
            count,
            prim: slot.prim,
        };
        msg.setattr(slot.attr.bind(py), Bound::new(py, marker)?)?;
    }
    let chunk = st
        .raw
        .loan()
        .map_err(|e| p.err(super::topic::send_failure(e)))?;
    let cap = chunk.len().saturating_sub(FRAME);
    chunk[..FRAME].copy_from_slice(&[0, 0, 0, 0, HEADER[0], HEADER[1], HEADER[2], HEADER[3]]);
    let body = chunk[FRAME..].as_mut_ptr();
    // SAFETY: `body..body + cap` is the chunk just loaned, exclusively ours: no view of
    // it exists yet (the loan object is made below) and we hold `st`.
    let r = unsafe { encode_body(&codec, idx, msg, id, body, cap) };
    let placed = match r {
        Ok(Encoded::Done(_, placed)) => placed,
        Ok(Encoded::TooLarge(size)) => {
            st.raw.drop_loan();
            return Err(p.err(SendFailure::TooLarge {
                requested: Some(size),
                max: cap,
            }));
        }
        Err(e) => {
            st.raw.drop_loan();
            return Err(e.into_py(py, p.type_name()));
        }
    };
    let mut layout = vec![(0usize, 0usize); slots.len()];
    for pl in placed {
        layout[pl.slot] = (pl.pos, pl.count);
    }
    let exports = Arc::new(AtomicUsize::new(0));
    st.next_loan += 1;
    st.loan_id = Some(id);
    st.loan_views = Some(Arc::clone(&exports));
    drop(st);
    Ok(RosLoan {
        publisher: slf.clone().unbind(),
        id,
        body: body as usize,
        cap,
        exports,
        type_name: p.type_name().to_owned(),
        slots,
        layout: Mutex::new(layout),
    })
}

/// Sets `msg`'s loaned fields to writable views of the new loan `loan`.
pub(crate) fn attach_views(
    loan: &Bound<'_, RosLoan>,
    types: &RosTypes,
    msg: &Bound<'_, PyAny>,
) -> PyResult<()> {
    RosLoan::restore_views(loan, types, msg);
    // A view that could not be made leaves its marker: say so rather than hand out a
    // message that cannot be filled.
    let py = loan.py();
    for slot in &loan.get().slots {
        if msg
            .getattr(slot.attr.bind(py))?
            .cast::<LoanedArray>()
            .is_ok()
        {
            return Err(PyValueError::new_err(format!(
                "cannot make a view of the loaned field {}",
                slot.attr.bind(py)
            )));
        }
    }
    Ok(())
}

/// `RosPublisher`'s loan bookkeeping shared with [`RosLoan`].
pub(crate) struct Abandoned(AtomicU64);

impl Abandoned {
    pub(crate) fn new() -> Self {
        Abandoned(AtomicU64::new(0))
    }

    /// Leaves loan `id` for the next `take` (its `RosLoan` was freed while another
    /// thread held the publisher).
    pub(crate) fn set(&self, id: u64) {
        // Release: pairs with the Acquire swap in `take`.
        self.0.store(id, Ordering::Release);
    }

    /// The loan left by `set`, if any.
    pub(crate) fn take(&self) -> Option<u64> {
        // Relaxed peek: the common case (nothing abandoned) costs a load. Acquire swap:
        // pairs with the Release store in `set`.
        if self.0.load(Ordering::Relaxed) == 0 {
            return None;
        }
        match self.0.swap(0, Ordering::Acquire) {
            0 => None,
            id => Some(id),
        }
    }
}
