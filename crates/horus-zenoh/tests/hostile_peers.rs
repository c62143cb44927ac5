//! What another host in the domain may do, tried by hostile peers (raw Zenoh sessions posing
//! as host `evil`, or bridges with a policy): call a protected service, publish into a topic
//! the policy refuses, flood a bridge with service offers or with descriptions that never
//! come, forge sequence numbers, and stall a `Block` topic by not reading. Each test is named
//! after what broke before the policy and the limits.

mod common;

use std::time::Duration;

use common::{counters, refusals, service_schema, topic_schema, Rig};
use horus_netns::Side;

/// Child processes run this (see common::roles); in the parent it does nothing.
#[test]
fn child_entry() {
    common::child_main();
}

/// A parameter service (`<node>/params`: list, get and *set*) on A: by default no other host
/// may call it. B's bridge does not stand in for it (A offers nothing), and a peer calling
/// A's call key directly gets a refusal, counted under its host name. (Before: any host could
/// set any node's parameters.)
#[test]
fn remote_host_cannot_call_parameter_set_by_default() {
    let Some((rig, a, b)) = common::bridged_hosts("params") else {
        return;
    };
    let svc = [("HZ_SERVICE", "robot/params".to_owned())];
    let server = rig.spawn(Side::A, "server", &svc);
    rig.wait_status(Side::A, "A refuses robot/params to other hosts", |s| {
        s.services
            .iter()
            .any(|v| v.name == "robot/params" && v.not_callable)
    });
    let (id, layout) = service_schema(&rig.namespace(Side::A), "robot/params");
    let mut evil = rig.spawn(
        Side::B,
        "evil_caller",
        &[
            ("HZ_CONNECT", rig.endpoint(Side::A)),
            ("HZ_KEY", "horus/sc/host-a/robot/params".into()),
            ("HZ_SCHEMA_ID", id.to_string()),
            ("HZ_LAYOUT", layout.to_string()),
        ],
    );
    let outcome = evil.result()["outcome"].as_str().unwrap().to_owned();
    assert!(outcome.starts_with("err refused policy"), "{outcome}");
    let sa = rig.wait_status(Side::A, "A counts the refusal under evil", |s| {
        refusals(s, "evil").call_refused >= 1
    });
    assert_eq!(refusals(&sa, "evil").call_refused, 1);
    // B's clients see no server: B never stands in for it.
    let mut c = rig.spawn(
        Side::B,
        "client",
        &[svc[0].clone(), ("HZ_NOWAIT", "1".into())],
    );
    assert_eq!(c.result()["outcomes"][0], "no_server");
    c.finish();
    let sb = rig.status(Side::B).unwrap();
    assert!(
        !sb.services.iter().any(|v| v.name == "robot/params"),
        "{:?}",
        sb.services
    );
    evil.finish();
    server.kill();
    rig.end([a, b]);
}

/// B's policy refuses `base/**` from other hosts: A's offer is refused (counted once, under
/// host-a, and shown on the topic), B declares no want, nothing crosses.
#[test]
fn refused_publish_is_counted_per_host() {
    if common::child_main() {
        return;
    }
    let Some(rig) = Rig::new("enter") else {
        return;
    };
    let a = rig.bridge(Side::A);
    let b = rig.bridge_with(Side::B, "policy:\n  enter: {deny: ['base/**']}\n");
    let mut sub = rig.spawn(Side::B, "sub_cmdvel_for", &[("HZ_MS", "1500".into())]);
    let publ = rig.spawn(Side::A, "pub_cmdvel", &[("HZ_COUNT", "0".into())]);
    let sb = rig.wait_status(Side::B, "B refuses host-a's offer", |s| {
        refusals(s, "host-a").publish_refused >= 1
    });
    let t = sb.topics.iter().find(|t| t.name == "base/cmd_vel").unwrap();
    assert!(
        t.refused
            .iter()
            .any(|r| r.host == "host-a" && r.direction == "enter"),
        "{t:?}"
    );
    assert!(t.receiving_from.is_empty());
    assert_eq!(sub.result()["received"], 0);
    let sb = rig.status(Side::B).unwrap();
    assert_eq!(refusals(&sb, "host-a").publish_refused, 1, "counted once");
    let sa = rig.status(Side::A).unwrap();
    assert!(
        sa.topics.iter().all(|t| t.sending_to.is_empty()),
        "B wants nothing: {:?}",
        sa.topics
    );
    publ.finish();
    rig.end([a, b]);
}

