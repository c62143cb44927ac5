//! `report`: turns the JSON of a benchmark run into `docs/benchmarks.md` and its
//! PNG figures. It measures nothing itself; `make bench` runs the suite first.
//!
//! ```text
//! report --results bench-results --out docs/benchmarks.md --img docs/img
//! ```
//!
//! The page is `report/benchmarks.md.in` (compiled in) with every `{{key}}`
//! replaced; an unknown key or a missing result file is an error (unless
//! `--allow-missing`, which the smoke test uses), so the page can never silently
//! lose a section.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{bail, Context};
use serde::de::DeserializeOwned;
use serde_json::Value;

use horus_bench::harness::Mode;
use horus_bench::interleaved::{self, RoundRow};
use horus_bench::logging::{self, LogRow};
use horus_bench::multi_host::{self, rows::MhRow, SystemName};
use horus_bench::plot::{self, Chart, Series};
use horus_bench::report::{Machine, Row};
use horus_bench::ros_report;
use horus_bench::ros_rows::RosRow;
use horus_bench::rows::{PathRow, RoboticsRow, ScaleRow, ScaleSweep, SweepRow};
use horus_bench::rpc::{self, rows::RpcRow};
use horus_bench::suite::Doc;
use horus_bench::tables;

const TEMPLATE: &str = include_str!("../../report/benchmarks.md.in");
/// The four sizes of the headline table.
const HEADLINE: &[usize] = &[16, 1480, 65536, 1048576];

const USAGE: &str = "\
report — write docs/benchmarks.md and its figures from a benchmark run's JSON

USAGE: report [--results DIR] [--out FILE] [--img DIR] [--allow-missing]

  --results DIR      where the suite wrote its JSON (default bench-results)
  --out FILE         the page to write (default docs/benchmarks.md)
  --img DIR          where the PNGs go (default docs/img; the page links img/<name>.png)
  --allow-missing    render a placeholder for a missing result file instead of failing
";

struct Args {
    results: PathBuf,
    out: PathBuf,
    img: PathBuf,
    allow_missing: bool,
}

fn main() -> ExitCode {
    match parse(std::env::args().skip(1)).and_then(|a| match a {
        Some(a) => run(&a),
        None => {
            print!("{USAGE}");
            Ok(())
        }
    }) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
}

fn parse(argv: impl Iterator<Item = String>) -> anyhow::Result<Option<Args>> {
    let mut a = Args {
        results: "bench-results".into(),
        out: "docs/benchmarks.md".into(),
        img: "docs/img".into(),
        allow_missing: false,
    };
    let mut argv = argv.peekable();
    while let Some(arg) = argv.next() {
        let mut value = || argv.next().with_context(|| format!("{arg} needs a value"));
        match arg.as_str() {
            "-h" | "--help" => return Ok(None),
            "--results" => a.results = value()?.into(),
            "--out" => a.out = value()?.into(),
            "--img" => a.img = value()?.into(),
            "--allow-missing" => a.allow_missing = true,
            other => bail!("unknown argument {other:?}; try --help"),
        }
    }
    Ok(Some(a))
}

/// The result files of one run, each parsed if present.
struct Results {
    peers: Option<Doc<Row>>,
    /// `interleaved`: the rounds every "faster" verdict is drawn from.
    interleaved: Option<Doc<RoundRow>>,
    robotics: Option<Doc<RoboticsRow>>,
    sweep: Option<Doc<SweepRow>>,
    paths: Option<Doc<PathRow>>,
    scale: Option<Doc<ScaleRow>>,
    pingpong: Option<Value>,
    /// `pingpong --touch` (one of issue 2's targets); optional.
    pingpong_touch: Option<Value>,
    determinism: Option<Value>,
    scheduler_scaling: Option<Value>,
    /// `python/bench/python_latency.py --json` (issue 5's benchmark).
    python: Option<Value>,
    /// `rpc` (issue 9's benchmark).
    rpc: Option<Doc<RpcRow>>,
    /// `logging` (issue 12's benchmark).
    logging: Option<Doc<LogRow>>,
    /// `multi_host` (issue 13's benchmark).
    multi_host: Option<Doc<MhRow>>,
    /// `ros_messages` (issue 19's Rust benchmark).
    ros: Option<Doc<RosRow>>,
    /// `python/bench/ros_python.py --json` (issue 19's Python benchmark).
    ros_python: Option<Value>,
    missing: Vec<String>,
}

