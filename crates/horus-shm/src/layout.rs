//! The byte layout of a channel segment, and its validation on open.
//!
//! ```text
//! 0      Header (config, schema)          256 B, written once before `magic`
//! 256    membership word                   own cache line
//! 320    wake words (notify, blocking, waiting, observers,
//!        room, room_blocking, room_waiting)                   own cache line
//! 384    publisher records  [max_publishers × 128 B]
//!        subscriber records [max_subscribers × sub_record_size]
//!        latency histograms [max_subscribers × LATENCY_RECORD_SIZE] (see
//!                           `crate::latency`: one per subscriber place)
//!        description        [description_len, rounded up to 64 B] (opaque to
//!                           this crate: the payload's field table, for tools)
//!        rings              [max_publishers × depth × slot_size]
//!        pools              [max_publishers × (states + chunks × chunk_stride)]
//! ```
//! Every region is 64-byte aligned so that no two writers share a cache line
//! by accident. The opener re-derives every offset from the capacities and
//! compares them with what the header claims and with the file size: nothing
//! read from shared memory is used as an offset before that check.

use crate::error::OpenError;
use crate::latency::LATENCY_RECORD_SIZE;

/// First 8 bytes of every channel segment.
pub const MAGIC: u64 = u64::from_le_bytes(*b"HORUSCH1");
/// Layout version this build reads and writes. 2: subscriber cursors start
/// as `CURSOR_JOINING`, wake words are bitmasks, observer set. 3: a
/// description region before the rings, and a bytes-sent counter in each
/// publisher record. 4: room wake words (a `Block` publisher sleeps on a
/// futex the subscribers wake; an older peer would never wake it). 5: a
/// latency histogram per subscriber place, after the subscriber records.
pub const LAYOUT_VERSION: u32 = 5;
/// Largest description a segment may carry (a header claiming more is
/// corrupt).
pub const MAX_DESCRIPTION: usize = 64 * 1024;
/// Bytes reserved for the payload schema (opaque to this crate).
pub const SCHEMA_BYTES: usize = 128;
/// Most publishers a channel can hold (bits 32..48 of the membership word).
pub const MAX_PUBLISHERS: u32 = 16;
/// Most subscribers a channel can hold (bits 0..32 of the membership word).
pub const MAX_SUBSCRIBERS: u32 = 32;
/// Longest ring.
pub const MAX_DEPTH: u32 = 1 << 16;
/// Bytes at the start of each ring slot: stamp (8) + meta (8).
pub const SLOT_HEADER: usize = 16;
/// Size of one publisher record.
pub const PUB_RECORD_SIZE: usize = 128;
/// Size of the fixed part of a subscriber record.
pub const SUB_RECORD_HEAD: usize = 64;
const HEADER_SIZE: usize = 384;
const CACHE_LINE: usize = 64;
/// Slots are 128-byte multiples: x86 prefetchers fetch cache lines in
/// 128-byte pairs, and a reader that pulled in the *next* slot along with its
/// own would make the writer pay an extra invalidation there.
const SLOT_ALIGN: usize = 128;

/// What a channel is created with. Everything but `schema` and `qos_code`
/// decides the layout; all of it must match when a channel is opened.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ChannelConfig {
    /// Payload schema, opaque bytes compared on open.
    pub schema: [u8; SCHEMA_BYTES],
    /// Slots per publisher ring: a power of two, 1..=65536.
    pub depth: u32,
    /// Inline payload bytes per slot (messages up to this size travel in
    /// the ring itself; larger ones travel in pool chunks).
    pub slot_payload: u32,
    /// Publisher places, 1..=16.
    pub max_publishers: u32,
    /// Subscriber places, 1..=32.
    pub max_subscribers: u32,
    /// Bytes per pool chunk; 0 for a channel without loans of chunks.
    pub chunk_size: u64,
    /// Chunks in each publisher's pool.
    pub chunks_per_publisher: u32,
    /// Delivery policy code, compared on open. The low
    /// [`QOS_LATCHED_SHIFT`] bits are opaque to this crate (the overflow
    /// policy of `horus`); the bits above carry the retained history
    /// (transient-local durability): see [`ChannelConfig::latched`].
    pub qos_code: u32,
}

