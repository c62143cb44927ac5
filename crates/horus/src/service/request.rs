//! A request taken by a server: the guard that must be answered once.

use std::marker::PhantomData;
use std::ops::Deref;
use std::sync::Arc;

use horus_msgs::Message;
use horus_shm::ProcessId;

use super::error::ReplyError;
use super::replier::{Answer, Replier};
use super::wire::RequestHeader;
use crate::Sample;

/// A request taken by this server: dereferences to `Req`
/// ([`Request::tail`] for its tail). Answer it with [`Request::reply`] or
/// [`Request::reply_with`], which consume it; dropping it unanswered sends
/// the client [`CallError::Unanswered`](super::CallError::Unanswered) and
/// counts it on both ends. The guard is `Send`: it can be answered from
/// another thread.
pub struct Request<Req, Resp: Message> {
    sample: Option<Sample<Req>>,
    header: RequestHeader,
    replier: Arc<Replier>,
    answered: bool,
    _t: PhantomData<fn(Resp)>,
}

impl<Req: Message, Resp: Message> Request<Req, Resp> {
    pub(super) fn new(sample: Sample<Req>, header: RequestHeader, replier: Arc<Replier>) -> Self {
        Request {
            sample: Some(sample),
            header,
            replier,
            answered: false,
            _t: PhantomData,
        }
    }

    /// Answers with a copy of `resp`.
    pub fn reply(self, resp: &Resp) -> Result<(), ReplyError> {
        self.reply_with(0, |r, _| *r = *resp)
    }

    /// Answers with a response written in place by `fill` (its fixed part
    /// and a tail of `tail_len` bytes; for types with a tail, written in
    /// shared memory: zero copy). A tail larger than the service allows is
    /// refused ([`ReplyError::TooLarge`]) and the client told.
    pub fn reply_with(
        mut self,
        tail_len: usize,
        fill: impl FnOnce(&mut Resp, &mut [u8]),
    ) -> Result<(), ReplyError> {
        // Release the request's chunk before answering (a client reusing
        // its pool right away finds it free).
        self.sample = None;
        self.answered = true;
        self.replier.send(
            &self.header,
            Answer::Body {
                tail_len,
                fill: |b: &mut [u8], t: &mut [u8]| fill(bytemuck::from_bytes_mut(b), t),
            },
        )
    }

    /// The request's tail (empty for types without one).
    pub fn tail(&self) -> &[u8] {
        self.sample.as_ref().map_or(&[], |s| s.tail())
    }

    /// The request as received (`None` once answered).
    pub(crate) fn sample(&self) -> Option<&Sample<Req>> {
        self.sample.as_ref()
    }

    /// Whether the request is read in place in shared memory.
    pub fn is_zero_copy(&self) -> bool {
        self.sample.as_ref().is_some_and(Sample::is_zero_copy)
    }

    /// Process id of the calling client.
    pub fn client_pid(&self) -> u32 {
        ProcessId::from_token(self.header.pid).pid
    }
}

impl<Req: Message, Resp: Message> Deref for Request<Req, Resp> {
    type Target = Req;
    fn deref(&self) -> &Req {
        self.sample.as_ref().expect("present until answered")
    }
}

impl<Req, Resp: Message> Drop for Request<Req, Resp> {
    fn drop(&mut self) {
        if self.answered {
            return;
        }
        self.sample = None;
        let _ = self
            .replier
            .send::<fn(&mut [u8], &mut [u8])>(&self.header, Answer::Unanswered);
    }
}
