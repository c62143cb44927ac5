//! Topics across two hosts (network namespaces joined by a veth pair), each with its bridge:
//! lossless under `Block` (also over an impaired link), 1 MiB messages, a bridge killed and
//! restarted, a subscriber killed holding its ring full, a schema mismatch reported at both
//! ends, discovery by multicast.

mod common;

use std::time::{Duration, Instant};

use common::{counters, Rig};
use horus_netns::Side;

/// Child processes run this (see common::roles); in the parent it does nothing.
#[test]
fn child_entry() {
    common::child_main();
}

/// CmdVel at 1 kHz and 1 MiB clouds, A → B, `Block`: everything arrives, in order, and both
/// bridges' counters agree.
fn stream_both(rig: &Rig, cmd_count: u64, cloud_count: u64) {
    let sub = rig.spawn(
        Side::B,
        "sub_cmdvel",
        &[("HZ_COUNT", cmd_count.to_string())],
    );
    let csub = rig.spawn(
        Side::B,
        "sub_cloud",
        &[("HZ_COUNT", cloud_count.to_string())],
    );
    let publ = rig.spawn(
        Side::A,
        "pub_cmdvel",
        &[("HZ_COUNT", cmd_count.to_string())],
    );
    let cpub = rig.spawn(
        Side::A,
        "pub_cloud",
        &[("HZ_COUNT", cloud_count.to_string())],
    );
    let (mut sub, mut csub, mut publ, mut cpub) = (sub, csub, publ, cpub);
    let got = sub.result();
    let cgot = csub.result();
    let sent = publ.result();
    let csent = cpub.result();
    eprintln!("cmd_vel: sent {sent} received {got}; clouds: sent {csent} received {cgot}");
    assert_eq!(got["received"], cmd_count, "every CmdVel arrives");
    assert_eq!(got["missing"], 0);
    assert_eq!(got["out_of_order"], 0);
    assert_eq!(sent["refused"], 0);
    assert_eq!(cgot["received"], cloud_count, "every cloud arrives");
    assert_eq!(cgot["missing"], 0);
    assert_eq!(cgot["corrupt"], 0);
    // Counters reconcile: what A read it sent, what A sent B received, nothing lost.
    for topic in ["base/cmd_vel", "lidar/points"] {
        let want = if topic == "base/cmd_vel" {
            cmd_count
        } else {
            cloud_count
        };
        let a = rig.wait_status(Side::A, "A's counters settle", |s| {
            counters(s, topic).sent >= want
        });
        let b = rig.wait_status(Side::B, "B's counters settle", |s| {
            counters(s, topic).published >= want
        });
        let (a, b) = (counters(&a, topic), counters(&b, topic));
        eprintln!("{topic}: A {a:?}\n{topic}: B {b:?}");
        assert_eq!(a.read, a.sent + a.send_failed);
        assert_eq!(a.send_failed, 0);
        assert_eq!(b.received, a.sent);
        assert_eq!(b.wire_lost, 0);
        assert_eq!(b.source_lost, 0);
        assert_eq!(b.published, b.received);
    }
    publ.finish();
    cpub.finish();
}

#[test]
fn cmdvel_and_clouds_cross_without_loss_under_block() {
    let Some((rig, a, b)) = common::bridged_hosts("lossless") else {
        return;
    };
    // Discovery with addresses: a subscriber on B and a publisher on A appear; how long until
    // the first message arrives (printed; tests assert no time).
    let started = Instant::now();
    let probe = [
        ("HZ_COUNT", "1".into()),
        ("HZ_TOPIC", "probe/cmd_vel".into()),
    ];
    let mut probe_sub = rig.spawn(Side::B, "sub_cmdvel", &probe);
    let probe_pub = rig.spawn(Side::A, "pub_cmdvel", &probe);
    assert_eq!(probe_sub.result()["received"], 1);
    eprintln!(
        "discovery: a message from a new publisher on A reached a new subscriber on B {:?} \
         after both were started",
        started.elapsed()
    );
    probe_pub.finish();
    stream_both(&rig, 2000, 20);
    rig.end([a, b]);
}

