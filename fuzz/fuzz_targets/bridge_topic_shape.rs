//! What another host's bridge answers when `horus bridge` (crates/horus-zenoh) asks for the
//! shape of a topic it offers latched (`<domain>/td/<host>/<topic>`), on arbitrary bytes:
//! `topic_shape::parse` — a QoS line of compact JSON, a newline, then the description JSON
//! (through `horus::description::parse_message`).
//!
//! What must hold: no panic, no hang; a shape that parses has a latched depth in
//! 1..=its depth, a valid description and a known overflow policy, and its segment size
//! (`segment_bytes`, what the copy is charged against `limits.max_latched_copy_bytes`) is
//! computed without overflow (saturating) and grows with every QoS field it counts.
//!
//! topic_shape.rs is compiled here as it is (`#[path]`): it needs horus, horus-msgs, serde
//! and serde_json, not Zenoh (too heavy to build instrumented).
#![no_main]

use libfuzzer_sys::fuzz_target;

#[allow(dead_code, unreachable_pub)]
#[path = "../../crates/horus-zenoh/src/topic_shape.rs"]
mod topic_shape;

fuzz_target!(|data: &[u8]| {
    let Ok(shape) = topic_shape::parse(data) else {
        return;
    };
    assert!(shape.latched >= 1 && shape.latched <= shape.qos.depth);
    assert!(shape.qos.overflow.is_some());
    shape.description.validate().expect("a parsed description is valid");
    let bytes = shape.segment_bytes();
    let q = &shape.qos;
    if q.max_publishers > 0 {
        assert!(bytes >= u64::from(q.chunks_per_publisher).saturating_mul(q.chunk_bytes));
        assert!(bytes >= u64::from(q.depth).saturating_mul(u64::from(q.inline_bytes) + 64));
    }
});
