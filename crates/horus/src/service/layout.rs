//! How requests and responses are laid out on the service's channels,
//! fixed by the two types and the service's configuration.

use horus_msgs::{Message, TypeDescription};
use horus_shm::ChannelConfig;

use super::table::TableConfig;
use super::wire::HEADER;
use crate::publisher::tail_offset;

/// A request or response (its 32-byte header and body) of at most this many bytes without a
/// tail travels inside a ring slot. Not topics' 512 B (`horus::INLINE_MAX`): a client that
/// keeps responses (a result per waypoint) would pin a chunk of the server's pool per
/// response it keeps, in place, and the server's reply after the pool's spare chunks would
/// fail (`ReplyError::PoolExhausted`, the call `ReplyFailed`); inline, it keeps copies.
const SERVICE_INLINE_MAX: usize = 2048;

/// How requests and responses are laid out, fixed by the types and the
/// service's configuration.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Layout {
    pub(crate) req_size: usize,
    pub(crate) resp_size: usize,
    /// Requests travel inside ring slots (else in pool chunks).
    pub(crate) req_inline: bool,
    pub(crate) resp_inline: bool,
    pub(crate) req_tail_offset: usize,
    pub(crate) resp_tail_offset: usize,
    /// The types have a tail.
    pub(crate) req_has_tail: bool,
    pub(crate) resp_has_tail: bool,
}

impl Layout {
    /// A request or response travels inside a ring slot (its 32-byte
    /// header and body copied in and out) when it has no tail and header and
    /// body together are at most [`SERVICE_INLINE_MAX`]; else in a pool chunk,
    /// written and read in place.
    pub(crate) fn new<Req: Message, Resp: Message>() -> Layout {
        let inline = |has_tail: bool, size: usize| !has_tail && HEADER + size <= SERVICE_INLINE_MAX;
        Layout {
            req_size: std::mem::size_of::<Req>(),
            resp_size: std::mem::size_of::<Resp>(),
            req_inline: inline(Req::HAS_TAIL, std::mem::size_of::<Req>()),
            resp_inline: inline(Resp::HAS_TAIL, std::mem::size_of::<Resp>()),
            req_tail_offset: tail_offset::<Req>(),
            resp_tail_offset: tail_offset::<Resp>(),
            req_has_tail: Req::HAS_TAIL,
            resp_has_tail: Resp::HAS_TAIL,
        }
    }

    /// The layout of a service whose types were learned at run time (from
    /// the descriptions its request channel carries): the same rule as
    /// [`Layout::new`].
    pub(crate) fn described(req: &TypeDescription, resp: &TypeDescription) -> Layout {
        let inline = |has_tail: bool, size: usize| !has_tail && HEADER + size <= SERVICE_INLINE_MAX;
        Layout {
            req_size: req.size,
            resp_size: resp.size,
            req_inline: inline(req.has_tail, req.size),
            resp_inline: inline(resp.has_tail, resp.size),
            req_tail_offset: req.size.next_multiple_of(8),
            resp_tail_offset: resp.size.next_multiple_of(8),
            req_has_tail: req.has_tail,
            resp_has_tail: resp.has_tail,
        }
    }

    fn channel(
        inline: bool,
        size: usize,
        tail_offset: usize,
        tail: u64,
        depth: u32,
    ) -> (u32, u64, u32) {
        if inline {
            ((HEADER + size).next_multiple_of(8) as u32, 0, 0)
        } else {
            // Header-only status responses still fit a slot.
            (
                HEADER as u32,
                (HEADER + tail_offset) as u64 + tail,
                2 * depth + 4,
            )
        }
    }

    /// The request channel: each client a publisher (its ring is its
    /// request queue), each server a subscriber. `DropOldest`: a client
    /// never waits on a server's cursor; it never overwrites a request that
    /// is still in flight because it has at most `depth` of them.
    pub(crate) fn request_channel(&self, c: &TableConfig) -> ChannelConfig {
        let (slot_payload, chunk_size, chunks) = Self::channel(
            self.req_inline,
            self.req_size,
            self.req_tail_offset,
            c.req_tail,
            c.depth,
        );
        ChannelConfig {
            schema: c.req_schema,
            depth: c.depth,
            slot_payload,
            max_publishers: c.max_clients,
            max_subscribers: c.max_servers,
            chunk_size,
            chunks_per_publisher: chunks,
            qos_code: 0,
        }
    }

    /// A client's response channel: each server that answers it a
    /// publisher, the client its only subscriber.
    pub(crate) fn response_channel(&self, c: &TableConfig) -> ChannelConfig {
        let (slot_payload, chunk_size, chunks) = Self::channel(
            self.resp_inline,
            self.resp_size,
            self.resp_tail_offset,
            c.resp_tail,
            c.depth,
        );
        ChannelConfig {
            schema: c.resp_schema,
            depth: c.depth,
            slot_payload,
            max_publishers: c.max_servers,
            max_subscribers: 1,
            chunk_size,
            chunks_per_publisher: chunks,
            qos_code: 0,
        }
    }
}
