//! kill -9 of a peer process (this test binary re-run, see `common::Peer`)
//! in the middle of its work: the survivors keep working, never block
//! forever, and get back what the dead process held (its place, its loans,
//! the chunks its samples pinned, its futex registration).

mod common;

use std::path::Path;
use std::sync::mpsc;
use std::time::Duration;

use common::{
    command, enter_peer, peer_ns, report, segment_path, unique_ns, wait_until, Peer, PEER_PATIENCE,
};
use horus::prelude::*;
use horus::{LoanError, RecvError};

horus::message! {
    /// One message of a stream: who sent it and its number in that stream.
    pub struct Tagged: "horus-test/Tagged", version 1 {
        /// Publisher id.
        pub publisher: u64,
        /// 1, 2, 3, … within one publisher's stream.
        pub seq: u64,
    }
}

/// Ring depth of the streaming topic.
const STREAM_DEPTH: u32 = 16;

/// A sensor-style topic with a single publisher place: a new publisher can
/// only join once the dead one's place has been reclaimed.
fn stream_topic(ns: &str) -> Topic<Tagged> {
    Topic::<Tagged>::builder("stream")
        .namespace(ns)
        .overflow(Overflow::DropOldest)
        .depth(STREAM_DEPTH)
        .max_publishers(1)
        .open()
        .unwrap()
}

/// Loaned point clouds; `overflow`, `pool` and the single publisher place
/// vary per test. Every process of a test opens it with the same settings.
fn cloud_topic(ns: &str, overflow: Overflow, pool: u32) -> Topic<PointCloud> {
    Topic::<PointCloud>::builder("cloud")
        .namespace(ns)
        .overflow(overflow)
        .depth(4)
        .loan_pool(pool)
        .max_tail_bytes(1024)
        .max_publishers(1)
        .open()
        .unwrap()
}

const BLOCK: Overflow = Overflow::Block {
    timeout: Duration::from_secs(30),
};

// ---------------------------------------------------------------- peers

/// Dispatches peer roles; does nothing in a normal test run.
#[test]
fn peer() {
    let Some((role, args)) = enter_peer() else {
        return;
    };
    let a: Vec<&str> = args.iter().map(String::as_str).collect();
    match (role.as_str(), a.as_slice()) {
        ("stream", [id, count]) => stream(id.parse().unwrap(), count.parse().unwrap()),
        ("hold_loan", [pool]) => hold_loan(pool.parse().unwrap()),
        ("hoard", [overflow, pool, hold]) => {
            hoard(overflow, pool.parse().unwrap(), hold.parse().unwrap())
        }
        ("sleeper", []) => sleeper(),
        _ => panic!("unknown peer role {role} {args:?}"),
    }
}

/// Publishes `Tagged { id, 1.. }` once a subscriber is there: `count`
/// messages then waits for the test, or (count 0) until killed.
fn stream(id: u64, count: u64) {
    let t = stream_topic(&peer_ns());
    let mut p = t.publisher().unwrap();
    assert!(wait_until(PEER_PATIENCE.as_secs(), || p.subscribers() >= 1));
    report("ready");
    let mut seq = 0;
    while count == 0 || seq < count {
        seq += 1;
        p.send(Tagged { publisher: id, seq }).unwrap();
    }
    report(format!("sent {seq}"));
    command();
}

/// Sends two clouds, then takes a loan and keeps it until killed.
fn hold_loan(pool: u32) {
    let t = cloud_topic(&peer_ns(), Overflow::DropOldest, pool);
    let mut p = t.publisher().unwrap();
    for _ in 0..2 {
        p.send_with_tail(&PointCloud::new(1, false), &[7; 12])
            .unwrap();
    }
    let loan = p.loan_slice(12).unwrap();
    report("holding");
    command();
    drop(loan);
}

