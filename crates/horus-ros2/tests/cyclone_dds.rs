//! Topics between horus and a second DDS implementation, Eclipse Cyclone DDS (what
//! rmw_cyclonedds_cpp runs on), through the bridge running as its own process. The peer is
//! `tests/cyclone/peer.py`: Cyclone DDS's Python binding (the `cyclonedds` 11.0.1 wheel, C
//! library bundled, in the ROS 2 venv of `make setup-ros2`) speaking ROS 2's DDS conventions
//! (`rt/` topics, `pkg::msg::dds_::Type_` type names, XCDR1 little-endian, the type hash in
//! USER_DATA). No rmw_cyclonedds wheel exists, so this is Cyclone's wire, not rclpy on it.
//!
//! As the rclpy tests: every test runs its processes in a network namespace of its own with
//! only `lo`, Cyclone pinned there too (`tests/cyclone/localhost.xml`: no multicast, SPDP
//! unicast to 127.0.0.1), a horus namespace and ROS 2 domain of its own; nothing is left in
//! /dev/shm. Skipped (with the reason printed) where they are: no ROS 2 venv, or not root.

mod common;

use std::time::{Duration, Instant};

use common::{line_bytes, World, PATIENCE};
use horus::inspect::{open_or_create_ros_topic, open_or_create_ros_topic_durable, ros_qos};
use horus::Durability;
use horus_ros2::Direction;
use horus_ros_msgs::horus_cdr::{encode_message, RosMessage};
use horus_ros_msgs::std_msgs::msg::{
    Int32, MultiArrayDimension, MultiArrayLayout, String as RosString, UInt8MultiArray,
};

bridge_process_test!();

macro_rules! skip_unless_ready {
    () => {
        if let Some(why) = common::skip_reason() {
            eprintln!("SKIPPED: {why}");
            return;
        }
    };
}

/// Data bytes of the large message (`peer.py`'s `BLOB`): 256 KiB, sent as DATA_FRAGs.
const BLOB: usize = 256 << 10;

/// Room for the large message and its layout.
const ROOM: usize = 512 << 10;

/// `peer.py`'s String.
fn cyclone_string() -> RosString {
    RosString {
        data: "hello from Cyclone DDS".into(),
    }
}

/// `peer.py`'s UInt8MultiArray: 256 KiB of `(i * 31 + 5) & 0xff`, one dimension.
fn cyclone_blob() -> UInt8MultiArray {
    UInt8MultiArray {
        layout: MultiArrayLayout {
            dim: vec![MultiArrayDimension {
                label: "bytes".into(),
                size: BLOB as u32,
                stride: BLOB as u32,
            }],
            data_offset: 0,
        },
        data: (0..BLOB).map(|i| (i * 31 + 5) as u8).collect(),
    }
}

/// `peer.py`'s SPEC for `topic` of type `M`: `TOPIC:TYPE:HASH[:latched]`.
fn spec<M: RosMessage>(topic: &str, latched: bool) -> String {
    let flag = if latched { ":latched" } else { "" };
    format!("{topic}:{}:{}{flag}", M::TYPE_NAME, M::TYPE_HASH)
}

/// What the Cyclone subscriber received is `want` byte for byte, then (unfragmented
/// messages) zero bytes up to a multiple of 4: RustDDS pads a DATA payload
/// (docs/ros2-bridge.md, "What is not done").
fn assert_same_message(got: &[u8], want: &[u8], what: &str) {
    assert!(
        got.len() == want.len() || got.len() == want.len().next_multiple_of(4),
        "{what}: {} bytes for a message of {}",
        got.len(),
        want.len()
    );
    assert!(got[..want.len()] == *want, "{what}: bytes differ");
    assert!(got[want.len()..].iter().all(|b| *b == 0), "{what}: padding");
}

