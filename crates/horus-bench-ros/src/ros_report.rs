//! The ROS 2 sections of `docs/benchmarks.md`: the `ros_messages` tables and targets
//! (Rust) and the `python/bench/ros_python.py` tables and targets (Python vs rclpy).

use horus_bench::markdown::Table;
use horus_bench::suite::Doc;
use serde_json::Value;

use crate::ros_rows::{self, RosRow};
use crate::ros_tables as tables;

/// The keys of the Rust section, or each saying the file is missing.
pub fn rust_keys_or_missing(d: Option<&Doc<RosRow>>) -> Vec<(&'static str, String)> {
    match d {
        Some(d) => rust_keys(d),
        None => [
            "ros.targets",
            "ros.round_trips",
            "ros.loan_build",
            "ros.method",
        ]
        .into_iter()
        .map(|k| (k, missing("ros_messages")))
        .collect(),
    }
}

/// The keys of the Python section, or each saying the file is missing.
pub fn python_keys_or_missing(v: Option<&Value>) -> Vec<(&'static str, String)> {
    match v {
        Some(v) => python_keys(v),
        None => [
            "ros_python.targets",
            "ros_python.recv",
            "ros_python.pingpong",
            "ros_python.method",
            "ros_python.build",
        ]
        .into_iter()
        .map(|k| (k, missing("ros_python")))
        .collect(),
    }
}

fn missing(what: &str) -> String {
    format!("*Not measured in this run ({what}.json missing).*\n")
}

/// Template keys of the `ros_messages` section, rendered from its document.
pub fn rust_keys(d: &Doc<RosRow>) -> Vec<(&'static str, String)> {
    let rtt = ros_rows::compare_rtt(&d.rows);
    let build = ros_rows::compare_build(&d.rows);
    let targets: String = ros_rows::targets(&rtt, &build)
        .iter()
        .map(|t| format!("- {}\n", t.sentence()))
        .collect();
    vec![
        ("ros.targets", targets),
        (
            "ros.round_trips",
            tables::ros_round_trips(&rtt).to_markdown(),
        ),
        (
            "ros.loan_build",
            tables::ros_loan_builds(&build).to_markdown(),
        ),
        ("ros.method", lines(&d.method)),
    ]
}

/// Template keys of the Python section, rendered from `ros_python.json`.
pub fn python_keys(v: &Value) -> Vec<(&'static str, String)> {
    let method: Vec<String> = v["method"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|m| m.as_str().map(str::to_owned))
        .collect();
    let mut errors: String = v["errors"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .map(|e| format!("- failed: {e}\n"))
        .collect();
    if !errors.is_empty() {
        errors.insert_str(0, "\n**Failed measurements:**\n\n");
    }
    vec![
        ("ros_python.targets", python_targets(v) + &errors),
        ("ros_python.recv", recv_table(v).to_markdown()),
        ("ros_python.pingpong", pingpong_table(v).to_markdown()),
        (
            "ros_python.method",
            format!(
                "{}- Python {}, {}\n",
                lines(&method),
                v["python"].as_str().unwrap_or("?"),
                v["machine"].as_str().unwrap_or("?")
            ),
        ),
        ("ros_python.build", build_table(v).to_markdown()),
    ]
}

/// `64 B`, `4 KiB`, `1 MiB`.
fn bytes(n: u64) -> String {
    match n {
        n if n >= 1 << 20 && n % (1 << 20) == 0 => format!("{} MiB", n >> 20),
        n if n >= 1 << 10 && n % (1 << 10) == 0 => format!("{} KiB", n >> 10),
        n => format!("{n} B"),
    }
}

fn lines(v: &[String]) -> String {
    v.iter().map(|l| format!("- {l}\n")).collect()
}

fn floats(v: &Value) -> Vec<f64> {
    v.as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_f64)
        .collect()
}

fn us_range(v: &Value) -> String {
    let f = floats(v);
    if f.is_empty() {
        return "–".to_owned();
    }
    let lo = f.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = f.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    format!("{}–{}", us(lo), us(hi))
}

fn us(v: f64) -> String {
    match v {
        v if v >= 1000.0 => format!("{:.2} ms", v / 1000.0),
        v if v >= 100.0 => format!("{v:.0} µs"),
        v => format!("{v:.2} µs"),
    }
}

