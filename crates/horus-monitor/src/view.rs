//! The main screen: a title line, the topics table, the nodes table, the latest log lines
//! and a key legend.

use ratatui::layout::{Alignment, Constraint, Layout, Rect};
use ratatui::style::{Color, Modifier, Style, Stylize};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Cell, Paragraph, Row, Table, TableState};
use ratatui::Frame;

use crate::app::{App, Focus};
use crate::format::{bandwidth, dur_us, hz, short_type, us};
use crate::model::Snapshot;
use crate::sort::{NodeCol, TopicCol};

/// Draws the tables screen.
pub(crate) fn draw(f: &mut Frame<'_>, app: &App, s: &Snapshot) {
    let topics_h = (s.topics.len() + s.unreadable.len()).max(1) as u16 + 3;
    let nodes_h = s.nodes().len().max(1) as u16 + 3;
    let [title, topics, nodes, logs, keys] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Max(topics_h),
        Constraint::Max(nodes_h),
        Constraint::Min(3),
        Constraint::Length(1),
    ])
    .areas(f.area());
    f.render_widget(title_line(s), title);
    draw_topics(f, topics, app, s);
    draw_nodes(f, nodes, app, s);
    draw_logs(f, logs, s);
    let sort = match app.focus {
        Focus::Topics => app.topic_sort.label(),
        Focus::Nodes => app.node_sort.label(),
    };
    f.render_widget(
        Paragraph::new(format!(
            " tab: other table   ↑/↓: select   enter: details   s: sort (by {sort})   t: tf frames   q/esc: quit"
        ))
        .style(Style::new().add_modifier(Modifier::REVERSED)),
        keys,
    );
}

fn title_line(s: &Snapshot) -> Paragraph<'static> {
    Paragraph::new(Line::from(vec![
        Span::from(" horus monitor ").bold(),
        Span::from(format!(
            " namespace {} · {} topics · {} nodes · over {:.1} s · times in µs · latency = stamp → subscribers' receive (~: stamp → monitor's {} ms poll, where no subscriber measures)",
            s.namespace,
            s.topics.len(),
            s.nodes().len(),
            s.window_s,
            crate::sampler::POLL.as_millis()
        )),
    ]))
}

/// The block of a table, its title marked when it has the focus.
fn block(title: String, focused: bool) -> Block<'static> {
    let b = Block::new().borders(Borders::ALL).title(title);
    if focused {
        b.border_style(Style::new().fg(Color::Cyan))
    } else {
        b
    }
}

/// Header cells, the sorted column(s) marked with ▲ (names) or ▼ (figures); a label
/// starting with `>` is a right-aligned (numeric) column.
fn header<'a>(cols: &[(&'a str, bool)]) -> Row<'a> {
    Row::new(cols.iter().map(|(label, sorted)| {
        let (text, right) = match label.strip_prefix('>') {
            Some(l) => (l, true),
            None => (*label, false),
        };
        let text = if *sorted {
            // Names sort ascending, figures descending (the largest first).
            format!("{text}{}", if right { '▼' } else { '▲' })
        } else {
            text.to_owned()
        };
        let cell = if right { num(text) } else { Cell::from(text) };
        if *sorted {
            cell.add_modifier(Modifier::UNDERLINED)
        } else {
            cell
        }
    }))
    .bold()
}

/// A right-aligned cell.
fn num<'a>(s: String) -> Cell<'a> {
    Cell::from(Line::from(s).alignment(Alignment::Right))
}

/// A topic's p50 or p99 as the list shows it: `~` before the monitor's own figure.
fn shown_us(t: &crate::model::TopicRow, p99: bool) -> String {
    match t.shown_latency() {
        Some((p50, p99_us, monitors)) => {
            let v = us(Some(if p99 { p99_us } else { p50 }));
            if monitors {
                format!("~{v}")
            } else {
                v
            }
        }
        None => "-".into(),
    }
}

fn draw_topics(f: &mut Frame<'_>, area: Rect, app: &App, s: &Snapshot) {
    let by = app.topic_sort;
    let cols = [
        ("topic", by == TopicCol::Name),
        ("type", by == TopicCol::Type),
        (">Hz", by == TopicCol::Rate),
        (">bandwidth", by == TopicCol::Bandwidth),
        (">lat p50", by == TopicCol::LatencyP50),
        (">lat p99", by == TopicCol::LatencyP99),
        (">pub/sub", by == TopicCol::Endpoints),
        (">overrun", by == TopicCol::Losses),
        (">rejected", by == TopicCol::Losses),
        (">timeout", by == TopicCol::Losses),
        (">undeliv", by == TopicCol::Losses),
        (">malformed", by == TopicCol::Losses),
    ];
    let topics = app.topics(s);
    let name_w = topics
        .iter()
        .map(|t| t.name.chars().count())
        .max()
        .unwrap_or(5)
        .max(5);
    let type_w = topics
        .iter()
        .map(|t| {
            short_type(t.type_name.as_deref(), &t.schema)
                .chars()
                .count()
        })
        .max()
        .unwrap_or(4)
        .max(4);
    let loss = |n: u64| {
        let c = num(n.to_string());
        if n > 0 {
            c.fg(Color::Red)
        } else {
            c
        }
    };
    let mut rows: Vec<Row<'_>> = topics
        .iter()
        .map(|t| {
            let l = &t.losses;
            Row::new(vec![
                Cell::from(t.name.clone()),
                Cell::from(short_type(t.type_name.as_deref(), &t.schema)),
                num(hz(t.rate_hz)),
                num(bandwidth(t.bytes_per_s)),
                num(shown_us(t, false)),
                num(shown_us(t, true)),
                num(format!("{}/{}", t.publishers.len(), t.subscriber_count())),
                loss(l.overrun),
                loss(l.rejected),
                loss(l.timed_out),
                loss(l.undelivered),
                loss(l.malformed),
            ])
        })
        .collect();
    rows.extend(s.unreadable.iter().map(|(n, e)| {
        Row::new(vec![
            Cell::from(n.clone()),
            Cell::from(format!("unreadable: {e}")),
        ])
        .fg(Color::Red)
    }));
    // Figures fit their widths (a right-aligned cell too narrow would lose its left end).
    let widths = [
        Constraint::Length(name_w as u16),
        Constraint::Length(type_w as u16),
        Constraint::Length(7),
        Constraint::Length(12),
        Constraint::Length(7),
        Constraint::Length(7),
        Constraint::Length(7),
        Constraint::Length(7),
        Constraint::Length(8),
        Constraint::Length(7),
        Constraint::Length(7),
        Constraint::Length(10),
    ];
    let focused = app.focus == Focus::Topics;
    let table = Table::new(rows, widths)
        .header(header(&cols))
        .block(block(format!(" Topics ({}) ", topics.len()), focused))
        .row_highlight_style(if focused {
            Style::new().add_modifier(Modifier::REVERSED)
        } else {
            Style::new()
        });
    let mut state = TableState::default().with_selected(app.topic_index(s));
    f.render_stateful_widget(table, area, &mut state);
}

