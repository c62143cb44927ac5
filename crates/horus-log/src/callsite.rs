//! Call sites: what a log statement says once (level, target, file:line, format string,
//! field names), so that each record carries only a 4-byte id.
//!
//! Each macro expansion owns a `static CallSite`. The first record it writes registers it:
//! a fetch_add on the segment's `sites_next` picks a table entry, the entry is written and
//! published by storing its stamp (`index + 1`, Release), and the id is cached in the
//! static. Two threads racing on the first record of one call site may both register it
//! (the loser's entry stays valid, unused): registration is lock-free, like the ring.
//!
//! Entry (SITE_SIZE bytes): `stamp u32, level u32, line u32, nargs u16, flags u16,
//! target_len u16, file_len u16, format_len u16, names_len u16`, then the four strings
//! back to back (field names joined by `\0`), cut to fit.

use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

use crate::layout::SITE_SIZE;
use crate::Level;

/// Entry header bytes.
const ENTRY_HEAD: usize = 24;
/// Site flag: the record's values are `target, file, line, message, (key, value)*`
/// (bridged records from `log`, `tracing` and Python).
pub(crate) const DYNAMIC: u16 = 1;
/// Site flag: a string was cut to fit the entry.
pub(crate) const CUT: u16 = 2;

/// What a log statement knows at compile time.
#[derive(Debug)]
pub struct Meta {
    /// Severity.
    pub level: Level,
    /// Target (default: the module path).
    pub target: &'static str,
    /// Source file.
    pub file: &'static str,
    /// Source line.
    pub line: u32,
    /// The format string.
    pub format: &'static str,
    /// Names of the key/value fields after the format arguments.
    pub fields: &'static [&'static str],
    /// Positional format arguments.
    pub nargs: u16,
    /// Internal flags (0 for macro call sites).
    #[doc(hidden)]
    pub flags: u16,
}

/// A call site's registration (one `static` per macro expansion).
#[derive(Debug)]
pub struct CallSite {
    pub(crate) meta: &'static Meta,
    /// `generation << 32 | (entry index + 1)` in the table of the logger of that
    /// generation; 0 until registered. A forked child's logger has a new generation (and
    /// a new, empty table), so the ids its parent cached do not carry over.
    id: AtomicU64,
}

impl CallSite {
    /// A call site for `meta`, not yet registered.
    pub const fn new(meta: &'static Meta) -> Self {
        CallSite {
            meta,
            id: AtomicU64::new(0),
        }
    }

    /// The id registered with the logger of generation `gen` (entry index + 1), or 0.
    #[inline(always)]
    pub(crate) fn id(&self, gen: u32) -> u32 {
        // Relaxed: the id only names an entry; the entry's own stamp (Release, checked by
        // readers with Acquire) orders its contents.
        let v = self.id.load(Ordering::Relaxed);
        if (v >> 32) as u32 == gen {
            v as u32
        } else {
            0
        }
    }

    /// Records the id this call site got from the logger of generation `gen` (the first
    /// registration of a generation wins).
    pub(crate) fn set_id(&self, gen: u32, id: u32) -> u32 {
        let new = (u64::from(gen) << 32) | u64::from(id);
        // Relaxed: see `id`.
        let mut cur = self.id.load(Ordering::Relaxed);
        loop {
            if (cur >> 32) as u32 == gen && cur as u32 != 0 {
                return cur as u32;
            }
            match self
                .id
                .compare_exchange(cur, new, Ordering::Relaxed, Ordering::Relaxed)
            {
                Ok(_) => return id,
                Err(now) => cur = now,
            }
        }
    }
}

