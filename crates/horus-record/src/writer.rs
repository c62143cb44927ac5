//! [`RecordingWriter`]: messages of horus topics into chunked, indexed MCAP files, split by
//! size or duration.
//!
//! Each topic becomes one MCAP channel (message encoding `cdr`) with a `ros2msg` schema
//! generated from its description, and the horus identity and QoS in the channel metadata
//! ([`crate::meta`]); a ROS-typed topic keeps its ROS type, definition and wire bytes
//! ([`crate::ros2`]). Chunks are compressed (zstd or lz4) and flushed at least every
//! [`WriterOptions::flush_every`], so a recorder killed with SIGKILL loses at most that much:
//! everything up to the last complete chunk stays readable. On [`finish`](RecordingWriter::finish)
//! each file gets its losses as a metadata record, then statistics, chunk and message indexes
//! and the summary (the `mcap` crate's defaults).

use std::collections::{BTreeMap, HashMap};
use std::fs::File;
use std::io::BufWriter;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use horus::inspect::QosInfo;
use horus::msgs::MessageDescription;
use horus::Durability;
use mcap::records::{MessageHeader, Metadata};

use crate::cdr::{CdrError, CdrPlan, PlanError};
use crate::meta;
use crate::ros2;
use crate::ros2msg::{self, Ros2Schema};
use horus::msgs::Ros2Type;

/// Chunk compression.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Compression {
    /// Uncompressed chunks.
    None,
    /// zstd (smaller files).
    Zstd,
    /// lz4 (cheaper to write).
    Lz4,
}

impl std::str::FromStr for Compression {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "none" => Ok(Compression::None),
            "zstd" => Ok(Compression::Zstd),
            "lz4" => Ok(Compression::Lz4),
            other => Err(format!("unknown compression {other:?} (none, zstd, lz4)")),
        }
    }
}

/// How recordings are written.
#[derive(Clone, Debug)]
pub struct WriterOptions {
    /// Chunk compression.
    pub compression: Compression,
    /// Uncompressed bytes per chunk before it is compressed and written.
    pub chunk_size: u64,
    /// Start a new file once the current one reaches this many bytes.
    pub max_size: Option<u64>,
    /// Start a new file once the current one spans this much log time.
    pub max_duration: Option<Duration>,
    /// Close the open chunk at least this often (what a SIGKILL can lose).
    pub flush_every: Duration,
    /// Written as the `horus.session` metadata record of every file.
    pub session: BTreeMap<String, String>,
    /// Replace files that already exist (default: refuse them, [`WriteError::Exists`]).
    pub overwrite: bool,
}

impl Default for WriterOptions {
    fn default() -> Self {
        WriterOptions {
            compression: Compression::Zstd,
            chunk_size: 1 << 20,
            max_size: None,
            max_duration: None,
            flush_every: Duration::from_secs(1),
            session: BTreeMap::new(),
            overwrite: false,
        }
    }
}

/// Why recording failed.
#[derive(Debug, thiserror::Error)]
pub enum WriteError {
    /// The file could not be created or written.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The file already exists and [`WriterOptions::overwrite`] is off: nothing was written.
    #[error("{path} already exists (not overwritten; choose another name or overwrite it)")]
    Exists {
        /// The file.
        path: PathBuf,
    },
    /// The MCAP writer refused.
    #[error("{path}: {source}")]
    Mcap {
        /// The file.
        path: PathBuf,
        /// Why.
        source: mcap::McapError,
    },
    /// The topic's description cannot be recorded byte for byte.
    #[error("topic {topic}: {source}")]
    Plan {
        /// The topic.
        topic: String,
        /// Why.
        source: PlanError,
    },
    /// A message does not match its topic's description.
    #[error("topic {topic}: {source}")]
    Encode {
        /// The topic.
        topic: String,
        /// Why.
        source: CdrError,
    },
    /// Too many channels for one recording (MCAP ids are 16 bits).
    #[error("more than 65535 channels")]
    TooManyChannels,
}

