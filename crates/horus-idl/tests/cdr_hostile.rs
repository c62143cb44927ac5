//! CDR decoding of hostile bytes and encoding of wrong values: each way is a typed
//! error naming the field, never a panic, a hang or an allocation the input does not
//! pay for.

use horus_idl::cdr::{decode, encode, CdrError, CdrErrorKind, CdrValue, MAX_DEPTH};
use horus_idl::{InterfaceKind, InterfaceSet, Resolved, TypeName};

fn standard() -> Resolved {
    InterfaceSet::standard().unwrap().resolve().unwrap()
}

/// The standard set plus `horus_test/msg/<name>` files.
fn with_types(files: &[(&str, &str)]) -> Resolved {
    let mut set = InterfaceSet::standard().unwrap();
    for (name, text) in files {
        set.add_source(
            &format!("{name}.msg"),
            "horus_test",
            name,
            InterfaceKind::Message,
            text.as_bytes(),
        )
        .unwrap();
    }
    set.resolve().unwrap()
}

fn t(name: &str) -> TypeName {
    TypeName::parse(name).unwrap()
}

fn s(fields: Vec<(&str, CdrValue)>) -> CdrValue {
    CdrValue::Struct(
        fields
            .into_iter()
            .map(|(n, v)| (n.to_string(), v))
            .collect(),
    )
}

fn header(frame_id: &str) -> CdrValue {
    s(vec![
        (
            "stamp",
            s(vec![
                ("sec", CdrValue::Int(7)),
                ("nanosec", CdrValue::UInt(9)),
            ]),
        ),
        ("frame_id", CdrValue::String(frame_id.into())),
    ])
}

fn joint_state(n: usize) -> CdrValue {
    let f = |k: usize| CdrValue::Array((0..n).map(|i| CdrValue::Float64((i * k) as f64)).collect());
    s(vec![
        ("header", header("base_link")),
        (
            "name",
            CdrValue::Array((0..n).map(|i| CdrValue::String(format!("j{i}"))).collect()),
        ),
        ("position", f(1)),
        ("velocity", f(2)),
        ("effort", f(3)),
    ])
}

fn err(r: Result<CdrValue, CdrError>) -> CdrError {
    r.expect_err("must be refused")
}

/// `std_msgs/msg/String` bytes with this length word and these bytes after it.
fn string_msg(len: u32, bytes: &[u8]) -> Vec<u8> {
    let mut b = vec![0, 1, 0, 0];
    b.extend_from_slice(&len.to_le_bytes());
    b.extend_from_slice(bytes);
    b
}

#[test]
fn roundtrip_of_joint_state() {
    let r = standard();
    let v = joint_state(5);
    let bytes = encode(&r, &t("sensor_msgs/msg/JointState"), &v).unwrap();
    assert_eq!(
        decode(&r, &t("sensor_msgs/msg/JointState"), &bytes).unwrap(),
        v
    );
}

#[test]
fn every_truncation_of_a_message_is_an_error() {
    let r = standard();
    let ty = t("sensor_msgs/msg/JointState");
    let bytes = encode(&r, &ty, &joint_state(4)).unwrap();
    for len in 0..bytes.len() {
        let e = err(decode(&r, &ty, &bytes[..len]));
        assert!(
            matches!(
                e.kind,
                CdrErrorKind::Truncated { .. }
                    | CdrErrorKind::CountTooLarge { .. }
                    | CdrErrorKind::BadHeader(_)
            ),
            "{len}: {e}"
        );
    }
}

#[test]
fn truncated_float_names_its_field_and_offset() {
    let r = standard();
    let ty = t("sensor_msgs/msg/JointState");
    let bytes = encode(&r, &ty, &joint_state(2)).unwrap();
    let e = err(decode(&r, &ty, &bytes[..bytes.len() - 1]));
    assert_eq!(e.path, "effort[1]");
    assert!(
        matches!(
            e.kind,
            CdrErrorKind::Truncated {
                needed: 8,
                remaining: 7,
                ..
            }
        ),
        "{e}"
    );
}

