//! Messages that cannot be sent: sequences and strings over their bounds, NUL inside a
//! string. Encoding and sizing both refuse them with a typed `EncodeError` naming the
//! field.

// Tests build messages by changing a field or two of the default.
#![allow(clippy::field_reassign_with_default)]

mod user {
    include!(concat!(env!("OUT_DIR"), "/test_msgs.rs"));
}

use horus_cdr::{encode_message, CdrWriter, EncodeError, RosMessage};
use horus_ros_msgs::sensor_msgs::msg::{Image, JointState};
use horus_ros_msgs::std_msgs::msg::String as RosString;
use horus_ros_msgs::std_srvs::srv::SetBool_Event;
use user::horus_gen_test::srv::Lookup_Request;
use user::horus_idl_test::msg::AllTypes;

/// Encoding and sizing both fail with the same error.
fn refused<M: RosMessage>(m: &M) -> EncodeError {
    let e = encode_message(m).unwrap_err();
    assert_eq!(m.cdr_size().unwrap_err(), e);
    e
}

#[test]
fn a_sequence_over_its_bound_is_refused() {
    let mut event = SetBool_Event::default();
    event.request = vec![Default::default(); 2];
    assert_eq!(
        refused(&event),
        EncodeError::BoundExceeded {
            field: "request",
            len: 2,
            bound: 1
        }
    );
    let mut all = AllTypes::default();
    all.bounded = vec![0.0; 5];
    assert_eq!(
        refused(&all),
        EncodeError::BoundExceeded {
            field: "bounded",
            len: 5,
            bound: 4
        }
    );
    all.bounded.clear();
    all.nested_bounded = vec![Default::default(); 4];
    assert!(matches!(
        refused(&all),
        EncodeError::BoundExceeded {
            field: "nested_bounded",
            len: 4,
            bound: 3
        }
    ));
}

#[test]
fn a_string_over_its_bound_is_refused() {
    let req = Lookup_Request {
        key: "123456789".into(),
    };
    assert_eq!(
        refused(&req),
        EncodeError::BoundExceeded {
            field: "key",
            len: 9,
            bound: 8
        }
    );
    // The bound counts bytes: 4 two-byte characters are 8 bytes (fits), 5 are not.
    assert!(encode_message(&Lookup_Request {
        key: "éééé".into()
    })
    .is_ok());
    assert!(encode_message(&Lookup_Request {
        key: "ééééé".into()
    })
    .is_err());
    // Elements of string<=5[<=3], and wstring<=7 (counted in UTF-16 units).
    let mut all = AllTypes::default();
    all.bounded_strs = vec!["ok".into(), "toolong".into()];
    assert_eq!(
        refused(&all),
        EncodeError::BoundExceeded {
            field: "bounded_strs",
            len: 7,
            bound: 5
        }
    );
    let mut all = AllTypes::default();
    all.bws = "🦀🦀🦀🦀".into();
    assert_eq!(
        refused(&all),
        EncodeError::BoundExceeded {
            field: "bws",
            len: 8,
            bound: 7
        }
    );
}

#[test]
fn a_nul_inside_a_string_is_refused() {
    let s = RosString {
        data: "a\0b".into(),
    };
    assert_eq!(
        refused(&s),
        EncodeError::StringContainsNul {
            field: "data",
            at: 1
        }
    );
    // In a nested message and in a sequence of strings.
    let mut image = Image::default();
    image.header.frame_id = "cam\0".into();
    assert!(matches!(
        refused(&image),
        EncodeError::StringContainsNul {
            field: "frame_id",
            at: 3
        }
    ));
    let mut js = JointState::default();
    js.name = vec!["ok".into(), "\0".into()];
    assert!(matches!(
        refused(&js),
        EncodeError::StringContainsNul {
            field: "name",
            at: 0
        }
    ));
}

#[test]
fn a_buffer_smaller_than_the_message_is_refused() {
    let s = RosString {
        data: "hello".into(),
    };
    let mut buf = [0u8; 6];
    assert!(matches!(
        s.write_cdr(&mut CdrWriter::new(&mut buf)),
        Err(EncodeError::BufferTooSmall { .. })
    ));
}
