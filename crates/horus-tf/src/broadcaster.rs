//! Broadcasters: [`TransformBroadcaster`] publishes dynamic transforms on `tf`,
//! [`StaticTransformBroadcaster`] static ones on `tf_static`, both as
//! `tf2_msgs/msg/TFMessage` (ROS 2's bytes, so recorders, Foxglove and the ROS 2 bridge take
//! them as they are), as tf2_ros's broadcasters do.
//!
//! Every transform is checked before anything is sent, with the checks the buffer makes
//! when it stores one ([`SetError`]: empty or over-long frame ids, a frame that is its own
//! parent, NaN or infinity, a rotation off unit length by tf2's tolerance or more): a
//! transform every receiver would refuse is refused here, where the code that made it can
//! be told. Rotations within the tolerance are sent as given (receivers normalise them).
//!
//! ```
//! # std::env::set_var("HORUS_NAMESPACE", format!("doctest-tfb-{}", std::process::id()));
//! use horus_tf::{stamp_now, transform_stamped, StaticTransformBroadcaster, TransformBroadcaster};
//!
//! let mut tf = TransformBroadcaster::new()?;
//! tf.send(&transform_stamped("odom", "base_link", stamp_now(), [1.0, 0.0, 0.0], [0.0, 0.0, 0.0, 1.0]))?;
//! // Static transforms: the broadcaster keeps its whole set and publishes it each time.
//! let mut statics = StaticTransformBroadcaster::new()?;
//! statics.send(&transform_stamped("base_link", "laser", stamp_now(), [0.1, 0.0, 0.2], [0.0, 0.0, 0.0, 1.0]))?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::collections::BTreeMap;

use horus::ros::{Ros, RosSendError};
use horus::{Publisher, TopicError};
use horus_ros_msgs::builtin_interfaces::msg::Time;
use horus_ros_msgs::geometry_msgs::msg::{Quaternion, Transform as RosTransform};
use horus_ros_msgs::geometry_msgs::msg::{TransformStamped, Vector3};
use horus_ros_msgs::tf2_msgs::msg::TFMessage;

use crate::broadcaster_topics::{open_tf_topic, TF_STATIC_TOPIC, TF_TOPIC};
use crate::error::SetError;
use crate::math::Transform;
use crate::{stamp_ns, writer};

/// Why a broadcaster could not be made.
#[derive(Debug, thiserror::Error)]
pub enum BroadcasterError {
    /// The topic could not be opened (another type on it, no room for a publisher, …).
    #[error("opening {topic}: {source}")]
    Open {
        /// `tf` or `tf_static`.
        topic: &'static str,
        /// Why.
        source: TopicError,
    },
}