/// Bit of [`ChannelConfig::qos_code`] where the retained-history depth
/// starts (17 bits: 0..=65536, enough for [`MAX_DEPTH`]).
pub const QOS_LATCHED_SHIFT: u32 = 15;

impl ChannelConfig {
    /// How many of its latest messages each publisher of the channel keeps
    /// for subscribers that join later (transient-local durability); 0 for a
    /// volatile channel, whose subscribers start at the next message. At
    /// most `depth` (checked by [`Layout::new`]).
    pub fn latched(&self) -> u32 {
        self.qos_code >> QOS_LATCHED_SHIFT
    }

    /// The opaque, low part of [`qos_code`](Self::qos_code).
    pub fn qos_policy(&self) -> u32 {
        self.qos_code & ((1 << QOS_LATCHED_SHIFT) - 1)
    }

    /// A `qos_code` made of an opaque policy code (below
    /// 2^[`QOS_LATCHED_SHIFT`]) and a retained-history depth; `None` if
    /// either does not fit its bits.
    pub fn compose_qos(policy: u32, latched: u32) -> Option<u32> {
        (policy < 1 << QOS_LATCHED_SHIFT && latched <= MAX_DEPTH)
            .then_some(policy | (latched << QOS_LATCHED_SHIFT))
    }
}

impl std::fmt::Display for ChannelConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "depth {}, {} B inline, {} publishers, {} subscribers, {} chunks of {} B, qos {}",
            self.depth,
            self.slot_payload,
            self.max_publishers,
            self.max_subscribers,
            self.chunks_per_publisher,
            self.chunk_size,
            self.qos_code
        )
    }
}

/// Offsets and strides derived from a [`ChannelConfig`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Layout {
    /// The configuration this layout was derived from.
    pub config: ChannelConfig,
    /// Bytes per ring slot (header + payload, cache-line multiple).
    pub slot_size: usize,
    /// Bytes per subscriber record (head + one cursor per publisher).
    pub sub_record_size: usize,
    /// Bytes per pool chunk slot in memory.
    pub chunk_stride: usize,
    /// Bytes of the chunk-state array of one pool.
    pub pool_states_size: usize,
    /// Offset of publisher record 0.
    pub pub_records: usize,
    /// Offset of subscriber record 0.
    pub sub_records: usize,
    /// Offset of subscriber place 0's latency histogram.
    pub latency: usize,
    /// Offset of the description region.
    pub description: usize,
    /// Bytes of description the region holds (opaque to this crate).
    pub description_len: usize,
    /// Offset of ring 0.
    pub rings: usize,
    /// Offset of pool 0.
    pub pools: usize,
    /// Bytes of one pool (states + chunks).
    pub pool_size: usize,
    /// Total segment size.
    pub total: usize,
}

const fn round_up(x: usize, to: usize) -> usize {
    x.div_ceil(to) * to
}

impl Layout {
    /// Validates a configuration and derives its layout, without a
    /// description.
    pub fn new(config: ChannelConfig) -> Result<Layout, String> {
        Self::described(config, 0)
    }

