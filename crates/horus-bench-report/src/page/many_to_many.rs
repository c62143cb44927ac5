//! `many_to_many.*`: 4 publisher and 4 subscriber processes, horus beside iceoryx2
//! with the same topology, over interleaved rounds.

use super::results::Results;
use super::{bullets, section, Keys};
use horus_bench::many_to_many;
use horus_bench::tables;

/// `many_to_many.table` (per message: both round trips and the per-round ratios)
/// and `many_to_many.method`.
pub(super) fn many_to_many(r: &Results, keys: &mut Keys) {
    keys.insert(
        "many_to_many.table",
        section(&r.many_to_many, "many_to_many", |d| {
            let comparisons = many_to_many::compare(&d.rows);
            if comparisons.is_empty() {
                "*horus and iceoryx2 were not both measured in any round.*\n".to_owned()
            } else {
                let pinned = d.rows.iter().all(|r| r.pinned);
                tables::many_to_many(&comparisons, &many_to_many::placement(&d.rows), pinned)
                    .to_markdown()
            }
        }),
    );
    keys.insert(
        "many_to_many.method",
        section(&r.many_to_many, "many_to_many", |d| bullets(&d.method)),
    );
}
