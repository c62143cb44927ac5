//! The bridge's browser surface against a real WebSocket client (tungstenite): who may
//! connect (origin, Host, token) and the caps (clients, subscriptions, message size). Each
//! test is named after what was broken: any web page could connect and read every topic; a
//! client could open any number of connections, subscribe to any number of channels and send
//! 64 MiB text frames that were parsed. Behaviour only; nothing timed.

use std::io::Read;
use std::net::TcpStream;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use horus::msgs::CmdVel;
use horus::prelude::*;
use horus_foxglove::limits::HANDSHAKE_SLOTS;
use horus_foxglove::{AccessPolicy, Bridge, BridgeOptions, Token, LOG_CHANNEL};
use serde_json::{json, Value};
use tungstenite::client::IntoClientRequest;
use tungstenite::protocol::frame::coding::CloseCode;
use tungstenite::{Message, WebSocket};

/// Only turns a hang into a failure.
const PATIENCE: Duration = Duration::from_secs(60);

type Ws = WebSocket<TcpStream>;

fn unique_ns(tag: &str) -> String {
    static N: AtomicU32 = AtomicU32::new(0);
    format!(
        "test-foxsec-{tag}-{}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    )
}

fn start(ns: &str, f: impl FnOnce(&mut BridgeOptions)) -> Bridge {
    let mut o = BridgeOptions::new("127.0.0.1:0".parse().unwrap(), ns);
    f(&mut o);
    Bridge::start(o).unwrap()
}

/// A WebSocket handshake with the Foxglove subprotocol, `path` (e.g. `/?token=…`) and extra
/// headers (a header given replaces tungstenite's, e.g. `Host`).
// tungstenite's error, as it comes (the refusal's HTTP response is in it).
#[allow(clippy::result_large_err)]
fn try_connect(bridge: &Bridge, path: &str, headers: &[(&str, &str)]) -> tungstenite::Result<Ws> {
    let mut req = format!("ws://{}{path}", bridge.local_addr())
        .into_client_request()
        .unwrap();
    let h = req.headers_mut();
    h.insert(
        "Sec-WebSocket-Protocol",
        "foxglove.websocket.v1".parse().unwrap(),
    );
    for (k, v) in headers {
        h.insert(
            tungstenite::http::HeaderName::from_bytes(k.as_bytes()).unwrap(),
            v.parse().unwrap(),
        );
    }
    let stream = TcpStream::connect(bridge.local_addr()).unwrap();
    // Blocking handshake; the timeout only turns a hang into a failure.
    stream.set_read_timeout(Some(PATIENCE)).unwrap();
    match tungstenite::client(req, stream) {
        Ok((ws, _)) => {
            ws.get_ref()
                .set_read_timeout(Some(Duration::from_millis(20)))
                .unwrap();
            Ok(ws)
        }
        Err(tungstenite::HandshakeError::Failure(e)) => Err(e),
        Err(tungstenite::HandshakeError::Interrupted(_)) => panic!("handshake hung"),
    }
}

fn connect(bridge: &Bridge, headers: &[(&str, &str)]) -> Ws {
    try_connect(bridge, "/", headers).unwrap_or_else(|e| panic!("refused: {e}"))
}

/// The HTTP status and body of a refused upgrade.
#[allow(clippy::result_large_err)]
fn refusal(r: tungstenite::Result<Ws>) -> (u16, String) {
    match r {
        Err(tungstenite::Error::Http(resp)) => (
            resp.status().as_u16(),
            String::from_utf8_lossy(resp.body().as_deref().unwrap_or_default()).into_owned(),
        ),
        Err(e) => panic!("expected an HTTP refusal, got {e}"),
        Ok(_) => panic!("expected an HTTP refusal, got a connection"),
    }
}

/// The next message, or `None` if none came within the read timeout.
fn next(ws: &mut Ws) -> Option<Message> {
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

/// The next text message as JSON.
fn next_json(ws: &mut Ws) -> Value {
    let t0 = Instant::now();
    loop {
        assert!(t0.elapsed() < PATIENCE, "no text message came");
        match next(ws) {
            Some(Message::Text(t)) => return serde_json::from_str(t.as_str()).unwrap(),
            Some(Message::Close(c)) => panic!("closed: {c:?}"),
            _ => {}
        }
    }
}

/// Reads until a `status` message; returns it.
fn next_status(ws: &mut Ws) -> Value {
    loop {
        let v = next_json(ws);
        if v["op"] == "status" {
            return v;
        }
    }
}

/// Reads until the server's close frame; returns its code and reason.
fn close_frame(ws: &mut Ws) -> (CloseCode, String) {
    let t0 = Instant::now();
    loop {
        assert!(t0.elapsed() < PATIENCE, "the server never closed");
        match ws.read() {
            Ok(Message::Close(Some(c))) => return (c.code, c.reason.to_string()),
            Ok(Message::Close(None)) => panic!("closed without a reason"),
            Ok(_) => {}
            Err(tungstenite::Error::Io(e))
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) => {}
            Err(e) => panic!("no close frame: {e}"),
        }
    }
}

/// Waits until the bridge's statistics satisfy `pred` (the refusal is counted by the
/// client's thread right after it answered).
fn until_stats(bridge: &Bridge, what: &str, pred: impl Fn(&horus_foxglove::BridgeStats) -> bool) {
    let t0 = Instant::now();
    while !pred(&bridge.stats()) {
        assert!(
            t0.elapsed() < PATIENCE,
            "{what}: never seen in {:?}",
            bridge.stats()
        );
        std::thread::sleep(Duration::from_millis(5));
    }
}

fn refused(bridge: &Bridge, kind: &str) -> u64 {
    bridge.stats().refused.get(kind).copied().unwrap_or(0)
}

/// Opens a session and reads its `serverInfo`.
fn greeted(ws: &mut Ws) {
    let v = next_json(ws);
    assert_eq!(v["op"], "serverInfo", "{v}");
}

fn subscribe(ws: &mut Ws, subs: &[(u32, u32)]) {
    let list: Vec<Value> = subs
        .iter()
        .map(|(id, ch)| json!({"id": id, "channelId": ch}))
        .collect();
    let m = json!({"op": "subscribe", "subscriptions": list});
    ws.send(Message::text(m.to_string())).unwrap();
}

#[test]
fn foreign_origin_is_refused() {
    let ns = unique_ns("origin");
    let bridge = start(&ns, |_| {});
    for (i, origin) in [
        "https://evil.example",
        "http://localhost.evil.example",
        "null",
    ]
    .iter()
    .enumerate()
    {
        let (status, body) = refusal(try_connect(&bridge, "/", &[("Origin", origin)]));
        assert_eq!(status, 403, "{origin}");
        assert!(body.contains("is not allowed"), "{origin}: {body:?}");
        until_stats(&bridge, "origin refusal", |s| {
            s.refused.get("origin") == Some(&(i as u64 + 1))
        });
    }
    // A DNS-rebinding page: its own name in Host, on a loopback bridge.
    let (status, body) = refusal(try_connect(&bridge, "/", &[("Host", "evil.example:8765")]));
    assert_eq!(status, 403);
    assert!(body.contains("loopback"), "{body:?}");
    until_stats(&bridge, "host refusal", |s| {
        s.refused.get("host") == Some(&1)
    });
    // Nothing was served to them and the bridge still serves a local client.
    let mut ws = connect(&bridge, &[("Origin", "http://localhost:3000")]);
    greeted(&mut ws);
    assert_eq!(refused(&bridge, "origin"), 3);
    drop(ws);
    bridge.stop();
}

#[test]
fn loopback_and_foxglove_origins_are_accepted() {
    let ns = unique_ns("origin-ok");
    let bridge = start(&ns, |o| {
        o.access.origins = vec!["https://viewer.example:8443".into()];
    });
    let origins = [
        None,
        Some("http://localhost:3000"),
        Some("http://127.0.0.1:8080"),
        Some("http://[::1]:5173"),
        Some("https://app.foxglove.dev"),
        Some("file://"),
        Some("https://viewer.example:8443"),
    ];
    for origin in origins {
        let headers: Vec<(&str, &str)> = origin.map(|o| ("Origin", o)).into_iter().collect();
        let mut ws = connect(&bridge, &headers);
        greeted(&mut ws);
        ws.close(None).unwrap();
        close_frame_or_end(&mut ws);
    }
    assert!(bridge.stats().refused.is_empty(), "{:?}", bridge.stats());
    bridge.stop();
}

/// Reads until the connection ends (after our own close).
fn close_frame_or_end(ws: &mut Ws) {
    let t0 = Instant::now();
    while t0.elapsed() < PATIENCE {
        match ws.read() {
            Ok(_) => {}
            Err(tungstenite::Error::Io(e))
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) => {}
            Err(_) => return,
        }
    }
}

