//! Another process truncates a live topic segment (to nothing, or to half
//! its size) under publishers and subscribers running in several processes
//! (this test binary re-run as peers, see `common::Peer`) and in the test
//! process itself. Before horus handled it, every process that had the
//! segment mapped died of SIGBUS. Now: no process dies, every endpoint
//! reports the typed `SegmentLost` error, a sample held across the
//! truncation stays readable (as zeros), and opening the topic again gives a
//! fresh segment under the same name that works.

mod common;

use std::path::Path;
use std::time::Duration;

use common::{await_command, command, enter_peer, peer_ns, report, segment_path, unique_ns, Peer};
use horus::prelude::*;
use horus::{LoanError, RecvError, SendError, TopicError};

horus::message! {
    /// One message of a stream.
    pub struct Tagged: "horus-test/Tagged", version 1 {
        /// Publisher id.
        pub publisher: u64,
        /// 1, 2, 3, … within one publisher's stream.
        pub seq: u64,
    }
}

/// Tail bytes of each cloud.
const TAIL: usize = 48;
/// Publishers wait at most this long for room; never expires in a passing
/// run (the subscribers read all the time).
const BLOCK: Overflow = Overflow::Block {
    timeout: Duration::from_secs(30),
};

fn overflow(name: &str) -> Overflow {
    match name {
        "block" => BLOCK,
        _ => Overflow::DropOldest,
    }
}

fn tagged_topic(ns: &str, overflow: Overflow) -> Topic<Tagged> {
    Topic::<Tagged>::builder("stream")
        .namespace(ns)
        .overflow(overflow)
        .depth(8)
        .max_publishers(2)
        .max_subscribers(4)
        .open()
        .unwrap()
}

fn cloud_topic(ns: &str, overflow: Overflow) -> Topic<PointCloud> {
    Topic::<PointCloud>::builder("stream")
        .namespace(ns)
        .overflow(overflow)
        .depth(4)
        .loan_pool(16)
        .max_tail_bytes(TAIL)
        .max_publishers(2)
        .max_subscribers(4)
        .open()
        .unwrap()
}

/// What one send attempt came to.
enum Sent {
    Ok,
    /// Refused for a reason that has nothing to do with the loss (a full
    /// history under Block/Reject, an exhausted pool): try again.
    Refused,
    Lost,
}

fn of<M>(r: Result<Delivery, SendError<M>>) -> Sent {
    match r {
        Ok(_) => Sent::Ok,
        Err(SendError::SegmentLost(_)) => Sent::Lost,
        Err(_) => Sent::Refused,
    }
}

/// A publisher of either kind.
enum AnyPub {
    Tagged(Publisher<Tagged>),
    Cloud(Publisher<PointCloud>),
}

impl AnyPub {
    fn open(kind: &str, ns: &str, overflow: Overflow) -> (AnyPub, Box<dyn std::any::Any>) {
        match kind {
            "tagged" => {
                let t = tagged_topic(ns, overflow);
                (AnyPub::Tagged(t.publisher().unwrap()), Box::new(t))
            }
            _ => {
                let t = cloud_topic(ns, overflow);
                (AnyPub::Cloud(t.publisher().unwrap()), Box::new(t))
            }
        }
    }

    fn send(&mut self, seq: u64) -> Sent {
        match self {
            AnyPub::Tagged(p) => of(p.send(Tagged { publisher: 1, seq })),
            // The loan path: a loan, filled in place in shared memory.
            AnyPub::Cloud(p) => match p.loan_slice(TAIL) {
                Ok(mut s) => {
                    *s = PointCloud::new(4, false);
                    s.stamp_ns = seq;
                    s.tail_mut().fill(seq as u8);
                    of(s.send())
                }
                Err(LoanError::SegmentLost) => Sent::Lost,
                Err(_) => Sent::Refused,
            },
        }
    }

    fn check(&self) -> Result<(), TopicError> {
        match self {
            AnyPub::Tagged(p) => p.check(),
            AnyPub::Cloud(p) => p.check(),
        }
    }

