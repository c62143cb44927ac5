//! The subscribing end of a topic.

use std::marker::PhantomData;
use std::sync::Arc;
use std::time::{Duration, Instant};

use horus_msgs::Message;
use horus_shm::{Received, SubscriberPort};

use crate::error::{RecvError, TopicError};
use crate::latency::LatencyProbe;
use crate::qos::{StartAt, WaitMode};
use crate::recv_buf::RecvBuf;
use crate::sample::Sample;
use crate::stats::SubscriberStats;
use crate::topic::TopicInner;

/// Polls before a futex subscriber goes to sleep in `recv`.
const DEFAULT_SPIN: u32 = 64;

/// `recv_timeout` sleeps at most this long at a time, then probes whether
/// the segment was truncated meanwhile: a truncation wakes no futex waiter.
const LOST_POLL: Duration = Duration::from_millis(100);

/// Receives messages of type `T`. Each subscriber has its own cursor: it
/// sees every message published after it was created (unless overwritten
/// under `DropOldest`, which it counts), independently of other subscribers,
/// and on a transient-local topic first the latched history (see
/// [`Durability`](crate::Durability) and [`StartAt`]).
pub struct Subscriber<T> {
    topic: Arc<TopicInner>,
    port: SubscriberPort,
    /// Where inline messages are copied out of the ring (and what their
    /// samples share).
    buf: RecvBuf,
    mode: WaitMode,
    spin: u32,
    latency: LatencyProbe,
    _t: PhantomData<fn() -> T>,
}

impl<T: Message> Subscriber<T> {
    pub(crate) fn new(
        topic: Arc<TopicInner>,
        mode: WaitMode,
        observer: bool,
    ) -> Result<Self, TopicError> {
        Self::new_at(topic, mode, observer, StartAt::Durability)
    }

    pub(crate) fn new_at(
        topic: Arc<TopicInner>,
        mode: WaitMode,
        observer: bool,
        start: StartAt,
    ) -> Result<Self, TopicError> {
        let blocking = mode == WaitMode::Futex;
        let port = topic.join(
            |chan| SubscriberPort::join_at(chan, blocking, observer, start),
            &T::SCHEMA.to_string(),
        )?;
        let words = port.slot_payload() / 8;
        Ok(Subscriber {
            topic,
            port,
            buf: RecvBuf::new(words, crate::sample::shares_buffer::<T>()),
            mode,
            spin: DEFAULT_SPIN,
            latency: LatencyProbe::of::<T>(),
            _t: PhantomData,
        })
    }

    /// How many empty polls `recv` makes before sleeping (futex mode); after them it yields
    /// the CPU a few times, polling after each, before it sleeps. 0 sleeps at once (no
    /// polls, no yields).
    pub fn set_spin(&mut self, polls: u32) {
        self.spin = polls;
    }

    /// The next message, if one is ready. Never blocks.
    ///
    /// Returns `None`, not an error, once another process truncated the
    /// topic's segment and that was noticed (by any endpoint sharing this
    /// mapping, or by a fault): the endpoint is dead. Call
    /// [`Subscriber::check`] to tell that apart from an idle topic. Costs
    /// one relaxed load.
    // `#[inline]`: the caller's optimiser then sees how a small message's
    // `Sample` (72 B) is built and moved and drops most of the copying.
    // Outlined, it came back through memory and the caller moved it again
    // before its reply could read it: +15-20 ns per 16 B busy-poll round
    // trip over e7ea999 (/work/notes/regress16c.md). The port's poll
    // (`try_receive`) and `accept` stay calls.
    #[inline]
    pub fn try_recv(&mut self) -> Option<Sample<T>> {
        if self.port.is_lost() {
            return None;
        }
        if !crate::sample::shares_buffer::<T>() {
            // A small message goes straight from the ring slot into the
            // words its sample keeps: no receive buffer in between.
            loop {
                let mut words = [0u64; crate::sample::SMALL_WORDS];
                let r = self.port.try_receive(&mut words)?;
                if let Some(s) = self.accept_small(r, words) {
                    return Some(s);
                }
            }
        }
        loop {
            let r = self.port.try_receive(self.buf.target())?;
            if let Some(s) = self.accept(r) {
                return Some(s);
            }
        }
    }

    /// Waits for the next message (futex sleep or busy poll, per the wait
    /// mode). If another process truncates the topic's segment, no message
    /// comes and this waits for ever: use [`Subscriber::recv_timeout`],
    /// which reports it.
    pub fn recv(&mut self) -> Sample<T> {
        loop {
            if let Ok(s) = self.wait(None) {
                return s;
            }
        }
    }

    /// Waits at most `timeout` for the next message.
    /// [`RecvError::SegmentLost`] if another process truncated the topic's
    /// segment: at once, or within 100 ms if the truncation happens during
    /// the wait (a sleeping subscriber wakes that often to check).
    pub fn recv_timeout(&mut self, timeout: Duration) -> Result<Sample<T>, RecvError> {
        let topic = Arc::clone(&self.topic);
        let lost = || RecvError::SegmentLost {
            topic: topic.name.clone(),
        };
        // A probe (the segment's last page), not only the flag: a
        // truncation that cut off nothing this subscriber reads is noticed
        // too, before waiting rather than after.
        if self.port.probe_lost() {
            return Err(lost());
        }
        let deadline = Instant::now() + timeout;
        loop {
            let slice = deadline.min(Instant::now() + LOST_POLL);
            if let Ok(s) = self.wait(Some(slice)) {
                return Ok(s);
            }
            if self.port.probe_lost() {
                return Err(lost());
            }
            if Instant::now() >= deadline {
                return Err(RecvError::Timeout(timeout));
            }
        }
    }

