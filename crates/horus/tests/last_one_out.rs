//! The last live member of a topic unlinks its segment, however the others
//! left: killed with SIGKILL, or killed while reclaiming a dead member's place.
//! (Peers are this test binary re-run, see `common::Peer`.)

mod common;

use std::os::unix::fs::FileExt;
use std::path::Path;

use common::{command, enter_peer, peer_ns, report, segment_path, unique_ns, Peer};
use horus::prelude::*;

horus::message! {
    /// One number.
    pub struct Tick: "horus-test/Tick", version 1 {
        /// Its value.
        pub n: u64,
    }
}

fn topic(ns: &str) -> Topic<Tick> {
    Topic::<Tick>::builder("ticks")
        .namespace(ns)
        .overflow(Overflow::DropOldest)
        .depth(8)
        .max_publishers(4)
        .max_subscribers(4)
        .open()
        .unwrap()
}

/// Dispatches peer roles; does nothing in a normal test run.
#[test]
fn peer() {
    let Some((role, args)) = enter_peer() else {
        return;
    };
    match (role.as_str(), args.as_slice()) {
        ("member", [kind]) => member(kind),
        ("dies_reclaiming", [place]) => dies_reclaiming(place.parse().unwrap()),
        _ => panic!("unknown peer role {role} {args:?}"),
    }
}

/// Joins the topic as a publisher (`pub`) or subscriber (`sub`) and waits
/// to be killed.
fn member(kind: &str) {
    let t = topic(&peer_ns());
    let p = (kind == "pub").then(|| t.publisher().unwrap());
    let s = (kind == "sub").then(|| t.subscriber().unwrap());
    report("ready");
    command();
    drop((p, s));
}

/// What a reclaimer killed right after its CAS leaves: subscriber place
/// `place` (whose owner died) marked as being reclaimed by this process.
/// Reports, then waits to be killed.
fn dies_reclaiming(place: usize) {
    let ns = peer_ns();
    let name = horus_shm::name::segment_name(&ns, "t", "ticks").unwrap();
    let chan = horus_shm::Channel::open_existing(&name, None).unwrap();
    let at = chan.layout().sub_record(place);
    let me = horus_shm::ProcessId::current().token();
    let file = std::fs::OpenOptions::new()
        .write(true)
        .open(format!("/dev/shm{name}"))
        .unwrap();
    file.write_at(&horus_shm::place::reclaiming(me).to_ne_bytes(), at as u64)
        .unwrap();
    report("marked");
    command();
}

#[test]
fn last_survivor_unlinks_the_topic_after_members_were_killed() {
    let ns = unique_ns("lastout");
    let path = segment_path(&ns, "ticks");
    let t = topic(&ns);
    let mut p = t.publisher().unwrap();
    let mut peers: Vec<Peer> = ["pub", "sub", "sub"]
        .iter()
        .map(|kind| Peer::spawn(&ns, "member", &[kind]))
        .collect();
    for peer in &mut peers {
        peer.expect("ready");
    }
    p.send(Tick { n: 1 }).unwrap();
    for peer in &mut peers {
        peer.kill9();
    }
    // The survivor leaves normally, as on SIGTERM: its endpoints, then its topic.
    drop(p);
    drop(t);
    assert!(!Path::new(&path).exists(), "{path} left behind");
}

#[test]
fn last_survivor_unlinks_the_topic_after_a_reclaimer_was_killed_mid_reclaim() {
    let ns = unique_ns("lastout-reclaimer");
    let path = segment_path(&ns, "ticks");
    let t = topic(&ns);
    let p = t.publisher().unwrap();
    let mut sub = Peer::spawn(&ns, "member", &["sub"]);
    sub.expect("ready");
    sub.kill9();
    // The dead subscriber had the first subscriber place; a reclaimer takes
    // it for cleanup and is killed before it finishes.
    let mut reclaimer = Peer::spawn(&ns, "dies_reclaiming", &["0"]);
    reclaimer.expect("marked");
    reclaimer.kill9();
    drop(p);
    drop(t);
    assert!(!Path::new(&path).exists(), "{path} left behind");
}
