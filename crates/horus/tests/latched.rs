//! Latched (transient-local) topics: a subscriber that joins late receives
//! the last N messages each live publisher sent, then the live stream, with
//! no gap, no duplicate and no false loss between the two (sequence numbers
//! checked); a publisher's history ends when it exits; the retained history
//! never makes a `Reject`/`Block` publisher refuse or wait; observers may
//! start at the oldest message a ring still holds. Late subscribers run in
//! separate processes (this binary re-run as peers, see `common::Peer`).

mod common;

use std::path::Path;
use std::time::Duration;

use common::{command, enter_peer, peer_ns, report, segment_path, unique_ns, Peer, PEER_PATIENCE};
use horus::prelude::*;
use horus::{Durability, StartAt, TopicError, WaitMode};

horus::message! {
    /// One message of a stream: its number in the stream.
    pub struct Numbered: "horus-test/Numbered", version 1 {
        /// 1, 2, 3, …
        pub n: u64,
    }
}

const DEPTH: u32 = 8;

fn latched(n: u32) -> Durability {
    Durability::TransientLocal { depth: n }
}

/// The stream topic with history `n` (0: volatile); every process opens it
/// with exactly these settings.
fn numbered(ns: &str, name: &str, overflow: Overflow, n: u32) -> Topic<Numbered> {
    let durability = if n == 0 {
        Durability::Volatile
    } else {
        latched(n)
    };
    Topic::<Numbered>::builder(name)
        .namespace(ns)
        .depth(DEPTH)
        .overflow(overflow)
        .durability(durability)
        .open()
        .unwrap()
}

/// The 64 KiB point-cloud topic (chunk path), history 2.
fn clouds(ns: &str, name: &str) -> Topic<PointCloud> {
    Topic::<PointCloud>::builder(name)
        .namespace(ns)
        .depth(4)
        .durability(latched(2))
        .max_tail_bytes(CLOUD_POINTS as usize * 16)
        .loan_pool(12)
        .open()
        .unwrap()
}

/// 64 KiB of XYZI points per cloud.
const CLOUD_POINTS: u32 = 4096;

fn cloud_byte(seq: u64, i: usize) -> u8 {
    (seq as u8).wrapping_mul(31).wrapping_add(i as u8)
}

fn send_cloud(p: &mut Publisher<PointCloud>, seq: u64) {
    let mut header = PointCloud::new(CLOUD_POINTS, true);
    header.stamp_ns = seq;
    let mut sample = p.loan_slice(header.tail_len()).unwrap();
    *sample = header;
    for (i, b) in sample.tail_mut().iter_mut().enumerate() {
        *b = cloud_byte(seq, i);
    }
    sample.send().unwrap();
}

/// Every message ready now, as numbers.
fn drain(s: &mut Subscriber<Numbered>) -> Vec<u64> {
    std::iter::from_fn(|| s.try_recv().map(|m| m.n)).collect()
}

fn list(seqs: &[u64]) -> String {
    let v: Vec<String> = seqs.iter().map(u64::to_string).collect();
    v.join(" ")
}

// ---------------------------------------------------------------- peers

/// Dispatches peer roles; does nothing in a normal test run.
#[test]
fn peer() {
    let Some((role, args)) = enter_peer() else {
        return;
    };
    let a: Vec<&str> = args.iter().map(String::as_str).collect();
    match (role.as_str(), a.as_slice()) {
        ("late", [topic, n]) => late(topic, n.parse().unwrap()),
        ("late_cloud", [topic]) => late_cloud(topic),
        ("spray", [topic, n]) => spray(topic, n.parse().unwrap()),
        ("publish_then_exit", [topic, n, count]) => {
            publish_then_exit(topic, n.parse().unwrap(), count.parse().unwrap())
        }
        _ => panic!("unknown peer role {role} {args:?}"),
    }
}

/// Subscribes late to the stream with history `n`; on each `drain`
/// command reports `got <numbers> overrun <count>`.
fn late(topic: &str, n: u32) {
    let t = numbered(&peer_ns(), topic, Overflow::DropOldest, n);
    let mut s = t.subscriber().unwrap();
    report("ready");
    loop {
        match command().as_str() {
            "drain" => {
                let got = drain(&mut s);
                report(format!(
                    "got [{}] overrun {}",
                    list(&got),
                    s.stats().overrun
                ));
            }
            "exit" | "eof" => return,
            other => panic!("unknown command {other}"),
        }
    }
}