/// The route of `topic` in `direction` in the bridge's status, once `pred` holds for it.
fn route_when(
    namespace: &str,
    topic: &str,
    direction: Direction,
    what: &str,
    pred: impl Fn(&horus_ros2::TopicStatus) -> bool,
) -> horus_ros2::TopicStatus {
    let st = common::wait_status(namespace, what, |s| {
        s.topics
            .iter()
            .any(|t| t.horus_topic == topic && t.direction == direction && pred(t))
    });
    st.topics
        .into_iter()
        .find(|t| t.horus_topic == topic && t.direction == direction && pred(t))
        .unwrap()
}

#[test]
fn cyclone_publisher_reaches_horus_subscribers_byte_for_byte() {
    skip_unless_ready!();
    let w = World::new("cyc_in");
    let s_ty = common::ros2_type::<RosString>();
    let b_ty = common::ros2_type::<UInt8MultiArray>();
    let vs = open_or_create_ros_topic(&w.namespace, "demo/c_str", &s_ty, &ros_qos(ROOM)).unwrap();
    let vb = open_or_create_ros_topic(&w.namespace, "demo/c_blob", &b_ty, &ros_qos(ROOM)).unwrap();
    let mut rs = vs.ros_subscriber(true).unwrap();
    let mut rb = vb.ros_subscriber(true).unwrap();
    let bridge = w.bridge();
    let specs = [
        spec::<RosString>("/demo/c_str", false),
        spec::<UInt8MultiArray>("/demo/c_blob", false),
    ];
    let specs: Vec<&str> = specs.iter().map(String::as_str).collect();
    let cyclone = w.cyclone("pub", &specs);
    let (_, sent_str) = line_bytes(&cyclone.next_line("sent /demo/c_str "));
    let (_, sent_blob) = line_bytes(&cyclone.next_line("sent /demo/c_blob "));
    // Cyclone's serialization is ROS 2's (horus's encoder: the same bytes).
    assert!(sent_str == encode_message(&cyclone_string()).unwrap());
    assert!(sent_blob == encode_message(&cyclone_blob()).unwrap());
    assert!(sent_blob.len() > BLOB);

    let got = rs.recv_timeout(PATIENCE).expect("no String from Cyclone");
    assert!(got.cdr() == &sent_str[..], "String: bytes differ");
    let got = rb
        .recv_timeout(PATIENCE)
        .expect("no 256 KiB message from Cyclone");
    assert_eq!(got.cdr().len(), sent_blob.len(), "256 KiB message: length");
    assert!(got.cdr() == &sent_blob[..], "256 KiB message: bytes differ");
    drop(got);

    for topic in ["demo/c_str", "demo/c_blob"] {
        let t = route_when(&w.namespace, topic, Direction::FromRos, "carried", |t| {
            t.counters.messages == 1
        });
        let c = &t.counters;
        assert_eq!(
            (c.lost, c.refused, c.malformed, c.oversize),
            (0, 0, 0, 0),
            "{t:?}"
        );
        assert_eq!(t.refusals, 0, "{t:?}");
    }
    cyclone.stop();
    bridge.stop();
    drop((rs, rb));
    w.clean(vec![vs, vb]);
}

