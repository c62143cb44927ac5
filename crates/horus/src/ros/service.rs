//! ROS 2 service types (`.srv`'s `Foo_Request` / `Foo_Response`) on horus services:
//! `Service<Ros<Foo_Request>, Ros<Foo_Response>>`.

use std::time::Duration;

use horus_cdr::{CdrWriter, DecodeError, EncodeError, RosMessage, RosService};

use super::{Ros, RosCallError, RosReplyError};
use crate::{Client, Request, Sample, Service};

/// The horus service of the ROS 2 service type `S` (a generated marker such as
/// `std_srvs::srv::SetBool`): requests `Ros<S::Request>`, responses `Ros<S::Response>`.
///
/// `RosSrv::<SetBool>::open("motor/enable")` is
/// `Service::<Ros<SetBool_Request>, Ros<SetBool_Response>>::open("motor/enable")`.
pub type RosSrv<S> = Service<Ros<<S as RosService>::Request>, Ros<<S as RosService>::Response>>;

/// Writes `msg`'s body into `tail`, which is exactly its counted size; a failure (only a
/// `write_cdr` that writes other bytes than it counted) leaves zeros, never stale bytes.
fn write_body<M: RosMessage>(msg: &M, tail: &mut [u8]) -> Result<(), EncodeError> {
    let r = msg.write_cdr(&mut CdrWriter::new(tail));
    if r.is_err() {
        tail.fill(0);
    }
    r
}

impl<Req: RosMessage, Resp: RosMessage> Client<Ros<Req>, Ros<Resp>> {
    /// Calls the service with `req`, written once in place as its CDR body (sized first, so
    /// a request that breaks its type's rules is [`RosCallError::Encode`] and nothing is
    /// sent), and waits at most `timeout` for the response: read it with
    /// [`Sample::view`] or [`Sample::decode`].
    pub fn call_ros(
        &mut self,
        req: &Req,
        timeout: Duration,
    ) -> Result<Sample<Ros<Resp>>, RosCallError> {
        let size = req.cdr_size().map_err(RosCallError::Encode)?;
        let mut written = Ok(());
        let response = self.call_with(
            size,
            |frame, tail| {
                *frame = Ros::new();
                written = write_body(req, tail);
            },
            timeout,
        )?;
        // A second pass that failed after the first succeeded (not generated code) sent a
        // zeroed body; the call was answered and is reported as the encoding failure.
        written.map_err(RosCallError::Encode)?;
        Ok(response)
    }
}

impl<Req: RosMessage, Resp: RosMessage> Request<Ros<Req>, Ros<Resp>> {
    /// The request exactly as ROS 2 puts it on the wire (encapsulation header and CDR
    /// body), in place in shared memory.
    pub fn cdr(&self) -> &[u8] {
        self.sample().map_or(&[], Sample::cdr)
    }

    /// A zero-copy view of the request (see [`Sample::view`]).
    pub fn view(&self) -> Result<Req::View<'_>, DecodeError> {
        horus_cdr::view_message::<Req>(self.cdr())
    }

    /// Decodes the request into an owned `Req` (from a private copy, see
    /// [`Sample::decode`]).
    pub fn decode(&self) -> Result<Req, DecodeError> {
        super::sample::decode_private::<Req>(self.cdr())
    }

    /// Answers with `resp`, written once in place as its CDR body. A response that breaks
    /// its type's rules is [`RosReplyError::Encode`]: nothing is sent and the request is
    /// dropped unanswered (the client gets [`CallError::Unanswered`](crate::CallError)).
    pub fn reply_ros(self, resp: &Resp) -> Result<(), RosReplyError> {
        let size = resp.cdr_size().map_err(RosReplyError::Encode)?;
        let mut written = Ok(());
        self.reply_with(size, |frame, tail| {
            *frame = Ros::new();
            written = write_body(resp, tail);
        })?;
        written.map_err(RosReplyError::Encode)
    }
}
