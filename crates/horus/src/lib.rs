//! horus: typed publish/subscribe over shared memory for robots.
//!
//! One API for every topology: endpoints in the same thread, in other
//! threads, or in other processes all meet in a shared-memory segment named
//! after the topic, with the same semantics (QoS, loss accounting) whatever
//! the topology.
//!
//! ```
//! use horus::prelude::*;
//! # std::env::set_var("HORUS_NAMESPACE", format!("doctest-{}", std::process::id()));
//!
//! let topic = Topic::<CmdVel>::builder("base/cmd_vel")
//!     .depth(8)
//!     .overflow(Overflow::DropOldest)
//!     .open()?;
//! let mut publisher = topic.publisher()?;
//! let mut subscriber = topic.subscriber()?;
//!
//! let delivery = publisher.send(CmdVel::new(0, 0.5, 0.1)).expect("DropOldest never refuses");
//! assert_eq!(delivery.subscribers, 1);
//!
//! let cmd = subscriber.recv();
//! assert_eq!(cmd.linear, 0.5);
//! assert_eq!(subscriber.stats().overrun, 0);
//! # Ok::<(), horus::TopicError>(())
//! ```
//!
//! Zero-copy for large payloads: `loan()` / `loan_slice(n)` a sample, write
//! it in place, `send()` it; subscribers get a read guard on the same memory.
//!
//! ```
//! use horus::prelude::*;
//! # std::env::set_var("HORUS_NAMESPACE", format!("doctest-pc-{}", std::process::id()));
//! let topic = Topic::<PointCloud>::open("lidar/points")?;
//! let mut publisher = topic.publisher()?;
//! let mut subscriber = topic.subscriber()?;
//!
//! let header = PointCloud::new(1000, false);
//! let mut sample = publisher.loan_slice(header.tail_len()).expect("pool has chunks");
//! *sample = header;
//! sample.tail_mut().fill(0);
//! sample.send().ok();
//!
//! let cloud = subscriber.recv();
//! assert_eq!(cloud.points(cloud.tail()).unwrap().len(), 1000);
//! assert!(cloud.is_zero_copy());
//! # Ok::<(), horus::TopicError>(())
//! ```
//!
//! Tools watch a topic as *observers*: they read the same messages but never
//! slow a `Reject`/`Block` publisher, are not counted by publishers, and
//! count what they miss as their own overrun.
//!
//! ```
//! use horus::prelude::*;
//! # std::env::set_var("HORUS_NAMESPACE", format!("doctest-obs-{}", std::process::id()));
//! let topic = Topic::<CmdVel>::builder("base/cmd_vel")
//!     .depth(4)
//!     .overflow(Overflow::Reject)
//!     .open()?;
//! let mut tool = topic.observer()?; // never reads: a stalled `echo`
//! let mut driver = topic.subscriber()?;
//! let mut publisher = topic.publisher()?;
//! for i in 0..10 {
//!     // The driver keeps up, so the publisher never sees the ring full,
//!     // whatever the observer does.
//!     assert_eq!(publisher.send(CmdVel::new(i, 0.5, 0.0)).unwrap().subscribers, 1);
//!     assert_eq!(driver.try_recv().unwrap().stamp_ns, i);
//! }
//! // The observer finds the last 4 messages and counts the 6 it missed.
//! while tool.try_recv().is_some() {}
//! assert_eq!((tool.stats().received, tool.stats().overrun), (4, 6));
//! # Ok::<(), horus::TopicError>(())
//! ```

#![warn(missing_docs)]

pub mod clean;
pub mod description;
mod error;
pub mod inspect;
mod latency;
mod latency_clock;
mod publisher;
mod qos;
mod recv_buf;
pub mod ros;
mod sample;
mod sample_mut;
pub mod sched_glue;
mod schema_record;
mod service;
pub mod stamp;
mod stats;
mod subscriber;
mod topic;

pub use error::{LoanError, RecvError, SendError, TopicError};
/// Run-time support of ROS 2 interface types (`RosMessage`, `DecodeError`, `CdrWriter`, …).
pub use horus_cdr as cdr;
pub use horus_msgs as msgs;
pub use horus_msgs::{message, Message, SchemaId};
pub use horus_sched as sched;
/// The namespace in force for this process (`HORUS_NAMESPACE`, else one per user).
pub use horus_shm::name::namespace;
/// A subscriber's histogram of delivery latency, as read from its topic's segment; its
/// buckets (count, which one a latency falls in, each one's range of ns).
pub use horus_shm::{
    bucket_of as latency_bucket_of, bucket_range as latency_bucket_range, LatencySnapshot,
    LATENCY_BUCKETS,
};
pub use publisher::{Delivery, Publisher};
pub use qos::{Durability, Overflow, StartAt, WaitMode};
pub use sample::{Sample, COPY_OUT_MAX};
pub use sample_mut::SampleMut;
pub use service::{
    list_services, CallError, Client, ClientStats, EndpointSnapshot, EndpointStats,
    ListServicesError, PendingCall, RawClient, RawRequest, RawServer, RemoteFailure, ReplyError,
    Request, Server, ServerReadiness, ServerStats, Service, ServiceBuilder, ServiceError,
    ServiceListing, ServiceSnapshot, ServiceStats, DEFAULT_CALL_TIMEOUT, MAX_RAW_TYPE_SIZE,
};
pub use stats::{PublisherStats, SubscriberStats, TopicStats};
pub use subscriber::Subscriber;
pub use topic::{Topic, TopicBuilder, INLINE_MAX};

/// The names most programs need.
pub mod prelude {
    pub use crate::msgs::{
        BatteryState, CmdVel, EmergencyStop, Header, Image, Imu, JointState, LaserScan, Odometry,
        PointCloud, Pose, Pose2D, Quaternion, Time, Twist, Vector3,
    };
    pub use crate::sched::{
        node_fn, ExecClass, FailurePolicy, Frequency, FrequencyExt, MissPolicy, Node, NodeConfig,
        NodeError, Readiness, Scheduler, StopReason, TickContext, WatchdogAction,
    };
    pub use crate::sched_glue::{SubscriberReadiness, TopicEmergencyStop};
    pub use crate::{
        CallError, Client, Delivery, Message, Overflow, PendingCall, Publisher, ReplyError,
        Request, Sample, SendError, Server, Service, ServiceError, Subscriber, Topic, TopicError,
        WaitMode,
    };
}