#[test]
fn impaired_link_stays_lossless_and_ordered() {
    if common::child_main() {
        return;
    }
    let Some(rig) = Rig::new("impair") else {
        return;
    };
    // 1 % of packets dropped each way, and A's side capped at 100 Mbit/s.
    rig.hosts
        .host(Side::A)
        .impair_drop(1)
        .expect("nftables drop");
    rig.hosts
        .host(Side::B)
        .impair_drop(1)
        .expect("nftables drop");
    rig.hosts.host(Side::A).limit_rate(100).expect("tbf");
    // Lossless under impairment is the subject here, not the stall policy (a remote reader
    // that holds a Block publisher longer than `stall_after` cuts the topic to Drop; its own
    // test is in hostile_peers.rs). Retransmissions over this link, on a loaded 2-core
    // machine, held the publisher for 176 ms and crossed the 200 ms default twice in a
    // `make test` (752 of 1000 CmdVel arrived), so the policy is set far out of the way.
    let out_of_the_way = "limits:\n  stall_after_ms: 60000\n";
    let a = rig.bridge_with(Side::A, out_of_the_way);
    let b = rig.bridge_with(Side::B, out_of_the_way);
    stream_both(&rig, 1000, 10);
    rig.end([a, b]);
}

/// A slow link is not a stalled reader. A's side is capped at 10 Mbit/s, so once the network
/// buffers are full each 1 MiB put of A's bridge lasts about 0.8 s — four times `stall_after`
/// (200 ms), well below `stalled_reader_after` (2 s). A's bridge drains the ring while each
/// such put lasts, keeping the newest cloud for the next put: the last cloud arrives, no stall
/// is counted and the topic is never cut off, and every cloud drained is counted at both ends
/// (`stall_dropped` at A, `source_lost` at B). (Before: the first put that lasted 200 ms was a
/// stall, the topic was sent with `Drop` for 10 s, and the clouds Zenoh dropped meanwhile —
/// the last one among them — never arrived: multi_host's "no horus message for 20 s".)
#[test]
fn slow_link_is_not_a_stalled_reader_and_the_last_message_crosses() {
    let Some((rig, a, b)) = common::bridged_hosts("slowlink") else {
        return;
    };
    rig.hosts.host(Side::A).limit_rate(10).expect("tbf");
    let count = 20u64;
    let mut sub = rig.spawn(Side::B, "sub_cloud", &[("HZ_COUNT", count.to_string())]);
    let mut publ = rig.spawn(
        Side::A,
        "pub_cloud",
        &[
            ("HZ_COUNT", count.to_string()),
            ("HZ_PERIOD_MS", "20".into()),
        ],
    );
    let got = sub.result();
    let sent = publ.result();
    eprintln!("clouds over 10 Mbit/s: sent {sent} received {got}");
    assert_eq!(got["last"], count, "the last cloud crossed");
    assert_eq!(got["corrupt"], 0);
    assert_eq!(sent["refused"], 0);
    let topic = "lidar/points";
    let sa = rig.wait_status(Side::A, "A's counters settle", |s| {
        let c = counters(s, topic);
        c.read == count && c.read == c.sent + c.send_failed
    });
    let ca = counters(&sa, topic);
    let sb = rig.wait_status(Side::B, "B's counters settle", |s| {
        counters(s, topic).published >= ca.sent
    });
    let cb = counters(&sb, topic);
    eprintln!("{topic}: A {ca:?}\n{topic}: B {cb:?}");
    assert_eq!(ca.stalls, 0, "a slow put is not a stall");
    let cut_off = sa
        .topics
        .iter()
        .find(|t| t.name == topic)
        .map(|t| t.cut_off_ms);
    assert_eq!(cut_off, Some(0), "the topic was never cut off");
    assert!(
        sa.refusals.iter().all(|r| r.stalls == 0),
        "no host blamed for a stall: {:?}",
        sa.refusals
    );
    assert!(ca.slow_puts >= 1, "the link made puts slow: {ca:?}");
    // Every loss counted where it happened and seen at the other end.
    assert_eq!(ca.send_failed, ca.stall_dropped);
    assert_eq!(cb.received, ca.sent);
    assert_eq!(cb.wire_lost, 0);
    assert_eq!(cb.source_lost, ca.stall_dropped);
    assert_eq!(got["missing"], ca.stall_dropped);
    assert_eq!(got["received"], ca.sent);
    publ.finish();
    rig.hosts.host(Side::A).clear_impairments().expect("clear");
    rig.end([a, b]);
}

