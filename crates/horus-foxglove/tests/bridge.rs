//! The bridge in-process against a tungstenite client speaking `foxglove.websocket.v1`:
//! advertisements with the mapped schemas, scan and cloud values as published, and a client
//! that never reads losing messages for itself only. Behaviour only; nothing timed.

use std::net::TcpStream;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use horus::msgs::{CmdVel, LaserScan, MessageDescription, PointCloud, XyzI};
use horus::prelude::*;
use horus_foxglove::schemas::Mapping;
use horus_foxglove::{Bridge, BridgeOptions};
use serde_json::Value;
use tungstenite::client::IntoClientRequest;
use tungstenite::{Message, WebSocket};

/// Only turns a hang into a failure.
const PATIENCE: Duration = Duration::from_secs(60);

fn unique_ns(tag: &str) -> String {
    static N: AtomicU32 = AtomicU32::new(0);
    format!(
        "test-fox-{tag}-{}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    )
}

fn start(ns: &str) -> Bridge {
    Bridge::start(BridgeOptions::new("127.0.0.1:0".parse().unwrap(), ns)).unwrap()
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
    let (mut ws, resp) = tungstenite::client(req, stream).unwrap();
    assert_eq!(
        resp.headers()["Sec-WebSocket-Protocol"],
        "foxglove.websocket.v1"
    );
    ws.get_mut()
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

/// Reads text messages until every topic of `topics` is advertised; returns their channels.
fn advertised(ws: &mut WebSocket<TcpStream>, topics: &[&str]) -> Vec<Value> {
    let mut found: Vec<Option<Value>> = vec![None; topics.len()];
    let t0 = Instant::now();
    while found.iter().any(Option::is_none) {
        assert!(t0.elapsed() < PATIENCE, "{topics:?} never advertised");
        if let Some(Message::Text(t)) = next(ws) {
            let v: Value = serde_json::from_str(t.as_str()).unwrap();
            if v["op"] == "advertise" {
                for c in v["channels"].as_array().unwrap() {
                    if let Some(i) = topics.iter().position(|t| c["topic"] == *t) {
                        found[i] = Some(c.clone());
                    }
                }
            }
        }
    }
    found.into_iter().flatten().collect()
}

fn subscribe(ws: &mut WebSocket<TcpStream>, sub: u32, channel: &Value) {
    let m = serde_json::json!({"op": "subscribe", "subscriptions": [{"id": sub, "channelId": channel["id"]}]});
    ws.send(Message::text(m.to_string())).unwrap();
}

#[test]
fn standard_types_map_to_foxglove_schemas_and_others_to_cdr() {
    let name = |d: MessageDescription| Mapping::for_description(&d).schema(&d).name;
    assert_eq!(
        name(MessageDescription::of::<LaserScan>()),
        "foxglove.LaserScan"
    );
    assert_eq!(
        name(MessageDescription::of::<PointCloud>()),
        "foxglove.PointCloud"
    );
    assert_eq!(
        name(MessageDescription::of::<horus::msgs::Image>()),
        "foxglove.RawImage"
    );
    assert_eq!(
        name(MessageDescription::of::<horus::msgs::Odometry>()),
        "foxglove.PoseInFrame"
    );
    let d = MessageDescription::of::<CmdVel>();
    let s = Mapping::for_description(&d).schema(&d);
    assert_eq!((s.encoding, s.schema_encoding), ("cdr", "ros2msg"));
}

#[test]
fn scan_and_cloud_arrive_with_the_published_values() {
    let ns = unique_ns("values");
    let scan_t = Topic::<LaserScan>::builder("fx/scan")
        .namespace(&ns)
        .open()
        .unwrap();
    let cloud_t = Topic::<PointCloud>::builder("fx/cloud")
        .namespace(&ns)
        .max_tail_bytes(16 * 100)
        .open()
        .unwrap();
    let (mut scan_pub, mut cloud_pub) = (scan_t.publisher().unwrap(), cloud_t.publisher().unwrap());
    let bridge = start(&ns);
    let mut ws = connect(&bridge);
    let chans = advertised(&mut ws, &["fx/scan", "fx/cloud"]);
    assert_eq!(chans[0]["schemaName"], "foxglove.LaserScan");
    assert_eq!(chans[1]["schemaName"], "foxglove.PointCloud");
    subscribe(&mut ws, 1, &chans[0]);
    subscribe(&mut ws, 2, &chans[1]);

    let mut scan = LaserScan {
        num_ranges: 3,
        angle_min: -1.0,
        angle_max: 1.0,
        ..bytemuck::Zeroable::zeroed()
    };
    scan.ranges[..3].copy_from_slice(&[1.5, 2.5, f32::INFINITY]);
    let pts: Vec<XyzI> = (0..100)
        .map(|i| XyzI {
            x: i as f32,
            y: -(i as f32),
            z: 0.5,
            intensity: 7.0,
        })
        .collect();
    let mut cloud = PointCloud::new(100, true);
    cloud.set_frame_id("lidar").unwrap();
    let (mut got_scan, mut got_cloud) = (None, None);
    let t0 = Instant::now();
    let mut k = 0u64;
    while got_scan.is_none() || got_cloud.is_none() {
        assert!(t0.elapsed() < PATIENCE, "no scan or cloud arrived");
        k += 1;
        scan.stamp_ns = k;
        cloud.stamp_ns = k;
        scan_pub.send(scan).unwrap();
        cloud_pub
            .send_with_tail(&cloud, bytemuck::cast_slice(&pts))
            .unwrap();
        while let Some(m) = next(&mut ws) {
            if let Message::Binary(b) = m {
                assert_eq!(b[0], 1, "messageData opcode");
                let sub = u32::from_le_bytes(b[1..5].try_into().unwrap());
                let v: Value = serde_json::from_slice(&b[13..]).unwrap();
                if sub == 1 {
                    got_scan = Some(v);
                } else {
                    got_cloud = Some(v);
                }
            }
        }
    }
    let s = got_scan.unwrap();
    assert_eq!(s["ranges"], serde_json::json!([1.5, 2.5, null]));
    assert_eq!(
        (s["start_angle"].as_f64(), s["end_angle"].as_f64()),
        (Some(-1.0), Some(1.0))
    );
    let c = got_cloud.unwrap();
    assert_eq!(c["frame_id"], "lidar");
    assert_eq!(c["point_stride"], 16);
    use base64::Engine as _;
    let data = base64::engine::general_purpose::STANDARD
        .decode(c["data"].as_str().unwrap())
        .unwrap();
    assert_eq!(data, bytemuck::cast_slice::<XyzI, u8>(&pts));
    drop(ws);
    bridge.stop();
}

#[test]
fn a_client_that_never_reads_drops_for_itself_only() {
    let ns = unique_ns("lazy");
    let n = 4096usize; // 64 KiB of XyzI points
    let t = Topic::<PointCloud>::builder("fx/big")
        .namespace(&ns)
        .max_tail_bytes(16 * n)
        .open()
        .unwrap();
    let mut publ = t.publisher().unwrap();
    // A subscriber that does not read during the run (DropOldest): it keeps the loaned chunks
    // pinned until overwritten. (An observer cannot read a loaned message once every
    // subscriber released it: see docs/foxglove.md, limits.)
    let mut sub = t.subscriber().unwrap();
    let bridge = start(&ns);
    let mut lazy = connect(&bridge);
    let ch = advertised(&mut lazy, &["fx/big"]);
    subscribe(&mut lazy, 9, &ch[0]);
    let pts = vec![XyzI::default(); n];
    let t0 = Instant::now();
    let mut k = 0u64;
    loop {
        assert!(
            t0.elapsed() < PATIENCE,
            "the lazy client never dropped: {:?}",
            bridge.stats()
        );
        k += 1;
        let mut cloud = PointCloud::new(n as u32, true);
        cloud.seq = k as u32;
        let d = publ
            .send_with_tail(&cloud, bytemuck::cast_slice(&pts))
            .unwrap();
        // The bridge is an observer: only our subscriber counts.
        assert_eq!(d.subscribers, 1);
        let stats = bridge.stats();
        if let Some(c) = stats.clients.first() {
            if c.dropped.get("fx/big").copied().unwrap_or(0) > 0 {
                break;
            }
        }
        std::thread::sleep(Duration::from_millis(2));
    }
    // Our subscriber still has the newest message: nothing the bridge did reached it.
    let mut last = None;
    while let Some(m) = sub.try_recv() {
        last = Some(m.seq);
    }
    assert_eq!(last, Some(k as u32));
    drop(lazy);
    bridge.stop();
}

#[test]
fn odometry_is_a_pose_and_a_frame_transform() {
    let ns = unique_ns("odom");
    let t = Topic::<horus::msgs::Odometry>::builder("fx/odom")
        .namespace(&ns)
        .open()
        .unwrap();
    let mut publ = t.publisher().unwrap();
    let bridge = start(&ns);
    let mut ws = connect(&bridge);
    let chans = advertised(&mut ws, &["fx/odom", "fx/odom/tf"]);
    assert_eq!(chans[0]["schemaName"], "foxglove.PoseInFrame");
    assert_eq!(chans[1]["schemaName"], "foxglove.FrameTransform");
    subscribe(&mut ws, 3, &chans[1]);
    let mut odom: horus::msgs::Odometry = bytemuck::Zeroable::zeroed();
    odom.set_frame_id("odom").unwrap();
    odom.set_child_frame_id("base_link").unwrap();
    odom.pose.position.y = -2.0;
    odom.pose.orientation.w = 1.0;
    let t0 = Instant::now();
    let tf = loop {
        assert!(t0.elapsed() < PATIENCE, "no transform arrived");
        publ.send(odom).unwrap();
        if let Some(Message::Binary(b)) = next(&mut ws) {
            break serde_json::from_slice::<Value>(&b[13..]).unwrap();
        }
    };
    assert_eq!(tf["parent_frame_id"], "odom");
    assert_eq!(tf["child_frame_id"], "base_link");
    assert_eq!(tf["translation"]["y"], -2.0);
    drop(ws);
    bridge.stop();
}