/// Subscribes, receives `hold` clouds and keeps their samples (pinning
/// their chunks) until killed.
fn hoard(overflow: &str, pool: u32, hold: usize) {
    let overflow = match overflow {
        "block" => BLOCK,
        _ => Overflow::DropOldest,
    };
    let t = cloud_topic(&peer_ns(), overflow, pool);
    let mut s = t.subscriber_with(WaitMode::BusyPoll).unwrap();
    report("ready");
    let held: Vec<_> = (0..hold)
        .map(|_| s.recv_timeout(PEER_PATIENCE).expect("cloud"))
        .collect();
    let seqs: Vec<String> = held.iter().map(|m| m.stamp_ns.to_string()).collect();
    report(format!("holding {}", seqs.join(" ")));
    command();
    drop(held);
}

/// A futex subscriber that reports each message and goes back to sleep.
fn sleeper() {
    let t = stream_topic(&peer_ns());
    let mut s = t.subscriber_with(WaitMode::Futex).unwrap();
    s.set_spin(0);
    report("ready");
    loop {
        let m = s.recv();
        report(format!("got {}", m.seq));
    }
}

// ---------------------------------------------------------------- publisher killed

#[test]
fn killed_publisher_leaves_a_working_subscriber_and_a_new_publisher_takes_over() {
    let ns = unique_ns("killpub");
    let t = stream_topic(&ns);
    let mut s = t.subscriber().unwrap();
    let mut first = Peer::spawn(&ns, "stream", &["1", "0"]);
    first.expect("ready");
    // Follow a good part of the stream (DropOldest: overruns allowed, order kept).
    let mut last = 0;
    while last < 2_000 {
        let m = s.recv_timeout(PEER_PATIENCE).expect("the stream flows");
        assert_eq!(m.publisher, 1);
        assert!(m.seq > last, "out of order: {} after {last}", m.seq);
        last = m.seq;
    }
    first.kill9();

    // What the dead publisher committed is still delivered, in order; then
    // nothing: no crash, no hang, no torn or repeated message.
    let mut drained = 0;
    while let Some(m) = s.try_recv() {
        assert_eq!(m.publisher, 1);
        assert!(m.seq > last, "out of order: {} after {last}", m.seq);
        last = m.seq;
        drained += 1;
        assert!(drained <= STREAM_DEPTH, "more than a ring of leftovers");
    }
    assert!(s.try_recv().is_none());
    assert_eq!(
        s.recv_timeout(Duration::from_millis(20)).err(),
        Some(RecvError::Timeout(Duration::from_millis(20)))
    );
    assert_eq!(s.stats().malformed, 0);

    // A new endpoint reclaims the dead publisher's place.
    let mut probe = t.subscriber_with(WaitMode::BusyPoll).unwrap();
    assert_eq!(s.topic_stats().publishers(), 0);
    assert_eq!(s.publishers(), 0);

    // A publisher in another process takes over the topic (its only place).
    let overrun = s.stats().overrun;
    let mut second = Peer::spawn(&ns, "stream", &["2", "10"]);
    second.expect("ready");
    assert_eq!(second.expect("sent"), "10");
    assert_eq!(s.topic_stats().publishers(), 1);
    for seq in 1..=10 {
        let m = s.recv_timeout(PEER_PATIENCE).expect("new publisher");
        assert_eq!((m.publisher, m.seq), (2, seq));
    }
    assert!(s.try_recv().is_none());
    // The probe joined after the kill. Had the first publisher died between
    // committing its last slot and publishing its head, the probe would
    // start at that slot: skip such a leftover (at most one).
    let mut m = probe.recv_timeout(PEER_PATIENCE).expect("new publisher");
    if m.publisher == 1 {
        m = probe.recv_timeout(PEER_PATIENCE).expect("new publisher");
    }
    assert_eq!((m.publisher, m.seq), (2, 1));
    for seq in 2..=10 {
        let m = probe.recv_timeout(PEER_PATIENCE).expect("new publisher");
        assert_eq!((m.publisher, m.seq), (2, seq));
    }
    assert!(probe.try_recv().is_none());
    assert_eq!(
        s.stats().overrun,
        overrun,
        "nothing lost after the takeover"
    );
    second.tell("exit");
    second.finish();
    drop((s, probe));
    let path = segment_path(&ns, "stream");
    assert!(!Path::new(&path).exists(), "{path} left behind");
}

