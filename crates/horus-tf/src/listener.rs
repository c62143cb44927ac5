//! [`TfListener`]: a transform buffer kept filled from `tf` and `tf_static`.
//!
//! With the host's shared buffer ([`TfListener::open`]), every process that needs lookups
//! makes a listener, but only one process on the host subscribes: the holder of the feeder
//! claim ([`FeederClaim`]) decodes each `TFMessage` once and stores it in the shared
//! buffer; every other listener's thread only waits to take the claim over when its holder
//! exits (the kernel releases it, kill -9 included), asleep in a read of a connection to the
//! holder that the kernel ends at that moment ([`feeder_claim::watch`]). A process that
//! reads transforms then costs nothing per transform broadcast, and nothing while it waits.
//!
//! [`TfListener::per_process`] is the way tf2 works, kept for comparison and as the
//! fallback where shared memory is unavailable: the listener subscribes itself and keeps
//! its own copy of the tree in a per-process buffer.

use std::io::Read;
use std::net::Shutdown;
use std::os::unix::net::UnixStream;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use horus::ros::Ros;
use horus::{Subscriber, WaitMode};
use horus_ros_msgs::tf2_msgs::msg::TFMessage;

use crate::broadcaster_topics::{open_tf_topic, TF_STATIC_TOPIC, TF_TOPIC};
use crate::error::{LookupError, OpenError};
use crate::feeder_claim::{self, FeederClaim};
use crate::math::StampedTransform;
use crate::TfBuffer;

/// How often a standby listener tries to take the feeder claim over when it cannot wait
/// on the holder (a holder that does not listen, a full queue), and the least time between
/// two attempts after a wait.
const CLAIM_RETRY: Duration = Duration::from_millis(100);
/// The longest a feeder waits for a `tf` message before it looks at `tf_static` and its
/// stop flag.
const WAIT_SLICE: Duration = Duration::from_millis(20);
/// How long a feeder waits before opening the topics again after a failure.
const REOPEN_AFTER: Duration = Duration::from_millis(500);

/// Why a listener could not start.
#[derive(Debug, thiserror::Error)]
pub enum ListenerError {
    /// The feeding thread could not be started.
    #[error("starting the tf feeder thread: {0}")]
    Thread(std::io::Error),
}

/// What a listener's feeder did (counted in this process only).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FeederStats {
    /// Whether this process feeds the buffer now (holds the claim, or per-process).
    pub feeding: bool,
    /// `TFMessage`s received.
    pub messages: u64,
    /// Transforms stored.
    pub accepted: u64,
    /// Transforms the buffer refused (bad input, out of order, no room).
    pub refused: u64,
    /// Messages that were not valid `TFMessage`s.
    pub undecodable: u64,
    /// Messages overwritten before this feeder read them (counted by its subscribers).
    pub missed: u64,
    /// The last refusal or failure, as text.
    pub last_problem: Option<String>,
}

#[derive(Default)]
struct Shared {
    stop: AtomicBool,
    feeding: AtomicBool,
    messages: AtomicU64,
    accepted: AtomicU64,
    refused: AtomicU64,
    undecodable: AtomicU64,
    missed: AtomicU64,
    last_problem: Mutex<Option<String>>,
    /// A standby's connection to the claim's holder while it waits on it: the listener's
    /// drop shuts it down, which ends the wait at once.
    watching: Mutex<Option<UnixStream>>,
}

impl Shared {
    fn problem(&self, text: String) {
        if let Ok(mut p) = self.last_problem.lock() {
            *p = Some(text);
        }
    }
}

/// A transform buffer kept filled from `tf` and `tf_static` by a background thread.
/// Dropping it stops the thread (within a few tens of ms) and gives up the feeder claim.
pub struct TfListener {
    buffer: TfBuffer,
    shared: Arc<Shared>,
    thread: Option<JoinHandle<()>>,
    fallback: Option<OpenError>,
}

impl TfListener {
    /// A listener on the host's shared buffer of this process's namespace.
    pub fn new() -> Result<TfListener, ListenerError> {
        Self::open(&horus_shm::name::namespace())
    }

