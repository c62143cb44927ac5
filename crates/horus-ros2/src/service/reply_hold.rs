//! Replies held until the caller's reply reader has matched the bridge's reply writer.
//!
//! DDS discovery is not symmetric: a ROS 2 client can see the bridge's reply writer (and
//! its `wait_for_service` succeed) and send a request before the bridge's RustDDS writer has
//! matched the client's reply reader. A volatile reply written then reaches nobody, and
//! nothing would count it. So a reply is written only once a reader of its caller is
//! matched (known from the writer's `PublicationMatched` events); until then it is held, at
//! most for the bridge's call timeout, and then dropped and counted (`no_reply_reader`).
//!
//! RustDDS drops status events when its channel (16) is full. The events carry the current
//! match count; when it disagrees with the readers seen, whom the writer matches is no
//! longer known and replies are written at once (as without this check) until the writer
//! matches nobody again.

use std::collections::{HashSet, VecDeque};
use std::time::{Duration, Instant};

use rustdds::no_key::DataWriter;
use rustdds::rpc::SampleIdentity;
use rustdds::{DataWriterStatus, StatusEvented, GUID};

use crate::raw::{PassThrough, WireCdr};

/// A reply waiting for its caller's reader.
pub(crate) struct Held {
    /// The call it answers.
    pub(crate) id: SampleIdentity,
    /// The reply's wire bytes.
    pub(crate) wire: Vec<u8>,
    since: Instant,
}

/// The reply writer's matched readers and the replies held for callers not among them.
pub(crate) struct ReplyHold {
    readers: HashSet<GUID>,
    /// A match event was lost: the readers above are incomplete.
    unknown: bool,
    held: VecDeque<Held>,
    hold_for: Duration,
}

/// What [`ReplyHold::release`] found.
pub(crate) struct Released {
    /// Replies whose caller's reader has matched now: to be written.
    pub(crate) ready: Vec<Held>,
    /// Replies dropped: their caller's reader did not match within the hold time.
    pub(crate) expired: u64,
}

impl ReplyHold {
    /// Holds replies at most `hold_for`.
    pub(crate) fn new(hold_for: Duration) -> ReplyHold {
        ReplyHold {
            readers: HashSet::new(),
            unknown: false,
            held: VecDeque::new(),
            hold_for,
        }
    }

    /// Takes the writer's match events.
    pub(crate) fn note_matches(&mut self, writer: &DataWriter<WireCdr, PassThrough>) {
        while let Some(st) = writer.try_recv_status() {
            self.note(&st);
        }
    }

    /// Takes one of the writer's status events.
    fn note(&mut self, st: &DataWriterStatus) {
        let DataWriterStatus::PublicationMatched {
            current, reader, ..
        } = st
        else {
            return;
        };
        if current.count_change() > 0 {
            self.readers.insert(*reader);
        } else if current.count_change() < 0 {
            self.readers.remove(reader);
        }
        let count = usize::try_from(current.count()).unwrap_or(0);
        self.unknown = if count == 0 {
            self.readers.clear();
            false
        } else {
            self.unknown || count != self.readers.len()
        };
    }

    /// Whether a reply to `id` reaches its caller now: its reply reader is matched. A
    /// client following rmw_fastrtps names its reply reader in the request's identity;
    /// one that names its request writer is matched by any reader of its participant.
    pub(crate) fn caller_matched(&self, id: &SampleIdentity) -> bool {
        let caller = id.writer_guid;
        self.unknown
            || self.readers.contains(&caller)
            || (caller.entity_id.entity_kind.is_writer()
                && self.readers.iter().any(|r| r.prefix == caller.prefix))
    }

    /// Holds a reply to `id` until its caller's reader matches.
    pub(crate) fn hold(&mut self, id: SampleIdentity, wire: &[u8]) {
        self.held.push_back(Held {
            id,
            wire: wire.to_vec(),
            since: Instant::now(),
        });
    }

    /// Replies held now.
    pub(crate) fn len(&self) -> usize {
        self.held.len()
    }

