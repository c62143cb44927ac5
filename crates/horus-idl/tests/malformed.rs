//! Every way an interface file can be malformed: a typed error with file, line and column.

use horus_idl::limits::{MAX_FILE_BYTES, MAX_LINE_BYTES, MAX_MEMBERS};
use horus_idl::{parse_interface, InterfaceKind, ParseError, ParseErrorKind, TypeProblem};

fn parse(kind: InterfaceKind, text: &str) -> Result<horus_idl::InterfaceSpec, ParseError> {
    parse_interface("pkg/msg/T.msg", "pkg", "T", kind, text.as_bytes())
}

/// The error of a malformed `.msg`, checked for its position.
fn msg_error(text: &str, line: usize, column: usize) -> ParseErrorKind {
    let e = parse(InterfaceKind::Message, text).unwrap_err();
    assert_eq!(e.file, "pkg/msg/T.msg");
    assert_eq!((e.line, e.column), (line, column), "{e}");
    // The message names the place.
    assert!(
        e.to_string()
            .starts_with(&format!("pkg/msg/T.msg:{line}:{column}: ")),
        "{e}"
    );
    e.kind
}

#[test]
fn misspelt_primitive_is_a_bad_type() {
    let k = msg_error("int32 a\nint33 b\n", 2, 1);
    assert!(
        matches!(
            k,
            ParseErrorKind::BadType { ref text, reason: TypeProblem::BadMessageName(_) } if text == "int33"
        ),
        "{k:?}"
    );
}

#[test]
fn type_with_three_parts_is_a_bad_type() {
    let k = msg_error("a/b/C x\n", 1, 1);
    assert!(matches!(
        k,
        ParseErrorKind::BadType {
            reason: TypeProblem::TooManySlashes,
            ..
        }
    ));
}

#[test]
fn bad_package_in_type_is_a_bad_type() {
    let k = msg_error("Geometry/Point p\n", 1, 1);
    assert!(matches!(
        k,
        ParseErrorKind::BadType {
            reason: TypeProblem::BadPackageName(_),
            ..
        }
    ));
}

#[test]
fn unmatched_bracket_is_a_bad_type() {
    let k = msg_error("int32 a\nint32] b\n", 2, 1);
    assert!(
        matches!(
            k,
            ParseErrorKind::BadType {
                reason: TypeProblem::UnmatchedBracket,
                ..
            }
        ),
        "{k:?}"
    );
}

#[test]
fn ros1_time_and_duration_are_refused() {
    let k = msg_error("time t\n", 1, 1);
    assert!(matches!(
        k,
        ParseErrorKind::BadType {
            reason: TypeProblem::Ros1Type,
            ..
        }
    ));
    let k = msg_error("duration D=1\n", 1, 1);
    assert!(matches!(
        k,
        ParseErrorKind::BadType {
            reason: TypeProblem::Ros1Type,
            ..
        }
    ));
}

#[test]
fn bad_field_names() {
    for (line, name) in [
        "Upper",
        "two__underscores",
        "trailing_",
        "_lead",
        "9x",
        "a-b",
    ]
    .iter()
    .enumerate()
    {
        let before: String = (0..line).map(|i| format!("bool ok{i}\n")).collect();
        let text = format!("{before}int32  {name}\n");
        let k = msg_error(&text, line + 1, 8);
        assert!(
            matches!(k, ParseErrorKind::BadFieldName { name: ref n } if n == name),
            "{k:?}"
        );
    }
}

#[test]
fn bad_constant_names() {
    for name in ["lower", "A__B", "A_", "Ab"] {
        let k = msg_error(&format!("int32 {name}=1\n"), 1, 7);
        assert!(
            matches!(k, ParseErrorKind::BadConstantName { .. }),
            "{name}: {k:?}"
        );
    }
}

#[test]
fn array_and_sequence_bounds() {
    for (text, bound) in [
        ("int32[0] a", "0"),
        ("int32[<=0] a", "<=0"),
        ("int32[<=] a", "<="),
        ("int32[-1] a", "-1"),
        ("int32[x] a", "x"),
        ("int32[4294967296] a", "4294967296"),
        ("string<=5[<=99999999999] a", "<=99999999999"),
    ] {
        let column = text.find('[').unwrap() + 2;
        let k = msg_error(text, 1, column);
        assert!(
            matches!(k, ParseErrorKind::BadArrayBound { text: ref t, .. } if t == bound),
            "{text}: {k:?}"
        );
    }
}

