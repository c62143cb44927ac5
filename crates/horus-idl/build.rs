//! Embeds the vendored standard interface files (`interfaces/<package>/{msg,srv,action}/*`)
//! into the library, so that an installed binary has the standard set without the source
//! tree: writes `$OUT_DIR/standard_files.rs`, a table of `include_str!`s.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

fn main() {
    // Read at run time, not `env!` at compile time: cargo may reuse this compiled script for
    // the same workspace at another path (its hash is relative to the workspace root).
    let manifest = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("set by cargo"));
    let root = manifest.join("interfaces");
    println!("cargo:rerun-if-changed={}", root.display());
    let mut files: Vec<(String, &str, String, PathBuf)> = Vec::new();
    for package in sorted_dir(&root) {
        if !package.is_dir() {
            continue;
        }
        let package_name = file_name(&package);
        for (ext, kind) in [("msg", "Message"), ("srv", "Service"), ("action", "Action")] {
            let sub = package.join(ext);
            if !sub.is_dir() {
                continue;
            }
            for path in sorted_dir(&sub) {
                if path.extension().and_then(|e| e.to_str()) != Some(ext) {
                    continue;
                }
                let stem = path
                    .file_stem()
                    .and_then(|s| s.to_str())
                    .expect("vendored file names are UTF-8")
                    .to_string();
                files.push((package_name.clone(), kind, stem, path));
            }
        }
    }
    let mut out = String::from("&[\n");
    for (package, kind, name, path) in &files {
        let path = path.to_str().expect("the source path is UTF-8");
        writeln!(
            out,
            "    StandardFile {{ package: {package:?}, kind: InterfaceKind::{kind}, \
             name: {name:?}, text: include_str!({path:?}) }},"
        )
        .expect("writing to a String");
    }
    out.push_str("]\n");
    let dest =
        Path::new(&std::env::var("OUT_DIR").expect("cargo sets OUT_DIR")).join("standard_files.rs");
    std::fs::write(dest, out).expect("writing the embedded table");
}

fn sorted_dir(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.expect("reading the interfaces directory").path())
        .collect();
    v.sort();
    v
}

fn file_name(p: &Path) -> String {
    p.file_name()
        .and_then(|s| s.to_str())
        .expect("vendored directory names are UTF-8")
        .to_string()
}
