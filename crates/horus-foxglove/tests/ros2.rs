//! ROS-typed topics live in Foxglove: a real WebSocket client (tungstenite, speaking
//! `foxglove.websocket.v1`) sees each advertised with schema name = the ROS type, schema
//! encoding `ros2msg` with the type's definition and message encoding `cdr`, and receives
//! exactly the wire bytes that were published; the advertised definitions and received
//! payloads decode field by field in `mcap-ros2-support` (Foxglove's ROS 2 decoder), `rosbags`
//! and rclpy. Behaviour only; nothing timed.

#[path = "../../horus-record/tests/support/ros2_values.rs"]
mod ros2_values;

use std::net::TcpStream;
use std::time::{Duration, Instant};

use horus::inspect::{self, RawRosPublisher};
use horus_foxglove::{Bridge, BridgeOptions};
use horus_record::{RawSchema, RecordingWriter, WriterOptions};
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
fn ros_typed_topics_are_advertised_as_ros2msg_and_sent_as_their_wire_bytes() {
    let ns = format!("test-fox-ros2-{}", std::process::id());
    let topics = ros2_values::topics();
    let mut pubs: Vec<(_, RawRosPublisher)> = topics
        .iter()
        .map(|t| {
            let view =
                inspect::open_or_create_ros_topic(&ns, &t.topic, &t.ty, &inspect::ros_qos(1 << 16))
                    .unwrap();
            let p = view.ros_publisher().unwrap();
            (view, p)
        })
        .collect();
    let bridge = Bridge::start(BridgeOptions::new("127.0.0.1:0".parse().unwrap(), &ns)).unwrap();
    let mut ws = connect(&bridge);

    // Every topic advertised with its ROS type and definition.
    let mut channels: Vec<Option<Value>> = vec![None; topics.len()];
    let t0 = Instant::now();
    while channels.iter().any(Option::is_none) {
        assert!(t0.elapsed() < PATIENCE, "not every topic was advertised");
        if let Some(Message::Text(t)) = next(&mut ws) {
            let v: Value = serde_json::from_str(t.as_str()).unwrap();
            if v["op"] == "advertise" {
                for c in v["channels"].as_array().unwrap() {
                    if let Some(i) = topics.iter().position(|t| c["topic"] == *t.topic) {
                        channels[i] = Some(c.clone());
                    }
                }
            }
        }
    }
    for (t, c) in topics.iter().zip(&channels) {
        let c = c.as_ref().unwrap();
        assert_eq!(c["schemaName"], *t.ty.type_name, "{}", t.topic);
        assert_eq!(c["schemaEncoding"], "ros2msg");
        assert_eq!(c["encoding"], "cdr");
        assert_eq!(c["schema"], *t.ty.definition);
    }
    for (i, c) in channels.iter().enumerate() {
        let m = serde_json::json!({"op": "subscribe", "subscriptions": [
            {"id": i as u32 + 1, "channelId": c.as_ref().unwrap()["id"]}]});
        ws.send(Message::text(m.to_string())).unwrap();
    }

    // Published until every channel delivered each of its messages, byte for byte.
    let mut got: Vec<Vec<bool>> = topics.iter().map(|t| vec![false; t.wire.len()]).collect();
    // What the client received, per topic and message, for the ROS 2 readers below.
    let mut received: Vec<Vec<Vec<u8>>> = topics
        .iter()
        .map(|t| vec![Vec::new(); t.wire.len()])
        .collect();
    let t0 = Instant::now();
    while got.iter().flatten().any(|g| !g) {
        assert!(
            t0.elapsed() < PATIENCE,
            "not every message arrived: {got:?}"
        );
        for (t, (_, p)) in topics.iter().zip(pubs.iter_mut()) {
            for w in &t.wire {
                p.send_cdr(w).unwrap();
            }
        }
        while let Some(m) = next(&mut ws) {
            let Message::Binary(b) = m else { continue };
            assert_eq!(b[0], 1, "messageData opcode");
            let sub = u32::from_le_bytes(b[1..5].try_into().unwrap()) as usize;
            let payload = &b[13..];
            let t = &topics[sub - 1];
            let k = t.wire.iter().position(|w| w.as_slice() == payload);
            let k = k.unwrap_or_else(|| panic!("{}: payload is no published message", t.topic));
            got[sub - 1][k] = true;
            received[sub - 1][k] = payload.to_vec();
        }
    }
    // A protocol-breaking publisher's message (big-endian CDR header) is not sent, and is
    // counted: the next good message still arrives.
    let before = bridge
        .stats()
        .missed
        .get(&topics[0].topic)
        .copied()
        .unwrap_or(0);
    let mut raw = pubs[0].0.publisher(8).unwrap();
    raw.send_parts(&[&[0; 4], &[0, 0, 0, 0], &topics[0].wire[0][4..]])
        .unwrap();
    pubs[0].1.send_cdr(&topics[0].wire[1]).unwrap();
    let t0 = Instant::now();
    loop {
        assert!(t0.elapsed() < PATIENCE, "the good message never arrived");
        let Some(Message::Binary(b)) = next(&mut ws) else {
            continue;
        };
        let sub = u32::from_le_bytes(b[1..5].try_into().unwrap());
        assert!(
            b[13..] != topics[0].wire[0][4..],
            "the bad message was sent"
        );
        if sub == 1 && b[13..] == topics[0].wire[1] {
            break;
        }
    }
    // Counted once the pump has looked at the topic's counts again.
    let t0 = Instant::now();
    while bridge
        .stats()
        .missed
        .get(&topics[0].topic)
        .copied()
        .unwrap_or(0)
        <= before
    {
        let missed = bridge.stats().missed;
        assert!(t0.elapsed() < PATIENCE, "not counted: {missed:?}");
        std::thread::sleep(Duration::from_millis(5));
    }
    drop(ws);
    bridge.stop();

    // What a Foxglove client holds — each advertised schema (name, encoding, definition) and
    // the payloads received — decodes field by field in ROS 2's own readers, Foxglove's
    // `mcap-ros2-support` among them: put into an MCAP file as received, channel metadata
    // left out (so `rosbags` computes the RIHS01 from the advertised definition alone).
    let dir = std::env::temp_dir().join(format!("horus-fox-ros2-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("live.mcap");
    let _ = std::fs::remove_file(&file);
    let mut w = RecordingWriter::create(&file, WriterOptions::default()).unwrap();
    let mut t_ns = 1u64;
    for ((t, c), payloads) in topics.iter().zip(&channels).zip(&received) {
        let c = c.as_ref().unwrap();
        let schema = RawSchema {
            name: c["schemaName"].as_str().unwrap(),
            schema_encoding: c["schemaEncoding"].as_str().unwrap(),
            text: c["schema"].as_str().unwrap(),
            message_encoding: c["encoding"].as_str().unwrap(),
        };
        let ch = w
            .add_raw_channel(&t.topic, schema, Default::default())
            .unwrap();
        for p in payloads {
            t_ns += 1;
            w.write(ch, t_ns, p).unwrap();
        }
    }
    w.finish().unwrap();
    let expected = dir.join("live.expected.json");
    ros2_values::expected_file(&topics, &expected);
    if let Some(out) = ros2_values::check_with_ros2_readers(&file, &expected) {
        assert!(
            out.contains("OK: 8 topics, 24 messages, 3 readers"),
            "{out}"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}
