//! A topic handle: a name, a message type, and the QoS every endpoint on it
//! shares. Endpoints are made from it.

use std::marker::PhantomData;
use std::sync::Arc;

use horus_msgs::Message;
use horus_shm::{Channel, ChannelConfig, OpenError, SegmentError};

use crate::error::TopicError;
use crate::qos::{Durability, Overflow, StartAt, WaitMode};
use crate::{schema_record, Publisher, Subscriber};

/// Messages up to this size travel inside the ring slots (copied in on send
/// and out on receive); larger ones and messages with a tail travel in pool
/// chunks (written and read in place). 512 B: from about 768 B a round trip
/// through a chunk costs less than through a slot (docs/benchmarks.md, "Where a
/// 1,480 B round trip's time over `ref:touch` goes").
pub const INLINE_MAX: usize = 512;

const DEFAULT_DEPTH: u32 = 16;
pub(crate) const DEFAULT_TAIL_DEPTH: u32 = 4;
/// Fixed-size messages up to this size keep the default depth of 16 whether
/// they travel inline or in chunks (2 KiB was the inline limit: moving them
/// to chunks must not shorten their history); larger ones and messages with
/// a tail default to 4.
const DEEP_HISTORY_MAX: usize = 2048;
const DEFAULT_MAX_TAIL: usize = 1 << 20;
pub(crate) const DEFAULT_MAX_PUBLISHERS: u32 = 8;
pub(crate) const DEFAULT_MAX_SUBSCRIBERS: u32 = 16;
/// The ring slot payload of a topic whose messages travel in chunks (a slot then carries
/// nothing but what `send_inline` of a tiny message would).
pub(crate) const TAIL_SLOT_PAYLOAD: u32 = 16;

/// Builder for a [`Topic`]. Settings that are left alone adopt whatever the
/// topic already has; settings made explicitly must match an existing topic
/// ([`TopicError::QosMismatch`]) or are used to create it.
#[derive(Clone, Debug)]
pub struct TopicBuilder<T> {
    name: String,
    namespace: Option<String>,
    depth: Option<u32>,
    overflow: Option<Overflow>,
    durability: Option<Durability>,
    max_publishers: Option<u32>,
    max_subscribers: Option<u32>,
    max_tail: Option<usize>,
    pool: Option<u32>,
    _t: PhantomData<fn() -> T>,
}

impl<T: Message> TopicBuilder<T> {
    /// History depth per publisher (rounded up to a power of two). Default
    /// 16, or 4 for messages with a tail or larger than 2 KiB.
    pub fn depth(mut self, depth: u32) -> Self {
        self.depth = Some(depth.max(1).next_power_of_two());
        self
    }

    /// Overflow policy. Default [`Overflow::DropOldest`].
    pub fn overflow(mut self, overflow: Overflow) -> Self {
        self.overflow = Some(overflow);
        self
    }

    /// Durability: whether late subscribers get messages published before
    /// they joined. Default [`Durability::Volatile`].
    /// [`Durability::TransientLocal`]'s depth must be 1..=the topic's depth
    /// ([`TopicError::Invalid`] otherwise, from [`open`](Self::open)).
    pub fn durability(mut self, durability: Durability) -> Self {
        self.durability = Some(durability);
        self
    }

    /// Publisher places (1..=16). Default 8.
    pub fn max_publishers(mut self, n: u32) -> Self {
        self.max_publishers = Some(n);
        self
    }

    /// Subscriber places (1..=32). Default 16.
    pub fn max_subscribers(mut self, n: u32) -> Self {
        self.max_subscribers = Some(n);
        self
    }

    /// Largest tail (point data, pixels) a message may carry. Default 1 MiB
    /// for messages with a tail. For ROS 2 types ([`Ros<M>`](crate::ros::Ros))
    /// this is the largest CDR body: raise it for large images and point
    /// clouds (a larger message is refused, nothing sent).
    pub fn max_tail_bytes(mut self, n: usize) -> Self {
        self.max_tail = Some(n);
        self
    }

    /// Chunks in each publisher's loan pool. Default `2 × depth + 4`.
    pub fn loan_pool(mut self, n: u32) -> Self {
        self.pool = Some(n);
        self
    }

