//! [`ChunkRecords`]: the records inside one MCAP chunk, decompressed and parsed one at a time
//! under limits, so that a crafted chunk can neither abort the process (an allocation of a
//! size it declares) nor make it decompress more than the format could genuinely produce.
//!
//! The `mcap` crate's own `ChunkReader` sets no record length limit: a record inside a chunk
//! claiming 2^40 bytes made it reserve that much and the process died of the failed
//! allocation (SIGABRT). Here, before anything is decompressed:
//!
//! - the compression must be one horus reads (`zstd`, `lz4`, or none);
//! - the declared uncompressed size must be at most [`MAX_CHUNK_UNCOMPRESSED`] and at most
//!   what the compressed bytes actually present could expand to ([`max_ratio`]: twice the
//!   format's own maximum), so a 200-byte chunk cannot claim gigabytes;
//! - every record inside must fit the chunk's declared uncompressed size (the `mcap` linear
//!   reader's record length limit is set to it), so no allocation exceeds it;
//! - records are decompressed and handed out one at a time (streamed), so a chunk full of
//!   tiny records costs one record's memory, not a vector of millions.
//!
//! The uncompressed CRC is checked by the `mcap` reader once the chunk's end is reached.

use mcap::records::Record;
use mcap::sans_io::{LinearReadEvent, LinearReader, LinearReaderOptions};

/// Opcodes of the records a horus reader uses (everything else is skipped unparsed).
pub(crate) mod op {
    /// Schema.
    pub(crate) const SCHEMA: u8 = 0x03;
    /// Channel.
    pub(crate) const CHANNEL: u8 = 0x04;
    /// Message.
    pub(crate) const MESSAGE: u8 = 0x05;
    /// Chunk.
    pub(crate) const CHUNK: u8 = 0x06;
    /// Metadata.
    pub(crate) const METADATA: u8 = 0x0C;
}

/// Largest uncompressed size a chunk may declare (256 MiB). The recorder's chunks are 1 MiB
/// by default; one message larger than the chunk size gets a chunk of its own, so this is
/// also the largest message horus reads back.
pub const MAX_CHUNK_UNCOMPRESSED: u64 = 256 << 20;

/// Largest record outside a chunk, and largest summary section (256 MiB): the reader holds
/// one such record in memory at a time.
pub const MAX_RECORD_BYTES: u64 = 256 << 20;

/// Largest ratio of uncompressed to compressed bytes accepted for `compression` (`None`: not
/// a compression horus reads). zstd cannot exceed 32768:1 (an RLE block: 4 bytes for at most
/// 128 KiB), LZ4 cannot exceed 255:1 (each extra length byte adds at most 255); twice those
/// are allowed. Uncompressed chunks must declare exactly their size.
pub fn max_ratio(compression: &str) -> Option<u64> {
    match compression {
        "" => Some(1),
        "zstd" => Some(2 * 32768),
        "lz4" => Some(2 * 255),
        _ => None,
    }
}

/// Why a chunk's records could not be read.
#[derive(Debug, thiserror::Error)]
pub enum ChunkError {
    /// The chunk is compressed with something horus does not read.
    #[error("chunk compression {0:?} is not one horus reads (zstd, lz4 or none)")]
    UnsupportedCompression(String),
    /// The declared uncompressed size exceeds [`MAX_CHUNK_UNCOMPRESSED`].
    #[error("chunk declares {declared} uncompressed bytes, more than the limit of {limit}")]
    TooLarge {
        /// Declared uncompressed size.
        declared: u64,
        /// The limit.
        limit: u64,
    },
    /// The declared uncompressed size is more than the compressed bytes present could produce
    /// (a decompression bomb, or a corrupt header).
    #[error(
        "chunk declares {declared} uncompressed bytes from {compressed} bytes of {compression:?} \
         (at most {ratio}:1 accepted): a decompression bomb or a corrupt chunk header"
    )]
    ImpossibleRatio {
        /// Declared uncompressed size.
        declared: u64,
        /// Compressed bytes present.
        compressed: u64,
        /// The compression.
        compression: String,
        /// The ratio accepted for it.
        ratio: u64,
    },
    /// A record inside the chunk claims more bytes than the chunk declares it holds.
    #[error(
        "a record inside (opcode {opcode:#04x}) claims {len} bytes, more than the chunk's {limit}"
    )]
    RecordTooLarge {
        /// The record's opcode.
        opcode: u8,
        /// Bytes it claims.
        len: u64,
        /// The limit (the chunk's declared uncompressed size, or its stored size if larger).
        limit: u64,
    },
    /// The records of an uncompressed chunk do not tile it (a record runs past its end).
    #[error("a record inside the chunk at offset {offset}: {reason}")]
    Framing {
        /// Offset of the record within the chunk's records.
        offset: u64,
        /// What is wrong.
        reason: String,
    },
    /// Decompression, the CRC or a record's parsing failed.
    #[error(transparent)]
    Mcap(mcap::McapError),
}

/// The records of one chunk, decompressed one at a time.
pub struct ChunkRecords {
    /// `[opcode, length, body]` of the chunk record, fed to `reader` as it asks.
    head: [u8; 9],
    body: Vec<u8>,
    fed: usize,
    reader: LinearReader,
    done: bool,
    limit: u64,
}