    fn subscribers(&self) -> u32 {
        match self {
            AnyPub::Tagged(p) => p.subscribers(),
            AnyPub::Cloud(p) => p.subscribers(),
        }
    }
}

/// A subscriber of either kind, and the last sample it received (kept
/// across the truncation: it points into the lost mapping for clouds).
enum AnySub {
    Tagged(Subscriber<Tagged>, Option<Sample<Tagged>>),
    Cloud(Subscriber<PointCloud>, Option<Sample<PointCloud>>),
}

impl AnySub {
    fn open(
        kind: &str,
        ns: &str,
        overflow: Overflow,
        mode: WaitMode,
    ) -> (AnySub, Box<dyn std::any::Any + Send>) {
        match kind {
            "tagged" => {
                let t = tagged_topic(ns, overflow);
                (
                    AnySub::Tagged(t.subscriber_with(mode).unwrap(), None),
                    Box::new(t),
                )
            }
            _ => {
                let t = cloud_topic(ns, overflow);
                (
                    AnySub::Cloud(t.subscriber_with(mode).unwrap(), None),
                    Box::new(t),
                )
            }
        }
    }

    /// `Ok(true)`: a message; `Ok(false)`: none in time.
    fn recv(&mut self, timeout: Duration) -> Result<bool, RecvError> {
        let r = match self {
            AnySub::Tagged(s, held) => s.recv_timeout(timeout).map(|m| *held = Some(m)),
            AnySub::Cloud(s, held) => s.recv_timeout(timeout).map(|m| *held = Some(m)),
        };
        match r {
            Ok(()) => Ok(true),
            Err(RecvError::Timeout(_)) => Ok(false),
            Err(e) => Err(e),
        }
    }

    fn try_recv_is_none(&mut self) -> bool {
        match self {
            AnySub::Tagged(s, _) => s.try_recv().is_none(),
            AnySub::Cloud(s, _) => s.try_recv().is_none(),
        }
    }

    fn check(&self) -> Result<(), TopicError> {
        match self {
            AnySub::Tagged(s, _) => s.check(),
            AnySub::Cloud(s, _) => s.check(),
        }
    }

    /// Reads every byte of the held sample (whatever they now are).
    fn read_held(&self) -> u64 {
        match self {
            AnySub::Tagged(_, held) => held.as_ref().map_or(0, |m| m.seq),
            AnySub::Cloud(_, held) => held.as_ref().map_or(0, |m| {
                m.stamp_ns + m.tail().iter().map(|&b| u64::from(b)).sum::<u64>()
            }),
        }
    }
}

/// Receives until the segment is reported lost; returns how many messages
/// arrived before. Panics (a hang turned into a failure) after a bound.
fn receive_until_lost(sub: &mut AnySub, flowing: impl FnOnce()) -> u64 {
    let mut flowing = Some(flowing);
    let mut got = 0u64;
    for _ in 0..20_000 {
        match sub.recv(Duration::from_millis(20)) {
            Ok(true) => {
                got += 1;
                if let Some(f) = flowing.take() {
                    f();
                }
            }
            Ok(false) => {}
            Err(RecvError::SegmentLost { .. }) => return got,
            Err(e) => panic!("unexpected receive error: {e}"),
        }
    }
    panic!("the subscriber never noticed the truncation");
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
        ("pub", [kind, policy, subs]) => publish(kind, overflow(policy), subs.parse().unwrap()),
        ("sub", [kind, policy, mode]) => {
            let mode = if *mode == "futex" {
                WaitMode::Futex
            } else {
                WaitMode::BusyPoll
            };
            subscribe(kind, overflow(policy), mode)
        }
        ("truncate", [path, cut]) => truncate(path, cut),
        _ => panic!("unknown peer role {role} {args:?}"),
    }
}

