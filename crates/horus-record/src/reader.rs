//! [`RecordingReader`]: the messages of an MCAP recording in file order, decoded back into
//! the exact horus bytes, reading one record (or one chunk) at a time.
//!
//! The file is untrusted input: every record length is checked against the file's size and
//! [`MAX_RECORD_BYTES`] before anything is allocated, chunks are expanded under the limits of
//! [`crate::chunk`] (declared uncompressed size, compression ratio, every inner record within
//! the chunk), one record at a time; records horus does not use are skipped unparsed; chunk
//! CRCs are checked by the `mcap` crate, and every failure is a [`ReadError`] naming the file
//! and the byte offset of the record at fault.

use std::collections::HashMap;
use std::fs::File;
use std::io::{BufReader, Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

use mcap::records::Record;

use crate::cdr::CdrPlan;
use crate::chunk::{op, ChunkError, ChunkRecords, MAX_RECORD_BYTES};
use crate::meta::{self, ChannelMeta};
use crate::ros2::{self, Ros2Channel, Ros2Error, MAX_DEFINITIONS_BYTES, MAX_DEFINITION_BYTES};

/// A schema record as kept by the reader.
struct SchemaEntry {
    name: String,
    encoding: String,
    /// The definition of a `ros2msg` schema (or why it was not kept).
    data: Result<Vec<u8>, Ros2Error>,
}

/// Opcode of a footer record.
const OP_FOOTER: u8 = 0x02;
/// Opcode of a chunk record.
const OP_CHUNK: u8 = op::CHUNK;
/// Opcode of a data-end record.
const OP_DATA_END: u8 = 0x0F;

/// Why a recording could not be read.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    /// The file could not be opened or read.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The file is not an MCAP file.
    #[error("{path}: not an MCAP file (bad magic at offset 0)")]
    NotMcap {
        /// The file.
        path: PathBuf,
    },
    /// The file ends inside a record (an interrupted recording, or a truncated copy).
    #[error("{path}: truncated at offset {offset}: record needs {need} bytes, {available} left")]
    Truncated {
        /// The file.
        path: PathBuf,
        /// Where the incomplete record starts.
        offset: u64,
        /// Bytes the record claims.
        need: u64,
        /// Bytes left in the file.
        available: u64,
    },
    /// The file ends in a chunk the writer had started but not finished (a recorder killed
    /// or a disk filled while recording): everything before `offset` is complete.
    #[error(
        "{path}: interrupted at offset {offset}: a chunk still being written when the recording \
         stopped (`horus bag repair` copies everything before it into a finished file)"
    )]
    Unfinished {
        /// The file.
        path: PathBuf,
        /// Where the unfinished chunk starts.
        offset: u64,
    },
    /// A record declares more bytes than a reader holds in memory ([`MAX_RECORD_BYTES`]).
    #[error("{path}: record at offset {offset} declares {len} bytes ({what}), more than the limit of {limit}")]
    TooLarge {
        /// The file.
        path: PathBuf,
        /// Where the record starts.
        offset: u64,
        /// What it is.
        what: &'static str,
        /// Bytes declared.
        len: u64,
        /// The limit.
        limit: u64,
    },
    /// A chunk cannot be expanded within the limits, or its contents are corrupt (a record
    /// inside claiming more than the chunk holds, a decompression bomb, a bad CRC…).
    #[error("{path}: chunk at offset {offset}: {reason}")]
    Chunk {
        /// The file.
        path: PathBuf,
        /// Where the chunk starts.
        offset: u64,
        /// What is wrong.
        reason: ChunkError,
    },
    /// A record is malformed (bad length, bad CRC, bad compression, unknown channel…).
    #[error("{path}: corrupt record at offset {offset}: {reason}")]
    Corrupt {
        /// The file.
        path: PathBuf,
        /// Where the record starts.
        offset: u64,
        /// What is wrong.
        reason: String,
    },
}

/// A channel of a recording.
#[derive(Debug)]
pub struct ReadChannel {
    /// The channel's id in the file.
    pub id: u16,
    /// The topic.
    pub topic: String,
    /// The schema's name as stored (`pkg/msg/Name`).
    pub schema_name: String,
    /// The schema's encoding (`ros2msg`, `jsonschema`, …).
    pub schema_encoding: String,
    /// The messages' encoding (`cdr`, `json`, …).
    pub message_encoding: String,
    /// The horus description and QoS, or why the channel has none usable.
    pub meta: Result<ChannelMeta, meta::MetaError>,
    /// A ROS-typed channel (`ros2msg` schema, `cdr` messages, no horus description: what
    /// horus records for ROS-typed topics and what rosbag2 writes), checked; `None` for
    /// other channels. Its messages are the wire bytes ([`RecordedMessage::cdr`]).
    pub ros2: Option<Result<Ros2Channel, Ros2Error>>,
    plan: Option<CdrPlan>,
}

