//! Helpers shared by the tests: the standard types resolved by `horus-idl` (the dynamic
//! codec, the reference), registry look-up, the rclpy fixtures of `horus-idl`, and
//! random values of any type from a small deterministic generator.

#![allow(dead_code)]

use std::path::{Path, PathBuf};

use horus_cdr::RosTypeInfo;
use horus_idl::cdr::CdrValue;
use horus_idl::{
    ArrayKind, InterfaceSet, Primitive, Resolved, ResolvedBase, ResolvedType, TypeName,
};
use serde_json::Value as Json;

pub(crate) fn standard() -> Resolved {
    InterfaceSet::standard().unwrap().resolve().unwrap()
}

/// The generated type's registry entry.
pub(crate) fn info(type_name: &str) -> &'static RosTypeInfo {
    horus_ros_msgs::REGISTRY
        .iter()
        .find(|t| t.type_name == type_name)
        .unwrap_or_else(|| panic!("{type_name} is not in REGISTRY"))
}

pub(crate) fn hex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

fn byte_like(p: Primitive) -> bool {
    matches!(p, Primitive::Byte | Primitive::Char | Primitive::UInt8)
}

/// One rclpy fixture: type, case, the value as JSON, rclpy's bytes, where the message ends.
pub(crate) struct Fixture {
    pub(crate) type_name: String,
    pub(crate) case: String,
    pub(crate) value: Json,
    pub(crate) cdr: Vec<u8>,
    pub(crate) end: usize,
}

pub(crate) fn fixtures() -> Vec<Fixture> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../horus-idl/tests/fixtures/cdr");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "jsonl"))
        .collect();
    files.sort();
    let mut out = Vec::new();
    for file in files {
        for line in std::fs::read_to_string(&file).unwrap().lines() {
            let j: Json = serde_json::from_str(line).unwrap();
            out.push(Fixture {
                type_name: j["type"].as_str().unwrap().to_string(),
                case: j["case"].to_string(),
                cdr: hex(j["cdr"].as_str().unwrap()),
                end: j["message_end"].as_u64().unwrap() as usize,
                value: j["value"].clone(),
            });
        }
    }
    out
}

/// A small deterministic generator (SplitMix64).
pub(crate) struct Rng(u64);

impl Rng {
    pub(crate) fn new(seed: u64) -> Self {
        Rng(seed)
    }

    pub(crate) fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    pub(crate) fn below(&mut self, n: u64) -> u64 {
        if n == 0 {
            0
        } else {
            self.next_u64() % n
        }
    }
}

/// How big random strings and sequences are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Shape {
    /// Every string and sequence empty.
    Empty,
    /// A few elements, short Unicode strings.
    Small,
    /// Long strings; large sequences of numbers; longer ones of structures at the top.
    Large,
}

const CHARS: &[char] = &[
    'a', 'Z', '0', ' ', '_', '/', 'é', 'Ω', '漢', '🦀', '"', '\\', '\n',
];

fn random_text(rng: &mut Rng, shape: Shape, bound: Option<u32>, utf16: bool) -> String {
    let len = match shape {
        Shape::Empty => 0,
        Shape::Small => rng.below(8),
        Shape::Large => 300 + rng.below(100),
    };
    let mut s = String::new();
    for _ in 0..len {
        let c = CHARS[rng.below(CHARS.len() as u64) as usize];
        let mut t = s.clone();
        t.push(c);
        let size = if utf16 {
            t.encode_utf16().count()
        } else {
            t.len()
        };
        if bound.is_some_and(|b| size > b as usize) {
            break;
        }
        s = t;
    }
    s
}

fn random_f64(rng: &mut Rng) -> f64 {
    match rng.below(8) {
        0 => 0.0,
        1 => -0.0,
        2 => f64::INFINITY,
        3 => f64::MIN_POSITIVE / 4.0,
        _ => loop {
            let f = f64::from_bits(rng.next_u64());
            if !f.is_nan() {
                break f;
            }
        },
    }
}

