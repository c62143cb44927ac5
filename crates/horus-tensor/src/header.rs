//! The byte layout of a pool segment, and its validation on open.
//!
//! ```text
//! 0      Header (fixed fields written once before `magic`; then the
//!        membership word and the allocation hint)
//! 128    holder places: HOLDERS × u64 owner words (horus_shm::place)
//! 384    slot states: slots × u64 (refs.rs)
//! …      padding to a page
//! data   slots × slot_bytes, each slot page aligned
//! ```
//!
//! All fields are native-endian (pools never leave the host). Every fixed
//! field is checked against the others and against the mapping's length
//! before any offset derived from it is used; a mismatch is a
//! [`HeaderError`].

use crate::refs::HOLDERS;

/// `magic` of an initialised pool segment.
pub(crate) const MAGIC: u64 = u64::from_le_bytes(*b"HORUSTP1");
/// Layout version. 2: holder places and membership word as
/// `horus_shm::place` (named reclaimers, epoch).
pub const VERSION: u32 = 2;
/// Offset of the holder places.
pub(crate) const PLACES_OFFSET: usize = 128;
/// Offset of the slot state words.
pub(crate) const STATES_OFFSET: usize = PLACES_OFFSET + HOLDERS * 8;
/// Offset of the membership word (in the header).
pub(crate) const MEMBERS_OFFSET: usize = 48;
/// Offset of the allocation hint (in the header).
pub(crate) const NEXT_OFFSET: usize = 56;
/// Page size slots and the data area are aligned to.
pub(crate) const PAGE: u64 = 4096;
/// Most slots a pool may have.
pub const MAX_SLOTS: u32 = 1 << 16;

/// The fixed fields of the header, as the creator writes them (with
/// `magic` 0, published afterwards) and as an opener copies them out.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Fixed {
    pub(crate) magic: u64,
    pub(crate) version: u32,
    pub(crate) slots: u32,
    pub(crate) slot_bytes: u64,
    pub(crate) pool_id: u64,
    pub(crate) data_offset: u64,
    pub(crate) total_len: u64,
}

const _: () = assert!(std::mem::size_of::<Fixed>() == MEMBERS_OFFSET);
const _: () = assert!(NEXT_OFFSET + 4 <= PLACES_OFFSET);

/// The validated geometry of a pool: what every offset is computed from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Geometry {
    pub(crate) slots: u32,
    pub(crate) slot_bytes: u64,
    pub(crate) data_offset: u64,
    pub(crate) total_len: u64,
}

/// Why a segment's header does not describe a usable pool.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum HeaderError {
    /// The magic word is not a tensor pool's.
    #[error("magic {0:#018x} is not a tensor pool's")]
    Magic(u64),
    /// Another layout version (a peer of another build).
    #[error("layout version {found} (this build reads {VERSION})")]
    Version {
        /// The segment's version.
        found: u32,
    },
    /// The header names another pool than the segment's name does.
    #[error("the segment holds pool {found}")]
    PoolId {
        /// The header's pool id.
        found: u64,
    },
    /// Slot count out of range.
    #[error("{0} slots (1..={MAX_SLOTS} allowed)")]
    Slots(u32),
    /// Slot size zero or not whole pages.
    #[error("slot size {0} B is not a positive multiple of {PAGE} B")]
    SlotBytes(u64),
    /// The data area does not start right after the state words.
    #[error("data offset {found} (the layout puts it at {expected})")]
    DataOffset {
        /// The header's data offset.
        found: u64,
        /// What the slot count implies.
        expected: u64,
    },
    /// The total length disagrees with slots × slot size + data offset.
    #[error("total length {found} B (slots × slot size + data offset = {expected:?})")]
    TotalLen {
        /// The header's total length.
        found: u64,
        /// What the geometry implies (`None`: it overflows).
        expected: Option<u64>,
    },
    /// The header claims more bytes than the file has.
    #[error("the header claims {total} B, the segment has {mapped} B")]
    Mapping {
        /// The header's total length.
        total: u64,
        /// Bytes mapped.
        mapped: u64,
    },
}

/// Rounds `n` up to whole pages (saturating: an absurd size stays absurd
/// and fails the checks after it).
pub(crate) fn page_up(n: u64) -> u64 {
    n.div_ceil(PAGE).saturating_mul(PAGE)
}

