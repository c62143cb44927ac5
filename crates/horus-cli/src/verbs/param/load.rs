//! `horus param load NODE FILE`: set parameters from a YAML file. The whole file is checked
//! against the node's declarations first (unknown names, types, ranges, sizes; errors carry
//! line and column); a file with an error sets nothing.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;
use horus_params::YamlError;
use serde_json::json;

use super::{failed, mirror, value, Target};
use crate::output::Output;

/// Set a node's parameters from a YAML file.
#[derive(Debug, Args)]
pub(crate) struct Load {
    #[command(flatten)]
    target: Target,
    /// The file: one mapping `name: value` (what `horus param dump` prints).
    file: PathBuf,
}

pub(super) fn run(args: Load, out: &Output) -> anyhow::Result<ExitCode> {
    let node = &args.target.node;
    let file = args.file.display().to_string();
    let mut client = match args.target.client() {
        Ok(c) => c,
        Err(e) => return Ok(failed(out, node, &e)),
    };
    let mut m = match mirror::read(&mut client) {
        Ok(m) => m,
        Err(e) => return Ok(failed(out, node, &e)),
    };
    let values = match m.params.load_yaml_file(&args.file) {
        Ok(v) => v,
        Err(e) => return Ok(bad_file(out, &file, &e)),
    };
    let mut set = Vec::new();
    for (name, v) in &values {
        match client.set(name, v) {
            Ok(now) => set.push((name.clone(), now)),
            // Checked above against the same declarations: only a node that changed under us
            // (or vanished) gets here. What was set so far stays set; say so.
            Err(e) => {
                let done: Vec<&str> = set.iter().map(|(n, _)| n.as_str()).collect();
                eprintln!("horus: {file}: set before the failure: {done:?}");
                return Ok(failed(out, node, &e));
            }
        }
    }
    if out.is_json() {
        let list: Vec<_> = set
            .iter()
            .map(|(n, v)| json!({ "name": n, "value": value::to_json(v) }))
            .collect();
        out.json_line(&json!({ "node": node, "file": file, "set": list }));
    } else {
        for (n, v) in &set {
            println!("{n} = {v}");
        }
        println!("{file}: set {} parameter(s) of node {node}", set.len());
    }
    Ok(ExitCode::SUCCESS)
}

/// Reports a file that does not fit the node's declarations (exit status 1; nothing set).
fn bad_file(out: &Output, file: &str, e: &YamlError) -> ExitCode {
    let (line, column) = match e {
        YamlError::At { line, column, .. } => (Some(*line), Some(*column)),
        _ => (None, None),
    };
    if out.is_json() {
        out.json_line(&json!({
            "file": file,
            "error": e.to_string(),
            "kind": "yaml",
            "line": line,
            "column": column,
        }));
    } else {
        eprintln!("horus: {file}: {e} (nothing was set)");
    }
    ExitCode::from(1)
}
