//! `horus bag info FILE`: topics, types, counts, duration, rates and losses of a recording,
//! from its summary section (the data section is not read).

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Subcommand};
use horus_record::RecordingInfo;

use crate::output::Output;
use crate::table::Table;

/// Recordings: info.
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
}

pub(crate) fn run(cmd: BagCmd, out: &Output) -> anyhow::Result<ExitCode> {
    match cmd.verb {
        BagVerb::Info { file } => info(&file, out),
    }
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
            c.horus_schema.clone().unwrap_or_else(|| "-".into()),
            format!("{} ({})", c.schema, c.schema_encoding),
            c.messages.to_string(),
            format!("{:.1}", c.rate_hz),
            c.missed.to_string(),
        ]);
    }
    print!("{}", t.render());
    Ok(ExitCode::SUCCESS)
}