/// Where the data area of a pool of `slots` slots starts.
pub(crate) fn data_offset_for(slots: u32) -> u64 {
    page_up(STATES_OFFSET as u64 + u64::from(slots) * 8)
}

/// Total bytes of a pool of this geometry, `None` on overflow or beyond
/// what a mapping can be.
pub(crate) fn total_for(slots: u32, slot_bytes: u64) -> Option<u64> {
    slot_bytes
        .checked_mul(u64::from(slots))
        .and_then(|d| d.checked_add(data_offset_for(slots)))
        .filter(|&t| t <= isize::MAX as u64)
}

impl Fixed {
    /// The header of a new pool (magic still 0).
    pub(crate) fn new(pool_id: u64, slots: u32, slot_bytes: u64, total_len: u64) -> Fixed {
        Fixed {
            magic: 0,
            version: VERSION,
            slots,
            slot_bytes,
            pool_id,
            data_offset: data_offset_for(slots),
            total_len,
        }
    }

    /// Checks every field, against each other and the `mapped` length.
    pub(crate) fn validate(&self, pool_id: u64, mapped: u64) -> Result<Geometry, HeaderError> {
        if self.magic != MAGIC {
            return Err(HeaderError::Magic(self.magic));
        }
        if self.version != VERSION {
            return Err(HeaderError::Version {
                found: self.version,
            });
        }
        if self.pool_id != pool_id {
            return Err(HeaderError::PoolId {
                found: self.pool_id,
            });
        }
        if self.slots == 0 || self.slots > MAX_SLOTS {
            return Err(HeaderError::Slots(self.slots));
        }
        if self.slot_bytes == 0 || !self.slot_bytes.is_multiple_of(PAGE) {
            return Err(HeaderError::SlotBytes(self.slot_bytes));
        }
        let expected = data_offset_for(self.slots);
        if self.data_offset != expected {
            return Err(HeaderError::DataOffset {
                found: self.data_offset,
                expected,
            });
        }
        let total = total_for(self.slots, self.slot_bytes);
        if total != Some(self.total_len) {
            return Err(HeaderError::TotalLen {
                found: self.total_len,
                expected: total,
            });
        }
        if self.total_len > mapped {
            return Err(HeaderError::Mapping {
                total: self.total_len,
                mapped,
            });
        }
        Ok(Geometry {
            slots: self.slots,
            slot_bytes: self.slot_bytes,
            data_offset: self.data_offset,
            total_len: self.total_len,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn good() -> Fixed {
        let total = total_for(2, PAGE).unwrap();
        Fixed {
            magic: MAGIC,
            ..Fixed::new(5, 2, PAGE, total)
        }
    }

    #[test]
    fn a_valid_header_gives_its_geometry() {
        let g = good().validate(5, 1 << 20).unwrap();
        assert_eq!((g.slots, g.slot_bytes, g.data_offset), (2, PAGE, PAGE));
    }

    #[test]
    fn each_corrupt_field_is_its_own_error() {
        let mapped = 1 << 20;
        let check = |f: Fixed| f.validate(5, mapped).unwrap_err();
        assert_eq!(check(Fixed { magic: 1, ..good() }), HeaderError::Magic(1));
        assert!(matches!(
            check(Fixed {
                version: 1,
                ..good()
            }),
            HeaderError::Version { found: 1 }
        ));
        assert!(matches!(
            good().validate(6, mapped),
            Err(HeaderError::PoolId { found: 5 })
        ));
        assert_eq!(check(Fixed { slots: 0, ..good() }), HeaderError::Slots(0));
        assert!(matches!(
            check(Fixed {
                slots: u32::MAX,
                ..good()
            }),
            HeaderError::Slots(_)
        ));
        assert!(matches!(
            check(Fixed {
                slot_bytes: 100,
                ..good()
            }),
            HeaderError::SlotBytes(100)
        ));
        assert!(matches!(
            check(Fixed {
                data_offset: 0,
                ..good()
            }),
            HeaderError::DataOffset { .. }
        ));
        assert!(matches!(
            check(Fixed {
                slot_bytes: 1 << 62,
                ..good()
            }),
            HeaderError::TotalLen { expected: None, .. }
        ));
        assert!(matches!(
            check(Fixed {
                total_len: 1,
                ..good()
            }),
            HeaderError::TotalLen { .. }
        ));
        assert!(matches!(
            good().validate(5, 4096),
            Err(HeaderError::Mapping { .. })
        ));
    }
}
