//! A latched (transient-local) topic across two hosts (network namespaces, each with its
//! bridge): host B's subscriber joins after A published its latched messages and receives
//! them, then live, with no duplicate; B's topic (created latched by its subscriber) then
//! gives a later subscriber on B the latched history too.

mod common;

use horus_netns::Side;

/// Child processes run this (see common::roles); in the parent it does nothing.
#[test]
fn child_entry() {
    common::child_main();
}

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
    assert_eq!(got["first"], serde_json::json!([2, 3, 4, 5, 6]), "{got}");
    assert_eq!(got["second"], serde_json::json!([4, 5, 6]), "{got}");
    assert_eq!(got["durability"], "transient-local (3)");
    publ.finish();
    sub.finish();
    rig.end([a, b]);
}