#[test]
fn publisher_killed_holding_a_loan_leaks_no_chunk() {
    const POOL: u32 = 6;
    let ns = unique_ns("killloan");
    let t = cloud_topic(&ns, Overflow::DropOldest, POOL);
    let mut dead = Peer::spawn(&ns, "hold_loan", &[&POOL.to_string()]);
    dead.expect("holding");
    dead.kill9();

    // The topic has one publisher place: joining reclaims the dead one's,
    // including the chunk of its unsent loan.
    let mut p = t.publisher().unwrap();
    let mut s = t.subscriber().unwrap();
    // Pin every chunk of the pool with a sample: each loan needs one chunk
    // nobody holds, so the last one fails if a single chunk leaked.
    let mut held = Vec::new();
    for i in 0..POOL {
        let mut m = p
            .loan_slice(12)
            .unwrap_or_else(|e| panic!("loan {} of {POOL}: {e}", i + 1));
        *m = PointCloud::new(1, false);
        m.stamp_ns = u64::from(i);
        m.send().unwrap();
        held.push(s.try_recv().expect("delivered"));
    }
    assert_eq!(p.loan_slice(12).err(), Some(LoanError::PoolExhausted));
    held.clear();
    assert!(p.loan_slice(12).is_ok());
}

// ---------------------------------------------------------------- subscriber killed

/// Sends cloud `seq` by loan; panics on any error.
fn send_cloud(p: &mut Publisher<PointCloud>, seq: u64) {
    let mut m = p
        .loan_slice(12)
        .unwrap_or_else(|e| panic!("cloud {seq}: {e}"));
    *m = PointCloud::new(1, false);
    m.stamp_ns = seq;
    if let Err(e) = m.send() {
        panic!("cloud {seq}: {e}");
    }
}

/// Every chunk of `p`'s pool can be loaned and pinned at once (none leaked).
fn assert_whole_pool_usable(t: &Topic<PointCloud>, p: &mut Publisher<PointCloud>, pool: u32) {
    let mut s = t.subscriber_with(WaitMode::BusyPoll).unwrap();
    let mut held = Vec::new();
    for i in 0..u64::from(pool) {
        send_cloud(p, 1_000 + i);
        held.push(s.try_recv().expect("delivered"));
    }
    assert_eq!(p.loan_slice(12).err(), Some(LoanError::PoolExhausted));
}

/// Waits until the sending thread reports send number `upto` (sends are reported in order).
fn wait_for_sends(sent: &mpsc::Receiver<u64>, upto: u64, what: &str) {
    let mut done = 0;
    while done < upto {
        done = sent.recv_timeout(PEER_PATIENCE).expect(what);
    }
}

/// How the hoarding subscriber dies in [`subscriber_killed_while_blocking_the_publisher`].
enum Death {
    /// SIGKILL, then reaped at once.
    Reaped,
    /// SIGKILL, left a zombie (state `Z`) while the publisher works.
    Zombie,
}