fn load<T: DeserializeOwned>(
    dir: &Path,
    name: &str,
    missing: &mut Vec<String>,
) -> anyhow::Result<Option<T>> {
    let path = dir.join(format!("{name}.json"));
    match std::fs::read_to_string(&path) {
        Ok(text) => Ok(Some(
            serde_json::from_str(&text).with_context(|| format!("parsing {}", path.display()))?,
        )),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            missing.push(path.display().to_string());
            Ok(None)
        }
        Err(e) => Err(e).with_context(|| format!("reading {}", path.display())),
    }
}

impl Results {
    fn load(dir: &Path) -> anyhow::Result<Self> {
        let mut missing = Vec::new();
        let m = &mut missing;
        Ok(Self {
            peers: load(dir, "peers", m)?,
            interleaved: load(dir, "interleaved", m)?,
            robotics: load(dir, "robotics_messages", m)?,
            sweep: load(dir, "payload_sweep", m)?,
            paths: load(dir, "all_paths", m)?,
            scale: load(dir, "scalability", m)?,
            pingpong: load(dir, "pingpong", m)?,
            pingpong_touch: load(dir, "pingpong_touch", &mut Vec::new())?,
            determinism: load(dir, "determinism", m)?,
            scheduler_scaling: load(dir, "scheduler_scaling", m)?,
            python: load(dir, "python_latency", m)?,
            rpc: load(dir, "rpc", m)?,
            logging: load(dir, "logging", m)?,
            multi_host: load(dir, "multi_host", m)?,
            ros: load(dir, "ros_messages", m)?,
            ros_python: load(dir, "ros_python", m)?,
            missing,
        })
    }

    fn machine(&self) -> Option<Machine> {
        let m = [
            self.peers.as_ref().map(|d| d.machine.clone()),
            self.robotics.as_ref().map(|d| d.machine.clone()),
            self.sweep.as_ref().map(|d| d.machine.clone()),
        ];
        m.into_iter().flatten().next().or_else(|| {
            serde_json::from_value(self.pingpong.as_ref()?.get("machine")?.clone()).ok()
        })
    }

    fn errors(&self) -> Vec<String> {
        fn of<R>(name: &str, d: &Option<Doc<R>>) -> Vec<String> {
            d.iter()
                .flat_map(|d| d.errors.iter().map(move |e| format!("{name}: {e}")))
                .collect()
        }
        let mut v = of("peers", &self.peers);
        v.extend(of("interleaved", &self.interleaved));
        v.extend(of("robotics_messages", &self.robotics));
        v.extend(of("payload_sweep", &self.sweep));
        v.extend(of("all_paths", &self.paths));
        v.extend(of("scalability", &self.scale));
        v.extend(of("rpc", &self.rpc));
        v.extend(of("logging", &self.logging));
        v.extend(of("multi_host", &self.multi_host));
        v.extend(of("ros_messages", &self.ros));
        if let Some(py) = &self.ros_python {
            for e in py["errors"].as_array().into_iter().flatten() {
                v.push(format!("ros_python: {}", e.as_str().unwrap_or("?")));
            }
        }
        if let Some(py) = &self.python {
            v.extend(
                tables::python_failures(py)
                    .into_iter()
                    .map(|e| format!("python_latency: {e}")),
            );
        }
        if let Some(pp) = &self.pingpong {
            for e in pp["errors"].as_array().into_iter().flatten() {
                v.push(format!("pingpong: {}", e.as_str().unwrap_or("?")));
            }
        }
        v
    }
}

fn bullets(lines: &[String]) -> String {
    lines.iter().map(|l| format!("- {l}\n")).collect()
}

fn missing(what: &str) -> String {
    format!("*Not measured in this run ({what}.json missing).*\n")
}

/// Renders `f(doc)` or the missing-file placeholder.
fn section<D>(d: &Option<D>, name: &str, f: impl FnOnce(&D) -> String) -> String {
    d.as_ref().map_or_else(|| missing(name), f)
}