/// Why a batch of transforms was not sent. In every case nothing of the batch was sent.
#[derive(Debug, thiserror::Error)]
pub enum BroadcastError {
    /// A transform breaks tf's rules.
    #[error("transform {index} ({parent:?} -> {child:?}) refused: {reason}")]
    Invalid {
        /// Its position in the batch.
        index: usize,
        /// Its `header.frame_id`.
        parent: String,
        /// Its `child_frame_id`.
        child: String,
        /// Why (the error the buffer would give).
        reason: SetError,
    },
    /// The message could not be published (too large for the topic, pool exhausted, …).
    #[error("publishing: {0}")]
    Send(#[from] RosSendError),
}

/// Checks every transform as the buffer would on receipt (the clock check aside: a
/// broadcaster may run on a simulated clock).
fn check_all(transforms: &[TransformStamped], is_static: bool) -> Result<(), BroadcastError> {
    for (index, t) in transforms.iter().enumerate() {
        let (tr, q) = (&t.transform.translation, &t.transform.rotation);
        let tf = Transform {
            translation: [tr.x, tr.y, tr.z],
            rotation: [q.x, q.y, q.z, q.w],
        };
        writer::check(
            &t.header.frame_id,
            &t.child_frame_id,
            stamp_ns(&t.header.stamp),
            &tf,
            is_static,
            None,
        )
        .map_err(|reason| BroadcastError::Invalid {
            index,
            parent: t.header.frame_id.clone(),
            child: t.child_frame_id.clone(),
            reason,
        })?;
    }
    Ok(())
}

/// The wall clock as a ROS 2 stamp (what tf2_ros's `now()` gives without simulated time).
pub fn stamp_now() -> Time {
    time_of_ns(writer::now_ns())
}

/// A stamp in ns since the epoch as a ROS 2 `Time` (seconds saturate at `i32`'s range).
pub fn time_of_ns(ns: i64) -> Time {
    let sec = ns.div_euclid(1_000_000_000);
    Time {
        sec: i32::try_from(sec).unwrap_or(if sec < 0 { i32::MIN } else { i32::MAX }),
        nanosec: ns.rem_euclid(1_000_000_000) as u32,
    }
}

/// A `TransformStamped` of `child` in `parent` at `stamp`: `translation` (x, y, z, metres)
/// and `rotation` (quaternion x, y, z, w).
pub fn transform_stamped(
    parent: &str,
    child: &str,
    stamp: Time,
    translation: [f64; 3],
    rotation: [f64; 4],
) -> TransformStamped {
    let mut t = TransformStamped::default();
    t.header.stamp = stamp;
    t.header.frame_id = parent.to_owned();
    t.child_frame_id = child.to_owned();
    t.transform = RosTransform {
        translation: Vector3 {
            x: translation[0],
            y: translation[1],
            z: translation[2],
        },
        rotation: Quaternion {
            x: rotation[0],
            y: rotation[1],
            z: rotation[2],
            w: rotation[3],
        },
    };
    t
}

fn publisher(
    namespace: Option<&str>,
    topic: &'static str,
) -> Result<Publisher<Ros<TFMessage>>, BroadcasterError> {
    open_tf_topic(namespace, topic)
        .and_then(|t| t.publisher())
        .map_err(|source| BroadcasterError::Open { topic, source })
}

/// Publishes dynamic transforms on `tf`, each call one `TFMessage` (tf2_ros's
/// `TransformBroadcaster`). One bad transform refuses the whole call.
pub struct TransformBroadcaster {
    publisher: Publisher<Ros<TFMessage>>,
    msg: TFMessage,
}

impl TransformBroadcaster {
    /// A broadcaster in this process's namespace.
    pub fn new() -> Result<Self, BroadcasterError> {
        Self::open(None)
    }

    /// A broadcaster in `namespace` (`None`: this process's).
    pub fn open(namespace: Option<&str>) -> Result<Self, BroadcasterError> {
        Ok(TransformBroadcaster {
            publisher: publisher(namespace, TF_TOPIC)?,
            msg: TFMessage::default(),
        })
    }

    /// Publishes one transform.
    pub fn send(&mut self, transform: &TransformStamped) -> Result<(), BroadcastError> {
        self.send_all(std::slice::from_ref(transform))
    }

    /// Publishes `transforms` in one message.
    pub fn send_all(&mut self, transforms: &[TransformStamped]) -> Result<(), BroadcastError> {
        check_all(transforms, false)?;
        // The message is kept between calls: its frame names' allocations are reused when
        // the same frames are sent again (the usual case).
        self.msg.transforms.truncate(transforms.len());
        for (slot, t) in self.msg.transforms.iter_mut().zip(transforms) {
            slot.clone_from(t);
        }
        let have = self.msg.transforms.len();
        self.msg.transforms.extend_from_slice(&transforms[have..]);
        self.publisher.publish(&self.msg)?;
        Ok(())
    }

    /// Processes reading `tf` now (feeders, tools).
    pub fn subscribers(&self) -> u32 {
        self.publisher.subscribers()
    }
}

/// Publishes static transforms on `tf_static` (tf2_ros's `StaticTransformBroadcaster`), a
/// latched topic: processes that join later receive this broadcaster's last message first,
/// for as long as the broadcaster lives (keep it alive for the life of the process). It
/// keeps every static transform it was given, one per child frame (a newer one for the
/// same child replaces the older), and each call publishes all of them in one message, so
/// this broadcaster's last message is always its whole set.
pub struct StaticTransformBroadcaster {
    publisher: Publisher<Ros<TFMessage>>,
    by_child: BTreeMap<String, TransformStamped>,
    latched: bool,
}

impl StaticTransformBroadcaster {
    /// A static broadcaster in this process's namespace.
    pub fn new() -> Result<Self, BroadcasterError> {
        Self::open(None)
    }

