//! The live view of a running horus system: every topic and node of a namespace, sampled
//! by an observer, as data ([`Snapshot`], JSON for `horus monitor --once --json`) and as a
//! terminal UI ([`run_tui`]). `horus monitor` parses its arguments and calls [`Sampler`] and
//! [`run_tui`]; `horus node`, `topic hz`/`bw` and `tf frames` share its readers
//! ([`schedulers`], [`PublisherTotals`], [`frame_tree`], [`text`]).
//!
//! - `stamp`: where a message's publish stamp is, and its one-way latency (`ros_type`: stamp and
//!   fields of a ROS 2-typed message);
//! - `delivered`: the latency the subscribers measured themselves (their histograms in the
//!   segment), per subscriber and per topic;
//! - `window`: rate, bandwidth and latency percentiles over a sliding window;
//! - `totals`: a topic's publisher counters followed across snapshots;
//! - `probe`: one topic — its publishers' counters and a polling observer;
//! - `sampler`: the thread that finds and polls the topics, and builds snapshots;
//! - `model`: a snapshot (topics, nodes, logs) as data, and as JSON for `--once --json`;
//! - `schedulers`: the schedulers' statistics tables; `logs`: the latest log lines;
//! - `tf`: the frames of `tf` / `tf_static` (`horus tf frames`' survey), stale ones marked;
//!   `frame_tree`: the order they are shown in;
//! - `sort`, `keys`, `app`: sortable columns, keys, and the UI's state;
//! - `text`, `format`, `view`, `detail`, `tf_view`, `tui`: drawing with ratatui, and the
//!   event loop.
//!
//! An observer only: it reads the publishers' and subscribers' counters and the rings, never
//! registers a wake-up, and is in no publisher's room check or count.
//!
//! # Example
//!
//! One snapshot of a namespace over a short window (what `horus monitor --once` prints):
//!
//! ```
//! use std::time::Duration;
//!
//! let namespace = format!("monitor-doc-{}", std::process::id());
//! let sampler = horus_monitor::Sampler::start(&namespace)?;
//! std::thread::sleep(Duration::from_millis(50));
//! let snapshot = sampler.snapshot(Duration::from_millis(50));
//! assert_eq!(snapshot.namespace, namespace);
//! assert!(snapshot.topics.is_empty()); // nothing runs in this namespace
//! assert_eq!(snapshot.to_json()["namespace"], namespace.as_str());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

#![warn(missing_docs)]

mod app;
mod delivered;
mod detail;
mod format;
pub mod frame_tree;
mod keys;
mod logs;
mod model;
mod probe;
mod ros_type;
mod sampler;
pub mod schedulers;
mod sort;
mod stamp;
pub mod text;
mod tf;
mod tf_view;
mod totals;
mod tui;
mod view;
mod window;

pub use delivered::DeliveredRow;
pub use model::{LatencyRow, Losses, NodeRef, PublisherRow, Snapshot, SubscriberRow, TopicRow};
pub use sampler::{Sampler, StartError};
pub use totals::{Mark, PublisherTotals};
pub use tui::{run as run_tui, TuiError};
