//! The scheduler glue: subscribers as readiness sources for event-driven
//! nodes, and the emergency stop published on a topic. Behaviour only.

use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use horus::prelude::*;
use horus::sched::EmergencyStopReason;

/// A namespace no other test (or test run) uses.
fn unique_ns(tag: &str) -> String {
    static N: AtomicU32 = AtomicU32::new(0);
    format!(
        "test-glue-{tag}-{}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    )
}

/// Files of namespace `ns` still in /dev/shm (topic segments, stats files).
fn leftovers(ns: &str) -> Vec<String> {
    let prefix = format!("horus.{ns}.");
    std::fs::read_dir("/dev/shm")
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| n.starts_with(&prefix))
        .collect()
}

fn scheduler(ns: &str) -> Scheduler {
    Scheduler::new()
        .namespace(ns)
        .handle_signals(false)
        .publish_stats(false)
}

/// Counts of an event node's ticks.
#[derive(Default)]
struct Counts {
    ticks: AtomicU64,
    received: AtomicU64,
    empty: AtomicU64,
}

/// Takes exactly one message per tick.
struct OnePerTick {
    sub: Subscriber<CmdVel>,
    counts: Arc<Counts>,
}

impl Node for OnePerTick {
    fn tick(&mut self, _ctx: &TickContext<'_>) -> Result<(), NodeError> {
        self.counts.ticks.fetch_add(1, Ordering::Relaxed);
        match self.sub.try_recv() {
            Some(_) => self.counts.received.fetch_add(1, Ordering::Relaxed),
            None => self.counts.empty.fetch_add(1, Ordering::Relaxed),
        };
        Ok(())
    }
}

/// Runs an event node fed by `publishers` publishers on one topic, each
/// sending `per_publisher` messages (in bursts and one by one) from another
/// thread; returns the counts once everything was received.
fn run_event_node(ns: &str, mode: WaitMode, publishers: usize, per_publisher: u64) -> Arc<Counts> {
    let topic = Topic::<CmdVel>::builder("cmd")
        .namespace(ns)
        .depth(64)
        .open()
        .unwrap();
    let sub = topic.subscriber_with(mode).unwrap();
    let ready = sub.readiness();
    let counts = Arc::new(Counts::default());
    let mut sched = scheduler(ns);
    sched
        .add(
            OnePerTick {
                sub,
                counts: counts.clone(),
            },
            NodeConfig::new().name("driver").event(ready),
        )
        .unwrap();
    let stop = sched.stop_handle();
    let total = publishers as u64 * per_publisher;
    let (feeder_counts, feeder_topic) = (counts.clone(), topic.clone());
    let feeder = std::thread::spawn(move || {
        let mut pubs: Vec<_> = (0..publishers)
            .map(|_| feeder_topic.publisher().unwrap())
            .collect();
        for i in 0..per_publisher {
            for p in &mut pubs {
                p.send(CmdVel::new(i, 1.0, 0.0)).unwrap();
            }
            // Bursts of 8, then a pause long enough for the node to go idle.
            if i % 8 == 7 {
                std::thread::sleep(Duration::from_millis(2));
            }
        }
        let deadline = Instant::now() + Duration::from_secs(20);
        while feeder_counts.received.load(Ordering::Relaxed) < total && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(1));
        }
        // Give a wrong extra tick the chance to happen before stopping.
        std::thread::sleep(Duration::from_millis(30));
        stop.request_stop();
    });
    let reason = sched.run().unwrap();
    feeder.join().unwrap();
    assert_eq!(reason, StopReason::Requested);
    drop(sched);
    counts
}

#[test]
fn event_node_ticks_once_per_published_message() {
    let ns = unique_ns("once");
    let c = run_event_node(&ns, WaitMode::Futex, 1, 100);
    assert_eq!(c.received.load(Ordering::Relaxed), 100);
    assert_eq!(c.ticks.load(Ordering::Relaxed), 100);
    assert_eq!(c.empty.load(Ordering::Relaxed), 0);
    assert_eq!(leftovers(&ns), Vec::<String>::new());
}

