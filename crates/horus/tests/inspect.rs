//! Tools' view of a topic: listing, the description in the segment, raw observation, and
//! JSON decoding/encoding that round-trips.

use horus::description::DescriptionReadError;
use horus::inspect::{decode_message, encode_message, list_topics, InspectError, TopicView};
use horus::msgs::{Imu, MessageDescription, Odometry, PointCloud};
use horus::{Message, Topic};
use serde_json::json;

fn ns(tag: &str) -> String {
    format!("inspect-{}-{tag}", std::process::id())
}

#[test]
fn a_topic_is_listed_described_and_observed_as_json() {
    let ns = ns("odom");
    let topic = Topic::<Odometry>::builder("robot/odom")
        .namespace(&ns)
        .open()
        .unwrap();
    let mut publisher = topic.publisher().unwrap();
    assert_eq!(list_topics(&ns).unwrap(), vec!["robot/odom".to_owned()]);

    let view = TopicView::open(&ns, "robot/odom").unwrap();
    assert!(view.schema().unwrap().is(&Odometry::SCHEMA));
    let desc = view.description().unwrap();
    assert_eq!(desc, MessageDescription::of::<Odometry>());

    let mut obs = view.observer(false).unwrap();
    let mut m = bytemuck::Zeroable::zeroed();
    let msg: &mut Odometry = &mut m;
    msg.stamp_ns = 42;
    msg.set_frame_id("odom").unwrap();
    msg.pose.position.x = 0.1;
    msg.twist.linear.y = -2.5;
    msg.pose_covariance[35] = f64::NAN;
    let d = publisher.send(m).unwrap();
    assert_eq!(
        d.subscribers, 0,
        "an observer is not counted by the publisher"
    );

    let raw = obs.try_recv().expect("the observer sees the message");
    assert_eq!(raw.bytes, bytemuck::bytes_of(&m));
    let v = decode_message(&desc, &raw.bytes).unwrap();
    assert_eq!(v["stamp_ns"], json!(42));
    assert_eq!(v["frame_id"], json!("odom"));
    assert_eq!(v["pose"]["position"]["x"], json!(0.1));
    assert_eq!(v["twist"]["linear"]["y"], json!(-2.5));
    assert_eq!(v["pose_covariance"][35], json!("NaN"));
    // Field order is the message's.
    let keys: Vec<_> = v.as_object().unwrap().keys().cloned().collect();
    let fields: Vec<_> = Odometry::FIELDS.iter().map(|f| f.name.to_owned()).collect();
    assert_eq!(keys, fields);

    // What decode prints, encode accepts back: the same bytes.
    let text = serde_json::to_string(&v).unwrap();
    let back = encode_message(&desc, &serde_json::from_str(&text).unwrap()).unwrap();
    assert_eq!(back, raw.bytes);
    assert_eq!(obs.counts(), (1, 0, 0));
}

#[test]
fn f32_fields_print_their_shortest_form_and_round_trip() {
    let desc = MessageDescription::of::<horus::msgs::CmdVel>();
    let v = json!({"stamp_ns": 7, "linear": 0.1, "angular": -1e-7});
    let bytes = encode_message(&desc, &v).unwrap();
    assert_eq!(decode_message(&desc, &bytes).unwrap(), v);
}

#[test]
fn bad_json_for_a_message_is_a_typed_error_naming_the_field() {
    let desc = MessageDescription::of::<Imu>();
    let cases = [
        (json!({"stamp_ns": -1}), "stamp_ns"),
        (json!({"stamp_ns": 1.5}), "stamp_ns"),
        (json!({"nope": 1}), "nope"),
        (json!({"orientation": [1, 2, 3, 4, 5]}), "orientation"),
        (json!({"orientation": [1, "x"]}), "orientation.1"),
        (json!([1, 2]), "message"),
    ];
    for (v, path) in cases {
        let e = encode_message(&desc, &v).unwrap_err();
        assert_eq!(e.path, path, "{v}: {e}");
    }
    // Left-out fields are zero.
    let bytes = encode_message(&desc, &json!({})).unwrap();
    assert!(bytes.iter().all(|&b| b == 0));
    assert_eq!(bytes.len(), std::mem::size_of::<Imu>());
}

