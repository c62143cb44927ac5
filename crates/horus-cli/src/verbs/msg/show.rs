//! `horus msg show TYPE`: an interface's definition, like `ros2 interface show`.

use std::process::ExitCode;

use clap::Args;
use serde_json::json;

use super::expand::expand;
use super::hash::type_hash;
use super::{Catalog, PackageDirs};
use crate::output::Output;

/// Show an interface as its file writes it (comments included).
#[derive(Debug, Args)]
pub(crate) struct Show {
    /// The type: `pkg/msg/Type`, `pkg/srv/Foo`, `pkg/action/Bar`, a structure of a
    /// service or action (`pkg/srv/Foo_Request`, `pkg/action/Bar_Goal`, …), or `pkg/Type`.
    type_name: String,
    /// Expand nested types under their fields, indented by a tab per level and without
    /// their comments, as `ros2 interface show` does.
    #[arg(long)]
    all: bool,
    /// Print the type's RIHS01 hash instead (as `horus msg hash`).
    #[arg(long, conflicts_with_all = ["all", "definition"])]
    hash: bool,
    /// Print the complete definition in `ros2msg` form instead (the type, then each type
    /// it uses after a line of 80 '=' and `MSG: pkg/msg/Type`: what MCAP files carry).
    #[arg(long, conflicts_with = "all")]
    definition: bool,
    #[command(flatten)]
    packages: PackageDirs,
}

pub(super) fn run(a: Show, out: &Output) -> anyhow::Result<ExitCode> {
    let catalog = Catalog::load(&a.packages)?;
    let name = catalog.find(&a.type_name)?;
    let full = name.to_string();
    let text = match catalog.file_text(&name)? {
        Some(t) if catalog.set.contains(&name) => t,
        _ => catalog
            .resolved
            .msg_text(&name)
            .ok_or_else(|| anyhow::anyhow!("{full} has no text"))?,
    };
    let definition = catalog.resolved.ros2msg_definition(&full);
    let hash = type_hash(&catalog, &full)?;
    let shown = if a.hash {
        hash.clone()
    } else if a.definition {
        definition.clone().ok_or_else(|| {
            anyhow::anyhow!(
                "{full} is not a message type: a complete definition is a message's \
                 (e.g. {full}_Request)"
            )
        })?
    } else if a.all {
        expand(&catalog, &name, &text)?
    } else {
        text
    };
    if out.is_json() {
        out.json_line(&json!({
            "type": full,
            "text": if a.hash || a.definition { None } else { Some(&shown) },
            "hash": hash,
            "definition": definition,
        }));
    } else {
        print!("{shown}");
        if !shown.ends_with('\n') {
            println!();
        }
    }
    Ok(ExitCode::SUCCESS)
}