    /// `Err(TopicError::SegmentLost)` if another process truncated the
    /// topic's segment: this subscriber is then dead (drop it and open the
    /// topic again). Touches the segment's last page, so it notices any
    /// truncation, also one that cut off nothing this subscriber reads.
    /// Cheap enough to call every cycle (one load and a branch).
    pub fn check(&self) -> Result<(), TopicError> {
        if self.port.probe_lost() {
            return Err(TopicError::SegmentLost {
                topic: self.topic.name.clone(),
            });
        }
        Ok(())
    }

    /// Skips to the newest message: everything older is passed over and
    /// counted as `skipped`. `None` if nothing new was published.
    pub fn latest(&mut self) -> Option<Sample<T>> {
        self.port.skip_to_newest();
        self.try_recv()
    }

    fn wait(&mut self, deadline: Option<Instant>) -> Result<Sample<T>, ()> {
        loop {
            let r = match self.mode {
                WaitMode::Futex => {
                    self.port
                        .receive_blocking(self.buf.target(), self.spin, deadline)
                }
                WaitMode::BusyPoll => self.poll_until(deadline),
            };
            match r {
                Some(r) => {
                    if let Some(s) = self.accept(r) {
                        return Ok(s);
                    }
                }
                None => return Err(()),
            }
        }
    }

    fn poll_until(&mut self, deadline: Option<Instant>) -> Option<Received> {
        let mut n = 0u32;
        let out = self.buf.target();
        loop {
            if let Some(r) = self.port.try_receive(out) {
                return Some(r);
            }
            n = n.wrapping_add(1);
            if n.is_multiple_of(1024) && deadline.is_some_and(|d| Instant::now() >= d) {
                return None;
            }
            std::hint::spin_loop();
        }
    }

    /// [`accept`](Self::accept) for a small `T` received into `words`
    /// (not the receive buffer).
    fn accept_small(
        &mut self,
        r: Received,
        words: [u64; crate::sample::SMALL_WORDS],
    ) -> Option<Sample<T>> {
        let size = std::mem::size_of::<T>();
        match r {
            Received::Inline { len } if len == size => {
                self.latency.observe(
                    &bytemuck::cast_slice::<u64, u8>(&words)[..size],
                    &mut self.port,
                );
                let s = Sample::small(words);
                if s.is_none() {
                    self.port.count_malformed();
                }
                s
            }
            r => self.accept(r),
        }
    }

    /// Turns what the port delivered into a typed sample, rejecting (and
    /// counting) payloads whose size does not fit `T`.
    fn accept(&mut self, r: Received) -> Option<Sample<T>> {
        let size = std::mem::size_of::<T>();
        match r {
            Received::Inline { len } if len == size => {
                self.latency
                    .observe(self.buf.bytes(0, size), &mut self.port);
                // No second copy of a large message: the sample shares the
                // buffer the port copied it into.
                let s = Sample::inline(&self.buf, 0);
                if s.is_none() {
                    self.port.count_malformed();
                }
                s
            }
            Received::Chunk { pool, chunk, len } if len >= size => {
                let ptr = self.port.chunk_ptr(pool, chunk);
                let s = Sample::chunk(Arc::clone(self.port.place()), pool, chunk, ptr, len);
                self.latency
                    .observe(bytemuck::bytes_of(&*s), &mut self.port);
                Some(s)
            }
            Received::Chunk { pool, chunk, .. } => {
                self.port.place().release_chunk(pool, chunk);
                self.port.count_malformed();
                None
            }
            Received::Inline { .. } => {
                self.port.count_malformed();
                None
            }
        }
    }

    /// This subscriber's counters.
    pub fn stats(&self) -> SubscriberStats {
        SubscriberStats {
            received: self.port.received(),
            overrun: self.port.overrun(),
            skipped: self.port.skipped(),
            malformed: self.port.malformed(),
            publishers: self.port.publishers(),
            latency: self.port.latency(),
        }
    }

    /// Counters of every endpoint on the topic, in every process.
    pub fn topic_stats(&self) -> crate::TopicStats {
        crate::TopicStats::from_snapshot(self.port.snapshot())
    }

    /// Publishers active now.
    pub fn publishers(&self) -> u32 {
        self.port.publishers()
    }

    /// The topic name.
    pub fn topic(&self) -> &str {
        &self.topic.name
    }

    /// Whether this subscriber is an observer ([`Topic::observer`]).
    ///
    /// [`Topic::observer`]: crate::Topic::observer
    pub fn is_observer(&self) -> bool {
        self.port.is_observer()
    }

    /// The byte-level port (for the scheduler glue's readiness checks).
    pub(crate) fn port(&self) -> &SubscriberPort {
        &self.port
    }
}
