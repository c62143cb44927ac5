//! Another host's latched offers take at most `limits.max_latched_copy_bytes` of this host's
//! shared memory (network namespaces, each with its bridge; every endpoint a process): the
//! topics beyond are not created here, counted as `over_limit` for the offering host and
//! reported on each topic, and other topics keep crossing.

mod common;

use common::refusals;
use horus::inspect::TopicView;
use horus_netns::Side;
use horus_zenoh::{BridgeStatus, TopicIssue};

/// Child processes run this (see common::roles); in the parent it does nothing.
#[test]
fn child_entry() {
    common::child_main();
}

/// Latched topics host A offers (`pub_latched_many`): `map/part/0..TOPICS`.
const TOPICS: usize = 4;

fn part(i: usize) -> String {
    format!("map/part/{i}")
}

/// Parts host B's bridge created for host A.
fn copies(s: &BridgeStatus) -> usize {
    s.topics
        .iter()
        .filter(|t| {
            t.name.starts_with("map/part/") && t.latched_copy_of.as_deref() == Some("host-a")
        })
        .count()
}

/// Parts reported as not created for the limit.
fn over_limit_topics(s: &BridgeStatus) -> usize {
    s.topics
        .iter()
        .filter(|t| {
            t.name.starts_with("map/part/")
                && t.issues.iter().any(|i| {
                    matches!(i, TopicIssue::Local { reason, .. }
                        if reason.contains("limits.max_latched_copy_bytes"))
                })
        })
        .count()
}

#[test]
fn latched_offers_beyond_max_latched_copy_bytes_are_not_created_and_counted_per_host() {
    if common::child_main() {
        return;
    }
    let Some(rig) = common::Rig::new("lclimit") else {
        return;
    };
    let a = rig.bridge(Side::A);
    let parts = rig.spawn(
        Side::A,
        "pub_latched_many",
        &[("HZ_TOPICS", TOPICS.to_string())],
    );
    // What one copy is charged (its rings and chunk pools, as topic_shape computes it from
    // the QoS A's bridge sends): room for two and a half.
    let q = TopicView::open(&rig.namespace(Side::A), &part(0))
        .expect("A's part")
        .qos();
    let one = u64::from(q.max_publishers)
        * (u64::from(q.chunks_per_publisher) * q.chunk_bytes
            + u64::from(q.depth) * (u64::from(q.inline_bytes) + 64));
    let limit = 2 * one + one / 2;
    let b = rig.bridge_with(
        Side::B,
        &format!("limits:\n  max_latched_copy_bytes: {limit}\n"),
    );
    let s = rig.wait_status(Side::B, "two copies, the rest refused", |s| {
        copies(s) == 2
            && over_limit_topics(s) == TOPICS - 2
            && refusals(s, "host-a").over_limit >= (TOPICS - 2) as u64
    });
    // Nothing beyond the limit exists on B.
    let on_b = (0..TOPICS)
        .filter(|i| TopicView::open(&rig.namespace(Side::B), &part(*i)).is_ok())
        .count();
    assert_eq!(on_b, 2, "{s:#?}");
    // Still two (the refused ones retried, refused again): no copy past the limit later.
    let s = rig.wait_status(Side::B, "refused again on retry", |later| {
        refusals(later, "host-a").over_limit > refusals(&s, "host-a").over_limit
    });
    assert_eq!(copies(&s), 2, "{s:#?}");

    // Other topics keep crossing.
    let probe = [
        ("HZ_COUNT", "50".to_owned()),
        ("HZ_TOPIC", "probe/cmd_vel".to_owned()),
    ];
    let mut sub = rig.spawn(Side::B, "sub_cmdvel", &probe);
    let publ = rig.spawn(Side::A, "pub_cmdvel", &probe);
    let got = sub.result();
    assert_eq!(got["received"], 50, "{got}");
    assert_eq!(got["missing"], 0, "{got}");
    publ.finish();
    sub.finish();
    parts.finish();
    rig.wait_status(Side::B, "the copies removed", |s| copies(s) == 0);
    rig.end([a, b]);
}
