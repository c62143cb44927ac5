//! The order the frame tree is shown in, by `horus tf frames` and the monitor's tf view:
//! each root, then its children depth first (indented under their parents); frames on a
//! loop (no root above them) last.

use std::collections::{BTreeMap, BTreeSet};

use horus_tf::SeenFrame;

/// One line of the tree.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum TreeLine<'a> {
    /// A frame that is only a parent (`map`): no transform of its own.
    Root(&'a str),
    /// A frame `depth` levels under its root (1 for a root's child).
    Frame {
        /// The frame.
        frame: &'a SeenFrame,
        /// Levels under its root.
        depth: usize,
    },
    /// A frame with no root above it: its parents form a loop.
    Loop(&'a SeenFrame),
}

/// The survey's frames in tree order; each frame is on exactly one line.
pub fn tree_lines<'a>(frames: &'a [SeenFrame], roots: &'a [String]) -> Vec<TreeLine<'a>> {
    let mut children: BTreeMap<&str, Vec<&SeenFrame>> = BTreeMap::new();
    for f in frames {
        children.entry(f.parent.as_str()).or_default().push(f);
    }
    let mut lines = Vec::with_capacity(frames.len() + roots.len());
    let mut shown = BTreeSet::new();
    for root in roots {
        lines.push(TreeLine::Root(root));
        add_children(&mut lines, &children, root, 1, &mut shown);
    }
    lines.extend(
        frames
            .iter()
            .filter(|f| !shown.contains(f.frame.as_str()))
            .map(TreeLine::Loop),
    );
    lines
}

fn add_children<'a>(
    lines: &mut Vec<TreeLine<'a>>,
    children: &BTreeMap<&str, Vec<&'a SeenFrame>>,
    parent: &str,
    depth: usize,
    shown: &mut BTreeSet<&'a str>,
) {
    for f in children.get(parent).into_iter().flatten() {
        // Each frame is shown once: a loop in what was broadcast cannot recurse forever.
        if !shown.insert(f.frame.as_str()) {
            continue;
        }
        lines.push(TreeLine::Frame { frame: f, depth });
        add_children(lines, children, &f.frame, depth + 1, shown);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn frame(name: &str, parent: &str) -> SeenFrame {
        SeenFrame {
            frame: name.into(),
            parent: parent.into(),
            is_static: false,
            transforms: 1,
            rate_hz: None,
            last_stamp_ns: 0,
            since_received: Duration::ZERO,
            publisher_pid: None,
            publisher_name: None,
        }
    }

    fn names(lines: &[TreeLine<'_>]) -> Vec<String> {
        lines
            .iter()
            .map(|l| match l {
                TreeLine::Root(r) => r.to_string(),
                TreeLine::Frame { frame, depth } => {
                    format!("{}{}", " ".repeat(*depth), frame.frame)
                }
                TreeLine::Loop(f) => format!("loop {}", f.frame),
            })
            .collect()
    }

    #[test]
    fn children_follow_their_parents_and_a_loop_is_listed_once_at_the_end() {
        let frames = [
            frame("a", "b"),
            frame("b", "a"),
            frame("base_link", "odom"),
            frame("laser", "base_link"),
            frame("odom", "map"),
        ];
        let roots = ["map".to_owned()];
        assert_eq!(
            names(&tree_lines(&frames, &roots)),
            [
                "map",
                " odom",
                "  base_link",
                "   laser",
                "loop a",
                "loop b"
            ]
        );
    }
}