fn recv_table(v: &Value) -> Table {
    let mut t = Table::new([
        "rounds",
        "PointCloud2 1 MiB: try_recv + .data (p50 range)",
        "CmdVel: try_recv (p50 range)",
        "cloud ÷ CmdVel median",
        "min–max",
    ]);
    let r = &v["summary"]["recv"];
    if r.is_object() {
        t.row([
            floats(&r["ratios"]).len().to_string(),
            us_range(&r["cloud_p50"]),
            us_range(&r["cmdvel_p50"]),
            format!("{:.2}", r["median"].as_f64().unwrap_or(f64::NAN)),
            format!(
                "{:.2}–{:.2}",
                r["min"].as_f64().unwrap_or(f64::NAN),
                r["max"].as_f64().unwrap_or(f64::NAN)
            ),
        ]);
    }
    t.note(
        "p50 range = the smallest and largest of the rounds' medians; ratio per round of the \
         medians. Only the try_recv call that returns the message is timed (and, for the cloud, \
         the .data NumPy view); the publisher is another process.",
    );
    t
}

/// `build`: a large message filled through `send()` against through a loan.
fn build_table(v: &Value) -> Table {
    let mut t = Table::new([
        "message",
        "rounds",
        "send(): fill + send (p50 range)",
        "loan(): fill in place + send (p50 range)",
        "loan ÷ send median",
        "min–max",
    ]);
    for e in v["summary"]["build"].as_array().into_iter().flatten() {
        let what = match e["kind"].as_str() {
            Some("cloud") => "PointCloud2 65,536 points",
            Some("image") => "Image 640x480 rgb8",
            _ => "?",
        };
        t.row([
            format!("{what} ({})", bytes(e["size"].as_u64().unwrap_or(0))),
            floats(&e["ratios"]).len().to_string(),
            us_range(&e["send_p50"]),
            us_range(&e["loan_p50"]),
            format!("{:.2}", e["median"].as_f64().unwrap_or(f64::NAN)),
            format!(
                "{:.2}–{:.2}",
                e["min"].as_f64().unwrap_or(f64::NAN),
                e["max"].as_f64().unwrap_or(f64::NAN)
            ),
        ]);
    }
    t.note(
        "One process pinned to one CPU fills the message's data from a source frame (np.copyto, \
         every byte) and publishes it: send() fills the message's own array, which send copies \
         into the chunk; loan() fills the chunk through the loan's view and sends it without a \
         copy. Timed: fill + send (making the loan included). p50 range = the smallest and \
         largest of the rounds' medians; ratio per round of the medians.",
    );
    t
}

fn pingpong_table(v: &Value) -> Table {
    let mut t = Table::new([
        "size",
        "horus (blocking) p50",
        "horus (busy-poll) p50",
        "rclpy + Fast DDS p50",
        "rclpy ÷ horus (blocking)",
        "rclpy ÷ horus (busy-poll)",
    ]);
    let entries: Vec<&Value> = v["summary"]["pingpong"]
        .as_array()
        .into_iter()
        .flatten()
        .collect();
    let mut sizes: Vec<u64> = entries.iter().filter_map(|e| e["size"].as_u64()).collect();
    sizes.sort_unstable();
    sizes.dedup();
    for size in sizes {
        let of = |system: &str| {
            entries
                .iter()
                .find(|e| e["size"].as_u64() == Some(size) && e["system"] == system)
                .copied()
        };
        let speed = |e: Option<&Value>| match e {
            Some(e) if e["median"].is_number() => format!(
                "{:.1}× ({:.1}–{:.1}×)",
                e["median"].as_f64().unwrap_or(f64::NAN),
                e["min"].as_f64().unwrap_or(f64::NAN),
                e["max"].as_f64().unwrap_or(f64::NAN)
            ),
            _ => "–".to_owned(),
        };
        let (h, b) = (of("horus"), of("horus-busy"));
        t.row([
            bytes(size),
            h.map_or("–".to_owned(), |e| us_range(&e["horus_p50"])),
            b.map_or("–".to_owned(), |e| us_range(&e["horus_p50"])),
            h.map_or("–".to_owned(), |e| us_range(&e["rclpy_p50"])),
            speed(h),
            speed(b),
        ]);
    }
    t.note(
        "p50 = ranges over rounds of each round's median round trip; rclpy ÷ horus = per-round \
         ratio of medians, median (min–max). Python on both sides, std_msgs/UInt8MultiArray, \
         same work on both sides (every byte written by ping, read once by pong and once by ping).",
    );
    t
}