/// A `Block` publisher waits on a subscriber that read 4 loaned clouds and
/// stopped; the subscriber is killed (`death`). The publisher must reclaim
/// it and complete every send without a timeout, and get every chunk back.
fn subscriber_killed_while_blocking_the_publisher(tag: &str, death: Death) {
    // Pool: the dead subscriber's 4 samples + the 4-deep history + a loan,
    // with room to spare, so the publisher blocks on the ring, not the pool.
    const POOL: u32 = 12;
    const TOTAL: u64 = 20;
    let ns = unique_ns(tag);
    let t = cloud_topic(&ns, BLOCK, POOL);
    let mut hoarder = Peer::spawn(&ns, "hoard", &["block", &POOL.to_string(), "4"]);
    hoarder.expect("ready");

    let (tx, sent) = mpsc::channel();
    let t2 = t.clone();
    let sender = std::thread::spawn(move || {
        let mut p = t2.publisher().unwrap();
        for seq in 1..=TOTAL {
            send_cloud(&mut p, seq);
            tx.send(seq).unwrap();
        }
        p
    });
    assert_eq!(hoarder.expect("holding"), "1 2 3 4");
    // The hoarder read 4 and stopped: the publisher can get 4 more into
    // the history, then waits for a reader that will never read.
    wait_for_sends(&sent, 8, "sends up to the ring");
    assert!(wait_until(PEER_PATIENCE.as_secs(), || t
        .stats()
        .snapshot
        .publishers[0]
        .head
        == 8));
    assert_eq!(sent.try_recv().ok(), None, "the 9th send waits for room");
    let zombie = match death {
        Death::Reaped => {
            hoarder.kill9();
            None
        }
        Death::Zombie => Some(hoarder.kill9_unreaped()),
    };
    // The waiting publisher reclaims the dead subscriber and completes.
    wait_for_sends(&sent, TOTAL, "blocked send completes after the kill");
    let mut p = sender.join().unwrap();
    assert_eq!(p.stats().timed_out, 0);
    assert_eq!(
        t.stats().subscribers(),
        0,
        "the dead subscriber's place was reclaimed"
    );
    // Every chunk the dead subscriber pinned came back.
    assert_whole_pool_usable(&t, &mut p, POOL);
    if let Some(mut zombie) = zombie {
        zombie.wait().unwrap();
    }
}

#[test]
fn killed_subscriber_holding_samples_does_not_block_the_publisher_forever() {
    subscriber_killed_while_blocking_the_publisher("killsub", Death::Reaped);
}

/// The raw publisher (what the network bridge publishes a remote host's messages through) on
/// a `Block` topic whose only subscriber read 4 clouds, stopped and was killed: it reclaims
/// the dead place while it waits and completes every send, none timed out. (Before, every
/// send waited out the topic's Block timeout: one dead subscriber stalled a host's traffic.)
#[test]
fn raw_publisher_reclaims_a_killed_subscriber_blocking_it() {
    const POOL: u32 = 12;
    const TOTAL: u64 = 20;
    let ns = unique_ns("rawkill");
    let t = cloud_topic(&ns, BLOCK, POOL);
    let mut hoarder = Peer::spawn(&ns, "hoard", &["block", &POOL.to_string(), "4"]);
    hoarder.expect("ready");
    let view = horus::inspect::TopicView::open(&ns, "cloud").unwrap();
    let size = std::mem::size_of::<PointCloud>();
    let mut p = view.publisher(size).unwrap();
    let (tx, sent) = mpsc::channel();
    let sender = std::thread::spawn(move || {
        for seq in 1..=TOTAL {
            let mut cloud = PointCloud::new(1, false);
            cloud.stamp_ns = seq;
            let mut bytes = bytemuck::bytes_of(&cloud).to_vec();
            bytes.extend_from_slice(&[7; 12]);
            p.send(&bytes)
                .unwrap_or_else(|e| panic!("raw send {seq}: {e}"));
            tx.send(seq).unwrap();
        }
        p
    });
    assert_eq!(hoarder.expect("holding"), "1 2 3 4");
    wait_for_sends(&sent, 8, "sends up to the ring");
    assert_eq!(sent.try_recv().ok(), None, "the 9th send waits for room");
    hoarder.kill9();
    wait_for_sends(&sent, TOTAL, "blocked raw send completes after the kill");
    let p = sender.join().unwrap();
    assert_eq!(
        t.stats().subscribers(),
        0,
        "the dead subscriber's place was reclaimed"
    );
    assert_eq!(t.stats().snapshot.publishers[0].timed_out, 0);
    drop(p);
}

