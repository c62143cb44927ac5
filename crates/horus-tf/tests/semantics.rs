//! tf2's lookup semantics, run against both implementations (the host's
//! shared buffer and the per-process fallback). Expected values are computed
//! by hand (trigonometry of yaw rotations, written out per case), not by the
//! crate's own composition code.

mod common;

use std::f64::consts::{FRAC_PI_2, FRAC_PI_4, FRAC_PI_8};
use std::time::Duration;

use common::*;
use horus_tf::{Capacities, LookupError, TfBuffer, LATEST};

fn caps() -> Capacities {
    Capacities::default()
}

/// map → odom (x 1, yaw 90°) → base_link (x 2) → laser (z 0.5); base_link → imu (x 0.1).
fn robot(b: &TfBuffer) {
    b.set(
        "map",
        "odom",
        S,
        &tf([1.0, 0.0, 0.0], yaw(FRAC_PI_2)),
        false,
    )
    .unwrap();
    b.set("odom", "base_link", S, &at([2.0, 0.0, 0.0]), false)
        .unwrap();
    b.set("base_link", "laser", 0, &at([0.0, 0.0, 0.5]), true)
        .unwrap();
    b.set("base_link", "imu", 0, &at([0.1, 0.0, 0.0]), true)
        .unwrap();
}

fn chain_composes_down_the_tree(backend: Backend) {
    let (b, _ns) = buffer(backend, caps(), "chain");
    robot(&b);
    // The laser's origin (2, 0, 0.5) in odom, turned 90° about z: (0, 2, 0.5), plus (1, 0, 0).
    let t = b.lookup_transform("map", "laser", S).unwrap();
    assert_close(&t.transform, &tf([1.0, 2.0, 0.5], yaw(FRAC_PI_2)));
    assert_eq!(t.stamp_ns, S);
}

fn inverse_direction_is_the_inverse(backend: Backend) {
    let (b, _ns) = buffer(backend, caps(), "inverse");
    robot(&b);
    // map's origin seen from the laser: (0,0,0) − (1, 2, 0.5) = (−1, −2, −0.5), turned −90°
    // about z ((x, y) → (y, −x)): (−2, 1, −0.5).
    let t = b.lookup_transform("laser", "map", S).unwrap();
    assert_close(&t.transform, &tf([-2.0, 1.0, -0.5], yaw(-FRAC_PI_2)));
}

fn branch_goes_through_the_common_ancestor(backend: Backend) {
    let (b, _ns) = buffer(backend, caps(), "branch");
    robot(&b);
    // imu (0.1, 0, 0) and laser (0, 0, 0.5) under base_link: imu in laser is (0.1, 0, −0.5).
    let t = b.lookup_transform("laser", "imu", S).unwrap();
    assert_close(&t.transform, &at([0.1, 0.0, -0.5]));
    // Both static under base_link: a time odom → base_link does not cover still works,
    // as in tf2 (the walks meet at base_link before needing odom's history).
    let t = b.lookup_transform("laser", "imu", 50 * S).unwrap();
    assert_close(&t.transform, &at([0.1, 0.0, -0.5]));
    // Latest of a static-only path: time 0.
    assert_eq!(
        b.lookup_transform("laser", "imu", LATEST).unwrap().stamp_ns,
        0
    );
    // Target an ancestor of the source, and the source an ancestor of the target.
    let t = b.lookup_transform("odom", "imu", S).unwrap();
    assert_close(&t.transform, &at([2.1, 0.0, 0.0]));
    let t = b.lookup_transform("imu", "odom", S).unwrap();
    assert_close(&t.transform, &at([-2.1, 0.0, 0.0]));
}

fn same_frame_is_identity(backend: Backend) {
    let (b, _ns) = buffer(backend, caps(), "same");
    robot(&b);
    let t = b.lookup_transform("odom", "odom", 7 * S).unwrap();
    assert_close(&t.transform, &at([0.0; 3]));
    assert_eq!(t.stamp_ns, 7 * S);
    assert_eq!(
        b.lookup_transform("odom", "odom", LATEST).unwrap().stamp_ns,
        S
    );
}