/// One recorded message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RecordedMessage {
    /// The channel's id in the file (see [`RecordingReader::channel`]).
    pub channel: u16,
    /// Per-channel sequence number as recorded.
    pub sequence: u32,
    /// Receive time, ns since the Unix epoch.
    pub log_time: u64,
    /// The message as CDR, as stored.
    pub cdr: Vec<u8>,
}

/// Reads an MCAP recording front to back.
pub struct RecordingReader {
    path: PathBuf,
    file: BufReader<File>,
    len: u64,
    pos: u64,
    done: bool,
    channels: HashMap<u16, ReadChannel>,
    schemas: HashMap<u16, SchemaEntry>,
    /// Bytes of definitions held in `schemas`.
    definitions_bytes: usize,
    /// Records of the chunk being read, and the chunk's offset.
    pending: Option<ChunkRecords>,
    pending_at: u64,
    metadata: Vec<mcap::records::Metadata>,
}

impl RecordingReader {
    /// Opens `path` and checks its magic.
    pub fn open(path: &Path) -> Result<RecordingReader, ReadError> {
        let io = |source| ReadError::Io {
            path: path.to_owned(),
            source,
        };
        let file = File::open(path).map_err(io)?;
        let len = file.metadata().map_err(io)?.len();
        let mut r = RecordingReader {
            path: path.to_owned(),
            file: BufReader::with_capacity(1 << 16, file),
            len,
            pos: 0,
            done: false,
            channels: HashMap::new(),
            schemas: HashMap::new(),
            definitions_bytes: 0,
            pending: None,
            pending_at: 0,
            metadata: Vec::new(),
        };
        let mut magic = [0u8; 8];
        if len < 8 || r.file.read_exact(&mut magic).is_err() || magic != mcap::MAGIC {
            return Err(ReadError::NotMcap {
                path: path.to_owned(),
            });
        }
        r.pos = 8;
        Ok(r)
    }

    /// The file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// A channel seen so far.
    pub fn channel(&self, id: u16) -> Option<&ReadChannel> {
        self.channels.get(&id)
    }

    /// The metadata records seen so far (`horus.session`, `horus.losses`).
    pub fn metadata(&self) -> &[mcap::records::Metadata] {
        &self.metadata
    }

    /// Every channel seen so far.
    pub fn channels(&self) -> impl Iterator<Item = &ReadChannel> {
        self.channels.values()
    }

    fn corrupt(&self, offset: u64, reason: impl std::fmt::Display) -> ReadError {
        ReadError::Corrupt {
            path: self.path.clone(),
            offset,
            reason: reason.to_string(),
        }
    }

    /// Reads the next top-level record: its offset, opcode and body.
    fn next_record(&mut self) -> Result<Option<(u64, u8, Vec<u8>)>, ReadError> {
        let at = self.pos;
        let left = self.len - self.pos;
        if left == 0 {
            // No footer: the recording was interrupted, but every record was complete.
            return Ok(None);
        }
        let truncated = |need: u64| ReadError::Truncated {
            path: self.path.clone(),
            offset: at,
            need,
            available: left,
        };
        if left < 9 {
            return Err(truncated(9));
        }
        let mut head = [0u8; 9];
        self.file
            .read_exact(&mut head)
            .map_err(|source| ReadError::Io {
                path: self.path.clone(),
                source,
            })?;
        let op = head[0];
        let body_len = u64::from_le_bytes(head[1..9].try_into().expect("8 bytes"));
        if op == OP_CHUNK && body_len == u64::MAX {
            // The `mcap` writer's placeholder length, patched when the chunk is finished.
            return Err(ReadError::Unfinished {
                path: self.path.clone(),
                offset: at,
            });
        }
        if body_len > left - 9 {
            return Err(truncated(body_len.saturating_add(9)));
        }
        if !matches!(
            op,
            op::SCHEMA | op::CHANNEL | op::MESSAGE | op::CHUNK | op::METADATA
        ) && op != OP_FOOTER
            && op != OP_DATA_END
        {
            // Not used here (indexes, attachments, unknown opcodes): skipped unparsed.
            self.file
                .seek_relative(body_len as i64)
                .map_err(|source| ReadError::Io {
                    path: self.path.clone(),
                    source,
                })?;
            self.pos += 9 + body_len;
            return Ok(Some((at, op, Vec::new())));
        }
        if body_len > MAX_RECORD_BYTES {
            return Err(ReadError::TooLarge {
                path: self.path.clone(),
                offset: at,
                what: if op == OP_CHUNK { "chunk" } else { "record" },
                len: body_len,
                limit: MAX_RECORD_BYTES,
            });
        }
        // Bounded by the file's size (checked above) and MAX_RECORD_BYTES.
        let mut body = vec![0u8; body_len as usize];
        self.file
            .read_exact(&mut body)
            .map_err(|source| ReadError::Io {
                path: self.path.clone(),
                source,
            })?;
        self.pos += 9 + body_len;
        Ok(Some((at, op, body)))
    }