/// Publishes until the segment is lost; reports how it noticed; then, told
/// to, reopens the topic and, once `fresh_subs` subscribers joined, sends
/// three messages on the fresh segment.
fn publish(kind: &str, overflow: Overflow, fresh_subs: u32) {
    let ns = peer_ns();
    let (mut p, topic) = AnyPub::open(kind, &ns, overflow);
    report("ready");
    let mut seq = 0u64;
    loop {
        seq += 1;
        match p.send(seq) {
            Sent::Ok | Sent::Refused => {}
            Sent::Lost => break,
        }
        if seq.is_multiple_of(64) {
            // Not flooding a loaded machine: the subscribers keep up.
            std::thread::sleep(Duration::from_micros(200));
        }
    }
    report("lost send");
    assert!(matches!(p.check(), Err(TopicError::SegmentLost { .. })));
    report("lost check");
    drop(p);
    drop(topic);

    await_command("reopen");
    let (mut p, _topic) = AnyPub::open(kind, &ns, overflow);
    while p.subscribers() < fresh_subs {
        std::thread::sleep(Duration::from_millis(1));
    }
    report("reopened");
    // Fewer messages than the history holds: every subscriber (all joined)
    // gets them all, and a Block publisher never waits.
    for seq in 1..=3 {
        assert!(matches!(p.send(seq), Sent::Ok), "send on the fresh segment");
    }
    assert!(p.check().is_ok());
    report("sent");
    command();
}

/// Receives until the segment is lost; reports how it noticed; then, told
/// to, reopens the topic and reports a message from the fresh segment.
fn subscribe(kind: &str, overflow: Overflow, mode: WaitMode) {
    let ns = peer_ns();
    let (mut s, topic) = AnySub::open(kind, &ns, overflow, mode);
    report("ready");
    receive_until_lost(&mut s, || report("flowing"));
    report("lost recv");
    assert!(s.try_recv_is_none());
    assert!(matches!(s.check(), Err(TopicError::SegmentLost { .. })));
    report("lost check");
    // The last sample (for clouds: in place in the lost mapping) is still
    // readable: zeros where the file was cut off.
    report(format!("held {}", s.read_held()));
    drop(s);
    drop(topic);

    await_command("reopen");
    let (mut s, _topic) = AnySub::open(kind, &ns, overflow, mode);
    report("reopened");
    assert_eq!(
        s.recv(common::PEER_PATIENCE),
        Ok(true),
        "no message on the fresh segment"
    );
    assert!(s.check().is_ok());
    report("fresh");
    command();
}

/// Truncates the segment file: to nothing, or to half its size.
fn truncate(path: &str, cut: &str) {
    let file = std::fs::OpenOptions::new().write(true).open(path).unwrap();
    let len = file.metadata().unwrap().len();
    let to = if cut == "half" { len / 2 } else { 0 };
    assert!(len - to >= 4096, "the cut must remove at least a page");
    file.set_len(to).unwrap();
    report("truncated");
}

// ---------------------------------------------------------------- tests

/// Publisher and two subscribers (futex and busy-poll) in other processes,
/// a subscriber in the test process; a fifth process truncates the segment.
fn survive(kind: &str, policy: &str, cut: &str) {
    let ns = unique_ns(&format!("trunc-{kind}-{cut}"));
    let path = segment_path(&ns, "stream");
    let mut subs = [
        Peer::spawn(&ns, "sub", &[kind, policy, "futex"]),
        Peer::spawn(&ns, "sub", &[kind, policy, "poll"]),
    ];
    for s in &mut subs {
        s.expect("ready");
    }
    // Our own subscriber, reading on a thread until the loss.
    let (mut mine, topic) = AnySub::open(kind, &ns, overflow(policy), WaitMode::Futex);
    let (flowing_tx, flowing_rx) = std::sync::mpsc::channel();
    let reader = std::thread::spawn(move || {
        let got = receive_until_lost(&mut mine, move || flowing_tx.send(()).unwrap());
        assert!(mine.try_recv_is_none());
        assert!(matches!(mine.check(), Err(TopicError::SegmentLost { .. })));
        let _ = mine.read_held();
        drop(mine);
        drop(topic);
        got
    });
    let mut publisher = Peer::spawn(&ns, "pub", &[kind, policy, "3"]);
    publisher.expect("ready");
    for s in &mut subs {
        s.expect("flowing");
    }
    flowing_rx
        .recv_timeout(common::PEER_PATIENCE)
        .expect("our subscriber receives");
    assert!(Path::new(&path).exists());

    let mut cutter = Peer::spawn(&ns, "truncate", &[&path, cut]);
    cutter.expect("truncated");
    cutter.finish();

    // Every endpoint reports the typed error; nobody died (checked when
    // each peer exits below).
    publisher.expect("lost send");
    publisher.expect("lost check");
    for s in &mut subs {
        s.expect("lost recv");
        s.expect("lost check");
        s.expect("held");
    }
    assert!(reader.join().unwrap() > 0);
    // The first endpoint that noticed removed the name of the truncated file.
    assert!(
        !Path::new(&path).exists(),
        "{path}: the truncated segment is still named"
    );

    // The same topic name works again, on a fresh segment.
    for s in &mut subs {
        s.tell("reopen");
        s.expect("reopened");
    }
    let (mut mine, topic) = AnySub::open(kind, &ns, overflow(policy), WaitMode::Futex);
    publisher.tell("reopen");
    publisher.expect("reopened");
    publisher.expect("sent");
    for s in &mut subs {
        s.expect("fresh");
    }
    assert_eq!(mine.recv(common::PEER_PATIENCE), Ok(true));
    assert!(mine.check().is_ok());
    drop(mine);
    drop(topic);
    for s in subs {
        s.finish();
    }
    publisher.finish();
    assert!(!Path::new(&path).exists(), "{path} left behind");
}

