//! The logging section: horus-log beside tracing and env_logger.

use super::{bullets, section, Keys};
use horus_bench::logging::{self, LogRow};
use horus_bench::suite::Doc;

/// The `logging` section: the targets, the statistics tables (average; median, p99 and max
/// per call-in-batch and per call) with the drops, the method.
pub(super) fn logging(d: &Option<Doc<LogRow>>, keys: &mut Keys) {
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