    /// The held replies whose caller matched since, and how many expired.
    pub(crate) fn release(&mut self) -> Released {
        let mut out = Released {
            ready: Vec::new(),
            expired: 0,
        };
        let held = std::mem::take(&mut self.held);
        for h in held {
            if self.caller_matched(&h.id) {
                out.ready.push(h);
            } else if h.since.elapsed() >= self.hold_for {
                out.expired += 1;
            } else {
                self.held.push_back(h);
            }
        }
        out
    }

    /// Drops every held reply; how many.
    pub(crate) fn clear(&mut self) -> usize {
        let n = self.held.len();
        self.held.clear();
        n
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rustdds::dds::statusevents::CountWithChange;
    use rustdds::SequenceNumber;

    /// A GUID of participant `p`, entity `e`, of entity kind `kind` (0x04: a reader, 0x03: a
    /// writer).
    fn guid(p: u8, e: u8, kind: u8) -> GUID {
        let mut b = [p; 16];
        b[12..].copy_from_slice(&[0, 0, e, kind]);
        GUID::from_bytes(b)
    }

    fn call(caller: GUID) -> SampleIdentity {
        SampleIdentity {
            writer_guid: caller,
            sequence_number: SequenceNumber::new(1),
        }
    }

    fn matched(reader: GUID, count: i32, change: i32) -> DataWriterStatus {
        DataWriterStatus::PublicationMatched {
            total: CountWithChange::start_from(count.max(0), change.max(0)),
            current: CountWithChange::start_from(count, change),
            reader,
        }
    }

    #[test]
    fn a_caller_naming_its_reply_reader_is_matched_only_by_that_reader() {
        let mut h = ReplyHold::new(Duration::from_secs(10));
        let mine = guid(1, 1, 0x04);
        let other_of_same_participant = guid(1, 2, 0x04);
        assert!(!h.caller_matched(&call(mine)));
        h.note(&matched(other_of_same_participant, 1, 1));
        assert!(!h.caller_matched(&call(mine)));
        h.note(&matched(mine, 2, 1));
        assert!(h.caller_matched(&call(mine)));
        h.note(&matched(mine, 1, -1));
        assert!(!h.caller_matched(&call(mine)));
    }

    #[test]
    fn a_caller_naming_its_request_writer_is_matched_by_a_reader_of_its_participant() {
        let mut h = ReplyHold::new(Duration::from_secs(10));
        let request_writer = guid(2, 1, 0x03);
        h.note(&matched(guid(3, 1, 0x04), 1, 1));
        assert!(!h.caller_matched(&call(request_writer)));
        h.note(&matched(guid(2, 7, 0x04), 2, 1));
        assert!(h.caller_matched(&call(request_writer)));
    }

    #[test]
    fn a_lost_match_event_writes_replies_at_once_until_no_reader_is_matched() {
        let mut h = ReplyHold::new(Duration::from_secs(10));
        let caller = guid(4, 1, 0x04);
        // Two readers matched, one event seen: the channel dropped the other.
        h.note(&matched(guid(5, 1, 0x04), 2, 1));
        assert!(h.caller_matched(&call(caller)), "unknown: written at once");
        h.note(&matched(guid(5, 1, 0x04), 0, -1));
        assert!(
            !h.caller_matched(&call(caller)),
            "known again: nobody matched"
        );
    }

    #[test]
    fn held_replies_leave_when_their_reader_matches_or_expire() {
        let caller = guid(6, 1, 0x04);
        let mut h = ReplyHold::new(Duration::from_secs(3600));
        h.hold(call(caller), b"reply");
        let r = h.release();
        assert!(r.ready.is_empty() && r.expired == 0 && h.len() == 1);
        h.note(&matched(caller, 1, 1));
        let r = h.release();
        assert_eq!((r.ready.len(), r.expired, h.len()), (1, 0, 0));
        assert_eq!(r.ready[0].wire, b"reply");

        let mut h = ReplyHold::new(Duration::ZERO);
        h.hold(call(caller), b"reply");
        let r = h.release();
        assert_eq!((r.ready.len(), r.expired, h.len()), (0, 1, 0));
    }
}
