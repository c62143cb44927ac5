//! A request taken by a [`RawServer`](super::RawServer): its bytes, and the
//! guard that must be answered once, with bytes or with a failure forwarded
//! from another host.

use std::sync::Arc;

use horus_shm::ProcessId;

use super::error::ReplyError;
use super::replier::{Answer, Replier};
use super::wire::{self, RequestHeader};

/// The filler type of answers without a body.
type NoFill = fn(&mut [u8], &mut [u8]);

/// Why a service on another host could not answer, forwarded to the local
/// client by [`RawRequest::fail`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RemoteFailure {
    /// The remote service has no server: the client's call returns
    /// [`CallError::NoServer`](super::CallError::NoServer).
    NoServer,
    /// The remote server died holding the request: the client's call
    /// returns [`CallError::ServerDied`](super::CallError::ServerDied) with
    /// this pid (a process of the remote host).
    ServerDied {
        /// Process id of the dead server, on its host.
        pid: u32,
    },
}

/// A request taken by a raw server. Answer it with [`RawRequest::reply`]
/// or [`RawRequest::fail`], which consume it; dropping it unanswered sends
/// the client [`CallError::Unanswered`](super::CallError::Unanswered), as a
/// dropped [`Request`](super::Request) does. `Send`: it can be answered
/// from another thread.
pub struct RawRequest {
    bytes: Vec<u8>,
    header: RequestHeader,
    replier: Arc<Replier>,
    answered: bool,
}

impl RawRequest {
    /// A request whose body, copied out of its record, is `body`.
    pub(super) fn new(mut body: Vec<u8>, header: RequestHeader, replier: Arc<Replier>) -> Self {
        let layout = replier.svc.layout;
        let (size, tail_at) = (layout.req_size, layout.req_tail_offset);
        // The receive checked `body.len() >= size`.
        wire::trim_body(&mut body, size, tail_at, layout.req_has_tail);
        RawRequest {
            bytes: body,
            header,
            replier,
            answered: false,
        }
    }

    /// The request as on the wire: its fixed part (the request type's
    /// size) and, if it has a tail, zero padding to the next multiple of 8
    /// and the tail (as topics' raw messages and [`RawClient`] responses;
    /// no padding for the usual types, whose size is a multiple of 8).
    ///
    /// [`RawClient`]: super::RawClient
    pub fn bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// Process id of the calling client.
    pub fn client_pid(&self) -> u32 {
        ProcessId::from_token(self.header.pid).pid
    }

    /// Answers with `response`, laid out as [`RawRequest::bytes`]: exactly
    /// the response type's size for a type without a tail; for one with a
    /// tail, that or more (the tail starting at the next multiple of 8 and
    /// within the service's largest response tail). A response of another
    /// length is refused ([`ReplyError::WrongSize`], [`ReplyError::TooLarge`])
    /// and the client told ([`CallError::ReplyFailed`](super::CallError::ReplyFailed)).
    pub fn reply(mut self, response: &[u8]) -> Result<(), ReplyError> {
        self.answered = true;
        self.bytes = Vec::new();
        let layout = self.replier.svc.layout;
        let (len, size) = (response.len(), layout.resp_size);
        let split = wire::split_body(
            response,
            size,
            layout.resp_tail_offset,
            layout.resp_has_tail,
        );
        let Some((fixed, tail)) = split else {
            let _ = self.replier.send::<NoFill>(&self.header, Answer::Failed);
            return Err(ReplyError::WrongSize { len, size });
        };
        self.replier.send(
            &self.header,
            Answer::Body {
                tail_len: tail.len(),
                fill: |b: &mut [u8], t: &mut [u8]| {
                    b.copy_from_slice(fixed);
                    t.copy_from_slice(tail);
                },
            },
        )
    }

    /// Answers with a failure of the service on another host: the client's
    /// call returns the matching [`CallError`](super::CallError). Nothing
    /// to report if the client is gone.
    pub fn fail(mut self, failure: RemoteFailure) {
        self.answered = true;
        let answer = match failure {
            RemoteFailure::NoServer => Answer::NoServer,
            RemoteFailure::ServerDied { pid } => Answer::ServerDied(pid),
        };
        let _ = self.replier.send::<NoFill>(&self.header, answer);
    }
}

impl std::fmt::Debug for RawRequest {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RawRequest")
            .field("len", &self.bytes.len())
            .field("client_pid", &self.client_pid())
            .finish()
    }
}

impl Drop for RawRequest {
    fn drop(&mut self) {
        if !self.answered {
            let _ = self
                .replier
                .send::<NoFill>(&self.header, Answer::Unanswered);
        }
    }
}