fn interpolation_lerps_translation_and_slerps_rotation(backend: Backend) {
    let (b, _ns) = buffer(backend, caps(), "interp");
    b.set("odom", "base_link", 10 * S, &at([0.0; 3]), false)
        .unwrap();
    b.set(
        "odom",
        "base_link",
        12 * S,
        &tf([2.0, 4.0, 0.0], yaw(FRAC_PI_2)),
        false,
    )
    .unwrap();
    // Halfway: (1, 2, 0), yaw 45°, whose quaternion is (0, 0, sin 22.5°, cos 22.5°).
    let t = b.lookup_transform("odom", "base_link", 11 * S).unwrap();
    assert_close(
        &t.transform,
        &tf(
            [1.0, 2.0, 0.0],
            [0.0, 0.0, FRAC_PI_8.sin(), FRAC_PI_8.cos()],
        ),
    );
    // A quarter of the way: (0.5, 1, 0), yaw 22.5°.
    let t = b
        .lookup_transform("odom", "base_link", 10 * S + S / 2)
        .unwrap();
    assert_close(&t.transform, &tf([0.5, 1.0, 0.0], yaw(FRAC_PI_4 / 2.0)));
    // Exactly on a sample.
    let t = b.lookup_transform("odom", "base_link", 12 * S).unwrap();
    assert_close(&t.transform, &tf([2.0, 4.0, 0.0], yaw(FRAC_PI_2)));
    // Inverse direction at the midpoint: −R⁻¹t with R yaw 45°: (1, 2) turned −45° is
    // ((1 + 2)/√2, (2 − 1)/√2); negated.
    let r = std::f64::consts::FRAC_1_SQRT_2;
    let t = b.lookup_transform("base_link", "odom", 11 * S).unwrap();
    assert_close(
        &t.transform,
        &tf(
            [-3.0 * r, -r, 0.0],
            [0.0, 0.0, -FRAC_PI_8.sin(), FRAC_PI_8.cos()],
        ),
    );
}

fn interpolation_searches_long_histories(backend: Backend) {
    let (b, _ns) = buffer(backend, caps(), "search");
    // x = seconds, every 100 ms over 9 s.
    for i in 0..=90 {
        b.set(
            "odom",
            "base_link",
            i * S / 10,
            &at([i as f64 / 10.0, 0.0, 0.0]),
            false,
        )
        .unwrap();
    }
    for ms in [0i64, 50, 1234, 4321, 8950, 8999, 9000] {
        let t = b.lookup_transform("odom", "base_link", ms * 1_000_000);
        // t = 0 is "latest".
        let want = if ms == 0 { 9.0 } else { ms as f64 / 1000.0 };
        assert_close(&t.unwrap().transform, &at([want, 0.0, 0.0]));
    }
}

fn irregular_histories_are_searched_exactly(backend: Backend) {
    let (b, _ns) = buffer(backend, caps(), "irregular");
    // Stamps k² · 0.1 ms + k ns, within the 10 s window (uneven spacing: the search cannot guess), x = the stamp
    // in seconds, so the interpolated x at any time is that time in seconds.
    let stamp = |k: i64| k * k * 100_000 + k;
    for k in 1..=300 {
        let x = stamp(k) as f64 / 1e9;
        b.set("odom", "base_link", stamp(k), &at([x, 0.0, 0.0]), false)
            .unwrap();
    }
    let mut t = stamp(1);
    while t <= stamp(300) {
        let got = b.lookup_transform("odom", "base_link", t).unwrap();
        let x = got.transform.translation[0];
        assert!((x - t as f64 / 1e9).abs() < 1e-9, "at {t}: x {x}");
        t += 7_777_777;
    }
    for k in [1, 2, 150, 299, 300] {
        let got = b.lookup_transform("odom", "base_link", stamp(k)).unwrap();
        assert_eq!(got.transform.translation[0], stamp(k) as f64 / 1e9);
    }
}

