//! `horus param set NODE NAME VALUE`: set one parameter; the node validates it.

use std::process::ExitCode;

use clap::Args;
use serde_json::json;

use super::{failed, value, Target};
use crate::output::Output;

/// Set one parameter.
#[derive(Debug, Args)]
pub(crate) struct Set {
    #[command(flatten)]
    target: Target,
    /// The parameter.
    name: String,
    /// The value, as YAML: `1.5`, `true`, `fast`, `"quoted text"`, `[1, 2, 3]`.
    #[arg(allow_hyphen_values = true)]
    value: String,
}

pub(super) fn run(args: Set, out: &Output) -> anyhow::Result<ExitCode> {
    let node = &args.target.node;
    let mut client = match args.target.client() {
        Ok(c) => c,
        Err(e) => return Ok(failed(out, node, &e)),
    };
    let info = match client.describe(&args.name) {
        Ok(i) => i,
        Err(e) => return Ok(failed(out, node, &e)),
    };
    let wanted = match value::parse(&args.value, info.kind) {
        Ok(v) => v,
        Err(why) => {
            // Nothing was sent: the value is unchanged.
            anyhow::bail!("{}: cannot use {:?}: {why}", args.name, args.value)
        }
    };
    let now = match client.set(&args.name, &wanted) {
        Ok(v) => v,
        Err(e) => return Ok(failed(out, node, &e)),
    };
    if out.is_json() {
        out.json_line(&json!({
            "node": node,
            "name": args.name,
            "kind": info.kind.to_string(),
            "value": value::to_json(&now),
        }));
    } else {
        println!("{} = {now}", args.name);
    }
    Ok(ExitCode::SUCCESS)
}