#[test]
fn horus_publishers_reach_a_cyclone_subscriber_byte_for_byte() {
    skip_unless_ready!();
    let w = World::new("cyc_out");
    let s_ty = common::ros2_type::<RosString>();
    let b_ty = common::ros2_type::<UInt8MultiArray>();
    let vs = open_or_create_ros_topic(&w.namespace, "demo/h_str", &s_ty, &ros_qos(ROOM)).unwrap();
    let vb = open_or_create_ros_topic(&w.namespace, "demo/h_blob", &b_ty, &ros_qos(ROOM)).unwrap();
    let mut ps = vs.ros_publisher().unwrap();
    let mut pb = vb.ros_publisher().unwrap();
    let want_str = encode_message(&RosString {
        data: "hello from horus".into(),
    })
    .unwrap();
    let mut blob = cyclone_blob();
    blob.data.reverse();
    let want_blob = encode_message(&blob).unwrap();
    let bridge = w.bridge();
    let cyclone = w.cyclone(
        "sub",
        &[
            &spec::<RosString>("/demo/h_str", false),
            &spec::<UInt8MultiArray>("/demo/h_blob", false),
        ],
    );
    // Volatile topics: what is published before the DDS writer matched Cyclone's reader is
    // not delivered (as between two DDS nodes), so publish until each topic arrived.
    let (mut got_str, mut got_blob) = (None, None);
    let deadline = Instant::now() + PATIENCE;
    while got_str.is_none() || got_blob.is_none() {
        assert!(
            Instant::now() < deadline,
            "Cyclone got only {got_str:?} / {}",
            got_blob.is_some()
        );
        if got_str.is_none() {
            ps.send_cdr(&want_str).unwrap();
        }
        if got_blob.is_none() {
            pb.send_cdr(&want_blob).unwrap();
        }
        std::thread::sleep(Duration::from_millis(200));
        for l in cyclone.drain() {
            if l.starts_with("got ") {
                match line_bytes(&l) {
                    (t, b) if t == "/demo/h_str" => got_str = Some(b),
                    (t, b) if t == "/demo/h_blob" => got_blob = Some(b),
                    (t, _) => panic!("a message on {t}"),
                }
            }
        }
    }
    assert_same_message(&got_str.unwrap(), &want_str, "String");
    assert_same_message(&got_blob.unwrap(), &want_blob, "256 KiB message");
    for topic in ["demo/h_str", "demo/h_blob"] {
        let t = route_when(&w.namespace, topic, Direction::ToRos, "carried", |t| {
            t.counters.messages >= 1
        });
        let c = &t.counters;
        assert_eq!(
            (c.lost, c.refused, c.malformed, c.oversize),
            (0, 0, 0, 0),
            "{t:?}"
        );
    }
    cyclone.stop();
    bridge.stop();
    drop((ps, pb));
    w.clean(vec![vs, vb]);
}

#[test]
fn a_late_transient_local_cyclone_subscriber_gets_the_latched_message() {
    skip_unless_ready!();
    let w = World::new("cyc_latched");
    let want = encode_message(&RosString {
        data: "latched by horus".into(),
    })
    .unwrap();
    let bridge = w.bridge();
    let v = open_or_create_ros_topic_durable(
        &w.namespace,
        "demo/map_like",
        &common::ros2_type::<RosString>(),
        &ros_qos(4096),
        Durability::TransientLocal { depth: 1 },
    )
    .unwrap();
    let mut p = v.ros_publisher().unwrap();
    p.send_cdr(&want).unwrap();
    // Published before any Cyclone participant exists: only the latch can deliver it.
    let cyclone = w.cyclone("sub", &[&spec::<RosString>("/demo/map_like", true)]);
    let (topic, bytes) = line_bytes(&cyclone.next_line("got "));
    assert_eq!(topic, "/demo/map_like");
    assert_same_message(&bytes, &want, "/demo/map_like");
    cyclone.stop();
    bridge.stop();
    drop(p);
    w.clean(vec![v]);
}

/// Samples of the malformed writer: no more than the horus topic's depth (4, `ros_qos`),
/// which is the depth of the bridge's DDS reader history (KEEP_LAST): a burst written
/// faster than the route takes loses its oldest beyond that, as a ROS 2 reader of that
/// depth would.
const BAD: u64 = 3;

