//! A host that joins a latched topic later receives its latched messages whatever the order in
//! which the other host's publisher starts, this host's bridge starts and this host's
//! subscriber opens (network namespaces, each with its bridge; every endpoint a process).
//!
//! A subscriber that opens after its bridge has seen the latched offer names no durability:
//! the bridge has created the topic as the offering host has it (`latched_copy`), and the
//! subscriber adopts it. One that opens before (no offer seen yet) names the durability, as
//! it must on one host too (there, a latched publisher cannot open a topic a subscriber
//! created volatile).

mod common;

use horus_netns::Side;
use horus_zenoh::{BridgeStatus, TopicIssue};
use serde_json::json;

/// Child processes run this (see common::roles); in the parent it does nothing.
#[test]
fn child_entry() {
    common::child_main();
}

const TOPIC: &str = "map/static";

#[derive(Clone, Copy, Debug, PartialEq)]
enum Step {
    /// Host A's latched publisher starts (and publishes 0..5, the last 3 latched).
    Publisher,
    /// Host B's bridge starts (A's runs from the start).
    Bridge,
    /// Host B's subscriber opens.
    Subscriber,
}

fn copy_of(s: &BridgeStatus) -> Option<&str> {
    s.topics
        .iter()
        .find(|t| t.name == TOPIC)
        .and_then(|t| t.latched_copy_of.as_deref())
}

/// Runs the three steps in `order`, then checks what B's subscriber got: the latched 2, 3, 4,
/// then 5 live, and a later subscriber on B the last 3 (3, 4, 5).
fn join_in_order(tag: &str, order: [Step; 3]) {
    if common::child_main() {
        return;
    }
    let Some(rig) = common::Rig::new(tag) else {
        return;
    };
    let a = rig.bridge(Side::A);
    let (mut b, mut publ, mut sub) = (None, None, None);
    for step in order {
        match step {
            Step::Publisher => publ = Some(rig.spawn(Side::A, "pub_latched_on_cue", &[])),
            Step::Bridge => b = Some(rig.bridge(Side::B)),
            Step::Subscriber => {
                let after_offer = publ.is_some() && b.is_some();
                let env = if after_offer {
                    // The bridge creates the topic latched once it has the offer: waited for
                    // (a state, not a time), then the subscriber asks for no durability.
                    rig.wait_status(Side::B, "the latched topic created on B", |s| {
                        copy_of(s) == Some("host-a")
                    });
                    vec![("HZ_LATCHED", "0".to_owned())]
                } else {
                    Vec::new()
                };
                sub = Some(rig.spawn(Side::B, "sub_latched_until", &env));
            }
        }
    }
    let (Some(b), Some(mut publ), Some(mut sub)) = (b, publ, sub) else {
        unreachable!("every step ran");
    };
    sub.wait_line("got 4");
    publ.say("5");
    sub.wait_line("got 5");
    sub.say("late");
    let got = sub.result();
    assert_eq!(got["got"], json!([2, 3, 4, 5]), "{order:?}: {got}");
    assert_eq!(got["late"], json!([3, 4, 5]), "{order:?}: {got}");
    assert_eq!(got["durability"], "transient-local (3)", "{order:?}: {got}");
    let s = rig.status(Side::B).expect("B's status");
    let mismatch = s
        .topics
        .iter()
        .flat_map(|t| &t.issues)
        .find(|i| matches!(i, TopicIssue::DurabilityMismatch { .. }));
    assert!(mismatch.is_none(), "{order:?}: {mismatch:?}");
    publ.finish();
    sub.finish();
    if copy_of(&s).is_some() {
        // The offer gone (A's publisher left), the copy goes: nothing of it left on B.
        rig.wait_status(Side::B, "the copy removed", |s| copy_of(s).is_none());
        let left = horus::inspect::TopicView::open(&rig.namespace(Side::B), TOPIC);
        assert!(left.is_err(), "{order:?}: the topic is left on B");
    }
    rig.end([a, b]);
}

#[test]
fn subscriber_opening_after_the_offer_without_a_durability_gets_the_latched_messages() {
    // Before: B's subscriber created the topic volatile, got the history only while it was
    // the first, a later one nothing (late = []), and B reported DurabilityMismatch.
    join_in_order("jopbs", [Step::Publisher, Step::Bridge, Step::Subscriber]);
}

#[test]
fn subscriber_opening_after_a_bridge_that_saw_the_publisher_start_gets_the_latched_messages() {
    join_in_order("jobps", [Step::Bridge, Step::Publisher, Step::Subscriber]);
}

#[test]
fn subscriber_opening_before_its_bridge_starts_gets_the_latched_messages() {
    join_in_order("jopsb", [Step::Publisher, Step::Subscriber, Step::Bridge]);
}

#[test]
fn subscriber_opening_first_then_publisher_then_bridge_gets_the_latched_messages() {
    join_in_order("jospb", [Step::Subscriber, Step::Publisher, Step::Bridge]);
}

#[test]
fn subscriber_opening_before_the_publisher_starts_gets_the_latched_messages() {
    join_in_order("jobsp", [Step::Bridge, Step::Subscriber, Step::Publisher]);
}

#[test]
fn subscriber_opening_first_then_bridge_then_publisher_gets_the_latched_messages() {
    join_in_order("josbp", [Step::Subscriber, Step::Bridge, Step::Publisher]);
}
