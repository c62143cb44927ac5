//! `horus param dump NODE`: every parameter as YAML, with its description, kind and range
//! in a comment; `horus param load` reads it back.

use std::process::ExitCode;

use clap::Args;
use serde_json::json;

use super::{failed, mirror, param_json, Target};
use crate::output::Output;

/// Print every parameter of a node as YAML.
#[derive(Debug, Args)]
pub(crate) struct Dump {
    #[command(flatten)]
    target: Target,
}

pub(super) fn run(args: Dump, out: &Output) -> anyhow::Result<ExitCode> {
    let node = &args.target.node;
    let m = match args.target.client().and_then(|mut c| mirror::read(&mut c)) {
        Ok(m) => m,
        Err(e) => return Ok(failed(out, node, &e)),
    };
    let yaml = m.params.dump_yaml();
    if out.is_json() {
        let params: Vec<_> = m
            .infos
            .iter()
            .zip(&m.values)
            .map(|(i, v)| param_json(i, v))
            .collect();
        out.json_line(&json!({ "node": node, "yaml": yaml, "params": params }));
    } else {
        print!("{yaml}");
    }
    Ok(ExitCode::SUCCESS)
}
