//! Recording horus topics to MCAP that standard tools read, and reading them back to the
//! exact horus bytes.
//!
//! - [`ros2msg`]: the `ros2msg` schema text generated from a topic's description;
//! - [`cdr`]: horus bytes ⇄ CDR (XCDR1 little-endian), exact in both directions;
//! - [`ros2`]: ROS-typed topics, recorded as ROS 2 records them (type name, `ros2msg`
//!   definition, wire bytes as they are);
//! - [`meta`]: channel metadata (horus schema, layout hash, description, QoS) and the
//!   per-file losses record;
//! - [`foxlog`]: log records as `foxglove.Log` JSON, and a tap on a namespace's log rings;
//! - [`RecordingWriter`]: chunked, compressed, indexed MCAP, split by size or duration;
//! - [`RecordingReader`]: messages in file order with errors naming the file and offset;
//! - [`RecordingInfo`]: topics, counts, rates and losses from the summary section;
//! - [`replay`]: recorded messages fed to a scheduler on its simulated clock, for
//!   deterministic re-execution of nodes.
//!
//! The format is documented in docs/recording.md.
//!
//! ```no_run
//! use horus_record::{RecordingWriter, WriterOptions, RecordingReader};
//! use horus::inspect::QosInfo;
//! use horus::msgs::{CmdVel, MessageDescription};
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! # let qos: QosInfo = unimplemented!();
//! let path = std::path::Path::new("run.mcap");
//! let mut w = RecordingWriter::create(path, WriterOptions::default())?;
//! let ch = w.add_channel("base/cmd_vel", &MessageDescription::of::<CmdVel>(), &qos)?;
//! let msg = CmdVel::new(1, 0.5, 0.1);
//! w.write(ch, 1_700_000_000_000_000_000, bytemuck::bytes_of(&msg))?;
//! w.finish()?;
//!
//! let mut r = RecordingReader::open(path)?;
//! let mut bytes = Vec::new();
//! while let Some(m) = r.next_message()? {
//!     r.horus_bytes(&m, &mut bytes).expect("a horus channel")?;
//!     assert_eq!(bytes, bytemuck::bytes_of(&msg));
//! }
//! # Ok(()) }
//! ```

#![warn(missing_docs)]

pub mod cdr;
pub mod chunk;
pub mod foxlog;
mod info;
pub mod meta;
mod reader;
pub mod replay;
pub mod ros2;
pub mod ros2msg;
mod writer;

pub use info::{ChannelInfo, RecordingInfo};
pub use reader::{ReadChannel, ReadError, RecordedMessage, RecordingReader};
pub use writer::{
    ChannelId, ChannelTotals, Compression, RawSchema, RecordingTotals, RecordingWriter, WriteError,
    WriterOptions,
};