/// Subscribes late to the cloud topic; on `take <k>` receives `k` clouds,
/// checks every byte and reports `got <stamps> overrun <count>`.
fn late_cloud(topic: &str) {
    let t = clouds(&peer_ns(), topic);
    let mut s = t.subscriber().unwrap();
    report("ready");
    loop {
        let cmd = command();
        if let Some(k) = cmd.strip_prefix("take ") {
            let mut got = Vec::new();
            for _ in 0..k.parse::<usize>().unwrap() {
                let m = s.recv_timeout(PEER_PATIENCE).expect("cloud stream stalled");
                assert!(m.is_zero_copy());
                assert_eq!(m.tail().len(), CLOUD_POINTS as usize * 16);
                for (i, &b) in m.tail().iter().enumerate() {
                    assert_eq!(
                        b,
                        cloud_byte(m.stamp_ns, i),
                        "cloud {} byte {i}",
                        m.stamp_ns
                    );
                }
                got.push(m.stamp_ns);
            }
            report(format!(
                "got [{}] overrun {}",
                list(&got),
                s.stats().overrun
            ));
        } else if cmd == "exit" || cmd == "eof" {
            return;
        } else {
            panic!("unknown command {cmd}");
        }
    }
}

/// Publishes 1, 2, 3, … as fast as it can on the stream with history `n`
/// (`DropOldest`) until its stdin closes or says `stop`; reports `sent <n>`.
fn spray(topic: &str, n: u32) {
    let t = numbered(&peer_ns(), topic, Overflow::DropOldest, n);
    let mut p = t.publisher().unwrap();
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let watcher = {
        let stop = stop.clone();
        std::thread::spawn(move || {
            while !matches!(command().as_str(), "stop" | "eof") {}
            stop.store(true, std::sync::atomic::Ordering::Relaxed);
        })
    };
    let mut sent = 0;
    while !stop.load(std::sync::atomic::Ordering::Relaxed) {
        sent += 1;
        p.send(Numbered { n: sent }).unwrap();
        if sent == 1 {
            report("started");
        }
    }
    watcher.join().unwrap();
    report(format!("sent {sent}"));
}

/// Publishes `count` messages on the stream with history `n`, reports
/// `sent`, then waits for `exit` (or is killed).
fn publish_then_exit(topic: &str, n: u32, count: u64) {
    let t = numbered(&peer_ns(), topic, Overflow::DropOldest, n);
    let mut p = t.publisher().unwrap();
    for i in 1..=count {
        p.send(Numbered { n: i }).unwrap();
    }
    report("sent");
    while !matches!(command().as_str(), "exit" | "eof") {}
}

// ---------------------------------------------------------------- tests

#[test]
fn late_subscriber_process_gets_exactly_the_last_n_then_the_live_stream() {
    let ns = unique_ns("latched");
    let t = numbered(&ns, "stream", Overflow::DropOldest, 3);
    assert_eq!(t.durability(), latched(3));
    let mut p = t.publisher().unwrap();
    for n in 1..=10 {
        p.send(Numbered { n }).unwrap();
    }
    let mut late = Peer::spawn(&ns, "late", &["stream", "3"]);
    late.expect("ready");
    late.tell("drain");
    assert_eq!(late.expect("got"), "[8 9 10] overrun 0");
    for n in 11..=15 {
        p.send(Numbered { n }).unwrap();
    }
    late.tell("drain");
    assert_eq!(late.expect("got"), "[11 12 13 14 15] overrun 0");
    late.tell("exit");
    late.finish();
    drop((p, t));
    assert!(!Path::new(&segment_path(&ns, "stream")).exists());
}

#[test]
fn fewer_messages_than_the_history_are_all_delivered_then_live() {
    let ns = unique_ns("latched-few");
    let t = numbered(&ns, "few", Overflow::DropOldest, 4);
    let mut p = t.publisher().unwrap();
    // Nothing published yet: nothing latched.
    let mut early = t.subscriber().unwrap();
    assert_eq!(drain(&mut early), Vec::<u64>::new());
    p.send(Numbered { n: 1 }).unwrap();
    p.send(Numbered { n: 2 }).unwrap();
    let mut late = t.subscriber().unwrap();
    assert_eq!(drain(&mut late), vec![1, 2]);
    p.send(Numbered { n: 3 }).unwrap();
    assert_eq!(drain(&mut late), vec![3]);
    assert_eq!(drain(&mut early), vec![1, 2, 3]);
    assert_eq!(late.stats().overrun, 0);
}

