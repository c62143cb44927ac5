//! Description JSON from untrusted sources (another host, a file, a segment): its length is
//! bounded before the JSON parser runs, and what parses is validated in linear time.

use horus::description::{
    parse_message, parse_service, DescriptionReadError, ServiceDescription, ServiceParseError,
    MAX_DESCRIPTION_JSON,
};
use horus_msgs::{
    CmdVel, FieldDescription, FieldKind, MessageDescription, Odometry, Scalar, TypeDescription,
};

#[test]
fn description_json_longer_than_the_limit_is_not_parsed() {
    let mut json = serde_json::to_vec(&MessageDescription::of::<Odometry>()).unwrap();
    json.resize(MAX_DESCRIPTION_JSON + 1, b' ');
    assert!(matches!(
        parse_message(&json),
        Err(DescriptionReadError::TooLong { len, max }) if len == MAX_DESCRIPTION_JSON + 1 && max == MAX_DESCRIPTION_JSON
    ));
    assert!(matches!(
        parse_service(&json),
        Err(ServiceParseError::Read(
            DescriptionReadError::TooLong { .. }
        ))
    ));
    // At the limit (padding is JSON whitespace) it parses.
    json.truncate(MAX_DESCRIPTION_JSON);
    parse_message(&json).unwrap();
}

#[test]
fn real_descriptions_parse_and_garbage_is_a_typed_error() {
    let d = ServiceDescription::of::<CmdVel, Odometry>();
    let json = serde_json::to_vec(&d).unwrap();
    assert_eq!(parse_service(&json).unwrap(), d);
    assert!(matches!(
        parse_message(b""),
        Err(DescriptionReadError::Missing)
    ));
    assert!(matches!(
        parse_message(b"{\"types\":[1]}"),
        Err(DescriptionReadError::Json(_))
    ));
    // JSON nested deeper than the parser's recursion limit: an error, not a stack overflow.
    let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
    assert!(matches!(
        parse_message(deep.as_bytes()),
        Err(DescriptionReadError::Json(_))
    ));
}

/// The remote service description of the finding: 30 types of 8 fields, each field of
/// the next type (8^29 paths through the types): parsed and validated at once.
#[test]
fn exponential_service_description_from_a_peer_is_validated_in_linear_time() {
    let mut types = Vec::new();
    for i in 0..30 {
        let kind = if i == 29 {
            FieldKind::Scalar(Scalar::U64)
        } else {
            FieldKind::Message(format!("t{}", i + 1))
        };
        let mut t = TypeDescription {
            name: format!("t{i}"),
            version: 1,
            size: 8,
            align: 8,
            has_tail: false,
            layout_hash: 0,
            fields: (0..8)
                .map(|f| FieldDescription {
                    name: format!("f{f}"),
                    ty: "t".into(),
                    offset: 0,
                    size: 8,
                    kind: kind.clone(),
                })
                .collect(),
        };
        t.layout_hash = t.computed_hash();
        types.push(t);
    }
    let m = MessageDescription { types, ros2: None };
    let d = ServiceDescription {
        request: m.clone(),
        response: m,
    };
    let json = serde_json::to_vec(&d).unwrap();
    assert!(json.len() < 128 * 1024);
    parse_service(&json).unwrap();
}
