//! Sequence counts are checked against the fewest bytes the elements can take: a string
//! read with length 0 (the empty string, as Fast CDR reads it) is 4 bytes, not 5.

use horus_idl::cdr::{decode, CdrValue};
use horus_idl::{InterfaceKind, InterfaceSet, TypeName};

#[test]
fn strings_of_length_zero_in_a_sequence_are_not_refused_by_the_count_check() {
    let mut set = InterfaceSet::new();
    set.add_source(
        "t/msg/Names.msg",
        "t",
        "Names",
        InterfaceKind::Message,
        b"string[] names\n",
    )
    .unwrap();
    let resolved = set.resolve().unwrap();
    // Header, count 2, two strings of length 0: 8 bytes for the two elements (the old
    // minimum of 5 bytes each refused the count).
    let bytes = [0, 1, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0];
    let v = decode(&resolved, &TypeName::msg("t", "Names"), &bytes).unwrap();
    assert_eq!(
        v,
        CdrValue::Struct(vec![(
            "names".into(),
            CdrValue::Array(vec![CdrValue::String(String::new()); 2])
        )])
    );
}
