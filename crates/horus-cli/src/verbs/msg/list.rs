//! `horus msg list [PKG]`: every interface of the standard and given packages.

use std::process::ExitCode;

use clap::Args;
use serde_json::json;

use super::{Catalog, PackageDirs};
use crate::output::Output;

/// List interfaces (`pkg/msg/Type`, `pkg/srv/Type`, `pkg/action/Type`), sorted.
#[derive(Debug, Args)]
pub(crate) struct List {
    /// Only this package's interfaces.
    package: Option<String>,
    #[command(flatten)]
    packages: PackageDirs,
}

pub(super) fn run(a: List, out: &Output) -> anyhow::Result<ExitCode> {
    let catalog = Catalog::load(&a.packages)?;
    let names: Vec<String> = catalog
        .interfaces()
        .filter(|n| a.package.as_ref().is_none_or(|p| n.package == *p))
        .map(ToString::to_string)
        .collect();
    if let Some(p) = &a.package {
        anyhow::ensure!(
            !names.is_empty(),
            "no package '{p}' (standard packages: {}; add yours with --package-dir NAME=DIR)",
            horus_idl::STANDARD_PACKAGES.join(", ")
        );
    }
    if out.is_json() {
        out.json_line(&json!({ "types": names }));
    } else {
        for n in &names {
            println!("{n}");
        }
    }
    Ok(ExitCode::SUCCESS)
}
