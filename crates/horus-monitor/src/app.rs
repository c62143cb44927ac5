//! The terminal UI's state — which table has the focus, how each is sorted, what is selected,
//! which view is shown — and how commands change it.

use crate::keys::Command;
use crate::model::{NodeRef, Snapshot, TopicRow};
use crate::sort::{NodeCol, TopicCol};

/// The table that has the focus.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Focus {
    Topics,
    Nodes,
}

/// What is on the screen.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Screen {
    /// Topics, nodes and logs.
    Tables,
    /// One topic (by name).
    Topic(String),
    /// One node (by `scheduler/node`).
    Node(String),
    /// The tf frames.
    Tf,
}

/// What the event loop does after a command.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Outcome {
    Redraw,
    Quit,
}

#[derive(Debug)]
pub(crate) struct App {
    pub(crate) focus: Focus,
    pub(crate) screen: Screen,
    pub(crate) topic_sort: TopicCol,
    pub(crate) node_sort: NodeCol,
    /// Selected topic name and node key: a selection follows its row across refreshes.
    pub(crate) topic: Option<String>,
    pub(crate) node: Option<String>,
}

impl App {
    pub(crate) fn new() -> App {
        App {
            focus: Focus::Topics,
            screen: Screen::Tables,
            topic_sort: TopicCol::Name,
            node_sort: NodeCol::Name,
            topic: None,
            node: None,
        }
    }

    /// The topics in display order.
    pub(crate) fn topics<'s>(&self, s: &'s Snapshot) -> Vec<&'s TopicRow> {
        let mut v: Vec<&TopicRow> = s.topics.iter().collect();
        v.sort_by(|a, b| self.topic_sort.compare(a, b));
        v
    }

    /// The nodes in display order.
    pub(crate) fn nodes<'s>(&self, s: &'s Snapshot) -> Vec<NodeRef<'s>> {
        let mut v = s.nodes();
        v.sort_by(|a, b| self.node_sort.compare(a, b));
        v
    }

    /// Index of the selected topic in display order (the first row if none is selected or
    /// it is gone).
    pub(crate) fn topic_index(&self, s: &Snapshot) -> Option<usize> {
        let v = self.topics(s);
        (!v.is_empty()).then(|| {
            self.topic
                .as_ref()
                .and_then(|n| v.iter().position(|t| &t.name == n))
                .unwrap_or(0)
        })
    }

    /// Index of the selected node in display order.
    pub(crate) fn node_index(&self, s: &Snapshot) -> Option<usize> {
        let v = self.nodes(s);
        (!v.is_empty()).then(|| {
            self.node
                .as_ref()
                .and_then(|k| v.iter().position(|n| &n.key() == k))
                .unwrap_or(0)
        })
    }

    /// Applies a command against what is on screen.
    pub(crate) fn apply(&mut self, c: Command, s: &Snapshot) -> Outcome {
        match (c, &self.screen) {
            (Command::Quit, _) => return Outcome::Quit,
            (Command::Tf, Screen::Tf) => self.screen = Screen::Tables,
            (Command::Tf, _) => self.screen = Screen::Tf,
            (Command::Escape, Screen::Tables) => return Outcome::Quit,
            (Command::Escape | Command::Enter, _) if self.screen != Screen::Tables => {
                self.screen = Screen::Tables;
            }
            (Command::Enter, _) => self.open_detail(s),
            (Command::SwitchTable, Screen::Tables) => {
                self.focus = match self.focus {
                    Focus::Topics => Focus::Nodes,
                    Focus::Nodes => Focus::Topics,
                }
            }
            (Command::NextSort, Screen::Tables) => match self.focus {
                Focus::Topics => self.topic_sort = next(&TopicCol::ALL, self.topic_sort),
                Focus::Nodes => self.node_sort = next(&NodeCol::ALL, self.node_sort),
            },
            (Command::Up | Command::Down | Command::First | Command::Last, Screen::Tables) => {
                self.move_selection(c, s)
            }
            _ => {}
        }
        Outcome::Redraw
    }

    fn open_detail(&mut self, s: &Snapshot) {
        match self.focus {
            Focus::Topics => {
                if let Some(i) = self.topic_index(s) {
                    let name = self.topics(s)[i].name.clone();
                    self.topic = Some(name.clone());
                    self.screen = Screen::Topic(name);
                }
            }
            Focus::Nodes => {
                if let Some(i) = self.node_index(s) {
                    let key = self.nodes(s)[i].key();
                    self.node = Some(key.clone());
                    self.screen = Screen::Node(key);
                }
            }
        }
    }

    fn move_selection(&mut self, c: Command, s: &Snapshot) {
        let step = |i: usize, len: usize| match c {
            Command::Up => i.saturating_sub(1),
            Command::Down => (i + 1).min(len - 1),
            Command::First => 0,
            _ => len - 1,
        };
        match self.focus {
            Focus::Topics => {
                let v = self.topics(s);
                if let Some(i) = self.topic_index(s) {
                    self.topic = Some(v[step(i, v.len())].name.clone());
                }
            }
            Focus::Nodes => {
                let v = self.nodes(s);
                if let Some(i) = self.node_index(s) {
                    self.node = Some(v[step(i, v.len())].key());
                }
            }
        }
    }
}

