//! [`TfBuffer`]: the handle every process uses to write and look up transforms.

use std::sync::atomic::AtomicU64 as LocalCounter;
use std::sync::Arc;
use std::time::{Duration, Instant};

use horus_ros_msgs::geometry_msgs::msg::TransformStamped;
use horus_ros_msgs::tf2_msgs::msg::TFMessage;
use horus_shm::sync::Ordering;
use horus_shm::ProcessId;

use crate::error::{LookupError, OpenError, SetError};
use crate::layout::{
    Capacities, Layout, ACCEPTED_OFF, CHANGE_OFF, LEASE_OFF, REFUSED_OFF, WAITERS_OFF,
};
use crate::lease::{self, Attempt};
use crate::math::{StampedTransform, Transform};
use crate::mem::{Backing, Mem};
use crate::names::{frame_count, Names};
use crate::writer::FutureLimit;
use crate::{lookup, members, open, writer};

/// The time argument of a lookup that asks for the latest common time.
pub const LATEST: i64 = 0;

/// Nanoseconds since the epoch of a ROS `builtin_interfaces/Time`.
pub fn stamp_ns(t: &horus_ros_msgs::builtin_interfaces::msg::Time) -> i64 {
    i64::from(t.sec) * 1_000_000_000 + i64::from(t.nanosec)
}

/// Options for opening or creating a buffer.
#[derive(Clone, Debug)]
pub struct TfBufferBuilder {
    caps: Capacities,
    max_future: Option<Duration>,
    lease_wait: Duration,
}

impl Default for TfBufferBuilder {
    fn default() -> Self {
        TfBufferBuilder {
            caps: Capacities::default(),
            max_future: Some(Duration::from_secs(60)),
            lease_wait: Duration::from_millis(500),
        }
    }
}

impl TfBufferBuilder {
    /// Capacities of a buffer this call creates. Opening an existing shared
    /// buffer keeps its creator's (see [`TfBuffer::capacities`]).
    pub fn capacities(mut self, caps: Capacities) -> Self {
        self.caps = caps;
        self
    }

    /// This handle refuses dynamic transforms stamped more than `max` ahead
    /// of the host clock ([`SetError::StampInFuture`]); `None` accepts any
    /// stamp (simulated clocks ahead of the host). Default 60 s. Such a stamp
    /// would otherwise expire the frame's whole history and block every
    /// correct later stamp as [`SetError::NotNewer`].
    pub fn max_future(mut self, max: Option<Duration>) -> Self {
        self.max_future = max;
        self
    }

    /// How long a write waits for another live writer's lease before
    /// [`SetError::WriterBusy`] (default 500 ms; a write holds it for
    /// microseconds).
    pub fn lease_wait(mut self, wait: Duration) -> Self {
        self.lease_wait = wait;
        self
    }

    /// Opens the host buffer of `namespace`, creating it if there is none.
    pub fn open(self, namespace: &str) -> Result<TfBuffer, OpenError> {
        let name = open::segment_name(namespace)?;
        let me = ProcessId::current().token();
        let (mem, place) = open::open_or_create(&name, self.caps, me)?;
        Ok(self.wrap(mem, Some(place), me))
    }

    /// A buffer in this process's memory only (the fallback when shared
    /// memory is unavailable): the same API and semantics, seen by this
    /// process alone.
    pub fn in_process(self) -> Result<TfBuffer, OpenError> {
        let layout = Layout::new(self.caps).map_err(OpenError::Config)?;
        let me = ProcessId::current().token();
        Ok(self.wrap(Mem::heap(layout), None, me))
    }

    fn wrap(self, mem: Mem, place: Option<usize>, me: u64) -> TfBuffer {
        TfBuffer {
            inner: Arc::new(Inner {
                mem,
                names: Names::default(),
                place,
                me,
                max_future: self.max_future,
                lease_wait: self.lease_wait,
                accepted: LocalCounter::new(0),
                refused: LocalCounter::new(0),
            }),
        }
    }
}

/// A transform buffer: the host's shared one ([`TfBuffer::open`]) or a
/// per-process one ([`TfBuffer::in_process`]). Cheap to clone (handles share
/// one mapping); thread-safe. Lookups never block and never take the lease.
#[derive(Clone)]
pub struct TfBuffer {
    inner: Arc<Inner>,
}

