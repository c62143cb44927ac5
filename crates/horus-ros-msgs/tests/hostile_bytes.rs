//! Hostile bytes: truncated messages, counts the bytes cannot hold, lengths over their
//! bounds, bad UTF-8, bad bools, misaligned views. Every one is a typed `DecodeError`
//! from decoding and from viewing, never a panic or an allocation the input does not
//! pay for.

// Tests build messages by changing a field or two of the default.
#![allow(clippy::field_reassign_with_default)]

mod common;

mod user {
    include!(concat!(env!("OUT_DIR"), "/test_msgs.rs"));
}

use common::{random_struct, Rng, Shape};
use horus_cdr::{
    decode_message, encode_message, view_message, CdrBuf, DecodeError, RosMessage, RoundTripError,
};
use horus_idl::cdr::encode;
use horus_idl::{InterfaceSet, TypeName};
use horus_ros_msgs::sensor_msgs::msg::JointState;
use horus_ros_msgs::std_msgs::msg::{Bool, Float64MultiArray, String as RosString};
use horus_ros_msgs::std_srvs::srv::SetBool_Event;
use user::horus_gen_test::msg::Stamped;
use user::horus_gen_test::srv::Lookup_Request;
use user::horus_idl_test::msg::AllTypes;

/// Decoding and viewing `bytes` as `M` both fail; returns the decoding error.
fn refused<M: RosMessage>(bytes: &[u8]) -> DecodeError {
    let decoded = decode_message::<M>(bytes).map(|_| ()).unwrap_err();
    let buf = CdrBuf::new(bytes);
    let viewed = view_message::<M>(buf.bytes()).map(|_| ()).unwrap_err();
    assert_eq!(
        viewed, decoded,
        "the view refuses the bytes as decoding does"
    );
    decoded
}

fn message(body: &[u8]) -> Vec<u8> {
    let mut m = vec![0, 1, 0, 0];
    m.extend_from_slice(body);
    m
}

fn with_test_packages() -> horus_idl::Resolved {
    let mut set = InterfaceSet::standard().unwrap();
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    set.add_package_dir("horus_gen_test", &root.join("tests/horus_gen_test"))
        .unwrap();
    set.add_package_dir(
        "horus_idl_test",
        &root.join("../horus-idl/tests/fixtures/horus_idl_test"),
    )
    .unwrap();
    set.resolve().unwrap()
}

#[test]
fn every_truncation_is_a_typed_error() {
    let resolved = with_test_packages();
    let mut rng = Rng::new(7);
    let mut cuts = 0;
    for (type_name, registry) in [
        ("sensor_msgs/msg/JointState", horus_ros_msgs::REGISTRY),
        ("sensor_msgs/msg/PointCloud2", horus_ros_msgs::REGISTRY),
        ("nav_msgs/msg/Odometry", horus_ros_msgs::REGISTRY),
        (
            "visualization_msgs/msg/MarkerArray",
            horus_ros_msgs::REGISTRY,
        ),
        (
            "diagnostic_msgs/msg/DiagnosticArray",
            horus_ros_msgs::REGISTRY,
        ),
        ("horus_idl_test/msg/AllTypes", user::REGISTRY),
        ("horus_gen_test/msg/Stamped", user::REGISTRY),
    ] {
        let info = registry.iter().find(|t| t.type_name == type_name).unwrap();
        let name = TypeName::parse(type_name).unwrap();
        let value = random_struct(&resolved, &name, &mut rng, Shape::Small, 0);
        let bytes = encode(&resolved, &name, &value).unwrap();
        assert_eq!((info.reencode)(&bytes).unwrap(), bytes);
        for cut in 0..bytes.len() {
            for codec in [info.reencode, info.view_reencode] {
                match codec(&bytes[..cut]) {
                    Err(RoundTripError::Decode(
                        DecodeError::Truncated { .. }
                        | DecodeError::CountTooLarge { .. }
                        | DecodeError::NoHeader(_),
                    )) => {}
                    other => panic!("{type_name} cut at {cut}: {other:?}"),
                }
            }
            cuts += 1;
        }
    }
    assert!(cuts > 1000, "{cuts}");
}

#[test]
fn counts_the_bytes_cannot_hold_are_refused_before_allocating() {
    // Float64MultiArray: layout.dim count, layout.data_offset, data count.
    let huge_data = message(&[0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff]);
    assert!(matches!(
        refused::<Float64MultiArray>(&huge_data),
        DecodeError::CountTooLarge {
            count: u32::MAX,
            min_bytes,
            ..
        } if min_bytes == u32::MAX as u64 * 8
    ));
    // 2^30 dimensions (each at least 12 bytes: label, size, stride).
    let huge_dims = message(&[0, 0, 0, 0x40, 0, 0, 0, 0, 0, 0, 0, 0]);
    assert!(matches!(
        refused::<Float64MultiArray>(&huge_dims),
        DecodeError::CountTooLarge { count: 0x4000_0000, min_bytes, .. }
            if min_bytes == 0x4000_0000u64 * 12
    ));
    // A string length past the end.
    let huge_string = message(&[0xff, 0xff, 0xff, 0x7f, b'a', 0]);
    assert!(matches!(
        refused::<RosString>(&huge_string),
        DecodeError::CountTooLarge { .. }
    ));
}

