//! The tf view: the frame tree of `tf` / `tf_static` (in `horus tf frames`' order), each
//! frame with its parent, static or dynamic, rate, newest stamp, age and publisher; dynamic
//! frames no longer updated marked STALE.

use ratatui::layout::{Alignment, Constraint, Layout};
use ratatui::style::{Color, Modifier, Style, Stylize};
use ratatui::text::Line;
use ratatui::widgets::{Block, Borders, Cell, Paragraph, Row, Table};
use ratatui::Frame;

use crate::frame_tree::{tree_lines, TreeLine};
use crate::model::Snapshot;
use crate::text::stamp_text;
use crate::tf::{is_stale, STALE_AFTER, STALE_PERIODS};
use horus_tf::SeenFrame;

/// Draws the tf view.
pub(crate) fn draw(f: &mut Frame<'_>, s: &Snapshot) {
    let tf = &s.tf;
    let [table_area, note, keys] = Layout::vertical([
        Constraint::Min(3),
        Constraint::Length(1),
        Constraint::Length(1),
    ])
    .areas(f.area());
    let lines = tree_lines(&tf.frames, &tf.roots);
    let name_w = lines
        .iter()
        .map(|l| name(l).chars().count())
        .max()
        .unwrap_or(5)
        .max(5);
    let parent_w = tf
        .frames
        .iter()
        .map(|f| f.parent.chars().count())
        .max()
        .unwrap_or(6)
        .max(6);
    let mut rows: Vec<Row<'_>> = lines.iter().map(|l| row(l, name(l))).collect();
    if rows.is_empty() {
        rows.push(Row::new(vec![Cell::from(format!(
            "no transforms on tf or tf_static in namespace {} yet",
            s.namespace
        ))
        .italic()]));
    }
    let widths = [
        Constraint::Length(name_w as u16),
        Constraint::Length(parent_w as u16),
        Constraint::Length(7),
        Constraint::Length(8),
        Constraint::Length(20),
        Constraint::Length(8),
        Constraint::Length(6),
        Constraint::Min(10),
    ];
    let header = Row::new(vec![
        Cell::from("frame"),
        Cell::from("parent"),
        Cell::from("kind"),
        num("Hz".to_owned()),
        Cell::from("last stamp"),
        num("age s".to_owned()),
        Cell::from("state"),
        Cell::from("publisher"),
    ])
    .bold();
    let mut title = format!(" tf frames ({}, {} stale) ", tf.frames.len(), tf.stale());
    if let Some(e) = &tf.error {
        title = format!(" tf frames: {e} ");
    }
    f.render_widget(
        Table::new(rows, widths)
            .header(header)
            .block(Block::new().borders(Borders::ALL).title(title)),
        table_area,
    );
    let mut text = format!(
        " stale: a dynamic frame not updated for {STALE_PERIODS:.0} periods and at least {} s",
        STALE_AFTER.as_secs()
    );
    if tf.missed + tf.undecodable + tf.frames_dropped > 0 {
        text.push_str(&format!(
            " · {} messages missed, {} not TFMessages, {} transforms past the frame limit",
            tf.missed, tf.undecodable, tf.frames_dropped
        ));
    }
    f.render_widget(Paragraph::new(text).italic(), note);
    f.render_widget(
        Paragraph::new(" t/esc: back to the tables   q: quit")
            .style(Style::new().add_modifier(Modifier::REVERSED)),
        keys,
    );
}

/// The first column: the frame indented under its parent.
fn name(l: &TreeLine<'_>) -> String {
    match l {
        TreeLine::Root(r) => (*r).to_owned(),
        TreeLine::Frame { frame, depth } => format!("{}{}", "  ".repeat(*depth), frame.frame),
        TreeLine::Loop(f) => format!("{} (loop)", f.frame),
    }
}

fn row<'a>(l: &TreeLine<'_>, name: String) -> Row<'a> {
    let f: &SeenFrame = match l {
        TreeLine::Root(_) => {
            return Row::new(vec![Cell::from(name), Cell::from(""), "root".into()])
        }
        TreeLine::Frame { frame, .. } => frame,
        TreeLine::Loop(f) => f,
    };
    let stale = is_stale(f);
    let row = Row::new(vec![
        Cell::from(name),
        Cell::from(f.parent.clone()),
        Cell::from(if f.is_static { "static" } else { "dynamic" }),
        num(f.rate_hz.map_or("-".into(), |r| format!("{r:.1}"))),
        Cell::from(stamp_text(f.last_stamp_ns)),
        num(format!("{:.2}", f.since_received.as_secs_f64())),
        Cell::from(if stale { "STALE" } else { "ok" }),
        Cell::from(match (&f.publisher_name, f.publisher_pid) {
            (Some(name), Some(pid)) => format!("{name} ({pid})"),
            (None, Some(pid)) => format!("({pid})"),
            _ => String::new(),
        }),
    ]);
    if stale {
        row.fg(Color::Red)
    } else {
        row
    }
}

/// A right-aligned cell.
fn num<'a>(s: String) -> Cell<'a> {
    Cell::from(Line::from(s).alignment(Alignment::Right))
}