struct Inner {
    mem: Mem,
    names: Names,
    /// Our participant place (shared buffers only).
    place: Option<usize>,
    /// This process's token ([`ProcessId::token`]).
    me: u64,
    max_future: Option<Duration>,
    lease_wait: Duration,
    accepted: LocalCounter,
    refused: LocalCounter,
}

impl Drop for Inner {
    fn drop(&mut self) {
        if let (Some(place), Backing::Shm(seg)) = (self.place, &self.mem.backing) {
            members::leave(&self.mem, place, self.me);
            // The last one out removes the name.
            if members::try_close(&self.mem, self.me) {
                seg.unlink_if_same();
            }
        }
    }
}

impl std::fmt::Debug for TfBuffer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TfBuffer")
            .field("shared", &self.is_shared())
            .field("capacities", &self.capacities())
            .finish()
    }
}

/// Counters of transforms written and refused.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TfStats {
    /// Transforms this handle stored.
    pub accepted: u64,
    /// Transforms this handle refused (each with a [`SetError`] returned).
    pub refused: u64,
    /// Transforms stored by every writer of the buffer.
    pub accepted_all: u64,
    /// Transforms refused by every writer of the buffer.
    pub refused_all: u64,
    /// Frames in the table.
    pub frames: u32,
}

/// What [`TfBuffer::feed_tf_message`] did with a message's transforms.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct FeedReport {
    /// Transforms stored.
    pub accepted: usize,
    /// Transforms refused, with why (index in the message, error).
    pub refused: Vec<(usize, SetError)>,
}

/// One frame of the buffer, for `horus tf frames`.
#[derive(Clone, Debug, PartialEq)]
pub struct FrameInfo {
    /// The frame id.
    pub name: String,
    /// Its parent in its newest transform (None: a root, no transform).
    pub parent: Option<String>,
    /// Whether its transform is static.
    pub is_static: bool,
    /// Stamp of its newest transform (ns).
    pub latest_stamp_ns: Option<i64>,
    /// Stamp of its oldest transform still held (ns).
    pub earliest_stamp_ns: Option<i64>,
    /// Transforms held (1 for a static frame).
    pub samples: u64,
    /// Mean rate over the samples held (Hz), when there are two or more.
    pub rate_hz: Option<f64>,
    /// Pid of the process that wrote its newest transform.
    pub writer_pid: Option<u32>,
    /// Why some of the above could not be read (a peer's garbage).
    pub problem: Option<String>,
}

impl TfBuffer {
    /// Options for opening or creating a buffer.
    pub fn builder() -> TfBufferBuilder {
        TfBufferBuilder::default()
    }

    /// Opens the host buffer of `namespace` (creating it with the default
    /// [`Capacities`] if there is none).
    pub fn open(namespace: &str) -> Result<TfBuffer, OpenError> {
        TfBufferBuilder::default().open(namespace)
    }

    /// Opens the host buffer of this process's namespace (`HORUS_NAMESPACE`,
    /// or `u<uid>`).
    pub fn open_default() -> Result<TfBuffer, OpenError> {
        Self::open(&horus_shm::name::namespace())
    }

    /// A per-process buffer with the default capacities.
    pub fn in_process() -> TfBuffer {
        TfBufferBuilder::default()
            .in_process()
            .expect("default capacities are valid")
    }

    /// The host buffer of `namespace`, or when it cannot be opened, a
    /// per-process buffer and the reason.
    pub fn open_or_in_process(namespace: &str) -> (TfBuffer, Option<OpenError>) {
        match Self::open(namespace) {
            Ok(b) => (b, None),
            Err(e) => (Self::in_process(), Some(e)),
        }
    }

    /// Whether this is the host's shared buffer (false: per-process fallback).
    pub fn is_shared(&self) -> bool {
        self.inner.mem.is_shared()
    }

    /// The capacities in force.
    pub fn capacities(&self) -> Capacities {
        self.inner.mem.layout.caps
    }