    /// A static broadcaster in `namespace` (`None`: this process's).
    pub fn open(namespace: Option<&str>) -> Result<Self, BroadcasterError> {
        let topic =
            open_tf_topic(namespace, TF_STATIC_TOPIC).map_err(|source| BroadcasterError::Open {
                topic: TF_STATIC_TOPIC,
                source,
            })?;
        let latched = topic.durability() != horus::Durability::Volatile;
        let publisher = topic.publisher().map_err(|source| BroadcasterError::Open {
            topic: TF_STATIC_TOPIC,
            source,
        })?;
        Ok(StaticTransformBroadcaster {
            publisher,
            by_child: BTreeMap::new(),
            latched,
        })
    }

    /// Adds (or replaces) one static transform and publishes the whole set.
    pub fn send(&mut self, transform: &TransformStamped) -> Result<(), BroadcastError> {
        self.send_all(std::slice::from_ref(transform))
    }

    /// Adds (or replaces) `transforms` and publishes the whole set in one message. On any
    /// error the set is left as it was.
    pub fn send_all(&mut self, transforms: &[TransformStamped]) -> Result<(), BroadcastError> {
        check_all(transforms, true)?;
        let mut next = self.by_child.clone();
        for t in transforms {
            let child = t.child_frame_id.trim_start_matches('/');
            next.insert(child.to_owned(), t.clone());
        }
        let msg = TFMessage {
            transforms: next.values().cloned().collect(),
        };
        self.publisher.publish(&msg)?;
        self.by_child = next;
        Ok(())
    }

    /// Whether `tf_static` keeps this broadcaster's last message for late joiners (false
    /// only when another tool created the topic volatile before this process opened it).
    pub fn is_latched(&self) -> bool {
        self.latched
    }

    /// The static transforms this broadcaster has published, by child frame.
    pub fn transforms(&self) -> impl Iterator<Item = &TransformStamped> {
        self.by_child.values()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn good() -> TransformStamped {
        transform_stamped(
            "odom",
            "base_link",
            stamp_now(),
            [1.0, 2.0, 3.0],
            [0.0, 0.0, 0.0, 1.0],
        )
    }

    #[test]
    fn a_transform_tf2_accepts_passes_the_check() {
        assert!(check_all(&[good()], false).is_ok());
    }

    #[test]
    fn the_first_bad_transform_of_a_batch_is_named_by_its_index() {
        let mut bad = good();
        bad.child_frame_id = "/odom".into();
        let e = check_all(&[good(), bad], false).unwrap_err();
        assert!(
            matches!(&e, BroadcastError::Invalid { index: 1, reason: SetError::SelfParent { frame }, .. } if frame == "odom"),
            "{e}"
        );
    }

    #[test]
    fn nan_empty_ids_and_denormalized_rotations_are_refused() {
        let mut t = good();
        t.transform.translation.y = f64::NAN;
        assert!(matches!(
            check_all(&[t], false),
            Err(BroadcastError::Invalid {
                reason: SetError::NotFinite { .. },
                ..
            })
        ));
        let mut t = good();
        t.header.frame_id.clear();
        assert!(matches!(
            check_all(&[t], true),
            Err(BroadcastError::Invalid {
                reason: SetError::EmptyFrameId { which: "parent" },
                ..
            })
        ));
        let mut t = good();
        t.transform.rotation.w = 2.0;
        assert!(matches!(
            check_all(&[t], false),
            Err(BroadcastError::Invalid {
                reason: SetError::DenormalizedQuaternion { .. },
                ..
            })
        ));
        // Within tf2's tolerance: sent as given.
        let mut t = good();
        t.transform.rotation.w = 0.999;
        assert!(check_all(&[t], false).is_ok());
    }

    #[test]
    fn a_stamp_far_in_the_future_is_not_the_broadcasters_business() {
        let t = transform_stamped(
            "odom",
            "base_link",
            time_of_ns(i64::MAX),
            [0.0; 3],
            [0.0, 0.0, 0.0, 1.0],
        );
        assert!(check_all(&[t], false).is_ok());
    }

    #[test]
    fn stamps_round_trip_and_saturate() {
        let t = time_of_ns(1_500_000_000);
        assert_eq!((t.sec, t.nanosec), (1, 500_000_000));
        assert_eq!(stamp_ns(&t), 1_500_000_000);
        let t = time_of_ns(-1);
        assert_eq!((t.sec, t.nanosec), (-1, 999_999_999));
        assert_eq!(time_of_ns(i64::MAX).sec, i32::MAX);
    }
}