#[test]
fn volatile_late_subscriber_starts_at_the_next_message() {
    let ns = unique_ns("volatile");
    let t = numbered(&ns, "v", Overflow::DropOldest, 0);
    assert_eq!(t.durability(), Durability::Volatile);
    let mut p = t.publisher().unwrap();
    for n in 1..=5 {
        p.send(Numbered { n }).unwrap();
    }
    let mut late = t.subscriber().unwrap();
    assert_eq!(drain(&mut late), Vec::<u64>::new());
    p.send(Numbered { n: 6 }).unwrap();
    assert_eq!(drain(&mut late), vec![6]);
}

#[test]
fn a_subscriber_may_skip_the_history_and_an_observer_may_start_at_the_oldest() {
    let ns = unique_ns("startat");
    let t = numbered(&ns, "s", Overflow::DropOldest, 2);
    let mut p = t.publisher().unwrap();
    for n in 1..=5 {
        p.send(Numbered { n }).unwrap();
    }
    let mut next = t.subscriber_at(WaitMode::BusyPoll, StartAt::Next).unwrap();
    let mut latched_obs = t.observer().unwrap();
    let mut oldest = t.observer_at(WaitMode::BusyPoll, StartAt::Oldest).unwrap();
    assert_eq!(drain(&mut latched_obs), vec![4, 5]);
    assert_eq!(drain(&mut oldest), vec![1, 2, 3, 4, 5]);
    p.send(Numbered { n: 6 }).unwrap();
    assert_eq!(drain(&mut next), vec![6]);
    // On a volatile topic too, from what the ring still holds (depth 8).
    let v = numbered(&ns, "v", Overflow::DropOldest, 0);
    let mut p = v.publisher().unwrap();
    for n in 1..=20 {
        p.send(Numbered { n }).unwrap();
    }
    let mut oldest = v.observer_at(WaitMode::BusyPoll, StartAt::Oldest).unwrap();
    assert_eq!(drain(&mut oldest), (13..=20).collect::<Vec<_>>());
    assert_eq!(oldest.stats().overrun, 0);
}

#[test]
fn late_joiners_racing_a_fast_publisher_process_count_every_overrun_and_nothing_else() {
    let ns = unique_ns("latched-race");
    let t = numbered(&ns, "race", Overflow::DropOldest, DEPTH);
    let mut writer = Peer::spawn(&ns, "spray", &["race", &DEPTH.to_string()]);
    writer.expect("started");
    let mut lapped_somewhere = false;
    for _ in 0..200 {
        let mut s = t.subscriber_with(WaitMode::BusyPoll).unwrap();
        let first = s.recv_timeout(PEER_PATIENCE).expect("stream stalled").n;
        let at_first = s.stats().overrun;
        let mut last = first;
        let mut got = 1u64;
        for _ in 0..2_000 {
            let m = s.recv_timeout(PEER_PATIENCE).expect("stream stalled");
            assert!(m.n > last, "duplicate or reordered: {} after {last}", m.n);
            last = m.n;
            got += 1;
        }
        let overrun = s.stats().overrun - at_first;
        // Every message between the first and the last received was either
        // delivered or counted as overrun: no silent gap, no false loss.
        assert_eq!(last - first + 1, got + overrun, "first {first} last {last}");
        lapped_somewhere |= s.stats().overrun > 0;
    }
    writer.tell("stop");
    let sent: u64 = writer.expect("sent").parse().unwrap();
    writer.finish();
    assert!(sent > 0);
    // Not an assertion of timing: only says whether the race was exercised.
    eprintln!("some late joiner was lapped: {lapped_somewhere}");
}

#[test]
fn late_subscriber_process_gets_64k_chunk_messages_every_subscriber_had_released() {
    let ns = unique_ns("latched-chunks");
    let t = clouds(&ns, "clouds");
    let mut p = t.publisher().unwrap();
    let mut early = t.subscriber().unwrap();
    for seq in 1..=20 {
        send_cloud(&mut p, seq);
        // Read and drop at once: the sole reader of a volatile topic would
        // free the chunk here, and the next loan would reuse it.
        let m = early.try_recv().expect("sent just now");
        assert_eq!(m.stamp_ns, seq);
    }
    // A loan in progress takes a free chunk; it must not be one of the
    // latched messages' (written over with garbage before the late joiner
    // reads them otherwise).
    let mut header = PointCloud::new(CLOUD_POINTS, true);
    header.stamp_ns = 21;
    let mut loan = p.loan_slice(header.tail_len()).unwrap();
    loan.tail_mut().fill(0xEE);
    let mut late = Peer::spawn(&ns, "late_cloud", &["clouds"]);
    late.expect("ready");
    late.tell("take 2");
    assert_eq!(late.expect("got"), "[19 20] overrun 0");
    *loan = header;
    for (i, b) in loan.tail_mut().iter_mut().enumerate() {
        *b = cloud_byte(21, i);
    }
    loan.send().unwrap();
    late.tell("take 1");
    assert_eq!(late.expect("got"), "[21] overrun 0");
    late.tell("exit");
    late.finish();
}

