//! `--status` of a running bridge process (`horus bridge`, `horus ros2`): what the status file
//! it keeps says, or that none runs (exit status 1).

use std::process::ExitCode;

use serde::Serialize;
use serde_json::json;

use crate::output::Output;

/// Prints `found` (as one JSON line, or with `print`), or `no_bridge` when no bridge runs for
/// `namespace`.
pub(crate) fn report<S: Serialize>(
    found: Option<S>,
    namespace: &str,
    no_bridge: &str,
    out: &Output,
    print: impl FnOnce(&S),
) -> ExitCode {
    match found {
        None => {
            if out.is_json() {
                out.json_line(&json!({ "running": false, "namespace": namespace }));
            } else {
                println!("{no_bridge}");
            }
            ExitCode::from(1)
        }
        Some(s) => {
            if out.is_json() {
                out.json_line(&s);
            } else {
                print(&s);
            }
            ExitCode::SUCCESS
        }
    }
}
