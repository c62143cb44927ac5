//! `horus tf frames`: observes `tf` and `tf_static` for a while (an observer: the robot
//! cannot tell) and prints the frame tree — each frame's parent, rate, newest stamp, and the
//! process publishing it — as a table, JSON, or a Graphviz picture (like tf2's
//! `view_frames`).

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use clap::Args;
use horus_tf::{SeenFrame, SurveyReader};
use serde_json::json;

use super::dot;
use super::stamp_text;
use crate::output::Output;
use crate::table::Table;
use horus_monitor::frame_tree::{tree_lines, TreeLine};

/// Arguments of `horus tf frames`.
#[derive(Debug, Args)]
pub(crate) struct Frames {
    /// How long to watch the topics, seconds (rates need a few transforms of each frame).
    #[arg(long, default_value_t = 2.0)]
    window: f64,
    /// Print the tree as Graphviz `dot` text instead of a table.
    #[arg(long)]
    dot: bool,
    /// Draw the tree into this file (`.svg` or `.png`; needs Graphviz's `dot` installed).
    #[arg(long, short = 'o', value_name = "FILE")]
    output: Option<PathBuf>,
    /// Namespace (default: `HORUS_NAMESPACE`, else one per user).
    #[arg(long)]
    namespace: Option<String>,
}

pub(super) fn run(a: Frames, out: &Output) -> anyhow::Result<ExitCode> {
    let window = Duration::try_from_secs_f64(a.window)
        .map_err(|e| anyhow::anyhow!("--window {}: {e}", a.window))?;
    let ns = a.namespace.clone().unwrap_or_else(horus::namespace);
    let survey = SurveyReader::new(&ns)?.observe(window)?;
    let frames = survey.frames(Instant::now());
    let roots = survey.roots();
    if let Some(path) = &a.output {
        dot::render_file(&dot::to_dot(&frames, &roots), path)?;
        if !out.is_json() {
            println!("wrote {}", path.display());
        }
    }
    if a.dot {
        print!("{}", dot::to_dot(&frames, &roots));
        return Ok(ExitCode::SUCCESS);
    }
    if out.is_json() {
        out.json_line(&json!({
            "namespace": ns,
            "window_s": window.as_secs_f64(),
            "roots": roots,
            "frames": frames.iter().map(frame_json).collect::<Vec<_>>(),
            "frames_dropped": survey.frames_dropped(),
            "undecodable": survey.undecodable(),
        }));
    } else if a.output.is_none() {
        if frames.is_empty() {
            println!(
                "no transforms on tf or tf_static in namespace {ns} within {:.1} s",
                window.as_secs_f64()
            );
        } else {
            print_tree(&frames, &roots);
        }
        if survey.undecodable() > 0 || survey.frames_dropped() > 0 {
            eprintln!(
                "horus: {} messages were not valid TFMessages; {} transforms of frames past \
                 the survey's limit were not kept",
                survey.undecodable(),
                survey.frames_dropped()
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn frame_json(f: &SeenFrame) -> serde_json::Value {
    json!({
        "frame": f.frame,
        "parent": f.parent,
        "static": f.is_static,
        "transforms": f.transforms,
        "rate_hz": f.rate_hz,
        "last_stamp_ns": f.last_stamp_ns,
        "age_s": f.since_received.as_secs_f64(),
        "publisher_pid": f.publisher_pid,
        "publisher": f.publisher_name,
    })
}

/// The frames as a table whose first column is the tree (children indented under their
/// parents, roots first). Frames on a loop (no root above them) are listed last.
fn print_tree(frames: &[SeenFrame], roots: &[String]) {
    let mut t = Table::new(&[
        "FRAME",
        "PARENT",
        ">RATE HZ",
        "LAST STAMP",
        ">AGE S",
        "PUBLISHER",
    ]);
    for line in tree_lines(frames, roots) {
        match line {
            TreeLine::Root(root) => t.row(vec![root.to_owned(), String::new(), String::new()]),
            TreeLine::Frame { frame, depth } => {
                t.row(row(frame, format!("{}{}", "  ".repeat(depth), frame.frame)))
            }
            TreeLine::Loop(f) => t.row(row(f, format!("{} (loop)", f.frame))),
        }
    }
    t.print();
}

fn row(f: &SeenFrame, name: String) -> Vec<String> {
    vec![
        name,
        f.parent.clone(),
        if f.is_static {
            "static".into()
        } else {
            f.rate_hz.map(|r| format!("{r:.1}")).unwrap_or_default()
        },
        stamp_text(f.last_stamp_ns),
        format!("{:.2}", f.since_received.as_secs_f64()),
        match (&f.publisher_name, f.publisher_pid) {
            (Some(name), Some(pid)) => format!("{name} [{pid}]"),
            (None, Some(pid)) => format!("[{pid}]"),
            _ => String::new(),
        },
    ]
}