#[test]
fn a_publishers_history_ends_when_it_exits() {
    let ns = unique_ns("latched-exit");
    // The test holds the topic open (a subscriber), so the segment outlives
    // the publisher process.
    let t = numbered(&ns, "exit", Overflow::DropOldest, 3);
    let mut early = t.subscriber().unwrap();
    let mut publisher = Peer::spawn(&ns, "publish_then_exit", &["exit", "3", "5"]);
    publisher.expect("sent");
    // While it lives, a late joiner gets its last 3.
    let mut while_alive = t.subscriber().unwrap();
    assert_eq!(drain(&mut while_alive), vec![3, 4, 5]);
    publisher.tell("exit");
    publisher.finish();
    // Gone: a subscriber that joins now gets none of its history …
    let mut after = t.subscriber().unwrap();
    assert_eq!(drain(&mut after), Vec::<u64>::new());
    // … while one that joined before reads everything still in the ring.
    assert_eq!(drain(&mut early), vec![1, 2, 3, 4, 5]);
    // A new publisher starts a new history.
    let mut p = t.publisher().unwrap();
    p.send(Numbered { n: 100 }).unwrap();
    let mut newest = t.subscriber().unwrap();
    assert_eq!(drain(&mut newest), vec![100]);
}

#[test]
fn a_killed_publishers_history_ends_when_it_is_found_dead() {
    let ns = unique_ns("latched-kill");
    let t = numbered(&ns, "kill", Overflow::DropOldest, 3);
    let _holder = t.subscriber().unwrap();
    let mut publisher = Peer::spawn(&ns, "publish_then_exit", &["kill", "3", "5"]);
    publisher.expect("sent");
    publisher.kill9();
    // Joining reclaims the dead place first: no history of a dead publisher.
    let mut after = t.subscriber().unwrap();
    assert_eq!(drain(&mut after), Vec::<u64>::new());
    drop((after, _holder, t));
    assert!(!Path::new(&segment_path(&ns, "kill")).exists());
}

#[test]
fn a_durability_mismatch_is_a_typed_error() {
    let ns = unique_ns("latched-mismatch");
    let t = numbered(&ns, "m", Overflow::DropOldest, 3);
    let open = |d: Durability| {
        Topic::<Numbered>::builder("m")
            .namespace(&ns)
            .durability(d)
            .open()
    };
    assert!(matches!(
        open(Durability::Volatile),
        Err(TopicError::QosMismatch { .. })
    ));
    match open(latched(2)) {
        Err(TopicError::QosMismatch {
            found, requested, ..
        }) => {
            assert!(found.contains("transient-local (3)"), "{found}");
            assert!(requested.contains("transient-local (2)"), "{requested}");
        }
        other => panic!("expected a QoS mismatch, got {:?}", other.err()),
    }
    // Left unset: adopted.
    let adopted = Topic::<Numbered>::builder("m")
        .namespace(&ns)
        .open()
        .unwrap();
    assert_eq!(adopted.durability(), latched(3));
    drop(t);
    // A history deeper than the ring, or empty, is refused before anything
    // is created.
    for bad in [latched(DEPTH + 1), latched(0)] {
        let r = Topic::<Numbered>::builder("bad")
            .namespace(&ns)
            .depth(DEPTH)
            .durability(bad)
            .open();
        assert!(matches!(r, Err(TopicError::Invalid { .. })), "{bad:?}");
    }
    assert!(!Path::new(&segment_path(&ns, "bad")).exists());
}