#[test]
fn lengths_over_their_bounds_are_refused() {
    // SetBool_Event: info (ServiceEventInfo), then request[<=1] with count 2.
    let mut event = SetBool_Event::default();
    event.request.push(Default::default());
    let mut bytes = encode_message(&event).unwrap();
    let info_len = encode_message(&event.info).unwrap().len() - 4;
    let at = 4 + horus_cdr::align_to(info_len, 4);
    assert_eq!(&bytes[at..at + 4], &[1, 0, 0, 0]);
    bytes[at] = 2;
    assert!(matches!(
        refused::<SetBool_Event>(&bytes),
        DecodeError::BoundExceeded {
            len: 2,
            bound: 1,
            ..
        }
    ));
    // string<=8 with 9 bytes.
    let over = message(&[
        10, 0, 0, 0, b'1', b'2', b'3', b'4', b'5', b'6', b'7', b'8', b'9', 0,
    ]);
    assert!(matches!(
        refused::<Lookup_Request>(&over),
        DecodeError::BoundExceeded {
            len: 9,
            bound: 8,
            ..
        }
    ));
    // An element of string<=5[<=3] over its bound: refused by the sequence's view too.
    let mut all = AllTypes::default();
    all.bounded_strs = vec!["ok".into(), "12345".into()];
    let good = encode_message(&all).unwrap();
    let at = good
        .windows(6)
        .position(|w| w == [6, 0, 0, 0, b'1', b'2'])
        .unwrap();
    let (len_at, text_at) = (at, at + 4);
    let mut longer = good[..len_at].to_vec();
    longer.extend_from_slice(&[7, 0, 0, 0]);
    longer.extend_from_slice(b"123456\0");
    longer.extend_from_slice(&good[text_at + 6..]);
    assert!(matches!(
        refused::<AllTypes>(&longer),
        DecodeError::BoundExceeded {
            len: 6,
            bound: 5,
            ..
        }
    ));
}

#[test]
fn bad_strings_are_refused() {
    let not_utf8 = message(&[4, 0, 0, 0, 0xff, 0xfe, 0xfd, 0]);
    assert!(matches!(
        refused::<RosString>(&not_utf8),
        DecodeError::StringNotUtf8 { offset: 0 }
    ));
    let inner_nul = message(&[4, 0, 0, 0, b'a', 0, b'b', 0]);
    assert!(matches!(
        refused::<RosString>(&inner_nul),
        DecodeError::StringContainsNul { offset: 0 }
    ));
    let unterminated = message(&[3, 0, 0, 0, b'a', b'b', b'c']);
    assert!(matches!(
        refused::<RosString>(&unterminated),
        DecodeError::StringNotTerminated { offset: 0 }
    ));
    // Bad UTF-8 in the second name of a JointState: the sequence view checks each
    // element when it is made.
    let mut js = JointState::default();
    js.name = vec!["a".into(), "b".into()];
    let mut bytes = encode_message(&js).unwrap();
    let at = bytes.windows(2).rposition(|w| w == [b'b', 0]).unwrap();
    bytes[at] = 0xff;
    assert!(matches!(
        refused::<JointState>(&bytes),
        DecodeError::StringNotUtf8 { .. }
    ));
}

#[test]
fn bools_other_than_0_or_1_are_refused() {
    assert!(matches!(
        refused::<Bool>(&message(&[2])),
        DecodeError::InvalidBool {
            offset: 0,
            value: 2
        }
    ));
    // A bool sequence (viewed in place as &[bool]).
    let mut m = Stamped::default();
    m.flags = vec![true, false, true];
    let mut bytes = encode_message(&m).unwrap();
    let at = bytes
        .windows(7)
        .position(|w| w == [3, 0, 0, 0, 1, 0, 1])
        .unwrap();
    bytes[at + 5] = 0x80;
    assert!(matches!(
        refused::<Stamped>(&bytes),
        DecodeError::InvalidBool { value: 0x80, .. }
    ));
}

#[test]
fn a_misaligned_view_is_an_error_not_a_panic() {
    let mut js = JointState::default();
    js.position = vec![1.0, 2.0];
    let bytes = encode_message(&js).unwrap();
    // The body at an address that is 8-aligned + 1.
    let buf = CdrBuf::new(&[&[0u8][..], &bytes].concat());
    let shifted = &buf.bytes()[1..];
    assert!(matches!(
        view_message::<JointState>(shifted),
        Err(DecodeError::Misaligned { .. })
    ));
    // Decoding copies, so it works at any alignment.
    assert_eq!(decode_message::<JointState>(shifted).unwrap(), js);
}

#[test]
fn bytes_that_are_not_little_endian_cdr_are_refused() {
    assert!(matches!(
        decode_message::<Bool>(&[0, 0, 0, 0, 1]),
        Err(DecodeError::BadHeader(_))
    ));
    assert!(matches!(
        decode_message::<Bool>(&[0, 1]),
        Err(DecodeError::NoHeader(2))
    ));
}
