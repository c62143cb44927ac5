//! Errors of the ROS 2 codec: `CdrError` (a `HorusError`) and its two sides, each
//! carrying the field path (`pose.pose.position.x`, `markers[3].points[0]`) and a kind.

use pyo3::prelude::*;

use crate::errors::{CdrDecodeError, CdrEncodeError};

/// Which side failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Side {
    Encode,
    Decode,
}

/// A codec failure before it becomes a Python exception.
#[derive(Debug)]
pub(crate) struct Failure {
    pub(crate) side: Side,
    /// Short identifier: `truncated`, `count_too_large`, `over_bound`, …
    pub(crate) kind: &'static str,
    pub(crate) message: String,
    /// Field path, innermost last (rendered as `a.b[3].c`).
    pub(crate) path: Vec<PathSeg>,
}

/// One step of a field path.
#[derive(Debug, Clone)]
pub(crate) enum PathSeg {
    Field(String),
    Index(usize),
}

impl Failure {
    pub(crate) fn new(side: Side, kind: &'static str, message: impl Into<String>) -> Self {
        Failure {
            side,
            kind,
            message: message.into(),
            path: Vec::new(),
        }
    }

    /// Adds an outer path step (errors are built innermost first while unwinding).
    pub(crate) fn at(mut self, seg: PathSeg) -> Self {
        self.path.push(seg);
        self
    }

    pub(crate) fn path_text(&self) -> String {
        let mut s = String::new();
        for seg in self.path.iter().rev() {
            match seg {
                PathSeg::Field(f) => {
                    if !s.is_empty() {
                        s.push('.');
                    }
                    s.push_str(f);
                }
                PathSeg::Index(i) => s.push_str(&format!("[{i}]")),
            }
        }
        s
    }

    /// The Python exception, with `path`, `kind` and `type_name` attributes.
    pub(crate) fn into_py(self, py: Python<'_>, type_name: &str) -> PyErr {
        let path = self.path_text();
        let text = format!(
            "{type_name}: {}: {}",
            if path.is_empty() { "<message>" } else { &path },
            self.message
        );
        let err = match self.side {
            Side::Encode => CdrEncodeError::new_err(text),
            Side::Decode => CdrDecodeError::new_err(text),
        };
        let v = err.value(py);
        // Setting attributes on a fresh exception instance cannot fail.
        let _ = v.setattr("path", path);
        let _ = v.setattr("kind", self.kind);
        let _ = v.setattr("type_name", type_name);
        err
    }
}

/// Result of the codec walkers.
pub(crate) type CodecResult<T> = Result<T, Failure>;
