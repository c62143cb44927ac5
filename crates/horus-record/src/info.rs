//! [`RecordingInfo`]: what a recording holds, from its summary section alone (the footer, the
//! summary and the metadata records it indexes; the data section is never read, so this is
//! fast on a file of any size). A file without a summary (an interrupted recording) is
//! scanned instead, which [`RecordingInfo::from_summary`] says.

use std::collections::BTreeMap;
use std::path::Path;

use mcap::records::Record;

use crate::chunk::MAX_RECORD_BYTES;
use crate::reader::{read_at, read_tail, ReadError, RecordingReader};

const OP_SCHEMA: u8 = 0x03;
const OP_CHANNEL: u8 = 0x04;
const OP_CHUNK_INDEX: u8 = 0x08;
const OP_STATISTICS: u8 = 0x0B;
const OP_METADATA: u8 = 0x0C;
const OP_METADATA_INDEX: u8 = 0x0D;

/// Most metadata records `bag info` reads through the summary's index (horus writes two per
/// file); their total size is bounded by [`MAX_RECORD_BYTES`] as well.
const MAX_METADATA_RECORDS: usize = 4096;
use crate::meta;

/// One channel of a recording.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct ChannelInfo {
    /// The topic.
    pub topic: String,
    /// The horus schema name (`None`: the channel carries no horus metadata).
    pub horus_schema: Option<String>,
    /// The stored schema's name (`pkg/msg/Name`; for a ROS-typed channel, its ROS type).
    pub schema: String,
    /// The RIHS01 type hash of a ROS-typed channel (`topic_type_hash`), when stated and valid.
    pub type_hash: Option<String>,
    /// The schema's encoding (`ros2msg`).
    pub schema_encoding: String,
    /// The messages' encoding (`cdr`).
    pub message_encoding: String,
    /// Messages recorded.
    pub messages: u64,
    /// Messages per second over the recording's duration.
    pub rate_hz: f64,
    /// Messages the recorder missed (from the `horus.losses` metadata).
    pub missed: u64,
}

impl ChannelInfo {
    /// Whether the channel is ROS-typed: a `ros2msg` schema with `cdr` messages and no horus
    /// description (a ROS-typed horus topic, or a rosbag2 recording's channel).
    pub fn is_ros2(&self) -> bool {
        self.horus_schema.is_none()
            && self.schema_encoding == crate::ros2msg::ENCODING
            && self.message_encoding == crate::ros2::MESSAGE_ENCODING
    }
}

/// What a recording holds.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct RecordingInfo {
    /// The file.
    pub path: String,
    /// File size, bytes.
    pub bytes: u64,
    /// Whether this came from the summary (`false`: the file had none and was scanned).
    pub from_summary: bool,
    /// Messages in all channels.
    pub messages: u64,
    /// Chunks.
    pub chunks: u64,
    /// First message's log time, ns since the Unix epoch.
    pub start_ns: u64,
    /// Last message's log time.
    pub end_ns: u64,
    /// Chunk compressions used (`zstd`, `lz4`, `` for none) and how many chunks each.
    pub compression: BTreeMap<String, u64>,
    /// Every channel, by topic.
    pub channels: Vec<ChannelInfo>,
    /// The `horus.session` metadata, if any.
    pub session: BTreeMap<String, String>,
    /// Losses read from metadata, applied to the channels once all are known.
    #[serde(skip)]
    losses: Vec<(String, u64)>,
}

impl RecordingInfo {
    /// Reads the summary of `path` (or scans the file when it has none).
    pub fn read(path: &Path) -> Result<RecordingInfo, ReadError> {
        // The magic first: a file that is not MCAP at all gets that error, not "no summary".
        drop(RecordingReader::open(path)?);
        let bytes = std::fs::metadata(path)
            .map_err(|source| ReadError::Io {
                path: path.to_owned(),
                source,
            })?
            .len();
        match read_tail(path)? {
            Some((start, summary)) if !summary.is_empty() => {
                Self::from_summary(path, bytes, start, &summary)
            }
            _ => Self::scan(path, bytes),
        }
    }