fn run(a: &Args) -> anyhow::Result<()> {
    let r = Results::load(&a.results)?;
    if !r.missing.is_empty() && !a.allow_missing {
        bail!(
            "missing result files: {} (run `make bench`)",
            r.missing.join(", ")
        );
    }
    std::fs::create_dir_all(&a.img).with_context(|| format!("creating {}", a.img.display()))?;
    let mut keys: BTreeMap<&str, String> = BTreeMap::new();

    keys.insert(
        "machine",
        match r.machine() {
            Some(m) => format!(
                "**Machine:** {} — {} logical CPUs ({} usable by the benchmarks) — {}",
                m.cpu_model, m.cores, m.usable_cpus, m.kernel
            ),
            None => "**Machine:** unknown (no result file)".to_owned(),
        },
    );
    let clock = r
        .peers
        .iter()
        .flat_map(|d| d.method.iter())
        .find_map(|l| l.strip_prefix("timer: "))
        .unwrap_or("rdtsc, calibrated per process")
        .to_owned();
    keys.insert("clock", clock);

    // Peers.
    keys.insert(
        "peers.headline",
        section(&r.peers, "peers", |d| {
            let sizes: Vec<usize> = tables::peer_sizes(&d.rows)
                .into_iter()
                .filter(|s| HEADLINE.contains(s))
                .collect();
            tables::peers_side_by_side(&d.rows, &sizes).to_markdown()
        }),
    );
    keys.insert(
        "peers.side_by_side",
        section(&r.peers, "peers", |d| {
            tables::peers_side_by_side(&d.rows, &tables::peer_sizes(&d.rows)).to_markdown()
        }),
    );
    keys.insert(
        "peers.ratios",
        section(&r.peers, "peers", |d| {
            tables::peers_ratios(&d.rows, &tables::peer_sizes(&d.rows)).to_markdown()
        }),
    );
    keys.insert(
        "peers.losses",
        section(&r.peers, "peers", |d| {
            let sizes = tables::peer_sizes(&d.rows);
            let violations = tables::floor_violations(&d.rows, &sizes);
            let floor = if violations.is_empty() {
                "No median in this run came in below `floor: cache line`, the one lower bound \
                 on the page.\n\n"
                    .to_owned()
            } else {
                format!(
                    "**`floor: cache line` was not a lower bound in this run** (medians below \
                     it):\n\n{}\n",
                    bullets(&violations)
                )
            };
            let losses = tables::peers_losses(&d.rows, &sizes);
            let single_run = if losses.is_empty() {
                "In this one run, no middleware's median was below horus's (horus waiting the \
                 way each peer waits). One run is not a verdict; the verdicts are in the \
                 interleaved rounds below.\n"
                    .to_owned()
            } else {
                format!(
                    "Where a middleware's median was below horus's in this one run (horus \
                     waiting the way that peer waits; one run is not a verdict, see the \
                     interleaved rounds below):\n\n{}",
                    bullets(&losses)
                )
            };
            floor + &single_run
        }),
    );
    keys.insert(
        "peers.method",
        section(&r.peers, "peers", |d| bullets(&d.method)),
    );

    // Interleaved rounds: the only source of "faster" verdicts.
    keys.insert(
        "interleaved.table",
        section(&r.interleaved, "interleaved", |d| {
            tables::interleaved(&interleaved::compare(&d.rows)).to_markdown()
        }),
    );
    keys.insert(
        "interleaved.claims",
        section(&r.interleaved, "interleaved", |d| {
            let claims = interleaved::claims(&interleaved::compare(&d.rows));
            if claims.is_empty() {
                "*No pair of horus and a peer was measured in the same round.*\n".to_owned()
            } else {
                bullets(&claims)
            }
        }),
    );
    keys.insert(
        "interleaved.method",
        section(&r.interleaved, "interleaved", |d| bullets(&d.method)),
    );

    // The other suite binaries.
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

    // Issue 2 and issue 4 benchmarks.
    let pp_rows: Option<Vec<Row>> = match &r.pingpong {
        Some(v) => Some(serde_json::from_value(v["rows"].clone()).context("pingpong rows")?),
        None => None,
    };
    keys.insert(
        "pingpong.method",
        section(&r.pingpong, "pingpong", |v| {
            let lines: Vec<String> = v["method"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|l| l.as_str().map(str::to_owned))
                .collect();
            bullets(&lines)
        }),
    );
    keys.insert(
        "pingpong.targets",
        section(&r.pingpong, "pingpong", |v| {
            tables::pingpong_targets(v, r.pingpong_touch.as_ref()).to_markdown()
        }),
    );
    keys.insert(
        "pingpong.rtt_pinned",
        section(&pp_rows, "pingpong", |rows| {
            tables::pingpong_rtt(rows, true).to_markdown()
        }),
    );
    keys.insert(
        "pingpong.rtt_unpinned",
        section(&pp_rows, "pingpong", |rows| {
            tables::pingpong_rtt(rows, false).to_markdown()
        }),
    );
    keys.insert(
        "pingpong.one_way",
        section(&pp_rows, "pingpong", |rows| {
            tables::pingpong_one_way(rows).to_markdown()
        }),
    );
    for (key, pinned) in [
        ("pingpong.ratios_pinned", true),
        ("pingpong.ratios_unpinned", false),
    ] {
        keys.insert(
            key,
            section(&r.pingpong, "pingpong", |v| {
                tables::pingpong_ratios(&v["ratios"], pinned).to_markdown()
            }),
        );
    }
    keys.insert(
        "determinism.table",
        section(&r.determinism, "determinism", |v| {
            tables::determinism(v).to_markdown()
        }),
    );
    keys.insert(
        "determinism.method",
        section(&r.determinism, "determinism", method_of),
    );
    keys.insert(
        "scheduler_scaling.table",
        section(&r.scheduler_scaling, "scheduler_scaling", |v| {
            tables::scheduler_scaling(v).to_markdown()
        }),
    );
    keys.insert(
        "scheduler_scaling.method",
        section(&r.scheduler_scaling, "scheduler_scaling", method_of),
    );
    keys.insert(
        "scheduler.targets",
        if r.determinism.is_none() && r.scheduler_scaling.is_none() {
            missing("determinism / scheduler_scaling")
        } else {
            tables::scheduler_targets(r.determinism.as_ref(), r.scheduler_scaling.as_ref())
                .to_markdown()
        },
    );
    keys.insert(
        "python.table",
        section(&r.python, "python_latency", |v| {
            tables::python(v).to_markdown()
        }),
    );
    keys.insert(
        "python.targets",
        section(&r.python, "python_latency", |v| {
            tables::python_targets(v).to_markdown()
        }),
    );
    keys.insert(
        "python.method",
        section(&r.python, "python_latency", |v| {
            format!(
                "Method: {} (Python {}, {}{}).\n",
                v["meta"]["method"].as_str().unwrap_or("(not recorded)"),
                v["meta"]["python"].as_str().unwrap_or("?"),
                v["meta"]["machine"].as_str().unwrap_or("?"),
                if v["meta"]["quick"] == true {
                    ", quick mode"
                } else {
                    ""
                }
            )
        }),
    );
    rpc_keys(&r.rpc, &mut keys);
    logging_keys(&r.logging, &mut keys);
    keys.insert(
        "multi_host.tables",
        section(&r.multi_host, "multi_host", |d| {
            let pinnings: Vec<bool> = [true, false]
                .into_iter()
                .filter(|&p| d.rows.iter().any(|r| r.pinned == p))
                .collect();
            multi_host::tables::sections(&d.rows, &SystemName::ALL, &pinnings)
                .into_iter()
                .map(|(title, t)| format!("#### {title}\n\n{}\n", t.to_markdown()))
                .collect()
        }),
    );
    // ROS 2 types (issue 19): Rust and Python.
    let ros_keys = ros_report::rust_keys_or_missing(r.ros.as_ref());
    let py_keys = ros_report::python_keys_or_missing(r.ros_python.as_ref());
    keys.extend(ros_keys.into_iter().chain(py_keys));
    keys.insert(
        "multi_host.method",
        section(&r.multi_host, "multi_host", |d| bullets(&d.method)),
    );
    let errors = r.errors();
    keys.insert(
        "errors",
        if errors.is_empty() {
            "None.\n".to_owned()
        } else {
            bullets(&errors)
        },
    );

    let page = fill(TEMPLATE, &keys)?;
    if let Some(dir) = a.out.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)?;
    }
    std::fs::write(&a.out, page).with_context(|| format!("writing {}", a.out.display()))?;
    println!("wrote {}", a.out.display());
    for png in figures(&r, &a.img)? {
        println!("wrote {}", png.display());
    }
    Ok(())
}

