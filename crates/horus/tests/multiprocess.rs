//! Endpoints in separate OS processes (this test binary re-run as peers, see
//! `common::Peer`): delivery without loss under `Block` for 1:1, 1:N and N:M,
//! inline and by loan; every overflow policy on a full ring, with each end
//! seeing the other's counters; the segment is gone once every process has
//! exited normally.

mod common;

use std::path::Path;
use std::time::Duration;

use common::{
    command, enter_peer, peer_ns, report, segment_path, unique_ns, wait_until, Peer, PEER_PATIENCE,
};
use horus::prelude::*;

horus::message! {
    /// One message of a stream: who sent it and its number in that stream.
    pub struct Tagged: "horus-test/Tagged", version 1 {
        /// Publisher id (0, 1, 2, …).
        pub publisher: u64,
        /// 1, 2, 3, … within one publisher's stream.
        pub seq: u64,
    }
}

fn tagged(publisher: u64, seq: u64) -> Tagged {
    Tagged { publisher, seq }
}

/// History per publisher in the delivery tests: small, so that publishers
/// really wait for the slowest subscriber.
const DEPTH: u32 = 4;
/// Messages per publisher in the delivery tests.
const N: u64 = 20_000;
/// Long enough never to expire on a loaded machine: a timeout is a failure.
const BLOCK: Overflow = Overflow::Block {
    timeout: Duration::from_secs(30),
};
/// Points per cloud in the loaned variant (xyz: 12 B each).
const CLOUD_POINTS: u32 = 64;

/// The stream topic; every process opens it with exactly these settings.
fn stream_topic(ns: &str, name: &str) -> Topic<Tagged> {
    Topic::<Tagged>::builder(name)
        .namespace(ns)
        .overflow(BLOCK)
        .depth(DEPTH)
        .max_publishers(4)
        .max_subscribers(4)
        .open()
        .unwrap()
}

/// The loaned variant of the stream topic.
fn cloud_topic(ns: &str, name: &str) -> Topic<PointCloud> {
    Topic::<PointCloud>::builder(name)
        .namespace(ns)
        .overflow(BLOCK)
        .depth(DEPTH)
        .max_publishers(4)
        .max_subscribers(4)
        .max_tail_bytes(4096)
        .open()
        .unwrap()
}

/// Byte `i` of the tail of cloud `seq` from `publisher`.
fn cloud_byte(publisher: u64, seq: u64, i: usize) -> u8 {
    (seq as u8).wrapping_mul(31).wrapping_add(i as u8) ^ publisher as u8
}

/// Checks that `seq` is the next message of `publisher`'s stream.
fn in_order(last: &mut [u64], publisher: u64, seq: u64) {
    let who = publisher as usize;
    assert!(who < last.len(), "unknown publisher {publisher}");
    assert_eq!(
        seq,
        last[who] + 1,
        "publisher {publisher}: lost or reordered"
    );
    last[who] = seq;
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
        ("sub", [kind, topic, pubs, n]) => {
            sub(kind, topic, pubs.parse().unwrap(), n.parse().unwrap())
        }
        ("pub", [kind, topic, id, n, subs]) => publish(
            kind,
            topic,
            id.parse().unwrap(),
            n.parse().unwrap(),
            subs.parse().unwrap(),
        ),
        ("lazy_sub", [policy, topic]) => lazy_sub(policy, topic),
        _ => panic!("unknown peer role {role} {args:?}"),
    }
}

/// Subscribes, reports `ready`, receives `pubs × n` messages checking each
/// publisher's stream is complete and in order, reports `done <count>`.
fn sub(kind: &str, topic: &str, pubs: usize, n: u64) {
    let ns = peer_ns();
    let mut last = vec![0u64; pubs];
    let total = pubs as u64 * n;
    let (stats, extra) = match kind {
        "tagged" => {
            let t = stream_topic(&ns, topic);
            let mut s = t.subscriber().unwrap();
            report("ready");
            for _ in 0..total {
                let m = s.recv_timeout(PEER_PATIENCE).expect("stream stalled");
                in_order(&mut last, m.publisher, m.seq);
            }
            (s.stats(), s.try_recv().is_some())
        }
        "cloud" => {
            let t = cloud_topic(&ns, topic);
            let mut s = t.subscriber().unwrap();
            report("ready");
            for _ in 0..total {
                let m = s.recv_timeout(PEER_PATIENCE).expect("stream stalled");
                assert!(m.is_zero_copy());
                let (who, seq) = (u64::from(m.seq), m.stamp_ns);
                in_order(&mut last, who, seq);
                assert_eq!(m.points(m.tail()).unwrap().len(), CLOUD_POINTS as usize);
                for (i, &b) in m.tail().iter().enumerate() {
                    assert_eq!(b, cloud_byte(who, seq, i), "cloud {who}/{seq} byte {i}");
                }
            }
            (s.stats(), s.try_recv().is_some())
        }
        _ => panic!("unknown kind {kind}"),
    };
    assert!(last.iter().all(|&l| l == n), "incomplete: {last:?}");
    assert!(!extra, "more messages than were sent");
    assert_eq!((stats.overrun, stats.malformed), (0, 0), "{stats:?}");
    report(format!("done {}", stats.received));
}

