//! The transforms section: the `tf` benchmark (lookups from Rust and Python on the host's
//! shared buffer and on per-process buffers, and the host CPU of keeping them fed), with
//! the tables and targets of `horus-bench-ros`.

use super::{bullets, section, Keys};
use horus_bench_ros::tf_rows::TfDoc;
use horus_bench_ros::tf_tables;

/// `tf.lookups`, `tf.cpu` (per buffer, then per round), `tf.targets`, `tf.method`.
pub(super) fn tf(d: &Option<TfDoc>, keys: &mut Keys) {
    keys.insert(
        "tf.lookups",
        section(d, "tf", |d| tf_tables::lookups(d).to_markdown()),
    );
    keys.insert(
        "tf.cpu",
        section(d, "tf", |d| {
            format!(
                "{}\n{}",
                tf_tables::cpu(d).to_markdown(),
                tf_tables::cpu_per_round(d).to_markdown()
            )
        }),
    );
    keys.insert(
        "tf.targets",
        section(d, "tf", |d| tf_tables::targets(d).to_markdown()),
    );
    keys.insert(
        "tf.method",
        section(d, "tf", |d| bullets(&tf_tables::method(d))),
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `tf --json` of a run with Python and two rounds (the binary's shape, derived
    /// fields included, which the report does not read).
    const TF_JSON: &str = include_str!("../../tests/fixtures/tf.json");

    fn render(d: Option<TfDoc>) -> Keys {
        let mut keys = Keys::new();
        tf(&d, &mut keys);
        keys
    }

    #[test]
    fn the_section_renders_from_the_binarys_json() {
        let keys = render(Some(serde_json::from_str(TF_JSON).unwrap()));
        let lookups = &keys["tf.lookups"];
        assert!(
            lookups.contains("| Rust | shared | 876 | 1246 | 962 |"),
            "{lookups}"
        );
        assert!(
            lookups.contains("| Python | per-process | 1542 | 2063 | 1800 |"),
            "{lookups}"
        );
        let cpu = &keys["tf.cpu"];
        assert!(
            cpu.contains("| shared | 0.113 | 0.009 (1) | 0.0055 | 0.014 |"),
            "{cpu}"
        );
        assert!(
            cpu.contains("| per-process | 0.521 | 0.521 (20) | — |"),
            "{cpu}"
        );
        assert!(cpu.contains("| 1 | 0.231 × |"), "{cpu}");
        assert!(cpu.contains("| 2 | 0.200 × |"), "{cpu}");
        let targets = &keys["tf.targets"];
        assert!(
            targets.contains("| Rust lookup median ≤ 1 µs (shared buffer) | 876 ns | PASS |"),
            "{targets}"
        );
        // This document's Python ran in one of its two rounds: never PASS.
        assert!(
            targets.contains(
                "| Python lookup median ≤ 5 µs (shared buffer) | 1312 ns | MISS (incomplete: 1 \
                 of 2 rounds) | 1 of 2 |"
            ),
            "{targets}"
        );
        assert!(
            targets.contains("range 0.200–0.231) | 0.215 × | MISS | 2 of 2 |"),
            "{targets}"
        );
        // Each figure says the rounds it is over.
        assert!(lookups.contains("| 962 | 2 of 2 |"), "{lookups}");
        assert!(lookups.contains("| 1800 | 1 of 2 |"), "{lookups}");
        let method = &keys["tf.method"];
        assert!(method.starts_with("- lookups: a 5-deep chain"), "{method}");
        assert!(method.contains("- 2 rounds, the two buffers"), "{method}");
    }

    #[test]
    fn a_round_that_did_not_measure_a_figure_is_never_passed() {
        let mut d: TfDoc = serde_json::from_str(TF_JSON).unwrap();
        d.lookups.retain(|r| r.round == 0);
        let incomplete = "| Rust lookup median ≤ 1 µs (shared buffer) | 901 ns | MISS \
                          (incomplete: 1 of 2 rounds) | 1 of 2 |";
        // With an error naming the round, or none at all: the same verdict.
        for errors in [
            vec!["round 2: lookups: no map <- c0_f5 after 20 s".to_owned()],
            vec![],
        ] {
            d.errors = errors;
            let keys = render(Some(d.clone()));
            let targets = &keys["tf.targets"];
            assert!(targets.contains(incomplete), "{targets}");
        }
    }

    #[test]
    fn a_missing_tf_json_says_so_in_every_key() {
        let keys = render(None);
        for key in ["tf.lookups", "tf.cpu", "tf.targets", "tf.method"] {
            assert_eq!(
                keys[key], "*Not measured in this run (tf.json missing).*\n",
                "{key}"
            );
        }
    }
}
