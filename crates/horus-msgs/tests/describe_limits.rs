//! Hostile descriptions: validation is linear in the description's size and every limit
//! refuses with a typed error (a remote service's description, a recording's metadata and
//! a segment's description all reach `validate`).

use horus_msgs::{
    DescriptionError, FieldDescription, FieldKind, MessageDescription, Odometry, Scalar,
    TypeDescription,
};

/// A type with `fields` fields of `kind`, each `elem` bytes, and a correct layout hash.
fn ty(name: &str, fields: usize, kind: FieldKind, elem: usize) -> TypeDescription {
    let mut t = TypeDescription {
        name: name.into(),
        version: 1,
        size: fields * elem,
        align: 8,
        has_tail: false,
        layout_hash: 0,
        fields: (0..fields)
            .map(|i| FieldDescription {
                name: format!("f{i}"),
                ty: "t".into(),
                offset: i * elem,
                size: elem,
                kind: kind.clone(),
            })
            .collect(),
    };
    t.layout_hash = t.computed_hash();
    t
}

/// `n` types of 8 bytes, each holding `fan` fields of the next, all at offset 0 (fields
/// may overlap: a union-like layout is not refused); the last holds one `u64`. About 1 KB
/// of JSON per type at a fan of 8.
fn chain(n: usize, fan: usize) -> MessageDescription {
    let mut types = vec![ty(
        &format!("t{}", n - 1),
        1,
        FieldKind::Scalar(Scalar::U64),
        8,
    )];
    for i in (0..n - 1).rev() {
        let next = FieldKind::Message(format!("t{}", i + 1));
        let mut t = ty(&format!("t{i}"), fan, next, 8);
        t.size = 8;
        for f in &mut t.fields {
            f.offset = 0;
        }
        t.layout_hash = t.computed_hash();
        types.push(t);
    }
    types.reverse();
    MessageDescription { types, ros2: None }
}

#[test]
fn validate_is_linear_in_chained_types() {
    // 30 types of 8 fields, each field the next type: 8^29 paths. The old recursive check
    // walked every path (it never returned); each type is now visited once.
    let d = chain(30, 8);
    let (r, visits) = d.validate_counting_visits();
    r.unwrap();
    assert!(visits <= 30, "{visits} type visits for 30 types");
}

#[test]
fn nesting_deeper_than_the_limit_is_refused() {
    let depth = MessageDescription::MAX_DEPTH;
    chain(depth, 2).validate().unwrap();
    assert!(matches!(
        chain(depth + 2, 2).validate(),
        Err(DescriptionError::TooDeep(_))
    ));
    // 200 chained types: refused at the limit, not walked.
    assert!(matches!(
        chain(200, 8).validate(),
        Err(DescriptionError::TooDeep(_))
    ));
}

#[test]
fn arrays_nested_deeper_than_the_limit_are_refused() {
    let mut kind = FieldKind::Scalar(Scalar::U8);
    for _ in 0..10_000 {
        kind = FieldKind::Array {
            of: Box::new(kind),
            len: 1,
        };
    }
    let d = MessageDescription {
        types: vec![ty("deep", 1, kind, 1)],
        ros2: None,
    };
    assert!(matches!(d.validate(), Err(DescriptionError::TooDeep(_))));
    // Dropping 10 000 nested boxes recurses; keep the test's stack safe by leaking it.
    std::mem::forget(d);
}

#[test]
fn a_cycle_through_two_types_is_refused() {
    let mut d = chain(3, 1);
    d.types[2] = ty("t2", 1, FieldKind::Message("t0".into()), 8);
    // Sizes no longer matter: the cycle (or the size mismatch) is refused, never walked.
    assert!(d.validate().is_err());
    let mut a = ty("a", 1, FieldKind::Message("b".into()), 8);
    let mut b = ty("b", 1, FieldKind::Message("a".into()), 8);
    a.size = 8;
    b.size = 8;
    let d = MessageDescription {
        types: vec![a, b],
        ros2: None,
    };
    assert!(matches!(d.validate(), Err(DescriptionError::Cycle(_))));
}

#[test]
fn more_types_than_the_limit_are_refused() {
    let n = MessageDescription::MAX_TYPES + 1;
    let d = MessageDescription {
        types: (0..n)
            .map(|i| ty(&format!("t{i}"), 1, FieldKind::Scalar(Scalar::U8), 1))
            .collect(),
        ros2: None,
    };
    assert!(matches!(d.validate(), Err(DescriptionError::TooLarge(_))));
}

#[test]
fn more_fields_in_a_type_than_the_limit_are_refused() {
    let n = MessageDescription::MAX_FIELDS + 1;
    let d = MessageDescription {
        types: vec![ty("wide", n, FieldKind::Scalar(Scalar::U8), 1)],
        ros2: None,
    };
    assert!(matches!(d.validate(), Err(DescriptionError::TooLarge(_))));
}

#[test]
fn more_fields_in_all_than_the_limit_are_refused() {
    let per = MessageDescription::MAX_FIELDS;
    let n = MessageDescription::MAX_TOTAL_FIELDS / per + 1;
    let d = MessageDescription {
        types: (0..n)
            .map(|i| ty(&format!("t{i}"), per, FieldKind::Scalar(Scalar::U8), 1))
            .collect(),
        ros2: None,
    };
    assert!(matches!(d.validate(), Err(DescriptionError::TooLarge(_))));
}

#[test]
fn a_type_larger_than_the_limit_is_refused() {
    let big = MessageDescription::MAX_TYPE_SIZE + 1;
    let d = MessageDescription {
        types: vec![ty("big", 1, FieldKind::Scalar(Scalar::U8), big)],
        ros2: None,
    };
    assert!(matches!(
        d.validate(),
        Err(DescriptionError::BadType { .. })
    ));
}

#[test]
fn an_impossible_alignment_is_refused() {
    for align in [0, 3, MessageDescription::MAX_ALIGN * 2] {
        let mut d = MessageDescription::of::<Odometry>();
        d.types[0].align = align;
        assert!(
            matches!(d.validate(), Err(DescriptionError::BadType { .. })),
            "align {align}"
        );
    }
}