    fn from_summary(
        path: &Path,
        bytes: u64,
        start: u64,
        summary: &[u8],
    ) -> Result<RecordingInfo, ReadError> {
        let corrupt = |offset: u64, reason: String| ReadError::Corrupt {
            path: path.to_owned(),
            offset,
            reason,
        };
        let mut info = RecordingInfo {
            path: path.display().to_string(),
            bytes,
            from_summary: true,
            messages: 0,
            chunks: 0,
            start_ns: 0,
            end_ns: 0,
            compression: BTreeMap::new(),
            channels: Vec::new(),
            session: BTreeMap::new(),
            losses: Vec::new(),
        };
        let mut schemas: BTreeMap<u16, (String, String)> = BTreeMap::new();
        let mut channels: BTreeMap<u16, ChannelInfo> = BTreeMap::new();
        let mut counts: BTreeMap<u16, u64> = BTreeMap::new();
        let mut metadata = Vec::new();
        let mut pos = 0usize;
        while pos < summary.len() {
            let at = start + pos as u64;
            let Some(head) = summary.get(pos..pos + 9) else {
                return Err(corrupt(at, "summary record header cut short".into()));
            };
            let op = head[0];
            let len = u64::from_le_bytes(head[1..9].try_into().expect("8 bytes"));
            let body = usize::try_from(len)
                .ok()
                .and_then(|l| summary.get(pos + 9..(pos + 9).checked_add(l)?))
                .ok_or_else(|| {
                    corrupt(
                        at,
                        format!("summary record of {len} bytes runs past the footer"),
                    )
                })?;
            pos += 9 + body.len();
            // Only the records used here are parsed (the others, attachments and message
            // indexes among them, are skipped: nothing to trust in them).
            if !matches!(
                op,
                OP_SCHEMA | OP_CHANNEL | OP_STATISTICS | OP_CHUNK_INDEX | OP_METADATA_INDEX
            ) {
                continue;
            }
            match mcap::parse_record(op, body).map_err(|e| corrupt(at, e.to_string()))? {
                Record::Schema { header, .. } => {
                    schemas.insert(header.id, (header.name, header.encoding));
                }
                Record::Channel(c) => {
                    let horus_schema = meta::from_metadata(&c.metadata)
                        .ok()
                        .map(|m| m.description.root().name.clone());
                    let (schema, schema_encoding) =
                        schemas.get(&c.schema_id).cloned().unwrap_or_default();
                    let type_hash = c
                        .metadata
                        .get(crate::ros2::TYPE_HASH)
                        .filter(|h| crate::ros2::valid_hash(h))
                        .cloned();
                    channels.insert(
                        c.id,
                        ChannelInfo {
                            topic: c.topic,
                            horus_schema,
                            schema,
                            type_hash,
                            schema_encoding,
                            message_encoding: c.message_encoding,
                            messages: 0,
                            rate_hz: 0.0,
                            missed: 0,
                        },
                    );
                }
                Record::Statistics(s) => {
                    info.messages = s.message_count;
                    info.chunks = u64::from(s.chunk_count);
                    info.start_ns = s.message_start_time;
                    info.end_ns = s.message_end_time;
                    counts = s.channel_message_counts;
                }
                Record::ChunkIndex(c) => {
                    *info.compression.entry(c.compression).or_default() += 1;
                }
                Record::MetadataIndex(m) => metadata.push(m),
                _ => {}
            }
        }
        if metadata.len() > MAX_METADATA_RECORDS {
            return Err(corrupt(
                start,
                format!(
                    "summary indexes {} metadata records, more than the {MAX_METADATA_RECORDS} read",
                    metadata.len()
                ),
            ));
        }
        let mut metadata_bytes = 0u64;
        for m in metadata {
            metadata_bytes = metadata_bytes.saturating_add(m.length);
            if metadata_bytes > MAX_RECORD_BYTES {
                return Err(ReadError::TooLarge {
                    path: path.to_owned(),
                    offset: m.offset,
                    what: "metadata records in all",
                    len: metadata_bytes,
                    limit: MAX_RECORD_BYTES,
                });
            }
            let raw = read_at(path, m.offset, m.length)?;
            let body = raw.get(9..).unwrap_or_default();
            // Only a metadata opcode is parsed (whatever else the index points at is refused).
            let parsed =
                (raw.first() == Some(&OP_METADATA)).then(|| mcap::parse_record(OP_METADATA, body));
            match parsed {
                Some(Ok(Record::Metadata(md))) => info.absorb(md),
                _ => {
                    return Err(corrupt(
                        m.offset,
                        "metadata index points at no metadata record".into(),
                    ))
                }
            }
        }
        for (id, n) in counts {
            if let Some(c) = channels.get_mut(&id) {
                c.messages = n;
            }
        }
        info.channels = channels.into_values().collect();
        info.finish_rates();
        Ok(info)
    }

