//! Python exceptions of parameters, one per `horus_params::ParamError`
//! variant plus YAML errors, and the mapping from them.

use pyo3::prelude::*;

use crate::errors::{
    ParamDeclarationError, ParamError, ParamNotFoundError, ParamRangeError, ParamTooLargeError,
    ParamTypeError, ParamYamlError,
};

fn set<'py>(py: Python<'py>, err: &PyErr, k: &str, v: impl IntoPyObject<'py>) {
    // Setting an attribute on a fresh exception instance cannot fail.
    let _ = err.value(py).setattr(k, v);
}

pub(crate) fn param_error(e: horus_params::ParamError) -> PyErr {
    use horus_params::ParamError as E;
    let msg = e.to_string();
    Python::attach(|py| match e {
        E::NotFound { name } => {
            let err = ParamNotFoundError::new_err(msg);
            set(py, &err, "name", name);
            err
        }
        E::WrongType {
            name,
            expected,
            got,
        } => {
            let err = ParamTypeError::new_err(msg);
            set(py, &err, "name", name);
            set(py, &err, "expected", expected.to_string());
            set(py, &err, "got", got.to_string());
            err
        }
        E::OutOfRange {
            name,
            value,
            min,
            max,
        } => {
            let err = ParamRangeError::new_err(msg);
            set(py, &err, "name", name);
            set(py, &err, "value", value);
            set(py, &err, "min", min);
            set(py, &err, "max", max);
            err
        }
        E::InvalidDeclaration { name, .. } => {
            let err = ParamDeclarationError::new_err(msg);
            set(py, &err, "name", name);
            err
        }
        E::TooLarge { name, .. } => {
            let err = ParamTooLargeError::new_err(msg);
            set(py, &err, "name", name);
            err
        }
    })
}

pub(crate) fn yaml_error(e: horus_params::YamlError) -> PyErr {
    use horus_params::YamlError as E;
    let msg = e.to_string();
    let err = ParamYamlError::new_err(msg);
    Python::attach(|py| {
        let (line, column) = match e {
            E::At { line, column, .. } => (Some(line), Some(column)),
            _ => (None, None),
        };
        set(py, &err, "line", line);
        set(py, &err, "column", column);
        set(py, &err, "name", py.None());
    });
    err
}

pub(crate) fn client_error(py: Python<'_>, node: &str, e: horus_params::ParamClientError) -> PyErr {
    use horus_params::ParamClientError as E;
    match e {
        E::Open(e) => crate::errors::service_error(e),
        E::Call(e) => crate::errors::call_error(py, &horus_params::service_name(node), e),
        E::Rejected(e) => param_error(e),
        E::Malformed(why) => {
            ParamError::new_err(format!("node {node:?}: malformed parameter message: {why}"))
        }
    }
}