/// Regression: a killed subscriber that its parent had not reaped yet (a
/// zombie) passed `kill(pid, 0)` and the start-time check, so it counted as
/// alive: it kept its place and its pinned chunks, and a `Block` publisher
/// waited on its cursor until every send timed out.
#[test]
fn unreaped_zombie_subscriber_is_reclaimed_and_does_not_block_the_publisher() {
    subscriber_killed_while_blocking_the_publisher("zombiesub", Death::Zombie);
}

/// Regression: chunks pinned by a subscriber that died were only given back
/// when some process happened to join the topic (or a `Block` publisher was
/// waiting for room); a publisher loaning with the pool exhausted by them
/// got `PoolExhausted` forever.
#[test]
fn loan_reclaims_chunks_pinned_by_a_dead_subscriber() {
    // The dead subscriber's 4 samples + 4 unread in the history = the pool.
    const POOL: u32 = 8;
    let ns = unique_ns("killsubpool");
    let t = cloud_topic(&ns, Overflow::DropOldest, POOL);
    let mut hoarder = Peer::spawn(&ns, "hoard", &["drop-oldest", &POOL.to_string(), "4"]);
    hoarder.expect("ready");
    let mut p = t.publisher().unwrap();
    for seq in 1..=4 {
        send_cloud(&mut p, seq);
    }
    assert_eq!(hoarder.expect("holding"), "1 2 3 4");
    for seq in 5..=8 {
        send_cloud(&mut p, seq);
    }
    assert_eq!(p.loan_slice(12).err(), Some(LoanError::PoolExhausted));
    hoarder.kill9();
    // No other endpoint joins: the publisher alone must find the dead
    // subscriber and get its chunks back.
    assert!(
        wait_until(PEER_PATIENCE.as_secs(), || p.loan_slice(12).is_ok()),
        "chunks pinned by the dead subscriber never came back"
    );
    assert_eq!(t.stats().subscribers(), 0);
    assert_whole_pool_usable(&t, &mut p, POOL);
}

#[test]
fn subscriber_killed_asleep_in_recv_leaves_publishers_working_and_is_unregistered() {
    let ns = unique_ns("killsleeper");
    let t = stream_topic(&ns);
    let mut p = t.publisher().unwrap();
    let mut sleeper = Peer::spawn(&ns, "sleeper", &[]);
    sleeper.expect("ready");
    let asleep = || t.stats().snapshot.sleeping_subscribers == 1;
    assert!(wait_until(PEER_PATIENCE.as_secs(), asleep));
    // A send wakes it across processes; it goes back to sleep.
    p.send(Tagged {
        publisher: 0,
        seq: 1,
    })
    .unwrap();
    assert_eq!(sleeper.expect("got"), "1");
    assert!(wait_until(PEER_PATIENCE.as_secs(), asleep));
    sleeper.kill9();

    // Killed asleep, it stays registered as a sleeper until reclaimed:
    // sends keep succeeding meanwhile (each paying for a futex wake).
    for seq in 2..=1_000 {
        assert!(p.send(Tagged { publisher: 0, seq }).is_ok());
    }
    // Any new endpoint reclaims the dead place and its futex registration:
    // publishers stop paying for a wake-up nobody waits for.
    let mut s = t.subscriber_with(WaitMode::BusyPoll).unwrap();
    let stats = t.stats();
    assert_eq!(stats.subscribers(), 1);
    assert_eq!(
        (
            stats.snapshot.blocking_subscribers,
            stats.snapshot.sleeping_subscribers
        ),
        (0, 0)
    );
    p.send(Tagged {
        publisher: 0,
        seq: 1_001,
    })
    .unwrap();
    assert_eq!(s.try_recv().map(|m| m.seq), Some(1_001));
    drop((p, s));
    assert!(!Path::new(&segment_path(&ns, "stream")).exists());
}
