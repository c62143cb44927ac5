//! The `Block` publisher section: the `block_wake` benchmark (how fast a publisher waiting
//! for room wakes, and what it burns while it waits), with `horus-bench`'s table and method.

use super::{section, Keys};
use horus_bench::block_wake::{method, tables, BlockWakeDoc};

/// `block_wake.table` (wake-up latency, then CPU while waiting) and `block_wake.method`.
pub(super) fn block_wake(d: &Option<BlockWakeDoc>, keys: &mut Keys) {
    keys.insert(
        "block_wake.table",
        section(d, "block_wake", |d| {
            tables(d)
                .iter()
                .map(|t| t.to_markdown())
                .collect::<Vec<_>>()
                .join("\n")
        }),
    );
    keys.insert("block_wake.method", section(d, "block_wake", method));
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `block_wake --json` (the binary's shape).
    const BLOCK_WAKE_JSON: &str = include_str!("../../tests/fixtures/block_wake.json");

    fn render(d: Option<BlockWakeDoc>) -> Keys {
        let mut keys = Keys::new();
        block_wake(&d, &mut keys);
        keys
    }

    #[test]
    fn the_section_renders_from_the_binarys_json() {
        let keys = render(Some(serde_json::from_str(BLOCK_WAKE_JSON).unwrap()));
        let table = &keys["block_wake.table"];
        assert!(
            table.contains("| 2000 | 21.3 µs | 52.8 µs | 131.0 µs | 12.4 ms | 1 |"),
            "{table}"
        );
        assert!(table.contains("| 3 | 4.1 | 3.0, 6.4, 2.9 |"), "{table}");
        let method = &keys["block_wake.method"];
        assert!(
            method.starts_with("Method: one topic of depth 1"),
            "{method}"
        );
        assert!(method.contains("(pinned to CPUs 0 and 1)"), "{method}");
    }

    #[test]
    fn a_missing_block_wake_json_says_so_in_every_key() {
        let keys = render(None);
        for key in ["block_wake.table", "block_wake.method"] {
            assert_eq!(
                keys[key], "*Not measured in this run (block_wake.json missing).*\n",
                "{key}"
            );
        }
    }
}