/// The schema of a channel added with [`RecordingWriter::add_raw_channel`].
#[derive(Clone, Copy, Debug)]
pub struct RawSchema<'a> {
    /// Schema name (`foxglove.Log`).
    pub name: &'a str,
    /// Schema encoding (`jsonschema`).
    pub schema_encoding: &'a str,
    /// Schema text.
    pub text: &'a str,
    /// Message encoding (`json`).
    pub message_encoding: &'a str,
}

/// A channel of a [`RecordingWriter`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ChannelId(usize);

/// What was recorded on one channel.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ChannelTotals {
    /// The topic.
    pub topic: String,
    /// The horus schema name.
    pub schema: String,
    /// Messages written.
    pub messages: u64,
    /// Messages the recorder missed (reported with [`RecordingWriter::add_missed`]).
    pub missed: u64,
    /// Message bytes (horus bytes, before CDR and compression).
    pub bytes: u64,
}

/// What a finished recording holds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RecordingTotals {
    /// The files written, in order.
    pub files: Vec<PathBuf>,
    /// Per channel, in the order channels were added.
    pub channels: Vec<ChannelTotals>,
}

/// How a channel's messages are stored.
enum Encoder {
    /// horus bytes → CDR.
    Cdr(CdrPlan),
    /// Written as given (already in the channel's message encoding, e.g. JSON).
    Raw,
    /// A ROS 2 message's wire bytes (encapsulation header + CDR body), written as given
    /// once the header is checked.
    Wire,
}

struct ChannelState {
    topic: String,
    schema: Ros2Schema,
    schema_encoding: String,
    message_encoding: String,
    metadata: BTreeMap<String, String>,
    encoder: Encoder,
    sequence: u32,
    totals: ChannelTotals,
    missed_in_file: u64,
}

struct OpenFile {
    path: PathBuf,
    writer: mcap::Writer<BufWriter<File>>,
    /// The same file, to read its size.
    file: File,
    /// MCAP channel id of each of our channels added to this file.
    ids: HashMap<usize, u16>,
    /// Log time of the file's first message.
    first: Option<u64>,
    last_flush: Instant,
    unflushed_bytes: u64,
}

/// Writes horus messages into MCAP.
pub struct RecordingWriter {
    base: PathBuf,
    opts: WriterOptions,
    split: bool,
    files: Vec<PathBuf>,
    current: Option<OpenFile>,
    channels: Vec<ChannelState>,
    cdr: Vec<u8>,
}

impl RecordingWriter {
    /// Starts a recording at `path` (with `--max-size`/`--max-duration`, files
    /// `<stem>_0.mcap`, `<stem>_1.mcap`, …). A file that already exists is refused with
    /// [`WriteError::Exists`] (left untouched) unless [`WriterOptions::overwrite`].
    pub fn create(path: &Path, opts: WriterOptions) -> Result<RecordingWriter, WriteError> {
        let split = opts.max_size.is_some() || opts.max_duration.is_some();
        let mut w = RecordingWriter {
            base: path.to_owned(),
            opts,
            split,
            files: Vec::new(),
            current: None,
            channels: Vec::new(),
            cdr: Vec::new(),
        };
        w.open_next()?;
        Ok(w)
    }

    fn next_path(&self) -> PathBuf {
        if !self.split {
            return self.base.clone();
        }
        let stem = self
            .base
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_else(|| "recording".into());
        let ext = self
            .base
            .extension()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_else(|| "mcap".into());
        self.base
            .with_file_name(format!("{stem}_{}.{ext}", self.files.len()))
    }

