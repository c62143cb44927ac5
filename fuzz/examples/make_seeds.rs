//! Writes the seed corpora under `seeds/<target>/` (small valid inputs the
//! fuzzer mutates from). Run from this directory:
//!
//! ```sh
//! cargo run --example make_seeds
//! ```
//!
//! Uses only public APIs and the input encoders of `horus_fuzz`, so it builds
//! without `--cfg fuzzing`.

use std::path::Path;

use horus_fuzz::ring_input::{ChunkInput, RingInput, SlotInput, Stamp, State, KIND_CHUNK};
use horus_shm::{Channel, ChannelConfig, PublisherPort, Segment, SubscriberPort, SCHEMA_BYTES};
use horus_tensor::TensorRef;

fn main() -> std::io::Result<()> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("seeds");
    let write = |target: &str, name: &str, bytes: &[u8]| -> std::io::Result<()> {
        let dir = root.join(target);
        std::fs::create_dir_all(&dir)?;
        std::fs::write(dir.join(name), bytes)
    };
    write("segment_open", "header_only", &segment_seed(false))?;
    write("segment_open", "with_messages", &segment_seed(true))?;
    for (name, input) in ring_seeds() {
        write("ring_read", name, &input.write())?;
    }
    for (name, input) in chunk_seeds() {
        write("chunk_descriptor", name, &input.write())?;
    }
    for (name, r) in tensor_seeds() {
        write("tensor_descriptor", name, bytemuck::bytes_of(&r))?;
    }
    write("stats_table", "one_node", &stats_seed(2, 1))?;
    write("stats_table", "empty", &stats_seed(0, 0))?;
    println!("seeds written under {}", root.display());
    Ok(())
}

/// Flag byte 1 (zero-extend to the claimed size) and a real segment's bytes
/// without its trailing zeros.
fn segment_seed(messages: bool) -> Vec<u8> {
    let config = ChannelConfig {
        schema: [3; SCHEMA_BYTES],
        depth: 4,
        slot_payload: 16,
        max_publishers: 1,
        max_subscribers: 1,
        chunk_size: if messages { 64 } else { 0 },
        chunks_per_publisher: if messages { 2 } else { 0 },
        qos_code: 1,
    };
    let name = format!("/horus.fuzz-seeds-{}.seg", std::process::id());
    Segment::unlink(&name);
    let chan = Channel::open_or_create(&name, &config).expect("seed channel");
    let ports = messages.then(|| {
        let sub = SubscriberPort::join(&chan, false, false).expect("subscriber");
        let mut publisher = PublisherPort::join(&chan).expect("publisher");
        // Inline messages only: a chunk would put bytes at the very end
        // (the pool), and the seed must stay small.
        publisher.send_inline(b"hello, robot").expect("fits");
        publisher.send_inline(b"second").expect("fits");
        (sub, publisher)
    });
    let bytes = std::fs::read(format!("/dev/shm{name}")).expect("read segment");
    drop(ports);
    Segment::unlink(&name);
    let end = bytes.iter().rposition(|&b| b != 0).map_or(0, |i| i + 1);
    let mut seed = vec![1u8];
    seed.extend_from_slice(&bytes[..end.max(384)]);
    seed
}

fn inline_slot(text: &[u8]) -> SlotInput {
    let mut words = vec![0u64; text.len().div_ceil(8)];
    for (i, b) in text.iter().enumerate() {
        words[i / 8] |= u64::from(*b) << (8 * (i % 8));
    }
    SlotInput {
        stamp: Stamp::Committed,
        meta: text.len() as u64,
        words,
    }
}

