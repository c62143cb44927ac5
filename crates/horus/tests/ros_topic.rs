//! ROS 2 types on horus topics (`Topic<Ros<M>>`): published in one pass in place, received
//! across processes and viewed in place in the chunk; typed refusals (encoding, size, other
//! types); hostile chunk content gives typed decode errors and loses or miscounts nothing;
//! the topic describes its ROS type for tools, and run-time (`inspect`) endpoints meet
//! typed ones.

mod common;
mod ros_types;

use std::time::Duration;

use common::{enter_peer, peer_ns, report, segment_path, unique_ns, Peer};
use horus::cdr::{CdrWriter, DecodeError, EncodeError, RosMessage};
use horus::inspect::{self, RawRosSendError, TopicView};
use horus::msgs::{CmdVel, MessageDescription, Ros2Type};
use horus::ros::{Ros, RosSendError};
use horus::{Message, Overflow, Topic, TopicError};
use ros_types::{blob, Blob, BlobV2, Other, BLOB_DEFINITION};

/// Never expires on a loaded machine: a timeout is a failure.
const BLOCK: Overflow = Overflow::Block {
    timeout: Duration::from_secs(30),
};
/// Messages the cross-process test sends.
const N: u32 = 200;

fn blob_topic(ns: &str, name: &str) -> Topic<Ros<Blob>> {
    Topic::<Ros<Blob>>::builder(name)
        .namespace(ns)
        .overflow(BLOCK)
        .depth(4)
        .open()
        .unwrap()
}

#[test]
fn peer() {
    let Some((role, args)) = enter_peer() else {
        return;
    };
    let ns = peer_ns();
    match (role.as_str(), args.as_slice()) {
        ("publish", [topic]) => {
            let t = blob_topic(&ns, topic);
            let mut p = t.publisher().unwrap();
            assert!(common::wait_until(60, || p.subscribers() >= 1));
            for i in 0..N {
                p.publish(&blob(i, 1 + (i as usize * 37) % 3000)).unwrap();
            }
            report("sent");
            common::await_command("exit");
        }
        ("hostile", [topic]) => {
            let view = TopicView::open(&ns, topic).unwrap();
            let mut raw = view.publisher(8).unwrap();
            for bytes in hostile_messages() {
                raw.send(&bytes).unwrap();
            }
            report("sent");
            common::await_command("exit");
        }
        _ => panic!("unknown peer role {role} {args:?}"),
    }
}

#[test]
fn messages_cross_processes_and_are_viewed_in_place() {
    let ns = unique_ns("ros-xproc");
    let t = blob_topic(&ns, "blobs");
    let mut s = t.subscriber().unwrap();
    let mut publisher = Peer::spawn(&ns, "publish", &["blobs"]);
    for i in 0..N {
        let sample = s.recv_timeout(common::PEER_PATIENCE).unwrap();
        let want = blob(i, 1 + (i as usize * 37) % 3000);
        assert!(sample.is_zero_copy());
        let cdr = sample.cdr();
        assert_eq!(&cdr[..4], &[0, 1, 0, 0]);
        assert_eq!(cdr, horus::cdr::encode_message(&want).unwrap().as_slice());
        let v = sample.view().unwrap();
        assert_eq!(v.name, want.name);
        assert_eq!(v.values, want.values.as_slice());
        assert_eq!(v.small, want.small.as_slice());
        assert_eq!(v.points.len(), want.points.len());
        for (p, q) in v.points.iter().zip(&want.points) {
            assert_eq!((p.x, p.y), (q.x, q.y));
        }
        // The view points into the chunk, not into a copy.
        let chunk = cdr.as_ptr_range();
        assert!(chunk.contains(&v.values.as_ptr().cast()));
        assert!(chunk.contains(&v.name.as_ptr()));
        assert_eq!(sample.decode().unwrap(), want);
    }
    publisher.expect("sent");
    publisher.tell("exit");
    publisher.finish();
    let stats = s.stats();
    assert_eq!(
        (stats.received, stats.overrun, stats.malformed),
        (N as u64, 0, 0)
    );
    drop((s, t));
    assert!(!std::path::Path::new(&segment_path(&ns, "blobs")).exists());
}

