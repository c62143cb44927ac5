//! Type-erased topics, publishers, subscribers and samples.
//!
//! `horus` endpoints are generic over the message type; Python picks the
//! type at run time by schema name. [`open_topic`] is the only place that
//! matches on the type list; everything after it goes through the object-safe
//! traits below, implemented once, generically, for every `T: Message`.

use std::ptr::NonNull;
use std::time::Duration;

use horus::{
    Durability, Message, Overflow, Publisher, PublisherStats, Sample, SampleMut, SendError,
    StartAt, Subscriber, SubscriberStats, Topic, TopicError, TopicStats, WaitMode,
};

use crate::registry::for_each_message;

/// Settings of [`open_topic`]; `None` adopts the topic's (or the default).
#[derive(Clone, Debug, Default)]
pub(crate) struct TopicOptions {
    pub(crate) namespace: Option<String>,
    pub(crate) depth: Option<u32>,
    pub(crate) overflow: Option<Overflow>,
    pub(crate) max_publishers: Option<u32>,
    pub(crate) max_subscribers: Option<u32>,
    pub(crate) max_tail_bytes: Option<usize>,
    pub(crate) loan_pool: Option<u32>,
    pub(crate) durability: Option<Durability>,
}

/// Why a send did not publish the message.
#[derive(Debug)]
pub(crate) enum SendFailure {
    /// `Reject`: history full.
    Full,
    /// `Block`: no room within the timeout.
    Timeout(Duration),
    /// Every chunk is in use.
    PoolExhausted,
    /// The bytes are not one message of this type.
    BadSize { got: usize, expected: usize },
    /// The tail does not fit.
    TooLarge {
        requested: Option<usize>,
        max: usize,
    },
    /// A loan is outstanding (send or drop it first).
    LoanOutstanding,
    /// `send_loan` without a loan.
    NoLoan,
    /// Another process truncated the topic's segment.
    SegmentLost,
}

impl SendFailure {
    /// Why `horus` refused a send (the message it hands back is dropped:
    /// the Python caller still has its own).
    fn of<M>(e: &SendError<M>) -> Self {
        match e {
            SendError::Full(_) => SendFailure::Full,
            SendError::Timeout(_, d) => SendFailure::Timeout(*d),
            SendError::PoolExhausted(_) => SendFailure::PoolExhausted,
            SendError::TooLarge(_, max) => SendFailure::TooLarge {
                requested: None,
                max: *max,
            },
            SendError::SegmentLost(_) => SendFailure::SegmentLost,
        }
    }
}

impl<M> From<SendError<M>> for SendFailure {
    fn from(e: SendError<M>) -> Self {
        SendFailure::of(&e)
    }
}

/// A topic of some message type.
pub(crate) trait DynTopic: Send + Sync {
    fn name(&self) -> &str;
    fn overflow(&self) -> Overflow;
    fn durability(&self) -> Durability;
    fn publisher(&self) -> Result<Box<dyn DynPublisher>, TopicError>;
    fn subscriber(
        &self,
        mode: WaitMode,
        observer: bool,
        start: StartAt,
    ) -> Result<Box<dyn DynSubscriber>, TopicError>;
    fn stats(&self) -> TopicStats;
}

/// A publisher of some message type, sending raw message bytes.
pub(crate) trait DynPublisher: Send {
    /// Publishes one message (`header` is exactly its bytes) and, for
    /// messages with a tail, `tail`. Returns the subscribers reached.
    fn send(&mut self, header: &[u8], tail: Option<&[u8]>) -> Result<u32, SendFailure>;
    /// Loans memory for one message with `tail_len` tail bytes, initialised
    /// with `header`. Returns the loaned region (header, padding, tail) and
    /// where the tail starts in it.
    fn loan(
        &mut self,
        header: &[u8],
        tail_len: usize,
    ) -> Result<(NonNull<u8>, usize, usize), SendFailure>;
    /// Sends the outstanding loan; on refusal the loan stays outstanding.
    fn send_loan(&mut self) -> Result<u32, SendFailure>;
    /// Returns the outstanding loan (if any) to the pool unsent.
    fn drop_loan(&mut self);
    fn stats(&self) -> Result<PublisherStats, SendFailure>;
    fn topic_stats(&self) -> Result<TopicStats, SendFailure>;
    fn subscribers(&self) -> Result<u32, SendFailure>;
    fn max_tail(&self) -> Result<usize, SendFailure>;
    /// `SegmentLost` if another process truncated the topic's segment.
    fn check(&self) -> Result<(), SendFailure>;
}

