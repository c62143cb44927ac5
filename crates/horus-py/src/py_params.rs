//! `Parameters`, `ParamServer` and `ParamClient`, as seen from Python: the
//! same registry, parameter service `<node>/params` and wire as
//! `horus_params`, so Rust clients (and `horus param`) reach Python nodes
//! and the other way round.
//!
//! Change callbacks: the registry's Rust callback only queues the change;
//! the Python callbacks run after the registry is unlocked (so they may
//! read or set parameters), on the thread that set or served.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use horus_params::{ParamDecl, ParamKind, ParamValue};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};
use pyo3::{PyTraverseError, PyVisit};

use crate::endpoint::{lock, Endpoint};
use crate::param_errors::{client_error, param_error, yaml_error};
use crate::param_value::{info_dict, kind_from_name, remote_info_dict, to_py, to_range, to_value};

type Changes = Arc<Mutex<Vec<(String, ParamValue)>>>;

/// A node's parameters: typed declarations, current values, change
/// tracking. Every set is checked (type, range, size); a rejected set
/// leaves the value unchanged.
#[pyclass(module = "horus._horus", frozen)]
pub(crate) struct Parameters {
    inner: Mutex<horus_params::Parameters>,
    callbacks: Mutex<Vec<Py<PyAny>>>,
    changes: Changes,
}

impl Parameters {
    fn kind_of(&self, name: &str) -> Option<ParamKind> {
        let g = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        g.describe(name).ok().map(ParamDecl::kind)
    }

    /// Runs the Python callbacks on the changes queued since the last run;
    /// the first exception a callback raises is raised after all ran.
    fn run_callbacks(&self, py: Python<'_>) -> PyResult<()> {
        let changes = std::mem::take(&mut *self.changes.lock().unwrap_or_else(|e| e.into_inner()));
        if changes.is_empty() {
            return Ok(());
        }
        let cbs: Vec<Py<PyAny>> = lock(&self.callbacks, "parameter registry")?
            .iter()
            .map(|c| c.clone_ref(py))
            .collect();
        let mut first = None;
        for (name, value) in &changes {
            let v = to_py(py, value)?;
            for cb in &cbs {
                if let Err(e) = cb.call1(py, (name, &v)) {
                    first.get_or_insert(e);
                }
            }
        }
        first.map_or(Ok(()), Err)
    }
}

#[pymethods]
impl Parameters {
    #[new]
    fn new() -> Self {
        Parameters {
            inner: Mutex::new(horus_params::Parameters::new()),
            callbacks: Mutex::new(Vec::new()),
            changes: Arc::default(),
        }
    }

    /// Declares a parameter; its value starts at `default`, whose type
    /// gives the kind (`kind` names it for an empty list). `range` is an
    /// inclusive (min, max) for numbers and lists of numbers.
    #[pyo3(signature = (name, default, *, description="", range=None, kind=None))]
    fn declare(
        &self,
        name: &str,
        default: &Bound<'_, PyAny>,
        description: &str,
        range: Option<&Bound<'_, PyAny>>,
        kind: Option<&str>,
    ) -> PyResult<()> {
        let hint = kind.map(kind_from_name).transpose()?;
        let value = to_value(default, hint)?;
        if let Some(k) = hint {
            if k != value.kind() {
                return Err(PyValueError::new_err(format!(
                    "parameter {name:?}: kind={k} but the default is {}",
                    value.kind()
                )));
            }
        }
        let kind = value.kind();
        let mut decl = ParamDecl::new(name, value).description(description);
        if let Some(r) = range {
            decl = decl.range(to_range(kind, r)?);
        }
        lock(&self.inner, "parameter registry")?
            .declare(decl)
            .map_err(param_error)
    }