/// Review finding: a chunk topic whose loan pool held no more chunks than its
/// latched history let the publisher keep every chunk, and every later loan
/// failed for as long as it lived. Now refused when the topic is opened.
#[test]
fn a_latched_pool_no_larger_than_its_history_is_refused() {
    let ns = unique_ns("latched-pool");
    for pool in [1, 2] {
        let r = Topic::<PointCloud>::builder("small-pool")
            .namespace(&ns)
            .depth(4)
            .durability(latched(2))
            .max_tail_bytes(1024)
            .loan_pool(pool)
            .open();
        assert!(matches!(r, Err(TopicError::Invalid { .. })), "pool {pool}");
    }
    assert!(!Path::new(&segment_path(&ns, "small-pool")).exists());
    // One chunk more than the history is enough to keep publishing.
    let t = Topic::<PointCloud>::builder("small-pool")
        .namespace(&ns)
        .depth(4)
        .durability(latched(2))
        .max_tail_bytes(1024)
        .loan_pool(3)
        .open()
        .unwrap();
    let mut p = t.publisher().unwrap();
    for seq in 1..=10 {
        let mut header = PointCloud::new(16, true);
        header.stamp_ns = seq;
        let mut sample = p.loan_slice(header.tail_len()).unwrap();
        *sample = header;
        sample.send().unwrap();
    }
}

#[test]
fn the_retained_history_never_makes_reject_or_block_refuse_or_wait() {
    let ns = unique_ns("latched-policy");
    let block = Overflow::Block {
        timeout: Duration::from_millis(20),
    };
    for (name, overflow) in [("reject", Overflow::Reject), ("block", block)] {
        let t = numbered(&ns, name, overflow, DEPTH);
        let mut p = t.publisher().unwrap();
        // No subscriber: the history of DEPTH messages is full after DEPTH
        // sends, and sending on must still never refuse or wait.
        for n in 1..=10 * u64::from(DEPTH) {
            assert!(p.send(Numbered { n }).is_ok(), "{name}: send {n} refused");
        }
        let stats = p.stats();
        assert_eq!((stats.rejected, stats.timed_out), (0, 0), "{name}");
        let mut late = t.subscriber().unwrap();
        let want: Vec<u64> = (9 * u64::from(DEPTH) + 1..=10 * u64::from(DEPTH)).collect();
        assert_eq!(drain(&mut late), want, "{name}");
    }
    // The chunk path: the retained clouds never exhaust the loan pool.
    let t = clouds(&ns, "pool");
    let mut p = t.publisher().unwrap();
    for seq in 1..=100 {
        send_cloud(&mut p, seq);
    }
    assert_eq!(p.stats().pool_exhausted, 0);
    let mut late = t.subscriber().unwrap();
    let got: Vec<u64> = std::iter::from_fn(|| late.try_recv().map(|m| m.stamp_ns)).collect();
    assert_eq!(got, vec![99, 100]);
}

#[test]
fn tools_create_latched_topics_and_their_observers_start_where_asked() {
    use horus::inspect::{open_or_create_topic_durable, CreateError, TopicView};
    let ns = unique_ns("latched-tools");
    // A described type, as `horus play` gets it from a recording.
    let src = numbered(&ns, "src", Overflow::DropOldest, 0);
    let view = TopicView::open(&ns, "src").unwrap();
    let desc = view.description().unwrap();
    let made = open_or_create_topic_durable(&ns, "copy", &desc, &view.qos(), latched(2)).unwrap();
    assert_eq!(made.durability(), latched(2));
    assert!(matches!(
        open_or_create_topic_durable(&ns, "deep", &desc, &view.qos(), latched(DEPTH + 1)),
        Err(CreateError::Qos { .. })
    ));
    // A typed endpoint that leaves durability unset adopts it.
    let copy = Topic::<Numbered>::builder("copy")
        .namespace(&ns)
        .open()
        .unwrap();
    assert_eq!(copy.durability(), latched(2));
    let mut p = copy.publisher().unwrap();
    for n in 1..=3 {
        p.send(Numbered { n }).unwrap();
    }
    let number =
        |m: horus::inspect::RawMessage| u64::from_ne_bytes(m.bytes[..8].try_into().unwrap());
    let mut history = made.observer(false).unwrap();
    let got: Vec<u64> = std::iter::from_fn(|| history.try_recv().map(number)).collect();
    assert_eq!(got, vec![2, 3]);
    let mut oldest = made.observer_at(false, StartAt::Oldest).unwrap();
    let got: Vec<u64> = std::iter::from_fn(|| oldest.try_recv().map(number)).collect();
    assert_eq!(got, vec![1, 2, 3]);
    let mut next = made.observer_at(false, StartAt::Next).unwrap();
    assert!(next.try_recv().is_none());
    drop((history, oldest, next, made, view, src));
}