/// Waits for `subs` subscribers, sends `n` messages as publisher `id`
/// (none may time out), reports `sent <count>`.
fn publish(kind: &str, topic: &str, id: u64, n: u64, subs: u32) {
    let ns = peer_ns();
    let sent = match kind {
        "tagged" => {
            let t = stream_topic(&ns, topic);
            let mut p = t.publisher().unwrap();
            assert!(
                wait_until(PEER_PATIENCE.as_secs(), || p.subscribers() >= subs),
                "subscribers never joined"
            );
            for seq in 1..=n {
                if let Err(e) = p.send(tagged(id, seq)) {
                    panic!("publisher {id} message {seq}: {e}");
                }
            }
            p.stats().sent
        }
        "cloud" => {
            let t = cloud_topic(&ns, topic);
            let mut p = t.publisher().unwrap();
            assert!(
                wait_until(PEER_PATIENCE.as_secs(), || p.subscribers() >= subs),
                "subscribers never joined"
            );
            let mut header = PointCloud::new(CLOUD_POINTS, false);
            header.seq = id as u32;
            for seq in 1..=n {
                // The pool holds the history plus one sample per subscriber
                // plus this loan with room to spare: a loan never fails.
                let mut m = p.loan_slice(header.tail_len()).unwrap();
                *m = header;
                m.stamp_ns = seq;
                for (i, b) in m.tail_mut().iter_mut().enumerate() {
                    *b = cloud_byte(id, seq, i);
                }
                if let Err(e) = m.send() {
                    panic!("publisher {id} cloud {seq}: {e}");
                }
            }
            p.stats().sent
        }
        _ => panic!("unknown kind {kind}"),
    };
    report(format!("sent {sent}"));
}

fn policy(name: &str) -> Overflow {
    match name {
        "drop-oldest" => Overflow::DropOldest,
        "reject" => Overflow::Reject,
        "block" => Overflow::Block {
            timeout: Duration::from_millis(50),
        },
        _ => panic!("unknown policy {name}"),
    }
}

/// The topic of the overflow-policy tests.
fn policy_topic(ns: &str, name: &str, overflow: &str) -> Topic<Tagged> {
    Topic::<Tagged>::builder(name)
        .namespace(ns)
        .overflow(policy(overflow))
        .depth(DEPTH)
        .open()
        .unwrap()
}

/// Subscribes and reads only when told to (`drain`), reporting what it got
/// and the counters it sees: its own overrun and the topic's refusals and
/// losses (the other process's counters).
fn lazy_sub(overflow: &str, topic: &str) {
    let t = policy_topic(&peer_ns(), topic, overflow);
    let mut s = t.subscriber_with(WaitMode::BusyPoll).unwrap();
    report("ready");
    // Anything but `drain` (`exit`, or stdin closed) ends the peer.
    while command() == "drain" {
        let got: Vec<String> = std::iter::from_fn(|| s.try_recv())
            .map(|m| m.seq.to_string())
            .collect();
        let ts = s.topic_stats();
        report(format!(
            "got [{}] overrun {} refused {} lost {}",
            got.join(" "),
            s.stats().overrun,
            ts.refused(),
            ts.lost()
        ));
    }
}

// ---------------------------------------------------------------- delivery

/// `subscribers` processes receive every message of `publishers` processes,
/// in order per publisher; then every process exits and the segment is gone.
fn deliver(kind: &str, publishers: u64, subscribers: u32) {
    let ns = unique_ns(&format!("{kind}{publishers}x{subscribers}"));
    let (pubs, n) = (publishers.to_string(), N.to_string());
    let mut subs: Vec<Peer> = (0..subscribers)
        .map(|_| Peer::spawn(&ns, "sub", &[kind, "stream", &pubs, &n]))
        .collect();
    // Subscribers join before anything is sent (publishers also wait for
    // them): a subscriber sees what is published after it joined.
    for s in &mut subs {
        s.expect("ready");
    }
    let subs_arg = subscribers.to_string();
    let mut senders: Vec<Peer> = (0..publishers)
        .map(|id| {
            let id = id.to_string();
            Peer::spawn(&ns, "pub", &[kind, "stream", &id, &n, &subs_arg])
        })
        .collect();
    for p in &mut senders {
        assert_eq!(p.expect("sent"), n);
    }
    for s in &mut subs {
        assert_eq!(s.expect("done"), (publishers * N).to_string());
    }
    senders.into_iter().for_each(|p| drop(p.finish()));
    subs.into_iter().for_each(|s| drop(s.finish()));
    let path = segment_path(&ns, "stream");
    assert!(!Path::new(&path).exists(), "{path} left behind");
}

