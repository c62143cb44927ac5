//! The Python ROS 2 messages ping-pong: `python/bench/ros_messages_py.py --json`
//! (`ros_messages_py.json`), beside the Rust `ros_messages` round trips of the same
//! messages.

use serde_json::Value;

use super::results::Results;
use super::{missing, Keys};
use horus_bench::markdown::Table;
use horus_bench::report::ns;
use horus_bench_ros::ros_rows::{self, RttComparison};

/// `ros_messages_py.table` (the table, the run's settings, failed cases) and
/// `ros_messages_py.method`; each says the file is missing when it is.
pub(super) fn ros_messages_py(r: &Results, keys: &mut Keys) {
    let Some(v) = r.ros_messages_py.as_ref() else {
        keys.insert("ros_messages_py.table", missing("ros_messages_py"));
        keys.insert("ros_messages_py.method", missing("ros_messages_py"));
        return;
    };
    let rust = r
        .ros
        .as_ref()
        .map(|d| ros_rows::compare_rtt(&d.rows))
        .unwrap_or_default();
    keys.insert("ros_messages_py.table", table_and_run(v, &rust));
    keys.insert("ros_messages_py.method", method(v));
}

/// The table, a line saying how this run was made, and its failed cases.
fn table_and_run(v: &Value, rust: &[RttComparison]) -> String {
    let mut out = table(v, rust).to_markdown();
    out.push_str(&format!(
        "\nThis run: recv {}, {}, Python {}, {}{}.\n",
        recv_mode(v),
        match v["cpus"].as_array() {
            Some(c) => format!(
                "ping pinned to CPU {}, pong to CPU {}",
                c.first().map_or("?".to_owned(), Value::to_string),
                c.get(1).map_or("?".to_owned(), Value::to_string)
            ),
            None => "unpinned".to_owned(),
        },
        v["python"].as_str().unwrap_or("?"),
        v["machine"].as_str().unwrap_or("?"),
        if v["quick"] == true {
            ", quick mode (a smoke run, not a measurement)"
        } else {
            ""
        }
    ));
    let errors: Vec<&str> = v["errors"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    if !errors.is_empty() {
        out.push_str("\n**Failed measurements:**\n\n");
        for e in errors {
            out.push_str(&format!("- failed: {e}\n"));
        }
    }
    out
}

/// One row per summarised case: each percentile's median over rounds (min–max), in µs
/// (the template's prose says so); the Rust column from this run's pinned ROS-path rows.
fn table(v: &Value, rust: &[RttComparison]) -> Table {
    let mut t = Table::new([
        "message",
        "CDR body",
        "recv",
        "rounds",
        "p50",
        "p90",
        "p99",
        "min",
        "Rust p50 (range, busy-poll)",
    ])
    .left(0)
    .left(2);
    let recv = recv(v);
    for e in v["summary"].as_array().into_iter().flatten() {
        let loan = e["loan"] == true;
        let body = e["body"].as_u64();
        let rust_p50 = rust
            .iter()
            .find(|c| c.pinned && Some(c.body_bytes as u64) == body)
            .filter(|_| !loan)
            .and_then(|c| {
                let (lo, hi) = (c.ros_ns.iter().min()?, c.ros_ns.iter().max()?);
                Some(format!("{}–{}", ns(*lo), ns(*hi)))
            })
            .unwrap_or_default();
        t.row([
            format!(
                "{}{}",
                e["label"].as_str().unwrap_or("?"),
                if loan { " (loan)" } else { "" }
            ),
            body.map_or("?".to_owned(), |b| format!("{b} B")),
            recv.clone(),
            e["rounds"]
                .as_u64()
                .map_or("?".to_owned(), |n| n.to_string()),
            spread(&e["p50"]),
            spread(&e["p90"]),
            spread(&e["p99"]),
            spread(&e["min"]),
            rust_p50,
        ]);
    }
    t
}

/// `blocking` or `spin 10⁶` (the polls before the futex).
fn recv_mode(v: &Value) -> String {
    match v["spin"].as_i64() {
        Some(n) if n > 0 => format!("spin {}", power_of_ten(n)),
        _ => "blocking".to_owned(),
    }
}

/// [`recv_mode`], `, unpinned` when so.
fn recv(v: &Value) -> String {
    let mode = recv_mode(v);
    if v["cpus"].is_array() {
        mode
    } else {
        format!("{mode}, unpinned")
    }
}

/// `1000000` as `10⁶`; anything else as itself.
fn power_of_ten(n: i64) -> String {
    const SUP: [char; 10] = ['⁰', '¹', '²', '³', '⁴', '⁵', '⁶', '⁷', '⁸', '⁹'];
    let (mut m, mut exp) = (n, 0u32);
    while m >= 10 && m % 10 == 0 {
        m /= 10;
        exp += 1;
    }
    if m == 1 && exp >= 2 {
        let e: String = exp
            .to_string()
            .bytes()
            .map(|d| SUP[usize::from(d - b'0')])
            .collect();
        format!("10{e}")
    } else {
        n.to_string()
    }
}

/// `{"min", "median", "max"}` as `median (min–max)`.
fn spread(s: &Value) -> String {
    match (s["median"].as_f64(), s["min"].as_f64(), s["max"].as_f64()) {
        (Some(m), Some(lo), Some(hi)) => format!("{} ({}–{})", us(m), us(lo), us(hi)),
        _ => "–".to_owned(),
    }
}

/// One decimal below 100 µs, whole µs from there.
fn us(v: f64) -> String {
    if v >= 100.0 {
        format!("{v:.0}")
    } else {
        format!("{v:.1}")
    }
}

fn method(v: &Value) -> String {
    let mut out: String = v["method"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .map(|l| format!("- ros_messages_py: {l}\n"))
        .collect();
    out.push_str(&format!(
        "- ros_messages_py: Python {}, {}\n",
        v["python"].as_str().unwrap_or("?"),
        v["machine"].as_str().unwrap_or("?")
    ));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc() -> Value {
        serde_json::json!({
            "benchmark": "ros_messages_py", "quick": false, "python": "3.11.7",
            "machine": "x86_64", "spin": 1000000, "cpus": [0, 1],
            "method": ["interleaved rounds: 5"], "errors": ["tf50: pong exited 1"],
            "summary": [
                {"label": "LaserScan 360", "loan": false, "body": 2936, "rounds": 5,
                 "p50": {"min": 12.0, "median": 12.25, "max": 16.4},
                 "p90": {"min": 12.4, "median": 12.9, "max": 18.6},
                 "p99": {"min": 15.4, "median": 19.0, "max": 32.7},
                 "min": {"min": 11.7, "median": 11.9, "max": 15.1}},
                {"label": "Image 640x480 rgb8", "loan": true, "body": 921656, "rounds": 5,
                 "p50": {"min": 149.0, "median": 155.2, "max": 984.0},
                 "p90": {"min": 154.0, "median": 173.0, "max": 1190.0},
                 "p99": {"min": 197.0, "median": 223.0, "max": 1910.0},
                 "min": {"min": 134.0, "median": 146.0, "max": 841.0}}
            ]
        })
    }

    #[test]
    fn the_table_renders_each_case_with_its_spread_recv_mode_and_failures() {
        let out = table_and_run(&doc(), &[]);
        assert!(
            out.contains("| LaserScan 360 | 2936 B | spin 10⁶ | 5 | 12.2 (12.0–16.4) | 12.9 (12.4–18.6) | 19.0 (15.4–32.7) | 11.9 (11.7–15.1) |  |"),
            "{out}"
        );
        assert!(
            out.contains("| Image 640x480 rgb8 (loan) | 921656 B | spin 10⁶ | 5 | 155 (149–984) |"),
            "{out}"
        );
        assert!(
            out.contains("ping pinned to CPU 0, pong to CPU 1, Python 3.11.7"),
            "{out}"
        );
        assert!(out.contains("- failed: tf50: pong exited 1"), "{out}");
    }

    #[test]
    fn an_unpinned_blocking_run_says_so() {
        let mut v = doc();
        v["cpus"] = Value::Null;
        v.as_object_mut().unwrap().remove("spin");
        let out = table_and_run(&v, &[]);
        assert!(out.contains("| blocking, unpinned |"), "{out}");
        assert!(
            out.contains("This run: recv blocking, unpinned, Python"),
            "{out}"
        );
    }

    #[test]
    fn the_rust_column_takes_the_pinned_ros_path_of_the_same_body_and_not_for_loans() {
        let cmp = |pinned: bool, lo: u64, hi: u64| RttComparison {
            kind: horus_bench_ros::ros_kinds::RosKind::Scan360,
            pinned,
            body_bytes: 2936,
            ros_ns: vec![hi, lo],
            fixed_ns: vec![900, 900],
            ratios: horus_bench_ros::ros_rows::Ratios {
                each: vec![1.2, 1.3],
                median: 1.25,
                min: 1.2,
                max: 1.3,
            },
        };
        let rust = [cmp(false, 9_000, 9_500), cmp(true, 1_140, 4_100)];
        let mut v = doc();
        v["summary"][1]["body"] = 2936.into();
        let out = table(&v, &rust).to_markdown();
        let scan = out
            .lines()
            .find(|l| l.starts_with("| LaserScan 360 "))
            .unwrap();
        assert!(
            scan.ends_with(&format!("| {}–{} |", ns(1_140), ns(4_100))),
            "{out}"
        );
        let loan = out.lines().find(|l| l.contains("(loan)")).unwrap();
        assert!(loan.ends_with("|  |"), "{out}");
    }

    #[test]
    fn powers_of_ten_are_written_as_such() {
        assert_eq!(power_of_ten(1_000_000), "10⁶");
        assert_eq!(power_of_ten(100), "10²");
        assert_eq!(power_of_ten(10), "10");
        assert_eq!(power_of_ten(1500), "1500");
    }

    #[test]
    fn the_method_lists_the_scripts_lines() {
        let m = method(&doc());
        assert!(
            m.starts_with("- ros_messages_py: interleaved rounds: 5\n"),
            "{m}"
        );
        assert!(
            m.ends_with("- ros_messages_py: Python 3.11.7, x86_64\n"),
            "{m}"
        );
    }
}