/// A peer offering 200 services (with valid descriptions) to B, whose limits are 50 tokens
/// per host and 8 stand-ins: B stands in for 8, ignores the rest, and counts what it refused.
/// (Before: every offer cost B a 2 s describe on its loop, two segments and a thread.)
#[test]
fn service_offer_flood_is_bounded() {
    if common::child_main() {
        return;
    }
    let Some(rig) = Rig::new("flood") else {
        return;
    };
    let a = rig.bridge(Side::A);
    let b = rig.bridge_with(
        Side::B,
        "limits:\n  max_tokens_per_host: 50\n  max_stand_ins: 8\n",
    );
    let evil = rig.spawn(
        Side::A,
        "evil_offers",
        &[
            ("HZ_CONNECT", rig.endpoint(Side::B)),
            ("HZ_OFFERS", "200".into()),
            ("HZ_DESCRIBE", "answer".into()),
        ],
    );
    let stood_in =
        |s: &horus_zenoh::BridgeStatus| s.services.iter().filter(|v| v.served_by == "evil").count();
    let sb = rig.wait_status(Side::B, "B stands in up to its limit", |s| {
        stood_in(s) == 8 && refusals(s, "evil").over_limit >= 151
    });
    eprintln!("B's refusals: {:?}", sb.refusals);
    // Settled: still 8 (a further look, after more scans).
    std::thread::sleep(Duration::from_millis(500));
    let sb = rig.status(Side::B).unwrap();
    assert_eq!(stood_in(&sb), 8);
    let peer = sb.peers.iter().find(|p| p.host == "evil").unwrap();
    assert!(
        peer.services.len() < 50,
        "{} offers kept",
        peer.services.len()
    );
    evil.finish();
    rig.end([a, b]);
}

/// B's policy keeps `base/**` on B (`leave`): host-a's want is refused (counted once, under
/// host-a, shown on the topic), B offers nothing of it, nothing crosses.
#[test]
fn refused_want_is_counted_per_host_and_nothing_leaves() {
    if common::child_main() {
        return;
    }
    let Some(rig) = Rig::new("leave") else {
        return;
    };
    let a = rig.bridge(Side::A);
    let b = rig.bridge_with(Side::B, "policy:\n  leave: {deny: ['base/**']}\n");
    let mut sub = rig.spawn(Side::A, "sub_cmdvel_for", &[("HZ_MS", "1500".into())]);
    let publ = rig.spawn(Side::B, "pub_cmdvel", &[("HZ_COUNT", "0".into())]);
    let sb = rig.wait_status(Side::B, "B refuses host-a's want", |s| {
        refusals(s, "host-a").want_refused >= 1
    });
    let t = sb.topics.iter().find(|t| t.name == "base/cmd_vel").unwrap();
    assert!(
        t.refused
            .iter()
            .any(|r| r.host == "host-a" && r.direction == "leave"),
        "{t:?}"
    );
    assert!(t.sending_to.is_empty());
    assert_eq!(sub.result()["received"], 0);
    let sa = rig.status(Side::A).unwrap();
    assert!(
        sa.peers
            .iter()
            .all(|p| !p.offers.iter().any(|o| o == "base/cmd_vel")),
        "B offers nothing of it: {:?}",
        sa.peers
    );
    assert_eq!(
        refusals(&rig.status(Side::B).unwrap(), "host-a").want_refused,
        1
    );
    publ.finish();
    rig.end([a, b]);
}

/// B stands in for host-a's `math/add`; then a host named `aaa` (smaller than `host-a`)
/// offers `math/add` too, and `robot/params`: B keeps host-a as the server (calls still
/// answered by A) and refuses to stand in for `aaa`'s parameter service. (Before: the
/// smallest host name won — `aaa` took `math/add` over, and B served `robot/params` for it.)
#[test]
fn another_host_cannot_take_over_a_stood_in_service() {
    let Some((rig, a, b)) = common::bridged_hosts("takeover") else {
        return;
    };
    let server = rig.spawn(Side::A, "server", &[]);
    let served_by = |s: &horus_zenoh::BridgeStatus, name: &str| {
        s.services
            .iter()
            .find(|v| v.name == name)
            .map(|v| v.served_by.clone())
    };
    rig.wait_status(Side::B, "B stands in for host-a", |s| {
        served_by(s, "math/add").as_deref() == Some("host-a")
    });
    let evil = rig.spawn(
        Side::A,
        "evil_offers",
        &[
            ("HZ_CONNECT", rig.endpoint(Side::B)),
            ("HZ_EVIL", "aaa".into()),
            ("HZ_OFFER", "math/add,robot/params".into()),
            ("HZ_DESCRIBE", "answer".into()),
        ],
    );
    rig.wait_status(
        Side::B,
        "B refuses to stand in for aaa's robot/params",
        |s| refusals(s, "aaa").stand_in_refused >= 1,
    );
    // Several scans later: still host-a.
    std::thread::sleep(Duration::from_millis(500));
    let sb = rig.status(Side::B).unwrap();
    assert_eq!(served_by(&sb, "math/add").as_deref(), Some("host-a"));
    assert_ne!(served_by(&sb, "robot/params").as_deref(), Some("aaa"));
    let mut c = rig.spawn(Side::B, "client", &[("HZ_CALLS", "5".into())]);
    let r = c.result();
    assert!(
        r["outcomes"].as_array().unwrap().iter().all(|o| o == "ok"),
        "{r}"
    );
    c.finish();
    evil.finish();
    server.kill();
    rig.end([a, b]);
}

