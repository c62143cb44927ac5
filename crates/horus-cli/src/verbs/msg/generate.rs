//! `horus msg gen`: Rust types for your own ROS 2 packages (owned structs, zero-copy
//! views, CDR codecs; see horus-idl-gen), written to one file to `include!` — the same
//! code a build script with `horus_idl_gen::Builder` generates.

use std::collections::BTreeSet;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;
use clap::Args;
use horus_idl::{ResolvedBase, TypeName};
use horus_idl_gen::{generate_rust, GenOptions};
use serde_json::json;

use super::{Catalog, PackageDirs};
use crate::output::Output;

/// Generate Rust for the packages given with `--package-dir`.
#[derive(Debug, Args)]
pub(crate) struct Gen {
    /// The file to write (`-`: standard output).
    #[arg(long, value_name = "FILE")]
    out: PathBuf,
    /// Take the standard packages' types from this crate (e.g. `horus_ros_msgs`) instead
    /// of generating the ones your packages use into the file.
    #[arg(long, value_name = "CRATE")]
    extern_standard: Option<String>,
    /// The path of the run-time crate in the generated code (default `::horus_cdr`).
    #[arg(long, value_name = "PATH")]
    runtime_crate: Option<String>,
    #[command(flatten)]
    packages: PackageDirs,
}

pub(super) fn run(a: Gen, out: &Output) -> anyhow::Result<ExitCode> {
    anyhow::ensure!(
        !a.packages.dirs.is_empty(),
        "no package to generate: give one or more --package-dir NAME=DIR"
    );
    let catalog = Catalog::load(&a.packages)?;
    let own: Vec<&str> = a.packages.dirs.iter().map(|(n, _)| n.as_str()).collect();
    let mut options = GenOptions::default();
    if let Some(c) = &a.runtime_crate {
        options.runtime_crate = c.clone();
    }
    let mut packages: Vec<String> = own.iter().map(|p| p.to_string()).collect();
    match &a.extern_standard {
        Some(path) => options = options.with_standard_packages_from(path),
        None => packages.extend(used_packages(&catalog, &own)),
    }
    let names: Vec<&str> = packages.iter().map(String::as_str).collect();
    let code = generate_rust(&catalog.resolved, &names, &options)?;
    if a.out == Path::new("-") {
        std::io::stdout().write_all(code.as_bytes())?;
        return Ok(ExitCode::SUCCESS);
    }
    write_replacing(&a.out, &code)?;
    if out.is_json() {
        out.json_line(&json!({
            "out": a.out.display().to_string(),
            "bytes": code.len(),
            "packages": packages,
        }));
    } else {
        println!(
            "{}: {} bytes, packages {}",
            a.out.display(),
            code.len(),
            packages.join(", ")
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// The other packages whose types the structures of `own` use, transitively.
fn used_packages(catalog: &Catalog, own: &[&str]) -> BTreeSet<String> {
    let mut seen: BTreeSet<TypeName> = BTreeSet::new();
    let mut queue: Vec<TypeName> = catalog
        .resolved
        .structs()
        .filter(|s| own.contains(&s.name.package.as_str()))
        .map(|s| s.name.clone())
        .collect();
    while let Some(name) = queue.pop() {
        if !seen.insert(name.clone()) {
            continue;
        }
        let Some(def) = catalog.resolved.get_struct(&name) else {
            continue;
        };
        for m in &def.members {
            if let ResolvedBase::Nested(n) = &m.member_type.base {
                queue.push(n.clone());
            }
        }
    }
    seen.into_iter()
        .map(|n| n.package)
        .filter(|p| !own.contains(&p.as_str()))
        .collect()
}

/// Writes `text` to `path` through a file beside it, renamed over it: a reader never
/// sees half a file.
fn write_replacing(path: &Path, text: &str) -> anyhow::Result<()> {
    let name = path
        .file_name()
        .ok_or_else(|| anyhow::anyhow!("{}: not a file name", path.display()))?;
    let tmp = path.with_file_name(format!(".{}.tmp", name.to_string_lossy()));
    std::fs::write(&tmp, text).with_context(|| tmp.display().to_string())?;
    std::fs::rename(&tmp, path).with_context(|| path.display().to_string())?;
    Ok(())
}