#[test]
fn a_view_reads_sequences_in_place_at_their_alignment() {
    let ns = unique_ns("ros-inplace");
    let t = Topic::<Ros<Blob>>::builder("b")
        .namespace(&ns)
        .open()
        .unwrap();
    let mut p = t.publisher().unwrap();
    let mut s = t.subscriber().unwrap();
    let msg = blob(3, 1000);
    p.publish(&msg).unwrap();
    let sample = s.try_recv().unwrap();
    let body = sample.body();
    assert_eq!(
        body.as_ptr() as usize % 8,
        0,
        "the CDR body is 8-byte aligned"
    );
    assert_eq!(sample.cdr().len(), 4 + body.len());
    let v = sample.view().unwrap();
    assert!(body.as_ptr_range().contains(&v.values.as_ptr().cast()));
    assert_eq!(v.values.as_ptr() as usize % 4, 0);
    assert_eq!(v.values, msg.values.as_slice());
}

/// Hostile messages, each a whole chunk (the 8-byte frame, then whatever), and the error
/// each gives.
fn hostile_messages() -> Vec<Vec<u8>> {
    let frame = |header: [u8; 4], body: &[u8]| {
        let mut m = vec![0, 0, 0, 0];
        m.extend_from_slice(&header);
        m.extend_from_slice(body);
        m
    };
    let cdr = [0, 1, 0, 0];
    let good = horus::cdr::encode_message(&blob(1, 8)).unwrap();
    let mut string_past_end = good[4..].to_vec();
    string_past_end[..4].copy_from_slice(&u32::MAX.to_le_bytes());
    // The name "blob-1" (7 bytes with NUL, padded to 8), then the f32 count: claim
    // 0x4000_0001 floats (× 4 overflows 32 bits) in a few bytes.
    let mut count_overflow = good[4..].to_vec();
    count_overflow[12..16].copy_from_slice(&0x4000_0001u32.to_le_bytes());
    let mut bad_utf8 = good[4..].to_vec();
    bad_utf8[4] = 0xff;
    let truncated = good[4..good.len() - 3].to_vec();
    vec![
        frame([0xde, 0xad, 0xbe, 0xef], &good[4..]),
        frame(cdr, &string_past_end),
        frame(cdr, &count_overflow),
        frame(cdr, &bad_utf8),
        frame(cdr, &truncated),
        frame(cdr, &[]),
        frame(cdr, &good[4..]),
    ]
}

fn check_hostile(results: Vec<Result<Blob, DecodeError>>) {
    assert_eq!(results.len(), 7);
    assert!(
        matches!(results[0], Err(DecodeError::BadHeader(_))),
        "{:?}",
        results[0]
    );
    assert!(
        matches!(results[1], Err(DecodeError::CountTooLarge { .. })),
        "{:?}",
        results[1]
    );
    assert!(
        matches!(results[2], Err(DecodeError::CountTooLarge { .. })),
        "{:?}",
        results[2]
    );
    assert!(
        matches!(results[3], Err(DecodeError::StringNotUtf8 { .. })),
        "{:?}",
        results[3]
    );
    assert!(
        matches!(results[4], Err(DecodeError::Truncated { .. })),
        "{:?}",
        results[4]
    );
    assert!(
        matches!(results[5], Err(DecodeError::Truncated { .. })),
        "{:?}",
        results[5]
    );
    assert_eq!(results[6].as_ref().unwrap(), &blob(1, 8));
}