#[test]
fn bridge_killed_and_restarted_resumes_and_counts() {
    let Some((rig, a, b)) = common::bridged_hosts("restart") else {
        return;
    };
    let count = 6000u64; // 6 s at 1 kHz
    let mut sub = rig.spawn(Side::B, "sub_cmdvel", &[("HZ_COUNT", count.to_string())]);
    let mut publ = rig.spawn(Side::A, "pub_cmdvel", &[("HZ_COUNT", count.to_string())]);
    rig.wait_status(Side::B, "traffic flows", |s| {
        counters(s, "base/cmd_vel").published > 500
    });
    let killed_at = Instant::now();
    a.kill();
    std::thread::sleep(Duration::from_millis(500));
    let a = rig.bridge(Side::A);
    eprintln!(
        "A's bridge killed and restarted in {:?}",
        killed_at.elapsed()
    );
    let got = sub.result();
    let sent = publ.result();
    eprintln!("after restart: publisher {sent}, subscriber {got}");
    // Traffic resumed: the last message arrived.
    assert_eq!(
        got["last"], count,
        "the stream's end crossed after the restart"
    );
    assert_eq!(got["out_of_order"], 0);
    // Every message B's subscriber missed is counted by B's bridge (gaps in the publisher's
    // own sequence): those published while A had no bridge (which A's publisher also counts,
    // as undelivered) and those the killed bridge held in flight.
    let missing = got["missing"].as_u64().unwrap();
    let undelivered = sent["undelivered"].as_u64().unwrap();
    let sb = rig.wait_status(Side::B, "B's counters settle", |s| {
        counters(s, "base/cmd_vel").source_lost >= missing
    });
    let cb = counters(&sb, "base/cmd_vel");
    eprintln!("B's bridge: {cb:?}");
    assert_eq!(
        cb.source_lost, missing,
        "B counts exactly what its subscriber missed"
    );
    assert_eq!(cb.wire_lost, 0, "nothing was lost on the network itself");
    assert!(
        missing >= undelivered,
        "{missing} missing < {undelivered} counted undelivered"
    );
    publ.finish();
    rig.end([a, b]);
}

