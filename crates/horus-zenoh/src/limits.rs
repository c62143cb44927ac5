//! How much other hosts may make this bridge hold: every map keyed by something a remote peer
//! chooses (a host name, a token, a publisher place) and every resource a remote offer costs
//! (a stand-in server: two shared-memory segments and a thread) is bounded here, with safe
//! defaults. What goes over a limit is refused and counted, never silently dropped.

use std::time::Duration;

/// The bounds a bridge keeps against other hosts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Other hosts tracked at once; tokens of further hosts are ignored (counted in
    /// `BridgeStatus::hosts_refused`).
    pub max_hosts: usize,
    /// Tokens (offers, wants, service offers) tracked per host; further ones are ignored and
    /// counted (`HostRefusals::over_limit`).
    pub max_tokens_per_host: usize,
    /// Services stood in for at once (each a raw server: two segments and a thread).
    pub max_stand_ins: usize,
    /// Largest message taken from the network (wire header included); a topic's own limit is
    /// the smaller of this and what its local segment can hold. Also Zenoh's limit on a
    /// reassembled message.
    pub max_message_bytes: usize,
    /// Largest service description accepted from another host.
    pub max_description_bytes: usize,
    /// Service descriptions asked for at once (queries in flight, never on the main loop).
    pub describes_in_flight: usize,
    /// Largest forward jump of a remote sequence number counted as loss; a larger one is
    /// counted as `suspect` and followed from there (no false loss from a forged number).
    pub max_seq_jump: u64,
    /// Publisher places followed per remote host and topic.
    pub max_places_per_host: usize,
    /// Latched messages taken from other hosts' histories each time this host starts
    /// receiving a latched topic, and sent in answer to one history query; further ones are
    /// refused and counted (`history_refused`).
    pub max_history_messages: usize,
    /// Bytes of those messages (headers included), in both directions.
    pub max_history_bytes: usize,
    /// Shared memory (by their rings and chunk pools) that other hosts' latched topics created
    /// here ahead of their subscribers may take together; a topic beyond is not created
    /// (counted as `over_limit` for its host, reported on the topic).
    pub max_latched_copy_bytes: u64,
    /// How long the sequences of a host that has gone are kept (a bridge restarted within
    /// this time resumes its count); then every entry of that host is removed.
    pub forget_host_after: Duration,
    /// How long a put to the network may hold a `Block` topic's local publishers before the
    /// bridge drains the topic's ring itself until the put returns, keeping the newest message
    /// to send next (at most 500 ms: half the 1 s Block timeout the bridge sees — a topic's
    /// segment records `Block`, not each publisher's own timeout, so a publisher whose timeout
    /// is shorter than this, plus a quarter of it, may time out once per slow put). A put on
    /// a lossy link may last this long (a TCP retransmission timeout is 200 ms): what is
    /// drained is counted (`stall_dropped`), the topic is not cut off.
    pub stall_after: Duration,
    /// How long one put must last before the topic's remote readers are taken for stalled (a
    /// stall: counted, and the topic cut off for `stall_cutoff`). A reader that stopped
    /// reading holds a put until Zenoh closes the link (5 s), a lossy link that still
    /// delivers returns it sooner (three losses of one segment in a row: 1.4 s); below 5 s,
    /// or a stalled reader is never cut off, only drained. Never less than `stall_after`.
    pub stalled_reader_after: Duration,
    /// How long a topic whose remote readers stalled it is sent without waiting for them
    /// (congestion control `Drop`); doubled at each further stall, up to 16 times.
    pub stall_cutoff: Duration,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            max_hosts: 64,
            max_tokens_per_host: 4096,
            max_stand_ins: 256,
            max_message_bytes: 64 << 20,
            max_description_bytes: 64 << 10,
            describes_in_flight: 4,
            max_seq_jump: 1 << 20,
            max_places_per_host: 1024,
            max_history_messages: 1024,
            max_history_bytes: 64 << 20,
            max_latched_copy_bytes: 1 << 30,
            forget_host_after: Duration::from_secs(60),
            stall_after: Duration::from_millis(200),
            stalled_reader_after: Duration::from_secs(2),
            stall_cutoff: Duration::from_secs(10),
        }
    }
}

impl Limits {
    /// Checks that every bound is usable.
    pub(crate) fn validate(&self) -> Result<(), String> {
        let positive = [
            ("max_hosts", self.max_hosts as u64),
            ("max_tokens_per_host", self.max_tokens_per_host as u64),
            ("max_stand_ins", self.max_stand_ins as u64),
            ("max_description_bytes", self.max_description_bytes as u64),
            ("describes_in_flight", self.describes_in_flight as u64),
            ("max_seq_jump", self.max_seq_jump),
            ("max_places_per_host", self.max_places_per_host as u64),
            ("max_history_messages", self.max_history_messages as u64),
            ("max_history_bytes", self.max_history_bytes as u64),
            ("max_latched_copy_bytes", self.max_latched_copy_bytes),
        ];
        for (name, v) in positive {
            if v == 0 {
                return Err(format!("limits.{name} must be > 0"));
            }
        }
        if self.max_message_bytes < crate::wire::HEADER_LEN + 1 {
            return Err("limits.max_message_bytes must exceed the 48-byte header".into());
        }
        if self.stall_after.is_zero() || self.stall_cutoff.is_zero() {
            return Err("limits.stall_after_ms and stall_cutoff_ms must be > 0".into());
        }
        Ok(())
    }
}
