//! Rust nodes for the Python `Scheduler`: nodes written in Rust, created
//! from Python and run by the same scheduler as Python nodes (mixable, with
//! the same rate/budget/deadline/failure-policy options), ticking without
//! the GIL.
//!
//! [`RustNode`] holds one boxed `horus_sched::Node` until `Scheduler.add`
//! takes it. The built-in kinds are its constructors (`RustNode.relay`);
//! more are added by wrapping any `Node` with [`RustNode::new`].

use std::sync::Mutex;

use horus::WaitMode;
use horus_sched::{Node, NodeError, TickContext};
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;

use crate::dynamic::{self, DynPublisher, DynSubscriber, TopicOptions};
use crate::errors;

/// A node written in Rust, to pass to `Scheduler.add` (once).
#[pyclass(module = "horus._horus", frozen)]
pub(crate) struct RustNode {
    name: String,
    kind: &'static str,
    node: Mutex<Option<Box<dyn Node>>>,
}

impl RustNode {
    /// Wraps `node` (its `name()` is the default name in the scheduler).
    pub(crate) fn new(kind: &'static str, node: Box<dyn Node>) -> RustNode {
        RustNode {
            name: node.name().to_owned(),
            kind,
            node: Mutex::new(Some(node)),
        }
    }

    /// Default name in the scheduler.
    pub(crate) fn default_name(&self) -> &str {
        &self.name
    }

    /// Takes the node out (for `Scheduler.add`); an error if it was taken.
    pub(crate) fn take(&self) -> PyResult<Boxed> {
        self.node
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take()
            .map(Boxed)
            .ok_or_else(|| {
                PyRuntimeError::new_err(format!(
                    "the Rust node {:?} was already added to a scheduler",
                    self.name
                ))
            })
    }
}

#[pymethods]
impl RustNode {
    /// A relay: every message published on `src` is published again on
    /// `dst` (both topics carry the message type whose schema name is
    /// `schema`, e.g. `horus.CmdVel.SCHEMA.name`), drained each tick; tails
    /// (point clouds, images) included. A refused send fails the tick.
    /// `name` defaults to "relay".
    #[staticmethod]
    #[pyo3(signature = (schema, src, dst, *, name=None, namespace=None))]
    fn relay(
        py: Python<'_>,
        schema: &str,
        src: &str,
        dst: &str,
        name: Option<String>,
        namespace: Option<String>,
    ) -> PyResult<RustNode> {
        let name = name.unwrap_or_else(|| "relay".to_owned());
        let opts = TopicOptions {
            namespace,
            ..TopicOptions::default()
        };
        let open = |topic: &str| match dynamic::open_topic(schema, topic, &opts) {
            Ok(Some(t)) => Ok(t),
            Ok(None) => Err(PyValueError::new_err(format!(
                "no message type has the schema name {schema:?}"
            ))),
            Err(e) => Err(errors::topic_error(py, e)),
        };
        let (from, to) = (open(src)?, open(dst)?);
        let node = Relay {
            name,
            dst: dst.to_owned(),
            sub: from
                .subscriber(WaitMode::BusyPoll, false, horus::StartAt::Durability)
                .map_err(|e| errors::topic_error(py, e))?,
            publisher: to.publisher().map_err(|e| errors::topic_error(py, e))?,
        };
        Ok(RustNode::new("relay", Box::new(node)))
    }

    /// Default name in the scheduler.
    #[getter]
    fn name(&self) -> &str {
        &self.name
    }

    /// Which built-in node this is (e.g. "relay").
    #[getter]
    fn kind(&self) -> &str {
        self.kind
    }

    /// Whether a scheduler has taken it.
    #[getter]
    fn added(&self) -> bool {
        self.node
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .is_none()
    }

    fn __repr__(&self) -> String {
        format!("RustNode({}, name={:?})", self.kind, self.name)
    }
}

/// A boxed node, as the scheduler takes it.
pub(crate) struct Boxed(Box<dyn Node>);

impl Node for Boxed {
    fn name(&self) -> &str {
        self.0.name()
    }
    fn init(&mut self) -> Result<(), NodeError> {
        self.0.init()
    }
    fn tick(&mut self, ctx: &TickContext<'_>) -> Result<(), NodeError> {
        self.0.tick(ctx)
    }
    fn shutdown(&mut self) -> Result<(), NodeError> {
        self.0.shutdown()
    }
    fn on_error(&mut self, error: &NodeError) {
        self.0.on_error(error)
    }
    fn enter_safe_state(&mut self) {
        self.0.enter_safe_state()
    }
}

/// `RustNode.relay`.
struct Relay {
    name: String,
    dst: String,
    sub: Box<dyn DynSubscriber>,
    publisher: Box<dyn DynPublisher>,
}

impl Node for Relay {
    fn name(&self) -> &str {
        &self.name
    }

    fn tick(&mut self, _ctx: &TickContext<'_>) -> Result<(), NodeError> {
        while let Some(s) = self.sub.try_recv() {
            let tail = match s.tail_len() {
                0 => None,
                n => Some(
                    s.region()
                        .get(s.tail_offset()..s.tail_offset() + n)
                        .ok_or_else(|| NodeError::msg("relay: a tail not in place"))?,
                ),
            };
            self.publisher
                .send(s.header(), tail)
                .map_err(|e| NodeError::msg(format!("relay to {}: {e:?}", self.dst)))?;
        }
        Ok(())
    }
}