/// A subscriber of some message type.
pub(crate) trait DynSubscriber: Send {
    fn try_recv(&mut self) -> Option<Box<dyn AnySample>>;
    fn recv_timeout(&mut self, timeout: Duration) -> Option<Box<dyn AnySample>>;
    fn latest(&mut self) -> Option<Box<dyn AnySample>>;
    fn set_spin(&mut self, polls: u32);
    fn stats(&self) -> SubscriberStats;
    fn topic_stats(&self) -> TopicStats;
    fn publishers(&self) -> u32;
    /// `Err` if another process truncated the topic's segment.
    fn check(&self) -> Result<(), TopicError>;
}

/// A received message of some type.
pub(crate) trait AnySample: Send + Sync {
    /// The fixed part of the message.
    fn header(&self) -> &[u8];
    /// The whole message in place: header, padding, tail (zero-copy samples
    /// only; inline samples return the header).
    fn region(&self) -> &[u8];
    /// Where the tail starts in [`AnySample::region`].
    fn tail_offset(&self) -> usize;
    /// Bytes of tail.
    fn tail_len(&self) -> usize;
    /// Whether the message is read in place in shared memory.
    fn is_zero_copy(&self) -> bool;
}

/// Opens the topic `name` carrying the message whose schema is called
/// `schema`. `Ok(None)` if no message type of that name is known.
pub(crate) fn open_topic(
    schema: &str,
    name: &str,
    o: &TopicOptions,
) -> Result<Option<Box<dyn DynTopic>>, TopicError> {
    macro_rules! dispatch {
        ($($t:ident),*) => {
            $(
                if schema == <horus_types::$t as Message>::SCHEMA.name() {
                    return Ok(Some(Box::new(build::<horus_types::$t>(name, o)?)));
                }
            )*
        };
    }
    for_each_message!(dispatch);
    Ok(None)
}

/// Every type of the list, under one path for the dispatch macro.
mod horus_types {
    pub(crate) use horus::msgs::{
        BatteryState, CmdVel, EmergencyStop, Header, Image, Imu, JointState, LaserScan, Odometry,
        PointCloud, Pose, Pose2D, Quaternion, Time, Twist, Vector3,
    };
    pub(crate) use horus_tensor::TensorRef;
}

fn build<T: Message>(name: &str, o: &TopicOptions) -> Result<Topic<T>, TopicError> {
    let mut b = Topic::<T>::builder(name);
    if let Some(ns) = &o.namespace {
        b = b.namespace(ns);
    }
    if let Some(d) = o.depth {
        b = b.depth(d);
    }
    if let Some(ov) = o.overflow {
        b = b.overflow(ov);
    }
    if let Some(n) = o.max_publishers {
        b = b.max_publishers(n);
    }
    if let Some(n) = o.max_subscribers {
        b = b.max_subscribers(n);
    }
    if let Some(n) = o.max_tail_bytes {
        b = b.max_tail_bytes(n);
    }
    if let Some(n) = o.loan_pool {
        b = b.loan_pool(n);
    }
    if let Some(d) = o.durability {
        b = b.durability(d);
    }
    b.open()
}

impl<T: Message> DynTopic for Topic<T> {
    fn name(&self) -> &str {
        Topic::name(self)
    }
    fn overflow(&self) -> Overflow {
        Topic::overflow(self)
    }
    fn durability(&self) -> Durability {
        Topic::durability(self)
    }
    fn publisher(&self) -> Result<Box<dyn DynPublisher>, TopicError> {
        let p = Box::new(Topic::publisher(self)?);
        Ok(Box::new(PubHolder {
            loan: None,
            publisher: NonNull::from(Box::leak(p)),
        }))
    }
    fn subscriber(
        &self,
        mode: WaitMode,
        observer: bool,
        start: StartAt,
    ) -> Result<Box<dyn DynSubscriber>, TopicError> {
        if observer {
            Ok(Box::new(self.observer_at(mode, start)?))
        } else {
            Ok(Box::new(self.subscriber_at(mode, start)?))
        }
    }
    fn stats(&self) -> TopicStats {
        Topic::stats(self)
    }
}

