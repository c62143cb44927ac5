//! Bad input to writes: each a typed error, counted, nothing stored; and the
//! input tf2 repairs (a slightly non-unit quaternion) repaired the same way.

mod common;

use std::time::Duration;

use common::*;
use horus_ros_msgs::geometry_msgs::msg::TransformStamped;
use horus_ros_msgs::tf2_msgs::msg::TFMessage;
use horus_tf::{
    now_ns, Capacities, LookupError, SetError, TfBuffer, MAX_FRAME_ID, QUATERNION_TOLERANCE,
};

fn caps() -> Capacities {
    Capacities::default()
}

fn quaternion_within_tolerance_is_normalised_beyond_it_refused(backend: Backend) {
    let (b, _ns) = buffer(backend, caps(), "quat");
    // |q|² = 1.0064 (within tf2's 0.01): stored normalised.
    let q = [0.0, 0.0, 0.0, 1.0032];
    b.set("a", "b", S, &tf([1.0, 0.0, 0.0], q), false).unwrap();
    let got = b.lookup_transform("a", "b", S).unwrap().transform;
    assert_eq!(got.rotation, [0.0, 0.0, 0.0, 1.0]);
    // |q|² = 1.0201: refused, as tf2's TF_DENORMALIZED_QUATERNION.
    let err = b
        .set("a", "c", S, &tf([0.0; 3], [0.0, 0.0, 0.0, 1.01]), false)
        .unwrap_err();
    assert!(
        matches!(err, SetError::DenormalizedQuaternion { norm2, .. } if (norm2 - 1.0201).abs() < 1e-9),
        "{err}"
    );
    assert_eq!(QUATERNION_TOLERANCE, 0.01);
    // A zero quaternion is refused too, and an all-zero message (the default) with it.
    assert!(matches!(
        b.set("a", "c", S, &tf([0.0; 3], [0.0; 4]), false),
        Err(SetError::DenormalizedQuaternion { .. })
    ));
    assert!(matches!(
        b.lookup_transform("a", "c", S),
        Err(LookupError::UnknownFrame { .. })
    ));
}

fn nan_and_infinity_are_refused(backend: Backend) {
    let (b, _ns) = buffer(backend, caps(), "nan");
    for t in [
        tf([f64::NAN, 0.0, 0.0], [0.0, 0.0, 0.0, 1.0]),
        tf([0.0, f64::INFINITY, 0.0], [0.0, 0.0, 0.0, 1.0]),
        tf([0.0; 3], [f64::NAN, 0.0, 0.0, 1.0]),
    ] {
        assert_eq!(
            b.set("a", "b", S, &t, false),
            Err(SetError::NotFinite { child: "b".into() })
        );
    }
    assert_eq!(b.stats().refused, 3);
    assert_eq!(b.stats().frames, 0, "a refused transform created frames");
}

fn frame_ids_are_checked(backend: Backend) {
    let (b, _ns) = buffer(backend, caps(), "ids");
    let id = at([0.0; 3]);
    assert_eq!(
        b.set("a", "a", S, &id, false),
        Err(SetError::SelfParent { frame: "a".into() })
    );
    // "/a" is "a" (tf2 strips one leading slash): still its own parent.
    assert!(matches!(
        b.set("/a", "a", S, &id, false),
        Err(SetError::SelfParent { .. })
    ));
    assert_eq!(
        b.set("", "a", S, &id, false),
        Err(SetError::EmptyFrameId { which: "parent" })
    );
    assert_eq!(
        b.set("a", "/", S, &id, false),
        Err(SetError::EmptyFrameId { which: "child" })
    );
    let long = "x".repeat(MAX_FRAME_ID + 1);
    assert!(matches!(
        b.set("a", &long, S, &id, false),
        Err(SetError::FrameIdTooLong { len, max, .. }) if len == MAX_FRAME_ID + 1 && max == MAX_FRAME_ID
    ));
    // The longest accepted.
    b.set("a", &"y".repeat(MAX_FRAME_ID), S, &id, false)
        .unwrap();
    assert!(matches!(
        b.set("a", "b\nc", S, &id, false),
        Err(SetError::BadFrameId { .. })
    ));
}

fn a_loop_across_frames_is_refused_and_never_hangs_a_lookup(backend: Backend) {
    let (b, _ns) = buffer(backend, caps(), "loop");
    let id = at([1.0, 0.0, 0.0]);
    b.set("a", "b", S, &id, false).unwrap();
    b.set("b", "c", S, &id, false).unwrap();
    b.set("c", "d", S, &id, false).unwrap();
    assert_eq!(
        b.set("d", "a", S, &id, false),
        Err(SetError::WouldLoop {
            child: "a".into(),
            parent: "d".into()
        })
    );
    assert!(matches!(
        b.set("c", "a", S, &id, true),
        Err(SetError::WouldLoop { .. })
    ));
    // The tree is unchanged.
    assert_close(
        &b.lookup_transform("a", "d", S).unwrap().transform,
        &at([3.0, 0.0, 0.0]),
    );
}

