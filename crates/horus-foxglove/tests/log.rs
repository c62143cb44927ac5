//! The bridge's `/log` channel: advertised as `foxglove.Log` (JSON), and a client that
//! subscribes receives the records a child process logs through horus-log, with their
//! level, text, fields and name. Behaviour only; nothing timed.

use std::io::{BufRead, BufReader};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use horus_foxglove::{Bridge, BridgeOptions, LOG_CHANNEL};
use serde_json::Value;
use tungstenite::client::IntoClientRequest;
use tungstenite::{Message, WebSocket};

/// Only turns a hang into a failure.
const PATIENCE: Duration = Duration::from_secs(60);

/// The logging process (this test binary, re-run with `HORUS_FOX_LOG_FIXTURE`): logs a
/// beat until its stdin closes, then exits in order (removing its segment).
#[test]
fn fixture() {
    if std::env::var("HORUS_FOX_LOG_FIXTURE").is_err() {
        return;
    }
    let guard = horus_log::Builder::new()
        .console(horus_log::Console::Off)
        .name("foxfix")
        .init()
        .unwrap();
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let s = stop.clone();
    std::thread::spawn(move || {
        let mut line = String::new();
        let _ = std::io::stdin().read_line(&mut line);
        s.store(true, std::sync::atomic::Ordering::Relaxed);
    });
    println!("ready");
    let mut i = 0u64;
    while !stop.load(std::sync::atomic::Ordering::Relaxed) {
        horus_log::warn!(target: "fox/test", "beat {}", i; mode = "auto");
        i += 1;
        std::thread::sleep(Duration::from_millis(10));
    }
    drop(guard);
}

struct Kid(Child);

impl Drop for Kid {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

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

#[test]
fn a_subscribed_client_receives_what_a_child_process_logs() {
    let ns = format!("test-fox-log-{}", std::process::id());
    let bridge = Bridge::start(BridgeOptions::new("127.0.0.1:0".parse().unwrap(), &ns)).unwrap();
    let mut ws = connect(&bridge);
    // The greeting advertises /log.
    let t0 = Instant::now();
    let channel = loop {
        assert!(t0.elapsed() < PATIENCE, "/log never advertised");
        if let Some(Message::Text(t)) = next(&mut ws) {
            let v: Value = serde_json::from_str(t.as_str()).unwrap();
            if v["op"] == "advertise" {
                if let Some(c) = v["channels"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .find(|c| c["topic"] == "/log")
                {
                    break c.clone();
                }
            }
        }
    };
    assert_eq!(channel["id"], LOG_CHANNEL);
    assert_eq!(channel["schemaName"], "foxglove.Log");
    assert_eq!(channel["encoding"], "json");
    assert_eq!(channel["schemaEncoding"], "jsonschema");
    let schema: Value = serde_json::from_str(channel["schema"].as_str().unwrap()).unwrap();
    assert!(schema["properties"]["timestamp"].is_object());
    let m = serde_json::json!({"op": "subscribe", "subscriptions": [{"id": 5, "channelId": LOG_CHANNEL}]});
    ws.send(Message::text(m.to_string())).unwrap();

    let mut kid = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "fixture", "--nocapture", "--test-threads=1"])
        .env("HORUS_FOX_LOG_FIXTURE", "1")
        .env("HORUS_NAMESPACE", &ns)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .map(Kid)
        .unwrap();
    let pid = kid.0.id();
    let mut lines = BufReader::new(kid.0.stdout.take().unwrap()).lines();
    assert!(lines.any(|l| l.is_ok_and(|l| l.ends_with("ready"))));

    // A beat arrives as a messageData frame on our subscription.
    let t0 = Instant::now();
    let (log_time, v) = loop {
        assert!(t0.elapsed() < PATIENCE, "no log record arrived");
        if let Some(Message::Binary(b)) = next(&mut ws) {
            assert_eq!(b[0], 1, "messageData");
            assert_eq!(u32::from_le_bytes(b[1..5].try_into().unwrap()), 5);
            let log_time = u64::from_le_bytes(b[5..13].try_into().unwrap());
            break (log_time, serde_json::from_slice::<Value>(&b[13..]).unwrap());
        }
    };
    let text = v["message"].as_str().unwrap();
    assert!(
        text.starts_with("beat ") && text.ends_with(" mode=auto"),
        "{v}"
    );
    assert_eq!(v["level"], 3, "WARNING");
    assert_eq!(v["name"], format!("fox/test (foxfix[{pid}])"));
    assert!(v["file"].as_str().unwrap().ends_with("log.rs"));
    let ts = &v["timestamp"];
    assert_eq!(
        log_time,
        ts["sec"].as_u64().unwrap() * 1_000_000_000 + ts["nsec"].as_u64().unwrap()
    );

    drop(kid.0.stdin.take());
    let _ = kid.0.wait();
    drop(ws);
    bridge.stop();
    let left: Vec<String> = std::fs::read_dir("/dev/shm")
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| n.contains(&ns))
        .collect();
    assert!(left.is_empty(), "{left:?}");
}