#[test]
fn tails_are_summarised_and_short_messages_refused() {
    let desc = MessageDescription::of::<PointCloud>();
    let mut bytes = vec![0u8; std::mem::size_of::<PointCloud>() + 160];
    bytes[0] = 1;
    let v = decode_message(&desc, &bytes).unwrap();
    assert_eq!(v["_tail"], json!({"bytes": 160}));
    assert!(decode_message(&desc, &bytes[..10]).is_err());
    let imu = MessageDescription::of::<Imu>();
    assert!(decode_message(&imu, &vec![0u8; std::mem::size_of::<Imu>() + 8]).is_err());
}

#[test]
fn a_missing_topic_is_not_found_and_a_hostile_description_is_refused() {
    let ns = ns("hostile");
    assert!(matches!(
        TopicView::open(&ns, "nope"),
        Err(InspectError::NotFound { .. })
    ));
    // A topic created by a typed endpoint, then its description overwritten by a hostile peer.
    let topic = Topic::<Imu>::builder("imu").namespace(&ns).open().unwrap();
    let _p = topic.publisher().unwrap();
    let path = format!("/dev/shm/horus.{ns}.t.imu");
    let view = TopicView::open(&ns, "imu").unwrap();
    let good = view.description_bytes();
    let bytes = std::fs::read(&path).unwrap();
    let at = bytes
        .windows(good.len())
        .position(|w| w == good.as_slice())
        .expect("the description is in the segment");
    let file = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
    use std::os::unix::fs::FileExt;
    // Same length, a field renamed: the recomputed hash no longer matches.
    let forged =
        String::from_utf8(good.clone())
            .unwrap()
            .replacen("\"stamp_ns\"", "\"stamp_nz\"", 1);
    file.write_all_at(forged.as_bytes(), at as u64).unwrap();
    assert!(matches!(
        view.description(),
        Err(DescriptionReadError::Invalid(_))
    ));
    file.write_all_at(&vec![b'{'; good.len()], at as u64)
        .unwrap();
    assert!(matches!(
        view.description(),
        Err(DescriptionReadError::Json(_))
    ));
}

/// A message given to the raw publisher in pieces (as the network bridge gets a large message
/// from Zenoh's fragments) arrives whole, large or small, and a wrong total size is
/// refused like a wrong size in one piece.
#[test]
fn a_message_sent_in_pieces_arrives_whole() {
    let ns = ns("parts");
    let topic = Topic::<PointCloud>::builder("lidar/points")
        .namespace(&ns)
        .max_tail_bytes(4096)
        .open()
        .unwrap();
    let mut sub = topic.subscriber().unwrap();
    let view = TopicView::open(&ns, "lidar/points").unwrap();
    let size = std::mem::size_of::<PointCloud>();
    let mut raw = view.publisher(size).unwrap();
    for tail_len in [4000usize, 8] {
        let mut cloud = PointCloud::new(1, false);
        cloud.stamp_ns = tail_len as u64;
        let mut whole = bytemuck::bytes_of(&cloud).to_vec();
        whole.extend((0..tail_len).map(|i| (i % 251) as u8));
        let (a, rest) = whole.split_at(10);
        let (b, c) = rest.split_at(size - 10 + 4);
        raw.send_parts(&[a, b, c]).unwrap();
        let m = sub.recv_timeout(std::time::Duration::from_secs(5)).unwrap();
        assert_eq!(m.stamp_ns, tail_len as u64);
        assert_eq!(m.tail(), &whole[size..], "{tail_len}-byte tail");
    }
    let short = vec![0u8; size - 1];
    let (a, b) = short.split_at(3);
    assert!(matches!(
        raw.send_parts(&[a, b]),
        Err(horus::inspect::RawSendError::WrongSize { .. })
    ));
}

