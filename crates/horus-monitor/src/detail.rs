//! The detail views: one topic (every endpoint with its counters, the fields, the
//! monitor's own reading) or one node (all its statistics).

use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Modifier, Style, Stylize};
use ratatui::text::Line;
use ratatui::widgets::{Block, Borders, Cell, Paragraph, Row, Table};
use ratatui::Frame;

use crate::format::{bandwidth, dur_us, hz, us};
use crate::model::{NodeRef, Snapshot, TopicRow};
use crate::schedulers::{class_text, rt_text, state_text};

const BACK: &str = " esc/enter: back to the tables   q: quit";

/// Draws topic `name` (or says it is gone).
pub(crate) fn draw_topic(f: &mut Frame<'_>, s: &Snapshot, name: &str) {
    let Some(t) = s.topics.iter().find(|t| t.name == name) else {
        gone(f, &format!("topic {name} is gone"));
        return;
    };
    let info = topic_lines(t);
    let [head, pubs, subs, fields, keys] = Layout::vertical([
        Constraint::Length(info.len() as u16 + 2),
        Constraint::Max(t.publishers.len().max(1) as u16 + 3),
        Constraint::Max(t.subscribers.len().max(1) as u16 + 3),
        Constraint::Min(3),
        Constraint::Length(1),
    ])
    .areas(f.area());
    f.render_widget(
        Paragraph::new(info).block(boxed(format!(" Topic {} ", t.name))),
        head,
    );
    let proc_cell = |pid: u32, process: &Option<String>, alive: bool| {
        let name = process.clone().unwrap_or_else(|| "?".into());
        let c = Cell::from(format!("{name} ({pid})"));
        if alive {
            c
        } else {
            Cell::from(format!("{name} ({pid}, dead)")).fg(Color::Red)
        }
    };
    let rows = t.publishers.iter().map(|p| {
        Row::new(vec![
            Cell::from(format!("#{}", p.place)),
            proc_cell(p.pid, &p.process, p.alive),
            Cell::from(p.sent.to_string()),
            Cell::from(p.bytes_sent.to_string()),
            Cell::from(p.rejected.to_string()),
            Cell::from(p.timed_out.to_string()),
            Cell::from(p.undelivered.to_string()),
            Cell::from(p.loan_failures.to_string()),
            Cell::from(p.sequence.to_string()),
        ])
    });
    f.render_widget(
        table(
            rows,
            &[
                "place",
                "process",
                "sent",
                "bytes",
                "rejected",
                "timed out",
                "undelivered",
                "loan failures",
                "seq",
            ],
            &[6, 28, 12, 14, 9, 10, 12, 14, 12],
            format!(" Publishers ({}) ", t.publishers.len()),
        ),
        pubs,
    );
    let rows = t.subscribers.iter().map(|x| {
        Row::new(vec![
            Cell::from(format!("#{}", x.place)),
            proc_cell(x.pid, &x.process, x.alive),
            Cell::from(if x.observer { "observer" } else { "subscriber" }),
            Cell::from(x.received.to_string()),
            Cell::from(x.overrun.to_string()),
            Cell::from(x.skipped.to_string()),
            Cell::from(x.malformed.to_string()),
            Cell::from(x.backlog.to_string()),
            Cell::from(delivered_text(x.delivered.as_ref())),
        ])
    });
    f.render_widget(
        table(
            rows,
            &[
                "place",
                "process",
                "role",
                "received",
                "overrun",
                "skipped",
                "malformed",
                "backlog",
                "latency p50/p99/max µs (n)",
            ],
            &[6, 28, 11, 12, 9, 9, 10, 9, 30],
            format!(" Subscribers ({}) ", t.subscribers.len()),
        ),
        subs,
    );
    let rows = t.fields.iter().map(|x| {
        Row::new(vec![
            Cell::from(x.path.clone()),
            Cell::from(x.ty.clone()),
            Cell::from(x.offset.map_or("CDR".into(), |o| format!("@{o}"))),
            Cell::from(x.size.map_or("-".into(), |s| format!("{s} B"))),
        ])
    });
    f.render_widget(
        table(
            rows,
            &["field", "type", "offset", "size"],
            &[32, 36, 8, 10],
            " Fields ".into(),
        ),
        fields,
    );
    legend(f, keys);
}

/// A subscriber's own latency figures for its row: `p50/p99/max (n)` in µs.
fn delivered_text(d: Option<&crate::delivered::DeliveredRow>) -> String {
    match d {
        Some(d) => format!(
            "{}/{}/{} ({})",
            us(Some(d.p50_us)),
            us(Some(d.p99_us)),
            us(Some(d.max_us)),
            d.samples
        ),
        None => "-".into(),
    }
}