    /// Validates a configuration and derives its layout, with room for a
    /// description of `description_len` bytes (at most [`MAX_DESCRIPTION`]).
    pub fn described(config: ChannelConfig, description_len: usize) -> Result<Layout, String> {
        if description_len > MAX_DESCRIPTION {
            return Err(format!(
                "description of {description_len} bytes exceeds {MAX_DESCRIPTION}"
            ));
        }
        let c = &config;
        if !c.depth.is_power_of_two() || c.depth > MAX_DEPTH {
            return Err(format!(
                "depth {} must be a power of two ≤ {MAX_DEPTH}",
                c.depth
            ));
        }
        if c.max_publishers == 0 || c.max_publishers > MAX_PUBLISHERS {
            return Err(format!(
                "max_publishers {} must be 1..={MAX_PUBLISHERS}",
                c.max_publishers
            ));
        }
        if c.max_subscribers == 0 || c.max_subscribers > MAX_SUBSCRIBERS {
            return Err(format!(
                "max_subscribers {} must be 1..={MAX_SUBSCRIBERS}",
                c.max_subscribers
            ));
        }
        if c.slot_payload < 16 || !c.slot_payload.is_multiple_of(8) || c.slot_payload > 1 << 20 {
            return Err(format!(
                "slot payload {} must be a multiple of 8 in 16..=1MiB",
                c.slot_payload
            ));
        }
        if c.latched() > c.depth {
            return Err(format!(
                "retained history of {} messages exceeds the depth {}",
                c.latched(),
                c.depth
            ));
        }
        if (c.chunk_size == 0) != (c.chunks_per_publisher == 0) {
            return Err(
                "chunk_size and chunks_per_publisher must both be zero or both non-zero".into(),
            );
        }
        // A publisher keeps the chunks of its last `latched` messages: a pool no larger than
        // that would starve its loans for good.
        if c.chunks_per_publisher != 0 && c.chunks_per_publisher <= c.latched() {
            return Err(format!(
                "a pool of {} chunks per publisher must exceed the retained history of {}",
                c.chunks_per_publisher,
                c.latched()
            ));
        }
        if c.chunk_size > 1 << 32 || c.chunks_per_publisher > 1 << 16 {
            return Err("pool too large (chunks ≤ 4 GiB, ≤ 65536 per publisher)".into());
        }
        let slot_size = round_up(SLOT_HEADER + c.slot_payload as usize, SLOT_ALIGN);
        let sub_record_size = SUB_RECORD_HEAD + round_up(8 * c.max_publishers as usize, CACHE_LINE);
        let chunk_stride = if c.chunk_size >= 4096 {
            round_up(c.chunk_size as usize, 4096)
        } else {
            round_up(c.chunk_size as usize, CACHE_LINE)
        };
        let pool_states_size = round_up(8 * c.chunks_per_publisher as usize, 4096);
        let pub_records = HEADER_SIZE;
        let sub_records = pub_records + PUB_RECORD_SIZE * c.max_publishers as usize;
        let latency = round_up(
            sub_records + sub_record_size * c.max_subscribers as usize,
            CACHE_LINE,
        );
        let description = latency + LATENCY_RECORD_SIZE * c.max_subscribers as usize;
        let rings = round_up(description + description_len, 4096);
        let ring_bytes = slot_size
            .checked_mul(c.depth as usize)
            .and_then(|r| r.checked_mul(c.max_publishers as usize))
            .ok_or("ring size overflows")?;
        let pools = round_up(rings + ring_bytes, 4096);
        let pool_size = if c.chunks_per_publisher == 0 {
            0
        } else {
            pool_states_size + chunk_stride * c.chunks_per_publisher as usize
        };
        let total = pools
            .checked_add(
                pool_size
                    .checked_mul(c.max_publishers as usize)
                    .ok_or("pool size overflows")?,
            )
            .ok_or("segment size overflows")?;
        if total as u64 > 1 << 40 {
            return Err(format!("segment of {total} bytes is too large"));
        }
        Ok(Layout {
            config,
            slot_size,
            sub_record_size,
            chunk_stride,
            pool_states_size,
            pub_records,
            sub_records,
            latency,
            description,
            description_len,
            rings,
            pools,
            pool_size,
            total,
        })
    }

    /// Offset of slot `i` of publisher `k`'s ring.
    pub fn slot(&self, k: usize, i: usize) -> usize {
        debug_assert!(k < self.config.max_publishers as usize && i < self.config.depth as usize);
        self.rings + (k * self.config.depth as usize + i) * self.slot_size
    }