    fn open_next(&mut self) -> Result<(), WriteError> {
        let path = self.next_path();
        let io = |source| WriteError::Io {
            path: path.clone(),
            source,
        };
        let file = if self.opts.overwrite {
            File::create(&path).map_err(io)?
        } else {
            // O_EXCL: an existing file (or a link to one) is never opened, so never truncated.
            File::create_new(&path).map_err(|source| {
                if source.kind() == std::io::ErrorKind::AlreadyExists {
                    WriteError::Exists { path: path.clone() }
                } else {
                    WriteError::Io {
                        path: path.clone(),
                        source,
                    }
                }
            })?
        };
        let size_handle = file.try_clone().map_err(io)?;
        let compression = match self.opts.compression {
            Compression::None => None,
            Compression::Zstd => Some(mcap::Compression::Zstd),
            Compression::Lz4 => Some(mcap::Compression::Lz4),
        };
        let mut writer = mcap::WriteOptions::new()
            .profile("ros2")
            .library(concat!("horus-record/", env!("CARGO_PKG_VERSION")))
            .compression(compression)
            .chunk_size(Some(self.opts.chunk_size))
            // The recorder's own thread only: compression must not take cores from the robot.
            .compression_threads(0)
            .create(BufWriter::new(file))
            .map_err(|source| WriteError::Mcap {
                path: path.clone(),
                source,
            })?;
        if !self.opts.session.is_empty() {
            writer
                .write_metadata(&Metadata {
                    name: meta::SESSION.into(),
                    metadata: self.opts.session.clone(),
                })
                .map_err(|source| WriteError::Mcap {
                    path: path.clone(),
                    source,
                })?;
        }
        self.files.push(path.clone());
        self.current = Some(OpenFile {
            path,
            writer,
            file: size_handle,
            ids: HashMap::new(),
            first: None,
            last_flush: Instant::now(),
            unflushed_bytes: 0,
        });
        Ok(())
    }

    /// Adds a volatile topic ([`add_channel_durable`](Self::add_channel_durable)). Fails
    /// when its description cannot be reproduced byte for byte.
    pub fn add_channel(
        &mut self,
        topic: &str,
        description: &MessageDescription,
        qos: &QosInfo,
    ) -> Result<ChannelId, WriteError> {
        self.add_channel_durable(topic, description, qos, Durability::Volatile)
    }

    /// Adds a topic with its durability (stored as `horus.durability`: replay creates a
    /// latched topic latched again). Fails when its description cannot be reproduced byte
    /// for byte.
    pub fn add_channel_durable(
        &mut self,
        topic: &str,
        description: &MessageDescription,
        qos: &QosInfo,
        durability: Durability,
    ) -> Result<ChannelId, WriteError> {
        if self.channels.len() >= u16::MAX as usize {
            return Err(WriteError::TooManyChannels);
        }
        let plan = CdrPlan::new(description).map_err(|source| WriteError::Plan {
            topic: topic.to_owned(),
            source,
        })?;
        self.channels.push(ChannelState {
            topic: topic.to_owned(),
            schema: ros2msg::generate(description),
            schema_encoding: ros2msg::ENCODING.into(),
            message_encoding: "cdr".into(),
            metadata: meta::to_metadata(description, qos, durability),
            encoder: Encoder::Cdr(plan),
            sequence: 0,
            totals: ChannelTotals {
                topic: topic.to_owned(),
                schema: description.root().name.clone(),
                messages: 0,
                missed: 0,
                bytes: 0,
            },
            missed_in_file: 0,
        });
        Ok(ChannelId(self.channels.len() - 1))
    }

    /// Adds a ROS-typed topic ([`crate::ros2`]): schema `ty.type_name` with the `ros2msg`
    /// definition, `cdr` messages written exactly as given to [`write`](Self::write) (the
    /// wire bytes: encapsulation header and CDR body), the hash and QoS in the metadata.
    /// Volatile: see [`add_ros2_channel_durable`](Self::add_ros2_channel_durable).
    pub fn add_ros2_channel(
        &mut self,
        topic: &str,
        ty: &Ros2Type,
        qos: &QosInfo,
    ) -> Result<ChannelId, WriteError> {
        self.add_ros2_channel_durable(topic, ty, qos, Durability::Volatile)
    }