/// A raw loan (Python's loans of ROS messages): written in place and sent with its
/// length; a refused send keeps it and its bytes; loans given back, and one dropped with
/// its publisher, return their chunk (many more loans than the pool has chunks never
/// exhaust it).
#[test]
fn a_raw_loan_is_sent_in_place_and_an_unsent_one_returns_its_chunk() {
    use horus::inspect::RawSendError;
    let ns = ns("loan");
    let topic = Topic::<PointCloud>::builder("lidar/points")
        .namespace(&ns)
        .max_tail_bytes(4096)
        .depth(1)
        .overflow(horus::Overflow::Reject)
        .loan_pool(4)
        .open()
        .unwrap();
    let mut sub = topic.subscriber().unwrap();
    let view = TopicView::open(&ns, "lidar/points").unwrap();
    let size = std::mem::size_of::<PointCloud>();
    let mut raw = view.publisher(size).unwrap();
    // No loan: nothing to send.
    assert!(matches!(
        raw.send_loan(size),
        Err(RawSendError::WrongSize { got: 0, .. })
    ));
    for round in 0..50u64 {
        let room = raw.loan().unwrap();
        assert!(room.len() >= size + 4096);
        let mut cloud = PointCloud::new(1, false);
        cloud.stamp_ns = round;
        room[..size].copy_from_slice(bytemuck::bytes_of(&cloud));
        room[size..size + 100].fill(round as u8);
        // Asking again while one is outstanding gives the same chunk.
        assert_eq!(raw.loan().unwrap()[..size], *bytemuck::bytes_of(&cloud));
        assert!(raw.has_loan());
        if round % 2 == 0 {
            raw.drop_loan();
            assert!(!raw.has_loan());
            continue;
        }
        assert!(matches!(
            raw.send_loan(size - 1),
            Err(RawSendError::WrongSize { .. })
        ));
        assert!(matches!(
            raw.send_loan(usize::MAX),
            Err(RawSendError::TooLarge { .. })
        ));
        assert_eq!(raw.send_loan(size + 100).unwrap(), 1);
        assert!(!raw.has_loan());
        let m = sub.recv_timeout(std::time::Duration::from_secs(5)).unwrap();
        assert_eq!(m.stamp_ns, round);
        assert_eq!(m.tail(), &[round as u8; 100][..]);
    }
    // Reject with the subscriber's one-deep history full: refused, the loan kept whole.
    raw.loan().unwrap()[..size].copy_from_slice(bytemuck::bytes_of(&PointCloud::new(1, false)));
    raw.send_loan(size).unwrap();
    raw.loan().unwrap()[size] = 7;
    assert_eq!(raw.send_loan(size + 1), Err(RawSendError::Full));
    assert!(raw.has_loan());
    assert_eq!(raw.loan().unwrap()[size], 7);
    drop(sub.recv_timeout(std::time::Duration::from_secs(5)).unwrap());
    assert_eq!(raw.send_loan(size + 1).unwrap(), 1);
    assert_eq!(
        sub.recv_timeout(std::time::Duration::from_secs(5))
            .unwrap()
            .tail(),
        &[7]
    );
    // A publisher dropped with a loan gives its chunk back: a new publisher on the same
    // place still loans and sends, many times over.
    raw.loan().unwrap();
    drop(raw);
    let mut raw = view.publisher(size).unwrap();
    for _ in 0..20 {
        raw.loan().unwrap()[..size].copy_from_slice(bytemuck::bytes_of(&PointCloud::new(1, false)));
        assert_eq!(raw.send_loan(size).unwrap(), 1);
        drop(sub.recv_timeout(std::time::Duration::from_secs(5)).unwrap());
    }
    // A fixed-size type (no tail) has no chunks to loan.
    let imu = Topic::<Imu>::builder("imu").namespace(&ns).open().unwrap();
    let iv = TopicView::open(&ns, "imu").unwrap();
    let mut r = iv.publisher(std::mem::size_of::<Imu>()).unwrap();
    assert!(matches!(
        r.loan(),
        Err(RawSendError::WrongSize { got: 0, .. })
    ));
    drop(imu);
}