/// A subscriber on B stops reading and is SIGKILLed while it holds the topic's ring full:
/// B's bridge (publishing from Zenoh's callback) waits for it as `Block` says, reclaims its
/// place once it is dead, and the stream resumes to its end; every message B's subscriber
/// missed meanwhile is counted by B's bridge. (Before, every later message waited out the
/// Block timeout: one dead process stalled the host's traffic.)
#[test]
fn a_subscriber_killed_holding_the_ring_does_not_stall_the_host() {
    let Some((rig, a, b)) = common::bridged_hosts("hog") else {
        return;
    };
    let count = 3000u64;
    let mut sub = rig.spawn(Side::B, "sub_cmdvel", &[("HZ_COUNT", count.to_string())]);
    let hog = rig.spawn(Side::B, "hog", &[]);
    let publ = rig.spawn(Side::A, "pub_cmdvel", &[("HZ_COUNT", count.to_string())]);
    // The ring (depth 64) fills behind the hog; then B's bridge waits in its send.
    rig.wait_status(Side::B, "B's bridge fills the ring", |s| {
        counters(s, "base/cmd_vel").published >= 64
    });
    std::thread::sleep(Duration::from_millis(100));
    hog.kill();
    let got = sub.result();
    eprintln!("after the hog was killed: subscriber {got}");
    assert_eq!(
        got["last"], count,
        "the stream's end arrived after the kill"
    );
    assert_eq!(got["out_of_order"], 0);
    let missing = got["missing"].as_u64().unwrap();
    let sb = rig.wait_status(Side::B, "B's counters settle", |s| {
        counters(s, "base/cmd_vel").received >= count
    });
    let cb = counters(&sb, "base/cmd_vel");
    eprintln!("B's bridge: {cb:?}");
    assert_eq!(
        cb.publish_failed, missing,
        "B's bridge counts exactly what its subscriber missed"
    );
    assert_eq!(cb.published + cb.publish_failed, cb.received);
    publ.finish();
    rig.end([a, b]);
}

#[test]
fn schema_mismatch_is_an_error_at_both_ends() {
    let Some((rig, a, b)) = common::bridged_hosts("schema") else {
        return;
    };
    let mut sub = rig.spawn(Side::B, "sub_other", &[("HZ_MS", "3000".into())]);
    let mut publ = rig.spawn(Side::A, "pub_cmdvel", &[("HZ_COUNT", "0".into())]);
    let mismatch = |s: &horus_zenoh::BridgeStatus| {
        s.topics.iter().any(|t| {
            t.name == "base/cmd_vel"
                && t.issues
                    .iter()
                    .any(|i| matches!(i, horus_zenoh::TopicIssue::SchemaMismatch { .. }))
        })
    };
    let sa = rig.wait_status(Side::A, "A reports the mismatch", mismatch);
    let sb = rig.wait_status(Side::B, "B reports the mismatch", mismatch);
    eprintln!("A: {:?}\nB: {:?}", sa.topics, sb.topics);
    let got = sub.result();
    assert_eq!(got["received"], 0, "nothing of another type crosses");
    let _ = publ.result();
    publ.finish();
    rig.end([a, b]);
}

#[test]
fn hosts_find_each_other_by_multicast_without_addresses() {
    if common::child_main() {
        return;
    }
    let Some(rig) = Rig::new("mcast") else {
        return;
    };
    let started = Instant::now();
    let a = rig.bridge_multicast(Side::A);
    let b = rig.bridge_multicast(Side::B);
    rig.wait_status(Side::B, "B sees A", |s| {
        s.peers.iter().any(|p| p.host == "host-a")
    });
    let mut sub = rig.spawn(Side::B, "sub_cmdvel", &[("HZ_COUNT", "200".into())]);
    let mut publ = rig.spawn(Side::A, "pub_cmdvel", &[("HZ_COUNT", "200".into())]);
    let got = sub.result();
    eprintln!(
        "multicast: discovered and streamed in {:?}: {got}",
        started.elapsed()
    );
    assert_eq!(got["received"], 200);
    let _ = publ.result();
    publ.finish();
    rig.end([a, b]);
}

/// Sets a host's end of the link down or up.
fn link(rig: &Rig, side: Side, up: bool) {
    let h = rig.hosts.host(side);
    let status = std::process::Command::new("ip")
        .args(["-n", h.name(), "link", "set", "dev", h.interface()])
        .arg(if up { "up" } else { "down" })
        .status()
        .expect("ip");
    assert!(status.success());
}

