//! Text or JSON output, chosen once by the global `--json` flag.

use serde::Serialize;

/// Where a verb prints its results.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Output {
    json: bool,
}

// Some methods are used only by verbs still being written.
#[allow(dead_code)]
impl Output {
    pub(crate) fn new(json: bool) -> Self {
        Self { json }
    }

    /// Whether `--json` was given.
    pub(crate) fn is_json(&self) -> bool {
        self.json
    }

    /// Prints one JSON value on one line (a document, or one line of a JSON Lines stream).
    pub(crate) fn json_line<T: Serialize>(&self, value: &T) {
        match serde_json::to_string(value) {
            Ok(s) => println!("{s}"),
            Err(e) => eprintln!("horus: cannot encode JSON: {e}"),
        }
    }

    /// Reports a failure: on stderr as text, or as `{"error": ...}` on stdout with `--json`.
    pub(crate) fn error(&self, e: &anyhow::Error) {
        if self.json {
            self.json_line(&serde_json::json!({ "error": format!("{e:#}") }));
        } else {
            eprintln!("horus: {e:#}");
        }
    }
}