    /// A listener on the host's shared buffer of `namespace`. Where the shared buffer
    /// cannot be opened, a per-process one fed by this listener's own subscription, and
    /// the reason in [`fallback`](Self::fallback).
    pub fn open(namespace: &str) -> Result<TfListener, ListenerError> {
        let (buffer, fallback) = TfBuffer::open_or_in_process(namespace);
        Self::start(namespace, buffer, fallback)
    }

    /// A listener that keeps its own copy of the tree, fed by its own subscription (how
    /// tf2 works: each process subscribes to `tf` and decodes every transform).
    pub fn per_process(namespace: &str) -> Result<TfListener, ListenerError> {
        Self::start(namespace, TfBuffer::in_process(), None)
    }

    fn start(
        namespace: &str,
        buffer: TfBuffer,
        fallback: Option<OpenError>,
    ) -> Result<TfListener, ListenerError> {
        let shared = Arc::new(Shared::default());
        let feeder = Feeder {
            namespace: namespace.to_owned(),
            buffer: buffer.clone(),
            shared: Arc::clone(&shared),
        };
        let thread = std::thread::Builder::new()
            .name("horus-tf-feeder".into())
            .spawn(move || feeder.run())
            .map_err(ListenerError::Thread)?;
        Ok(TfListener {
            buffer,
            shared,
            thread: Some(thread),
            fallback,
        })
    }

    /// The buffer lookups read.
    pub fn buffer(&self) -> &TfBuffer {
        &self.buffer
    }

    /// Why the shared buffer could not be used, when this listener fell back to a
    /// per-process one.
    pub fn fallback(&self) -> Option<&OpenError> {
        self.fallback.as_ref()
    }

    /// See [`TfBuffer::lookup_transform`].
    pub fn lookup_transform(
        &self,
        target: &str,
        source: &str,
        time_ns: i64,
    ) -> Result<StampedTransform, LookupError> {
        self.buffer.lookup_transform(target, source, time_ns)
    }

    /// See [`TfBuffer::can_transform`].
    pub fn can_transform(&self, target: &str, source: &str, time_ns: i64) -> bool {
        self.buffer.can_transform(target, source, time_ns)
    }

    /// See [`TfBuffer::wait_for_transform`].
    pub fn wait_for_transform(
        &self,
        target: &str,
        source: &str,
        time_ns: i64,
        timeout: Duration,
    ) -> Result<StampedTransform, LookupError> {
        self.buffer
            .wait_for_transform(target, source, time_ns, timeout)
    }

    /// What this listener's feeder did.
    pub fn stats(&self) -> FeederStats {
        let s = &self.shared;
        FeederStats {
            feeding: s.feeding.load(Ordering::Relaxed),
            messages: s.messages.load(Ordering::Relaxed),
            accepted: s.accepted.load(Ordering::Relaxed),
            refused: s.refused.load(Ordering::Relaxed),
            undecodable: s.undecodable.load(Ordering::Relaxed),
            missed: s.missed.load(Ordering::Relaxed),
            last_problem: s.last_problem.lock().ok().and_then(|p| p.clone()),
        }
    }
}

