//! `horus msg hash TYPE`: a type's RIHS01 hash.

use std::process::ExitCode;

use clap::Args;
use serde_json::json;

use super::{Catalog, PackageDirs};
use crate::output::Output;

/// Print a type's RIHS01 hash (what ROS 2 matches types by).
#[derive(Debug, Args)]
pub(crate) struct Hash {
    /// The type: `pkg/msg/Type`, `pkg/srv/Foo`, `pkg/srv/Foo_Request`, `pkg/action/Bar`, …
    /// or `pkg/Type`.
    type_name: String,
    #[command(flatten)]
    packages: PackageDirs,
}

pub(super) fn run(a: Hash, out: &Output) -> anyhow::Result<ExitCode> {
    let catalog = Catalog::load(&a.packages)?;
    let name = catalog.find(&a.type_name)?.to_string();
    let hash = type_hash(&catalog, &name)?;
    if out.is_json() {
        out.json_line(&json!({ "type": name, "hash": hash }));
    } else {
        println!("{hash}");
    }
    Ok(ExitCode::SUCCESS)
}

/// The RIHS01 hash of a type the catalog has.
pub(super) fn type_hash(catalog: &Catalog, name: &str) -> anyhow::Result<String> {
    catalog
        .resolved
        .type_hash(name)
        .map(|h| h.to_string())
        .ok_or_else(|| anyhow::anyhow!("{name} has no type hash"))
}