/// The `rpc` section: the three tables (pinned), the ratios, the targets, the
/// unpinned latency table and the method; failed systems are marked in the cells.
fn rpc_keys(d: &Option<Doc<RpcRow>>, keys: &mut BTreeMap<&str, String>) {
    type Render = fn(&Doc<RpcRow>, &[rpc::System]) -> String;
    let entries: [(&str, Render); 6] = [
        ("rpc.latency", |d, s| {
            rpc::tables::latency(&d.rows, s, &d.errors, true).to_markdown()
        }),
        ("rpc.stress", |d, s| {
            rpc::tables::stress(&d.rows, s, &d.errors, true).to_markdown()
        }),
        ("rpc.in_flight", |d, s| {
            rpc::tables::in_flight(&d.rows, s, &d.errors, true).to_markdown()
        }),
        ("rpc.ratios", |d, s| {
            rpc::tables::ratios(&d.rows, s, true).to_markdown()
        }),
        ("rpc.latency_unpinned", |d, s| {
            if d.rows.iter().any(|r| !r.pinned) {
                rpc::tables::latency(&d.rows, s, &d.errors, false).to_markdown()
            } else {
                "*No unpinned pass in this run (`--pinned-only`).*\n".to_owned()
            }
        }),
        ("rpc.targets", |d, _| {
            rpc::targets::table(&rpc::targets::targets(&d.rows)).to_markdown()
        }),
    ];
    for (key, render) in entries {
        keys.insert(key, section(d, "rpc", |d| render(d, &rpc::System::ALL)));
    }
    keys.insert("rpc.method", section(d, "rpc", |d| bullets(&d.method)));
}