fn python_targets(v: &Value) -> String {
    let mut out = String::new();
    let r = &v["summary"]["recv"];
    if r.is_object() {
        let (min, max) = (
            r["min"].as_f64().unwrap_or(f64::NAN),
            r["max"].as_f64().unwrap_or(f64::NAN),
        );
        out.push_str(&format!(
            "- Python subscriber getting a 1 MiB PointCloud2's data as a NumPy view ≤ 2 × a \
             Python CmdVel receive: ratio median {:.2}, range {min:.2}–{max:.2} over {} rounds — {}.\n",
            r["median"].as_f64().unwrap_or(f64::NAN),
            floats(&r["ratios"]).len(),
            verdict(max <= 2.0, min > 2.0, &format!("{:.0}–{:.0} %", (min / 2.0 - 1.0) * 100.0, (max / 2.0 - 1.0) * 100.0))
        ));
    }
    for e in v["summary"]["pingpong"].as_array().into_iter().flatten() {
        let size = e["size"].as_u64().unwrap_or(0);
        if !(size == 64 || size == 1 << 20) || !e["median"].is_number() {
            continue;
        }
        let (min, max) = (
            e["min"].as_f64().unwrap_or(f64::NAN),
            e["max"].as_f64().unwrap_or(f64::NAN),
        );
        out.push_str(&format!(
            "- horus Python ({}) ≥ 50 × faster than rclpy + Fast DDS at {}: rclpy ÷ horus median \
             {:.1}×, range {min:.1}–{max:.1}× over {} rounds — {}.\n",
            if e["system"] == "horus" {
                "blocking recv"
            } else {
                "busy-poll"
            },
            bytes(size),
            e["median"].as_f64().unwrap_or(f64::NAN),
            floats(&e["speedups"]).len(),
            verdict(
                min >= 50.0,
                max < 50.0,
                &format!("{:.1}–{:.1}× short", 50.0 / max, 50.0 / min)
            )
        ));
    }
    if out.is_empty() {
        out.push_str("*No Python ROS 2 measurement in this run.*\n");
    }
    out
}

fn verdict(met_every: bool, missed_every: bool, by: &str) -> String {
    if met_every {
        "**met** in every round".to_owned()
    } else if missed_every {
        format!("**missed** in every round ({by})")
    } else {
        "**not met in every round**".to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn python_keys_render_targets_from_the_summary() {
        let v = serde_json::json!({
            "python": "3.11", "machine": "x86_64", "method": ["m"], "errors": [],
            "summary": {
                "recv": {"ratios": [3.0, 3.5], "median": 3.25, "min": 3.0, "max": 3.5,
                         "cloud_p50": [3.0, 3.5], "cmdvel_p50": [1.0, 1.0]},
                "pingpong": [{"system": "horus", "size": 64, "horus_p50": [8.0], "rclpy_p50": [433.0],
                              "speedups": [54.1], "median": 54.1, "min": 54.1, "max": 54.1}]
            }
        });
        let keys = python_keys(&v);
        let targets = &keys[0].1;
        assert!(
            targets.contains("**missed** in every round (50–75 %)"),
            "{targets}"
        );
        assert!(
            targets.contains("at 64 B: rclpy ÷ horus median 54.1×"),
            "{targets}"
        );
        assert!(targets.contains("**met**"), "{targets}");
        assert!(keys[2].1.contains("54.1×"), "{}", keys[2].1);
    }

    #[test]
    fn the_build_table_renders_loan_against_send_per_message() {
        let v = serde_json::json!({
            "python": "3.11", "machine": "x86_64", "method": [], "errors": [],
            "summary": {"build": [{"kind": "cloud", "size": 1048576, "loan_p50": [31.5, 42.6],
                                   "send_p50": [47.2, 47.1], "ratios": [0.67, 0.9],
                                   "median": 0.78, "min": 0.67, "max": 0.9}]}
        });
        let keys = python_keys(&v);
        let (_, table) = keys.iter().find(|(k, _)| *k == "ros_python.build").unwrap();
        assert!(
            table.contains("PointCloud2 65,536 points (1 MiB)"),
            "{table}"
        );
        assert!(table.contains("31.50 µs–42.60 µs"), "{table}");
        assert!(table.contains("0.67–0.90"), "{table}");
    }
}