#[test]
fn huge_sequence_count_is_refused_before_allocating() {
    let r = standard();
    let ty = t("sensor_msgs/msg/JointState");
    let mut bytes = encode(&r, &ty, &joint_state(0)).unwrap();
    // header: stamp 8 bytes, frame_id 4 + 10 bytes, 2 padding → `name` count at 24.
    let at = 4 + 24;
    bytes[at..at + 4].copy_from_slice(&u32::MAX.to_le_bytes());
    let e = err(decode(&r, &ty, &bytes));
    assert_eq!(e.path, "name");
    assert_eq!(
        e.kind,
        CdrErrorKind::CountTooLarge {
            count: u32::MAX.into(),
            // At least the 4-byte length per string (a length of 0 reads as "").
            min_bytes: u64::from(u32::MAX) * 4,
            remaining: 12
        }
    );
}

#[test]
fn huge_string_length_is_refused_before_allocating() {
    let e = err(decode(
        &standard(),
        &t("std_msgs/msg/String"),
        &string_msg(u32::MAX, b"ab\0"),
    ));
    assert_eq!(e.path, "data");
    assert!(matches!(e.kind, CdrErrorKind::CountTooLarge { .. }), "{e}");
}

#[test]
fn string_without_nul_is_refused() {
    let e = err(decode(
        &standard(),
        &t("std_msgs/msg/String"),
        &string_msg(3, b"abc"),
    ));
    assert_eq!(
        (e.path.as_str(), e.kind),
        ("data", CdrErrorKind::StringNotTerminated)
    );
}

#[test]
fn non_utf8_string_is_refused() {
    let e = err(decode(
        &standard(),
        &t("std_msgs/msg/String"),
        &string_msg(4, b"a\xff\xfe\0"),
    ));
    assert_eq!(
        (e.path.as_str(), e.kind),
        ("data", CdrErrorKind::StringNotUtf8(1))
    );
}

#[test]
fn string_with_inner_nul_is_refused_both_ways() {
    let r = standard();
    let ty = t("std_msgs/msg/String");
    let e = err(decode(&r, &ty, &string_msg(4, b"a\0b\0")));
    assert_eq!(e.kind, CdrErrorKind::StringContainsNul(1));
    let e = encode(&r, &ty, &s(vec![("data", CdrValue::String("a\0b".into()))])).unwrap_err();
    assert_eq!(e.kind, CdrErrorKind::StringContainsNul(1));
}

#[test]
fn zero_string_length_reads_as_empty_like_fast_cdr() {
    let v = decode(&standard(), &t("std_msgs/msg/String"), &string_msg(0, b"")).unwrap();
    assert_eq!(v, s(vec![("data", CdrValue::String(String::new()))]));
}

#[test]
fn bool_other_than_0_or_1_is_refused() {
    let e = err(decode(
        &standard(),
        &t("std_msgs/msg/Bool"),
        &[0, 1, 0, 0, 2],
    ));
    assert_eq!(
        (e.path.as_str(), e.kind),
        ("data", CdrErrorKind::InvalidBool(2))
    );
}

#[test]
fn big_endian_or_missing_header_is_refused() {
    let r = standard();
    let ty = t("std_msgs/msg/Bool");
    for bytes in [&[0u8, 0, 0, 0, 1][..], &[0, 1, 0], &[]] {
        assert!(matches!(
            err(decode(&r, &ty, bytes)).kind,
            CdrErrorKind::BadHeader(_)
        ));
    }
}

const BOUNDED: &str = "int32[<=2] xs\nstring<=3 name\nwstring<=2 w\n";

fn bounded(xs: usize, name: &str, w: &str) -> CdrValue {
    s(vec![
        (
            "xs",
            CdrValue::Array((0..xs).map(|i| CdrValue::Int(i as i64)).collect()),
        ),
        ("name", CdrValue::String(name.into())),
        ("w", CdrValue::WString(w.into())),
    ])
}

#[test]
fn over_bound_sequence_and_strings_are_refused_both_ways() {
    let r = with_types(&[("Bounded", BOUNDED)]);
    let ty = t("horus_test/msg/Bounded");
    // Within bounds: fine, and the bytes of an over-bound value (made with a bound of
    // 3) are refused by the decoder.
    let ok = bounded(2, "abc", "é");
    assert_eq!(decode(&r, &ty, &encode(&r, &ty, &ok).unwrap()).unwrap(), ok);
    let cases = [
        (bounded(3, "abc", ""), "xs", 3, 2),
        (bounded(0, "abcd", ""), "name", 4, 3),
        (bounded(0, "", "abc"), "w", 3, 2),
        // 😀 is two UTF-16 units: the bound counts units, as ROS 2's does.
        (bounded(0, "", "a😀"), "w", 3, 2),
    ];
    let loose = with_types(&[("Bounded", "int32[<=3] xs\nstring<=4 name\nwstring<=3 w\n")]);
    for (value, path, len, bound) in cases {
        let e = encode(&r, &ty, &value).unwrap_err();
        assert_eq!(
            (e.path.as_str(), e.kind),
            (path, CdrErrorKind::OverBound { len, bound })
        );
        let bytes = encode(&loose, &ty, &value).unwrap();
        let e = err(decode(&r, &ty, &bytes));
        assert_eq!(
            (e.path.as_str(), e.kind),
            (path, CdrErrorKind::OverBound { len, bound })
        );
    }
}