fn a_stamp_far_in_the_future_is_refused(backend: Backend) {
    let (b, _ns) = buffer(backend, caps(), "future");
    let id = at([0.0; 3]);
    let far = now_ns() + 3600 * S;
    assert!(matches!(
        b.set("odom", "base", far, &id, false),
        Err(SetError::StampInFuture { stamp_ns, .. }) if stamp_ns == far
    ));
    // Correct stamps still go in afterwards (the refused one expired nothing).
    b.set("odom", "base", now_ns(), &id, false).unwrap();
    // A static transform holds at every time: its stamp is not checked.
    b.set("odom", "laser", far, &id, true).unwrap();
    // A writer that opts out (simulated clock ahead of the host).
    let lax = TfBuffer::builder().max_future(None).in_process().unwrap();
    lax.set("odom", "base", far, &id, false).unwrap();
    let strict = TfBuffer::builder()
        .max_future(Some(Duration::from_secs(1)))
        .in_process()
        .unwrap();
    assert!(strict
        .set("odom", "base", now_ns() + 10 * S, &id, false)
        .is_err());
}

fn old_repeated_and_out_of_order_stamps_are_refused(backend: Backend) {
    let (b, _ns) = buffer(backend, caps(), "order");
    let id = at([0.0; 3]);
    b.set("odom", "base", 100 * S, &id, false).unwrap();
    assert_eq!(
        b.set("odom", "base", 100 * S, &id, false),
        Err(SetError::NotNewer {
            child: "base".into(),
            stamp_ns: 100 * S,
            newest_ns: 100 * S
        })
    );
    assert!(matches!(
        b.set("odom", "base", 95 * S, &id, false),
        Err(SetError::NotNewer { .. })
    ));
    assert!(matches!(
        b.set("odom", "base", 80 * S, &id, false),
        Err(SetError::TooOld { newest_ns, .. }) if newest_ns == 100 * S
    ));
    b.set("odom", "base", 101 * S, &id, false).unwrap();
}

fn a_frame_keeps_its_kind(backend: Backend) {
    let (b, _ns) = buffer(backend, caps(), "kind");
    let id = at([0.0; 3]);
    b.set("base", "laser", 0, &id, true).unwrap();
    assert_eq!(
        b.set("base", "laser", S, &id, false),
        Err(SetError::KindConflict {
            child: "laser".into(),
            existing: "static",
            offered: "dynamic"
        })
    );
    b.set("odom", "base", S, &id, false).unwrap();
    assert!(matches!(
        b.set("odom", "base", 2 * S, &id, true),
        Err(SetError::KindConflict { .. })
    ));
}

fn a_full_frame_table_refuses_new_frames(backend: Backend) {
    let caps = Capacities {
        max_frames: 4,
        ..Capacities::default()
    };
    let (b, _ns) = buffer(backend, caps, "full");
    let id = at([0.0; 3]);
    b.set("f0", "f1", S, &id, false).unwrap();
    b.set("f1", "f2", S, &id, false).unwrap();
    b.set("f2", "f3", S, &id, false).unwrap();
    assert_eq!(
        b.set("f3", "f4", S, &id, false),
        Err(SetError::TooManyFrames {
            frame: "f4".into(),
            max: 4
        })
    );
    // Frames that exist still take transforms.
    b.set("f2", "f3", 2 * S, &id, false).unwrap();
}

fn a_tf_message_stores_the_good_and_reports_the_bad(backend: Backend) {
    let (b, _ns) = buffer(backend, caps(), "feed");
    let mut good = TransformStamped::default();
    good.header.frame_id = "odom".into();
    good.header.stamp.sec = 5;
    good.child_frame_id = "base".into();
    good.transform.rotation.w = 1.0;
    good.transform.translation.x = 2.0;
    let mut nan = good.clone();
    nan.child_frame_id = "imu".into();
    nan.transform.translation.y = f64::NAN;
    let mut selfp = good.clone();
    selfp.child_frame_id = "odom".into();
    let mut later = good.clone();
    later.header.stamp.sec = 6;
    later.transform.translation.x = 4.0;
    let msg = TFMessage {
        transforms: vec![good, nan, selfp, later],
    };
    let report = b.feed_tf_message(&msg, false);
    assert_eq!(report.accepted, 2);
    let idx: Vec<usize> = report.refused.iter().map(|r| r.0).collect();
    assert_eq!(idx, [1, 2]);
    assert!(matches!(report.refused[0].1, SetError::NotFinite { .. }));
    assert!(matches!(report.refused[1].1, SetError::SelfParent { .. }));
    let stats = b.stats();
    assert_eq!((stats.accepted, stats.refused), (2, 2));
    assert_eq!((stats.accepted_all, stats.refused_all), (2, 2));
    assert_close(
        &b.lookup_transform("odom", "base", 5 * S + S / 2)
            .unwrap()
            .transform,
        &at([3.0, 0.0, 0.0]),
    );
}

macro_rules! both {
    ($($name:ident),* $(,)?) => {
        mod shared {
            $(#[test] fn $name() { super::$name(super::Backend::Shared); super::assert_nothing_left(); })*
        }
        mod in_process {
            $(#[test] fn $name() { super::$name(super::Backend::InProcess); })*
        }
    };
}

both!(
    quaternion_within_tolerance_is_normalised_beyond_it_refused,
    nan_and_infinity_are_refused,
    frame_ids_are_checked,
    a_loop_across_frames_is_refused_and_never_hangs_a_lookup,
    a_stamp_far_in_the_future_is_refused,
    old_repeated_and_out_of_order_stamps_are_refused,
    a_frame_keeps_its_kind,
    a_full_frame_table_refuses_new_frames,
    a_tf_message_stores_the_good_and_reports_the_bad,
);