impl ChunkError {
    fn from_mcap(e: mcap::McapError, limit: u64) -> ChunkError {
        match e {
            mcap::McapError::RecordTooLarge { opcode, len } => {
                ChunkError::RecordTooLarge { opcode, len, limit }
            }
            e => ChunkError::Mcap(e),
        }
    }
}

/// Checks that the records of an uncompressed chunk tile it exactly: each record's opcode and
/// length fit, and its body ends within the chunk. (The `mcap` reader trusts an inner record's
/// length there and underflows its count of the chunk's remaining bytes when one runs past
/// the end: a 106-byte file found by the `mcap_read` fuzz target.)
fn check_framing(records: &[u8]) -> Result<(), ChunkError> {
    let mut at = 0usize;
    while at < records.len() {
        let rest = &records[at..];
        if rest.len() < 9 {
            return Err(ChunkError::Framing {
                offset: at as u64,
                reason: format!("{} bytes left, a record needs at least 9", rest.len()),
            });
        }
        let len = u64::from_le_bytes(rest[1..9].try_into().expect("8 bytes"));
        if len > (rest.len() - 9) as u64 {
            return Err(ChunkError::Framing {
                offset: at as u64,
                reason: format!(
                    "record (opcode {:#04x}) claims {len} bytes, {} are left in the chunk",
                    rest[0],
                    rest.len() - 9
                ),
            });
        }
        at += 9 + len as usize;
    }
    Ok(())
}

impl ChunkRecords {
    /// Checks the chunk record `body` (everything after its opcode and length) against the
    /// limits; nothing is decompressed yet.
    pub fn new(mut body: Vec<u8>) -> Result<ChunkRecords, ChunkError> {
        let (header, compressed, records_end) =
            match mcap::parse_record(op::CHUNK, &body).map_err(ChunkError::Mcap)? {
                Record::Chunk { header, data } => {
                    // `data` borrows `body`: where the records end inside it.
                    let start = data.as_ptr() as usize - body.as_ptr() as usize;
                    if header.compression.is_empty() {
                        check_framing(&data)?;
                    }
                    (header, data.len() as u64, start + data.len())
                }
                _ => unreachable!("parse_record(CHUNK) returns a chunk"),
            };
        // Bytes after the records are fields of a later MCAP version (readers ignore them):
        // the reader is never handed them, so no inner record can run on into them.
        body.truncate(records_end);
        let ratio = max_ratio(&header.compression)
            .ok_or_else(|| ChunkError::UnsupportedCompression(header.compression.clone()))?;
        let declared = header.uncompressed_size;
        if declared > MAX_CHUNK_UNCOMPRESSED {
            return Err(ChunkError::TooLarge {
                declared,
                limit: MAX_CHUNK_UNCOMPRESSED,
            });
        }
        if declared > compressed.saturating_mul(ratio) {
            return Err(ChunkError::ImpossibleRatio {
                declared,
                compressed,
                compression: header.compression,
                ratio,
            });
        }
        // The limit bounds every record inside (and the chunk record itself, whose body is
        // already in memory): nothing larger than the chunk can hold is ever reserved.
        let limit = (declared.max(body.len() as u64)) as usize;
        let reader = LinearReader::new_with_options(
            LinearReaderOptions::default()
                .with_skip_start_magic(true)
                .with_skip_end_magic(true)
                .with_validate_chunk_crcs(true)
                .with_record_length_limit(limit),
        );
        let mut head = [0u8; 9];
        head[0] = op::CHUNK;
        head[1..].copy_from_slice(&(body.len() as u64).to_le_bytes());
        Ok(ChunkRecords {
            head,
            body,
            fed: 0,
            reader,
            done: false,
            limit: limit as u64,
        })
    }

    /// The next record horus uses (schema, channel, message, metadata), `None` at the end of
    /// the chunk. Other records are skipped without being parsed. After an error the chunk
    /// yields nothing more.
    pub fn next_record(&mut self) -> Option<Result<Record<'static>, ChunkError>> {
        if self.done {
            return None;
        }
        let r = self.step();
        if !matches!(r, Some(Ok(_))) {
            self.done = true;
        }
        r
    }

    fn step(&mut self) -> Option<Result<Record<'static>, ChunkError>> {
        loop {
            let need = match self.reader.next_event()? {
                Err(e) => return Some(Err(ChunkError::from_mcap(e, self.limit))),
                Ok(LinearReadEvent::ReadRequest(need)) => need,
                Ok(LinearReadEvent::Record { opcode, data }) => {
                    if !matches!(
                        opcode,
                        op::SCHEMA | op::CHANNEL | op::MESSAGE | op::METADATA
                    ) {
                        continue;
                    }
                    return Some(
                        mcap::parse_record(opcode, data)
                            .map(Record::into_owned)
                            .map_err(ChunkError::Mcap),
                    );
                }
            };
            // Feed the head, then the body; 0 bytes tells the reader the stream ended.
            let total = self.head.len() + self.body.len();
            let n = need.min(total - self.fed);
            let dst = self.reader.insert(n);
            let mut done = 0;
            while done < n {
                let at = self.fed + done;
                let src = if at < 9 {
                    &self.head[at..]
                } else {
                    &self.body[at - 9..]
                };
                let k = src.len().min(n - done);
                dst[done..done + k].copy_from_slice(&src[..k]);
                done += k;
            }
            self.fed += n;
            self.reader.notify_read(n);
        }
    }
}