#[test]
fn wstring_is_utf16_units_of_4_bytes() {
    let r = with_types(&[("W", "wstring w\n")]);
    let ty = t("horus_test/msg/W");
    let v = s(vec![("w", CdrValue::WString("a😀".into()))]);
    let bytes = encode(&r, &ty, &v).unwrap();
    assert_eq!(
        bytes,
        [0, 1, 0, 0, 3, 0, 0, 0, 0x61, 0, 0, 0, 0x3d, 0xd8, 0, 0, 0x00, 0xde, 0, 0]
    );
    assert_eq!(decode(&r, &ty, &bytes).unwrap(), v);
    let mut above = bytes.clone();
    above[10] = 1; // 0x10061: not a UTF-16 unit
    assert_eq!(
        err(decode(&r, &ty, &above)).kind,
        CdrErrorKind::WStringNotUtf16
    );
    let lone = [0, 1, 0, 0, 1, 0, 0, 0, 0x3d, 0xd8, 0, 0];
    assert_eq!(
        err(decode(&r, &ty, &lone)).kind,
        CdrErrorKind::WStringNotUtf16
    );
}

#[test]
fn huge_fixed_array_is_refused_before_allocating() {
    let r = with_types(&[("Big", "uint64[4000000000] big\n")]);
    let ty = t("horus_test/msg/Big");
    let e = err(decode(&r, &ty, &[0, 1, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8]));
    assert_eq!(e.path, "big");
    assert!(
        matches!(
            e.kind,
            CdrErrorKind::CountTooLarge {
                count: 4_000_000_000,
                ..
            }
        ),
        "{e}"
    );
}

/// `std_msgs/msg/Empty` is one byte on the wire (ROS 2's placeholder member): the
/// smallest element there is.
#[test]
fn sequence_of_empty_messages_is_bounded_by_the_input() {
    let r = with_types(&[("Empties", "std_msgs/Empty[] es\n")]);
    let ty = t("horus_test/msg/Empties");
    let mut bytes = vec![0, 1, 0, 0];
    bytes.extend_from_slice(&u32::MAX.to_le_bytes());
    bytes.extend_from_slice(&[0, 0, 0]);
    let e = err(decode(&r, &ty, &bytes));
    assert_eq!(e.path, "es");
    assert!(
        matches!(e.kind, CdrErrorKind::CountTooLarge { remaining: 3, .. }),
        "{e}"
    );
    // A count the input pays for is read.
    bytes[4..8].copy_from_slice(&3u32.to_le_bytes());
    let CdrValue::Struct(f) = decode(&r, &ty, &bytes).unwrap() else {
        panic!()
    };
    assert!(matches!(&f[0].1, CdrValue::Array(a) if a.len() == 3));
}

#[test]
fn nesting_deeper_than_the_limit_is_refused() {
    let n = MAX_DEPTH + 2;
    let texts: Vec<(String, String)> = (0..n)
        .map(|i| {
            let body = if i + 1 == n {
                "int8 x\n".to_string()
            } else {
                format!("D{} d\n", i + 1)
            };
            (format!("D{i}"), body)
        })
        .collect();
    let files: Vec<(&str, &str)> = texts
        .iter()
        .map(|(a, b)| (a.as_str(), b.as_str()))
        .collect();
    let r = with_types(&files);
    let ty = t("horus_test/msg/D0");
    let e = err(decode(&r, &ty, &[0, 1, 0, 0, 5]));
    assert_eq!(e.kind, CdrErrorKind::TooDeep { limit: MAX_DEPTH });
    let mut v = s(vec![("x", CdrValue::Int(5))]);
    for _ in 0..n - 1 {
        v = s(vec![("d", v)]);
    }
    let e = encode(&r, &ty, &v).unwrap_err();
    assert_eq!(e.kind, CdrErrorKind::TooDeep { limit: MAX_DEPTH });
    // One level less than the limit works.
    let ok = t(&format!("horus_test/msg/D{}", n - MAX_DEPTH));
    assert!(decode(&r, &ok, &[0, 1, 0, 0, 5]).is_ok());
}

