//! The services section: the `rpc` benchmark (horus services beside iceoryx2,
//! Zenoh queryables and gRPC).

use super::{bullets, section, Keys};
use horus_bench::rpc::{self, rows::RpcRow};
use horus_bench::suite::Doc;

/// The `rpc` section: the three tables (pinned), the ratios, the targets, the
/// unpinned latency table and the method; failed systems are marked in the cells.
pub(super) fn services(d: &Option<Doc<RpcRow>>, keys: &mut Keys) {
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