/// A publisher and its outstanding loan. The loan borrows the publisher
/// mutably, so the two cannot be ordinary fields: the publisher lives in a
/// leaked box that the holder frees on drop, after the loan, and every other
/// use of the publisher is refused while the loan lives (no aliasing).
struct PubHolder<T: Message> {
    /// The outstanding loan, borrowing `*publisher`.
    loan: Option<SampleMut<'static, T>>,
    /// From `Box::leak`; freed in `Drop`.
    publisher: NonNull<Publisher<T>>,
}

// SAFETY: a Publisher<T> is Send (asserted below for a standard message;
// its fields are the same for every T), and the loan only points into the
// publisher's staging buffer or the channel mapping, neither of which has
// thread affinity. The holder is used through `&mut` only, so there is no
// concurrent access.
unsafe impl<T: Message> Send for PubHolder<T> {}

const _: () = {
    const fn assert_send<S: Send>() {}
    assert_send::<Publisher<horus::msgs::CmdVel>>();
    assert_send::<Subscriber<horus::msgs::CmdVel>>();
    assert_send::<Sample<horus::msgs::CmdVel>>();
};

impl<T: Message> PubHolder<T> {
    /// The publisher, unless a loan borrows it.
    fn publisher(&self) -> Result<&Publisher<T>, SendFailure> {
        if self.loan.is_some() {
            return Err(SendFailure::LoanOutstanding);
        }
        // SAFETY: the box is alive until Drop; no loan borrows it (checked
        // above), and `&self` prevents a new one while this borrow lives.
        Ok(unsafe { self.publisher.as_ref() })
    }

    fn publisher_mut(&mut self) -> Result<&mut Publisher<T>, SendFailure> {
        if self.loan.is_some() {
            return Err(SendFailure::LoanOutstanding);
        }
        // SAFETY: as in `publisher`, with `&mut self` for exclusivity.
        Ok(unsafe { self.publisher.as_mut() })
    }

    fn read(header: &[u8]) -> Result<T, SendFailure> {
        if header.len() != std::mem::size_of::<T>() {
            return Err(SendFailure::BadSize {
                got: header.len(),
                expected: std::mem::size_of::<T>(),
            });
        }
        Ok(bytemuck::pod_read_unaligned(header))
    }
}

/// Where the tail starts after the fixed part of `T` (as `horus` lays it out).
fn tail_offset<T>() -> usize {
    std::mem::size_of::<T>().next_multiple_of(8)
}

impl<T: Message> DynPublisher for PubHolder<T> {
    fn send(&mut self, header: &[u8], tail: Option<&[u8]>) -> Result<u32, SendFailure> {
        let msg = Self::read(header)?;
        let p = self.publisher_mut()?;
        match tail {
            Some(tail) if T::HAS_TAIL => {
                let max = p.max_tail();
                if tail.len() > max {
                    return Err(SendFailure::TooLarge {
                        requested: Some(tail.len()),
                        max,
                    });
                }
                Ok(p.send_with_tail(&msg, tail)?.subscribers)
            }
            Some(tail) if !tail.is_empty() => Err(SendFailure::TooLarge {
                requested: Some(tail.len()),
                max: 0,
            }),
            _ => Ok(p.send(msg)?.subscribers),
        }
    }

    fn loan(
        &mut self,
        header: &[u8],
        tail_len: usize,
    ) -> Result<(NonNull<u8>, usize, usize), SendFailure> {
        let msg = Self::read(header)?;
        let p = self.publisher_mut()?;
        let sample = if T::HAS_TAIL {
            p.loan_slice(tail_len)
        } else if tail_len == 0 {
            p.loan()
        } else {
            return Err(SendFailure::TooLarge {
                requested: Some(tail_len),
                max: 0,
            });
        };
        let mut sample = sample.map_err(|e| match e {
            horus::LoanError::PoolExhausted => SendFailure::PoolExhausted,
            horus::LoanError::TooLarge { requested, max } => SendFailure::TooLarge {
                requested: Some(requested),
                max,
            },
            horus::LoanError::NoTail => SendFailure::TooLarge {
                requested: Some(tail_len),
                max: 0,
            },
            horus::LoanError::SegmentLost => SendFailure::SegmentLost,
        })?;
        *sample = msg;
        let start = NonNull::from(&mut *sample).cast::<u8>();
        let len = if tail_len > 0 {
            debug_assert_eq!(
                sample.tail_mut().as_ptr() as usize,
                start.as_ptr() as usize + tail_offset::<T>()
            );
            tail_offset::<T>() + tail_len
        } else {
            std::mem::size_of::<T>()
        };
        // SAFETY: only the lifetime is extended. The sample borrows the
        // publisher in its leaked box, which outlives the loan (Drop clears
        // the loan first), and no other reference to the publisher is made
        // while `self.loan` is Some (see `publisher`/`publisher_mut`).
        let sample: SampleMut<'static, T> = unsafe { std::mem::transmute(sample) };
        self.loan = Some(sample);
        Ok((start, len, tail_offset::<T>()))
    }