#[test]
fn wrong_values_are_refused_by_the_encoder() {
    let r = standard();
    let js = t("sensor_msgs/msg/JointState");
    let imu_cov = t("sensor_msgs/msg/Imu");
    let cases: Vec<(TypeName, CdrValue, &str, CdrErrorKind)> = vec![
        (
            t("std_msgs/msg/UInt8"),
            s(vec![("data", CdrValue::UInt(256))]),
            "data",
            CdrErrorKind::IntOutOfRange {
                value: 256,
                primitive: "uint8",
            },
        ),
        (
            t("std_msgs/msg/Int8"),
            s(vec![("data", CdrValue::Int(-129))]),
            "data",
            CdrErrorKind::IntOutOfRange {
                value: -129,
                primitive: "int8",
            },
        ),
        (
            t("std_msgs/msg/Float32"),
            s(vec![("data", CdrValue::Float64(1.0))]),
            "data",
            CdrErrorKind::TypeMismatch {
                expected: "float32",
                got: "float64",
            },
        ),
        (
            t("std_msgs/msg/String"),
            s(vec![]),
            "",
            CdrErrorKind::MissingField("data".into()),
        ),
        (
            t("std_msgs/msg/String"),
            s(vec![
                ("data", CdrValue::String("x".into())),
                ("extra", CdrValue::Bool(true)),
            ]),
            "",
            CdrErrorKind::UnknownField("extra".into()),
        ),
        (
            t("std_msgs/msg/String"),
            s(vec![
                ("data", CdrValue::String("x".into())),
                ("data", CdrValue::String("y".into())),
            ]),
            "",
            CdrErrorKind::UnknownField("data".into()),
        ),
        (
            js.clone(),
            s(vec![("header", CdrValue::Bool(true))]),
            "header",
            CdrErrorKind::TypeMismatch {
                expected: "structure",
                got: "bool",
            },
        ),
        (
            t("std_msgs/msg/Bogus"),
            s(vec![]),
            "",
            CdrErrorKind::UnknownType("std_msgs/msg/Bogus".into()),
        ),
    ];
    for (ty, v, path, kind) in cases {
        let e = encode(&r, &ty, &v).unwrap_err();
        assert_eq!((e.path.as_str(), e.kind), (path, kind), "{ty}");
    }
    // A fixed array with another number of elements.
    let imu = decode(&r, &imu_cov, &zero_imu_bytes()).unwrap();
    let CdrValue::Struct(mut f) = imu else {
        panic!()
    };
    f[2].1 = CdrValue::Array(vec![CdrValue::Float64(0.0); 8]);
    let e = encode(&r, &imu_cov, &CdrValue::Struct(f)).unwrap_err();
    assert_eq!(e.path, "orientation_covariance");
    assert_eq!(
        e.kind,
        CdrErrorKind::FixedArrayLength {
            expected: 9,
            got: 8
        }
    );
}

/// An all-zero Imu message's bytes (every field of Imu is fixed-size).
fn zero_imu_bytes() -> Vec<u8> {
    // header: 8 (stamp) + 4 (length 1) + 1 (NUL) → pad to 16, then 4×8 + 9×8 + 3×8 +
    // 9×8 + 3×8 + 9×8 bytes.
    let mut b = vec![0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0];
    b.resize(4 + 16 + 8 * (4 + 9 + 3 + 9 + 3 + 9), 0);
    b
}

/// Random corruptions of valid messages: decoding ends in a value or a typed error.
#[test]
fn corrupted_messages_never_panic() {
    let r = standard();
    let ty = t("sensor_msgs/msg/JointState");
    let good = encode(&r, &ty, &joint_state(6)).unwrap();
    let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    for _ in 0..20_000 {
        let mut b = good.clone();
        for _ in 0..1 + next() % 4 {
            let i = 4 + (next() as usize) % (b.len() - 4);
            b[i] = next() as u8;
        }
        let cut = b.len() - (next() as usize % 8).min(b.len());
        let _ = decode(&r, &ty, &b[..cut]);
    }
}