#[test]
fn connection_cap_refuses_extra_client_with_reason() {
    let ns = unique_ns("cap");
    let bridge = start(&ns, |o| o.limits.max_clients = 2);
    let mut a = connect(&bridge, &[]);
    greeted(&mut a);
    let mut b = connect(&bridge, &[]);
    greeted(&mut b);
    // The third is upgraded only to be told why: a `status` error, then close 1013.
    let mut c = connect(&bridge, &[]);
    let st = next_status(&mut c);
    assert_eq!(st["level"], 2);
    assert!(
        st["message"].as_str().unwrap().contains("too many clients"),
        "{st}"
    );
    let (code, reason) = close_frame(&mut c);
    assert_eq!(code, CloseCode::Again);
    assert!(reason.contains("too many clients"), "{reason}");
    until_stats(&bridge, "client cap refusal", |s| {
        s.refused.get("too_many_clients") == Some(&1)
    });
    // The two clients are served as before; once one leaves, a new one gets in.
    a.close(None).unwrap();
    close_frame_or_end(&mut a);
    let t0 = Instant::now();
    loop {
        assert!(t0.elapsed() < PATIENCE, "the freed slot was never reused");
        let mut d = connect(&bridge, &[]);
        if next_json(&mut d)["op"] == "serverInfo" {
            break;
        }
    }
    drop(b);
    bridge.stop();
}

