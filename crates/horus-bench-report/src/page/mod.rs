//! `docs/benchmarks.md` and its PNG figures, rendered from the JSON of one benchmark
//! run (the `report` binary is its command line). It measures nothing itself;
//! `make bench` runs the suite first.
//!
//! The page is `template/benchmarks.md.in` (compiled in) with every `{{key}}`
//! replaced by what one section renderer wrote for it (one file per group of
//! benchmarks); an unknown key or a missing result file is an error (unless
//! `allow_missing`, which the smoke test uses), so the page can never silently lose
//! a section.

mod block_wake;
mod figures;
mod hosts_and_ros;
mod logging;
mod many_to_many;
mod other_machines;
mod python;
mod results;
mod ros2_bridge;
mod ros_messages_py;
mod scheduler;
mod services;
mod suite;
mod tf;
mod transport;

use std::collections::BTreeMap;
use std::path::PathBuf;

use anyhow::{bail, Context};

use results::Results;

const TEMPLATE: &str = include_str!("../../template/benchmarks.md.in");

/// What the template's keys are replaced with.
type Keys = BTreeMap<&'static str, String>;

/// Where the run's JSON is and where the page and figures go.
#[derive(Debug, Clone)]
pub struct Options {
    /// Where the suite wrote its JSON.
    pub results: PathBuf,
    /// The page to write.
    pub out: PathBuf,
    /// Where the PNGs go (the page links `img/<name>.png`).
    pub img: PathBuf,
    /// Render a placeholder for a missing result file instead of failing.
    pub allow_missing: bool,
    /// Other machines' kept results (`docs/bench-machines`, one folder per machine),
    /// shown beside this run's ratios; `None` or a missing folder: none shown.
    pub machines: Option<PathBuf>,
}

/// Writes the page and every figure that has data; returns the files written,
/// the page first.
pub fn write(a: &Options) -> anyhow::Result<Vec<PathBuf>> {
    let r = Results::load(&a.results)?;
    if !r.missing.is_empty() && !a.allow_missing {
        bail!(
            "missing result files: {} (run `make bench`)",
            r.missing.join(", ")
        );
    }
    std::fs::create_dir_all(&a.img).with_context(|| format!("creating {}", a.img.display()))?;
    let mut keys = Keys::new();

    keys.insert(
        "machine",
        match r.machine() {
            Some(m) => format!(
                "**Machine:** {} — {} logical CPUs ({} usable by the benchmarks) — {}",
                m.cpu_model, m.cores, m.usable_cpus, m.kernel
            ),
            None => "**Machine:** unknown (no result file)".to_owned(),
        },
    );
    let clock = r
        .peers
        .iter()
        .flat_map(|d| d.method.iter())
        .find_map(|l| l.strip_prefix("timer: "))
        .unwrap_or("rdtsc, calibrated per process")
        .to_owned();
    keys.insert("clock", clock);
    transport::peers(&r, &mut keys);
    transport::interleaved_rounds(&r, &mut keys);
    many_to_many::many_to_many(&r, &mut keys);
    suite::suite_tables(&r, &mut keys);
    transport::pingpong(&r, &mut keys)?;
    scheduler::scheduler(&r, &mut keys);
    python::python_latency(&r, &mut keys);
    services::services(&r.rpc, &mut keys);
    logging::logging(&r.logging, &mut keys);
    block_wake::block_wake(&r.block_wake, &mut keys);
    tf::tf(&r.tf, &mut keys);
    hosts_and_ros::multi_host(&r, &mut keys);
    hosts_and_ros::ros_messages(&r, &mut keys);
    ros_messages_py::ros_messages_py(&r, &mut keys);
    ros2_bridge::ros2_bridge(&r.ros2, &mut keys);
    other_machines::other_machines(a.machines.as_deref(), &r, &mut keys)?;
    let errors = r.errors();
    keys.insert(
        "errors",
        if errors.is_empty() {
            "None.\n".to_owned()
        } else {
            bullets(&errors)
        },
    );

    let page = fill(TEMPLATE, &keys)?;
    if let Some(dir) = a.out.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)?;
    }
    std::fs::write(&a.out, page).with_context(|| format!("writing {}", a.out.display()))?;
    let mut written = vec![a.out.clone()];
    written.extend(figures::figures(&r, &a.img)?);
    Ok(written)
}

fn bullets(lines: &[String]) -> String {
    lines.iter().map(|l| format!("- {l}\n")).collect()
}

fn missing(what: &str) -> String {
    format!("*Not measured in this run ({what}.json missing).*\n")
}

/// Renders `f(doc)` or the missing-file placeholder.
fn section<D>(d: &Option<D>, name: &str, f: impl FnOnce(&D) -> String) -> String {
    d.as_ref().map_or_else(|| missing(name), f)
}

/// Replaces every `{{key}}` in `template`; an unknown key is an error.
fn fill(template: &str, keys: &BTreeMap<&str, String>) -> anyhow::Result<String> {
    let mut out = String::with_capacity(template.len() * 2);
    let mut rest = template;
    while let Some(start) = rest.find("{{") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let end = after.find("}}").context("unclosed {{ in the template")?;
        let key = after[..end].trim();
        let value = keys
            .get(key)
            .with_context(|| format!("the template names an unknown key {{{{{key}}}}}"))?;
        out.push_str(value.trim_end_matches('\n'));
        rest = &after[end + 2..];
    }
    out.push_str(rest);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fill_replaces_and_rejects_unknown_keys() {
        let mut keys = BTreeMap::new();
        keys.insert("a", "x\n".to_owned());
        assert_eq!(fill("1 {{a}} 2 {{ a }}", &keys).unwrap(), "1 x 2 x");
        assert!(fill("{{b}}", &keys).is_err());
        assert!(fill("{{a", &keys).is_err());
    }

    #[test]
    fn every_template_key_is_known() {
        // Render with nothing measured: every key must still resolve.
        let dir = std::env::temp_dir().join(format!("horus-report-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let a = Options {
            results: dir.join("none"),
            out: dir.join("out.md"),
            img: dir.join("img"),
            allow_missing: true,
            machines: None,
        };
        write(&a).unwrap();
        let page = std::fs::read_to_string(&a.out).unwrap();
        assert!(!page.contains("{{"));
        assert!(page.contains("Not measured in this run"));
        // ros_messages_py.json comes after the smoke render in `make test`.
        assert!(page.contains("*Not measured in this run (ros_messages_py.json missing).*"));
        assert!(page.contains("No other machine's results are kept"));
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn the_kept_results_of_other_machines_render() {
        // The folders committed under docs/bench-machines must parse and render.
        let kept =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/bench-machines");
        let dir = std::env::temp_dir().join(format!("horus-report-m-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let a = Options {
            results: dir.join("none"),
            out: dir.join("out.md"),
            img: dir.join("img"),
            allow_missing: true,
            machines: Some(kept.clone()),
        };
        write(&a).unwrap();
        let page = std::fs::read_to_string(&a.out).unwrap();
        let _ = std::fs::remove_dir_all(&dir);
        for folder in std::fs::read_dir(&kept).unwrap() {
            let name = folder.unwrap().file_name().into_string().unwrap();
            assert!(
                page.contains(&format!("### {name}")),
                "{name} not on the page"
            );
        }
        assert!(page.contains("ratio there (median"));
    }
}