/// A peer offering 40 services whose descriptions never come: B's loop goes on (the
/// descriptions are asked for off it), so a topic from A still reaches B's subscriber at
/// once. (Before: 40 × 2 s on B's loop, during which nothing new crossed.)
#[test]
fn describe_never_blocks_main_loop() {
    let Some((rig, a, b)) = common::bridged_hosts("describe") else {
        return;
    };
    let evil = rig.spawn(
        Side::A,
        "evil_offers",
        &[
            ("HZ_CONNECT", rig.endpoint(Side::B)),
            ("HZ_OFFERS", "40".into()),
            ("HZ_DESCRIBE", "hang".into()),
        ],
    );
    rig.wait_status(Side::B, "B sees the offers", |s| {
        s.peers
            .iter()
            .any(|p| p.host == "evil" && p.services.len() == 40)
    });
    let n = [("HZ_COUNT", "200".to_owned())];
    let mut sub = rig.spawn(Side::B, "sub_cmdvel", &n);
    let mut publ = rig.spawn(Side::A, "pub_cmdvel", &n);
    assert_eq!(sub.result()["received"], 200);
    let _ = publ.result();
    publ.finish();
    evil.finish();
    rig.end([a, b]);
}

/// A peer that offers `base/cmd_vel` sends sequence numbers 0, 1, 2, then 10^12, then 3, 4:
/// B reports no loss (the jump is `suspect`, twice: the stream's and the publisher's).
/// (Before: wire_lost and source_lost jumped by about 10^12.)
#[test]
fn forged_sequence_jump_from_a_peer_reports_no_false_loss() {
    let Some((rig, a, b)) = common::bridged_hosts("forge") else {
        return;
    };
    let sub = rig.spawn(Side::B, "sub_cmdvel_for", &[("HZ_MS", "60000".into())]);
    let (id, layout) = topic_schema(&rig.namespace(Side::B), "base/cmd_vel");
    let mut evil = rig.spawn(
        Side::A,
        "forger",
        &[
            ("HZ_CONNECT", rig.endpoint(Side::B)),
            ("HZ_SCHEMA_ID", id.to_string()),
            ("HZ_LAYOUT", layout.to_string()),
            ("HZ_SEQS", "0,1,2,1000000000000,3,4".into()),
        ],
    );
    rig.wait_status(Side::B, "B takes base/cmd_vel from evil", |s| {
        s.topics
            .iter()
            .any(|t| t.name == "base/cmd_vel" && t.receiving_from.iter().any(|h| h == "evil"))
    });
    evil.say("go");
    assert_eq!(evil.result()["put"], 6);
    let sb = rig.wait_status(Side::B, "B receives the six", |s| {
        counters(s, "base/cmd_vel").received >= 6
    });
    let c = counters(&sb, "base/cmd_vel");
    eprintln!("B after the forger: {c:?}");
    assert_eq!((c.wire_lost, c.source_lost), (0, 0), "no false loss");
    assert_eq!(c.suspect, 2);
    evil.finish();
    sub.kill();
    rig.end([a, b]);
}

/// A peer wants a `Block` topic (500 ms timeout) of A, 64 KiB at 1 kHz, and stops reading:
/// A's bridge drains the topic itself once a put has waited `stall_after` (200 ms), so no send
/// of A's publisher times out and none waits anywhere near the timeout more than once; the
/// stall is counted on the topic and under the peer's name. (Before: after the network
/// buffers filled, every send waited out the timeout until Zenoh closed the link — and the
/// peer reconnected and did it again.) Prints what it cost A's publisher.
#[test]
fn stalled_remote_reader_holds_block_publisher_at_most_timeout() {
    let Some((rig, a, b)) = common::bridged_hosts("stall") else {
        return;
    };
    let topic = "stall/blob";
    let mut publ = rig.spawn(
        Side::A,
        "pub_blob",
        &[
            ("HZ_TOPIC", topic.into()),
            ("HZ_COUNT", "2000".into()),
            ("HZ_BLOCK_MS", "500".into()),
        ],
    );
    let (id, layout) = topic_schema(&rig.namespace(Side::A), topic);
    let evil = rig.spawn(
        Side::B,
        "stalled_reader",
        &[
            ("HZ_CONNECT", rig.endpoint(Side::A)),
            ("HZ_TOPIC", topic.into()),
            ("HZ_SCHEMA_ID", id.to_string()),
            ("HZ_LAYOUT", layout.to_string()),
        ],
    );
    let r = publ.result();
    eprintln!("A's publisher with a stalled remote reader: {r}");
    let sa = rig.wait_status(Side::A, "A counts the stall", |s| {
        counters(s, topic).stalls >= 1 && refusals(s, "evil").stalls >= 1
    });
    eprintln!(
        "A's bridge: {:?}, refusals {:?}",
        counters(&sa, topic),
        sa.refusals
    );
    assert_eq!(r["timed_out"], 0, "{r}");
    assert!(r["max_wait_us"].as_u64().unwrap() < 500_000, "{r}");
    assert!(r["waits_over_half_timeout"].as_u64().unwrap() <= 1, "{r}");
    publ.finish();
    evil.kill();
    rig.end([a, b]);
}
