//! What travels: the 32-byte headers in front of every request and
//! response body, and the per-call claim word.
//!
//! A request or response is one ring message on a horus-shm channel: a
//! header of four 64-bit words followed by the body (the `Req`/`Resp` value,
//! then its tail). Headers come from other processes and are validated
//! before anything in them is used.

/// Bytes of the header in front of every body (keeps the body 8-aligned).
pub(crate) const HEADER: usize = 32;

const REQ_MAGIC: u64 = 0x4853_5251; // "HSRQ"
const RESP_MAGIC: u64 = 0x4853_5250; // "HSRP"

/// Call ids stay below this so that they fit a claim word.
pub(crate) use horus_shm::call::MAX_CALL_ID;

/// The response carries a body.
pub(crate) const STATUS_OK: u64 = 0;
/// The server dropped the request unanswered.
pub(crate) const STATUS_UNANSWERED: u64 = 1;
/// The server's reply failed (too large, wrong size, no chunk).
pub(crate) const STATUS_FAILED: u64 = 2;
/// Forwarded by a server acting for another host's service (a bridge's
/// raw server): that service has no server.
pub(crate) const STATUS_NO_SERVER: u64 = 3;
/// Forwarded likewise: the remote server died holding the request; the
/// header's pid is the dead server's.
pub(crate) const STATUS_SERVER_DIED: u64 = 4;

/// A request's header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct RequestHeader {
    /// The client's place (its request ring and its record).
    pub(crate) client: usize,
    /// The client's token: names its response channel, identifies it in
    /// its record.
    pub(crate) token: u64,
    /// The call id, unique per client place.
    pub(crate) id: u64,
    /// The client's `ProcessId` token, for the server's liveness check.
    pub(crate) pid: u64,
}

impl RequestHeader {
    pub(crate) fn encode(&self) -> [u64; 4] {
        [
            (REQ_MAGIC << 32) | self.client as u64,
            self.token,
            self.id,
            self.pid,
        ]
    }

    /// Decodes and validates a header read from shared memory.
    pub(crate) fn decode(w: [u64; 4], max_clients: usize) -> Option<RequestHeader> {
        let client = (w[0] & 0xffff_ffff) as usize;
        let ok = w[0] >> 32 == REQ_MAGIC
            && client < max_clients
            && w[1] != 0
            && w[2] != 0
            && w[2] < MAX_CALL_ID;
        ok.then_some(RequestHeader {
            client,
            token: w[1],
            id: w[2],
            pid: w[3],
        })
    }
}

/// A response's header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct ResponseHeader {
    /// The call answered.
    pub(crate) id: u64,
    /// `STATUS_*`.
    pub(crate) status: u64,
    /// Pid of the server that answered (for [`STATUS_SERVER_DIED`]: of the
    /// remote server that died).
    pub(crate) server_pid: u32,
}

impl ResponseHeader {
    pub(crate) fn encode(&self) -> [u64; 4] {
        [
            (RESP_MAGIC << 32) | self.status,
            self.id,
            u64::from(self.server_pid),
            0,
        ]
    }

    pub(crate) fn decode(w: [u64; 4]) -> Option<ResponseHeader> {
        let status = w[0] & 0xffff_ffff;
        let ok = w[0] >> 32 == RESP_MAGIC
            && status <= STATUS_SERVER_DIED
            && w[1] != 0
            && w[1] < MAX_CALL_ID
            && w[2] <= u64::from(u32::MAX);
        ok.then_some(ResponseHeader {
            id: w[1],
            status,
            server_pid: w[2] as u32,
        })
    }
}

/// Reads a header's four words from possibly shared, possibly concurrently
/// written memory: a volatile copy, so validation and use see one value.
///
/// # Safety
/// `ptr` must be valid for reads of 32 bytes and 8-byte aligned.
pub(crate) unsafe fn read_header(ptr: *const u8) -> [u64; 4] {
    debug_assert_eq!(ptr as usize % 8, 0);
    // SAFETY: the caller guarantees 32 readable, aligned bytes; u64 is
    // valid for any bits.
    unsafe { std::ptr::read_volatile(ptr.cast::<[u64; 4]>()) }
}

/// The claim word of one call slot of a client record (see
/// [`horus_shm::call`], where its protocol lives with the loom model).
pub(crate) use horus_shm::call as claim;

/// Writes one record into a loaned chunk: the header, then the fixed part
/// of `T` (`size` bytes, filled in place by `fill`) and, at `tail_at`, a tail
/// of `tail_len` bytes (also filled in place). Returns the record's length.
/// Requests and responses share this layout.
pub(crate) fn write_chunk_record(
    bytes: &mut [u8],
    header: &[u64; 4],
    size: usize,
    tail_at: usize,
    tail_len: usize,
    fill: impl FnOnce(&mut [u8], &mut [u8]),
) -> usize {
    let (head, body) = bytes.split_at_mut(HEADER);
    head.copy_from_slice(bytemuck::cast_slice(header));
    let (fixed, rest) = body.split_at_mut(tail_at);
    fill(&mut fixed[..size], &mut rest[..tail_len]);
    HEADER
        + if tail_len > 0 {
            tail_at + tail_len
        } else {
            size
        }
}