fn topic_lines(t: &TopicRow) -> Vec<Line<'static>> {
    let l = &t.losses;
    let m = &t.monitor;
    let latency = match &t.latency {
        Some(x) => format!(
            "p50 {} µs, p99 {} µs, max {} µs over {} messages (stamp field {})",
            us(Some(x.p50_us)),
            us(Some(x.p99_us)),
            us(Some(x.max_us)),
            x.samples,
            x.field
        ),
        None => format!("- ({})", t.latency_note.as_deref().unwrap_or("none")),
    };
    let delivered = match &t.delivered {
        Some(d) => format!(
            "p50 {} µs, p99 {} µs, max {} µs over {} messages (the subscribers' own, since they joined)",
            us(Some(d.p50_us)),
            us(Some(d.p99_us)),
            us(Some(d.max_us)),
            d.samples
        ),
        None => "- (no subscriber measured a stamped message)".into(),
    };
    let mut v = vec![
        Line::from(format!("type      {}", t.schema)),
        Line::from(format!("qos       {}", t.qos)),
        Line::from(format!(
            "rate      {} Hz, {}",
            hz(t.rate_hz),
            bandwidth(t.bytes_per_s)
        )),
        Line::from(format!("delivered {delivered}")),
        Line::from(format!("monitor's {latency}")),
        Line::from(format!(
            "losses    overrun {}, rejected {}, timed out {}, undelivered {}, malformed {}",
            l.overrun, l.rejected, l.timed_out, l.undelivered, l.malformed
        )),
        Line::from(format!(
            "endpoints {} publisher(s), {} subscriber(s), {} other observer(s)",
            t.publishers.len(),
            t.subscriber_count(),
            t.observer_count()
        )),
        Line::from(format!(
            "monitor   {}: read {}, missed {} (its own loss), malformed {}, stamps that are not times {}",
            if m.observing { "observing" } else { "not observing" },
            m.read,
            m.missed,
            m.malformed,
            m.implausible_stamps
        )),
    ];
    if l.total() > 0 {
        v[4] = v[4].clone().fg(Color::Red);
    }
    v
}

/// Draws node `key` (`scheduler/node`), or says it is gone.
pub(crate) fn draw_node(f: &mut Frame<'_>, s: &Snapshot, key: &str) {
    let nodes = s.nodes();
    let Some(n) = nodes.iter().find(|n| n.key() == key) else {
        gone(f, &format!("node {key} is gone"));
        return;
    };
    let info = node_lines(n);
    let [head, pct, rest, keys] = Layout::vertical([
        Constraint::Length(info.len() as u16 + 2),
        Constraint::Length(5),
        Constraint::Min(0),
        Constraint::Length(1),
    ])
    .areas(f.area());
    f.render_widget(
        Paragraph::new(info).block(boxed(format!(" Node {} ", n.node.name))),
        head,
    );
    let row = |what: &'static str, p: &horus::sched::Percentiles| {
        Row::new(vec![
            Cell::from(what),
            Cell::from(p.samples.to_string()),
            Cell::from(dur_us(p.min)),
            Cell::from(dur_us(p.mean())),
            Cell::from(dur_us(p.p50)),
            Cell::from(dur_us(p.p99)),
            Cell::from(dur_us(p.p999)),
            Cell::from(dur_us(p.max)),
        ])
    };
    f.render_widget(
        table(
            [row("exec", &n.node.exec), row("jitter", &n.node.jitter)].into_iter(),
            &["µs", "samples", "min", "mean", "p50", "p99", "p99.9", "max"],
            &[8, 10, 9, 9, 9, 9, 9, 9],
            " Since the node started ".into(),
        ),
        pct,
    );
    f.render_widget(Block::new(), rest);
    legend(f, keys);
}

fn node_lines(n: &NodeRef<'_>) -> Vec<Line<'static>> {
    let st = n.node;
    let t = n.table;
    let state = if t.alive {
        state_text(st.state).to_owned()
    } else {
        format!("{} (its process is dead)", state_text(st.state))
    };
    let mut v = vec![
        Line::from(format!(
            "scheduler   {} (uptime {:.1} s)",
            t.scheduler, t.uptime_s
        )),
        Line::from(format!(
            "process     {}",
            crate::schedulers::process_text(t)
        )),
        Line::from(format!("state       {state}")),
        Line::from(format!("class       {}", class_text(st.class))),
        Line::from(format!("real-time   {}", rt_text(st.rt_mode))),
        Line::from(format!(
            "core        {}",
            st.core.map_or("not pinned".into(), |c| c.to_string())
        )),
        Line::from(format!(
            "target      {}",
            st.target_hz
                .map_or("none (event-driven)".into(), |h| format!("{h} Hz"))
        )),
        Line::from(format!(
            "rate        {} Hz in the last second, {:.1} Hz over the run, {} ticks",
            hz(n.rate_hz()),
            st.achieved_hz,
            st.ticks
        )),
        Line::from(format!(
            "misses      {} deadline ({} in the last second), {} budget overruns, {} skipped",
            st.deadline_misses, st.window_deadline_misses, st.budget_overruns, st.skipped
        )),
        Line::from(format!(
            "failures    {} ({} restarts, {} watchdog expiries)",
            st.failures, st.restarts, st.watchdog_expiries
        )),
    ];
    if !n.alive() {
        v[2] = v[2].clone().fg(Color::Red);
    }
    v
}

fn boxed(title: String) -> Block<'static> {
    Block::new().borders(Borders::ALL).title(title)
}

fn table<'a>(
    rows: impl Iterator<Item = Row<'a>>,
    header: &[&'a str],
    widths: &[u16],
    title: String,
) -> Table<'a> {
    Table::new(rows, widths.iter().map(|w| Constraint::Length(*w)))
        .header(Row::new(header.iter().copied()).bold())
        .block(boxed(title))
}

fn legend(f: &mut Frame<'_>, area: Rect) {
    f.render_widget(
        Paragraph::new(BACK).style(Style::new().add_modifier(Modifier::REVERSED)),
        area,
    );
}

fn gone(f: &mut Frame<'_>, what: &str) {
    let [body, keys] =
        Layout::vertical([Constraint::Min(1), Constraint::Length(1)]).areas(f.area());
    f.render_widget(
        Paragraph::new(what.to_owned()).block(boxed(" Gone ".into())),
        body,
    );
    legend(f, keys);
}
