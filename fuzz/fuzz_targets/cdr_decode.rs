//! The CDR planner and decoder of recordings (`horus_record::cdr::CdrPlan`) on a
//! description and message bytes built from arbitrary bytes.
//!
//! The first bytes build a description (up to 8 types of up to 8 fields: scalars, nested
//! types, arrays of either with small or huge lengths, sizes made consistent so the planner
//! gets past its checks, true layout hashes); the rest is the CDR message. Planning must
//! end quickly with a plan or a typed `PlanError` (an array of 2^63 zero-size elements used
//! to make it loop 2^63 times); decoding must return the horus bytes or a typed
//! `CdrError`, and the bytes decoded must encode and decode back to themselves.
#![no_main]

use horus::msgs::{FieldDescription, FieldKind, MessageDescription, Scalar, TypeDescription};
use horus_record::cdr::CdrPlan;
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

const LENS: [usize; 8] = [0, 1, 2, 3, 7, 1000, 1 << 31, 1 << 63];

/// Builds types from the last to the first, each field referring only to later types, so
/// every size is known when used. Returns the description and the bytes left.
fn build(data: &[u8]) -> Option<(MessageDescription, &[u8])> {
    let (&n, mut rest) = data.split_first()?;
    let ntypes = 1 + usize::from(n % 8);
    let mut types: Vec<Option<TypeDescription>> = vec![None; ntypes];
    for i in (0..ntypes).rev() {
        let (&spec, r) = rest.split_first()?;
        rest = r;
        let nfields = usize::from(spec % 9);
        let mut fields = Vec::new();
        let mut offset = 0usize;
        for j in 0..nfields {
            let (&k, r) = rest.split_first()?;
            rest = r;
            let (elem, elem_size) = if k & 1 == 0 || i + 1 == ntypes {
                let s = SCALARS[usize::from(k >> 1) % SCALARS.len()];
                (FieldKind::Scalar(s), s.size())
            } else {
                let target = i + 1 + usize::from(k >> 1) % (ntypes - i - 1);
                let t = types[target].as_ref()?;
                (FieldKind::Message(t.name.clone()), t.size)
            };
            let (kind, size) = if k & 0x40 != 0 {
                let (&l, r) = rest.split_first()?;
                rest = r;
                let len = LENS[usize::from(l % 8)];
                let size = elem_size.checked_mul(len)?;
                (
                    FieldKind::Array {
                        of: Box::new(elem),
                        len,
                    },
                    size,
                )
            } else {
                (elem, elem_size)
            };
            fields.push(FieldDescription {
                name: format!("f{j}"),
                ty: String::new(),
                offset,
                size,
                kind,
            });
            offset = offset.checked_add(size)?;
        }
        let mut t = TypeDescription {
            name: format!("fz/T{i}"),
            version: 1,
            size: offset,
            align: 1,
            has_tail: i == 0 && spec & 0x80 != 0,
            layout_hash: 0,
            fields,
        };
        t.layout_hash = t.computed_hash();
        types[i] = Some(t);
    }
    let types = types.into_iter().collect::<Option<Vec<_>>>()?;
    Some((MessageDescription { types, ros2: None }, rest))
}

fuzz_target!(|data: &[u8]| {
    let Some((d, cdr)) = build(data) else {
        return;
    };
    let Ok(plan) = CdrPlan::new(&d) else {
        return;
    };
    let mut bytes = Vec::new();
    if plan.decode(cdr, &mut bytes).is_ok() {
        let mut again = Vec::new();
        plan.encode(&bytes, &mut again)
            .expect("decoded bytes encode");
        let mut back = Vec::new();
        plan.decode(&again, &mut back)
            .expect("encoded bytes decode");
        assert_eq!(back, bytes);
    }
});
