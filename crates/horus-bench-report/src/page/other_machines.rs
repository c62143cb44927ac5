//! `machines`: the `interleaved` and `robotics_messages` results of other machines,
//! kept in `docs/bench-machines/<name>/` (one folder per machine and run, committed
//! with the page), beside this run's ratios.
//!
//! A folder holds `about.md` (what the machine is, when and from which commit it ran,
//! the command, the CPUs pinned: written by whoever ran it), `interleaved.json` and
//! `robotics_messages.json` (the binaries' own `--json`). This page is regenerated on
//! this VM; those figures are not: they are read back as measured there.

use std::path::Path;

use anyhow::Context;

use horus_bench::interleaved::{self, Comparison, RoundRow};
use horus_bench::markdown::Table;
use horus_bench::report::{ns, size};
use horus_bench::rows::RoboticsRow;
use horus_bench::suite::Doc;
use horus_bench::tables;

use super::results::Results;
use super::{bullets, Keys};

/// `machines`: one subsection per folder of `dir`, in name order.
pub(super) fn other_machines(
    dir: Option<&Path>,
    r: &Results,
    keys: &mut Keys,
) -> anyhow::Result<()> {
    let here = r
        .interleaved
        .as_ref()
        .map(|d| interleaved::compare(&d.rows));
    let mut out = String::new();
    let mut folders: Vec<_> = match dir.map(std::fs::read_dir) {
        Some(Ok(entries)) => entries
            .filter_map(Result::ok)
            .map(|e| e.path())
            .filter(|p| p.is_dir())
            .collect(),
        Some(Err(e)) if e.kind() != std::io::ErrorKind::NotFound => {
            return Err(e)
                .with_context(|| format!("reading {}", dir.unwrap_or(Path::new("")).display()));
        }
        _ => Vec::new(),
    };
    folders.sort();
    for folder in &folders {
        out.push_str(&machine(folder, here.as_deref())?);
    }
    if out.is_empty() {
        out = "*No other machine's results are kept (`docs/bench-machines/` has no folder).*\n"
            .to_owned();
    }
    keys.insert("machines", out);
    Ok(())
}

fn read<T: serde::de::DeserializeOwned>(path: &Path) -> anyhow::Result<T> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    serde_json::from_str(&text).with_context(|| format!("parsing {}", path.display()))
}

/// One machine's subsection.
fn machine(folder: &Path, here: Option<&[Comparison]>) -> anyhow::Result<String> {
    let name = folder
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let about_path = folder.join("about.md");
    let about = std::fs::read_to_string(&about_path)
        .with_context(|| format!("reading {}", about_path.display()))?;
    let il: Doc<RoundRow> = read(&folder.join("interleaved.json"))?;
    let robotics: Doc<RoboticsRow> = read(&folder.join("robotics_messages.json"))?;
    let there = interleaved::compare(&il.rows);
    let m = &il.machine;
    let mut s = format!(
        "### {name}\n\n{}\n\n**Machine (as the binaries saw it):** {} — {} logical CPUs ({} usable) — {}\n\n",
        about.trim_end(),
        m.cpu_model,
        m.cores,
        m.usable_cpus,
        m.kernel
    );
    s.push_str("#### `interleaved` there, beside this page's ratios\n\n");
    s.push_str(&beside(&there, here).to_markdown());
    s.push('\n');
    let claims = interleaved::claims(&there);
    if !claims.is_empty() {
        s.push_str(&bullets(&claims));
        s.push('\n');
    }
    s.push_str("#### `robotics_messages` there\n\n");
    s.push_str(&tables::robotics(&robotics.rows).to_markdown());
    s.push('\n');
    if !il.errors.is_empty() || !robotics.errors.is_empty() {
        s.push_str("Measurements that failed there:\n\n");
        s.push_str(&bullets(
            &[il.errors.clone(), robotics.errors.clone()].concat(),
        ));
        s.push('\n');
    }
    Ok(s)
}

/// The other machine's comparisons with absolute round trips, and this run's ratio for
/// the same pair and size where this run measured it.
fn beside(there: &[Comparison], here: Option<&[Comparison]>) -> Table {
    let mut header = vec![
        "size",
        "horus",
        "peer",
        "rounds",
        "horus RTT there",
        "peer RTT there",
        "ratio there (median, min–max)",
        "horus faster there",
    ];
    if here.is_some() {
        header.push("ratio on this page's VM (median, min–max)");
    }
    let mut t = Table::new(header).left(1).left(2);
    for c in there {
        let mut row = vec![
            size(c.size),
            c.pair.horus_label.to_owned(),
            c.pair.peer_label.to_owned(),
            c.ratios.len().to_string(),
            ns(c.horus_median_ns.round() as u64),
            ns(c.peer_median_ns.round() as u64),
            format!("{:.3} ({:.3}–{:.3})", c.median, c.min, c.max),
            format!("{} of {}", c.horus_faster, c.ratios.len()),
        ];
        if let Some(here) = here {
            let mine = here
                .iter()
                .find(|m| m.size == c.size && m.pair.peer == c.pair.peer);
            row.push(mine.map_or_else(
                || "not measured".to_owned(),
                |m| format!("{:.3} ({:.3}–{:.3})", m.median, m.min, m.max),
            ));
        }
        t.row(row);
    }
    t.note(if here.is_some() {
        "Ratio = horus's median round trip ÷ the peer's in the same round at the same size, \
         below 1 horus was faster; the RTT columns are the other machine's absolute figures \
         (median over rounds of each round's median). The last column is this page's own \
         `interleaved` run on the VM described at the top, for the same pair and size."
    } else {
        "Ratio = horus's median round trip ÷ the peer's in the same round at the same size, \
         below 1 horus was faster; the RTT columns are the other machine's absolute figures \
         (median over rounds of each round's median). This page was rendered without an \
         `interleaved` run of its own, so no ratio of this VM stands beside them."
    });
    t
}