#[test]
fn a_host_that_vanishes_is_noticed_and_comes_back() {
    let Some((rig, a, b)) = common::bridged_hosts("vanish") else {
        return;
    };
    let sub = rig.spawn(Side::B, "sub_cmdvel", &[("HZ_COUNT", "1000000".into())]);
    let publ = rig.spawn(
        Side::A,
        "pub_cmdvel",
        &[("HZ_COUNT", "1000000".into()), ("HZ_RATE", "200".into())],
    );
    rig.wait_status(Side::B, "traffic flows", |s| {
        counters(s, "base/cmd_vel").published > 100
    });
    // The link goes silent (no FIN, no RST): only the lease can tell.
    link(&rig, Side::A, false);
    let cut = Instant::now();
    rig.wait_status(Side::B, "B notices A is gone", |s| {
        !s.peers.iter().any(|p| p.host == "host-a")
            && s.topics.iter().all(|t| t.receiving_from.is_empty())
    });
    eprintln!(
        "host A gone from B's view after {:?} (lease 3 s)",
        cut.elapsed()
    );
    // Back: the bridges reconnect on their own, traffic resumes, and what B missed meanwhile
    // is counted.
    link(&rig, Side::A, true);
    let back = Instant::now();
    let before = counters(&rig.status(Side::B).unwrap(), "base/cmd_vel").published;
    let s = rig.wait_status(Side::B, "traffic resumes", |s| {
        counters(s, "base/cmd_vel").published > before + 100
    });
    eprintln!(
        "traffic resumed {:?} after the link came back; B: {:?}",
        back.elapsed(),
        counters(&s, "base/cmd_vel")
    );
    publ.kill();
    sub.kill();
    rig.end([a, b]);
}

#[test]
fn garbage_from_a_hostile_peer_is_counted_and_never_published() {
    let Some((rig, a, b)) = common::bridged_hosts("hostile") else {
        return;
    };
    let sub = rig.spawn(Side::B, "sub_cmdvel", &[("HZ_COUNT", "1".into())]);
    let publ = rig.spawn(Side::A, "pub_cmdvel", &[("HZ_COUNT", "0".into())]);
    let s = rig.wait_status(Side::B, "B receives cmd_vel from A", |s| {
        s.topics
            .iter()
            .any(|t| t.name == "base/cmd_vel" && !t.receiving_from.is_empty())
    });
    // The schema key B's bridge expects, from its status ("type (id-layout)").
    let schema = &s
        .topics
        .iter()
        .find(|t| t.name == "base/cmd_vel")
        .unwrap()
        .schema;
    let key = schema.rsplit('(').next().unwrap().trim_end_matches(')');
    let (id, layout) = key.split_once('-').unwrap();
    let b_addr = rig.hosts.host(Side::B).addr();
    let mut evil = rig.spawn(
        Side::A,
        "garbage",
        &[
            ("HZ_CONNECT", format!("tcp/{b_addr}:7447")),
            (
                "HZ_SCHEMA_ID",
                u64::from_str_radix(id, 16).unwrap().to_string(),
            ),
            (
                "HZ_LAYOUT",
                u64::from_str_radix(layout, 16).unwrap().to_string(),
            ),
        ],
    );
    // Its first message came before it offered the topic: refused, whatever it holds.
    rig.wait_status(Side::B, "B refuses a sender that does not offer", |s| {
        counters(s, "base/cmd_vel").unknown_sender >= 1
            && s.topics
                .iter()
                .any(|t| t.name == "base/cmd_vel" && t.receiving_from.iter().any(|h| h == "evil"))
    });
    evil.say("go");
    assert_eq!(evil.result()["put"], 3);
    let s = rig.wait_status(Side::B, "B counts the three", |s| {
        let c = counters(s, "base/cmd_vel");
        c.malformed >= 1 && c.schema_refused >= 1 && c.publish_failed >= 1
    });
    let c = counters(&s, "base/cmd_vel");
    eprintln!("B after the hostile peer: {c:?}");
    assert_eq!(c.published, 0, "nothing of it reached B's subscribers");
    assert_eq!((c.malformed, c.schema_refused, c.publish_failed), (1, 1, 1));
    assert_eq!(c.unknown_sender, 1);
    evil.finish();
    publ.finish();
    sub.kill();
    rig.end([a, b]);
}
