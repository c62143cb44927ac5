//! The interfaces `horus msg` works on: the compiled-in standard packages plus the
//! packages given with `--package-dir NAME=DIR`, resolved together, and the text of
//! each interface's file.

use std::io::Read;
use std::path::PathBuf;

use anyhow::Context;
use clap::Args;
use horus_idl::limits::MAX_FILE_BYTES;
use horus_idl::{standard_file, InterfaceKind, InterfaceSet, Resolved, TypeName};

/// `--package-dir NAME=DIR`, repeatable.
#[derive(Debug, Clone, Args)]
pub(crate) struct PackageDirs {
    /// A package of your own: its name and its directory (holding `msg/`, `srv/`,
    /// `action/`); repeatable. Its types may use the standard packages' types.
    #[arg(long = "package-dir", value_name = "NAME=DIR", value_parser = parse_package_dir)]
    pub(crate) dirs: Vec<(String, PathBuf)>,
}

fn parse_package_dir(text: &str) -> Result<(String, PathBuf), String> {
    let (name, dir) = text
        .split_once('=')
        .ok_or_else(|| format!("'{text}' is not NAME=DIR"))?;
    if !horus_idl::is_valid_package_name(name) {
        return Err(format!(
            "'{name}' is not a valid package name ([a-z][a-z0-9_]*, no '__', not ending with '_')"
        ));
    }
    if dir.is_empty() {
        return Err(format!("'{text}': the directory is empty"));
    }
    Ok((name.to_owned(), PathBuf::from(dir)))
}

/// The interfaces: parsed, resolved, and where each file's text is.
pub(crate) struct Catalog {
    pub(crate) set: InterfaceSet,
    pub(crate) resolved: Resolved,
    user: Vec<(String, PathBuf)>,
}

impl Catalog {
    /// The standard packages plus `dirs`, resolved together.
    pub(crate) fn load(dirs: &PackageDirs) -> anyhow::Result<Self> {
        let mut set = InterfaceSet::standard_embedded()
            .context("the compiled-in standard interfaces do not parse")?;
        for (name, dir) in &dirs.dirs {
            set.add_package_dir(name, dir)
                .with_context(|| format!("package {name} ({})", dir.display()))?;
        }
        let resolved = set.resolve()?;
        Ok(Self {
            set,
            resolved,
            user: dirs.dirs.clone(),
        })
    }

    /// The interface (file) or structure a name given on the command line means:
    /// `pkg/msg/Type`, `pkg/srv/Foo`, `pkg/srv/Foo_Request`, …, or `pkg/Type` (a message,
    /// else a service, else an action of that name).
    pub(crate) fn find(&self, text: &str) -> anyhow::Result<TypeName> {
        let unknown = || {
            anyhow::anyhow!(
                "unknown type '{text}' (`horus msg list` shows the known types; \
                 add your packages with --package-dir NAME=DIR)"
            )
        };
        let name = TypeName::parse_lenient(text).ok_or_else(unknown)?;
        let short_form = text.split('/').count() == 2;
        let kinds: &[InterfaceKind] = if short_form {
            &[
                InterfaceKind::Message,
                InterfaceKind::Service,
                InterfaceKind::Action,
            ]
        } else {
            &[name.namespace]
        };
        kinds
            .iter()
            .map(|k| TypeName::new(&name.package, *k, &name.name))
            .find(|n| self.set.contains(n) || self.resolved.get_struct(n).is_some())
            .ok_or_else(unknown)
    }

    /// The text of the file defining `name` (an interface, not an implied structure).
    pub(crate) fn file_text(&self, name: &TypeName) -> anyhow::Result<Option<String>> {
        if let Some((_, dir)) = self.user.iter().find(|(p, _)| *p == name.package) {
            let ns = name.namespace.namespace();
            let path = dir.join(ns).join(format!("{}.{ns}", name.name));
            let mut text = String::new();
            std::fs::File::open(&path)
                .and_then(|f| f.take(MAX_FILE_BYTES as u64 + 1).read_to_string(&mut text))
                .with_context(|| path.display().to_string())?;
            return Ok(Some(text));
        }
        Ok(standard_file(name).map(|f| f.text.to_owned()))
    }

    /// Every interface (file) name, sorted.
    pub(crate) fn interfaces(&self) -> impl Iterator<Item = &TypeName> {
        self.set.interfaces().map(|(n, _)| n)
    }
}
