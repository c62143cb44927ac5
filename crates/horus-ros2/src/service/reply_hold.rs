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
            if let DataWriterStatus::PublicationMatched {
                current, reader, ..
            } = st
            {
                if current.count_change() > 0 {
                    self.readers.insert(reader);
                } else if current.count_change() < 0 {
                    self.readers.remove(&reader);
                }
                let count = usize::try_from(current.count()).unwrap_or(0);
                self.unknown = if count == 0 {
                    self.readers.clear();
                    false
                } else {
                    self.unknown || count != self.readers.len()
                };
            }
        }
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
