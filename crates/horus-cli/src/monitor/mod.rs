//! `horus monitor`: every topic and node of a namespace, live, in the terminal.
//!
//! - `stamp`: where a message's publish stamp is, and its one-way latency (`ros_type`: stamp and
//!   fields of a ROS 2-typed message);
//! - `window`: rate, bandwidth and latency percentiles over a sliding window;
//! - `probe`: one topic — its publishers' counters and a polling observer;
//! - `sampler`: the thread that finds and polls the topics, and builds snapshots;
//! - `model`: a snapshot (topics, nodes, logs) as data, and as JSON for `--once --json`;
//! - `logs`: the latest log lines;
//! - `tf`: the frames of `tf` / `tf_static` (`horus tf frames`' survey), stale ones marked;
//! - `sort`, `keys`, `app`: sortable columns, keys, and the UI's state;
//! - `format`, `view`, `detail`, `tf_view`, `tui`: drawing with ratatui, and the event loop.
//!
//! An observer only: it reads the publishers' and subscribers' counters and the rings, never
//! registers a wake-up, and is in no publisher's room check or count.

mod app;
mod detail;
mod format;
mod keys;
mod logs;
mod model;
mod probe;
mod ros_type;
mod sampler;
mod sort;
mod stamp;
mod tf;
mod tf_view;
mod tui;
mod view;
mod window;

pub(crate) use model::Snapshot;
pub(crate) use sampler::Sampler;
pub(crate) use tui::run as run_tui;
