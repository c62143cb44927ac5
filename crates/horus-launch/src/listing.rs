//! What `horus launch --check` shows of a loaded plan: one line (or JSON object) per
//! process with what it runs, where, after what, and its restart policy; and a refused
//! file's error as JSON.

use serde_json::{json, Value};

use crate::spec::{LoadError, Plan};

impl Plan {
    /// One line per process, then `FILE: ok, N processes`.
    pub fn check_text(&self) -> String {
        let mut text = String::new();
        for p in &self.processes {
            let mut line = format!("{}: {}", p.name, p.argv.join(" "));
            if let Some(ns) = &p.namespace {
                line += &format!("  [namespace {ns}]");
            }
            if !p.after.is_empty() {
                let after: Vec<&str> = p.after.iter().map(|(a, _)| a.as_str()).collect();
                line += &format!("  [after {}]", after.join(", "));
            }
            if !p.after_topic.is_empty() {
                line += &format!("  [after topic {}]", p.after_topic.join(", "));
            }
            line += &format!("  [restart {}]", p.restart.describe());
            text += &line;
            text.push('\n');
        }
        text += &format!(
            "{}: ok, {} processes",
            self.file.display(),
            self.processes.len()
        );
        text
    }

    /// The `--check --json` document: the file and every process.
    pub fn check_json(&self) -> Value {
        let procs: Vec<_> = self
            .processes
            .iter()
            .map(|p| {
                json!({
                    "name": p.name,
                    "defined_at": p.origin.to_string(),
                    "argv": p.argv,
                    "namespace": p.namespace,
                    "after": p.after.iter().map(|(a, _)| a).collect::<Vec<_>>(),
                    "after_topic": p.after_topic,
                    "restart": p.restart.describe(),
                    "required": p.required,
                })
            })
            .collect();
        json!({ "file": self.file.display().to_string(), "processes": procs })
    }
}

impl LoadError {
    /// The error as JSON: `error` (the whole message) and, for one at a position, `file`,
    /// `line`, `column` and `message`.
    pub fn json(&self) -> Value {
        let mut doc = json!({ "error": self.to_string() });
        if let LoadError::At { origin, message } = self {
            doc["file"] = json!(origin.file.display().to_string());
            doc["line"] = json!(origin.line);
            doc["column"] = json!(origin.column);
            doc["message"] = json!(message);
        }
        doc
    }
}