impl Drop for TfListener {
    fn drop(&mut self) {
        self.shared.stop.store(true, Ordering::Relaxed);
        // A standby asleep on the holder: wake it. (One that has not stored its connection
        // yet sees the stop flag when it takes this lock after us.)
        if let Some(c) = &*self
            .shared
            .watching
            .lock()
            .unwrap_or_else(|e| e.into_inner())
        {
            let _ = c.shutdown(Shutdown::Both);
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// The feeding thread.
struct Feeder {
    namespace: String,
    buffer: TfBuffer,
    shared: Arc<Shared>,
}

/// The feeder's two subscriptions.
struct Inputs {
    tf: Subscriber<Ros<TFMessage>>,
    tf_static: Subscriber<Ros<TFMessage>>,
}

impl Feeder {
    fn stopped(&self) -> bool {
        self.shared.stop.load(Ordering::Relaxed)
    }

    fn run(self) {
        // Shared buffer: feed only while holding the host's claim. Per-process: always.
        let mut claim = None;
        let mut inputs: Option<Inputs> = None;
        while !self.stopped() {
            if self.buffer.is_shared() && claim.is_none() {
                claim = FeederClaim::try_take(&self.namespace);
                if claim.is_none() {
                    self.wait_for_the_holder();
                    continue;
                }
            }
            self.shared.feeding.store(true, Ordering::Relaxed);
            let Some(i) = &mut inputs else {
                match self.subscribe() {
                    Ok(i) => inputs = Some(i),
                    Err(e) => {
                        self.shared.problem(e);
                        std::thread::sleep(REOPEN_AFTER);
                    }
                }
                continue;
            };
            // Dynamic transforms: wait for the next one (a short slice, so that statics
            // and the stop flag are looked at often), then take what else is there.
            if let Ok(sample) = i.tf.recv_timeout(WAIT_SLICE) {
                self.feed(sample.decode(), false);
                while let Some(sample) = i.tf.try_recv() {
                    self.feed(sample.decode(), false);
                }
            }
            while let Some(sample) = i.tf_static.try_recv() {
                self.feed(sample.decode(), true);
            }
            let missed = i.tf.stats().overrun + i.tf_static.stats().overrun;
            self.shared.missed.store(missed, Ordering::Relaxed);
        }
        self.shared.feeding.store(false, Ordering::Relaxed);
    }

    /// A standby's wait: asleep until the claim's holder lets go (its socket closed: it
    /// exited or dropped its listener) or this listener is dropped; at least
    /// [`CLAIM_RETRY`] between two attempts to take the claim, so that a holder that ends
    /// connections at once (not a horus feeder) cannot make us spin.
    fn wait_for_the_holder(&self) {
        let start = Instant::now();
        if let Some(conn) = feeder_claim::watch(&self.namespace) {
            let mut watching = self
                .shared
                .watching
                .lock()
                .unwrap_or_else(|e| e.into_inner());
            // Under the lock: a drop that stored the flag before it took the lock is seen here;
            // one after finds the connection and shuts it down.
            if self.stopped() {
                return;
            }
            *watching = conn.try_clone().ok();
            drop(watching);
            // Returns at the holder's exit (end of file, ECONNRESET), at our drop (shut
            // down), or on a signal: each means "look again".
            let _ = (&conn).read(&mut [0u8; 1]);
            *self
                .shared
                .watching
                .lock()
                .unwrap_or_else(|e| e.into_inner()) = None;
        }
        if !self.stopped() {
            std::thread::sleep(CLAIM_RETRY.saturating_sub(start.elapsed()));
        }
    }

    fn subscribe(&self) -> Result<Inputs, String> {
        let open = |name: &str| {
            open_tf_topic(Some(&self.namespace), name)
                .and_then(|t| t.subscriber_with(WaitMode::Futex))
                .map(|mut s| {
                    // Sleep at once when nothing is there: no polls, no yields. Transforms
                    // come at tens of Hz, not back to back; yielding between them only
                    // switched to other processes (4 context switches per message).
                    s.set_spin(0);
                    s
                })
                .map_err(|e| format!("subscribing to {name}: {e}"))
        };
        // tf_static first: a broadcaster that waits for a subscriber of tf before it sends
        // (tf is volatile) then knows that tf_static is subscribed too.
        let tf_static = open(TF_STATIC_TOPIC)?;
        Ok(Inputs {
            tf: open(TF_TOPIC)?,
            tf_static,
        })
    }

    fn feed(&self, msg: Result<TFMessage, horus::cdr::DecodeError>, is_static: bool) {
        let s = &self.shared;
        // Relaxed: statistics only.
        s.messages.fetch_add(1, Ordering::Relaxed);
        let msg = match msg {
            Ok(m) => m,
            Err(e) => {
                s.undecodable.fetch_add(1, Ordering::Relaxed);
                s.problem(format!("a message that is not a TFMessage: {e}"));
                return;
            }
        };
        let report = self.buffer.feed_tf_message(&msg, is_static);
        s.accepted
            .fetch_add(report.accepted as u64, Ordering::Relaxed);
        s.refused
            .fetch_add(report.refused.len() as u64, Ordering::Relaxed);
        if let Some((_, e)) = report.refused.last() {
            s.problem(e.to_string());
        }
    }
}