fn random_f32(rng: &mut Rng) -> f32 {
    match rng.below(8) {
        0 => 0.0,
        1 => -0.0,
        2 => f32::NEG_INFINITY,
        3 => f32::MIN_POSITIVE / 4.0,
        _ => loop {
            let f = f32::from_bits(rng.next_u64() as u32);
            if !f.is_nan() {
                break f;
            }
        },
    }
}

fn random_primitive(rng: &mut Rng, p: Primitive) -> CdrValue {
    let x = rng.next_u64();
    match p {
        Primitive::Bool => CdrValue::Bool(x & 1 == 1),
        Primitive::Byte | Primitive::Char | Primitive::UInt8 => CdrValue::UInt(x as u8 as u64),
        Primitive::UInt16 => CdrValue::UInt(x as u16 as u64),
        Primitive::UInt32 => CdrValue::UInt(x as u32 as u64),
        Primitive::UInt64 => CdrValue::UInt(x),
        Primitive::Int8 => CdrValue::Int(x as i8 as i64),
        Primitive::Int16 => CdrValue::Int(x as i16 as i64),
        Primitive::Int32 => CdrValue::Int(x as i32 as i64),
        Primitive::Int64 => CdrValue::Int(x as i64),
        Primitive::Float32 => CdrValue::Float32(random_f32(rng)),
        Primitive::Float64 => CdrValue::Float64(random_f64(rng)),
    }
}

fn random_element(
    r: &Resolved,
    base: &ResolvedBase,
    rng: &mut Rng,
    shape: Shape,
    depth: usize,
) -> CdrValue {
    match base {
        ResolvedBase::Primitive(p) => random_primitive(rng, *p),
        ResolvedBase::String { bound } => CdrValue::String(random_text(rng, shape, *bound, false)),
        ResolvedBase::WString { bound } => CdrValue::WString(random_text(rng, shape, *bound, true)),
        ResolvedBase::Nested(n) => random_struct(r, n, rng, shape, depth + 1),
    }
}

fn random_member(
    r: &Resolved,
    t: &ResolvedType,
    rng: &mut Rng,
    shape: Shape,
    depth: usize,
) -> CdrValue {
    let plain = matches!(t.base, ResolvedBase::Primitive(_));
    let len = match t.array {
        ArrayKind::Single => return random_element(r, &t.base, rng, shape, depth),
        ArrayKind::Fixed(n) => n as u64,
        ArrayKind::Bounded(_) | ArrayKind::Unbounded => {
            let len = match (shape, plain, depth) {
                (Shape::Empty, _, _) => 0,
                (Shape::Small, _, _) => rng.below(4),
                (Shape::Large, true, _) => 1000 + rng.below(1000),
                (Shape::Large, false, 0) => 20 + rng.below(5),
                (Shape::Large, false, _) => rng.below(3),
            };
            match t.array {
                ArrayKind::Bounded(b) => len.min(b as u64),
                _ => len,
            }
        }
    };
    match t.base {
        ResolvedBase::Primitive(p) if byte_like(p) => {
            CdrValue::Bytes((0..len).map(|_| rng.next_u64() as u8).collect())
        }
        _ => CdrValue::Array(
            (0..len)
                .map(|_| random_element(r, &t.base, rng, shape, depth))
                .collect(),
        ),
    }
}

/// A random value of structure `name`.
pub(crate) fn random_struct(
    r: &Resolved,
    name: &TypeName,
    rng: &mut Rng,
    shape: Shape,
    depth: usize,
) -> CdrValue {
    let def = r.get_struct(name).unwrap();
    CdrValue::Struct(
        def.members
            .iter()
            .map(|m| {
                let v = if m.placeholder {
                    CdrValue::UInt(0)
                } else {
                    random_member(r, &m.member_type, rng, shape, depth)
                };
                (m.name.clone(), v)
            })
            .collect(),
    )
}
