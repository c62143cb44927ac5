//! The sections of the systems between hosts and ROS 2: `multi_host` (two network
//! namespaces) and `ros_messages` / `ros_python` (ROS 2 message types).

use super::results::Results;
use super::{bullets, section, Keys};
use horus_bench_multi_host_rows::{self as multi_host, SystemName};
use horus_bench_ros::ros_report;

/// `multi_host.*`: one table per cell kind and pinning, the method.
pub(super) fn multi_host(r: &Results, keys: &mut Keys) {
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
    keys.insert(
        "multi_host.method",
        section(&r.multi_host, "multi_host", |d| bullets(&d.method)),
    );
}

/// `ros.*` and `ros_python.*`: the Rust and Python ROS 2 message benchmarks.
pub(super) fn ros_messages(r: &Results, keys: &mut Keys) {
    let ros_keys = ros_report::rust_keys_or_missing(r.ros.as_ref());
    let py_keys = ros_report::python_keys_or_missing(r.ros_python.as_ref());
    keys.extend(ros_keys.into_iter().chain(py_keys));
}