#[test]
fn string_bounds() {
    for (text, bound) in [
        ("string<=0 s", "0"),
        ("string<= s", ""),
        ("wstring<=x s", "x"),
        ("string<=4294967296[3] s", "4294967296"),
    ] {
        let k = msg_error(text, 1, 1);
        assert!(
            matches!(k, ParseErrorKind::BadStringBound { text: ref t, .. } if t == bound),
            "{text}: {k:?}"
        );
    }
}

#[test]
fn nested_arrays_are_refused() {
    let k = msg_error("int32[3][4] a\n", 1, 1);
    assert!(matches!(k, ParseErrorKind::BadType { .. }), "{k:?}");
}

#[test]
fn bad_constant_values() {
    for (text, column) in [
        ("uint8 X=256", 9),
        ("int8 X=-129", 8),
        ("uint64 X=18446744073709551616", 10),
        ("int32 X=1.5", 9),
        ("int32 X=", 9),
        ("bool X=yes", 8),
        ("float64 X=1,5", 11),
        ("float32 X=1e", 11),
        ("byte X=-1", 8),
        ("char X=256", 8),
        ("string X=\"a\"b\"", 10),
    ] {
        let k = msg_error(text, 1, column);
        assert!(
            matches!(k, ParseErrorKind::BadValue { .. }),
            "{text}: {k:?}"
        );
    }
}

#[test]
fn bad_default_values() {
    for (text, column) in [
        ("uint8 x 300", 9),
        ("bool x maybe", 8),
        ("float64 x one", 11),
        ("string<=3 s \"toolong\"", 13),
        ("int32[2] a [1, 2, 3]", 12),
        ("int32[<=2] a [1, 2, 3]", 14),
        ("int32[] a 1, 2", 11),
        ("int32[] a [1,]", 11),
        ("string<=2[] s [\"abc\"]", 15),
        ("string[] s [\"open]", 12),
        ("string[] s [,a]", 12),
    ] {
        let k = msg_error(text, 1, column);
        assert!(
            matches!(k, ParseErrorKind::BadValue { .. }),
            "{text}: {k:?}"
        );
    }
}

#[test]
fn default_on_a_nested_type_is_refused() {
    let k = msg_error("geometry_msgs/Point p 1\n", 1, 23);
    assert!(
        matches!(k, ParseErrorKind::DefaultOnNestedType { .. }),
        "{k:?}"
    );
}

#[test]
fn constant_of_array_or_nested_type_is_refused() {
    let k = msg_error("int32[2] X=1\n", 1, 1);
    assert!(matches!(k, ParseErrorKind::BadConstantType { .. }));
    let k = msg_error("string<=3 X=a\n", 1, 1);
    assert!(matches!(k, ParseErrorKind::BadConstantType { .. }));
    let k = msg_error("Other X=1\n", 1, 1);
    assert!(matches!(k, ParseErrorKind::BadConstantType { .. }));
}

#[test]
fn duplicate_field() {
    let k = msg_error("int32 a\nfloat64 b\n\nstring a\n", 4, 8);
    assert_eq!(
        k,
        ParseErrorKind::DuplicateField {
            name: "a".into(),
            first_line: 1
        }
    );
}

#[test]
fn duplicate_constant() {
    let k = msg_error("int32 A=1\nint32 A=2\n", 2, 7);
    assert!(matches!(
        k,
        ParseErrorKind::DuplicateConstant { first_line: 1, .. }
    ));
}

#[test]
fn type_without_a_name() {
    let k = msg_error("# header comment\nint32\n", 2, 1);
    assert!(matches!(k, ParseErrorKind::MissingName { .. }));
    let k = msg_error("int32   # only a comment after the type\n", 1, 1);
    assert!(matches!(k, ParseErrorKind::MissingName { .. }));
}

#[test]
fn indented_definition_is_refused() {
    let k = msg_error("int32 a\n  int32 b\n", 2, 1);
    assert_eq!(k, ParseErrorKind::Indented);
}

#[test]
fn separator_in_a_message() {
    let k = msg_error("int32 a\n---\nint32 b\n", 2, 1);
    assert_eq!(k, ParseErrorKind::SeparatorInMessage);
}

#[test]
fn service_needs_exactly_one_separator() {
    for (text, found) in [("int32 a\n", 0), ("---\n---\n", 2)] {
        let e = parse(InterfaceKind::Service, text).unwrap_err();
        assert_eq!(
            e.kind,
            ParseErrorKind::WrongSeparatorCount {
                extension: "srv",
                expected: 1,
                found
            }
        );
    }
    // "--- " with a trailing space is not a separator (as in ROS 2).
    assert!(parse(InterfaceKind::Service, "int32 a\n--- \nint32 b\n").is_err());
}

