//! horus-tf: one transform buffer per host, in shared memory, read lock-free
//! by every process, with tf2's lookup semantics.
//!
//! The history of every frame's transforms lives once per host in
//! `/dev/shm/horus.<namespace>.tf.buffer`: a fixed-capacity frame table and,
//! per frame, a ring of stamped samples (static transforms: the latest one,
//! at every time; dynamic ones: a window, 10 s by default). Writers take a
//! lease word for each batch of transforms; readers take nothing: every
//! sample is guarded by a sequence word, so a reader never sees a torn sample
//! and a writer killed mid-write is repaired by the next one. Where shared
//! memory is unavailable, [`TfBuffer::in_process`] gives the same API on this
//! process's heap. Design, capacities, semantics and limits: `docs/tf.md`.
//!
//! ```
//! # std::env::set_var("HORUS_NAMESPACE", format!("doctest-tf-{}", std::process::id()));
//! use horus_tf::{TfBuffer, Transform, LATEST};
//!
//! let tf = TfBuffer::open_default().unwrap();
//! let base_in_odom = |x: f64| Transform { translation: [x, 0.0, 0.0], ..Transform::IDENTITY };
//! // odom → base_link moves from x = 0 to x = 1 between t = 1 s and t = 2 s.
//! tf.set("odom", "base_link", 1_000_000_000, &base_in_odom(0.0), false).unwrap();
//! tf.set("odom", "base_link", 2_000_000_000, &base_in_odom(1.0), false).unwrap();
//! // base_link → laser is fixed: 0.2 m above the base.
//! let laser = Transform { translation: [0.0, 0.0, 0.2], ..Transform::IDENTITY };
//! tf.set("base_link", "laser", 0, &laser, true).unwrap();
//!
//! // Where is the laser in odom at t = 1.5 s? Interpolated: x = 0.5, z = 0.2.
//! let t = tf.lookup_transform("odom", "laser", 1_500_000_000).unwrap();
//! assert!((t.transform.translation[0] - 0.5).abs() < 1e-12);
//! assert!((t.transform.translation[2] - 0.2).abs() < 1e-12);
//! // The latest common time of the chain is the newest dynamic stamp.
//! assert_eq!(tf.lookup_transform("odom", "laser", LATEST).unwrap().stamp_ns, 2_000_000_000);
//! // Dropping the last handle on the host removes the segment.
//! ```
#![warn(missing_docs)]
#![cfg_attr(loom, allow(dead_code, unused_imports))]

mod lease;
mod seqlock;

#[cfg(not(loom))]
mod broadcaster;
#[cfg(not(loom))]
mod broadcaster_topics;
#[cfg(not(loom))]
mod buffer;
#[cfg(not(loom))]
mod error;
#[cfg(not(loom))]
mod feeder_claim;
#[cfg(not(loom))]
mod frames;
#[cfg(not(loom))]
mod history;
#[cfg(not(loom))]
mod layout;
#[cfg(not(loom))]
mod listener;
#[cfg(not(loom))]
mod lookup;
#[cfg(not(loom))]
mod math;
#[cfg(not(loom))]
mod mem;
#[cfg(not(loom))]
mod members;
#[cfg(not(loom))]
mod names;
#[cfg(not(loom))]
mod open;
#[cfg(not(loom))]
mod survey;
#[cfg(not(loom))]
mod writer;

/// Crate internals for the `cargo fuzz` target `tf_segment_read`.
#[cfg(all(fuzzing, not(loom)))]
#[doc(hidden)]
pub mod fuzz_api;

#[cfg(not(loom))]
pub use broadcaster::{
    stamp_now, time_of_ns, transform_stamped, BroadcastError, BroadcasterError,
    StaticTransformBroadcaster, TransformBroadcaster,
};
#[cfg(not(loom))]
pub use broadcaster_topics::{
    open_tf_topic, TfTopic, TF_STATIC_DURABILITY, TF_STATIC_TOPIC, TF_TOPIC,
};
#[cfg(not(loom))]
pub use buffer::{stamp_ns, FeedReport, FrameInfo, TfBuffer, TfBufferBuilder, TfStats, LATEST};
#[cfg(not(loom))]
pub use error::{LookupError, OpenError, SetError};
#[cfg(not(loom))]
pub use layout::{Capacities, MAX_FRAMES_LIMIT, MAX_FRAME_ID, MAX_HISTORY_LIMIT, MAX_PARTICIPANTS};
#[cfg(not(loom))]
pub use listener::{FeederStats, ListenerError, TfListener};
#[cfg(not(loom))]
pub use math::{StampedTransform, Transform};
#[cfg(not(loom))]
pub use open::{remove_stale, segment_name, StaleOutcome};
#[cfg(not(loom))]
pub use survey::{
    process_name, FrameSurvey, SeenFrame, SurveyError, SurveyReader, MAX_SURVEY_FRAMES,
};
#[cfg(not(loom))]
pub use writer::{now_ns, QUATERNION_TOLERANCE};

/// The lock-free protocols, for the loom models (`tests/loom_tf.rs`).
#[cfg(loom)]
pub mod model {
    pub use crate::lease::{give_back, try_take, Attempt};
    pub use crate::seqlock::{complete_seq, read, read_first, write, Read, DATA_WORDS, SLOT_WORDS};
}
