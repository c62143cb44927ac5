//! `horus::clean::clean_stale`: segments whose participants all died are
//! removed; a segment any live process uses is never touched.

mod common;

use std::path::Path;

use common::{enter_peer, peer_ns, report, segment_path, unique_ns, Peer};
use horus::clean::{clean_stale, SegmentFate};
use horus::prelude::*;

/// Dispatches peer roles; does nothing in a normal test run.
#[test]
fn peer() {
    let Some((role, _args)) = enter_peer() else {
        return;
    };
    if role == "opened_only" {
        return opened_only();
    }
    assert_eq!(role, "endpoints");
    // A publisher and a subscriber on "orphan", then wait to be killed.
    let t = Topic::<CmdVel>::builder("orphan")
        .namespace(&peer_ns())
        .open()
        .unwrap();
    let _s = t.subscriber_with(WaitMode::BusyPoll).unwrap();
    let _p = t.publisher().unwrap();
    report("ready");
    common::command();
}

/// Peer role: opens topic "unjoined" without an endpoint; on "join" subscribes, on
/// "recv" reports the stamp of the first message it receives.
fn opened_only() {
    let t = Topic::<CmdVel>::builder("unjoined")
        .namespace(&peer_ns())
        .open()
        .unwrap();
    report("opened");
    common::await_command("join");
    let mut s = t.subscriber_with(WaitMode::BusyPoll).unwrap();
    report("subscribed");
    common::await_command("recv");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    let got = loop {
        if let Some(m) = s.try_recv() {
            break m.stamp_ns;
        }
        assert!(std::time::Instant::now() < deadline, "nothing received");
        std::thread::yield_now();
    };
    report(format_args!("got {got}"));
}

/// A live process that opened a topic but has no endpoint on it yet is no member, so
/// `clean` judges the segment unused and removes it. What that process meets afterwards:
/// its first endpoint finds the segment closed, opens the topic's segment again (here the
/// one another process created meanwhile) and joins it; nothing is lost from then on.
#[test]
fn an_opened_topic_whose_segment_clean_removed_rejoins_its_peers_on_first_endpoint() {
    let ns = unique_ns("cleanopened");
    let mut peer = Peer::spawn(&ns, "opened_only", &[]);
    peer.expect("opened");
    let report = clean_stale(&ns).unwrap();
    assert_eq!(report.removed(), 1, "{report:?}");
    assert!(!Path::new(&segment_path(&ns, "unjoined")).exists());

    // Another process (this one) opens the topic afresh: a new segment.
    let t = Topic::<CmdVel>::builder("unjoined")
        .namespace(&ns)
        .open()
        .unwrap();
    let mut p = t.publisher().unwrap();
    peer.tell("join");
    peer.expect("subscribed");
    let report = clean_stale(&ns).unwrap();
    assert_eq!(
        report
            .topics
            .iter()
            .map(|r| r.fate.clone())
            .collect::<Vec<_>>(),
        vec![SegmentFate::Live {
            publishers: 1,
            subscribers: 1
        }]
    );
    p.send(CmdVel::new(7, 0.5, 0.0)).unwrap();
    peer.tell("recv");
    assert_eq!(peer.expect("got"), "7");
    peer.finish();
}

#[test]
fn clean_removes_segments_of_dead_participants_and_keeps_live_ones() {
    let ns = unique_ns("clean");
    let mut peer = Peer::spawn(&ns, "endpoints", &[]);
    peer.expect("ready");
    let live = Topic::<CmdVel>::builder("live")
        .namespace(&ns)
        .open()
        .unwrap();
    let _live_sub = live.subscriber_with(WaitMode::BusyPoll).unwrap();

    // While the peer lives, both stay.
    let report = clean_stale(&ns).unwrap();
    assert_eq!(report.removed(), 0, "{report:?}");
    assert!(Path::new(&segment_path(&ns, "orphan")).exists());

    // Killed: its endpoints never leave, so its segment stays behind...
    peer.kill9();
    assert!(Path::new(&segment_path(&ns, "orphan")).exists());
    // ...until clean removes it. The live one is kept.
    let report = clean_stale(&ns).unwrap();
    let fate = |topic: &str| {
        let path = segment_path(&ns, topic);
        report
            .topics
            .iter()
            .find(|r| r.path == Path::new(&path))
            .map(|r| r.fate.clone())
    };
    assert_eq!(fate("orphan"), Some(SegmentFate::Removed));
    assert_eq!(
        fate("live"),
        Some(SegmentFate::Live {
            publishers: 0,
            subscribers: 1
        })
    );
    assert!(!Path::new(&segment_path(&ns, "orphan")).exists());
    assert!(Path::new(&segment_path(&ns, "live")).exists());

    // A fresh topic of the same name works afterwards.
    let again = Topic::<CmdVel>::builder("orphan")
        .namespace(&ns)
        .open()
        .unwrap();
    let mut s = again.subscriber_with(WaitMode::BusyPoll).unwrap();
    again
        .publisher()
        .unwrap()
        .send(CmdVel::new(1, 0.5, 0.0))
        .unwrap();
    assert_eq!(s.try_recv().unwrap().stamp_ns, 1);
}

#[test]
fn clean_reports_garbage_without_removing_it() {
    let ns = unique_ns("cleangarbage");
    let path = segment_path(&ns, "junk");
    std::fs::write(&path, vec![0xa5u8; 8192]).unwrap();
    let report = clean_stale(&ns).unwrap();
    assert_eq!(report.topics.len(), 1);
    assert!(matches!(report.topics[0].fate, SegmentFate::Unreadable(_)));
    assert!(Path::new(&path).exists());
    std::fs::remove_file(&path).unwrap();
}