fn extrapolation_errors_carry_the_range(backend: Backend) {
    let (b, _ns) = buffer(backend, caps(), "extrap");
    b.set("odom", "base_link", 10 * S, &at([0.0; 3]), false)
        .unwrap();
    b.set("odom", "base_link", 12 * S, &at([2.0, 0.0, 0.0]), false)
        .unwrap();
    let past = b.lookup_transform("odom", "base_link", 9 * S).unwrap_err();
    assert_eq!(
        past,
        LookupError::ExtrapolationPast {
            frame: "base_link".into(),
            requested_ns: 9 * S,
            earliest_ns: 10 * S,
            latest_ns: 12 * S
        }
    );
    let future = b.lookup_transform("base_link", "odom", 13 * S).unwrap_err();
    assert_eq!(
        future,
        LookupError::ExtrapolationFuture {
            frame: "base_link".into(),
            requested_ns: 13 * S,
            earliest_ns: 10 * S,
            latest_ns: 12 * S
        }
    );
    assert!(!b.can_transform("odom", "base_link", 13 * S));
    assert!(b.can_transform("odom", "base_link", 11 * S));
    // One sample: only its own time (tf2's "only time x in the buffer").
    b.set("odom", "wheel", 5 * S, &at([0.0; 3]), false).unwrap();
    assert!(b.can_transform("odom", "wheel", 5 * S));
    assert!(matches!(
        b.lookup_transform("odom", "wheel", 4 * S),
        Err(LookupError::ExtrapolationPast { earliest_ns, latest_ns, .. }) if earliest_ns == 5 * S && latest_ns == 5 * S
    ));
}

fn latest_is_the_latest_common_time(backend: Backend) {
    let (b, _ns) = buffer(backend, caps(), "latest");
    for i in 1..=3 {
        b.set("map", "odom", i * S, &at([i as f64, 0.0, 0.0]), false)
            .unwrap();
    }
    for i in 1..=2 {
        b.set("odom", "base_link", i * S, &at([0.0, i as f64, 0.0]), false)
            .unwrap();
    }
    b.set("base_link", "laser", 0, &at([0.0, 0.0, 1.0]), true)
        .unwrap();
    // The chain's newest common time is 2 s (base_link's newest); map → odom interpolated there.
    let t = b.lookup_transform("map", "laser", LATEST).unwrap();
    assert_eq!(t.stamp_ns, 2 * S);
    assert_close(&t.transform, &at([2.0, 2.0, 1.0]));
    // Only map → odom on the path: its newest, 3 s.
    let t = b.lookup_transform("map", "odom", LATEST).unwrap();
    assert_eq!(t.stamp_ns, 3 * S);
    // Below the common ancestor only: odom's newest above it does not count.
    b.set("odom", "other", S, &at([5.0, 0.0, 0.0]), false)
        .unwrap();
    let t = b.lookup_transform("other", "base_link", LATEST).unwrap();
    assert_eq!(t.stamp_ns, S);
    assert_close(&t.transform, &at([-5.0, 1.0, 0.0]));
}

fn static_and_dynamic_mix(backend: Backend) {
    let (b, _ns) = buffer(backend, caps(), "mix");
    b.set("map", "odom", 0, &at([10.0, 0.0, 0.0]), true)
        .unwrap();
    b.set("odom", "base_link", 4 * S, &at([0.0; 3]), false)
        .unwrap();
    b.set("odom", "base_link", 6 * S, &at([2.0, 0.0, 0.0]), false)
        .unwrap();
    // The static transform holds at every time; the dynamic one is interpolated.
    let t = b.lookup_transform("map", "base_link", 5 * S).unwrap();
    assert_close(&t.transform, &at([11.0, 0.0, 0.0]));
    // Latest: the static one does not count.
    assert_eq!(
        b.lookup_transform("map", "base_link", LATEST)
            .unwrap()
            .stamp_ns,
        6 * S
    );
    // The static one alone holds at any time; a newer static replaces it.
    assert!(b.can_transform("map", "odom", 123 * S));
    b.set("map", "odom", 0, &at([20.0, 0.0, 0.0]), true)
        .unwrap();
    assert_close(
        &b.lookup_transform("map", "odom", 9 * S).unwrap().transform,
        &at([20.0, 0.0, 0.0]),
    );
    // Past the dynamic history: extrapolation names base_link.
    assert!(matches!(
        b.lookup_transform("map", "base_link", 3 * S),
        Err(LookupError::ExtrapolationPast { frame, .. }) if frame == "base_link"
    ));
}