    /// Namespace (default: `HORUS_NAMESPACE`, else per user).
    pub fn namespace(mut self, ns: &str) -> Self {
        self.namespace = Some(ns.to_owned());
        self
    }

    fn invalid(&self, reason: impl Into<String>) -> TopicError {
        TopicError::Invalid {
            topic: self.name.clone(),
            reason: reason.into(),
        }
    }

    fn config(&self) -> Result<(ChannelConfig, bool), TopicError> {
        if std::mem::align_of::<T>() > 8 {
            return Err(self.invalid("message alignment above 8 bytes is not supported"));
        }
        let size = std::mem::size_of::<T>();
        let inline = !T::HAS_TAIL && size <= INLINE_MAX;
        let depth = self
            .depth
            .unwrap_or(if !T::HAS_TAIL && size <= DEEP_HISTORY_MAX {
                DEFAULT_DEPTH
            } else {
                DEFAULT_TAIL_DEPTH
            });
        let durability = self.durability.unwrap_or_default();
        let latched = durability.latched();
        if latched > depth || durability == (Durability::TransientLocal { depth: 0 }) {
            return Err(self.invalid(format!(
                "durability {durability} must keep 1..={depth} messages (the topic's depth)"
            )));
        }
        let (slot_payload, chunk_size, chunks) = if inline {
            (size.next_multiple_of(8).max(16) as u32, 0, 0)
        } else {
            let tail = if T::HAS_TAIL {
                self.max_tail.unwrap_or(DEFAULT_MAX_TAIL)
            } else {
                0
            };
            let chunk = size.next_multiple_of(8) + tail;
            let pool = self.pool.unwrap_or(2 * depth + 4);
            // A publisher keeps its last `latched` chunks: with no more than that in its
            // pool, every later loan would fail for as long as it lives.
            if pool <= latched {
                return Err(self.invalid(format!(
                    "a loan pool of {pool} chunks must exceed the {latched} messages \
                     durability {durability} keeps"
                )));
            }
            (TAIL_SLOT_PAYLOAD, chunk as u64, pool)
        };
        Ok((
            ChannelConfig {
                schema: schema_record::encode(&T::SCHEMA),
                depth,
                slot_payload,
                max_publishers: self.max_publishers.unwrap_or(DEFAULT_MAX_PUBLISHERS),
                max_subscribers: self.max_subscribers.unwrap_or(DEFAULT_MAX_SUBSCRIBERS),
                chunk_size,
                chunks_per_publisher: chunks,
                qos_code: ChannelConfig::compose_qos(
                    self.overflow.unwrap_or(Overflow::DropOldest).code(),
                    latched,
                )
                .ok_or_else(|| self.invalid("durability depth out of range"))?,
            },
            inline,
        ))
    }

    /// Checks the explicitly requested settings against an existing topic.
    fn compatible(&self, want: &ChannelConfig, have: &ChannelConfig) -> bool {
        self.depth.is_none_or(|_| want.depth == have.depth)
            && self
                .overflow
                .is_none_or(|_| want.qos_policy() == have.qos_policy())
            && self
                .durability
                .is_none_or(|_| want.latched() == have.latched())
            && self
                .max_publishers
                .is_none_or(|_| want.max_publishers == have.max_publishers)
            && self
                .max_subscribers
                .is_none_or(|_| want.max_subscribers == have.max_subscribers)
            && self
                .max_tail
                .is_none_or(|_| want.chunk_size == have.chunk_size)
            && self
                .pool
                .is_none_or(|_| want.chunks_per_publisher == have.chunks_per_publisher)
            && want.slot_payload == have.slot_payload
            && (want.chunk_size == 0) == (have.chunk_size == 0)
    }