#[test]
fn truncating_to_zero_under_inline_drop_oldest_endpoints_kills_nobody() {
    survive("tagged", "drop", "zero");
}

#[test]
fn truncating_to_half_under_inline_block_endpoints_kills_nobody() {
    survive("tagged", "block", "half");
}

#[test]
fn truncating_to_half_under_loaned_drop_oldest_endpoints_kills_nobody() {
    survive("cloud", "drop", "half");
}

#[test]
fn truncating_to_zero_under_loaned_block_endpoints_kills_nobody() {
    survive("cloud", "block", "zero");
}

/// In one process: a truncated segment makes every operation of both
/// endpoints fail with the typed error, and a new topic handle of the same
/// name gets a fresh segment.
#[test]
fn every_operation_reports_the_loss_in_process() {
    let ns = unique_ns("trunc-inproc");
    let path = segment_path(&ns, "stream");
    let t = tagged_topic(&ns, BLOCK);
    let mut p = t.publisher().unwrap();
    let mut s = t.subscriber().unwrap();
    p.send(Tagged {
        publisher: 1,
        seq: 1,
    })
    .unwrap();
    assert_eq!(s.recv_timeout(Duration::from_secs(5)).unwrap().seq, 1);
    std::fs::OpenOptions::new()
        .write(true)
        .open(&path)
        .unwrap()
        .set_len(0)
        .unwrap();
    assert!(matches!(s.check(), Err(TopicError::SegmentLost { .. })));
    assert!(!Path::new(&path).exists());
    assert!(s.try_recv().is_none());
    assert!(matches!(
        s.recv_timeout(Duration::from_millis(1)),
        Err(RecvError::SegmentLost { .. })
    ));
    assert!(matches!(
        p.send(Tagged {
            publisher: 1,
            seq: 2
        }),
        Err(SendError::SegmentLost(Tagged { seq: 2, .. }))
    ));
    assert!(matches!(p.loan(), Err(LoanError::SegmentLost)));
    assert!(matches!(p.check(), Err(TopicError::SegmentLost { .. })));
    // A fresh handle, and a new endpoint on the old handle, use a fresh
    // segment; dropping the lost endpoints does not remove its name.
    let fresh = tagged_topic(&ns, BLOCK);
    let mut s2 = fresh.subscriber().unwrap();
    let mut p2 = t.publisher().unwrap();
    drop(p);
    drop(s);
    assert!(Path::new(&path).exists());
    p2.send(Tagged {
        publisher: 2,
        seq: 1,
    })
    .unwrap();
    assert_eq!(
        s2.recv_timeout(Duration::from_secs(5)).unwrap().publisher,
        2
    );
    drop(p2);
    drop(s2);
    drop(t);
    drop(fresh);
    assert!(!Path::new(&path).exists(), "{path} left behind");
}
