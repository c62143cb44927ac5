//! `Publisher`: publishes messages given as raw bytes, and makes loans.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;

use pyo3::prelude::*;

use super::{Loan, PublisherStats, TopicStats};
use crate::buffer::with_bytes;
use crate::dynamic::{self, DynPublisher};
use crate::endpoint::{Endpoint, Open};
use crate::errors::{self, LoanViewsAliveError};

pub(super) struct PubState {
    pub(super) publisher: Box<dyn DynPublisher>,
    /// Id of the outstanding loan, if any.
    pub(super) loan_id: Option<u64>,
    /// Buffer views of the outstanding loan alive now (its `Loan`'s count).
    pub(super) loan_views: Option<Arc<AtomicUsize>>,
    pub(super) next_loan: u64,
}

impl PubState {
    pub(super) fn new(publisher: Box<dyn DynPublisher>) -> Self {
        PubState {
            publisher,
            loan_id: None,
            loan_views: None,
            next_loan: 1,
        }
    }

    /// Forgets the outstanding loan (sent, or its memory given back).
    pub(super) fn end_loan(&mut self) {
        self.loan_id = None;
        self.loan_views = None;
    }
}

/// Publishes messages given as raw bytes (the package's message objects).
#[pyclass(module = "horus._horus", frozen)]
pub(crate) struct Publisher {
    pub(super) inner: Endpoint<PubState>,
    /// Id of a loan whose `Loan` object was freed while another thread held
    /// `inner` (0: none; ids start at 1). Discarded at the next lock.
    pub(super) abandoned: AtomicU64,
    pub(super) topic: String,
    pub(super) blocks: bool,
}

impl Publisher {
    pub(super) fn new(publisher: Box<dyn DynPublisher>, topic: String, blocks: bool) -> Self {
        Publisher {
            inner: Endpoint::new(PubState::new(publisher), "publisher"),
            abandoned: AtomicU64::new(0),
            topic,
            blocks,
        }
    }

    pub(super) fn state(&self) -> PyResult<Open<'_, PubState>> {
        let mut st = self.inner.lock()?;
        // Relaxed peek: the common case (nothing abandoned) costs a load.
        // Acquire swap: pairs with the Release store in `Loan::drop`.
        if self.abandoned.load(Ordering::Relaxed) != 0 {
            let id = self.abandoned.swap(0, Ordering::Acquire);
            if st.loan_id == Some(id) {
                st.publisher.drop_loan();
                st.end_loan();
            }
        }
        Ok(st)
    }

    pub(super) fn err(&self, e: dynamic::SendFailure) -> PyErr {
        errors::send_error(&self.topic, e)
    }
}

#[pymethods]
impl Publisher {
    /// Publishes one message: `header` holds exactly its bytes; `tail` the
    /// variable-size data of messages that have one. Returns the number of
    /// subscribers reached (0: nobody listened; counted as undelivered).
    /// Raises a SendError subclass if the message was not published.
    #[pyo3(signature = (header, tail=None))]
    fn send(
        &self,
        py: Python<'_>,
        header: &Bound<'_, PyAny>,
        tail: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<u32> {
        let mut st = self.state()?;
        let p: &mut dyn DynPublisher = &mut *st.publisher;
        let blocks = self.blocks;
        let r = with_bytes(header, |h| match tail {
            None if blocks => Ok(py.detach(|| p.send(h, None))),
            None => Ok(p.send(h, None)),
            Some(t) => with_bytes(t, |t| {
                if blocks {
                    py.detach(|| p.send(h, Some(t)))
                } else {
                    p.send(h, Some(t))
                }
            }),
        })??;
        r.map_err(|e| self.err(e))
    }

    /// Loans shared memory for one message with `tail_len` tail bytes,
    /// initialised with `header`. Write the tail in place, then send the loan.
    #[pyo3(signature = (header, tail_len=0))]
    fn loan(slf: &Bound<'_, Self>, header: &Bound<'_, PyAny>, tail_len: usize) -> PyResult<Loan> {
        let this = slf.get();
        let mut st = this.state()?;
        if st.loan_id.is_some() {
            return Err(this.err(dynamic::SendFailure::LoanOutstanding));
        }
        let (ptr, len, tail_offset) =
            with_bytes(header, |h| st.publisher.loan(h, tail_len))?.map_err(|e| this.err(e))?;
        let id = st.next_loan;
        let exports = Arc::new(AtomicUsize::new(0));
        st.next_loan += 1;
        st.loan_id = Some(id);
        st.loan_views = Some(Arc::clone(&exports));
        Ok(Loan {
            publisher: slf.clone().unbind(),
            addr: ptr.as_ptr() as usize,
            len,
            tail_offset,
            tail_len,
            id,
            exports,
        })
    }

    /// Raises SegmentLostError if another process truncated the topic's
    /// segment (this publisher is then dead: open the topic again).
    fn check(&self) -> PyResult<()> {
        self.state()?.publisher.check().map_err(|e| self.err(e))
    }

    /// Subscribers active now.
    #[getter]
    fn subscribers(&self) -> PyResult<u32> {
        self.state()?
            .publisher
            .subscribers()
            .map_err(|e| self.err(e))
    }

    /// Largest tail a message may carry on this topic (0 without a tail).
    #[getter]
    fn max_tail(&self) -> PyResult<usize> {
        self.state()?.publisher.max_tail().map_err(|e| self.err(e))
    }

    /// Leaves the topic now: this publisher's place is released (its
    /// latched history with it), and any use after raises ClosedError.
    /// An outstanding loan is discarded; while views of its memory are alive
    /// (NumPy arrays made from it) it raises LoanViewsAliveError and stays
    /// open. Idempotent.
    fn close(&self) -> PyResult<()> {
        self.inner.close_if(|st| {
            if st.loan_id.is_none() {
                return Ok(());
            }
            // Acquire: pairs with the Release decrement of `__releasebuffer__`
            // (as in `Loan::check_no_views`); increments happen under the
            // lock we hold.
            let views = st
                .loan_views
                .as_ref()
                .map_or(0, |v| v.load(Ordering::Acquire));
            if views != 0 {
                return Err(LoanViewsAliveError::new_err(format!(
                    "topic {:?}: cannot close the publisher: {views} view(s) of its \
                     outstanding loan's memory are alive; delete them first",
                    self.topic
                )));
            }
            st.publisher.drop_loan();
            st.end_loan();
            Ok(())
        })
    }

    /// Whether `close()` was called.
    #[getter]
    fn closed(&self) -> bool {
        self.inner.is_closed()
    }

    /// Topic name.
    #[getter]
    fn topic(&self) -> &str {
        &self.topic
    }

    /// This publisher's counters.
    fn stats(&self) -> PyResult<PublisherStats> {
        let s = self.state()?.publisher.stats().map_err(|e| self.err(e))?;
        Ok(PublisherStats {
            sent: s.sent,
            undelivered: s.undelivered,
            rejected: s.rejected,
            timed_out: s.timed_out,
            pool_exhausted: s.pool_exhausted,
            subscribers: s.subscribers,
        })
    }

    /// Counters of every endpoint of the topic, in every process.
    fn topic_stats(&self) -> PyResult<TopicStats> {
        let s = self
            .state()?
            .publisher
            .topic_stats()
            .map_err(|e| self.err(e))?;
        Ok(TopicStats::from(s))
    }
}