    /// Checks a segment found on disk before any endpoint uses it: the
    /// explicitly requested settings must match, and whatever was adopted
    /// must fit `T`. The header's schema matching proves nothing about its
    /// capacities — a corrupt or hostile segment with the right schema and a
    /// chunk smaller than `T` would otherwise make `loan()` write past the
    /// chunk.
    fn check_adopted(
        &self,
        seg_name: &str,
        want: &ChannelConfig,
        have: &ChannelConfig,
    ) -> Result<(), TopicError> {
        if !self.compatible(want, have) {
            return Err(TopicError::QosMismatch {
                topic: self.name.clone(),
                found: describe_qos(have),
                requested: describe_qos(want),
            });
        }
        check_fits::<T>(&self.name, seg_name, have)
    }

    /// Opens the topic, creating it if it does not exist.
    pub fn open(self) -> Result<Topic<T>, TopicError> {
        let (want, inline) = self.config()?;
        let ns = self
            .namespace
            .clone()
            .unwrap_or_else(horus_shm::name::namespace);
        let seg_name = horus_shm::name::segment_name(&ns, "t", &self.name)
            .map_err(|e| self.invalid(e.to_string()))?;
        let description = crate::description::encode::<T>();
        let chan = self.open_channel(&seg_name, &want, &description)?;
        let have = chan.layout().config;
        self.check_adopted(&seg_name, &want, &have)?;
        // An explicit policy matched the stored code (check_adopted); an
        // adopted one is decoded (check_fits rejected unknown codes).
        let overflow = self
            .overflow
            .or_else(|| Overflow::from_code(have.qos_policy()))
            .unwrap_or(Overflow::DropOldest);
        Ok(Topic {
            inner: Arc::new(TopicInner {
                name: self.name,
                seg_name,
                adopted: have,
                inline,
                overflow,
                description,
                chan: std::sync::Mutex::new(chan),
            }),
            _t: PhantomData,
        })
    }

    fn open_channel(
        &self,
        seg_name: &str,
        want: &ChannelConfig,
        description: &[u8],
    ) -> Result<Arc<Channel>, TopicError> {
        let map = |e: OpenError| map_open_error(&self.name, &T::SCHEMA.to_string(), e);
        match Channel::open_existing(seg_name, Some(&want.schema)) {
            Ok(chan) => Ok(chan),
            Err(OpenError::Segment(SegmentError::NotFound(_))) => {
                Channel::open_or_create_described(seg_name, want, description).or_else(
                    |e| match e {
                        // Someone else created it first with other (default) settings:
                        // adopt it if compatible, checked by the caller.
                        OpenError::ConfigMismatch { .. } => {
                            Channel::open_existing(seg_name, Some(&want.schema)).map_err(map)
                        }
                        e => Err(map(e)),
                    },
                )
            }
            Err(e) => Err(map(e)),
        }
    }
}

pub(crate) fn map_open_error(topic: &str, expected: &str, e: OpenError) -> TopicError {
    match e {
        OpenError::SchemaMismatch { found, .. } => TopicError::SchemaMismatch {
            topic: topic.to_owned(),
            expected: expected.to_owned(),
            found: schema_record::describe(&found),
        },
        OpenError::ConfigMismatch {
            found, requested, ..
        } => TopicError::QosMismatch {
            topic: topic.to_owned(),
            found,
            requested,
        },
        OpenError::Segment(SegmentError::NotFound(_)) => TopicError::NotFound(topic.to_owned()),
        e => TopicError::Segment {
            topic: topic.to_owned(),
            source: e,
        },
    }
}

/// Whether a channel's capacities can carry `T` at all, whatever else was
/// adopted: the slot or chunk must hold a whole `T`, and the policy code must
/// be one this build knows.
fn check_fits<T: Message>(
    topic: &str,
    seg_name: &str,
    have: &ChannelConfig,
) -> Result<(), TopicError> {
    let size = std::mem::size_of::<T>();
    let inline = !T::HAS_TAIL && size <= INLINE_MAX;
    let reason = if Overflow::from_code(have.qos_policy()).is_none() {
        Some(format!(
            "unknown overflow policy code {}",
            have.qos_policy()
        ))
    } else if inline && (have.chunk_size != 0 || (have.slot_payload as usize) < size) {
        Some(format!(
            "{} B inline slots and {} B chunks cannot carry a {size}-byte inline message",
            have.slot_payload, have.chunk_size
        ))
    } else if !inline && (have.chunk_size as usize) < crate::publisher::tail_offset::<T>() {
        Some(format!(
            "{} B chunks cannot hold a {size}-byte message",
            have.chunk_size
        ))
    } else {
        None
    };
    match reason {
        None => Ok(()),
        Some(reason) => Err(TopicError::Segment {
            topic: topic.to_owned(),
            source: OpenError::Corrupt {
                name: seg_name.to_owned(),
                reason,
            },
        }),
    }
}