/// The `logging` section: the targets, the four statistics tables with drops, the method.
fn logging_keys(d: &Option<Doc<LogRow>>, keys: &mut BTreeMap<&str, String>) {
    keys.insert(
        "logging.targets",
        section(d, "logging", |d| logging::targets(&d.rows).to_markdown()),
    );
    keys.insert(
        "logging.tables",
        section(d, "logging", |d| {
            logging::tables(&d.rows)
                .into_iter()
                .map(|(title, t)| format!("#### {title}\n\n{}\n", t.to_markdown()))
                .collect()
        }),
    );
    keys.insert(
        "logging.method",
        section(d, "logging", |d| bullets(&d.method)),
    );
}

/// The method statement of an issue-4 JSON (a string), as a paragraph.
fn method_of(v: &Value) -> String {
    let mut s = String::from("Method: ");
    s.push_str(v["method"].as_str().unwrap_or("(not recorded)"));
    if let Some(secs) = v["seconds_per_scenario"]
        .as_f64()
        .or(v["seconds_per_size"].as_f64())
    {
        s.push_str(&format!("; {secs} s per row"));
    }
    if let Some(spin) = v["spin_us"].as_u64() {
        s.push_str(&format!("; final spin {spin} µs"));
    }
    if let Some(cpus) = v["cpus"].as_u64() {
        s.push_str(&format!("; {cpus} CPUs"));
    }
    s.push_str(".\n");
    s
}

/// Replaces every `{{key}}` in `template`; an unknown key is an error.
fn fill(template: &str, keys: &BTreeMap<&str, String>) -> anyhow::Result<String> {
    let mut out = String::with_capacity(template.len() * 2);
    let mut rest = template;
    while let Some(start) = rest.find("{{") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let end = after.find("}}").context("unclosed {{ in the template")?;
        let key = after[..end].trim();
        let value = keys
            .get(key)
            .with_context(|| format!("the template names an unknown key {{{{{key}}}}}"))?;
        out.push_str(value.trim_end_matches('\n'));
        rest = &after[end + 2..];
    }
    out.push_str(rest);
    Ok(out)
}

/// Draws every figure that has data; returns the files written.
fn figures(r: &Results, img: &Path) -> anyhow::Result<Vec<PathBuf>> {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fill_replaces_and_rejects_unknown_keys() {
        let mut keys = BTreeMap::new();
        keys.insert("a", "x\n".to_owned());
        assert_eq!(fill("1 {{a}} 2 {{ a }}", &keys).unwrap(), "1 x 2 x");
        assert!(fill("{{b}}", &keys).is_err());
        assert!(fill("{{a", &keys).is_err());
    }

    #[test]
    fn every_template_key_is_known() {
        // Render with nothing measured: every key must still resolve.
        let dir = std::env::temp_dir().join(format!("horus-report-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let a = Args {
            results: dir.join("none"),
            out: dir.join("out.md"),
            img: dir.join("img"),
            allow_missing: true,
        };
        run(&a).unwrap();
        let page = std::fs::read_to_string(&a.out).unwrap();
        assert!(!page.contains("{{"));
        assert!(page.contains("Not measured in this run"));
        let _ = std::fs::remove_dir_all(&dir);
    }
}
