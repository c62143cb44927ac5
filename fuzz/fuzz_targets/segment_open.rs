//! Segment open and validation on arbitrary segment files.
//!
//! Input: one flag byte, then the file's bytes. Flag bit 0 zero-extends the
//! file to the size its header claims (at most 256 KiB), so short inputs
//! reach valid layouts. The bytes are written as a segment under /dev/shm
//! (unique per process, unlinked after each input) and opened with
//! `Channel::open_existing`: it must return a channel or a typed error,
//! agree with the header validation done on the same bytes directly, and a
//! channel it returns must survive a subscriber and a publisher joining,
//! sending and receiving over whatever the rest of the file holds.
//!
//! Not fuzzed here: files whose magic word is 0 or that are shorter than a
//! header — the opener waits up to 2 s for a creator to finish those (by
//! design), so they are padded (short files) or skipped (zero magic); the
//! header check itself still runs on them.
#![no_main]

use horus_fuzz::scratch_name;
use horus_shm::fuzz_api;
use horus_shm::{Channel, OpenError, PublisherPort, Received, Segment, SubscriberPort};
use libfuzzer_sys::fuzz_target;

/// Header size plus the membership and wake lines: what the opener maps
/// before it looks at the header.
const MIN_FILE: usize = 384;
/// Largest file written.
const MAX_FILE: u64 = 256 << 10;

fuzz_target!(|data: &[u8]| {
    let Some((&flags, body)) = data.split_first() else {
        return;
    };
    let mut file = body.to_vec();
    if file.len() < MIN_FILE {
        file.resize(MIN_FILE, 0);
    }
    if flags & 1 != 0 {
        let claimed = u64::from_le_bytes(file[16..24].try_into().expect("8 bytes"));
        if claimed > file.len() as u64 && claimed <= MAX_FILE {
            file.resize(claimed as usize, 0);
        }
    }
    let direct = fuzz_api::validate_header(&file, file.len() as u64);
    if let Ok(layout) = &direct {
        assert!(layout.total <= file.len(), "layout larger than the file");
    }
    if file[..8] == [0; 8] {
        assert!(matches!(direct, Err(OpenError::BadMagic { found: 0, .. })));
        return;
    }

    let name = scratch_name("seg");
    let path = format!("/dev/shm{name}");
    std::fs::write(&path, &file).expect("write the segment file");
    // 0600 like every segment of ours (a file others may write is refused before its header).
    std::fs::set_permissions(&path, std::os::unix::fs::PermissionsExt::from_mode(0o600))
        .expect("chmod the segment file");
    let opened = Channel::open_existing(&name, None);
    // The mapping outlives the name: a crash below leaves nothing behind.
    Segment::unlink(&name);
    match opened {
        Ok(chan) => {
            let layout = direct
                .as_ref()
                .expect("opened a segment the header check rejects");
            assert_eq!(chan.layout(), layout);
            exercise(&chan);
        }
        Err(e) => {
            assert!(
                direct.is_err(),
                "rejected a segment the header check accepts: {e}"
            );
            let _ = e.to_string();
        }
    }
});

/// A subscriber and a publisher join the channel, the publisher sends (which
/// starts the subscriber's cursor), and the subscriber drains what it can.
fn exercise(chan: &std::sync::Arc<Channel>) {
    let cfg = chan.layout().config;
    let mut sub = SubscriberPort::join(chan, false, false);
    let mut out = vec![0u64; fuzz_api::slot_capacity_words(chan)];
    if let Ok(sub) = &mut sub {
        // Before our publisher joins: only what the file's membership says.
        let _ = sub.try_receive(&mut out);
    }
    if let Ok(mut publisher) = PublisherPort::join(chan) {
        let _ = publisher.send_inline(&[0x5a; 8]);
        if let Some(loan) = publisher.loan_chunk() {
            let _ = publisher.send_chunk(loan, 8.min(chan.chunk_size()));
        }
    }
    if let Ok(mut sub) = sub {
        let rounds = u64::from(cfg.depth).min(64) + 4;
        for _ in 0..rounds {
            match sub.try_receive(&mut out) {
                None => break,
                Some(Received::Inline { len }) => assert!(len <= 8 * out.len()),
                Some(Received::Chunk { pool, chunk, len }) => {
                    assert!(pool < cfg.max_publishers as usize);
                    assert!(chunk < cfg.chunks_per_publisher as usize);
                    assert!(len <= chan.chunk_size());
                    sub.place().release_chunk(pool, chunk);
                }
            }
        }
        let _ = sub.has_pending();
    }
    let _ = chan.reclaim_dead();
}
