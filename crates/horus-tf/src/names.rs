//! Frame records' names, and this process's index from names to records.
//!
//! A record's name is written once, by the writer holding the lease, before
//! the frame count that publishes the record is stored with Release; it never
//! changes afterwards. Each process therefore keeps its own map from names to
//! record indices and only reads the records published since it last looked.
//! Names are read from untrusted memory: a length past [`MAX_FRAME_ID`], bytes
//! that are not UTF-8 or a name already taken by an earlier record make the
//! record unnamed here (it can still be a parent, shown as `#<index>`).

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::RwLock;

use horus_shm::sync::Ordering;

use crate::layout::{FRAME_COUNT_OFF, MAX_FRAME_ID, NAME_VALID};
use crate::mem::Mem;

/// FNV-1a: frame ids are short and not attacker-chosen keys of this map in a
/// way that matters (a peer can only make its own frames collide), and
/// hashing them must cost a few nanoseconds per lookup.
#[derive(Default)]
pub(crate) struct Fnv(u64);

impl Hasher for Fnv {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        let mut h = if self.0 == 0 {
            0xcbf2_9ce4_8422_2325
        } else {
            self.0
        };
        for b in bytes {
            h ^= u64::from(*b);
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
        self.0 = h;
    }
}

#[derive(Default)]
struct Index {
    /// Records read so far.
    seen: u32,
    by_name: HashMap<Box<str>, u32, BuildHasherDefault<Fnv>>,
    names: Vec<Option<Box<str>>>,
}

/// This process's view of the frame table's names.
#[derive(Default)]
pub(crate) struct Names {
    index: RwLock<Index>,
}

/// The published frame count, clamped to the capacity (a larger value is a
/// peer's garbage: the records beyond the table do not exist).
#[inline]
pub(crate) fn frame_count(mem: &Mem) -> u32 {
    // Acquire: pairs with the writer's Release store after it wrote the
    // record, so every record below the count is completely written.
    let n = mem.word(FRAME_COUNT_OFF).load(Ordering::Acquire);
    n.min(u64::from(mem.layout.caps.max_frames)) as u32
}

/// Reads the name of record `f` out of the segment (None if unusable).
pub(crate) fn read_name(mem: &Mem, f: u32) -> Option<String> {
    let word = mem.name_len(f).load(Ordering::Relaxed);
    if word & NAME_VALID == 0 {
        return None;
    }
    let len = (word & !NAME_VALID) as usize;
    if len == 0 || len > MAX_FRAME_ID {
        return None;
    }
    let mut bytes = Vec::with_capacity(len.next_multiple_of(8));
    for w in 0..len.div_ceil(8) {
        // Relaxed: published by the frame count's Release/Acquire.
        bytes.extend_from_slice(&mem.name_word(f, w).load(Ordering::Relaxed).to_le_bytes());
    }
    bytes.truncate(len);
    String::from_utf8(bytes).ok()
}

/// Writes `name` into record `f` (the caller holds the lease and has not
/// published the record yet).
pub(crate) fn write_name(mem: &Mem, f: u32, name: &str) {
    let bytes = name.as_bytes();
    debug_assert!(!bytes.is_empty() && bytes.len() <= MAX_FRAME_ID);
    for (w, chunk) in bytes.chunks(8).enumerate() {
        let mut b = [0u8; 8];
        b[..chunk.len()].copy_from_slice(chunk);
        mem.name_word(f, w)
            .store(u64::from_le_bytes(b), Ordering::Relaxed);
    }
    mem.name_len(f)
        .store(NAME_VALID | bytes.len() as u64, Ordering::Relaxed);
}

impl Names {
    /// The record index of `name`, reading newly published records if it is
    /// not known yet.
    #[inline]
    pub(crate) fn find(&self, mem: &Mem, name: &str) -> Option<u32> {
        {
            let index = self.index.read().unwrap_or_else(|e| e.into_inner());
            if let Some(&f) = index.by_name.get(name) {
                return Some(f);
            }
            if index.seen >= frame_count(mem) {
                return None;
            }
        }
        self.refresh(mem);
        let index = self.index.read().unwrap_or_else(|e| e.into_inner());
        index.by_name.get(name).copied()
    }

    /// Reads the records published since the last refresh.
    pub(crate) fn refresh(&self, mem: &Mem) {
        let count = frame_count(mem);
        let mut index = self.index.write().unwrap_or_else(|e| e.into_inner());
        while index.seen < count {
            let f = index.seen;
            let name = read_name(mem, f);
            let name = match name {
                Some(n) if !index.by_name.contains_key(n.as_str()) => {
                    let n: Box<str> = n.into();
                    index.by_name.insert(n.clone(), f);
                    Some(n)
                }
                _ => None,
            };
            index.names.push(name);
            index.seen += 1;
        }
    }

    /// The name of record `f` for messages (`#<f>` when it has none here).
    pub(crate) fn name_of(&self, mem: &Mem, f: u32) -> String {
        {
            let index = self.index.read().unwrap_or_else(|e| e.into_inner());
            if let Some(Some(n)) = index.names.get(f as usize) {
                return n.to_string();
            }
        }
        self.refresh(mem);
        let index = self.index.read().unwrap_or_else(|e| e.into_inner());
        match index.names.get(f as usize) {
            Some(Some(n)) => n.to_string(),
            _ => format!("#{f}"),
        }
    }
}
