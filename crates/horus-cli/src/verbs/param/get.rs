//! `horus param get NODE NAME`: one parameter's current value.

use std::process::ExitCode;

use clap::Args;
use serde_json::json;

use super::{failed, value, Target};
use crate::output::Output;

/// Print one parameter's value.
#[derive(Debug, Args)]
pub(crate) struct Get {
    #[command(flatten)]
    target: Target,
    /// The parameter.
    name: String,
}

pub(super) fn run(args: Get, out: &Output) -> anyhow::Result<ExitCode> {
    let node = &args.target.node;
    let got = args.target.client().and_then(|mut c| {
        let info = c.describe(&args.name)?;
        Ok((info, c.get(&args.name)?))
    });
    let (info, v) = match got {
        Ok(x) => x,
        Err(e) => return Ok(failed(out, node, &e)),
    };
    if out.is_json() {
        out.json_line(&json!({
            "node": node,
            "name": args.name,
            "kind": info.kind.to_string(),
            "value": value::to_json(&v),
        }));
    } else {
        println!("{v}");
    }
    Ok(ExitCode::SUCCESS)
}