fn draw_nodes(f: &mut Frame<'_>, area: Rect, app: &App, s: &Snapshot) {
    let by = app.node_sort;
    let cols = [
        ("node", by == NodeCol::Name),
        ("process", by == NodeCol::Process),
        ("state", by == NodeCol::State),
        (">target", false),
        (">Hz", by == NodeCol::Rate),
        (">jit p50", by == NodeCol::JitterP50),
        (">jit p99", by == NodeCol::JitterP99),
        (">exec p99", by == NodeCol::ExecP99),
        (">misses 1s/all", by == NodeCol::Misses),
        (">restarts", by == NodeCol::Restarts),
    ];
    let nodes = app.nodes(s);
    let name_w = nodes
        .iter()
        .map(|n| n.node.name.chars().count())
        .max()
        .unwrap_or(4)
        .max(4);
    let proc_w = nodes
        .iter()
        .map(|n| process(n).chars().count())
        .max()
        .unwrap_or(7)
        .max(7);
    let rows: Vec<Row<'_>> = nodes
        .iter()
        .map(|n| {
            let st = &n.node;
            let state = if n.table.alive {
                crate::schedulers::state_text(st.state).to_owned()
            } else {
                "dead".to_owned()
            };
            let row = Row::new(vec![
                Cell::from(st.name.clone()),
                Cell::from(process(n)),
                Cell::from(state),
                num(st.target_hz.map_or("-".into(), |h| format!("{h:.0}"))),
                num(hz(n.rate_hz())),
                num(dur_us(st.jitter.p50)),
                num(dur_us(st.jitter.p99)),
                num(dur_us(st.exec.p99)),
                num(format!(
                    "{}/{}",
                    st.window_deadline_misses, st.deadline_misses
                )),
                num(st.restarts.to_string()),
            ]);
            if n.alive() {
                row
            } else {
                row.fg(Color::Red)
            }
        })
        .collect();
    let widths = [
        Constraint::Length(name_w as u16),
        Constraint::Length(proc_w as u16),
        Constraint::Length(10),
        Constraint::Length(7),
        Constraint::Length(7),
        Constraint::Length(8),
        Constraint::Length(8),
        Constraint::Length(9),
        Constraint::Length(14),
        Constraint::Length(9),
    ];
    let focused = app.focus == Focus::Nodes;
    let mut title = format!(" Nodes ({}) ", nodes.len());
    if let Some(e) = &s.schedulers_error {
        title = format!(" Nodes: {e} ");
    }
    let table = Table::new(rows, widths)
        .header(header(&cols))
        .block(block(title, focused))
        .row_highlight_style(if focused {
            Style::new().add_modifier(Modifier::REVERSED)
        } else {
            Style::new()
        });
    let mut state = TableState::default().with_selected(app.node_index(s));
    f.render_stateful_widget(table, area, &mut state);
}

/// `scheduler (pid)`.
pub(crate) fn process(n: &crate::model::NodeRef<'_>) -> String {
    format!("{} ({})", n.table.scheduler, n.table.pid)
}

fn draw_logs(f: &mut Frame<'_>, area: Rect, s: &Snapshot) {
    let (title, lines): (String, Vec<Line<'_>>) = match &s.logs {
        Ok(l) if l.processes == 0 => (
            " Log ".into(),
            vec![Line::from(format!(
                "no process of namespace {} logs through horus-log",
                s.namespace
            ))
            .italic()],
        ),
        Ok(l) => {
            // The newest lines that fit.
            let room = area.height.saturating_sub(2) as usize;
            let mut title = format!(" Log ({} processes", l.processes);
            if l.dropped > 0 {
                title.push_str(&format!(", {} records dropped by writers", l.dropped));
            }
            if l.missed > 0 {
                title.push_str(&format!(", {} missed by the monitor", l.missed));
            }
            title.push_str(") ");
            let lines = l
                .lines
                .iter()
                .skip(l.lines.len().saturating_sub(room))
                .map(|x| Line::from(x.as_str()))
                .collect();
            (title, lines)
        }
        Err(why) => (
            " Log ".into(),
            vec![Line::from(format!("log unavailable: {why}")).italic()],
        ),
    };
    f.render_widget(
        Paragraph::new(lines).block(Block::new().borders(Borders::ALL).title(title)),
        area,
    );
}
