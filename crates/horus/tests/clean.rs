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
