//! `horus param list NODE`: every parameter with its kind, value, default and range.

use std::process::ExitCode;

use clap::Args;
use serde_json::json;

use super::{failed, mirror, param_json, range_text, Target};
use crate::output::Output;
use crate::table::Table;

/// List a node's parameters.
#[derive(Debug, Args)]
pub(crate) struct List {
    #[command(flatten)]
    target: Target,
}

pub(super) fn run(args: List, out: &Output) -> anyhow::Result<ExitCode> {
    let node = &args.target.node;
    let m = match args.target.client().and_then(|mut c| mirror::read(&mut c)) {
        Ok(m) => m,
        Err(e) => return Ok(failed(out, node, &e)),
    };
    if out.is_json() {
        let params: Vec<_> = m
            .infos
            .iter()
            .zip(&m.values)
            .map(|(i, v)| param_json(i, v))
            .collect();
        out.json_line(&json!({ "node": node, "params": params }));
        return Ok(ExitCode::SUCCESS);
    }
    let mut t = Table::new(&["name", "kind", "value", "default", "range", "description"]);
    for (i, v) in m.infos.iter().zip(&m.values) {
        t.row(vec![
            i.name.clone(),
            i.kind.to_string(),
            v.to_string(),
            i.default.to_string(),
            range_text(&i.range).unwrap_or_default(),
            i.description.clone(),
        ]);
    }
    if t.is_empty() {
        println!("node {node} declares no parameters");
    } else {
        t.print();
    }
    Ok(ExitCode::SUCCESS)
}
