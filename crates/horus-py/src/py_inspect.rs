//! Looking at topics without their types: the same segment descriptions the `horus` CLI
//! decodes with (`horus::inspect`), for Python tools.

use pyo3::prelude::*;

use crate::errors::SegmentError;

fn namespace(ns: Option<String>) -> String {
    ns.unwrap_or_else(horus::namespace)
}

/// Names of every topic with a segment in the namespace, sorted.
#[pyfunction]
#[pyo3(signature = (namespace=None))]
pub(crate) fn list_topics(namespace: Option<String>) -> PyResult<Vec<String>> {
    horus::inspect::list_topics(&self::namespace(namespace))
        .map_err(|e| SegmentError::new_err(e.to_string()))
}

/// The validated description of a topic's message (JSON text), read from its segment.
#[pyfunction]
#[pyo3(signature = (topic, namespace=None))]
pub(crate) fn topic_description(topic: &str, namespace: Option<String>) -> PyResult<String> {
    let view = horus::inspect::TopicView::open(&self::namespace(namespace), topic)
        .map_err(|e| SegmentError::new_err(e.to_string()))?;
    let desc = view.description().map_err(|e| {
        SegmentError::new_err(format!(
            "topic {topic} ({}) cannot be decoded: {e}",
            view.schema_text()
        ))
    })?;
    serde_json::to_string(&desc).map_err(|e| SegmentError::new_err(e.to_string()))
}
