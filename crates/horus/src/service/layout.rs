//! How requests and responses are laid out on the service's channels,
//! fixed by the two types and the service's configuration.

use horus_msgs::{Message, TypeDescription};
use horus_shm::ChannelConfig;

use super::table::TableConfig;
use super::wire::HEADER;
use crate::publisher::tail_offset;
use crate::{COPY_OUT_MAX, INLINE_MAX};

/// How requests and responses are laid out, fixed by the types and the
/// service's configuration.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Layout {
    pub(crate) req_size: usize,
    pub(crate) resp_size: usize,
    /// Requests travel inside ring slots (else in pool chunks).
    pub(crate) req_inline: bool,
    pub(crate) resp_inline: bool,
    /// Requests travel in pool chunks, but a typed server copies each one
    /// out and releases its chunk at once ([`COPY_OUT_MAX`]; raw receivers
    /// copy every body out anyway).
    pub(crate) req_copied: bool,
    pub(crate) resp_copied: bool,
    pub(crate) req_tail_offset: usize,
    pub(crate) resp_tail_offset: usize,
    /// The types have a tail.
    pub(crate) req_has_tail: bool,
    pub(crate) resp_has_tail: bool,
}

impl Layout {
    /// A request or response travels inside a ring slot (its 32-byte
    /// header and body copied in and out) when it has no tail and its body
    /// is at most [`INLINE_MAX`], as topics' messages do; else in a pool
    /// chunk, written in place. A typed receiver copies a body of at most
    /// [`COPY_OUT_MAX`] without a tail out of its chunk and releases the
    /// chunk at once: a client keeping its responses (a result per waypoint)
    /// or a server keeping its requests would otherwise pin a chunk of the
    /// other side's pool per message kept, and the sender's next message
    /// after the pool's spare chunks would fail (`ReplyError::PoolExhausted`,
    /// the call `ReplyFailed`). Larger and tailed bodies are read in place.
    pub(crate) fn new<Req: Message, Resp: Message>() -> Layout {
        Self::of(
            (
                std::mem::size_of::<Req>(),
                Req::HAS_TAIL,
                tail_offset::<Req>(),
            ),
            (
                std::mem::size_of::<Resp>(),
                Resp::HAS_TAIL,
                tail_offset::<Resp>(),
            ),
        )
    }

    /// The layout of a service whose types were learned at run time (from
    /// the descriptions its request channel carries): the same rule as
    /// [`Layout::new`].
    pub(crate) fn described(req: &TypeDescription, resp: &TypeDescription) -> Layout {
        Self::of(
            (req.size, req.has_tail, req.size.next_multiple_of(8)),
            (resp.size, resp.has_tail, resp.size.next_multiple_of(8)),
        )
    }

    /// The layout of request and response types of (size, has a tail, tail
    /// offset).
    fn of(req: (usize, bool, usize), resp: (usize, bool, usize)) -> Layout {
        let inline = |has_tail: bool, size: usize| !has_tail && size <= INLINE_MAX;
        let copied = |has_tail: bool, size: usize| {
            !inline(has_tail, size) && !has_tail && size <= COPY_OUT_MAX
        };
        Layout {
            req_size: req.0,
            resp_size: resp.0,
            req_inline: inline(req.1, req.0),
            resp_inline: inline(resp.1, resp.0),
            req_copied: copied(req.1, req.0),
            resp_copied: copied(resp.1, resp.0),
            req_tail_offset: req.2,
            resp_tail_offset: resp.2,
            req_has_tail: req.1,
            resp_has_tail: resp.1,
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