#[test]
fn a_cyclone_writer_of_another_type_is_refused_and_malformed_samples_are_counted() {
    skip_unless_ready!();
    let w = World::new("cyc_bad");
    let v = open_or_create_ros_topic(
        &w.namespace,
        "demo/c_bad",
        &common::ros2_type::<RosString>(),
        &ros_qos(4096),
    )
    .unwrap();
    let mut r = v.ros_subscriber(true).unwrap();
    let bridge = w.bridge();

    // A writer of std_msgs/Int32 on the String topic: refused, with both types said.
    let other = w.cyclone("hold", &[&spec::<Int32>("/demo/c_bad", false)]);
    let t = route_when(
        &w.namespace,
        "demo/c_bad",
        Direction::FromRos,
        "the refusal",
        |t| t.refused.is_some(),
    );
    let why = t.refused.as_deref().unwrap();
    assert!(why.contains("std_msgs::msg::dds_::Int32_"), "{why}");
    assert!(why.contains("std_msgs::msg::dds_::String_"), "{why}");
    assert!(t.refusals >= 1, "{t:?}");
    other.stop();

    // A writer of String's name and hash whose samples are no String (a length of 4 GiB
    // and nothing after it): each counted malformed, none reaches horus, the bridge runs on.
    let bad = w.cyclone(
        "bad",
        &[&spec::<RosString>("/demo/c_bad", false), &BAD.to_string()],
    );
    bad.next_line("sent_bad ");
    let t = route_when(
        &w.namespace,
        "demo/c_bad",
        Direction::FromRos,
        "malformed",
        |t| t.counters.malformed >= BAD,
    );
    assert_eq!(t.counters.malformed, BAD, "{t:?}");
    assert_eq!(t.counters.messages, 0, "{t:?}");
    bad.stop();

    // A good Cyclone writer still crosses, and only its message arrived.
    let good = w.cyclone("pub", &[&spec::<RosString>("/demo/c_bad", false)]);
    let (_, sent) = line_bytes(&good.next_line("sent "));
    let got = r
        .recv_timeout(PATIENCE)
        .expect("nothing from the good writer");
    assert!(got.cdr() == &sent[..], "bytes differ");
    drop(got);
    assert!(
        r.try_recv().is_none(),
        "more than the good message reached horus"
    );
    good.stop();
    bridge.stop();
    drop(r);
    w.clean(vec![v]);
}

/// Samples of the burst: the Cyclone writer's KEEP_LAST depth (10), so that it never drops
/// one itself (no GAP), and more than the route's depth (4, `ros_qos`), the KEEP_LAST
/// depth of the bridge's DDS reader history.
const BURST: u64 = 10;

/// A reliable Cyclone writer bursts more samples than the route's DDS reader history keeps:
/// what the history evicts before the route takes the writer's first sample shows no gap
/// in the sequence numbers the route takes, and was counted by nothing (found while
/// writing the malformed-writer test); RustDDS now counts those evictions (HORUS-PATCH
/// item 19) and the route adds them to `lost`. Whenever the route's first take comes
/// (the race between the burst and the route's thread decides how many are evicted, and
/// before or after it), every sample is carried or counted: carried + lost (+ refused,
/// a writer not yet accepted by the scan) = the burst, and the last sample reached horus.
#[test]
fn a_burst_past_the_routes_depth_before_its_first_take_is_carried_or_counted_lost() {
    skip_unless_ready!();
    let w = World::new("cyc_burst");
    let v = open_or_create_ros_topic(
        &w.namespace,
        "demo/c_burst",
        &common::ros2_type::<RosString>(),
        &ros_qos(4096),
    )
    .unwrap();
    let mut r = v.ros_subscriber(true).unwrap();
    let bridge = w.bridge();
    let burst = w.cyclone(
        "burst",
        &[
            &spec::<RosString>("/demo/c_burst", false),
            &BURST.to_string(),
        ],
    );
    burst.next_line("sent_burst ");
    let t = route_when(
        &w.namespace,
        "demo/c_burst",
        Direction::FromRos,
        "the burst carried or counted",
        |t| t.counters.messages + t.counters.lost + t.counters.refused >= BURST,
    );
    let c = &t.counters;
    assert_eq!(c.messages + c.lost + c.refused, BURST, "{t:?}");
    assert_eq!((c.malformed, c.oversize, c.replayed), (0, 0, 0), "{t:?}");
    let mut got = Vec::new();
    while let Some(s) = r.try_recv() {
        got.push(s.cdr().to_vec());
    }
    // The last sample is never evicted: it crossed (the horus ring, depth 4, keeps the
    // newest for a subscriber that reads after the burst).
    let last = encode_message(&RosString {
        data: (BURST - 1).to_string(),
    })
    .unwrap();
    assert!(got.last().is_some_and(|m| *m == last), "{t:?}");
    eprintln!(
        "burst of {BURST}: carried {}, lost {}, refused {}",
        c.messages, c.lost, c.refused
    );
    burst.stop();
    bridge.stop();
    drop(r);
    w.clean(vec![v]);
}