    /// The current value of `name`.
    fn get<'py>(&self, py: Python<'py>, name: &str) -> PyResult<Bound<'py, PyAny>> {
        let g = lock(&self.inner, "parameter registry")?;
        to_py(py, g.get(name).map_err(param_error)?)
    }

    /// Sets `name` to `value` (checked: ParamTypeError, ParamRangeError,
    /// ParamNotFoundError, ParamTooLargeError; the value is unchanged on
    /// error). Marks it changed and runs the callbacks.
    fn set(&self, py: Python<'_>, name: &str, value: &Bound<'_, PyAny>) -> PyResult<()> {
        let v = to_value(value, self.kind_of(name))?;
        lock(&self.inner, "parameter registry")?
            .set(name, v)
            .map_err(param_error)?;
        self.run_callbacks(py)
    }

    /// The declaration of `name`: a dict with name, kind, default,
    /// description, range.
    fn describe<'py>(&self, py: Python<'py>, name: &str) -> PyResult<Bound<'py, PyDict>> {
        let g = lock(&self.inner, "parameter registry")?;
        let d = g.describe(name).map_err(param_error)?;
        info_dict(
            py,
            d.name(),
            d.kind(),
            d.default_value(),
            d.description_text(),
            d.range_bounds(),
        )
    }

    /// Lets the garbage collector see the callbacks: a callback that
    /// reaches the registry back (a lambda over module globals holding it)
    /// is a cycle, which would otherwise keep the node's segments alive at
    /// exit.
    fn __traverse__(&self, visit: PyVisit<'_>) -> Result<(), PyTraverseError> {
        // Never blocks: a registry in use by another thread is skipped this
        // round (the collector only misses a cycle until its next pass).
        if let Ok(cbs) = self.callbacks.try_lock() {
            for cb in cbs.iter() {
                visit.call(cb)?;
            }
        }
        Ok(())
    }

    fn __clear__(&self) {
        let taken = std::mem::take(&mut *self.callbacks.lock().unwrap_or_else(|e| e.into_inner()));
        drop(taken);
    }

    /// Every name, in declaration order.
    fn names(&self) -> PyResult<Vec<String>> {
        Ok(lock(&self.inner, "parameter registry")?.names())
    }

    fn __len__(&self) -> PyResult<usize> {
        Ok(lock(&self.inner, "parameter registry")?.len())
    }

    /// Names set since the last call, in declaration order; clears the flags.
    fn take_changed(&self) -> PyResult<Vec<String>> {
        Ok(lock(&self.inner, "parameter registry")?.take_changed())
    }

    /// Calls `callback(name, value)` after every successful set (a local
    /// set, a set from another process served by a ParamServer, a YAML load).
    fn on_change(&self, callback: Py<PyAny>) -> PyResult<()> {
        let mut cbs = lock(&self.callbacks, "parameter registry")?;
        if cbs.is_empty() {
            let q = Arc::clone(&self.changes);
            lock(&self.inner, "parameter registry")?.on_change(move |name, value| {
                q.lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .push((name.to_owned(), value.clone()));
            });
        }
        cbs.push(callback);
        Ok(())
    }

    /// Loads values from YAML text (`name: value` per line); returns the
    /// names set, in file order. Errors (ParamYamlError with line and
    /// column) apply nothing.
    fn load_yaml(&self, py: Python<'_>, text: &str) -> PyResult<Vec<String>> {
        let r = lock(&self.inner, "parameter registry")?
            .load_yaml_str(text)
            .map_err(yaml_error)?;
        self.run_callbacks(py)?;
        Ok(r.into_iter().map(|(n, _)| n).collect())
    }

    /// Loads values from the YAML file at `path` (see `load_yaml`).
    fn load_yaml_file(&self, py: Python<'_>, path: std::path::PathBuf) -> PyResult<Vec<String>> {
        let r = lock(&self.inner, "parameter registry")?
            .load_yaml_file(path)
            .map_err(yaml_error)?;
        self.run_callbacks(py)?;
        Ok(r.into_iter().map(|(n, _)| n).collect())
    }

    /// Every parameter as YAML, each with a comment giving its
    /// description, kind and range. Loads back unchanged.
    fn dump_yaml(&self) -> PyResult<String> {
        Ok(lock(&self.inner, "parameter registry")?.dump_yaml())
    }

    /// Writes `dump_yaml()` to `path`.
    fn dump_yaml_file(&self, path: std::path::PathBuf) -> PyResult<()> {
        lock(&self.inner, "parameter registry")?
            .dump_yaml_file(path)
            .map_err(yaml_error)
    }
}

/// Serves a node's parameters on the service `<node>/params`. Call
/// `serve_pending(params)` from the node's tick.
#[pyclass(module = "horus._horus", frozen)]
pub(crate) struct ParamServer {
    node: String,
    inner: Endpoint<horus_params::ParamServer>,
}

#[pymethods]
impl ParamServer {
    #[new]
    #[pyo3(signature = (node, *, namespace=None))]
    fn new(node: &str, namespace: Option<&str>) -> PyResult<Self> {
        let s = match namespace {
            Some(ns) => horus_params::ParamServer::new_in(node, ns),
            None => horus_params::ParamServer::new(node),
        }
        .map_err(crate::errors::service_error)?;
        Ok(ParamServer {
            node: node.to_owned(),
            inner: Endpoint::new(s, "parameter server"),
        })
    }

    /// Leaves the service `<node>/params` now (its place is released) and any
    /// use after raises ClosedError. Idempotent.
    fn close(&self) {
        self.inner.close();
    }

    /// Whether `close()` was called.
    #[getter]
    fn closed(&self) -> bool {
        self.inner.is_closed()
    }

    /// The node's name.
    #[getter]
    fn node(&self) -> &str {
        &self.node
    }

    /// Answers the requests waiting now (at most 64) against `params`;
    /// returns how many. Never blocks. Change callbacks run afterwards.
    fn serve_pending(&self, py: Python<'_>, params: &Parameters) -> PyResult<usize> {
        let n = {
            let mut s = self.inner.lock()?;
            let mut p = lock(&params.inner, "parameter registry")?;
            s.serve_pending(&mut p)
        };
        params.run_callbacks(py)?;
        Ok(n)
    }