#[test]
fn idle_connections_past_the_thread_cap_are_refused_at_once() {
    let ns = unique_ns("slots");
    let bridge = start(&ns, |o| o.limits.max_clients = 1);
    // Connections that never send their request hold a handshake thread each (up to the
    // handshake timeout); past max_clients + HANDSHAKE_SLOTS the next one gets no thread.
    let idle: Vec<TcpStream> = (0..1 + HANDSHAKE_SLOTS)
        .map(|_| TcpStream::connect(bridge.local_addr()).unwrap())
        .collect();
    let mut s = TcpStream::connect(bridge.local_addr()).unwrap();
    s.set_read_timeout(Some(PATIENCE)).unwrap();
    let mut answer = String::new();
    let _ = s.read_to_string(&mut answer);
    assert!(answer.starts_with("HTTP/1.1 503"), "{answer:?}");
    assert!(answer.contains("too many connections"), "{answer:?}");
    until_stats(&bridge, "thread cap refusal", |s| {
        s.refused.get("too_many_connections") == Some(&1)
    });
    drop(idle);
    bridge.stop();
}

#[test]
fn subscription_cap_is_enforced() {
    let ns = unique_ns("subs");
    let topics: Vec<_> = (0..4)
        .map(|i| {
            Topic::<CmdVel>::builder(&format!("fx/t{i}"))
                .namespace(&ns)
                .open()
                .unwrap()
        })
        .collect();
    let _pubs: Vec<_> = topics.iter().map(|t| t.publisher().unwrap()).collect();
    let bridge = start(&ns, |o| {
        o.limits.max_subscriptions_per_client = 2;
        o.limits.max_subscriptions_total = 3;
    });
    let mut a = connect(&bridge, &[]);
    // Every topic advertised: channels 1..=4 (and /log).
    let mut ids = Vec::new();
    let t0 = Instant::now();
    while ids.len() < 4 {
        assert!(t0.elapsed() < PATIENCE, "topics never advertised");
        let v = next_json(&mut a);
        if v["op"] == "advertise" {
            for c in v["channels"].as_array().unwrap() {
                if c["topic"].as_str().unwrap().starts_with("fx/t") {
                    ids.push(c["id"].as_u64().unwrap() as u32);
                }
            }
        }
    }
    // Three at once: two taken, the third refused with a reason.
    subscribe(&mut a, &[(1, ids[0]), (2, ids[1]), (3, ids[2])]);
    let st = next_status(&mut a);
    assert_eq!(st["level"], 2);
    let m = st["message"].as_str().unwrap();
    assert!(
        m.contains("subscription cap") && m.contains("1 subscriptions refused"),
        "{m}"
    );
    until_stats(&bridge, "per-client cap", |s| {
        s.subscriptions == 2 && s.refused.get("subscription_cap") == Some(&1)
    });
    // Resubscribing to a channel it has replaces, it does not add.
    subscribe(&mut a, &[(7, ids[0])]);
    // A second client: one left in the total (3), the second refused.
    let mut b = connect(&bridge, &[]);
    greeted(&mut b);
    subscribe(&mut b, &[(1, ids[2]), (2, ids[3])]);
    let st = next_status(&mut b);
    assert!(
        st["message"]
            .as_str()
            .unwrap()
            .contains("all clients together"),
        "{st}"
    );
    until_stats(&bridge, "total cap", |s| {
        s.subscriptions == 3 && s.refused.get("subscription_cap") == Some(&2)
    });
    // A channel never advertised is not subscribed at all.
    subscribe(&mut b, &[(9, 999_999)]);
    let st = next_status(&mut b);
    assert!(
        st["message"].as_str().unwrap().contains("never advertised"),
        "{st}"
    );
    // Unsubscribing frees room for the other client.
    a.send(Message::text(
        json!({"op": "unsubscribe", "subscriptionIds": [2]}).to_string(),
    ))
    .unwrap();
    until_stats(&bridge, "unsubscribed", |s| s.subscriptions == 2);
    subscribe(&mut b, &[(2, ids[3])]);
    until_stats(&bridge, "room again", |s| s.subscriptions == 3);
    // A client that leaves releases its subscriptions.
    drop(a);
    until_stats(&bridge, "released", |s| s.subscriptions == 2);
    assert_eq!(refused(&bridge, "subscription_cap"), 2);
    drop(b);
    bridge.stop();
}