fn unknown_and_disconnected_frames(backend: Backend) {
    let (b, _ns) = buffer(backend, caps(), "disc");
    b.set("a", "b", S, &at([1.0, 0.0, 0.0]), false).unwrap();
    b.set("c", "d", S, &at([1.0, 0.0, 0.0]), false).unwrap();
    assert_eq!(
        b.lookup_transform("b", "nope", S).unwrap_err(),
        LookupError::UnknownFrame {
            frame: "nope".into()
        }
    );
    assert_eq!(
        b.lookup_transform("b", "d", S).unwrap_err(),
        LookupError::Disconnected {
            target_frame: "b".into(),
            source_frame: "d".into(),
            target_root: "a".into(),
            source_root: "c".into()
        }
    );
    assert!(matches!(
        b.lookup_transform("b", "d", LATEST),
        Err(LookupError::Disconnected { .. })
    ));
    // tf2 strips one leading slash.
    assert!(b.can_transform("/a", "b", S));
}

fn window_and_history_bound_what_is_kept(backend: Backend) {
    let caps = Capacities {
        history: 8,
        window: Duration::from_secs(1),
        ..Capacities::default()
    };
    let (b, _ns) = buffer(backend, caps, "window");
    // Every 100 ms for 2 s: the window keeps 1.0..=2.0 s, the ring 8 samples (1.3..=2.0).
    for i in 0..=20 {
        b.set(
            "odom",
            "base_link",
            i * S / 10,
            &at([i as f64, 0.0, 0.0]),
            false,
        )
        .unwrap();
    }
    assert!(matches!(
        b.lookup_transform("odom", "base_link", S + S / 10),
        Err(LookupError::ExtrapolationPast { earliest_ns, latest_ns, .. })
            if earliest_ns == 13 * S / 10 && latest_ns == 2 * S
    ));
    assert!(b.can_transform("odom", "base_link", 13 * S / 10));
    // Window alone (ring large enough).
    let caps = Capacities {
        window: Duration::from_secs(1),
        ..Capacities::default()
    };
    let (b, _ns) = buffer(backend, caps, "window2");
    for i in 0..=20 {
        b.set(
            "odom",
            "base_link",
            i * S / 10,
            &at([i as f64, 0.0, 0.0]),
            false,
        )
        .unwrap();
    }
    assert!(matches!(
        b.lookup_transform("odom", "base_link", S / 2),
        Err(LookupError::ExtrapolationPast { earliest_ns, .. }) if earliest_ns == S
    ));
    assert!(b.can_transform("odom", "base_link", S));
}

fn reparented_frames_follow_their_parent_at_each_time(backend: Backend) {
    let (b, _ns) = buffer(backend, caps(), "reparent");
    b.set("world", "left", 0, &at([-1.0, 0.0, 0.0]), true)
        .unwrap();
    b.set("world", "right", 0, &at([1.0, 0.0, 0.0]), true)
        .unwrap();
    b.set("left", "cup", S, &at([0.0, 1.0, 0.0]), false)
        .unwrap();
    b.set("left", "cup", 2 * S, &at([0.0, 1.0, 0.0]), false)
        .unwrap();
    b.set("right", "cup", 3 * S, &at([0.0, 2.0, 0.0]), false)
        .unwrap();
    assert_close(
        &b.lookup_transform("world", "cup", S).unwrap().transform,
        &at([-1.0, 1.0, 0.0]),
    );
    // Between samples of different parents tf2 takes the older one, unblended.
    assert_close(
        &b.lookup_transform("world", "cup", 2 * S + S / 2)
            .unwrap()
            .transform,
        &at([-1.0, 1.0, 0.0]),
    );
    assert_close(
        &b.lookup_transform("world", "cup", 3 * S).unwrap().transform,
        &at([1.0, 2.0, 0.0]),
    );
}

