//! A raw Zenoh peer (plain `zenoh` API, no bridge code) for the closed-bridge tests: it tries
//! to read, publish, call and speak as another host, with whatever credentials it is given.
//!
//! Environment: `HZ_CONNECT` (the endpoint it dials), optional `HZ_TLS_CA`, `HZ_TLS_CERT`,
//! `HZ_TLS_KEY` (TLS, client certificate), `HZ_USER` / `HZ_PASSWORD` (user/password),
//! `HZ_CLAIM` (the host it pretends to be), optional `HZ_SELF` (its own name: it also speaks
//! as itself, the control), `HZ_MS` (how long it listens). Reports one JSON line.

use std::time::{Duration, Instant};

use horus::msgs::CmdVel;
use horus::Message as _;
use serde_json::json;
use zenoh::Wait;

use super::roles::{env, ready, wait_for_stdin_close};

/// `<schema id>-<layout hash>` of CmdVel, as the bridges name it in keys.
pub fn cmdvel_schema() -> (u64, u64) {
    let s = CmdVel::SCHEMA;
    let id = horus_msgs::fnv1a64_extend(
        horus_msgs::fnv1a64(s.name().as_bytes()),
        &s.version().to_le_bytes(),
    );
    (id, s.layout_hash())
}

/// A bridge message of `base/cmd_vel` stamped `stamp` (the subscriber's sequence number).
fn message(stamp: u64, seq: u64) -> Vec<u8> {
    let (id, layout) = cmdvel_schema();
    let msg = CmdVel::new(stamp, 1.0, 0.5);
    let body = horus_msgs::__bytemuck::bytes_of(&msg);
    let mut b = vec![0u8; horus_zenoh::HEADER_LEN + body.len()];
    horus_zenoh::WireHeader {
        epoch: 1,
        schema_id: id,
        layout_hash: layout,
        seq,
        origin_place: 0,
        origin_seq: seq,
    }
    .write(&mut b);
    b[horus_zenoh::HEADER_LEN..].copy_from_slice(body);
    b
}

pub fn raw_peer() {
    let mut config = zenoh::Config::default();
    let mut set = |k: &str, v: String| config.insert_json5(k, &v).unwrap();
    set("mode", "\"peer\"".into());
    set("scouting/multicast/enabled", "false".into());
    set("listen/endpoints", "[]".into());
    set("connect/endpoints", format!("[\"{}\"]", env("HZ_CONNECT")));
    set("transport/shared_memory/enabled", "false".into());
    let q = |s: String| serde_json::to_string(&s).unwrap();
    if !env("HZ_TLS_CA").is_empty() {
        set(
            "transport/link/tls/root_ca_certificate",
            q(env("HZ_TLS_CA")),
        );
        set("transport/link/tls/verify_name_on_connect", "false".into());
    }
    if !env("HZ_TLS_CERT").is_empty() {
        set(
            "transport/link/tls/connect_certificate",
            q(env("HZ_TLS_CERT")),
        );
        set(
            "transport/link/tls/connect_private_key",
            q(env("HZ_TLS_KEY")),
        );
        // Zenoh's TLS client presents its certificate only with mutual TLS on.
        set("transport/link/tls/enable_mtls", "true".into());
    }
    if !env("HZ_USER").is_empty() {
        set("transport/auth/usrpwd/user", q(env("HZ_USER")));
        set("transport/auth/usrpwd/password", q(env("HZ_PASSWORD")));
    }
    let session = zenoh::open(config).wait().unwrap();
    let (samples_tx, samples) = std::sync::mpsc::channel::<String>();
    let _sub = session
        .declare_subscriber("horus/**")
        .callback(move |s| {
            let _ = samples_tx.send(s.key_expr().to_string());
        })
        .wait()
        .unwrap();
    let (tokens_tx, tokens) = std::sync::mpsc::channel::<String>();
    let _live = session
        .liveliness()
        .declare_subscriber("horus/**")
        .history(true)
        .callback(move |s| {
            let _ = tokens_tx.send(s.key_expr().to_string());
        })
        .wait()
        .unwrap();
    let (id, layout) = cmdvel_schema();
    let schema = format!("{id:016x}-{layout:016x}");
    let zero = format!("{:016x}-{:016x}", 0, 0);
    let claim = env("HZ_CLAIM");
    let me = env("HZ_SELF");
    let mut names = vec![claim.clone()];
    if !me.is_empty() {
        names.push(me.clone());
    }
    let mut held = Vec::new();
    for n in &names {
        for key in [
            format!("horus/h/{n}/{zero}/bridge"),
            format!("horus/o/{n}/{schema}/base/cmd_vel"),
        ] {
            held.push(session.liveliness().declare_token(key).wait().unwrap());
        }
    }
    let claimed = session
        .declare_publisher(format!("horus/d/{claim}/base/cmd_vel"))
        .wait()
        .unwrap();
    ready();
    let window = Duration::from_millis(env("HZ_MS").parse().unwrap_or(2000));
    let start = Instant::now();
    // With a name of its own, wait (bounded) until the bridge subscribes to its data: from
    // then on what it puts reaches the bridge unless access control drops it.
    let own = (!me.is_empty()).then(|| {
        let p = session
            .declare_publisher(format!("horus/d/{me}/base/cmd_vel"))
            .wait()
            .unwrap();
        let deadline = Instant::now() + Duration::from_secs(30);
        while !p.matching_status().wait().unwrap().matching() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(10));
        }
        p
    });
    if let Some(d) = window.checked_sub(start.elapsed()) {
        std::thread::sleep(d);
    }
    // Speak as the claimed host first (stamps 100…), then as itself (stamp 7): on one link
    // Zenoh keeps the order, so whatever of the claimed messages got through arrives first.
    for i in 0..5 {
        claimed.put(message(100 + i, i)).wait().unwrap();
    }
    let own_matched = own.as_ref().map(|p| {
        p.put(message(7, 0)).wait().unwrap();
        p.matching_status().wait().unwrap().matching()
    });
    // Ask for whatever the bridges serve (descriptions, calls) and hold as tokens.
    let replies = session
        .get("horus/**")
        .timeout(Duration::from_millis(500))
        .wait()
        .unwrap()
        .iter()
        .count();
    let live_replies = session
        .liveliness()
        .get("horus/**")
        .timeout(Duration::from_millis(500))
        .wait()
        .unwrap()
        .iter()
        .filter_map(|r| r.into_result().ok())
        .filter(|s| {
            !names
                .iter()
                .any(|n| s.key_expr().as_str().contains(&format!("/{n}/")))
        })
        .count();
    let peers = session.info().peers_zid().wait().count();
    // What it published itself comes back to its own subscribers: only the others' counts.
    let theirs = |k: &String| !names.iter().any(|n| k.contains(&format!("/{n}/")));
    let samples: Vec<String> = samples.try_iter().filter(theirs).collect();
    let tokens: Vec<String> = tokens.try_iter().filter(theirs).collect();
    println!(
        "\n{}",
        json!({"peers": peers, "samples": samples, "tokens": tokens, "replies": replies,
               "live_replies": live_replies, "own_matched": own_matched})
    );
    wait_for_stdin_close();
    drop(held);
}