/// Trims a body copied out of a record to what its type can hold, in place:
/// the fixed part of `size` bytes alone for a type without a tail or a record
/// ending inside the padding before `tail_at`; else the fixed part, zeroed
/// padding and the tail. A chunk is longer than its body and a hostile peer
/// may claim more of it: neither its extra bytes nor the padding (whatever
/// was in the chunk) are ever passed on. The receive has checked
/// `body.len() >= size`.
pub(crate) fn trim_body(body: &mut Vec<u8>, size: usize, tail_at: usize, has_tail: bool) {
    if !has_tail || body.len() <= tail_at {
        body.truncate(size);
    } else {
        body[size..tail_at].fill(0);
    }
}

/// Splits a body given as bytes, laid out as on the wire (the fixed part of
/// `size` bytes, then for a type with a tail the tail from `tail_at`, the
/// next multiple of 8), into its fixed part and its tail. `None` when the
/// length fits no body of the type: shorter than its fixed part, longer
/// for a type without a tail, or ending inside the padding before the tail.
pub(crate) fn split_body(
    bytes: &[u8],
    size: usize,
    tail_at: usize,
    has_tail: bool,
) -> Option<(&[u8], &[u8])> {
    match bytes.len() {
        n if n == size => Some((bytes, &[])),
        n if has_tail && n > tail_at => Some((&bytes[..size], &bytes[tail_at..])),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headers_round_trip_and_reject_garbage() {
        let h = RequestHeader {
            client: 3,
            token: 7,
            id: 9,
            pid: 11,
        };
        assert_eq!(RequestHeader::decode(h.encode(), 4), Some(h));
        assert_eq!(RequestHeader::decode(h.encode(), 3), None);
        assert_eq!(RequestHeader::decode([0; 4], 16), None);
        assert_eq!(RequestHeader::decode([u64::MAX; 4], 16), None);
        let r = ResponseHeader {
            id: 5,
            status: STATUS_UNANSWERED,
            server_pid: 42,
        };
        assert_eq!(ResponseHeader::decode(r.encode()), Some(r));
        assert_eq!(ResponseHeader::decode([u64::MAX; 4]), None);
        let died = ResponseHeader {
            id: 6,
            status: STATUS_SERVER_DIED,
            server_pid: 77,
        };
        assert_eq!(ResponseHeader::decode(died.encode()), Some(died));
        let mut w = died.encode();
        w[0] = (w[0] & !0xffff_ffff) | (STATUS_SERVER_DIED + 1);
        assert_eq!(ResponseHeader::decode(w), None);
    }

    #[test]
    fn bodies_split_only_at_lengths_of_the_type() {
        let b = [1u8, 2, 3, 4, 0, 0, 0, 0, 9, 9];
        assert_eq!(split_body(&b[..4], 4, 8, true), Some((&b[..4], &[][..])));
        assert_eq!(split_body(&b, 4, 8, true), Some((&b[..4], &b[8..])));
        assert_eq!(split_body(&b[..3], 4, 8, true), None);
        assert_eq!(split_body(&b[..6], 4, 8, true), None, "ends in the padding");
        assert_eq!(split_body(&b[..8], 4, 8, true), None, "padding, no tail");
        assert_eq!(split_body(&b, 4, 8, false), None);
        assert_eq!(split_body(&b[..8], 8, 8, false), Some((&b[..8], &[][..])));
    }

    #[test]
    fn claim_words_describe_one_call() {
        use claim::State;
        let w = claim::claimed(10, 4, 0x12345);
        assert_eq!(
            claim::state(w, 10),
            State::Claimed {
                server: 4,
                gen: 0x12345 & 0x3fff
            }
        );
        assert_eq!(claim::state(w, 11), State::Unclaimed);
        assert_eq!(claim::state(w, 9), State::Stale);
        assert_eq!(claim::state(claim::cancelled(10), 10), State::Cancelled);
        assert_eq!(claim::state(0, 1), State::Unclaimed);
        assert_eq!(claim::state(10 << 20, 10), State::Cancelled);
        // Across the wrap: a word left near the maximum is before the ids after it.
        let near_max = claim::cancelled(MAX_CALL_ID - 3);
        assert_eq!(claim::state(near_max, 1), State::Unclaimed);
        assert_eq!(claim::state(near_max, MAX_CALL_ID - 1), State::Unclaimed);
        assert_eq!(
            claim::state(claim::cancelled(2), MAX_CALL_ID - 1),
            State::Stale
        );
    }
}
