//! Message and service descriptions from untrusted sources (a segment, another host's
//! bridge, a recording's metadata) on arbitrary bytes.
//!
//! The bytes are parsed as description JSON (`horus::description::parse_message`,
//! `parse_service`, `decode` against a schema): a description or a typed error, never a
//! panic, and in time linear in the input (a chain of types referring to each other many
//! times used to be walked path by path: fields^depth). The same bytes also build a
//! description directly (types whose fields refer to other types by index, nested arrays,
//! sizes often consistent), so `MessageDescription::validate` sees shapes JSON mutation
//! rarely reaches; it must visit each type at most once.
#![no_main]

use horus::description::{decode, parse_message, parse_service, SchemaRecord};
use horus::msgs::{FieldDescription, FieldKind, MessageDescription, Scalar, TypeDescription};
use libfuzzer_sys::fuzz_target;

const SCALARS: [Scalar; 10] = [
    Scalar::U8,
    Scalar::U16,
    Scalar::U32,
    Scalar::U64,
    Scalar::I8,
    Scalar::I16,
    Scalar::I32,
    Scalar::I64,
    Scalar::F32,
    Scalar::F64,
];

/// A description built from the bytes: up to 64 types of up to 16 fields.
fn build(data: &[u8]) -> Option<MessageDescription> {
    let mut it = data.iter().copied();
    let ntypes = 1 + usize::from(it.next()? % 64);
    let mut types: Vec<TypeDescription> = (0..ntypes)
        .map(|i| TypeDescription {
            name: format!("t{i}"),
            version: 1,
            size: 0,
            align: 8,
            has_tail: false,
            layout_hash: 0,
            fields: Vec::new(),
        })
        .collect();
    // Types are filled from the last: a field mostly refers to a later (already sized)
    // type, so sizes come out consistent and validation goes deep; sometimes to any type
    // (cycles, unsized references).
    for i in (0..ntypes).rev() {
        let nfields = usize::from(it.next().unwrap_or(0) % 17);
        let mut fields = Vec::with_capacity(nfields);
        let mut offset = 0usize;
        for f in 0..nfields {
            let sel = it.next().unwrap_or(0);
            let arg = it.next().unwrap_or(0);
            let mut kind = match sel % 4 {
                0 | 1 => FieldKind::Scalar(SCALARS[usize::from(arg) % SCALARS.len()]),
                2 if i + 1 < ntypes => {
                    FieldKind::Message(format!("t{}", i + 1 + usize::from(arg) % (ntypes - i - 1)))
                }
                _ => FieldKind::Message(format!("t{}", usize::from(arg) % (ntypes + 1))),
            };
            for _ in 0..(sel >> 5) {
                kind = FieldKind::Array {
                    of: Box::new(kind),
                    len: usize::from(it.next().unwrap_or(1) % 5),
                };
            }
            let size = kind_size(&types, &kind).unwrap_or(usize::from(arg));
            // Bit 4: overlap the previous field (a union-like layout).
            if sel & 0x10 == 0 {
                offset = offset.saturating_add(size);
            }
            fields.push(FieldDescription {
                name: format!("f{f}"),
                ty: "t".into(),
                offset: offset.saturating_sub(size),
                size,
                kind,
            });
        }
        let t = &mut types[i];
        t.size = fields
            .iter()
            .map(|f| f.offset.saturating_add(f.size))
            .max()
            .unwrap_or(0);
        t.fields = fields;
        // Mostly a correct hash, so validation gets past it.
        t.layout_hash = if it.next().unwrap_or(0) == 0xff {
            0
        } else {
            t.computed_hash()
        };
    }
    Some(MessageDescription { types, ros2: None })
}

fn kind_size(types: &[TypeDescription], kind: &FieldKind) -> Option<usize> {
    match kind {
        FieldKind::Scalar(s) => Some(s.size()),
        FieldKind::Array { of, len } => kind_size(types, of)?.checked_mul(*len),
        FieldKind::Message(n) => types.iter().find(|t| &t.name == n).map(|t| t.size),
    }
}

fuzz_target!(|data: &[u8]| {
    if let Ok(d) = parse_message(data) {
        d.validate().expect("parse_message validates");
        let json = serde_json::to_vec(&d).expect("serialises");
        assert_eq!(parse_message(&json).expect("round trip"), d);
        let root = d.root();
        let schema = SchemaRecord {
            name: root.name.clone(),
            version: root.version,
            size: root.size as u32,
            align: root.align as u32,
            layout_hash: root.layout_hash,
        };
        if u32::try_from(root.size).is_ok() {
            decode(data, &schema).expect("its own schema matches");
        }
    }
    if let Ok(s) = parse_service(data) {
        s.validate().expect("parse_service validates");
    }
    if let Some(d) = build(data) {
        let (r, visits) = d.validate_counting_visits();
        assert!(
            visits <= d.types.len(),
            "{visits} visits of {} types",
            d.types.len()
        );
        if r.is_ok() {
            let json = serde_json::to_vec(&d).expect("serialises");
            parse_message(&json).expect("a valid description parses back");
        }
    }
});