#[test]
fn hostile_chunks_give_decode_errors_and_the_subscriber_carries_on() {
    let ns = unique_ns("ros-hostile");
    let t = Topic::<Ros<Blob>>::builder("b")
        .namespace(&ns)
        .depth(16)
        .open()
        .unwrap();
    let mut s = t.subscriber().unwrap();
    let mut hostile = Peer::spawn(&ns, "hostile", &["b"]);
    hostile.expect("sent");
    let mut views = Vec::new();
    let mut decoded = Vec::new();
    while let Some(sample) = s.try_recv() {
        // Both ways of reading agree, and neither panics.
        views.push(sample.view().map(|_| ()));
        decoded.push(sample.decode());
    }
    hostile.tell("exit");
    hostile.finish();
    for (v, d) in views.iter().zip(&decoded) {
        assert_eq!(v.is_ok(), d.is_ok());
    }
    check_hostile(decoded);
    let stats = s.stats();
    assert_eq!((stats.received, stats.overrun, stats.malformed), (7, 0, 0));
}

#[test]
fn encoding_errors_and_oversize_messages_send_nothing() {
    let ns = unique_ns("ros-refuse");
    let t = Topic::<Ros<Blob>>::builder("b")
        .namespace(&ns)
        .max_tail_bytes(1024)
        .open()
        .unwrap();
    let mut p = t.publisher().unwrap();
    let mut s = t.subscriber().unwrap();
    let mut over_bound = blob(1, 4);
    over_bound.small = vec![1; 5];
    assert_eq!(
        p.publish(&over_bound),
        Err(RosSendError::Encode(EncodeError::BoundExceeded {
            field: "small",
            len: 5,
            bound: 4
        }))
    );
    let mut nul = blob(1, 4);
    nul.name = "a\0b".into();
    assert!(matches!(
        p.publish(&nul),
        Err(RosSendError::Encode(EncodeError::StringContainsNul { .. }))
    ));
    let big = blob(1, 300); // 1,200 bytes of floats alone
    let size = big.cdr_size().unwrap();
    assert_eq!(
        p.publish(&big),
        Err(RosSendError::TooLarge { size, max: 1024 })
    );
    // publish_with: a writer error, and a body shorter than declared.
    assert_eq!(
        p.publish_with(8, |w| w.write_string("x", "a\0", None)),
        Err(RosSendError::Encode(EncodeError::StringContainsNul {
            field: "x",
            at: 1
        }))
    );
    assert_eq!(
        p.publish_with(8, |w| w.write(1u32)),
        Err(RosSendError::LengthMismatch {
            declared: 8,
            written: 4
        })
    );
    assert!(s.try_recv().is_none(), "nothing was sent");
    assert_eq!(p.stats().sent, 0);
    // Every refused loan went back to the pool: as many messages as the pool holds still go.
    for i in 0..12 {
        p.publish(&blob(i, 4)).unwrap();
        assert_eq!(s.try_recv().unwrap().decode().unwrap(), blob(i, 4));
    }
    // The raw writer variant, with a body written by hand.
    let other = blob(9, 2);
    let n = other.cdr_size().unwrap();
    p.publish_with(n, |w: &mut CdrWriter<'_>| other.write_cdr(w))
        .unwrap();
    assert_eq!(s.try_recv().unwrap().decode().unwrap(), other);
}

/// `publish` encodes into a loan of the largest body in one pass; the message's own length
/// is what is sent (not the loan's), and `loan_encoded` dropped unsent sends nothing and
/// gives its chunk back.
#[test]
fn one_pass_publish_sends_the_bodys_length_and_an_unsent_loan_returns_its_chunk() {
    let ns = unique_ns("ros-one-pass");
    let t = Topic::<Ros<Blob>>::builder("b")
        .namespace(&ns)
        .max_tail_bytes(4096)
        .open()
        .unwrap();
    let mut p = t.publisher().unwrap();
    let mut s = t.subscriber().unwrap();
    for i in 0..40 {
        let msg = blob(i, i as usize % 7);
        let encoded = horus::cdr::encode_message(&msg).unwrap();
        // Loaned, encoded, dropped: nothing goes, the chunk comes back.
        let sample = p.loan_encoded(&msg).unwrap();
        drop(sample);
        assert!(s.try_recv().is_none(), "an unsent loan is not received");
        p.publish(&msg).unwrap();
        let got = s.try_recv().unwrap();
        assert_eq!(
            got.cdr(),
            &encoded[..],
            "exactly the message's bytes, no more"
        );
    }
    assert_eq!(p.stats().sent, 40);
}

#[test]
fn another_type_is_a_schema_mismatch_naming_both() {
    let ns = unique_ns("ros-mismatch");
    let _t = Topic::<Ros<Blob>>::builder("b")
        .namespace(&ns)
        .open()
        .unwrap();
    let msg = |e: TopicError| match e {
        TopicError::SchemaMismatch {
            expected, found, ..
        } => (expected, found),
        e => panic!("expected a schema mismatch, got {e}"),
    };
    let (expected, found) = msg(Topic::<Ros<Other>>::builder("b")
        .namespace(&ns)
        .open()
        .err()
        .unwrap());
    assert!(
        expected.starts_with("demo_msgs/msg/Other v1 (8 B"),
        "{expected}"
    );
    assert!(found.starts_with("demo_msgs/msg/Blob v1 (8 B"), "{found}");
    // Same name, another definition: the RIHS01 hash tells them apart.
    let (expected, found) = msg(Topic::<Ros<BlobV2>>::builder("b")
        .namespace(&ns)
        .open()
        .err()
        .unwrap());
    assert!(expected.contains("layout 0xb10b000000000002"), "{expected}");
    assert!(found.contains("layout 0xb10b000000000001"), "{found}");
    // A fixed-layout message on a ROS topic, and a ROS type on a fixed-layout topic.
    let (expected, found) = msg(Topic::<CmdVel>::builder("b")
        .namespace(&ns)
        .open()
        .err()
        .unwrap());
    assert!(expected.starts_with("horus/CmdVel"), "{expected}");
    assert!(found.starts_with("demo_msgs/msg/Blob"), "{found}");
    let _c = Topic::<CmdVel>::builder("c").namespace(&ns).open().unwrap();
    let (expected, found) = msg(Topic::<Ros<Blob>>::builder("c")
        .namespace(&ns)
        .open()
        .err()
        .unwrap());
    assert!(expected.starts_with("demo_msgs/msg/Blob"), "{expected}");
    assert!(found.starts_with("horus/CmdVel"), "{found}");
}

#[test]
fn the_schema_is_the_ros_name_and_rihs01_prefix() {
    let s = <Ros<Blob> as Message>::SCHEMA;
    assert_eq!(s.name(), "demo_msgs/msg/Blob");
    assert_eq!((s.version(), s.size(), s.align()), (1, 8, 8));
    assert_eq!(s.layout_hash(), 0xb10b_0000_0000_0001);
    const { assert!(<Ros<Blob> as Message>::HAS_TAIL) };
}

#[test]
fn the_topic_describes_its_ros_type_and_fixed_types_stay_as_they_were() {
    let ns = unique_ns("ros-describe");
    let _t = Topic::<Ros<Blob>>::builder("b")
        .namespace(&ns)
        .open()
        .unwrap();
    let view = TopicView::open(&ns, "b").unwrap();
    let d = view.description().unwrap();
    let ty = d.ros2.clone().unwrap();
    assert_eq!(
        ty,
        Ros2Type::new(Blob::TYPE_NAME, Blob::TYPE_HASH, BLOB_DEFINITION)
    );
    assert_eq!(view.ros2().unwrap(), ty);
    let json: serde_json::Value = serde_json::from_slice(&view.description_bytes()).unwrap();
    assert_eq!(
        json,
        serde_json::json!({
            "types": [{
                "name": "demo_msgs/msg/Blob", "version": 1, "size": 8, "align": 8,
                "has_tail": true, "layout_hash": 0xb10b_0000_0000_0001u64, "fields": []
            }],
            "ros2": {
                "type_name": "demo_msgs/msg/Blob",
                "type_hash": Blob::TYPE_HASH,
                "encoding": "cdr",
                "schema_encoding": "ros2msg",
                "definition": BLOB_DEFINITION
            }
        })
    );
    // A fixed-layout type's description has no ros2 key at all.
    let _c = Topic::<CmdVel>::builder("c").namespace(&ns).open().unwrap();
    let c = TopicView::open(&ns, "c").unwrap();
    let json: serde_json::Value = serde_json::from_slice(&c.description_bytes()).unwrap();
    assert!(json.get("ros2").is_none());
    assert_eq!(c.description().unwrap(), MessageDescription::of::<CmdVel>());
    assert!(matches!(
        c.ros2(),
        Err(inspect::RosTopicError::NotRos { .. })
    ));
    // A recording's description from before the ros2 section parses as it did.
    let old = br#"{"types":[{"name":"x/Y","version":1,"size":0,"align":1,"has_tail":false,"layout_hash":0,"fields":[]}]}"#;
    let d: MessageDescription = serde_json::from_slice(old).unwrap();
    assert_eq!(d.ros2, None);
}

#[test]
fn run_time_endpoints_meet_typed_ones() {
    let ns = unique_ns("ros-dyn");
    let ty = Ros2Type::new(Blob::TYPE_NAME, Blob::TYPE_HASH, BLOB_DEFINITION);
    // Created at run time with ros_qos: a typed endpoint with default settings adopts it.
    let view =
        inspect::open_or_create_ros_topic(&ns, "b", &ty, &inspect::ros_qos(1 << 20)).unwrap();
    let typed = Topic::<Ros<Blob>>::builder("b")
        .namespace(&ns)
        .open()
        .unwrap();
    let mut typed_sub = typed.subscriber().unwrap();
    let mut typed_pub = typed.publisher().unwrap();
    let mut dyn_pub = view.ros_publisher().unwrap();
    let mut dyn_sub = view.ros_subscriber(false).unwrap();

    // Run time → typed.
    let wire = horus::cdr::encode_message(&blob(5, 100)).unwrap();
    assert_eq!(dyn_pub.send_cdr(&wire).unwrap(), 2);
    let got = typed_sub.try_recv().unwrap();
    assert_eq!(got.cdr(), wire.as_slice());
    assert_eq!(got.decode().unwrap(), blob(5, 100));
    // The run-time subscriber saw it, in place.
    let a = dyn_sub.try_recv().unwrap();
    assert!(a.is_zero_copy());
    assert_eq!(a.cdr(), wire.as_slice());
    assert_eq!(a.body().as_ptr() as usize % 8, 0);
    drop(a);

    // Typed → run time.
    typed_pub.publish(&blob(6, 10)).unwrap();
    let s = dyn_sub.try_recv().unwrap();
    assert_eq!(
        horus::cdr::decode_message::<Blob>(s.cdr()).unwrap(),
        blob(6, 10)
    );
    typed_sub.try_recv().unwrap();

    // Not CDR: refused, nothing sent.
    assert!(matches!(
        dyn_pub.send_cdr(&[1, 0, 0, 0, 9]),
        Err(RawRosSendError::NotCdr(DecodeError::BadHeader(_)))
    ));
    assert!(matches!(
        dyn_pub.send_cdr(&[0, 1]),
        Err(RawRosSendError::NotCdr(DecodeError::NoHeader(2)))
    ));
    // Larger than the topic's chunks: refused, nothing sent.
    let huge = vec![0u8; (1 << 20) + 8];
    let mut huge_cdr = vec![0, 1, 0, 0];
    huge_cdr.extend_from_slice(&huge);
    assert!(matches!(
        dyn_pub.send_cdr(&huge_cdr),
        Err(RawRosSendError::Send(
            inspect::RawSendError::TooLarge { .. }
        ))
    ));
    assert!(dyn_sub.try_recv().is_none());
    assert!(typed_sub.try_recv().is_none());
    assert_eq!(dyn_sub.counts(), (2, 0, 0));

    // Another type at run time on this topic: refused.
    let other = Ros2Type::new(Other::TYPE_NAME, Other::TYPE_HASH, Other::DEFINITION);
    assert!(matches!(
        inspect::open_or_create_ros_topic(&ns, "b", &other, &inspect::ros_qos(1 << 20)),
        Err(inspect::CreateError::Open { .. })
    ));
    // A malformed type: refused before anything is created.
    let mut bad = ty.clone();
    bad.type_hash = "RIHS01_nothex".into();
    assert!(matches!(
        inspect::open_or_create_ros_topic(&ns, "new", &bad, &inspect::ros_qos(64)),
        Err(inspect::CreateError::Description { .. })
    ));
    assert_eq!(inspect::list_topics(&ns).unwrap(), ["b"]);
}

#[test]
fn ros_qos_is_what_a_typed_topic_creates() {
    let ns = unique_ns("ros-qos");
    let _t = Topic::<Ros<Blob>>::builder("b")
        .namespace(&ns)
        .open()
        .unwrap();
    assert_eq!(
        TopicView::open(&ns, "b").unwrap().qos(),
        inspect::ros_qos(1 << 20)
    );
    let _t = Topic::<Ros<Blob>>::builder("c")
        .namespace(&ns)
        .max_tail_bytes(8 << 20)
        .open()
        .unwrap();
    assert_eq!(
        TopicView::open(&ns, "c").unwrap().qos(),
        inspect::ros_qos(8 << 20)
    );
}

/// Regression: a raw publisher sent a tailed message that fits a ring slot (a ROS 2 message
/// with a body of at most 8 bytes: frame + body <= 16) inline, and typed subscribers, which
/// take an inline message only of exactly the type's size, counted it malformed and lost it.
#[test]
fn raw_publisher_sends_short_tailed_messages_in_chunks_not_lost_as_malformed() {
    let ns = unique_ns("ros-short");
    let typed = Topic::<Ros<Other>>::builder("o")
        .namespace(&ns)
        .open()
        .unwrap();
    let mut typed_sub = typed.subscriber().unwrap();
    let view = TopicView::open(&ns, "o").unwrap();
    let mut dyn_pub = view.ros_publisher().unwrap();
    let small = horus::cdr::encode_message(&Other { n: 7 }).unwrap();
    assert_eq!(small.len(), 8);
    dyn_pub.send_cdr(&small).unwrap();
    let got = typed_sub
        .try_recv()
        .expect("a short message is not lost as malformed");
    assert_eq!(got.cdr(), small.as_slice());
    assert_eq!(got.decode().unwrap(), Other { n: 7 });
    assert_eq!(typed_sub.stats().malformed, 0);
}

#[test]
fn a_definition_too_large_for_the_segment_is_a_typed_error_and_creates_nothing() {
    let ns = unique_ns("ros-huge");
    // Typed: the description JSON (over 64 KiB) does not fit the segment.
    match Topic::<Ros<ros_types::Huge>>::builder("h")
        .namespace(&ns)
        .open()
    {
        Err(TopicError::Segment { .. }) => {}
        other => panic!("expected a segment error, got {:?}", other.err()),
    }
    // Run time: a definition within Ros2Type's bound whose JSON (each newline escaped to
    // two bytes) exceeds the area.
    let ty = Ros2Type::new(
        Blob::TYPE_NAME,
        Blob::TYPE_HASH,
        &"\n".repeat(Ros2Type::MAX_DEFINITION),
    );
    assert!(MessageDescription::ros2(ty.clone()).is_ok());
    assert!(matches!(
        inspect::open_or_create_ros_topic(&ns, "h", &ty, &inspect::ros_qos(1024)),
        Err(inspect::CreateError::Open { .. })
    ));
    assert!(inspect::list_topics(&ns).unwrap().is_empty());
}