    /// The next message in file order, `None` at the end of the data.
    pub fn next_message(&mut self) -> Result<Option<RecordedMessage>, ReadError> {
        loop {
            if let Some(chunk) = self.pending.as_mut() {
                let at = self.pending_at;
                match chunk.next_record() {
                    None => self.pending = None,
                    Some(Err(reason)) => {
                        self.pending = None;
                        return Err(ReadError::Chunk {
                            path: self.path.clone(),
                            offset: at,
                            reason,
                        });
                    }
                    Some(Ok(rec)) => {
                        if let Some(m) = self.take(at, rec)? {
                            return Ok(Some(m));
                        }
                    }
                }
                continue;
            }
            if self.done {
                return Ok(None);
            }
            let Some((at, op, body)) = self.next_record()? else {
                self.done = true;
                return Ok(None);
            };
            if op == OP_FOOTER || op == OP_DATA_END {
                self.done = true;
                return Ok(None);
            }
            if op == OP_CHUNK {
                let chunk = ChunkRecords::new(body).map_err(|reason| ReadError::Chunk {
                    path: self.path.clone(),
                    offset: at,
                    reason,
                })?;
                self.pending = Some(chunk);
                self.pending_at = at;
                continue;
            }
            if !matches!(op, op::SCHEMA | op::CHANNEL | op::MESSAGE | op::METADATA) {
                continue;
            }
            let rec = mcap::parse_record(op, &body)
                .map_err(|e| self.corrupt(at, e))?
                .into_owned();
            if let Some(m) = self.take(at, rec)? {
                return Ok(Some(m));
            }
        }
    }

    /// Handles one record; a message comes back.
    fn take(
        &mut self,
        at: u64,
        rec: Record<'static>,
    ) -> Result<Option<RecordedMessage>, ReadError> {
        match rec {
            Record::Schema { header, data } => self.keep_schema(header, &data),
            Record::Channel(c) => {
                let meta = meta::from_metadata(&c.metadata);
                let plan = meta
                    .as_ref()
                    .ok()
                    .and_then(|m| CdrPlan::new(&m.description).ok());
                let schema = self.schemas.get(&c.schema_id);
                let schema_name = schema.map(|s| s.name.clone()).unwrap_or_default();
                let schema_encoding = schema.map(|s| s.encoding.clone()).unwrap_or_default();
                let ros2 = match schema {
                    Some(s)
                        if s.encoding == crate::ros2msg::ENCODING
                            && c.message_encoding == ros2::MESSAGE_ENCODING
                            && matches!(meta, Err(meta::MetaError::Missing(_))) =>
                    {
                        Some(match &s.data {
                            Ok(d) => ros2::from_channel(&s.name, d, &c.metadata),
                            Err(e) => Err(e.clone()),
                        })
                    }
                    _ => None,
                };
                self.channels.insert(
                    c.id,
                    ReadChannel {
                        id: c.id,
                        topic: c.topic,
                        schema_name,
                        schema_encoding,
                        message_encoding: c.message_encoding,
                        meta,
                        ros2,
                        plan,
                    },
                );
            }
            Record::Metadata(m) => self.metadata.push(m),
            Record::Message { header, data } => {
                if !self.channels.contains_key(&header.channel_id) {
                    return Err(self.corrupt(
                        at,
                        format!("message on unknown channel {}", header.channel_id),
                    ));
                }
                return Ok(Some(RecordedMessage {
                    channel: header.channel_id,
                    sequence: header.sequence,
                    log_time: header.log_time,
                    cdr: data.into_owned(),
                }));
            }
            _ => {}
        }
        Ok(None)
    }

