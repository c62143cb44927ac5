//! The report of horus's benchmarks: `docs/benchmarks.md` and its PNG figures,
//! rendered from the JSON a benchmark run wrote (the `report` binary is its command
//! line; `make bench` runs the suite first, then it). It measures nothing and links
//! no peer middleware: the rows and tables it renders are `horus-bench`'s.
//!
//! * [`page`] — the page: its template with every key filled by one section
//!   renderer per group of benchmarks;
//! * [`plot`] — the figures (plotters, PNG).
#![warn(missing_docs)]

pub mod page;
pub mod plot;