fn ring_seeds() -> Vec<(&'static str, RingInput)> {
    let ready = RingInput {
        stamp: 10,
        meta: 13,
        seq: 5,
        out_words: 4,
        words: vec![1, 2, 3, 4],
        head: 6,
        cursor: 5,
        slots: vec![inline_slot(b"hello, robot!"), inline_slot(b"bye")],
    };
    let lapped = RingInput {
        stamp: 2 * 9,
        meta: 8,
        seq: 5,
        out_words: 2,
        words: vec![7, 7],
        head: 9,
        cursor: 3,
        slots: vec![SlotInput {
            stamp: Stamp::Raw(2 * 7),
            meta: 8,
            words: vec![42],
        }],
    };
    let chunk = RingInput {
        stamp: 2,
        meta: 16 | (KIND_CHUNK << 32),
        seq: 1,
        out_words: 14,
        words: vec![(1 << 32) | 2, 32],
        head: 1,
        cursor: 1,
        slots: vec![SlotInput {
            stamp: Stamp::Committed,
            meta: 16 | (KIND_CHUNK << 32),
            words: vec![(1 << 32) | 2, 32],
        }],
    };
    vec![("ready", ready), ("lapped", lapped), ("chunk", chunk)]
}

fn chunk_seeds() -> Vec<(&'static str, ChunkInput)> {
    let valid = ChunkInput {
        cursor: 1,
        head: 1,
        meta: None,
        desc: (7 << 32) | 2,
        len: 32,
        states: [
            State::Raw(0),
            State::Raw(0),
            State::Matching(0),
            State::Raw(0),
        ],
        adopt_head: 2,
        adopt_slots: vec![
            (Stamp::Committed, (3 << 32) | 1, 64),
            (Stamp::Committed, (2 << 32) | 3, 8),
        ],
        adopt_states: [0, (3 << 33) | (1 << 32), 0, (2 << 33) | (1 << 32) | 1],
    };
    let stale = ChunkInput {
        desc: (8 << 32) | 2,
        len: 65,
        states: [State::Raw(0); 4],
        ..valid.clone()
    };
    vec![("valid", valid), ("stale", stale)]
}

fn tensor_seeds() -> Vec<(&'static str, TensorRef)> {
    let mut image: TensorRef = bytemuck::Zeroable::zeroed();
    image.pool_id = 1;
    image.slot = 0;
    image.generation = 1;
    image.offset = 4096; // the data of slot 0 of a 2-slot pool
    image.nbytes = 4096;
    image.ndim = 3;
    image.kind = 0;
    image.dtype[..3].copy_from_slice(b"|u1");
    image.shape[..3].copy_from_slice(&[32, 32, 4]);
    image.frame_id[..6].copy_from_slice(b"camera");
    let mut floats = image;
    floats.ndim = 2;
    floats.dtype[..3].copy_from_slice(b"<f4");
    floats.shape = [0; 8];
    floats.shape[..2].copy_from_slice(&[16, 64]);
    let mut other = floats;
    other.dtype = *b"<M8[ns]\0";
    vec![("image", image), ("floats", floats), ("datetime", other)]
}

/// A statistics file as the scheduler writes it: header (magic, version,
/// sizes, capacity, pid, count, owner word, name; the membership word at 248
/// left 0) and `capacity` zeroed records, the first `count` of them named.
fn stats_seed(capacity: u32, count: u32) -> Vec<u8> {
    let mut b = vec![0u8; 256 + 384 * capacity as usize];
    b[0..8].copy_from_slice(b"HORUSSTA");
    b[8..12].copy_from_slice(&3u32.to_le_bytes()); // version
    b[12..16].copy_from_slice(&256u32.to_le_bytes()); // header size
    b[16..20].copy_from_slice(&384u32.to_le_bytes()); // record size
    b[20..24].copy_from_slice(&capacity.to_le_bytes());
    b[24..28].copy_from_slice(&4242u32.to_le_bytes()); // pid
    b[32..40].copy_from_slice(&((4242u64 << 32) | 77).to_le_bytes()); // owner word
    b[28..32].copy_from_slice(&count.to_le_bytes());
    b[40..45].copy_from_slice(b"robot"); // scheduler name
    b[104..112].copy_from_slice(&2u64.to_le_bytes()); // header seqlock: even
    for i in 0..count as usize {
        let rec = 256 + 384 * i;
        b[rec..rec + 8].copy_from_slice(&2u64.to_le_bytes()); // record seqlock
        b[rec + 8..rec + 13].copy_from_slice(b"motor"); // node name
    }
    b
}