    /// Keeps a schema's name and encoding, and the definition of a `ros2msg` schema within
    /// [`MAX_DEFINITION_BYTES`] each and [`MAX_DEFINITIONS_BYTES`] in all.
    fn keep_schema(&mut self, header: mcap::records::SchemaHeader, data: &[u8]) {
        if let Some(old) = self.schemas.remove(&header.id) {
            self.definitions_bytes -= old.data.map(|d| d.len()).unwrap_or(0);
        }
        let data = if header.encoding != crate::ros2msg::ENCODING {
            Ok(Vec::new())
        } else if data.len() > MAX_DEFINITION_BYTES {
            Err(Ros2Error::DefinitionTooLarge(data.len()))
        } else if self.definitions_bytes + data.len() > MAX_DEFINITIONS_BYTES {
            Err(Ros2Error::DefinitionsOverBudget(MAX_DEFINITIONS_BYTES))
        } else {
            self.definitions_bytes += data.len();
            Ok(data.to_vec())
        };
        self.schemas.insert(
            header.id,
            SchemaEntry {
                name: header.name,
                encoding: header.encoding,
                data,
            },
        );
    }

    /// The exact horus bytes of a message read from this file (`None`: its channel carries
    /// no usable horus description).
    pub fn horus_bytes(
        &self,
        m: &RecordedMessage,
        out: &mut Vec<u8>,
    ) -> Option<Result<(), crate::cdr::CdrError>> {
        let plan = self.channels.get(&m.channel)?.plan.as_ref()?;
        Some(plan.decode(&m.cdr, out))
    }

    /// Offset just past the last record read (for repair: everything before is complete).
    pub fn position(&self) -> u64 {
        self.pos
    }
}

/// Reads the footer and summary section of `path` without touching the data section.
pub(crate) fn read_tail(path: &Path) -> Result<Option<(u64, Vec<u8>)>, ReadError> {
    let io = |source| ReadError::Io {
        path: path.to_owned(),
        source,
    };
    let mut f = File::open(path).map_err(io)?;
    let len = f.metadata().map_err(io)?.len();
    // Footer record: opcode, length 20, summary start, summary offset start, crc; then magic.
    const FOOTER: u64 = 1 + 8 + 20 + 8;
    if len < 8 + FOOTER {
        return Ok(None);
    }
    let mut tail = [0u8; FOOTER as usize];
    f.seek(SeekFrom::Start(len - FOOTER)).map_err(io)?;
    f.read_exact(&mut tail).map_err(io)?;
    if tail[0] != OP_FOOTER || &tail[29..] != mcap::MAGIC {
        return Ok(None);
    }
    let summary_start = u64::from_le_bytes(tail[9..17].try_into().expect("8 bytes"));
    let footer_at = len - FOOTER;
    if summary_start == 0 {
        return Ok(Some((footer_at, Vec::new())));
    }
    if summary_start < 8 || summary_start > footer_at {
        return Err(ReadError::Corrupt {
            path: path.to_owned(),
            offset: footer_at,
            reason: format!("footer's summary start {summary_start} is outside the file"),
        });
    }
    let summary_len = footer_at - summary_start;
    if summary_len > MAX_RECORD_BYTES {
        return Err(ReadError::TooLarge {
            path: path.to_owned(),
            offset: summary_start,
            what: "summary section",
            len: summary_len,
            limit: MAX_RECORD_BYTES,
        });
    }
    let mut summary = vec![0u8; summary_len as usize];
    f.seek(SeekFrom::Start(summary_start)).map_err(io)?;
    f.read_exact(&mut summary).map_err(io)?;
    Ok(Some((summary_start, summary)))
}

/// Reads `len` bytes at `offset` (a record the summary points to), checked against the file.
pub(crate) fn read_at(path: &Path, offset: u64, len: u64) -> Result<Vec<u8>, ReadError> {
    let io = |source| ReadError::Io {
        path: path.to_owned(),
        source,
    };
    let mut f = File::open(path).map_err(io)?;
    let size = f.metadata().map_err(io)?.len();
    if offset.checked_add(len).is_none_or(|end| end > size) {
        return Err(ReadError::Truncated {
            path: path.to_owned(),
            offset,
            need: len,
            available: size.saturating_sub(offset),
        });
    }
    if len > MAX_RECORD_BYTES {
        return Err(ReadError::TooLarge {
            path: path.to_owned(),
            offset,
            what: "indexed record",
            len,
            limit: MAX_RECORD_BYTES,
        });
    }
    let mut buf = vec![0u8; len as usize];
    f.seek(SeekFrom::Start(offset)).map_err(io)?;
    f.read_exact(&mut buf).map_err(io)?;
    Ok(buf)
}
