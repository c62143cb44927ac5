//! The host's tf buffer (`horus_tf::TfBuffer`) on arbitrary segment bytes: a
//! crashed or hostile peer's frame table, sample rings, positions, names,
//! lease and participant words.
//!
//! Input: one mode byte, then the bytes. Raw (bit 0 clear): the bytes are the
//! whole file (padded to a header page; a zero magic word is made non-zero,
//! since an opener waits up to 2 s for a creator to publish it): the header
//! validation. Composed (bit 0 set): a valid header for 1–8 frames of 2–8
//! samples (`horus_tf::fuzz_api`), and the bytes fill the control words,
//! frame records and sample slots (the closing flag is cleared: a live
//! closer makes openers wait for it, by design). Opening must give a buffer
//! or a typed error; then every lookup between the frames, at several times,
//! the frames listing and a write must return, never panic or hang.
#![no_main]

use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::time::Duration;

use horus_tf::{fuzz_api, TfBuffer, LATEST};
use libfuzzer_sys::fuzz_target;

const MAX_FILE: usize = 64 << 10;

fn raw(rest: &[u8]) -> Vec<u8> {
    let mut f = rest[..rest.len().min(MAX_FILE)].to_vec();
    if f.len() < 4096 {
        f.resize(4096, 0);
    }
    if f[..8] == [0; 8] {
        f[0] = 1;
    }
    f
}

fn composed(rest: &[u8]) -> Option<Vec<u8>> {
    let b = |i: usize| rest.get(i).copied().unwrap_or(0);
    let frames = 1 + u32::from(b(0) % 8);
    let history = 2 << (b(1) % 3);
    let window_ms = 1 + u64::from(b(2)) * 40;
    let mut c = fuzz_api::compose(frames, history, window_ms)?;
    let mut src = rest.get(3..).unwrap_or(&[]);
    // Control words (lease, frame count, counters, participants) first, then the
    // records and the slots.
    for (start, len) in [(c.control, 2048 - c.control), c.frames, c.samples] {
        let n = len.min(src.len());
        c.file[start..start + n].copy_from_slice(&src[..n]);
        src = &src[n..];
    }
    c.file[c.closing..c.closing + 8].fill(0);
    Some(c.file)
}

fuzz_target!(|data: &[u8]| {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    let file = if mode & 1 == 0 {
        raw(rest)
    } else {
        match composed(rest) {
            Some(f) => f,
            None => return,
        }
    };
    let ns = format!("fuzz-tf-{}", std::process::id());
    let name = horus_tf::segment_name(&ns).expect("a valid namespace");
    let path = format!("/dev/shm{name}");
    let _ = std::fs::remove_file(&path);
    {
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&path)
            .expect("create the segment file");
        f.write_all(&file).expect("write the segment file");
    }
    let opened = TfBuffer::builder()
        .lease_wait(Duration::from_millis(1))
        .open(&ns);
    let buffer = match opened {
        Ok(b) => b,
        Err(e) => {
            let _ = e.to_string();
            let _ = std::fs::remove_file(&path);
            return;
        }
    };
    let frames = buffer.frames();
    assert!(frames.len() <= 8 || mode & 1 == 0);
    let names: Vec<String> = frames.iter().map(|f| f.name.clone()).take(8).collect();
    for t in &names {
        for s in &names {
            for time in [LATEST, 1, 1_000_000_000, i64::MAX, i64::MIN] {
                if let Err(e) = buffer.lookup_transform(t, s, time) {
                    let _ = e.to_string();
                }
            }
        }
    }
    let id = horus_tf::Transform::IDENTITY;
    if let (Some(a), Some(b)) = (names.first(), names.last()) {
        let _ = buffer.set(a, b, 2_000_000_000, &id, false);
        let _ = buffer.set(b, "fuzz_child", 2_000_000_000, &id, true);
    }
    let _ = buffer.set("fuzz_parent", "fuzz_child2", 3_000_000_000, &id, false);
    let _ = buffer.stats();
    drop(buffer);
    // Whether or not the last-one-out removed it, nothing is left.
    let _ = std::fs::remove_file(&path);
});