    /// Stores `t` (its `header.frame_id` is the parent, `child_frame_id` the
    /// child, `header.stamp` the time). Static transforms hold at every time.
    pub fn set_transform(&self, t: &TransformStamped, is_static: bool) -> Result<(), SetError> {
        let tf = transform_of(t);
        self.set(
            &t.header.frame_id,
            &t.child_frame_id,
            stamp_ns(&t.header.stamp),
            &tf,
            is_static,
        )
    }

    /// Stores the transform of `child` in `parent` at `stamp_ns`.
    pub fn set(
        &self,
        parent: &str,
        child: &str,
        stamp_ns: i64,
        transform: &Transform,
        is_static: bool,
    ) -> Result<(), SetError> {
        let r = writer::check(
            parent,
            child,
            stamp_ns,
            transform,
            is_static,
            FutureLimit::from_now(self.inner.max_future),
        )
        .and_then(|c| {
            self.with_lease(|mem, names, me| writer::write_locked(mem, names, &c, me))?
        });
        self.count(r.is_ok());
        r
    }

    /// Stores every transform of a `tf2_msgs/TFMessage` (from `/tf`, or from
    /// `/tf_static` with `is_static`), under one lease. Each refusal is
    /// reported and counted; the others are stored.
    pub fn feed_tf_message(&self, msg: &TFMessage, is_static: bool) -> FeedReport {
        let mut report = FeedReport::default();
        let mut checked = Vec::with_capacity(msg.transforms.len());
        // The clock once for the message: its transforms arrived together.
        let future = FutureLimit::from_now(self.inner.max_future);
        for (i, t) in msg.transforms.iter().enumerate() {
            match writer::check(
                &t.header.frame_id,
                &t.child_frame_id,
                stamp_ns(&t.header.stamp),
                &transform_of(t),
                is_static,
                future,
            ) {
                Ok(c) => checked.push((i, c)),
                Err(e) => report.refused.push((i, e)),
            }
        }
        let stored = self.with_lease(|mem, names, me| {
            checked
                .iter()
                .map(|(i, c)| (*i, writer::write_locked(mem, names, c, me)))
                .collect::<Vec<_>>()
        });
        match stored {
            Ok(results) => {
                for (i, r) in results {
                    match r {
                        Ok(()) => report.accepted += 1,
                        Err(e) => report.refused.push((i, e)),
                    }
                }
            }
            Err(e) => report
                .refused
                .extend(checked.iter().map(|(i, _)| (*i, e.clone()))),
        }
        report.refused.sort_by_key(|(i, _)| *i);
        self.count_n(report.accepted as u64, report.refused.len() as u64);
        report
    }

    /// The transform that maps coordinates in `source` to coordinates in
    /// `target` at `time_ns` ([`LATEST`]: the latest time all transforms on
    /// the path have), with tf2's semantics.
    pub fn lookup_transform(
        &self,
        target: &str,
        source: &str,
        time_ns: i64,
    ) -> Result<StampedTransform, LookupError> {
        lookup::lookup(&self.inner.mem, &self.inner.names, target, source, time_ns)
    }

    /// Whether [`lookup_transform`](Self::lookup_transform) would succeed now.
    pub fn can_transform(&self, target: &str, source: &str, time_ns: i64) -> bool {
        self.lookup_transform(target, source, time_ns).is_ok()
    }

    /// [`lookup_transform`](Self::lookup_transform), retried whenever a
    /// writer stores something, until it succeeds or `timeout` passes
    /// ([`LookupError::Timeout`] with the last error).
    pub fn wait_for_transform(
        &self,
        target: &str,
        source: &str,
        time_ns: i64,
        timeout: Duration,
    ) -> Result<StampedTransform, LookupError> {
        let mem = &self.inner.mem;
        let change = mem.word32(CHANGE_OFF);
        let waiters = mem.word32(WAITERS_OFF);
        let deadline = Instant::now() + timeout;
        // SeqCst (here, on the change load and in `announce`): Dekker-style,
        // either the writer sees us waiting and wakes us, or we see its new
        // change count and do not sleep on the old one.
        waiters.fetch_add(1, Ordering::SeqCst);
        let result = loop {
            let seen = change.load(Ordering::SeqCst);
            let last = match self.lookup_transform(target, source, time_ns) {
                Ok(t) => break Ok(t),
                Err(e) => e,
            };
            let now = Instant::now();
            if now >= deadline {
                break Err(LookupError::Timeout {
                    waited: timeout,
                    last: Box::new(last),
                });
            }
            // Sleep in slices: a writer that dies between storing and waking
            // (or a peer that never wakes) costs us at most one slice.
            let slice = (deadline - now).min(Duration::from_millis(50));
            horus_shm::futex::wait(change, seen, Some(slice));
        };
        waiters.fetch_sub(1, Ordering::SeqCst);
        result
    }

