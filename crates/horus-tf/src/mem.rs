//! The memory a buffer lives in: a mapped shared-memory segment, or (the
//! per-process fallback) zeroed heap memory of the same layout. Everything
//! above this file is the same code for both.

use std::ptr::NonNull;

use horus_shm::sync::{AtomicU32, AtomicU64};
use horus_shm::Segment;

use crate::layout::{Layout, F_HEAD, F_KIND, F_NAME, F_NAME_LEN, F_TAIL, F_WRITER};
use crate::seqlock::SLOT_WORDS;

/// Who owns the bytes.
#[derive(Debug)]
pub(crate) enum Backing {
    /// A mapped segment (unmapped on drop).
    Shm(Segment),
    /// Heap words of this process (the fallback); held to be freed on drop.
    Heap(#[allow(dead_code)] Box<[AtomicU64]>),
}

/// A validated buffer in memory: its layout and its bytes.
#[derive(Debug)]
pub(crate) struct Mem {
    base: NonNull<u8>,
    len: usize,
    pub(crate) layout: Layout,
    pub(crate) backing: Backing,
}

// SAFETY: the bytes are process-wide memory (a mapping or a heap block this
// value owns) with no thread affinity; every access to them goes through
// atomics.
unsafe impl Send for Mem {}
// SAFETY: as above.
unsafe impl Sync for Mem {}

impl Mem {
    /// Wraps a segment already validated to be at least `layout.total` bytes.
    pub(crate) fn shm(seg: Segment, layout: Layout) -> Mem {
        assert!(seg.len() >= layout.total);
        Mem {
            base: NonNull::new(seg.base()).expect("a mapping is never at null"),
            len: layout.total,
            layout,
            backing: Backing::Shm(seg),
        }
    }

    /// Zeroed heap memory for `layout` (pages are only committed when touched:
    /// the zeroed allocation comes from `calloc`/fresh `mmap` pages).
    pub(crate) fn heap(layout: Layout) -> Mem {
        let words = layout.total / 8;
        let alloc = std::alloc::Layout::array::<AtomicU64>(words).expect("layout fits");
        // SAFETY: `alloc` has a non-zero size (total ≥ one page).
        let ptr = unsafe { std::alloc::alloc_zeroed(alloc) }.cast::<AtomicU64>();
        if ptr.is_null() {
            std::alloc::handle_alloc_error(alloc);
        }
        // SAFETY: `ptr` is a fresh, zeroed allocation of `words` AtomicU64s
        // made with the global allocator and the array layout that
        // `Box<[AtomicU64]>` frees with; all-zero bits are a valid AtomicU64.
        let words: Box<[AtomicU64]> =
            unsafe { Box::from_raw(std::ptr::slice_from_raw_parts_mut(ptr, words)) };
        let base = NonNull::new(words.as_ptr().cast_mut().cast::<u8>()).expect("allocated");
        Mem {
            base,
            len: layout.total,
            layout,
            backing: Backing::Heap(words),
        }
    }

    /// Whether this is shared memory.
    pub(crate) fn is_shared(&self) -> bool {
        matches!(self.backing, Backing::Shm(_))
    }

    /// The 8-byte word at `offset`.
    #[inline]
    pub(crate) fn word(&self, offset: usize) -> &AtomicU64 {
        assert!(
            offset.is_multiple_of(8) && offset + 8 <= self.len,
            "offset {offset}"
        );
        // SAFETY: in bounds of the memory (asserted; `len` ≤ the mapping or
        // allocation), 8-aligned (the base is page- or word-aligned), and an
        // AtomicU64 is valid for any bits and sound to share between threads
        // and processes.
        unsafe { &*self.base.as_ptr().add(offset).cast::<AtomicU64>() }
    }

    /// The 4-byte word at `offset`.
    #[inline]
    pub(crate) fn word32(&self, offset: usize) -> &AtomicU32 {
        assert!(
            offset.is_multiple_of(4) && offset + 4 <= self.len,
            "offset {offset}"
        );
        // SAFETY: as in `word`, for a 4-aligned AtomicU32.
        unsafe { &*self.base.as_ptr().add(offset).cast::<AtomicU32>() }
    }

    /// Slot `i` (`< history`) of frame `f`'s ring (`f < max_frames`).
    #[inline]
    pub(crate) fn slot(&self, f: u32, i: usize) -> &[AtomicU64; SLOT_WORDS] {
        assert!(f < self.layout.caps.max_frames && i < self.layout.caps.history as usize);
        let offset = self.layout.slot(f, i);
        debug_assert!(offset + SLOT_WORDS * 8 <= self.len);
        // SAFETY: `f` and `i` are within the capacities (asserted), so the
        // slot lies inside the validated memory (the layout reserves
        // max_frames × history slots before `total`); 8-aligned; an array of
        // atomics is valid for any bits.
        unsafe {
            &*self
                .base
                .as_ptr()
                .add(offset)
                .cast::<[AtomicU64; SLOT_WORDS]>()
        }
    }

    /// Word `field` of frame record `f` (`f < max_frames`).
    #[inline]
    pub(crate) fn frame_word(&self, f: u32, field: usize) -> &AtomicU64 {
        assert!(f < self.layout.caps.max_frames);
        self.word(self.layout.frame(f) + field)
    }

    #[inline]
    pub(crate) fn head(&self, f: u32) -> &AtomicU64 {
        self.frame_word(f, F_HEAD)
    }

    #[inline]
    pub(crate) fn tail(&self, f: u32) -> &AtomicU64 {
        self.frame_word(f, F_TAIL)
    }

    #[inline]
    pub(crate) fn kind(&self, f: u32) -> &AtomicU64 {
        self.frame_word(f, F_KIND)
    }

    #[inline]
    pub(crate) fn writer(&self, f: u32) -> &AtomicU64 {
        self.frame_word(f, F_WRITER)
    }

    #[inline]
    pub(crate) fn name_len(&self, f: u32) -> &AtomicU64 {
        self.frame_word(f, F_NAME_LEN)
    }

    /// Name word `w` (0..16) of frame record `f`.
    #[inline]
    pub(crate) fn name_word(&self, f: u32, w: usize) -> &AtomicU64 {
        assert!(w < crate::layout::MAX_FRAME_ID / 8);
        self.frame_word(f, F_NAME + 8 * w)
    }
}