    /// [`add_ros2_channel`](Self::add_ros2_channel) with the topic's durability (in the
    /// offered QoS profile as rosbag2 writes it, and as `horus.durability`).
    pub fn add_ros2_channel_durable(
        &mut self,
        topic: &str,
        ty: &Ros2Type,
        qos: &QosInfo,
        durability: Durability,
    ) -> Result<ChannelId, WriteError> {
        if self.channels.len() >= u16::MAX as usize {
            return Err(WriteError::TooManyChannels);
        }
        self.channels.push(ChannelState {
            topic: topic.to_owned(),
            schema: Ros2Schema {
                name: ty.type_name.clone(),
                text: ty.definition.clone(),
            },
            schema_encoding: ros2msg::ENCODING.into(),
            message_encoding: ros2::MESSAGE_ENCODING.into(),
            metadata: ros2::to_metadata(ty, qos, durability),
            encoder: Encoder::Wire,
            sequence: 0,
            totals: ChannelTotals {
                topic: topic.to_owned(),
                schema: ty.type_name.clone(),
                messages: 0,
                missed: 0,
                bytes: 0,
            },
            missed_in_file: 0,
        });
        Ok(ChannelId(self.channels.len() - 1))
    }

    /// Adds a channel whose messages are written as given (no horus description: `horus
    /// play` does not publish it), e.g. log records as `foxglove.Log` JSON.
    pub fn add_raw_channel(
        &mut self,
        topic: &str,
        schema: RawSchema<'_>,
        metadata: BTreeMap<String, String>,
    ) -> Result<ChannelId, WriteError> {
        if self.channels.len() >= u16::MAX as usize {
            return Err(WriteError::TooManyChannels);
        }
        self.channels.push(ChannelState {
            topic: topic.to_owned(),
            schema: Ros2Schema {
                name: schema.name.to_owned(),
                text: schema.text.to_owned(),
            },
            schema_encoding: schema.schema_encoding.to_owned(),
            message_encoding: schema.message_encoding.to_owned(),
            metadata,
            encoder: Encoder::Raw,
            sequence: 0,
            totals: ChannelTotals {
                topic: topic.to_owned(),
                schema: schema.name.to_owned(),
                messages: 0,
                missed: 0,
                bytes: 0,
            },
            missed_in_file: 0,
        });
        Ok(ChannelId(self.channels.len() - 1))
    }

    /// Counts `n` messages of `ch` the recorder missed.
    pub fn add_missed(&mut self, ch: ChannelId, n: u64) {
        if let Some(c) = self.channels.get_mut(ch.0) {
            c.totals.missed += n;
            c.missed_in_file += n;
        }
    }

    /// Writes one message received at `log_time_ns` (nanoseconds since the Unix epoch;
    /// non-decreasing): the horus bytes (fixed part and tail) of a horus topic, the wire
    /// bytes of a ROS-typed one, the encoded message of a raw channel.
    pub fn write(
        &mut self,
        ch: ChannelId,
        log_time_ns: u64,
        bytes: &[u8],
    ) -> Result<(), WriteError> {
        self.maybe_split(log_time_ns)?;
        let c = &mut self.channels[ch.0];
        match &c.encoder {
            Encoder::Cdr(plan) => {
                plan.encode(bytes, &mut self.cdr)
                    .map_err(|source| WriteError::Encode {
                        topic: c.topic.clone(),
                        source,
                    })?
            }
            Encoder::Wire => {
                ros2::check_wire(bytes).map_err(|source| WriteError::Encode {
                    topic: c.topic.clone(),
                    source,
                })?;
                self.cdr.clear();
                self.cdr.extend_from_slice(bytes);
            }
            Encoder::Raw => {
                self.cdr.clear();
                self.cdr.extend_from_slice(bytes);
            }
        }
        let f = self.current.as_mut().expect("a file is open between calls");
        let mcap_err = |path: &Path, source| WriteError::Mcap {
            path: path.to_owned(),
            source,
        };
        let id = match f.ids.get(&ch.0) {
            Some(&id) => id,
            None => {
                let schema = f
                    .writer
                    .add_schema(&c.schema.name, &c.schema_encoding, c.schema.text.as_bytes())
                    .map_err(|e| mcap_err(&f.path, e))?;
                let id = f
                    .writer
                    .add_channel(schema, &c.topic, &c.message_encoding, &c.metadata)
                    .map_err(|e| mcap_err(&f.path, e))?;
                f.ids.insert(ch.0, id);
                id
            }
        };
        let header = MessageHeader {
            channel_id: id,
            sequence: c.sequence,
            log_time: log_time_ns,
            // The observer sees no publish stamp: the receive time stands in for it.
            publish_time: log_time_ns,
        };
        f.writer
            .write_to_known_channel(&header, &self.cdr)
            .map_err(|e| mcap_err(&f.path, e))?;
        c.sequence = c.sequence.wrapping_add(1);
        c.totals.messages += 1;
        c.totals.bytes += bytes.len() as u64;
        f.first.get_or_insert(log_time_ns);
        f.unflushed_bytes += self.cdr.len() as u64;
        Ok(())
    }

