//! The frame tree as Graphviz `dot` text (as tf2's `view_frames` draws it: one node per
//! frame, an edge from each parent to its child labelled with the broadcaster, rate and
//! newest stamp), and rendered to SVG/PNG by the `dot` program when it is installed.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

use horus_tf::SeenFrame;

use super::stamp_text;

/// A string as a `dot` quoted ID (quotes and backslashes escaped; frame names may hold
/// anything but control characters).
fn quoted(s: &str) -> String {
    format!("\"{}\"", escaped(s))
}

/// `s` with quotes and backslashes escaped, control characters as spaces.
fn escaped(s: &str) -> String {
    let mut q = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '"' | '\\' => {
                q.push('\\');
                q.push(c);
            }
            c if c.is_control() => q.push(' '),
            c => q.push(c),
        }
    }
    q
}

/// The tree as `dot` text.
pub(super) fn to_dot(frames: &[SeenFrame], roots: &[String]) -> String {
    let mut s = String::from("digraph tf {\n  rankdir=TB;\n  node [shape=ellipse];\n");
    for r in roots {
        s.push_str(&format!("  {};\n", quoted(r)));
    }
    for f in frames {
        let publisher = f
            .publisher_name
            .clone()
            .or_else(|| f.publisher_pid.map(|p| format!("pid {p}")))
            .unwrap_or_else(|| "unknown".into());
        let rate = if f.is_static {
            "static".to_owned()
        } else {
            f.rate_hz
                .map(|r| format!("{r:.1} Hz"))
                .unwrap_or_else(|| "rate unknown".into())
        };
        // `\n` inside a quoted dot label is a line break.
        s.push_str(&format!(
            "  {} -> {} [label=\"Broadcaster: {}\\nRate: {rate}\\nMost recent: {}\"];\n",
            quoted(&f.parent),
            quoted(&f.frame),
            escaped(&publisher),
            stamp_text(f.last_stamp_ns)
        ));
    }
    s.push_str("}\n");
    s
}

/// Renders `dot_text` into `path` with Graphviz (`dot -Tsvg` / `-Tpng`, chosen by the
/// file's extension).
pub(super) fn render_file(dot_text: &str, path: &Path) -> anyhow::Result<()> {
    let format = match path.extension().and_then(|e| e.to_str()) {
        Some("svg") => "svg",
        Some("png") => "png",
        Some("dot" | "gv") => {
            std::fs::write(path, dot_text)?;
            return Ok(());
        }
        _ => anyhow::bail!(
            "{}: the picture's format comes from its extension: .svg, .png or .dot",
            path.display()
        ),
    };
    let mut child = Command::new("dot")
        .arg(format!("-T{format}"))
        .arg("-o")
        .arg(path)
        .stdin(Stdio::piped())
        .spawn()
        .map_err(|e| {
            anyhow::anyhow!(
                "running Graphviz's `dot` for {}: {e} (install graphviz, or use --dot / a .dot file)",
                path.display()
            )
        })?;
    child
        .stdin
        .take()
        .ok_or_else(|| anyhow::anyhow!("dot's stdin"))?
        .write_all(dot_text.as_bytes())?;
    let status = child.wait()?;
    anyhow::ensure!(status.success(), "dot exited with {status}");
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn quotes_and_backslashes_in_frame_names_are_escaped() {
        assert_eq!(quoted(r#"a"b\c"#), r#""a\"b\\c""#);
    }

    #[test]
    fn each_frame_is_an_edge_from_its_parent() {
        let f = SeenFrame {
            frame: "base_link".into(),
            parent: "odom".into(),
            is_static: false,
            transforms: 3,
            rate_hz: Some(50.0),
            last_stamp_ns: 1_500_000_000,
            since_received: Duration::ZERO,
            publisher_pid: Some(7),
            publisher_name: Some("demo".into()),
        };
        let d = to_dot(&[f], &["odom".into()]);
        assert!(d.starts_with("digraph tf {"), "{d}");
        assert!(d.contains(r#""odom" -> "base_link""#), "{d}");
        assert!(d.contains("Rate: 50.0 Hz"), "{d}");
        assert!(d.contains(r"Broadcaster: demo\nRate"), "{d}");
    }
}