    fn send_loan(&mut self) -> Result<u32, SendFailure> {
        let sample = self.loan.take().ok_or(SendFailure::NoLoan)?;
        match sample.send() {
            Ok(d) => Ok(d.subscribers),
            Err(e) => {
                let why = SendFailure::of(&e);
                // Handed back unchanged: keep it outstanding for a retry.
                self.loan = Some(e.into_inner());
                Err(why)
            }
        }
    }

    fn drop_loan(&mut self) {
        self.loan = None;
    }

    fn stats(&self) -> Result<PublisherStats, SendFailure> {
        Ok(self.publisher()?.stats())
    }

    fn topic_stats(&self) -> Result<TopicStats, SendFailure> {
        Ok(self.publisher()?.topic_stats())
    }

    fn subscribers(&self) -> Result<u32, SendFailure> {
        Ok(self.publisher()?.subscribers())
    }

    fn max_tail(&self) -> Result<usize, SendFailure> {
        Ok(if T::HAS_TAIL {
            self.publisher()?.max_tail()
        } else {
            0
        })
    }

    fn check(&self) -> Result<(), SendFailure> {
        self.publisher()?
            .check()
            .map_err(|_| SendFailure::SegmentLost)
    }
}

impl<T: Message> Drop for PubHolder<T> {
    fn drop(&mut self) {
        // The loan borrows the publisher: end it first.
        self.loan = None;
        // SAFETY: the pointer came from Box::leak in `DynTopic::publisher`
        // and is freed exactly once, here, after the last borrow ended.
        drop(unsafe { Box::from_raw(self.publisher.as_ptr()) });
    }
}

fn boxed<T: Message>(s: Option<Sample<T>>) -> Option<Box<dyn AnySample>> {
    s.map(|s| Box::new(s) as Box<dyn AnySample>)
}

impl<T: Message> DynSubscriber for Subscriber<T> {
    fn try_recv(&mut self) -> Option<Box<dyn AnySample>> {
        boxed(Subscriber::try_recv(self))
    }
    fn recv_timeout(&mut self, timeout: Duration) -> Option<Box<dyn AnySample>> {
        boxed(Subscriber::recv_timeout(self, timeout).ok())
    }
    fn latest(&mut self) -> Option<Box<dyn AnySample>> {
        boxed(Subscriber::latest(self))
    }
    fn set_spin(&mut self, polls: u32) {
        Subscriber::set_spin(self, polls)
    }
    fn stats(&self) -> SubscriberStats {
        Subscriber::stats(self)
    }
    fn topic_stats(&self) -> TopicStats {
        Subscriber::topic_stats(self)
    }
    fn publishers(&self) -> u32 {
        Subscriber::publishers(self)
    }
    fn check(&self) -> Result<(), TopicError> {
        Subscriber::check(self)
    }
}

impl<T: Message> AnySample for Sample<T> {
    fn header(&self) -> &[u8] {
        bytemuck::bytes_of(&**self)
    }

    fn region(&self) -> &[u8] {
        let tail = self.tail();
        if !self.is_zero_copy() || tail.is_empty() {
            return self.header();
        }
        let start = (&**self as *const T).cast::<u8>();
        debug_assert_eq!(tail.as_ptr() as usize, start as usize + tail_offset::<T>());
        // SAFETY: a zero-copy sample's header and tail are one chunk: the
        // tail starts `tail_offset::<T>()` bytes after the header (horus's
        // layout, debug-asserted above), so the range from the header to the
        // end of the tail is one allocation, pinned while `self` lives.
        unsafe { std::slice::from_raw_parts(start, tail_offset::<T>() + tail.len()) }
    }

    fn tail_offset(&self) -> usize {
        tail_offset::<T>()
    }

    fn tail_len(&self) -> usize {
        self.tail().len()
    }

    fn is_zero_copy(&self) -> bool {
        Sample::is_zero_copy(self)
    }
}