fn describe_qos(c: &ChannelConfig) -> String {
    format!(
        "{} depth {}, {}, {} publishers, {} subscribers, {} B chunks × {}",
        Overflow::name_of(c.qos_policy()),
        c.depth,
        Durability::from_latched(c.latched()),
        c.max_publishers,
        c.max_subscribers,
        c.chunk_size,
        c.chunks_per_publisher
    )
}

pub(crate) struct TopicInner {
    pub(crate) name: String,
    seg_name: String,
    /// The configuration this handle checked and adopted when it opened the
    /// topic; a segment reopened later must have exactly this one.
    adopted: ChannelConfig,
    pub(crate) inline: bool,
    pub(crate) overflow: Overflow,
    /// The JSON description of the message type, written into segments this
    /// handle creates.
    description: Arc<[u8]>,
    /// The current mapping. Replaced when the last participant of the old
    /// segment unlinked it while this handle had no endpoints.
    chan: std::sync::Mutex<Arc<Channel>>,
}

impl TopicInner {
    pub(crate) fn channel(&self) -> Arc<Channel> {
        Arc::clone(&self.chan.lock().expect("topic mutex poisoned"))
    }

    /// Runs `join` on the current channel; if the channel was closing,
    /// reopens (recreating) it and tries again.
    pub(crate) fn join<P>(
        &self,
        join: impl Fn(&Arc<Channel>) -> Result<P, horus_shm::JoinError>,
        expected: &str,
    ) -> Result<P, TopicError> {
        for _ in 0..8 {
            let chan = self.channel();
            // A segment truncated by another process is as good as closed:
            // its name was released, so reopening creates a fresh one.
            let joined = if chan.is_lost() {
                Err(horus_shm::JoinError::Closing)
            } else {
                join(&chan)
            };
            match joined {
                Ok(p) => return Ok(p),
                Err(horus_shm::JoinError::Closing) => {
                    // The last participant unlinked the segment: recreate it
                    // with the configuration we adopted, or open whoever's
                    // replaced it — which must have that same configuration
                    // (the endpoints' types, inline buffers and policy were
                    // fixed from it when the topic was opened).
                    let fresh =
                        match Channel::open_existing(&self.seg_name, Some(&self.adopted.schema)) {
                            Err(OpenError::Segment(SegmentError::NotFound(_))) => {
                                Channel::open_or_create_described(
                                    &self.seg_name,
                                    &self.adopted,
                                    &self.description,
                                )
                            }
                            other => other,
                        }
                        .map_err(|e| map_open_error(&self.name, expected, e))?;
                    let have = fresh.layout().config;
                    if have != self.adopted {
                        return Err(TopicError::QosMismatch {
                            topic: self.name.clone(),
                            found: describe_qos(&have),
                            requested: describe_qos(&self.adopted),
                        });
                    }
                    *self.chan.lock().expect("topic mutex poisoned") = fresh;
                }
                Err(source) => {
                    return Err(TopicError::Full {
                        topic: self.name.clone(),
                        source,
                    })
                }
            }
        }
        Err(TopicError::Full {
            topic: self.name.clone(),
            source: horus_shm::JoinError::Closing,
        })
    }
}

impl Drop for TopicInner {
    fn drop(&mut self) {
        // Endpoints hold the TopicInner, so this runs after all of ours are
        // gone; unlink the segment unless another process still uses it.
        self.channel().unlink_if_unused();
    }
}

/// A typed topic. Cheap to clone; endpoints made from it share one mapping.
pub struct Topic<T> {
    pub(crate) inner: Arc<TopicInner>,
    _t: PhantomData<fn() -> T>,
}

impl<T> Clone for Topic<T> {
    fn clone(&self) -> Self {
        Topic {
            inner: Arc::clone(&self.inner),
            _t: PhantomData,
        }
    }
}

