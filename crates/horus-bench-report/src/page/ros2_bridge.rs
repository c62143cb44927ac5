//! The ROS 2 bridge section: horus ↔ rclpy through `horus ros2` beside rclpy ↔ rclpy,
//! horus Python and horus Rust (the `ros2` benchmark), its two targets and its method.

use super::{bullets, section, Keys};
use horus_bench::suite::Doc;
use horus_bench_ros2_rows::table::{self, Row};
use horus_bench_ros2_rows::targets;

/// `ros2.targets`, `ros2.table`, `ros2.method`.
pub(super) fn ros2_bridge(d: &Option<Doc<Row>>, keys: &mut Keys) {
    keys.insert("ros2.targets", section(d, "ros2", targets));
    keys.insert(
        "ros2.table",
        section(d, "ros2", |d| {
            table::markdown(
                &d.rows,
                &table::sizes_of(&d.rows),
                &table::systems_of(&d.rows),
            )
        }),
    );
    keys.insert("ros2.method", section(d, "ros2", |d| bullets(&d.method)));
}

/// Both targets as a list: each target a bullet, each of its misses and failed
/// measurements a bullet under it.
fn targets(d: &Doc<Row>) -> String {
    let mut out = String::new();
    for v in targets::verdicts(&d.rows, &d.errors) {
        out.push_str(&format!("- target: {}\n", v.headline));
        for detail in &v.details {
            out.push_str(&format!("  - {detail}\n"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use horus_bench::stats::Summary;
    use horus_bench_ros2_rows::targets::measurement;
    use horus_bench_ros2_rows::{System, GAVE_UP};

    fn row(round: usize, system: System, size: usize, mean_ns: u64) -> Row {
        let summary = Summary::from_samples(vec![mean_ns; 4], 4 * mean_ns).unwrap();
        Row::new(round, system, size, summary)
    }

    fn doc(rows: Vec<Row>, errors: Vec<String>) -> Doc<Row> {
        serde_json::from_value(serde_json::json!({
            "benchmark": "ros2",
            "quick": false,
            "machine": serde_json::to_value(horus_bench::report::Machine::detect()).unwrap(),
            "method": ["round trip, blocking"],
            "rows": serde_json::to_value(rows).unwrap(),
            "errors": errors,
        }))
        .unwrap()
    }

    fn render(d: Option<Doc<Row>>) -> Keys {
        let mut keys = Keys::new();
        ros2_bridge(&d, &mut keys);
        keys
    }

    #[test]
    fn a_bridge_slower_than_rclpy_in_one_round_is_a_listed_miss() {
        let rows = vec![
            row(0, System::RclpyRclpy, 64, 300_000),
            row(0, System::RclpyToHorus, 64, 250_000),
            row(0, System::RclpyRclpy, 262_144, 600_000),
            row(0, System::RclpyToHorus, 262_144, 800_000),
        ];
        let keys = render(Some(doc(rows, vec![])));
        let t = &keys["ros2.targets"];
        assert!(
            t.starts_with("- target: horus ↔ rclpy through the bridge"),
            "{t}"
        );
        assert!(t.contains("MISS (1 of 2 comparisons pass)"), "{t}");
        assert!(t.contains("  - miss: round 1 256 KiB rclpy ping ↔ bridge ↔ horus Rust pong: 800 µs vs rclpy 600 µs"), "{t}");
        assert!(t.contains("zero loss under reliable QoS: PASS"), "{t}");
        let table = &keys["ros2.table"];
        assert!(
            table.contains("| 64 B | rclpy ↔ rclpy (Fast DDS) | 300 |"),
            "{table}"
        );
        assert!(
            table.contains("| 256 KiB | rclpy ping ↔ bridge ↔ horus Rust pong | 800 |"),
            "{table}"
        );
        assert!(!table.contains("horus Python"), "{table}");
        assert_eq!(keys["ros2.method"], "- round trip, blocking\n");
    }

    #[test]
    fn a_failed_bridged_measurement_is_listed_and_misses_both_targets() {
        // Round 2's bridged measurement failed: rclpy has a row there, the bridge none.
        let rows = vec![
            row(0, System::RclpyRclpy, 64, 300_000),
            row(0, System::HorusToRclpy, 64, 250_000),
            row(1, System::RclpyRclpy, 64, 300_000),
        ];
        let error = format!(
            "{}: {GAVE_UP} 5 round trips lost in a row (5 lost, 0 completed)",
            measurement(1, 64, System::HorusToRclpy)
        );
        let keys = render(Some(doc(rows, vec![error.clone()])));
        let t = &keys["ros2.targets"];
        assert!(
            t.contains("in every round: MISS (1 of 1 comparisons pass; 1 measurements failed)"),
            "{t}"
        );
        assert!(
            t.contains(&format!("  - not compared (measurement failed): {error}\n")),
            "{t}"
        );
        assert!(
            t.contains("zero loss under reliable QoS: MISS (0 round trips lost, 0 messages dropped by the bridge, 1 measurements failed, 1 of them given up after losses in a row)"),
            "{t}"
        );
        assert!(
            t.contains(&format!("  - failed measurement: {error}\n")),
            "{t}"
        );
    }

    #[test]
    fn without_its_json_the_section_says_so() {
        let keys = render(None);
        for k in ["ros2.targets", "ros2.table", "ros2.method"] {
            assert_eq!(keys[k], "*Not measured in this run (ros2.json missing).*\n");
        }
    }
}