    /// Offset of the state word of chunk `c` in publisher `k`'s pool.
    pub fn chunk_state(&self, k: usize, c: usize) -> usize {
        debug_assert!(
            k < self.config.max_publishers as usize
                && c < self.config.chunks_per_publisher as usize
        );
        self.pools + k * self.pool_size + 8 * c
    }

    /// Offset of the data of chunk `c` in publisher `k`'s pool.
    pub fn chunk_data(&self, k: usize, c: usize) -> usize {
        debug_assert!(
            k < self.config.max_publishers as usize
                && c < self.config.chunks_per_publisher as usize
        );
        self.pools + k * self.pool_size + self.pool_states_size + c * self.chunk_stride
    }

    /// Offset of publisher record `k`.
    pub fn pub_record(&self, k: usize) -> usize {
        debug_assert!(k < self.config.max_publishers as usize);
        self.pub_records + k * PUB_RECORD_SIZE
    }

    /// Offset of subscriber record `j`.
    pub fn sub_record(&self, j: usize) -> usize {
        debug_assert!(j < self.config.max_subscribers as usize);
        self.sub_records + j * self.sub_record_size
    }

    /// Offset of subscriber place `j`'s latency histogram.
    pub fn latency_record(&self, j: usize) -> usize {
        debug_assert!(j < self.config.max_subscribers as usize);
        self.latency + j * LATENCY_RECORD_SIZE
    }
}

/// The fixed header at offset 0. Plain fields are written once by the
/// creator before `magic` is published with Release; openers read them only
/// after an Acquire load of `magic`, copy them out, and re-validate them.
#[repr(C)]
pub(crate) struct RawHeader {
    pub(crate) magic: u64,
    pub(crate) layout_version: u32,
    pub(crate) header_size: u32,
    pub(crate) segment_size: u64,
    pub(crate) depth: u32,
    pub(crate) slot_payload: u32,
    pub(crate) max_publishers: u32,
    pub(crate) max_subscribers: u32,
    pub(crate) chunk_size: u64,
    pub(crate) chunks_per_publisher: u32,
    pub(crate) qos_code: u32,
    pub(crate) rings_offset: u64,
    pub(crate) pools_offset: u64,
    pub(crate) description_len: u32,
    pub(crate) _reserved: [u8; 52],
    pub(crate) schema: [u8; SCHEMA_BYTES],
}

const _: () = assert!(std::mem::size_of::<RawHeader>() == 256);

/// Offset of the membership word.
pub(crate) const MEMBERSHIP_OFFSET: usize = 256;
/// Offset of the wake words.
pub(crate) const WAKE_OFFSET: usize = 320;

impl RawHeader {
    /// Writes the header for `layout` (without the magic).
    pub(crate) fn for_layout(layout: &Layout) -> RawHeader {
        let c = &layout.config;
        RawHeader {
            magic: 0,
            layout_version: LAYOUT_VERSION,
            header_size: HEADER_SIZE as u32,
            segment_size: layout.total as u64,
            depth: c.depth,
            slot_payload: c.slot_payload,
            max_publishers: c.max_publishers,
            max_subscribers: c.max_subscribers,
            chunk_size: c.chunk_size,
            chunks_per_publisher: c.chunks_per_publisher,
            qos_code: c.qos_code,
            rings_offset: layout.rings as u64,
            pools_offset: layout.pools as u64,
            description_len: layout.description_len as u32,
            _reserved: [0; 52],
            schema: c.schema,
        }
    }