    fn absorb(&mut self, md: mcap::records::Metadata) {
        if md.name == meta::LOSSES {
            for (topic, n) in md.metadata {
                let n: u64 = n.parse().unwrap_or(0);
                self.losses.push((topic, n));
            }
        } else if md.name == meta::SESSION {
            self.session = md.metadata;
        }
    }

    fn finish_rates(&mut self) {
        for (topic, n) in std::mem::take(&mut self.losses) {
            if let Some(c) = self.channels.iter_mut().find(|c| c.topic == topic) {
                c.missed += n;
            }
        }
        let secs = self.end_ns.saturating_sub(self.start_ns) as f64 / 1e9;
        for c in &mut self.channels {
            c.rate_hz = if secs > 0.0 {
                c.messages as f64 / secs
            } else {
                0.0
            };
        }
        self.channels.sort_by(|a, b| a.topic.cmp(&b.topic));
    }

    /// Duration from the first to the last message, seconds.
    pub fn duration_s(&self) -> f64 {
        self.end_ns.saturating_sub(self.start_ns) as f64 / 1e9
    }

    fn scan(path: &Path, bytes: u64) -> Result<RecordingInfo, ReadError> {
        let mut r = RecordingReader::open(path)?;
        let mut counts: BTreeMap<u16, u64> = BTreeMap::new();
        let (mut start, mut end, mut n) = (u64::MAX, 0u64, 0u64);
        while let Some(m) = r.next_message()? {
            *counts.entry(m.channel).or_default() += 1;
            start = start.min(m.log_time);
            end = end.max(m.log_time);
            n += 1;
        }
        let mut info = RecordingInfo {
            path: path.display().to_string(),
            bytes,
            from_summary: false,
            messages: n,
            chunks: 0,
            start_ns: if n == 0 { 0 } else { start },
            end_ns: end,
            compression: BTreeMap::new(),
            channels: Vec::new(),
            session: BTreeMap::new(),
            losses: Vec::new(),
        };
        for md in r.metadata().to_vec() {
            info.absorb(md);
        }
        for c in r.channels() {
            info.channels.push(ChannelInfo {
                topic: c.topic.clone(),
                horus_schema: c
                    .meta
                    .as_ref()
                    .ok()
                    .map(|m| m.description.root().name.clone()),
                schema: c.schema_name.clone(),
                type_hash: c
                    .ros2
                    .as_ref()
                    .and_then(|r| r.as_ref().ok())
                    .and_then(|r| r.hash.clone()),
                schema_encoding: c.schema_encoding.clone(),
                message_encoding: c.message_encoding.clone(),
                messages: counts.get(&c.id).copied().unwrap_or(0),
                rate_hz: 0.0,
                missed: 0,
            });
        }
        info.finish_rates();
        Ok(info)
    }
}