#[test]
fn event_node_sees_every_publisher_ring() {
    let ns = unique_ns("rings");
    let c = run_event_node(&ns, WaitMode::Futex, 3, 40);
    assert_eq!(c.received.load(Ordering::Relaxed), 120);
    assert_eq!(c.ticks.load(Ordering::Relaxed), 120);
    assert_eq!(c.empty.load(Ordering::Relaxed), 0);
}

#[test]
fn event_node_with_busy_poll_subscriber_ticks_once_per_message() {
    let ns = unique_ns("busy");
    let c = run_event_node(&ns, WaitMode::BusyPoll, 1, 50);
    assert_eq!(c.received.load(Ordering::Relaxed), 50);
    assert_eq!(c.ticks.load(Ordering::Relaxed), 50);
    assert_eq!(c.empty.load(Ordering::Relaxed), 0);
}

#[test]
fn has_pending_peeks_without_consuming() {
    let ns = unique_ns("peek");
    let topic = Topic::<CmdVel>::builder("cmd")
        .namespace(&ns)
        .depth(4)
        .open()
        .unwrap();
    let mut p = topic.publisher().unwrap();
    let mut s = topic.subscriber().unwrap();
    let ready = s.readiness();
    assert!(!s.has_pending());
    assert!(!Readiness::ready(&s));
    assert!(!ready.ready());

    p.send(CmdVel::new(1, 0.0, 0.0)).unwrap();
    for _ in 0..3 {
        assert!(s.has_pending());
        assert!(Readiness::ready(&s));
        assert!(ready.ready());
    }
    assert_eq!(s.try_recv().unwrap().stamp_ns, 1);
    assert!(!s.has_pending());
    assert!(!ready.ready());

    // Lapped under DropOldest: still pending, and the receive counts the loss.
    for i in 2..=10 {
        p.send(CmdVel::new(i, 0.0, 0.0)).unwrap();
    }
    assert!(ready.ready());
    assert_eq!(s.latest().unwrap().stamp_ns, 10);
    assert!(!ready.ready());
    assert_eq!(s.stats().received, 2);
}

#[test]
fn readiness_wait_wakes_on_a_publish_from_another_thread() {
    let ns = unique_ns("wait");
    let topic = Topic::<CmdVel>::builder("cmd")
        .namespace(&ns)
        .open()
        .unwrap();
    let s = topic.subscriber().unwrap();
    let ready = s.readiness();
    // Nothing published: the wait times out and says not ready.
    assert!(!ready.wait(Duration::from_millis(5)));
    let t = topic.clone();
    let sender = std::thread::spawn(move || {
        let mut p = t.publisher().unwrap();
        std::thread::sleep(Duration::from_millis(20));
        p.send(CmdVel::new(1, 0.0, 0.0)).unwrap();
    });
    // Generous timeout: the assertion is that the wait returns ready.
    assert!(ready.wait(Duration::from_secs(20)));
    assert!(ready.ready());
    sender.join().unwrap();
}

#[test]
fn emergency_stop_publishes_an_emergency_stop_message() {
    let ns = unique_ns("estop");
    let topic = Topic::<EmergencyStop>::builder("estop")
        .namespace(&ns)
        .open()
        .unwrap();
    let mut listener = topic.subscriber().unwrap();
    let mut sched = scheduler(&ns)
        .name("robot")
        .on_emergency_stop(TopicEmergencyStop::from_topic(&topic).unwrap());
    sched
        .add(
            node_fn("bumper", |ctx| {
                if ctx.tick_index() == 2 {
                    ctx.emergency_stop("collision");
                }
                Ok(())
            }),
            NodeConfig::new().rate(1000.hz()),
        )
        .unwrap();
    let reason = sched.run_for(Duration::from_secs(20)).unwrap();
    assert!(matches!(
        reason,
        StopReason::EmergencyStop(EmergencyStopReason::Requested { ref by, .. }) if by == "bumper"
    ));
    let msg = listener.recv_timeout(Duration::from_secs(5)).unwrap();
    assert!(msg.is_engaged());
    assert_eq!(msg.reason, EmergencyStop::REASON_SOFTWARE);
    assert_eq!(msg.source_str(), Ok("bumper"));
    assert!(msg.stamp_ns > 0);
    // Exactly one message per stop.
    drop(msg);
    assert!(listener.try_recv().is_none());
    drop(sched);
    drop(listener);
    assert_eq!(leftovers(&ns), Vec::<String>::new());
}