    /// Closes the open chunk if [`WriterOptions::flush_every`] has passed; call it also when
    /// idle so that a quiet recording still reaches the disk.
    pub fn tick(&mut self) -> Result<(), WriteError> {
        let f = self.current.as_mut().expect("a file is open between calls");
        if f.unflushed_bytes > 0 && f.last_flush.elapsed() >= self.opts.flush_every {
            f.writer.flush().map_err(|source| WriteError::Mcap {
                path: f.path.clone(),
                source,
            })?;
            f.unflushed_bytes = 0;
            f.last_flush = Instant::now();
        }
        Ok(())
    }

    fn maybe_split(&mut self, log_time_ns: u64) -> Result<(), WriteError> {
        let f = self.current.as_ref().expect("a file is open between calls");
        let Some(first) = f.first else {
            return Ok(());
        };
        let by_time = self
            .opts
            .max_duration
            .is_some_and(|d| log_time_ns.saturating_sub(first) >= d.as_nanos() as u64);
        let by_size = self.opts.max_size.is_some_and(|max| {
            // The file's size lags by the open chunk: count what is buffered too.
            f.file.metadata().map(|m| m.len()).unwrap_or(0) + f.unflushed_bytes >= max
        });
        if by_time || by_size {
            self.close_current()?;
            self.open_next()?;
        }
        Ok(())
    }

    fn close_current(&mut self) -> Result<(), WriteError> {
        let Some(mut f) = self.current.take() else {
            return Ok(());
        };
        let mcap_err = |source| WriteError::Mcap {
            path: f.path.clone(),
            source,
        };
        // Every topic; a raw channel (`/log`) only if it is in this file or missed something.
        let losses: BTreeMap<String, String> = self
            .channels
            .iter_mut()
            .enumerate()
            .filter_map(|(i, c)| {
                let n = std::mem::take(&mut c.missed_in_file);
                let listed = matches!(c.encoder, Encoder::Cdr(_) | Encoder::Wire)
                    || n > 0
                    || f.ids.contains_key(&i);
                listed.then(|| (c.topic.clone(), n.to_string()))
            })
            .collect();
        f.writer
            .write_metadata(&Metadata {
                name: meta::LOSSES.into(),
                metadata: losses,
            })
            .map_err(mcap_err)?;
        f.writer.finish().map_err(mcap_err)?;
        f.writer
            .into_inner()
            .into_inner()
            .map_err(|e| WriteError::Io {
                path: f.path.clone(),
                source: e.into_error(),
            })?
            .sync_all()
            .map_err(|source| WriteError::Io {
                path: f.path.clone(),
                source,
            })?;
        Ok(())
    }

    /// Writes the losses, indexes and summary of the last file and closes it.
    pub fn finish(mut self) -> Result<RecordingTotals, WriteError> {
        self.close_current()?;
        Ok(RecordingTotals {
            files: std::mem::take(&mut self.files),
            channels: self.channels.iter().map(|c| c.totals.clone()).collect(),
        })
    }
}
