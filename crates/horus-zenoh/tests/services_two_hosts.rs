//! Services across two hosts: a client on B calls a server on A through the bridges, and
//! sees the failures it would see on one host: `NoServer` when there is none, `ServerDied`
//! when the server dies holding the call.

mod common;

use horus_netns::Side;

/// Child processes run this (see common::roles); in the parent it does nothing.
#[test]
fn child_entry() {
    common::child_main();
}

#[test]
fn calls_cross_and_fail_as_on_one_host() {
    let Some((rig, a, b)) = common::bridged_hosts("svc") else {
        return;
    };

    // No server anywhere: NoServer at once.
    let mut c = rig.spawn(Side::B, "client", &[("HZ_NOWAIT", "1".into())]);
    assert_eq!(c.result()["outcomes"][0], "no_server");
    c.finish();

    // A server on A: B's calls are answered.
    let server = rig.spawn(Side::A, "server", &[]);
    rig.wait_status(Side::B, "B stands in for A's server", |s| {
        s.services
            .iter()
            .any(|v| v.name == "math/add" && v.served_by == "host-a")
    });
    let mut c = rig.spawn(Side::B, "client", &[("HZ_CALLS", "50".into())]);
    let r = c.result();
    eprintln!("calls: {r}");
    assert!(
        r["outcomes"].as_array().unwrap().iter().all(|o| o == "ok"),
        "{r}"
    );
    c.finish();

    // The server killed: B's bridge stops standing in, calls get NoServer.
    server.kill();
    rig.wait_status(Side::B, "B notices the server is gone", |s| {
        !s.services
            .iter()
            .any(|v| v.name == "math/add" && v.served_by == "host-a")
    });
    let mut c = rig.spawn(Side::B, "client", &[("HZ_NOWAIT", "1".into())]);
    assert_eq!(c.result()["outcomes"][0], "no_server");
    c.finish();

    // A server that dies holding the call: ServerDied on B.
    let _dying = rig.spawn(Side::A, "server", &[("HZ_DIE", "1".into())]);
    rig.wait_status(Side::B, "B stands in again", |s| {
        s.services
            .iter()
            .any(|v| v.name == "math/add" && v.served_by == "host-a")
    });
    let mut c = rig.spawn(Side::B, "client", &[]);
    assert_eq!(c.result()["outcomes"][0], "server_died");
    c.finish();

    let sb = rig.status(Side::B).unwrap();
    eprintln!("B's services: {:?}", sb.services);
    rig.end([a, b]);
}

#[test]
fn calls_from_several_clients_are_in_flight_at_once() {
    let Some((rig, a, b)) = common::bridged_hosts("svcpair") else {
        return;
    };
    // The server answers only once it holds two calls: both clients' calls must cross at once.
    let server = rig.spawn(Side::A, "pair_server", &[]);
    rig.wait_status(Side::B, "B stands in for A's server", |s| {
        s.services
            .iter()
            .any(|v| v.name == "math/add" && v.served_by == "host-a")
    });
    let mut c1 = rig.spawn(Side::B, "client", &[]);
    let mut c2 = rig.spawn(Side::B, "client", &[]);
    let (r1, r2) = (c1.result(), c2.result());
    eprintln!("paired calls: {r1} {r2}");
    assert_eq!(r1["outcomes"][0], "ok");
    assert_eq!(r2["outcomes"][0], "ok");
    c1.finish();
    c2.finish();
    server.kill();
    rig.end([a, b]);
}
