//! ROS 2 messages for the recording tests (shared with `horus-cli`'s tests through `#[path]`):
//! `tests/ros2_readers/messages.json` lists topics, their standard ROS 2 type and some field
//! values per message; every field not given takes its zero value. Each message becomes a
//! complete [`CdrValue`], its wire bytes (`horus_idl::cdr::encode`: encapsulation header and
//! CDR body, what a horus ROS-typed topic carries) and the complete value as JSON for
//! `check_recording.py`, which compares what three ROS 2 readers decode from the recording
//! with it, field by field.
//!
//! Value shorthands in messages.json: `{"$bytes": N, "seed": S}` for N pattern bytes,
//! `{"$f32le": [..]}` for packed little-endian float32s (point cloud data).

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;

use horus::msgs::Ros2Type;
use horus_idl::cdr::CdrValue;
use horus_idl::{
    ArrayKind, InterfaceSet, Primitive, Resolved, ResolvedBase, ResolvedType, TypeName,
};
use serde_json::{json, Value as Json};

/// One topic of messages.json, ready to publish or record.
pub(crate) struct Ros2Topic {
    /// The horus topic.
    pub(crate) topic: String,
    /// Type name, RIHS01 hash and ros2msg definition, from the standard interfaces.
    pub(crate) ty: Ros2Type,
    /// Each message's wire bytes.
    pub(crate) wire: Vec<Vec<u8>>,
    /// Each message's complete value as JSON.
    pub(crate) expected: Vec<Json>,
}

/// The directory of messages.json and check_recording.py.
pub(crate) fn readers_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../horus-record/tests/ros2_readers")
        .canonicalize()
        .expect("crates/horus-record/tests/ros2_readers")
}

/// The topics of messages.json.
pub(crate) fn topics() -> Vec<Ros2Topic> {
    let resolved = InterfaceSet::standard()
        .expect("standard interfaces")
        .resolve()
        .expect("standard interfaces resolve");
    let text = std::fs::read_to_string(readers_dir().join("messages.json")).unwrap();
    let spec: Json = serde_json::from_str(&text).unwrap();
    spec["topics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            let type_name = t["type"].as_str().unwrap();
            let name = TypeName::parse(type_name).expect("a type name");
            let ty = Ros2Type::new(
                type_name,
                &resolved
                    .type_hash(type_name)
                    .expect("a standard type")
                    .to_string(),
                &resolved.ros2msg_definition(type_name).unwrap(),
            );
            let mut wire = Vec::new();
            let mut expected = Vec::new();
            for m in t["messages"].as_array().unwrap() {
                let v = structure(&resolved, &name, Some(m));
                wire.push(horus_idl::cdr::encode(&resolved, &name, &v).unwrap());
                expected.push(to_json(&resolved, &name, &v));
            }
            Ros2Topic {
                topic: t["topic"].as_str().unwrap().to_owned(),
                ty,
                wire,
                expected,
            }
        })
        .collect()
}

fn primitive(p: Primitive, j: Option<&Json>) -> CdrValue {
    let f = j.and_then(Json::as_f64).unwrap_or(0.0);
    match p {
        Primitive::Bool => CdrValue::Bool(j.and_then(Json::as_bool).unwrap_or(false)),
        Primitive::Float32 => CdrValue::Float32(f as f32),
        Primitive::Float64 => CdrValue::Float64(f),
        Primitive::Int8 | Primitive::Int16 | Primitive::Int32 | Primitive::Int64 => {
            CdrValue::Int(j.and_then(Json::as_i64).unwrap_or(0))
        }
        _ => CdrValue::UInt(j.and_then(Json::as_u64).unwrap_or(0)),
    }
}

fn element(r: &Resolved, base: &ResolvedBase, j: Option<&Json>) -> CdrValue {
    match base {
        ResolvedBase::Primitive(p) => primitive(*p, j),
        ResolvedBase::String { .. } => {
            CdrValue::String(j.and_then(Json::as_str).unwrap_or("").to_owned())
        }
        ResolvedBase::WString { .. } => {
            CdrValue::WString(j.and_then(Json::as_str).unwrap_or("").to_owned())
        }
        ResolvedBase::Nested(name) => structure(r, name, j),
    }
}

/// Bytes from a shorthand or a list of numbers.
fn bytes(j: &Json) -> Vec<u8> {
    if let Some(n) = j.get("$bytes").and_then(Json::as_u64) {
        let seed = j.get("seed").and_then(Json::as_u64).unwrap_or(0);
        return (0..n).map(|i| (i * 7 + seed * 31 + 3) as u8).collect();
    }
    if let Some(fs) = j.get("$f32le").and_then(Json::as_array) {
        return fs
            .iter()
            .flat_map(|f| (f.as_f64().unwrap() as f32).to_le_bytes())
            .collect();
    }
    j.as_array()
        .unwrap()
        .iter()
        .map(|b| b.as_u64().unwrap() as u8)
        .collect()
}

