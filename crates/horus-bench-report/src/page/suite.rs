//! The sections of the suite binaries with one table each: `robotics_messages`,
//! `payload_sweep`, `all_paths` and `scalability`.

use super::results::Results;
use super::{bullets, section, Keys};
use horus_bench::rows::ScaleSweep;
use horus_bench::tables;

/// `robotics.*`, `sweep.*`, `paths.*`, `scale.*`: each table and its method.
pub(super) fn suite_tables(r: &Results, keys: &mut Keys) {
    keys.insert(
        "robotics.table",
        section(&r.robotics, "robotics_messages", |d| {
            tables::robotics(&d.rows).to_markdown()
        }),
    );
    keys.insert(
        "robotics.method",
        section(&r.robotics, "robotics_messages", |d| bullets(&d.method)),
    );
    keys.insert(
        "sweep.table",
        section(&r.sweep, "payload_sweep", |d| {
            tables::sweep(&d.rows).to_markdown()
        }),
    );
    keys.insert(
        "sweep.method",
        section(&r.sweep, "payload_sweep", |d| bullets(&d.method)),
    );
    keys.insert(
        "paths.table",
        section(&r.paths, "all_paths", |d| {
            tables::paths(&d.rows).to_markdown()
        }),
    );
    keys.insert(
        "paths.method",
        section(&r.paths, "all_paths", |d| bullets(&d.method)),
    );
    keys.insert(
        "scale.fanout",
        section(&r.scale, "scalability", |d| {
            tables::scale(&d.rows, ScaleSweep::Fanout).to_markdown()
        }),
    );
    keys.insert(
        "scale.topics",
        section(&r.scale, "scalability", |d| {
            tables::scale(&d.rows, ScaleSweep::Topics).to_markdown()
        }),
    );
    keys.insert(
        "scale.method",
        section(&r.scale, "scalability", |d| bullets(&d.method)),
    );
}
