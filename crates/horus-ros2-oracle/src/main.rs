//! The Rust side of `make test-ros2` (docs/interfaces.md, "How it is checked"): the rclpy
//! side (`live_oracle.py`, run in the ROS 2 venv) serializes randomised messages of every
//! standard type with rclpy and hands their values and bytes over; this checks horus's
//! encoding and decoding against them — `horus_idl::cdr` on the dynamic value, and the
//! generated types of horus-ros-msgs — and hands horus's bytes back, which the rclpy side
//! then deserializes.
//!
//! ```text
//! horus-ros2-oracle types          every structure of the standard set, one name a line
//! horus-ros2-oracle check IN OUT   IN: {"type","case","value","cdr"} lines (rclpy's);
//!                                  OUT: {"type","case","end","horus",…} lines (horus's)
//! ```
//!
//! `check` checks every message, prints each one that differs and a summary, and exits 1
//! if any differed.

mod check;
mod compare;
mod generated;
mod value_json;

use std::collections::BTreeSet;
use std::fs::File;
use std::io::{BufRead, BufReader, BufWriter, Write};
use std::path::Path;
use std::process::ExitCode;

use anyhow::{bail, Context, Result};
use horus_idl::{InterfaceSet, Resolved};

/// Failures printed in full; the rest are counted.
const SHOWN_FAILURES: usize = 20;

fn standard() -> Result<Resolved> {
    InterfaceSet::standard()
        .context("loading the standard interfaces")?
        .resolve()
        .context("resolving the standard interfaces")
}

fn types() -> Result<ExitCode> {
    let resolved = standard()?;
    let mut out = std::io::stdout().lock();
    for s in resolved.structs() {
        writeln!(out, "{}", s.name)?;
    }
    Ok(ExitCode::SUCCESS)
}

fn check_file(input: &Path, output: &Path) -> Result<ExitCode> {
    let resolved = standard()?;
    let generated = generated::Generated::new();
    let reader =
        BufReader::new(File::open(input).with_context(|| format!("opening {}", input.display()))?);
    let mut writer = BufWriter::new(
        File::create(output).with_context(|| format!("creating {}", output.display()))?,
    );
    let (mut messages, mut compared, mut padding) = (0usize, 0usize, 0usize);
    let (mut types, mut overrun_types) = (BTreeSet::new(), BTreeSet::new());
    let mut failures = 0usize;
    for (n, line) in reader.lines().enumerate() {
        let line = line.with_context(|| format!("reading {}", input.display()))?;
        let case = check::Case::parse(&line)
            .with_context(|| format!("{} line {}", input.display(), n + 1))?;
        match check::check(&resolved, &generated, &case) {
            Ok(checked) => {
                writeln!(writer, "{}", check::answer(&case, &checked))?;
                messages += 1;
                compared += checked.compared;
                padding += checked.padding;
                if checked.overrun > 0 {
                    overrun_types.insert(case.type_name.clone());
                }
                types.insert(case.type_name);
            }
            Err(e) => {
                failures += 1;
                if failures <= SHOWN_FAILURES {
                    eprintln!("DIFFERS {} case {}: {e:#}", case.type_name, case.case);
                }
            }
        }
    }
    writer.flush()?;
    eprintln!(
        "horus-ros2-oracle: {} types, {messages} messages equal to rclpy's (horus_idl::cdr and \
         the generated types of horus-ros-msgs): {compared} bytes compared, {padding} padding \
         bytes skipped; rclpy's buffer ran past the message for {} types",
        types.len(),
        overrun_types.len()
    );
    if failures > 0 {
        eprintln!("horus-ros2-oracle: {failures} messages differ (first {SHOWN_FAILURES} above)");
        return Ok(ExitCode::FAILURE);
    }
    Ok(ExitCode::SUCCESS)
}

fn run() -> Result<ExitCode> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.iter().map(String::as_str).collect::<Vec<_>>()[..] {
        ["types"] => types(),
        ["check", input, output] => check_file(Path::new(input), Path::new(output)),
        _ => bail!("usage: horus-ros2-oracle types | horus-ros2-oracle check IN OUT"),
    }
}

fn main() -> ExitCode {
    match run() {
        Ok(code) => code,
        Err(e) => {
            eprintln!("horus-ros2-oracle: {e:#}");
            ExitCode::from(2)
        }
    }
}
