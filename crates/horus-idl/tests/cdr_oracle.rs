//! CDR against rclpy: `tests/fixtures/cdr/*.jsonl` holds randomised messages as JSON
//! and the bytes `rclpy.serialization.serialize_message` (rmw_fastrtps_cpp, kilted)
//! made of them (written by `tests/oracle/make_cdr_fixtures.py`). Our encoding of each
//! value must equal rclpy's bytes everywhere except alignment padding (unspecified in
//! ROS 2), and decoding rclpy's bytes must give the value back.

use std::collections::BTreeSet;
use std::path::Path;

use horus_idl::cdr::{decode_prefix, encode_with_padding, CdrValue};
use horus_idl::{
    ArrayKind, InterfaceSet, Primitive, Resolved, ResolvedBase, ResolvedType, TypeName,
};
use serde_json::Value as Json;

fn byte_like(p: Primitive) -> bool {
    matches!(p, Primitive::Byte | Primitive::Char | Primitive::UInt8)
}

fn element(r: &Resolved, base: &ResolvedBase, j: &Json) -> CdrValue {
    match base {
        ResolvedBase::Primitive(p) => match p {
            Primitive::Bool => CdrValue::Bool(j.as_bool().unwrap()),
            Primitive::Float32 => {
                let f = j.as_f64().unwrap();
                assert_eq!(
                    f as f32 as f64, f,
                    "float32 fixture value {f} is not a float32"
                );
                CdrValue::Float32(f as f32)
            }
            Primitive::Float64 => CdrValue::Float64(j.as_f64().unwrap()),
            Primitive::Int8 | Primitive::Int16 | Primitive::Int32 | Primitive::Int64 => {
                CdrValue::Int(j.as_i64().unwrap())
            }
            _ => CdrValue::UInt(j.as_u64().unwrap()),
        },
        ResolvedBase::String { .. } => CdrValue::String(j.as_str().unwrap().to_string()),
        ResolvedBase::WString { .. } => CdrValue::WString(j.as_str().unwrap().to_string()),
        ResolvedBase::Nested(name) => structure(r, name, j),
    }
}

fn member(r: &Resolved, t: &ResolvedType, j: &Json) -> CdrValue {
    if t.array == ArrayKind::Single {
        return element(r, &t.base, j);
    }
    let items = j.as_array().unwrap();
    match t.base {
        ResolvedBase::Primitive(p) if byte_like(p) => CdrValue::Bytes(
            items
                .iter()
                .map(|x| u8::try_from(x.as_u64().unwrap()).unwrap())
                .collect(),
        ),
        _ => CdrValue::Array(items.iter().map(|x| element(r, &t.base, x)).collect()),
    }
}

/// The value a fixture's JSON stands for (rclpy leaves out the placeholder member of an
/// empty message; it is 0).
fn structure(r: &Resolved, name: &TypeName, j: &Json) -> CdrValue {
    let def = r.get_struct(name).unwrap();
    let obj = j.as_object().unwrap();
    assert_eq!(
        obj.len(),
        def.members.iter().filter(|m| !m.placeholder).count(),
        "{name}: fixture fields {:?}",
        obj.keys().collect::<Vec<_>>()
    );
    CdrValue::Struct(
        def.members
            .iter()
            .map(|m| {
                let v = if m.placeholder {
                    CdrValue::UInt(0)
                } else {
                    member(r, &m.member_type, &obj[&m.name])
                };
                (m.name.clone(), v)
            })
            .collect(),
    )
}

fn hex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

#[test]
fn encode_and_decode_equal_rclpy_for_every_fixture() {
    let resolved = InterfaceSet::standard().unwrap().resolve().unwrap();
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/cdr");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "jsonl"))
        .collect();
    files.sort();
    let (mut cases, mut types, mut padded_ends) = (0, BTreeSet::new(), BTreeSet::new());
    let mut padding_bytes = 0;
    for file in &files {
        for line in std::fs::read_to_string(file).unwrap().lines() {
            let fixture: Json = serde_json::from_str(line).unwrap();
            let type_text = fixture["type"].as_str().unwrap();
            let what = format!("{type_text} case {}", fixture["case"]);
            let name = TypeName::parse(type_text).unwrap();
            let expected = structure(&resolved, &name, &fixture["value"]);
            let rclpy = hex(fixture["cdr"].as_str().unwrap());

            let end = fixture["message_end"].as_u64().unwrap() as usize;

            let (decoded, decoded_end) = decode_prefix(&resolved, &name, &rclpy)
                .unwrap_or_else(|e| panic!("{what}: decoding rclpy's bytes: {e}"));
            assert_eq!(decoded, expected, "{what}: decoded value");
            assert_eq!(decoded_end, end, "{what}: where the message ends");

            let ours = encode_with_padding(&resolved, &name, &expected)
                .unwrap_or_else(|e| panic!("{what}: encoding: {e}"));
            // rclpy's buffer can run on past the message (see `decode_prefix`); the
            // message itself is as long as ours.
            assert_eq!(ours.bytes.len(), end, "{what}: length");
            if rclpy.len() > end {
                padded_ends.insert(type_text.to_string());
            }
            let padding: BTreeSet<usize> = ours.padding.iter().flat_map(|r| r.clone()).collect();
            padding_bytes += padding.len();
            for (i, (a, b)) in ours.bytes.iter().zip(&rclpy).enumerate() {
                if !padding.contains(&i) {
                    assert_eq!(a, b, "{what}: byte {i} (payload offset {})", i - 4);
                }
            }
            assert!(ours
                .padding
                .iter()
                .flat_map(|r| r.clone())
                .all(|i| ours.bytes[i] == 0));
            cases += 1;
            types.insert(type_text.to_string());
        }
    }
    eprintln!(
        "{cases} cases of {} types equal to rclpy except {padding_bytes} padding bytes; \
         rclpy's buffer runs past the message for {padded_ends:?}",
        types.len()
    );
    assert!(types.len() >= 14 && cases >= 84, "{cases} cases, {types:?}");
}
