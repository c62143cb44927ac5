//! What another host's bridge (or any Zenoh peer of the domain) hands `horus bridge`
//! (crates/horus-zenoh), on arbitrary bytes: the 48-byte wire header in front of every
//! message and call (wire.rs), and the key expressions of liveliness tokens and data
//! samples (keys.rs: `<domain>/<kind>/<host>/<schema>/<name…>`, `<domain>/d/<host>/…`).
//!
//! What must hold: no panic, no hang; a header that reads is exactly what writing it gives
//! back (byte for byte) and the payload is the rest; a token key that parses formats to a
//! key that parses to the same token; the host of a data key is one non-separator chunk.
//!
//! wire.rs and keys.rs are compiled here as they are (`#[path]`): they need only thiserror
//! and serde, not Zenoh (too heavy to build instrumented).
#![no_main]

use libfuzzer_sys::fuzz_target;

#[allow(dead_code, unreachable_pub)]
#[path = "../../crates/horus-zenoh/src/wire.rs"]
mod wire;
#[allow(dead_code, unreachable_pub)]
#[path = "../../crates/horus-zenoh/src/keys.rs"]
mod keys;

fuzz_target!(|data: &[u8]| {
    if let Ok((h, body)) = wire::WireHeader::read(data) {
        assert_eq!(body.len(), data.len() - wire::HEADER_LEN);
        let mut again = [0u8; wire::HEADER_LEN];
        h.write(&mut again);
        assert_eq!(&again[..], &data[..wire::HEADER_LEN], "header round trip");
    }
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let k = keys::Keys::new("horus");
    if let Some(t) = k.parse_token(text) {
        let key = k.token(t.kind, &t.host, t.schema, &t.name);
        assert_eq!(k.parse_token(&key), Some(t), "token round trip");
    }
    if let Some(host) = k.data_host(text) {
        assert!(!host.contains('/'));
    }
});