    /// Validates a header copied out of a segment of `file_size` bytes and
    /// returns its layout.
    pub(crate) fn validate(&self, name: &str, file_size: u64) -> Result<Layout, OpenError> {
        crate::init::check_version(self.magic, self.layout_version, MAGIC, LAYOUT_VERSION)
            .map_err(|e| OpenError::from_version(name, e))?;
        let corrupt = |reason: String| OpenError::Corrupt {
            name: name.to_owned(),
            reason,
        };
        if self.header_size as usize != HEADER_SIZE {
            return Err(corrupt(format!("header size {}", self.header_size)));
        }
        let config = ChannelConfig {
            schema: self.schema,
            depth: self.depth,
            slot_payload: self.slot_payload,
            max_publishers: self.max_publishers,
            max_subscribers: self.max_subscribers,
            chunk_size: self.chunk_size,
            chunks_per_publisher: self.chunks_per_publisher,
            qos_code: self.qos_code,
        };
        let layout = Layout::described(config, self.description_len as usize).map_err(corrupt)?;
        crate::init::check_extent(
            &[
                ("size", self.segment_size, layout.total as u64),
                ("rings", self.rings_offset, layout.rings as u64),
                ("pools", self.pools_offset, layout.pools as u64),
            ],
            layout.total as u64,
            file_size,
        )
        .map_err(corrupt)?;
        Ok(layout)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config() -> ChannelConfig {
        ChannelConfig {
            schema: [7; SCHEMA_BYTES],
            depth: 16,
            slot_payload: 16,
            max_publishers: 4,
            max_subscribers: 8,
            chunk_size: 1 << 20,
            chunks_per_publisher: 34,
            qos_code: 1,
        }
    }

    #[test]
    fn regions_are_aligned_and_disjoint() {
        let l = Layout::new(config()).unwrap();
        assert_eq!(l.slot_size, 128, "16-byte payloads get a 128-byte slot");
        assert!(l.sub_records >= l.pub_records + 4 * PUB_RECORD_SIZE);
        assert!(l.latency >= l.sub_records + 8 * l.sub_record_size);
        assert_eq!(l.latency % 64, 0);
        assert!(l.description >= l.latency_record(7) + LATENCY_RECORD_SIZE);
        assert!(l.rings >= l.description);
        assert!(l.pools >= l.slot(3, 15) + l.slot_size);
        assert_eq!(l.chunk_data(0, 0) % 4096, 0);
        assert!(l.chunk_data(3, 33) + l.chunk_stride <= l.total);
        assert!(l.chunk_state(1, 33) + 8 <= l.chunk_data(1, 0));
    }

    #[test]
    fn bad_capacities_are_rejected() {
        let mut c = config();
        c.depth = 3;
        assert!(Layout::new(c).is_err());
        let mut c = config();
        c.max_subscribers = 33;
        assert!(Layout::new(c).is_err());
        let mut c = config();
        c.chunk_size = 0;
        assert!(Layout::new(c).is_err());
        let mut c = config();
        c.qos_code = ChannelConfig::compose_qos(1, 17).unwrap();
        assert!(Layout::new(c).is_err(), "history deeper than the ring");
        c.qos_code = ChannelConfig::compose_qos(1, 16).unwrap();
        assert_eq!(Layout::new(c).unwrap().config.latched(), 16);
        assert_eq!(c.qos_policy(), 1);
        assert_eq!(ChannelConfig::compose_qos(1 << 15, 0), None);
    }

    #[test]
    fn header_round_trips_and_rejects_tampering() {
        let l = Layout::new(config()).unwrap();
        let mut h = RawHeader::for_layout(&l);
        h.magic = MAGIC;
        assert_eq!(h.validate("t", l.total as u64).unwrap(), l);
        assert!(matches!(
            h.validate("t", l.total as u64 - 1),
            Err(OpenError::Corrupt { .. })
        ));
        h.pools_offset += 64;
        assert!(matches!(
            h.validate("t", l.total as u64),
            Err(OpenError::Corrupt { .. })
        ));
        h.magic = 42;
        assert!(matches!(
            h.validate("t", l.total as u64),
            Err(OpenError::BadMagic { .. })
        ));
    }
}