impl<T: Message> Topic<T> {
    /// A builder for the topic `name` (`[A-Za-z0-9_./-]`, e.g. `robot/imu`).
    pub fn builder(name: &str) -> TopicBuilder<T> {
        TopicBuilder {
            name: name.to_owned(),
            namespace: None,
            depth: None,
            overflow: None,
            durability: None,
            max_publishers: None,
            max_subscribers: None,
            max_tail: None,
            pool: None,
            _t: PhantomData,
        }
    }

    /// Opens (or creates) `name` with default settings.
    pub fn open(name: &str) -> Result<Topic<T>, TopicError> {
        Self::builder(name).open()
    }

    /// The topic name.
    pub fn name(&self) -> &str {
        &self.inner.name
    }

    /// The overflow policy in force.
    pub fn overflow(&self) -> Overflow {
        self.inner.overflow
    }

    /// The durability in force (see [`Durability`]).
    pub fn durability(&self) -> Durability {
        Durability::from_latched(self.inner.adopted.latched())
    }

    /// Creates a publisher.
    pub fn publisher(&self) -> Result<Publisher<T>, TopicError> {
        Publisher::new(Arc::clone(&self.inner))
    }

    /// Creates a subscriber whose `recv` sleeps on a futex when idle.
    pub fn subscriber(&self) -> Result<Subscriber<T>, TopicError> {
        Subscriber::new(Arc::clone(&self.inner), WaitMode::Futex, false)
    }

    /// Creates a subscriber with the given wait mode.
    pub fn subscriber_with(&self, mode: WaitMode) -> Result<Subscriber<T>, TopicError> {
        Subscriber::new(Arc::clone(&self.inner), mode, false)
    }

    /// Creates a subscriber that starts where `start` says: on a
    /// transient-local topic [`StartAt::Durability`] (what
    /// [`subscriber`](Self::subscriber) does) delivers the latched history
    /// first; [`StartAt::Next`] skips it; [`StartAt::Oldest`] starts at the
    /// oldest message each publisher's ring still holds, whatever the
    /// durability. Messages of the history overwritten before this
    /// subscriber reads them are counted as `overrun`.
    pub fn subscriber_at(
        &self,
        mode: WaitMode,
        start: StartAt,
    ) -> Result<Subscriber<T>, TopicError> {
        Subscriber::new_at(Arc::clone(&self.inner), mode, false, start)
    }

    /// Creates an observer (see [`observer`](Self::observer)) that starts
    /// where `start` says (see [`subscriber_at`](Self::subscriber_at)):
    /// a recorder joining late asks for [`StartAt::Oldest`].
    pub fn observer_at(&self, mode: WaitMode, start: StartAt) -> Result<Subscriber<T>, TopicError> {
        Subscriber::new_at(Arc::clone(&self.inner), mode, true, start)
    }

    /// Creates an *observer*: a subscriber for tools (echo, rate meters,
    /// recorders, monitors). It reads the same messages as any subscriber,
    /// but a `Reject` or `Block` publisher never waits for it or refuses a
    /// message because of it, and publishers do not count it as a
    /// subscriber (in [`Delivery`](crate::Delivery), `undelivered` or their
    /// stats). What it misses because it fell behind it counts as its own
    /// `overrun`. Attaching one changes nothing that the publishers or the
    /// other subscribers observe — except that samples it *holds* pin pool
    /// chunks like anyone's, so a tool should read and drop them promptly.
    pub fn observer(&self) -> Result<Subscriber<T>, TopicError> {
        Subscriber::new(Arc::clone(&self.inner), WaitMode::Futex, true)
    }

    /// Creates an observer with the given wait mode (see [`Topic::observer`]).
    pub fn observer_with(&self, mode: WaitMode) -> Result<Subscriber<T>, TopicError> {
        Subscriber::new(Arc::clone(&self.inner), mode, true)
    }

    /// Counters of every endpoint on the topic, in every process.
    pub fn stats(&self) -> crate::TopicStats {
        crate::TopicStats::from_snapshot(self.inner.channel().snapshot())
    }
}
