//! A point-in-time view of every participant's counters, readable from any
//! process that maps the channel: this is how each end sees the other's
//! losses.

use crate::channel::Channel;
use crate::latency::LatencySnapshot;
use crate::process::ProcessId;
use crate::records;
use crate::sync::Ordering;

/// Counters of one publisher place.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PublisherSnapshot {
    /// Place index.
    pub place: usize,
    /// Owning process id.
    pub pid: u32,
    /// Messages published from this place (all owners).
    pub sent: u64,
    /// Payload bytes of the messages published from this place (wrapping).
    pub bytes_sent: u64,
    /// Messages handed back because the ring was full (`Reject`).
    pub rejected: u64,
    /// Messages handed back after waiting for room (`Block`).
    pub timed_out: u64,
    /// Loans refused because every chunk was in use.
    pub loan_failures: u64,
    /// Messages sent while no subscriber was active.
    pub undelivered: u64,
    /// Sequence number of the last committed message.
    pub head: u64,
}

/// Counters of one subscriber place.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SubscriberSnapshot {
    /// Place index.
    pub place: usize,
    /// Owning process id.
    pub pid: u32,
    /// Messages delivered.
    pub received: u64,
    /// Messages overwritten before being read (`DropOldest`).
    pub overrun: u64,
    /// Messages passed over by `latest()`.
    pub skipped: u64,
    /// Slots that failed validation.
    pub malformed: u64,
    /// Messages published but not yet read, summed over rings.
    pub backlog: u64,
    /// An observer (never back-pressures; its losses are its own).
    pub observer: bool,
    /// Its histogram of delivery latency (publish stamp to receive), as its
    /// owner recorded it (see [`SubscriberPort::record_latency`]); untrusted.
    ///
    /// [`SubscriberPort::record_latency`]: crate::SubscriberPort::record_latency
    pub latency: LatencySnapshot,
}

/// Every active place of a channel.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ChannelSnapshot {
    /// Active publishers.
    pub publishers: Vec<PublisherSnapshot>,
    /// Active subscribers.
    pub subscribers: Vec<SubscriberSnapshot>,
    /// Subscribers registered for futex wake-ups (blocking `recv`),
    /// including dead ones not yet reclaimed. While 0, publishers skip the
    /// wake path entirely.
    pub blocking_subscribers: u32,
    /// Futex waits in progress right now (a subscriber's `recv` and its
    /// scheduler's readiness wait count separately), including those of
    /// dead subscribers not yet reclaimed. While non-zero, every send makes
    /// a wake-up system call.
    pub sleeping_subscribers: u32,
}

impl Channel {
    /// Reads the counters of every active place.
    pub fn snapshot(&self) -> ChannelSnapshot {
        let m = self.membership().load(Ordering::Acquire);
        let cfg = self.layout().config;
        let wake = self.wake();
        let mut snap = ChannelSnapshot {
            blocking_subscribers: wake.blocking.load(Ordering::Relaxed).count_ones(),
            sleeping_subscribers: wake.waiting.load(Ordering::Relaxed).count_ones(),
            ..ChannelSnapshot::default()
        };
        for k in 0..cfg.max_publishers as usize {
            if records::pubs_of(m) & (1 << k) == 0 {
                continue;
            }
            let r = self.pub_record(k);
            snap.publishers.push(PublisherSnapshot {
                place: k,
                pid: ProcessId::from_token(r.owner.load(Ordering::Relaxed)).pid,
                sent: r.sent.load(Ordering::Relaxed),
                bytes_sent: r.bytes_sent.load(Ordering::Relaxed),
                rejected: r.rejected.load(Ordering::Relaxed),
                timed_out: r.timed_out.load(Ordering::Relaxed),
                loan_failures: r.loan_failures.load(Ordering::Relaxed),
                undelivered: r.undelivered.load(Ordering::Relaxed),
                head: r.head.load(Ordering::Relaxed),
            });
        }
        let observers = wake.observers.load(Ordering::Relaxed);
        for j in 0..cfg.max_subscribers as usize {
            if records::subs_of(m) & (1 << j) == 0 {
                continue;
            }
            let r = self.sub_record(j);
            // Saturating throughout: heads and cursors are whatever the
            // segment holds, and a corrupt one must not panic a reader.
            let backlog = (0..cfg.max_publishers as usize)
                .map(|k| {
                    let head = self.pub_record(k).head.load(Ordering::Relaxed);
                    let cursor = self.cursor(j, k).load(Ordering::Relaxed);
                    if records::is_unstarted(cursor) {
                        return 0;
                    }
                    head.saturating_add(1).saturating_sub(cursor)
                })
                .fold(0u64, u64::saturating_add);
            snap.subscribers.push(SubscriberSnapshot {
                place: j,
                pid: ProcessId::from_token(r.owner.load(Ordering::Relaxed)).pid,
                received: r.received.load(Ordering::Relaxed),
                overrun: r.overrun.load(Ordering::Relaxed),
                skipped: r.skipped.load(Ordering::Relaxed),
                malformed: r.malformed.load(Ordering::Relaxed),
                backlog,
                observer: observers & (1 << j) != 0,
                latency: self.latency_record(j).snapshot(),
            });
        }
        snap
    }
}
