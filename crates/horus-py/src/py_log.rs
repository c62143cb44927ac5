//! Python's `logging` on the same path as Rust's log macros: one record into this
//! process's horus-log ring (`horus._log.HorusHandler` calls it). The message arrives
//! formatted by Python; the record is a bridged one (target, file, line, message, fields).

use pyo3::prelude::*;

/// Writes one record: level 0–4 (trace … error; out-of-range values are clamped),
/// logger name as target, source file and line, the formatted message, and string fields.
#[pyfunction]
#[pyo3(signature = (level, target, file, line, message, fields = Vec::new()))]
pub(crate) fn log_record(
    level: u32,
    target: &str,
    file: &str,
    line: u32,
    message: &str,
    fields: Vec<(String, String)>,
) {
    let level = horus_log::Level::from_u32(level.min(4)).unwrap_or(horus_log::Level::Error);
    let fields: Vec<(&str, &dyn horus_log::Value)> = fields
        .iter()
        .map(|(k, v)| (k.as_str(), v as &dyn horus_log::Value))
        .collect();
    horus_log::__private::write_dynamic(level, target, file, line, message, &fields);
}

/// Prints what is left, marks this process's log segment closed and removes it
/// (`horus._log` registers it with `atexit`).
#[pyfunction]
pub(crate) fn log_shutdown(py: Python<'_>) {
    py.detach(horus_log::shutdown);
}

/// This process's log segment (`/horus.<ns>.log.<pid>`), creating the logger if needed;
/// None if it could not be created.
#[pyfunction]
pub(crate) fn log_segment_name() -> Option<String> {
    horus_log::segment_name()
}
