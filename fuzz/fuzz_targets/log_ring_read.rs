//! A process's log segment (`horus log`, the recorder's log tap, the Foxglove bridge and
//! the monitor read every process's) on arbitrary bytes, through the real reader
//! (`horus_log::LogSegment`).
//!
//! Two modes (bit 0 of the first byte). Raw: the bytes are the whole file (zero-extended to
//! a header page, and with bit 1 to the size its header claims, at most 1 MiB): the header
//! validation. Composed: a valid segment of 1–128 cells and 0–4 call sites (built with the
//! real layout, `horus_log::fuzz_api`) whose `head`, `tail`, pid, stamps, cells and call-site
//! entries the bytes give, stamps mostly those of committed records: the record, value and
//! call-site decoders and the format-string renderer. Opening must give a segment or a
//! typed error; every read must return (bounded by the ring), never panic or overflow.
#![no_main]

use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;

use horus_log::{fuzz_api, LogSegment};
use libfuzzer_sys::fuzz_target;

const HEADER: usize = 4096;
const MAX_FILE: usize = 1 << 20;

fn u64_at(b: &[u8], at: usize) -> u64 {
    let mut w = [0u8; 8];
    for (i, x) in w.iter_mut().enumerate() {
        *x = b.get(at + i).copied().unwrap_or(0);
    }
    u64::from_le_bytes(w)
}

fn raw(mode: u8, rest: &[u8]) -> Vec<u8> {
    let mut f = rest[..rest.len().min(MAX_FILE)].to_vec();
    if f.len() < HEADER {
        f.resize(HEADER, 0);
    }
    if mode & 2 != 0 {
        // The size the header's geometry claims (cells at 32, call sites at 64).
        let cells = u64_at(&f, 32);
        let sites = u64_at(&f, 64) & 0xffff_ffff;
        let want = cells
            .checked_mul(40)
            .and_then(|b| b.checked_add(sites * 512 + 3 * 4096 + HEADER as u64));
        if let Some(want) = want.filter(|&w| w as usize <= MAX_FILE) {
            f.resize(f.len().max(want as usize), 0);
        }
    }
    f
}

fn composed(rest: &[u8]) -> Vec<u8> {
    let cells = 1u64 << (rest.first().copied().unwrap_or(0) % 8);
    let sites = u32::from(rest.get(1).copied().unwrap_or(0) % 5);
    let head = u64_at(rest, 2);
    let tail = u64_at(rest, 10);
    let pid = u64_at(rest, 18) as u32;
    let (mut file, r) = fuzz_api::compose(cells, sites, pid, head, tail);
    let mut at = 22;
    // Stamps: a byte per cell; below 0x80, the stamp of a record committed at the
    // position of that cell in the last lap before `head`, else the byte itself.
    for c in 0..r.cells {
        let b = rest.get(at + c).copied().unwrap_or(0);
        let back = (c as u64).wrapping_sub(head) % cells;
        let p = head.wrapping_sub(cells).wrapping_add(back);
        let stamp = if b < 0x80 {
            p.wrapping_add(1)
        } else {
            u64::from(b)
        };
        file[r.stamps + 8 * c..r.stamps + 8 * c + 8].copy_from_slice(&stamp.to_ne_bytes());
    }
    at += r.cells;
    for (dst, len) in [
        (r.ring, r.cells * r.cell),
        (r.sites, r.site_capacity * r.site_size),
    ] {
        let src = rest.get(at..).unwrap_or(&[]);
        let n = len.min(src.len());
        file[dst..dst + n].copy_from_slice(&src[..n]);
        at += len;
    }
    file
}

fuzz_target!(|data: &[u8]| {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    let file = if mode & 1 == 0 {
        raw(mode, rest)
    } else {
        composed(rest)
    };
    let name = format!("/horus-fuzz-log-{}", std::process::id());
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
    let opened = LogSegment::open(&name);
    // The mapping (if any) outlives the name: nothing is left in /dev/shm.
    std::fs::remove_file(&path).expect("unlink");
    let mut seg = match opened {
        Ok(seg) => seg,
        Err(e) => {
            let _ = e.to_string();
            return;
        }
    };
    let c = seg.counters();
    let _ = (
        seg.pid(),
        seg.process().len(),
        seg.is_alive(),
        seg.exited_cleanly(),
    );
    for (from, wait) in [
        (0, false),
        (0, true),
        (c.head.saturating_sub(3), true),
        (u64::MAX - 1, false),
    ] {
        let b = seg.read_from(from, wait);
        assert!(b.records.len() as u64 <= c.head.saturating_sub(from).max(1 << 25));
        for r in &b.records {
            let _ = r.human();
        }
        let again = seg.read_from(b.next, wait);
        let _ = again.records.len();
    }
});
