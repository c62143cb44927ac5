//! Latched (transient-local) topics across hosts (network namespaces, each with its bridge):
//! the durability travels with the offer, and every host that starts wanting the topic asks
//! the sending bridge for the latched history once, then receives live, with no duplicate —
//! also on a host that already had it, and across a restart of the sending bridge.

mod common;

use horus_netns::Side;
use horus_zenoh::TopicIssue;
use serde_json::json;

use common::third_host::ThirdHost;

/// Child processes run this (see common::roles); in the parent it does nothing.
#[test]
fn child_entry() {
    common::child_main();
}

const TOPIC: &str = "map/static";

#[test]
fn a_host_that_subscribes_later_receives_the_latched_messages_then_live() {
    let Some((rig, a, b)) = common::bridged_hosts("latched") else {
        return;
    };
    // A publishes 0..5 (the last 3, 2..5, latched) before B wants the topic.
    let mut publ = rig.spawn(Side::A, "pub_latched", &[]);
    let mut sub = rig.spawn(Side::B, "sub_latched", &[]);
    let got = sub.result();
    let sent = publ.result();
    eprintln!("sent {sent} got {got}");
    assert_eq!(got["first"], json!([2, 3, 4, 5, 6]), "{got}");
    assert_eq!(got["second"], json!([4, 5, 6]), "{got}");
    assert_eq!(got["durability"], "transient-local (3)");
    publ.finish();
    sub.finish();
    rig.end([a, b]);
}

#[test]
fn a_volatile_topic_on_the_receiving_host_gets_the_history_and_the_mismatch_is_reported() {
    let Some((rig, a, b)) = common::bridged_hosts("latvol") else {
        return;
    };
    // B's subscriber creates the topic without a durability, before A offers it (after, B's
    // bridge would have created it latched: latched_join_orders): volatile.
    let volatile = [("HZ_LATCHED", "0".to_owned())];
    let mut sub = rig.spawn(Side::B, "sub_latched_until", &volatile);
    let mut publ = rig.spawn(Side::A, "pub_latched_on_cue", &[]);
    sub.wait_line("got 4");
    publ.say("5");
    sub.wait_line("got 5");
    let s = rig.wait_status(Side::B, "the durability mismatch reported", |s| {
        s.topics.iter().any(|t| {
            t.name == TOPIC
                && t.issues.iter().any(|i| {
                    matches!(i, TopicIssue::DurabilityMismatch { host, .. } if host == "host-a")
                })
        })
    });
    sub.say("late");
    let got = sub.result();
    assert_eq!(got["got"], json!([2, 3, 4, 5]), "{got}");
    assert_eq!(
        got["late"],
        json!([]),
        "a volatile topic keeps nothing for later subscribers: {got}"
    );
    assert_eq!(got["durability"], "volatile");
    let c = common::counters(&s, TOPIC);
    assert_eq!(c.history_published, 3, "{c:?}");
    publ.finish();
    sub.finish();
    rig.end([a, b]);
}

#[test]
fn a_third_host_that_starts_wanting_a_flowing_topic_gets_the_history_once_and_the_second_no_duplicate(
) {
    if common::child_main() {
        return;
    }
    let Some(rig) = common::Rig::new("lat3") else {
        return;
    };
    // A listens on every address: B and the third host C (linked to A only) dial it.
    let a = rig.spawn(
        Side::A,
        "bridge",
        &[
            ("HZ_HOST", "host-a".into()),
            ("HZ_LISTEN", "tcp/0.0.0.0:7447".into()),
            (
                "HZ_CONNECT",
                format!("tcp/{}:7447", rig.hosts.host(Side::B).addr()),
            ),
            ("HZ_CONFIG", String::new()),
        ],
    );
    let b = rig.bridge(Side::B);
    let third = ThirdHost::linked_to(&rig, Side::A, "lt3");
    let c = third.bridge();
    let mut publ = rig.spawn(Side::A, "pub_latched_on_cue", &[]);
    let mut sub_b = rig.spawn(Side::B, "sub_latched_until", &[]);
    sub_b.wait_line("got 4");
    publ.say("5");
    sub_b.wait_line("got 5");
    // The topic flows to B; C starts wanting it: the last 3 (3, 4, 5), then live.
    let mut sub_c = third.spawn("sub_latched_until", &[]);
    sub_c.wait_line("got 5");
    publ.say("6");
    publ.say("7");
    sub_b.wait_line("got 7");
    sub_c.wait_line("got 7");
    sub_b.say("late");
    sub_c.say("late");
    let (got_b, got_c) = (sub_b.result(), sub_c.result());
    assert_eq!(got_b["got"], json!([2, 3, 4, 5, 6, 7]), "B: {got_b}");
    assert_eq!(got_c["got"], json!([3, 4, 5, 6, 7]), "C: {got_c}");
    assert_eq!(got_b["late"], json!([5, 6, 7]), "B: {got_b}");
    assert_eq!(got_c["late"], json!([5, 6, 7]), "C: {got_c}");
    // 3 for B, 3 for C (the status is rewritten every 250 ms: waited for).
    rig.wait_status(Side::A, "6 history messages served", |s| {
        common::counters(s, TOPIC).history_served == 6
    });
    publ.finish();
    sub_b.finish();
    sub_c.finish();
    c.finish();
    third.assert_clean();
    drop(third);
    rig.end([a, b]);
}

#[test]
fn restarting_the_sending_bridge_brings_no_duplicate_and_keeps_the_latest_depth_for_later_subscribers(
) {
    let Some((rig, a, b)) = common::bridged_hosts("latrst") else {
        return;
    };
    // Keeps the last 2 (N honoured: 3, 4 of 0..5).
    let two = [("HZ_LATCHED", "2".to_owned())];
    let mut publ = rig.spawn(Side::A, "pub_latched_on_cue", &two);
    let mut sub = rig.spawn(Side::B, "sub_latched_until", &two);
    sub.wait_line("got 4");
    a.finish();
    rig.wait_status(Side::B, "host-a gone", |s| {
        !s.peers.iter().any(|p| p.host == "host-a")
    });
    let a = rig.bridge(Side::A);
    // B asks the restarted bridge for the history again and recognises both messages.
    let s = rig.wait_status(Side::B, "the history asked again", |s| {
        common::counters(s, TOPIC).history_duplicates >= 2
    });
    publ.say("5");
    sub.wait_line("got 5");
    sub.say("late");
    let got = sub.result();
    assert_eq!(got["got"], json!([3, 4, 5]), "{got} {s:#?}");
    assert_eq!(got["late"], json!([4, 5]), "{got}");
    assert_eq!(got["durability"], "transient-local (2)");
    publ.finish();
    sub.finish();
    rig.end([a, b]);
}