fn member(r: &Resolved, t: &ResolvedType, j: Option<&Json>) -> CdrValue {
    let n = match t.array {
        ArrayKind::Single => return element(r, &t.base, j),
        ArrayKind::Fixed(n) => Some(n as usize),
        ArrayKind::Bounded(_) | ArrayKind::Unbounded => None,
    };
    if let ResolvedBase::Primitive(Primitive::Byte | Primitive::Char | Primitive::UInt8) = t.base {
        let mut b = j.map(bytes).unwrap_or_default();
        if let Some(n) = n {
            b.resize(n, 0);
        }
        return CdrValue::Bytes(b);
    }
    let given = j.and_then(Json::as_array).cloned().unwrap_or_default();
    let len = n.unwrap_or(given.len());
    CdrValue::Array(
        (0..len)
            .map(|i| element(r, &t.base, given.get(i)))
            .collect(),
    )
}

/// A complete structure `name` from the fields `j` gives.
pub(crate) fn structure(r: &Resolved, name: &TypeName, j: Option<&Json>) -> CdrValue {
    let def = r.get_struct(name).unwrap_or_else(|| panic!("{name}"));
    CdrValue::Struct(
        def.members
            .iter()
            .map(|m| {
                let v = member(r, &m.member_type, j.and_then(|j| j.get(&m.name)));
                (m.name.clone(), v)
            })
            .collect(),
    )
}

/// A value as `check_recording.py` expects it (placeholder members left out, as the Python
/// readers have no field for them).
fn to_json(r: &Resolved, name: &TypeName, v: &CdrValue) -> Json {
    let def = r.get_struct(name).unwrap();
    let mut obj = serde_json::Map::new();
    for m in def.members.iter().filter(|m| !m.placeholder) {
        let nested = match &m.member_type.base {
            ResolvedBase::Nested(n) => Some(n),
            _ => None,
        };
        obj.insert(m.name.clone(), plain(r, nested, v.field(&m.name).unwrap()));
    }
    Json::Object(obj)
}

fn plain(r: &Resolved, nested: Option<&TypeName>, v: &CdrValue) -> Json {
    match v {
        CdrValue::Bool(b) => json!(b),
        CdrValue::Int(i) => json!(i),
        CdrValue::UInt(u) => json!(u),
        CdrValue::Float32(f) => json!(f64::from(*f)),
        CdrValue::Float64(f) => json!(f),
        CdrValue::String(s) | CdrValue::WString(s) => json!(s),
        CdrValue::Bytes(b) => json!(b),
        CdrValue::Array(a) => Json::Array(a.iter().map(|x| plain(r, nested, x)).collect()),
        CdrValue::Struct(_) => to_json(r, nested.expect("a nested type"), v),
    }
}

/// The expected-values file for `check_recording.py`.
pub(crate) fn expected_file(topics: &[Ros2Topic], path: &Path) {
    let doc = json!({
        "topics": topics.iter().map(|t| json!({
            "topic": t.topic,
            "type": t.ty.type_name,
            "hash": t.ty.type_hash,
            "messages": t.expected,
        })).collect::<Vec<_>>(),
    });
    std::fs::write(path, serde_json::to_vec_pretty(&doc).unwrap()).unwrap();
}

/// The ROS 2 venv's Python: `HORUS_ROS2_PYTHON` if set (an interpreter with rclpy, rosbags
/// and mcap-ros2-support), else the repository's `scripts/ros2-python`, which runs the venv
/// `make setup-ros2` makes (`HORUS_ROS2_VENV`, default `~/.cache/horus-ros2-venv`). `Err`
/// (why) when that venv does not exist.
pub(crate) fn ros2_python() -> Result<PathBuf, String> {
    if let Some(p) = std::env::var_os("HORUS_ROS2_PYTHON") {
        return Ok(PathBuf::from(p));
    }
    let venv = std::env::var_os("HORUS_ROS2_VENV")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| Path::new(&h).join(".cache/horus-ros2-venv")))
        .ok_or("neither HORUS_ROS2_VENV nor HOME is set")?;
    if !venv.join("bin/python").exists() {
        return Err(format!(
            "no ROS 2 venv at {} (run `make setup-ros2`, or set HORUS_ROS2_PYTHON)",
            venv.display()
        ));
    }
    Ok(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/ros2-python"))
}

/// Runs `check_recording.py` on `recording`; panics with its output unless it passed.
/// Returns its output. Without the ROS 2 venv: prints why and returns `None` (skipped).
pub(crate) fn check_with_ros2_readers(recording: &Path, expected: &Path) -> Option<String> {
    run_checker(&[recording.as_os_str(), expected.as_os_str()])
}

/// [`check_with_ros2_readers`] without expected values: the three readers must agree on every
/// ROS-typed channel of `recording` (`check_recording.py --agree`).
pub(crate) fn check_readers_agree(recording: &Path) -> Option<String> {
    run_checker(&["--agree".as_ref(), recording.as_os_str()])
}

fn run_checker(args: &[&std::ffi::OsStr]) -> Option<String> {
    let python = match ros2_python() {
        Ok(p) => p,
        Err(why) => {
            eprintln!("SKIPPED: the ROS 2 readers' check: {why}");
            return None;
        }
    };
    let out = Command::new(&python)
        .arg(readers_dir().join("check_recording.py"))
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("{}: {e}", python.display()));
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "check_recording.py failed:\n{text}");
    eprintln!("{text}");
    Some(text)
}
