//! The page's PNG figures (plotters): latency against payload for every peer, the
//! payload sweep, fan-out and topic count.

use std::path::{Path, PathBuf};

use super::results::Results;
use crate::plot::{self, Chart, Series};
use horus_bench::harness::Mode;
use horus_bench::rows::{ScaleRow, ScaleSweep};
use horus_bench::tables;

/// Draws every figure that has data; returns the files written.
pub(super) fn figures(r: &Results, img: &Path) -> anyhow::Result<Vec<PathBuf>> {
    let mut written = Vec::new();
    let mut draw = |name: &str, chart: Chart<'_>, series: Vec<Series>| -> anyhow::Result<()> {
        let series: Vec<Series> = series
            .into_iter()
            .filter(|s| !s.points.is_empty())
            .collect();
        if series.is_empty() {
            return Ok(());
        }
        let path = img.join(name);
        plot::log_log(&path, &chart, &series)?;
        written.push(path);
        Ok(())
    };
    if let Some(d) = &r.peers {
        let sizes = tables::peer_sizes(&d.rows);
        let series = tables::PEER_COLUMNS
            .iter()
            .map(|(col, system, mode)| Series {
                name: (*col).to_owned(),
                points: sizes
                    .iter()
                    .filter_map(|&s| {
                        tables::median_of(&d.rows, system, *mode, s).map(|m| (s as f64, m as f64))
                    })
                    .collect(),
            })
            .collect();
        draw(
            "latency_vs_payload.png",
            Chart {
                title: "Median round trip vs payload (pinned, same run)",
                x_label: "payload size",
                y_label: "median RTT",
                x_format: plot::bytes_label,
                y_format: plot::ns_label,
            },
            series,
        )?;
    }
    if let Some(d) = &r.sweep {
        let mut series = Vec::new();
        for mode in [Mode::Copy, Mode::Loan] {
            for (what, f) in [("median", 0), ("p99", 1)] {
                series.push(Series {
                    name: format!("horus {} {what}", mode.label()),
                    points: d
                        .rows
                        .iter()
                        .filter(|r| r.mode == mode)
                        .map(|r| {
                            let v = if f == 0 {
                                r.rtt.median_ns
                            } else {
                                r.rtt.p99_ns
                            };
                            (r.size as f64, v as f64)
                        })
                        .collect(),
                });
            }
        }
        draw(
            "payload_sweep.png",
            Chart {
                title: "horus ping-pong, 64 B to 1 MiB (pinned, busy-poll)",
                x_label: "payload size",
                y_label: "round trip",
                x_format: plot::bytes_label,
                y_format: plot::ns_label,
            },
            series,
        )?;
    }
    if let Some(d) = &r.scale {
        for (sweep, name, title, x_label) in [
            (
                ScaleSweep::Fanout,
                "fanout.png",
                "Fan-out at 1 kHz: one-way latency vs subscribers",
                "subscriber processes",
            ),
            (
                ScaleSweep::Topics,
                "topics.png",
                "Topics at 1 kHz each: one-way latency vs topics",
                "topics",
            ),
        ] {
            let rows: Vec<&ScaleRow> = d.rows.iter().filter(|r| r.sweep == sweep).collect();
            let x = |r: &ScaleRow| match sweep {
                ScaleSweep::Fanout => r.result.subs as f64,
                ScaleSweep::Topics => r.result.topics as f64,
            };
            let stat = |name: &str, f: fn(&ScaleRow) -> f64| Series {
                name: name.to_owned(),
                points: rows.iter().map(|r| (x(r), f(r))).collect(),
            };
            draw(
                name,
                Chart {
                    title,
                    x_label,
                    y_label: "one-way latency",
                    x_format: plot::count_label,
                    y_format: plot::ns_label,
                },
                vec![
                    stat("average", |r| r.result.latency.mean_ns),
                    stat("p99", |r| r.result.latency.p99_ns as f64),
                    stat("max", |r| r.result.latency.max_ns as f64),
                ],
            )?;
        }
    }
    Ok(written)
}