    /// Every frame of the buffer, in creation order.
    pub fn frames(&self) -> Vec<FrameInfo> {
        crate::frames::list(&self.inner.mem, &self.inner.names)
    }

    /// Counters of transforms stored and refused.
    pub fn stats(&self) -> TfStats {
        let mem = &self.inner.mem;
        TfStats {
            accepted: self.inner.accepted.load(Ordering::Relaxed),
            refused: self.inner.refused.load(Ordering::Relaxed),
            accepted_all: mem.word(ACCEPTED_OFF).load(Ordering::Relaxed),
            refused_all: mem.word(REFUSED_OFF).load(Ordering::Relaxed),
            frames: frame_count(mem),
        }
    }

    fn count(&self, ok: bool) {
        self.count_n(u64::from(ok), u64::from(!ok));
    }

    fn count_n(&self, accepted: u64, refused: u64) {
        let mem = &self.inner.mem;
        // Relaxed: statistics, no ordering with anything else.
        if accepted > 0 {
            self.inner.accepted.fetch_add(accepted, Ordering::Relaxed);
            mem.word(ACCEPTED_OFF)
                .fetch_add(accepted, Ordering::Relaxed);
        }
        if refused > 0 {
            self.inner.refused.fetch_add(refused, Ordering::Relaxed);
            mem.word(REFUSED_OFF).fetch_add(refused, Ordering::Relaxed);
        }
    }

    /// Runs `f` holding the writer lease, then wakes waiting lookups.
    fn with_lease<R>(&self, f: impl FnOnce(&Mem, &Names, u64) -> R) -> Result<R, SetError> {
        let inner = &*self.inner;
        let word = inner.mem.word(LEASE_OFF);
        let start = Instant::now();
        let mut tries = 0u32;
        loop {
            // Liveness costs a /proc read: only ask once the holder has kept
            // the lease for a while (a write holds it for microseconds).
            let check = tries >= 256;
            let is_alive = |token: u64| !check || ProcessId::from_token(token).is_alive();
            match lease::try_take(word, inner.me, is_alive) {
                Attempt::Taken | Attempt::TookOver(_) => break,
                Attempt::Held(holder) => {
                    let waited = start.elapsed();
                    if waited >= inner.lease_wait {
                        return Err(SetError::WriterBusy {
                            pid: ProcessId::from_token(holder).pid,
                            waited,
                        });
                    }
                    tries += 1;
                    if tries < 64 {
                        horus_shm::sync::spin_hint();
                    } else if tries < 256 {
                        std::thread::yield_now();
                    } else {
                        std::thread::sleep(Duration::from_micros(100));
                    }
                }
            }
        }
        // Gives the lease back even if `f` panics.
        struct Held<'a>(&'a horus_shm::sync::AtomicU64, u64);
        impl Drop for Held<'_> {
            fn drop(&mut self) {
                lease::give_back(self.0, self.1);
            }
        }
        let held = Held(word, inner.me);
        let r = f(&inner.mem, &inner.names, inner.me);
        drop(held);
        self.announce();
        Ok(r)
    }

    /// Tells waiting lookups that something changed.
    fn announce(&self) {
        let mem = &self.inner.mem;
        let change = mem.word32(CHANGE_OFF);
        change.fetch_add(1, Ordering::SeqCst);
        if mem.word32(WAITERS_OFF).load(Ordering::SeqCst) != 0 {
            horus_shm::futex::wake_all(change);
        }
    }
}

fn transform_of(t: &TransformStamped) -> Transform {
    let tr = &t.transform.translation;
    let q = &t.transform.rotation;
    Transform {
        translation: [tr.x, tr.y, tr.z],
        rotation: [q.x, q.y, q.z, q.w],
    }
}