/// The element after `cur` in `all`, wrapping.
fn next<T: Copy + PartialEq>(all: &[T], cur: T) -> T {
    let i = all.iter().position(|c| *c == cur).unwrap_or(0);
    all[(i + 1) % all.len()]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Losses, OwnCounts};

    fn topic(name: &str, ty: &str, hz: f64) -> TopicRow {
        TopicRow {
            name: name.into(),
            type_name: Some(ty.into()),
            schema: ty.into(),
            qos: String::new(),
            rate_hz: hz,
            bytes_per_s: 0.0,
            latency: None,
            latency_note: None,
            delivered: None,
            losses: Losses::default(),
            publishers: Vec::new(),
            subscribers: Vec::new(),
            monitor: OwnCounts::default(),
            fields: Vec::new(),
        }
    }

    fn snapshot() -> Snapshot {
        Snapshot {
            namespace: "ns".into(),
            window_s: 1.0,
            topics: vec![
                topic("a/imu", "horus/Imu", 1000.0),
                topic("b/scan", "horus/LaserScan", 10.0),
                topic("c/cmd", "horus/CmdVel", 100.0),
            ],
            unreadable: Vec::new(),
            schedulers: Vec::new(),
            schedulers_error: None,
            tf: Default::default(),
            logs: Err("none".into()),
        }
    }

    fn names(app: &App, s: &Snapshot) -> Vec<String> {
        app.topics(s).iter().map(|t| t.name.clone()).collect()
    }

    #[test]
    fn sort_cycles_and_the_selection_follows_its_row() {
        let s = snapshot();
        let mut app = App::new();
        assert_eq!(names(&app, &s), ["a/imu", "b/scan", "c/cmd"]);
        assert_eq!(app.apply(Command::Down, &s), Outcome::Redraw);
        assert_eq!(app.topic.as_deref(), Some("b/scan"));
        app.apply(Command::NextSort, &s); // type
        assert_eq!(names(&app, &s), ["c/cmd", "a/imu", "b/scan"]);
        app.apply(Command::NextSort, &s); // rate, largest first
        assert_eq!(app.topic_sort, TopicCol::Rate);
        assert_eq!(names(&app, &s), ["a/imu", "c/cmd", "b/scan"]);
        // The selection is still b/scan, now the last row.
        assert_eq!(app.topic_index(&s), Some(2));
        app.apply(Command::Down, &s);
        assert_eq!(
            app.topic.as_deref(),
            Some("b/scan"),
            "stays on the last row"
        );
        app.apply(Command::First, &s);
        assert_eq!(app.topic.as_deref(), Some("a/imu"));
    }

    #[test]
    fn enter_opens_the_detail_escape_goes_back_then_quits() {
        let s = snapshot();
        let mut app = App::new();
        app.apply(Command::Last, &s);
        app.apply(Command::Enter, &s);
        assert_eq!(app.screen, Screen::Topic("c/cmd".into()));
        // Table keys do nothing in a detail view.
        app.apply(Command::SwitchTable, &s);
        assert_eq!(app.focus, Focus::Topics);
        assert_eq!(app.apply(Command::Escape, &s), Outcome::Redraw);
        assert_eq!(app.screen, Screen::Tables);
        app.apply(Command::SwitchTable, &s);
        assert_eq!(app.focus, Focus::Nodes);
        // No node: enter stays on the tables.
        app.apply(Command::Enter, &s);
        assert_eq!(app.screen, Screen::Tables);
        assert_eq!(app.apply(Command::Escape, &s), Outcome::Quit);
        assert_eq!(App::new().apply(Command::Quit, &s), Outcome::Quit);
    }

    #[test]
    fn t_shows_the_tf_frames_and_t_or_escape_goes_back() {
        let s = snapshot();
        let mut app = App::new();
        app.apply(Command::Tf, &s);
        assert_eq!(app.screen, Screen::Tf);
        // Table keys do nothing there.
        app.apply(Command::SwitchTable, &s);
        assert_eq!(app.focus, Focus::Topics);
        app.apply(Command::Tf, &s);
        assert_eq!(app.screen, Screen::Tables);
        // From a detail view too; escape goes back to the tables.
        app.apply(Command::Enter, &s);
        app.apply(Command::Tf, &s);
        assert_eq!(app.screen, Screen::Tf);
        assert_eq!(app.apply(Command::Escape, &s), Outcome::Redraw);
        assert_eq!(app.screen, Screen::Tables);
    }
}