fn waiting_returns_once_the_transform_arrives(backend: Backend) {
    let (b, _ns) = buffer(backend, caps(), "wait");
    let writer = b.clone();
    let t = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(20));
        writer
            .set("odom", "base_link", S, &at([1.0, 0.0, 0.0]), false)
            .unwrap();
    });
    let got = b
        .wait_for_transform("odom", "base_link", S, Duration::from_secs(30))
        .unwrap();
    assert_close(&got.transform, &at([1.0, 0.0, 0.0]));
    t.join().unwrap();
    // Never arrives: a timeout carrying the last reason.
    let err = b
        .wait_for_transform("odom", "ghost", S, Duration::from_millis(30))
        .unwrap_err();
    assert!(
        matches!(&err, LookupError::Timeout { last, .. } if matches!(**last, LookupError::UnknownFrame { .. })),
        "{err}"
    );
}

fn frames_listing_reports_each_frame(backend: Backend) {
    let (b, _ns) = buffer(backend, caps(), "frames");
    b.set("map", "odom", 0, &at([1.0, 0.0, 0.0]), true).unwrap();
    for i in 0..11 {
        b.set("odom", "base_link", S + i * S / 10, &at([0.0; 3]), false)
            .unwrap();
    }
    let frames = b.frames();
    let names: Vec<_> = frames.iter().map(|f| f.name.as_str()).collect();
    assert_eq!(names, ["map", "odom", "base_link"]);
    let map = &frames[0];
    assert_eq!(map.parent, None);
    let odom = &frames[1];
    assert_eq!(odom.parent.as_deref(), Some("map"));
    assert!(odom.is_static);
    assert_eq!(odom.samples, 1);
    assert_eq!(odom.writer_pid, Some(std::process::id()));
    let base = &frames[2];
    assert_eq!(base.parent.as_deref(), Some("odom"));
    assert!(!base.is_static);
    assert_eq!(base.samples, 11);
    assert_eq!(base.earliest_stamp_ns, Some(S));
    assert_eq!(base.latest_stamp_ns, Some(2 * S));
    assert!((base.rate_hz.unwrap() - 10.0).abs() < 1e-9);
    let stats = b.stats();
    assert_eq!((stats.accepted, stats.refused, stats.frames), (12, 0, 3));
}

fn concurrent_writers_are_serialised_and_none_is_lost(backend: Backend) {
    let (b, _ns) = buffer(backend, caps(), "writers");
    let threads: Vec<_> = (0..4)
        .map(|w| {
            let b = b.clone();
            std::thread::spawn(move || {
                for k in 1..=300 {
                    b.set(
                        "odom",
                        &format!("w{w}"),
                        k * S / 100,
                        &at([k as f64, 0.0, 0.0]),
                        false,
                    )
                    .unwrap();
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    assert_eq!(b.stats().accepted, 1200);
    for w in 0..4 {
        let t = b
            .lookup_transform("odom", &format!("w{w}"), LATEST)
            .unwrap();
        assert_eq!((t.stamp_ns, t.transform.translation[0]), (3 * S, 300.0));
        let f = b
            .frames()
            .into_iter()
            .find(|f| f.name == format!("w{w}"))
            .unwrap();
        assert_eq!(f.samples, 300);
    }
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
    chain_composes_down_the_tree,
    inverse_direction_is_the_inverse,
    branch_goes_through_the_common_ancestor,
    same_frame_is_identity,
    interpolation_lerps_translation_and_slerps_rotation,
    interpolation_searches_long_histories,
    irregular_histories_are_searched_exactly,
    extrapolation_errors_carry_the_range,
    latest_is_the_latest_common_time,
    static_and_dynamic_mix,
    unknown_and_disconnected_frames,
    window_and_history_bound_what_is_kept,
    reparented_frames_follow_their_parent_at_each_time,
    waiting_returns_once_the_transform_arrives,
    frames_listing_reports_each_frame,
    concurrent_writers_are_serialised_and_none_is_lost,
);

#[test]
fn shared_buffers_leave_nothing_in_dev_shm() {
    let (b, ns) = buffer(Backend::Shared, caps(), "leftover");
    robot(&b);
    let ns = ns.unwrap();
    assert_eq!(shm_leftovers(&ns).len(), 1);
    // A second handle (another process would do the same) sees the same tree.
    let other = TfBuffer::open(&ns).unwrap();
    assert!(other.can_transform("map", "laser", S));
    drop(b);
    assert!(other.can_transform("map", "laser", S));
    drop(other);
    assert!(shm_leftovers(&ns).is_empty(), "{:?}", shm_leftovers(&ns));
}