    /// Whether requests are waiting.
    #[getter]
    fn has_pending(&self) -> PyResult<bool> {
        Ok(self.inner.lock()?.has_pending())
    }

    /// (requests answered, requests whose client was gone).
    fn counts(&self) -> PyResult<(u64, u64)> {
        Ok(self.inner.lock()?.counts())
    }
}

/// Lists, describes, gets and sets the parameters of a node in any process
/// (Rust or Python). Every call has a timeout; a node that is not running
/// is NoServerError at once.
#[pyclass(module = "horus._horus", frozen)]
pub(crate) struct ParamClient {
    node: String,
    inner: Endpoint<horus_params::ParamClient>,
    /// Set by `close()`: a call waiting in another thread ends (`stop_when`).
    stop: Arc<AtomicBool>,
}

impl ParamClient {
    /// Runs `f` on the client without the GIL, then lets Python handle
    /// signals (a Ctrl-C during the call raises once it returns, within
    /// the timeout).
    fn run<T: Send>(
        &self,
        py: Python<'_>,
        f: impl FnOnce(&mut horus_params::ParamClient) -> Result<T, horus_params::ParamClientError>
            + Send,
    ) -> PyResult<T> {
        let mut g = self.inner.lock()?;
        let c: &mut horus_params::ParamClient = &mut g;
        let r = py.detach(|| f(c));
        py.check_signals()?;
        r.map_err(|e| match e {
            horus_params::ParamClientError::Call(horus::CallError::Stopped) => {
                crate::errors::ClosedError::new_err(
                    "this parameter client is closed: the call was withdrawn",
                )
            }
            e => client_error(py, &self.node, e),
        })
    }
}

#[pymethods]
impl ParamClient {
    #[new]
    #[pyo3(signature = (node, *, namespace=None, timeout=1.0))]
    fn new(node: &str, namespace: Option<&str>, timeout: f64) -> PyResult<Self> {
        let t = crate::seconds::timeout("timeout", timeout)?;
        let mut c = Python::attach(|py| {
            match namespace {
                Some(ns) => horus_params::ParamClient::open_in(node, ns),
                None => horus_params::ParamClient::open(node),
            }
            .map_err(|e| client_error(py, node, e))
        })?;
        c.set_timeout(t);
        let stop = Arc::new(AtomicBool::new(false));
        c.stop_when(Arc::clone(&stop));
        Ok(ParamClient {
            node: node.to_owned(),
            inner: Endpoint::new(c, "parameter client"),
            stop,
        })
    }

    /// Leaves the service `<node>/params` now (its place is released) and any
    /// use after raises ClosedError. A call waiting in another thread is
    /// withdrawn and raises ClosedError within a few milliseconds. Idempotent.
    fn close(&self) {
        // Release: pairs with the waiting call's Acquire load.
        self.stop.store(true, Ordering::Release);
        self.inner.close();
    }

    /// Whether `close()` was called.
    #[getter]
    fn closed(&self) -> bool {
        self.inner.is_closed()
    }

    /// The node's name.
    #[getter]
    fn node(&self) -> &str {
        &self.node
    }

    /// Every declaration of the node, in its declaration order (dicts as
    /// `Parameters.describe` returns).
    fn list<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let infos = self.run(py, |c| c.list())?;
        let l = PyList::empty(py);
        for i in &infos {
            l.append(remote_info_dict(py, i)?)?;
        }
        Ok(l)
    }

    /// The declaration of `name`.
    fn describe<'py>(&self, py: Python<'py>, name: &str) -> PyResult<Bound<'py, PyDict>> {
        let n = name.to_owned();
        let i = self.run(py, move |c| c.describe(&n))?;
        remote_info_dict(py, &i)
    }

    /// The current value of `name`.
    fn get<'py>(&self, py: Python<'py>, name: &str) -> PyResult<Bound<'py, PyAny>> {
        let n = name.to_owned();
        let v = self.run(py, move |c| c.get(&n))?;
        to_py(py, &v)
    }

    /// Sets `name` to `value`; returns the value the node now holds. Wrong
    /// type, out of range, unknown name: the ParamError subclass the node
    /// reported, and its value is unchanged.
    fn set<'py>(
        &self,
        py: Python<'py>,
        name: &str,
        value: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let n = name.to_owned();
        let empty_list =
            value.len().is_ok_and(|l| l == 0) && !value.is_instance_of::<pyo3::types::PyString>();
        let hint = if empty_list {
            // An empty list has no element type: ask the node for the kind.
            let n = n.clone();
            Some(self.run(py, move |c| c.describe(&n))?.kind)
        } else {
            None
        };
        let v = to_value(value, hint)?;
        let got = self.run(py, move |c| c.set(&n, &v))?;
        to_py(py, &got)
    }
}
