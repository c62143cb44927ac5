//! A latched (transient-local) topic through the bridge, with real WebSocket clients
//! speaking `foxglove.websocket.v1`: the first client gets the latched history, then live; a
//! client that subscribes later, while the first one is streaming, also gets the history
//! first (the last N messages at its join), then live — no gap, no duplicate.

use std::net::TcpStream;
use std::time::{Duration, Instant};

use horus::msgs::CmdVel;
use horus::{Durability, Topic};
use horus_foxglove::{Bridge, BridgeOptions};
use serde_json::Value;
use tungstenite::client::IntoClientRequest;
use tungstenite::{Message, WebSocket};

/// Only turns a hang into a failure.
const PATIENCE: Duration = Duration::from_secs(60);

fn connect(bridge: &Bridge) -> WebSocket<TcpStream> {
    let mut req = format!("ws://{}", bridge.local_addr())
        .into_client_request()
        .unwrap();
    req.headers_mut().insert(
        "Sec-WebSocket-Protocol",
        "foxglove.websocket.v1".parse().unwrap(),
    );
    let stream = TcpStream::connect(bridge.local_addr()).unwrap();
    let (ws, _) = tungstenite::client(req, stream).unwrap();
    ws.get_ref()
        .set_read_timeout(Some(Duration::from_millis(20)))
        .unwrap();
    ws
}

/// The next message, or `None` if none came within the read timeout.
fn next(ws: &mut WebSocket<TcpStream>) -> Option<Message> {
    match ws.read() {
        Ok(m) => Some(m),
        Err(tungstenite::Error::Io(e))
            if matches!(
                e.kind(),
                std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
            ) =>
        {
            None
        }
        Err(e) => panic!("client: {e}"),
    }
}

/// Reads until `topic` is advertised; subscribes to it as `sub`.
fn subscribe(ws: &mut WebSocket<TcpStream>, topic: &str, sub: u32) {
    let t0 = Instant::now();
    let channel = loop {
        assert!(t0.elapsed() < PATIENCE, "{topic} never advertised");
        if let Some(Message::Text(t)) = next(ws) {
            let v: Value = serde_json::from_str(t.as_str()).unwrap();
            if v["op"] == "advertise" {
                if let Some(c) = v["channels"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .find(|c| c["topic"] == topic)
                {
                    break c["id"].clone();
                }
            }
        }
    };
    let m = serde_json::json!({"op": "subscribe", "subscriptions": [{"id": sub, "channelId": channel}]});
    ws.send(Message::text(m.to_string())).unwrap();
}

/// Reads messageData frames until one carries `last`; returns every stamp received.
fn stamps_until(ws: &mut WebSocket<TcpStream>, last: u64, got: &mut Vec<u64>) {
    let t0 = Instant::now();
    while got.last() != Some(&last) {
        assert!(t0.elapsed() < PATIENCE, "stamp {last} never came: {got:?}");
        if let Some(Message::Binary(b)) = next(ws) {
            assert_eq!(b[0], 1, "messageData opcode");
            // CmdVel as CDR: the 4-byte encapsulation header, then stamp_ns (u64).
            let body = &b[13..];
            got.push(u64::from_le_bytes(body[4..12].try_into().unwrap()));
        }
    }
}

#[test]
fn a_client_joining_later_gets_the_latched_history_then_live() {
    let ns = format!("test-fox-latched-{}", std::process::id());
    let t = Topic::<CmdVel>::builder("fx/static")
        .namespace(&ns)
        .depth(8)
        .durability(Durability::TransientLocal { depth: 3 })
        .open()
        .unwrap();
    let mut publ = t.publisher().unwrap();
    for k in 1..=5 {
        publ.send(CmdVel::new(k, 0.0, 0.0)).unwrap();
    }
    let bridge = Bridge::start(BridgeOptions::new("127.0.0.1:0".parse().unwrap(), &ns)).unwrap();

    // The first client: the last 3, then live.
    let mut a = connect(&bridge);
    subscribe(&mut a, "fx/static", 1);
    let mut got_a = Vec::new();
    stamps_until(&mut a, 5, &mut got_a);
    publ.send(CmdVel::new(6, 0.0, 0.0)).unwrap();
    stamps_until(&mut a, 6, &mut got_a);
    assert_eq!(got_a, vec![3, 4, 5, 6]);

    // A second client while the first one streams: the history at its join (4, 5, 6)
    // first, then live.
    let mut b = connect(&bridge);
    subscribe(&mut b, "fx/static", 7);
    let mut got_b = Vec::new();
    stamps_until(&mut b, 6, &mut got_b);
    publ.send(CmdVel::new(7, 0.0, 0.0)).unwrap();
    stamps_until(&mut b, 7, &mut got_b);
    stamps_until(&mut a, 7, &mut got_a);
    assert_eq!(got_b, vec![4, 5, 6, 7]);
    assert_eq!(got_a, vec![3, 4, 5, 6, 7]);
    // Nothing else comes (no duplicate after the live message).
    assert!(!matches!(next(&mut b), Some(Message::Binary(_))));
    assert!(bridge.stats().missed.is_empty(), "{:?}", bridge.stats());
    drop((a, b));
    bridge.stop();
    drop((publ, t));
}
