//! A DDS peer that sends what no ROS 2 node would: a string whose length claims 4 GiB, a
//! truncated message, big-endian CDR, a message larger than the topic takes. The bridge
//! drops each one, counts it (`malformed`, `oversize`), keeps running, and carries the valid
//! message that follows. The peer is RustDDS in its own process (this test binary
//! re-executed), in a network namespace with only `lo`.

mod common;

use bytes::Bytes;
use common::{World, PATIENCE};
use horus::inspect::{open_or_create_ros_topic, ros_qos};
use horus_msgs::Ros2Type;
use horus_ros2::raw::{PassThrough, WireCdr};
use horus_ros2::Direction;
use horus_ros_msgs::horus_cdr::RosMessage;
use horus_ros_msgs::std_msgs::msg::String as RosString;
use rustdds::no_key::SerializerAdapter;
use rustdds::{policy, QosPolicyBuilder, RepresentationIdentifier, TopicKind};

bridge_process_test!();

/// Set in the hostile peer child: the DDS topic it writes.
const HOSTILE_ENV: &str = "HORUS_ROS2_TEST_HOSTILE";

/// A valid `std_msgs/String` "ok".
const VALID: [u8; 11] = [0, 1, 0, 0, 3, 0, 0, 0, b'o', b'k', 0];

/// Writes whatever bytes it is given, declared big-endian CDR.
struct BigEndian;

impl SerializerAdapter<WireCdr> for BigEndian {
    type Error = std::convert::Infallible;
    fn output_encoding() -> RepresentationIdentifier {
        RepresentationIdentifier::CDR_BE
    }
    fn to_bytes(value: &WireCdr) -> Result<Bytes, Self::Error> {
        Ok(value.0.slice(4..))
    }
}

/// The hostile peer: writes the bad payloads, then the valid one, on transient-local
/// writers (so the bridge's reader gets them whenever it matches: RustDDS 0.15 cannot say
/// when a writer matched); runs until stdin closes.
#[test]
fn hostile_peer_process() {
    let Ok(topic_name) = std::env::var(HOSTILE_ENV) else {
        return;
    };
    let domain = horus_ros2::parse_domain_id(&std::env::var("ROS_DOMAIN_ID").unwrap()).unwrap();
    let dp = rustdds::DomainParticipantBuilder::new(domain)
        .build()
        .unwrap();
    let qos = QosPolicyBuilder::new()
        .reliability(policy::Reliability::Reliable {
            max_blocking_time: rustdds::Duration::from_millis(100),
        })
        .durability(policy::Durability::TransientLocal)
        .history(policy::History::KeepLast { depth: 16 })
        .build();
    let topic = dp
        .create_topic(
            topic_name,
            "std_msgs::msg::dds_::String_".into(),
            &qos,
            TopicKind::NoKey,
        )
        .unwrap();
    let publisher = dp.create_publisher(&qos).unwrap();
    let le = publisher
        .create_datawriter_no_key::<WireCdr, PassThrough>(&topic, None)
        .unwrap();
    let be = publisher
        .create_datawriter_no_key::<WireCdr, BigEndian>(&topic, None)
        .unwrap();
    println!("hostile: ready");
    let huge_len = [0, 1, 0, 0, 0xf0, 0xff, 0xff, 0xff, b'x', 0];
    let truncated = [0, 1, 0, 0, 9, 0, 0, 0, b'a', b'b'];
    let mut oversize = vec![0, 1, 0, 0];
    let n: u32 = 64 * 1024;
    oversize.extend_from_slice(&n.to_le_bytes());
    oversize.resize(8 + n as usize, b'z');
    *oversize.last_mut().unwrap() = 0;
    for bad in [&huge_len[..], &truncated[..], &oversize[..]] {
        le.write(WireCdr(Bytes::copy_from_slice(bad)), None)
            .unwrap();
    }
    be.write(WireCdr(Bytes::from_static(&VALID)), None).unwrap();
    le.write(WireCdr(Bytes::from_static(&VALID)), None).unwrap();
    println!("hostile: sent");
    let _ = std::io::stdin().lines().count();
}

#[test]
fn malformed_and_oversize_payloads_are_dropped_counted_and_the_bridge_keeps_running() {
    if let Some(why) = common::skip_reason() {
        eprintln!("SKIPPED: {why}");
        return;
    }
    let w = World::new("hostile");
    let ty = Ros2Type::new(
        RosString::TYPE_NAME,
        RosString::TYPE_HASH,
        RosString::DEFINITION,
    );
    // Room for 16 KiB messages: the 64 KiB one is oversize.
    let v = open_or_create_ros_topic(&w.namespace, "demo/h", &ty, &ros_qos(16 * 1024)).unwrap();
    let mut r = v.ros_subscriber(true).unwrap();
    let bridge = w.bridge();
    let peer = w.spawn_self("hostile_peer_process", HOSTILE_ENV, "rt/demo/h");
    peer.expect_line("hostile: sent");
    let s = r
        .recv_timeout(PATIENCE)
        .expect("the valid message after the bad ones");
    assert_eq!(s.cdr(), &VALID[..]);
    drop(s);
    let st = common::wait_status(&w.namespace, "the bad payloads counted", |s| {
        s.topics.iter().any(|t| {
            let c = &t.counters;
            t.direction == Direction::FromRos
                && c.malformed >= 3
                && c.oversize >= 1
                && c.messages >= 1
        })
    });
    let t = st
        .topics
        .iter()
        .find(|t| t.direction == Direction::FromRos)
        .unwrap();
    assert_eq!(t.counters.malformed, 3, "{t:?}"); // huge length, truncated, big-endian
    assert_eq!(t.counters.oversize, 1, "{t:?}");
    assert_eq!(t.counters.messages, 1, "{t:?}");
    assert!(r.try_recv().is_none(), "only the valid message crossed");
    peer.stop();
    bridge.stop();
    drop(r);
    v.unlink_if_unused();
    assert_eq!(w.leftovers(), Vec::<String>::new());
}
