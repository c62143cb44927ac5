//! `horus bag info FILE`: topics, types, counts, duration, rates and losses of a recording,
//! from its summary section (the data section is not read). A ROS-typed channel's type is its
//! ROS type (`sensor_msgs/msg/LaserScan`); `--json` adds its `type_hash`.
//!
//! `horus bag repair FILE`: an interrupted recording (recorder killed, disk full) has no
//! summary and ends inside a chunk; this copies every message up to the last complete chunk
//! into a new, finished file (summary, indexes, statistics).

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Subcommand};
use horus_record::{
    foxlog, RawSchema, ReadError, RecordingInfo, RecordingReader, RecordingWriter, WriterOptions,
};

use crate::output::Output;
use crate::table::Table;

/// Recordings: info, repair.
#[derive(Debug, Args)]
pub(crate) struct BagCmd {
    #[command(subcommand)]
    verb: BagVerb,
}

#[derive(Debug, Subcommand)]
enum BagVerb {
    /// Topics, types, message counts, duration, rates and losses of a recording.
    Info {
        /// The recording (MCAP).
        file: PathBuf,
    },
    /// Copy what an interrupted recording holds (up to its last complete chunk) into a
    /// finished file.
    Repair {
        /// The interrupted recording.
        file: PathBuf,
        /// Where to write (default: <stem>.repaired.mcap next to it).
        #[arg(short, long)]
        output: Option<PathBuf>,
    },
}

pub(crate) fn run(cmd: BagCmd, out: &Output) -> anyhow::Result<ExitCode> {
    match cmd.verb {
        BagVerb::Info { file } => info(&file, out),
        BagVerb::Repair { file, output } => repair(&file, output, out),
    }
}

fn repair(
    file: &std::path::Path,
    output: Option<PathBuf>,
    out: &Output,
) -> anyhow::Result<ExitCode> {
    let output = output.unwrap_or_else(|| {
        let stem = file
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_else(|| "recording".into());
        file.with_file_name(format!("{stem}.repaired.mcap"))
    });
    if output == file {
        anyhow::bail!("--output must differ from the file being repaired");
    }
    let mut r = RecordingReader::open(file)?;
    let mut opts = WriterOptions::default();
    opts.session
        .insert("repaired_from".into(), file.display().to_string());
    let mut w = RecordingWriter::create(&output, opts)?;
    let mut ids = std::collections::HashMap::new();
    let mut bytes = Vec::new();
    let mut copied = 0u64;
    let stop = loop {
        let m = match r.next_message() {
            Ok(Some(m)) => m,
            Ok(None) => break None,
            Err(
                e @ (ReadError::Truncated { .. }
                | ReadError::Unfinished { .. }
                | ReadError::Corrupt { .. }
                | ReadError::Chunk { .. }
                | ReadError::TooLarge { .. }),
            ) => break Some(e),
            Err(e) => return Err(e.into()),
        };
        let ch = r.channel(m.channel).expect("known channel");
        if ch.schema_name == foxlog::SCHEMA_NAME {
            // Log records (`foxglove.Log` JSON): copied as they are.
            let id = match ids.get(&m.channel) {
                Some(&id) => id,
                None => {
                    let id =
                        w.add_raw_channel(&ch.topic, foxlog::raw_schema(), Default::default())?;
                    ids.insert(m.channel, id);
                    id
                }
            };
            w.write(id, m.log_time, &m.cdr)?;
            copied += 1;
            continue;
        }
        if let Some(ros) = &ch.ros2 {
            // A ROS-typed channel: its type, definition, metadata and wire bytes as they are.
            let ros = ros
                .as_ref()
                .map_err(|e| anyhow::anyhow!("channel {}: {e}", ch.topic))?;
            let id = match ids.get(&m.channel) {
                Some(&id) => id,
                None => {
                    let schema = RawSchema {
                        name: &ros.name,
                        schema_encoding: &ch.schema_encoding,
                        text: &ros.definition,
                        message_encoding: &ch.message_encoding,
                    };
                    let id = w.add_raw_channel(&ch.topic, schema, ros.metadata())?;
                    ids.insert(m.channel, id);
                    id
                }
            };
            w.write(id, m.log_time, &m.cdr)?;
            copied += 1;
            continue;
        }
        let meta = ch
            .meta
            .as_ref()
            .map_err(|e| anyhow::anyhow!("channel {}: {e}", ch.topic))?;
        let id = match ids.get(&m.channel) {
            Some(&id) => id,
            None => {
                let id = w.add_channel_durable(
                    &ch.topic,
                    &meta.description,
                    &meta.qos,
                    meta.durability,
                )?;
                ids.insert(m.channel, id);
                id
            }
        };
        match r.horus_bytes(&m, &mut bytes) {
            Some(Ok(())) => {}
            Some(Err(e)) => anyhow::bail!("channel {}: {e}", ch.topic),
            None => anyhow::bail!("channel {}: no horus description", ch.topic),
        }
        w.write(id, m.log_time, &bytes)?;
        copied += 1;
    };
    let totals = w.finish()?;
    let stopped_at = stop.as_ref().map(|e| e.to_string());
    if out.is_json() {
        out.json_line(&serde_json::json!({
            "output": output.display().to_string(),
            "messages": copied,
            "channels": totals.channels.len(),
            "stopped_at": stopped_at,
        }));
    } else {
        println!(
            "{copied} messages on {} topics copied into {}",
            totals.channels.len(),
            output.display()
        );
        if let Some(s) = stopped_at {
            println!("stopped at the end of the complete data: {s}");
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn info(file: &std::path::Path, out: &Output) -> anyhow::Result<ExitCode> {
    let info = RecordingInfo::read(file)?;
    if out.is_json() {
        let mut v = serde_json::to_value(&info)?;
        v["duration_s"] = info.duration_s().into();
        out.json_line(&v);
        return Ok(ExitCode::SUCCESS);
    }
    println!("file:        {} ({} bytes)", info.path, info.bytes);
    if !info.from_summary {
        println!("             no summary section (interrupted recording): scanned");
    }
    println!("duration:    {:.3} s", info.duration_s());
    println!("start:       {} ns since the epoch", info.start_ns);
    println!("messages:    {}", info.messages);
    let compression: Vec<String> = info
        .compression
        .iter()
        .map(|(c, n)| format!("{} × {n}", if c.is_empty() { "none" } else { c }))
        .collect();
    println!("chunks:      {} ({})", info.chunks, compression.join(", "));
    let mut t = Table::new(&[
        "topic",
        "type",
        "schema",
        ">messages",
        ">rate Hz",
        ">missed",
    ]);
    for c in &info.channels {
        t.row(vec![
            c.topic.clone(),
            // A ROS-typed channel's type is its ROS type (the schema's name).
            c.horus_schema
                .clone()
                .or_else(|| c.is_ros2().then(|| c.schema.clone()))
                .unwrap_or_else(|| "-".into()),
            format!("{} ({})", c.schema, c.schema_encoding),
            c.messages.to_string(),
            format!("{:.1}", c.rate_hz),
            c.missed.to_string(),
        ]);
    }
    print!("{}", t.render());
    Ok(ExitCode::SUCCESS)
}
