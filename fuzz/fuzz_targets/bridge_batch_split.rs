//! What another host's bridge hands `horus bridge` (crates/horus-zenoh) as a batch of messages
//! of one topic (`wire::Batch`: `HZB1`, then each message behind a u32 length), on arbitrary
//! bytes: the splitter `wire::batch_frames` that the receiving bridge runs on every batch.
//!
//! What must hold: no panic, no hang; at most `MAX_BATCH_MESSAGES` frames, then at most one
//! `Err`, which is last; the frames are the payload in order (writing them again with
//! `Batch::push` gives back the payload up to where an `Err` ended it, byte for byte); the
//! splitter reads nothing but a payload that starts with the magic.
//!
//! wire.rs is compiled here as it is (`#[path]`): it needs only thiserror and serde, not
//! Zenoh (too heavy to build instrumented).
#![no_main]

use libfuzzer_sys::fuzz_target;

#[allow(dead_code, unreachable_pub)]
#[path = "../../crates/horus-zenoh/src/wire.rs"]
mod wire;

fuzz_target!(|data: &[u8]| {
    let frames: Vec<_> = wire::batch_frames(data).collect();
    if !wire::is_batch(data) {
        assert!(frames.is_empty(), "a payload without the magic is no batch");
        return;
    }
    let ok = frames.iter().take_while(|f| f.is_ok()).count();
    assert!(ok <= wire::MAX_BATCH_MESSAGES, "{ok} frames");
    assert!(frames.len() <= ok + 1, "an error ends the batch");
    let mut again = wire::Batch::with_capacity(data.len());
    for f in frames.iter().take(ok) {
        again.push(f.as_ref().expect("ok frame"));
    }
    assert_eq!(again.len(), ok);
    let again = again.into_bytes();
    assert_eq!(&data[..again.len()], &again[..], "frames are the payload in order");
    match frames.last() {
        Some(Err(wire::WireError::BatchCount)) => {
            assert_eq!(ok, wire::MAX_BATCH_MESSAGES);
            assert!(again.len() < data.len());
        }
        Some(Err(wire::WireError::Frame(_))) => assert!(again.len() < data.len()),
        Some(Err(e)) => panic!("unexpected error {e}"),
        Some(Ok(_)) | None => assert_eq!(again.len(), data.len(), "all of it read"),
    }
});