/// Writes `meta` into entry `index` of the table at `table` and publishes it.
///
/// # Safety
/// `table` points to `capacity` entries of SITE_SIZE bytes in the live mapping, and
/// `index < capacity` was handed out to this caller alone (by `sites_next`).
pub(crate) unsafe fn write_entry(table: *mut u8, index: u32, meta: &Meta) {
    // SAFETY: per the contract, the entry is inside the mapping and ours alone.
    let e = unsafe { table.add(index as usize * SITE_SIZE) };
    let mut buf = [0u8; SITE_SIZE];
    let mut at = ENTRY_HEAD;
    let mut flags = meta.flags;
    let mut put = |s: &[u8]| -> u16 {
        let n = s.len().min(SITE_SIZE - at);
        if n < s.len() {
            flags |= CUT;
        }
        buf[at..at + n].copy_from_slice(&s[..n]);
        at += n;
        n as u16
    };
    let target = put(meta.target.as_bytes());
    let file = put(meta.file.as_bytes());
    let format = put(meta.format.as_bytes());
    let mut names = 0u16;
    for (i, f) in meta.fields.iter().enumerate() {
        if i > 0 {
            names += put(b"\0");
        }
        names += put(f.as_bytes());
    }
    buf[4..8].copy_from_slice(&(meta.level as u32).to_ne_bytes());
    buf[8..12].copy_from_slice(&meta.line.to_ne_bytes());
    buf[12..14].copy_from_slice(&meta.nargs.to_ne_bytes());
    buf[14..16].copy_from_slice(&flags.to_ne_bytes());
    for (i, n) in [target, file, format, names].into_iter().enumerate() {
        buf[16 + 2 * i..18 + 2 * i].copy_from_slice(&n.to_ne_bytes());
    }
    // SAFETY: the entry is SITE_SIZE bytes inside the mapping and not yet published
    // (readers ignore it until its stamp is index + 1); we skip the stamp word.
    unsafe { std::ptr::copy_nonoverlapping(buf.as_ptr().add(4), e.add(4), SITE_SIZE - 4) };
    // SAFETY: the entry start is 4-aligned (the table is page aligned, SITE_SIZE a multiple
    // of 4) and inside the mapping; AtomicU32 has the layout of u32.
    let stamp = unsafe { &*e.cast::<AtomicU32>() };
    // Release: the entry's bytes above are visible to whoever Acquire-loads the stamp.
    stamp.store(index + 1, Ordering::Release);
}

/// A call-site entry read back (validated).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SiteInfo {
    /// Severity.
    pub level: Level,
    /// Target.
    pub target: String,
    /// Source file.
    pub file: String,
    /// Source line.
    pub line: u32,
    /// Format string.
    pub format: String,
    /// Field names.
    pub fields: Vec<String>,
    /// Positional arguments of the format string.
    pub nargs: u16,
    pub(crate) flags: u16,
}

/// Reads entry `index` (0-based) of a table of `capacity` entries; None if unpublished or
/// malformed.
///
/// # Safety
/// `table` points to `capacity` entries of SITE_SIZE bytes inside a live mapping.
pub(crate) unsafe fn read_entry(table: *const u8, capacity: u32, index: u32) -> Option<SiteInfo> {
    if index >= capacity {
        return None;
    }
    // SAFETY: index < capacity: the entry is inside the table, per the contract.
    let e = unsafe { table.add(index as usize * SITE_SIZE) };
    // SAFETY: 4-aligned, inside the mapping; AtomicU32 has the layout of u32.
    let stamp = unsafe { &*e.cast::<AtomicU32>() };
    // Acquire: pairs with the Release in write_entry (the entry bytes are then visible).
    if stamp.load(Ordering::Acquire) != index + 1 {
        return None;
    }
    let mut buf = [0u8; SITE_SIZE];
    // SAFETY: SITE_SIZE bytes inside the mapping into a local buffer; an entry is written
    // once before its stamp, so the copy is stable (a hostile writer could still change
    // it: every field is validated below).
    unsafe { std::ptr::copy_nonoverlapping(e, buf.as_mut_ptr(), SITE_SIZE) };
    let u16_at = |o: usize| u16::from_ne_bytes([buf[o], buf[o + 1]]) as usize;
    let u32_at = |o: usize| u32::from_ne_bytes([buf[o], buf[o + 1], buf[o + 2], buf[o + 3]]);
    let level = Level::from_u32(u32_at(4))?;
    let lens = [u16_at(16), u16_at(18), u16_at(20), u16_at(22)];
    if ENTRY_HEAD + lens.iter().sum::<usize>() > SITE_SIZE {
        return None;
    }
    let mut at = ENTRY_HEAD;
    let mut take = |n: usize| {
        let s = String::from_utf8_lossy(&buf[at..at + n]).into_owned();
        at += n;
        s
    };
    let (target, file, format, names) =
        (take(lens[0]), take(lens[1]), take(lens[2]), take(lens[3]));
    let fields = if names.is_empty() {
        Vec::new()
    } else {
        names.split('\0').map(str::to_owned).collect()
    };
    Some(SiteInfo {
        level,
        target,
        file,
        line: u32_at(8),
        format,
        fields,
        nargs: u16_at(12) as u16,
        flags: u16_at(14) as u16,
    })
}