#[test]
fn oversized_text_frame_is_refused_not_parsed() {
    let ns = unique_ns("big");
    let bridge = start(&ns, |_| {});
    let max = bridge_limit();
    let sub = json!({"op": "subscribe", "subscriptions": [{"id": 1, "channelId": LOG_CHANNEL}]})
        .to_string();
    let padded = |len: usize| {
        let mut s = sub.clone();
        s.push_str(&" ".repeat(len - sub.len()));
        s
    };
    // Exactly at the limit: read and parsed (the subscription counts).
    let mut ok = connect(&bridge, &[]);
    greeted(&mut ok);
    ok.send(Message::text(padded(max))).unwrap();
    until_stats(&bridge, "subscription at the limit", |s| {
        s.subscriptions == 1
    });
    // One byte over: refused from the frame's header with a reason, the connection closed
    // (1009), nothing subscribed.
    let mut big = connect(&bridge, &[]);
    greeted(&mut big);
    big.send(Message::text(padded(max + 1))).unwrap();
    let st = next_status(&mut big);
    assert_eq!(st["level"], 2);
    assert!(
        st["message"]
            .as_str()
            .unwrap()
            .contains("message too large"),
        "{st}"
    );
    let (code, reason) = close_frame(&mut big);
    assert_eq!(code, CloseCode::Size);
    assert!(reason.contains("too large"), "{reason}");
    until_stats(&bridge, "oversized refusal", |s| {
        s.refused.get("oversized_message") == Some(&1)
    });
    assert_eq!(bridge.stats().subscriptions, 1, "only the first client's");
    // The other client is unaffected.
    ok.send(Message::text(
        json!({"op": "unsubscribe", "subscriptionIds": [1]}).to_string(),
    ))
    .unwrap();
    until_stats(&bridge, "unsubscribed", |s| s.subscriptions == 0);
    drop(ok);
    bridge.stop();
}

fn bridge_limit() -> usize {
    horus_foxglove::limits::DEFAULT_MAX_CLIENT_MESSAGE_BYTES
}

#[test]
fn token_required_when_configured() {
    let ns = unique_ns("token");
    let secret = "s3cret-Token_42";
    let bridge = start(&ns, |o| {
        o.access = AccessPolicy {
            origins: vec![],
            token: Some(Token::new(secret).unwrap()),
        };
    });
    let (status, body) = refusal(try_connect(&bridge, "/", &[]));
    assert_eq!(status, 401);
    assert!(body.contains("token is required"), "{body:?}");
    let (status, body) = refusal(try_connect(&bridge, "/?token=s3cret-Token_41", &[]));
    assert_eq!(status, 401);
    assert!(
        body.contains("wrong token") && !body.contains(secret),
        "{body:?}"
    );
    let (status, _) = refusal(try_connect(
        &bridge,
        "/",
        &[("Authorization", "Bearer nope")],
    ));
    assert_eq!(status, 401);
    until_stats(&bridge, "token refusals", |s| {
        s.refused.get("token_missing") == Some(&1) && s.refused.get("token_wrong") == Some(&2)
    });
    // The token in the URL (what the Foxglove app can send), or as a bearer header.
    let mut ws = try_connect(&bridge, &format!("/?token={secret}"), &[]).unwrap();
    greeted(&mut ws);
    let mut ws2 = connect(&bridge, &[("Authorization", &format!("Bearer {secret}"))]);
    greeted(&mut ws2);
    // An allowed origin still needs the token; a right token does not excuse an origin.
    let (status, _) = refusal(try_connect(
        &bridge,
        "/",
        &[("Origin", "https://app.foxglove.dev")],
    ));
    assert_eq!(status, 401);
    let (status, _) = refusal(try_connect(
        &bridge,
        &format!("/?token={secret}"),
        &[("Origin", "https://evil.example")],
    ));
    assert_eq!(status, 403);
    drop((ws, ws2));
    bridge.stop();
}