#[test]
fn one_to_one_delivers_everything_in_order_under_block() {
    deliver("tagged", 1, 1);
}

#[test]
fn one_to_three_delivers_everything_in_order_under_block() {
    deliver("tagged", 1, 3);
}

#[test]
fn three_to_two_delivers_everything_in_order_under_block() {
    deliver("tagged", 3, 2);
}

#[test]
fn one_to_three_loaned_point_clouds_arrive_intact_under_block() {
    deliver("cloud", 1, 3);
}

// ---------------------------------------------------------------- overflow

/// Expected `drain` report of `lazy_sub`.
fn drained(seqs: std::ops::RangeInclusive<u64>, overrun: u64, refused: u64, lost: u64) -> String {
    let got: Vec<String> = seqs.map(|s| s.to_string()).collect();
    format!(
        "[{}] overrun {overrun} refused {refused} lost {lost}",
        got.join(" ")
    )
}

#[test]
fn drop_oldest_across_processes_keeps_the_newest_and_both_ends_count_the_loss() {
    let ns = unique_ns("dropoldest");
    let t = policy_topic(&ns, "full", "drop-oldest");
    let mut reader = Peer::spawn(&ns, "lazy_sub", &["drop-oldest", "full"]);
    reader.expect("ready");
    let mut p = t.publisher().unwrap();
    for seq in 1..=100 {
        assert_eq!(p.send(tagged(0, seq)), Ok(Delivery { subscribers: 1 }));
    }
    reader.tell("drain");
    assert_eq!(reader.expect("got"), drained(97..=100, 96, 0, 96));
    // The publisher sees the other process's loss.
    assert_eq!(p.topic_stats().lost(), 96);
    assert_eq!(p.topic_stats().refused(), 0);
    reader.tell("exit");
    reader.finish();
    drop(p);
    assert!(!Path::new(&segment_path(&ns, "full")).exists());
}

#[test]
fn reject_across_processes_hands_the_message_back_and_the_reader_sees_the_count() {
    let ns = unique_ns("reject");
    let t = policy_topic(&ns, "full", "reject");
    let mut reader = Peer::spawn(&ns, "lazy_sub", &["reject", "full"]);
    reader.expect("ready");
    let mut p = t.publisher().unwrap();
    for seq in 1..=4 {
        p.send(tagged(0, seq)).unwrap();
    }
    assert_eq!(p.send(tagged(0, 5)), Err(SendError::Full(tagged(0, 5))));
    reader.tell("drain");
    assert_eq!(reader.expect("got"), drained(1..=4, 0, 1, 0));
    // The reader made room: the refused message goes through now.
    for seq in 5..=8 {
        p.send(tagged(0, seq)).unwrap();
    }
    assert_eq!(p.send(tagged(0, 9)), Err(SendError::Full(tagged(0, 9))));
    reader.tell("drain");
    assert_eq!(reader.expect("got"), drained(5..=8, 0, 2, 0));
    assert_eq!(p.stats().rejected, 2);
    reader.tell("exit");
    reader.finish();
}

#[test]
fn block_across_processes_times_out_then_proceeds_once_the_reader_reads() {
    let ns = unique_ns("block");
    let t = policy_topic(&ns, "full", "block");
    let mut reader = Peer::spawn(&ns, "lazy_sub", &["block", "full"]);
    reader.expect("ready");
    let mut p = t.publisher().unwrap();
    for seq in 1..=4 {
        p.send(tagged(0, seq)).unwrap();
    }
    let timeout = Duration::from_millis(50);
    assert_eq!(
        p.send(tagged(0, 5)),
        Err(SendError::Timeout(tagged(0, 5), timeout))
    );
    reader.tell("drain");
    assert_eq!(reader.expect("got"), drained(1..=4, 0, 1, 0));
    for seq in 5..=8 {
        p.send(tagged(0, seq)).unwrap();
    }
    reader.tell("drain");
    assert_eq!(reader.expect("got"), drained(5..=8, 0, 1, 0));
    assert_eq!(p.stats().timed_out, 1);
    reader.tell("exit");
    reader.finish();
}

// ---------------------------------------------------------------- clean exit

#[test]
fn segment_is_removed_once_every_process_exits_normally() {
    let ns = unique_ns("cleanexit");
    let path = segment_path(&ns, "stream");
    let mut reader = Peer::spawn(&ns, "sub", &["tagged", "stream", "1", "100"]);
    reader.expect("ready");
    assert!(Path::new(&path).exists());
    let mut writer = Peer::spawn(&ns, "pub", &["tagged", "stream", "0", "100", "1"]);
    assert_eq!(writer.expect("sent"), "100");
    assert_eq!(reader.expect("done"), "100");
    writer.finish();
    reader.finish();
    assert!(!Path::new(&path).exists(), "{path} left behind");
}