#[test]
fn action_needs_exactly_two_separators() {
    for (text, found) in [("---\n", 1), ("---\n---\n---\n", 3)] {
        let e = parse(InterfaceKind::Action, text).unwrap_err();
        assert_eq!(
            e.kind,
            ParseErrorKind::WrongSeparatorCount {
                extension: "action",
                expected: 2,
                found
            }
        );
    }
}

#[test]
fn errors_in_later_sections_have_file_line_numbers() {
    let e = parse(
        InterfaceKind::Action,
        "int32 goal\n---\nbool ok\n---\nint32 Bad\n",
    )
    .unwrap_err();
    assert_eq!((e.line, e.column), (5, 7));
    assert!(matches!(e.kind, ParseErrorKind::BadFieldName { .. }));
}

#[test]
fn file_too_large() {
    let text = "#".repeat(MAX_FILE_BYTES + 1);
    let e = parse(InterfaceKind::Message, &text).unwrap_err();
    assert!(matches!(e.kind, ParseErrorKind::FileTooLarge { .. }));
}

#[test]
fn line_too_long() {
    let text = format!("int32 a\n#{}\n", "x".repeat(MAX_LINE_BYTES));
    let e = parse(InterfaceKind::Message, &text).unwrap_err();
    assert_eq!(e.line, 2);
    assert!(matches!(e.kind, ParseErrorKind::LineTooLong { .. }));
}

#[test]
fn too_many_members() {
    let text: String = (0..=MAX_MEMBERS).map(|i| format!("int32 f{i}\n")).collect();
    let e = parse(InterfaceKind::Message, &text).unwrap_err();
    assert_eq!(e.line, MAX_MEMBERS + 1);
    assert!(matches!(e.kind, ParseErrorKind::TooManyMembers { .. }));
}

#[test]
fn not_utf8() {
    let e = parse_interface(
        "f",
        "pkg",
        "T",
        InterfaceKind::Message,
        b"int32 a\nint32 \xff\n",
    )
    .unwrap_err();
    assert_eq!((e.line, e.column, e.kind), (2, 7, ParseErrorKind::NotUtf8));
}

#[test]
fn bad_interface_and_package_names() {
    let e = parse_interface("f", "pkg", "lower", InterfaceKind::Message, b"").unwrap_err();
    assert!(matches!(e.kind, ParseErrorKind::BadInterfaceName { .. }));
    let e = parse_interface("f", "Pkg", "T", InterfaceKind::Message, b"").unwrap_err();
    assert!(matches!(e.kind, ParseErrorKind::BadPackageName { .. }));
}

#[test]
fn accepted_syntax_corners() {
    // Tabs, comments, trailing comments, blank lines, CRLF, hex/octal/binary integers,
    // bounded strings in bounded sequences, quoted strings with escaped quotes.
    let text = "# file comment\r\n\r\nint32\tX = 0x10 # hex\r\n  # indented comment\r\n\
                uint8 o 0o17\r\nuint8 b 0b1\r\nstring<=5[<=3] s [\"a\", 'b\\'c']\r\nstring q 'it\\'s'\r\n";
    let spec = parse(InterfaceKind::Message, text).unwrap();
    let horus_idl::InterfaceSpec::Message(m) = spec else {
        panic!()
    };
    assert_eq!(m.constants[0].value, horus_idl::Value::Int(16));
    // Non-finite floats are accepted, as ROS 2 accepts them.
    assert!(parse(InterfaceKind::Message, "float32 X=-inf\nfloat64 x nan\n").is_ok());
    assert_eq!(m.fields.len(), 4);
    assert_eq!(
        m.fields[3].default,
        Some(horus_idl::DefaultValue::Scalar(horus_idl::Value::String(
            "it's".into()
        )))
    );
}

#[test]
fn comment_of_half_a_million_empty_lines_parses() {
    // Leading empty comment lines were removed one at a time from the front of a vector:
    // quadratic in their number (this file took 55 s to parse in a debug build; 0.5 s now).
    let text = format!("{}int32 a\n", "#\n".repeat(500_000));
    let spec = parse(InterfaceKind::Message, &text).unwrap();
    let horus_idl::InterfaceSpec::Message(m) = spec else {
        panic!()
    };
    assert!(m.comment.lines.is_empty());
    let text = format!("int32 a\n{}", "  #\n".repeat(250_000));
    assert!(parse(InterfaceKind::Message, &text).is_ok());
}
