//! Broadcasters and listeners across real processes: transforms a process broadcasts on
//! `tf`/`tf_static` are looked up by listeners of other processes; one process per host
//! feeds the shared buffer and another takes over when it is killed; per-process listeners
//! (the tf2 way) each subscribe. Peers are this test binary run again with `TF_PEER` set.

use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use horus::inspect::TopicView;
use horus_tf::{
    stamp_now, time_of_ns, transform_stamped, BroadcastError, LookupError, SetError,
    StaticTransformBroadcaster, TfListener, TransformBroadcaster, LATEST, TF_TOPIC,
};

const S: i64 = 1_000_000_000;
const PATIENCE: Duration = Duration::from_secs(20);
const IDENTITY: [f64; 4] = [0.0, 0.0, 0.0, 1.0];

fn unique_ns(tag: &str) -> String {
    static N: AtomicU32 = AtomicU32::new(0);
    format!(
        "tfbl-{}-{}-{}",
        std::process::id(),
        tag,
        N.fetch_add(1, Ordering::Relaxed)
    )
}

fn shm_leftovers(ns: &str) -> Vec<String> {
    let prefix = format!("horus.{ns}.");
    std::fs::read_dir("/dev/shm")
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| n.starts_with(&prefix))
        .collect()
}

fn wait_until(what: &str, mut done: impl FnMut() -> bool) {
    let end = Instant::now() + PATIENCE;
    while !done() {
        assert!(Instant::now() < end, "gave up waiting for {what}");
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// Runs the test `name` of this binary as a peer process in role `role`.
fn peer(name: &str, role: &str, ns: &str) -> Child {
    Command::new(std::env::current_exe().unwrap())
        .args(["--exact", name, "--nocapture", "--test-threads=1"])
        .env("TF_PEER", role)
        .env("HORUS_NAMESPACE", ns)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .spawn()
        .unwrap()
}

/// The peer's role when this process is one.
fn role() -> Option<(String, String)> {
    Some((
        std::env::var("TF_PEER").ok()?,
        std::env::var("HORUS_NAMESPACE").ok()?,
    ))
}

/// Blocks until the parent closes our stdin (or dies).
fn until_released() {
    let mut sink = String::new();
    let _ = std::io::stdin().read_line(&mut sink);
}

/// Subscribers of `tf` in `ns` right now (feeders).
fn tf_subscribers(ns: &str) -> usize {
    TopicView::open(ns, TF_TOPIC)
        .map(|v| v.snapshot().subscribers.len())
        .unwrap_or(0)
}

#[test]
fn a_listener_looks_up_what_another_process_broadcasts() {
    if let Some((role, ns)) = role() {
        assert_eq!(role, "broadcaster");
        let mut statics = StaticTransformBroadcaster::open(Some(&ns)).unwrap();
        let mut tf = TransformBroadcaster::open(Some(&ns)).unwrap();
        // Wait for the other process's feeder: tf is not latched.
        wait_until("a feeder", || tf.subscribers() > 0);
        statics
            .send(&transform_stamped(
                "base_link",
                "laser",
                time_of_ns(0),
                [0.0, 0.0, 0.2],
                IDENTITY,
            ))
            .unwrap();
        for (t, x) in [(S, 0.0), (2 * S, 1.0)] {
            tf.send(&transform_stamped(
                "odom",
                "base_link",
                time_of_ns(t),
                [x, 0.0, 0.0],
                IDENTITY,
            ))
            .unwrap();
        }
        until_released();
        return;
    }
    let ns = unique_ns("lookup");
    {
        let listener = TfListener::open(&ns).unwrap();
        assert!(listener.buffer().is_shared());
        let mut child = peer(
            "a_listener_looks_up_what_another_process_broadcasts",
            "broadcaster",
            &ns,
        );
        let t = listener
            .wait_for_transform("odom", "laser", 2 * S, PATIENCE)
            .unwrap();
        // Interpolated halfway: x = 0.5; the laser 0.2 above the base.
        let mid = listener
            .lookup_transform("odom", "laser", S + S / 2)
            .unwrap();
        assert!(
            (mid.transform.translation[0] - 0.5).abs() < 1e-12,
            "{mid:?}"
        );
        assert!(
            (mid.transform.translation[2] - 0.2).abs() < 1e-12,
            "{mid:?}"
        );
        assert_eq!(t.stamp_ns, 2 * S);
        assert_eq!(
            listener
                .lookup_transform("odom", "laser", LATEST)
                .unwrap()
                .stamp_ns,
            2 * S
        );
        wait_until("the count", || listener.stats().accepted == 3);
        let stats = listener.stats();
        assert!(stats.feeding);
        assert_eq!(
            (stats.accepted, stats.refused, stats.undecodable),
            (3, 0, 0),
            "{stats:?}"
        );
        drop(child.stdin.take());
        assert!(child.wait().unwrap().success());
    }
    assert_eq!(shm_leftovers(&ns), Vec::<String>::new());
}

#[test]
fn one_listener_per_host_feeds_the_shared_buffer() {
    let ns = unique_ns("one-feeder");
    {
        let a = TfListener::open(&ns).unwrap();
        let b = TfListener::open(&ns).unwrap();
        let mut tf = TransformBroadcaster::open(Some(&ns)).unwrap();
        wait_until("a feeder", || tf.subscribers() > 0);
        tf.send(&transform_stamped(
            "odom",
            "base_link",
            stamp_now(),
            [1.0, 0.0, 0.0],
            IDENTITY,
        ))
        .unwrap();
        // Both see it; only one subscribed and decoded it.
        a.wait_for_transform("odom", "base_link", LATEST, PATIENCE)
            .unwrap();
        b.wait_for_transform("odom", "base_link", LATEST, PATIENCE)
            .unwrap();
        assert_eq!(tf_subscribers(&ns), 1);
        wait_until("the count", || a.stats().accepted + b.stats().accepted == 1);
        let (sa, sb) = (a.stats(), b.stats());
        assert!(sa.feeding != sb.feeding, "{sa:?} {sb:?}");
    }
    assert_eq!(shm_leftovers(&ns), Vec::<String>::new());
}

#[test]
fn a_killed_feeder_is_replaced_by_a_standby_listener() {
    if let Some((role, ns)) = role() {
        assert_eq!(role, "feeder");
        let listener = TfListener::open(&ns).unwrap();
        wait_until("the claim", || listener.stats().feeding);
        println!("feeding");
        until_released();
        return;
    }
    let ns = unique_ns("takeover");
    {
        let mut child = peer(
            "a_killed_feeder_is_replaced_by_a_standby_listener",
            "feeder",
            &ns,
        );
        // The peer feeds once it subscribed to tf.
        wait_until("the peer's feeder", || tf_subscribers(&ns) == 1);
        let standby = TfListener::open(&ns).unwrap();
        let mut tf = TransformBroadcaster::open(Some(&ns)).unwrap();
        assert!(!standby.stats().feeding);
        child.kill().unwrap();
        child.wait().unwrap();
        wait_until("the standby to take over", || standby.stats().feeding);
        // tf is volatile and the dead feeder's subscriber place may still be counted until
        // it is reclaimed: broadcast until the new feeder has stored one (as a robot's
        // broadcasters do, periodically).
        wait_until("a transform through the new feeder", || {
            tf.send(&transform_stamped(
                "odom",
                "base_link",
                stamp_now(),
                [2.0, 0.0, 0.0],
                IDENTITY,
            ))
            .unwrap();
            std::thread::sleep(Duration::from_millis(20));
            standby.can_transform("odom", "base_link", LATEST)
        });
        let t = standby
            .lookup_transform("odom", "base_link", LATEST)
            .unwrap();
        assert_eq!(t.transform.translation[0], 2.0);
    }
    assert_eq!(shm_leftovers(&ns), Vec::<String>::new());
}

#[test]
fn per_process_listeners_each_subscribe_and_keep_their_own_copy() {
    let ns = unique_ns("per-process");
    {
        let a = TfListener::per_process(&ns).unwrap();
        let b = TfListener::per_process(&ns).unwrap();
        assert!(!a.buffer().is_shared());
        let mut tf = TransformBroadcaster::open(Some(&ns)).unwrap();
        wait_until("both feeders", || tf.subscribers() == 2);
        tf.send(&transform_stamped(
            "odom",
            "base_link",
            stamp_now(),
            [1.0, 0.0, 0.0],
            IDENTITY,
        ))
        .unwrap();
        a.wait_for_transform("odom", "base_link", LATEST, PATIENCE)
            .unwrap();
        b.wait_for_transform("odom", "base_link", LATEST, PATIENCE)
            .unwrap();
        // (The counters follow the store: wait for them too.)
        wait_until("both counts", || {
            (a.stats().accepted, b.stats().accepted) == (1, 1)
        });
    }
    assert_eq!(shm_leftovers(&ns), Vec::<String>::new());
}

#[test]
fn a_bad_transform_refuses_the_whole_batch_and_sends_nothing() {
    let ns = unique_ns("refused");
    {
        let listener = TfListener::per_process(&ns).unwrap();
        let mut tf = TransformBroadcaster::open(Some(&ns)).unwrap();
        wait_until("the feeder", || tf.subscribers() == 1);
        let good = transform_stamped("odom", "base_link", stamp_now(), [1.0, 0.0, 0.0], IDENTITY);
        let mut nan = transform_stamped("base_link", "laser", stamp_now(), [0.0; 3], IDENTITY);
        nan.transform.translation.x = f64::NAN;
        let e = tf.send_all(&[good.clone(), nan]).unwrap_err();
        assert!(
            matches!(
                e,
                BroadcastError::Invalid {
                    index: 1,
                    reason: SetError::NotFinite { .. },
                    ..
                }
            ),
            "{e}"
        );
        // The next (good) message is the first the feeder gets.
        tf.send(&good).unwrap();
        listener
            .wait_for_transform("odom", "base_link", LATEST, PATIENCE)
            .unwrap();
        wait_until("the count", || listener.stats().accepted == 1);
        assert_eq!(listener.stats().messages, 1);
        assert!(matches!(
            listener.lookup_transform("odom", "laser", LATEST),
            Err(LookupError::UnknownFrame { .. })
        ));
    }
    assert_eq!(shm_leftovers(&ns), Vec::<String>::new());
}

#[test]
fn a_static_broadcaster_publishes_its_whole_set_each_time() {
    let ns = unique_ns("static-set");
    {
        let listener = TfListener::per_process(&ns).unwrap();
        let mut statics = StaticTransformBroadcaster::open(Some(&ns)).unwrap();
        wait_until("the feeder", || {
            TopicView::open(&ns, horus_tf::TF_STATIC_TOPIC)
                .map(|v| v.snapshot().subscribers.len())
                .unwrap_or(0)
                == 1
        });
        statics
            .send(&transform_stamped(
                "base_link",
                "laser",
                time_of_ns(0),
                [0.1, 0.0, 0.0],
                IDENTITY,
            ))
            .unwrap();
        statics
            .send(&transform_stamped(
                "base_link",
                "imu",
                time_of_ns(0),
                [0.0, 0.0, 0.1],
                IDENTITY,
            ))
            .unwrap();
        // The same child again replaces its transform.
        statics
            .send(&transform_stamped(
                "/base_link",
                "/laser",
                time_of_ns(0),
                [0.3, 0.0, 0.0],
                IDENTITY,
            ))
            .unwrap();
        assert_eq!(statics.transforms().count(), 2);
        let t = listener
            .wait_for_transform("laser", "imu", LATEST, PATIENCE)
            .unwrap();
        wait_until("the third message", || listener.stats().messages == 3);
        let t2 = listener
            .lookup_transform("base_link", "laser", LATEST)
            .unwrap();
        assert_eq!(t2.transform.translation[0], 0.3);
        assert!(t.transform.translation[2] > 0.0);
    }
    assert_eq!(shm_leftovers(&ns), Vec::<String>::new());
}

#[test]
fn statics_sent_before_a_listener_joined_reach_it_latched() {
    if let Some((role, ns)) = role() {
        assert_eq!(role, "statics");
        let mut statics = StaticTransformBroadcaster::open(Some(&ns)).unwrap();
        assert!(statics.is_latched());
        statics
            .send_all(&[
                transform_stamped("map", "odom", time_of_ns(0), [1.0, 0.0, 0.0], IDENTITY),
                transform_stamped(
                    "odom",
                    "base_link",
                    time_of_ns(0),
                    [0.0, 2.0, 0.0],
                    IDENTITY,
                ),
            ])
            .unwrap();
        println!("sent");
        until_released();
        return;
    }
    let ns = unique_ns("latched");
    {
        let mut child = Command::new(std::env::current_exe().unwrap())
            .args([
                "--exact",
                "statics_sent_before_a_listener_joined_reach_it_latched",
                "--nocapture",
                "--test-threads=1",
            ])
            .env("TF_PEER", "statics")
            .env("HORUS_NAMESPACE", &ns)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        // Wait until the peer has published (nobody subscribed then).
        let mut out = std::io::BufReader::new(child.stdout.take().unwrap());
        let mut line = String::new();
        while !line.contains("sent") {
            line.clear();
            assert!(std::io::BufRead::read_line(&mut out, &mut line).unwrap() > 0);
        }
        for listener in [
            TfListener::open(&ns).unwrap(),
            TfListener::per_process(&ns).unwrap(),
        ] {
            let t = listener
                .wait_for_transform("map", "base_link", LATEST, PATIENCE)
                .unwrap();
            assert_eq!(t.transform.translation, [1.0, 2.0, 0.0]);
        }
        drop(child.stdin.take());
        assert!(child.wait().unwrap().success());
    }
    assert_eq!(shm_leftovers(&ns), Vec::<String>::new());
}
