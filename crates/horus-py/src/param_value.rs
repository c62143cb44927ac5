//! Parameter values and declarations between Python objects and
//! `horus_params`: bool, int, float, str and lists of one of those.

use horus_params::{ParamInfo, ParamKind, ParamValue, Range};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};

/// The kind named `name` (`"bool"`, `"i64"`, `"f64"`, `"string"`, and
/// those with `[]`).
pub(crate) fn kind_from_name(name: &str) -> PyResult<ParamKind> {
    ParamKind::ALL
        .into_iter()
        .find(|k| k.to_string() == name)
        .ok_or_else(|| {
            PyValueError::new_err(format!(
                "unknown parameter kind {name:?}: one of bool, i64, f64, string, bool[], i64[], f64[], string[]"
            ))
        })
}

fn scalar_kind(v: &Bound<'_, PyAny>) -> Option<ParamKind> {
    // bool before int: Python's bool is an int.
    if v.is_instance_of::<PyBool>() {
        Some(ParamKind::Bool)
    } else if v.is_instance_of::<PyInt>() {
        Some(ParamKind::I64)
    } else if v.is_instance_of::<PyFloat>() {
        Some(ParamKind::F64)
    } else if v.is_instance_of::<PyString>() {
        Some(ParamKind::Str)
    } else {
        None
    }
}

fn not_a_value(v: &Bound<'_, PyAny>) -> PyErr {
    PyTypeError::new_err(format!(
        "a parameter value is a bool, int, float or str, or a list of one of those; not {}",
        v.get_type()
            .name()
            .map_or_else(|_| "?".to_owned(), |n| n.to_string())
    ))
}

/// Converts a Python value. An empty list takes the kind `hint` (an array
/// kind), else it is an error.
pub(crate) fn to_value(v: &Bound<'_, PyAny>, hint: Option<ParamKind>) -> PyResult<ParamValue> {
    if let Some(k) = scalar_kind(v) {
        return Ok(match k {
            ParamKind::Bool => ParamValue::Bool(v.extract()?),
            ParamKind::I64 => ParamValue::I64(v.extract()?),
            ParamKind::F64 => ParamValue::F64(v.extract()?),
            _ => ParamValue::Str(v.extract()?),
        });
    }
    if !(v.is_instance_of::<PyList>() || v.is_instance_of::<PyTuple>()) {
        return Err(not_a_value(v));
    }
    let items: Vec<Bound<'_, PyAny>> = v.try_iter()?.collect::<PyResult<_>>()?;
    let kind = match items.first() {
        Some(first) => scalar_kind(first).ok_or_else(|| not_a_value(first))?,
        None => match hint {
            Some(ParamKind::BoolArray) => ParamKind::Bool,
            Some(ParamKind::I64Array) => ParamKind::I64,
            Some(ParamKind::F64Array) => ParamKind::F64,
            Some(ParamKind::StrArray) => ParamKind::Str,
            _ => {
                return Err(PyTypeError::new_err(
                    "an empty list has no element type: give the kind (e.g. kind=\"f64[]\")",
                ))
            }
        },
    };
    if let Some(bad) = items.iter().find(|i| scalar_kind(i) != Some(kind)) {
        return Err(PyTypeError::new_err(format!(
            "a list parameter holds one type: {bad} is not like the first element"
        )));
    }
    Ok(match kind {
        ParamKind::Bool => ParamValue::BoolArray(each(&items, |i| i.extract::<bool>())?),
        ParamKind::I64 => ParamValue::I64Array(each(&items, |i| i.extract::<i64>())?),
        ParamKind::F64 => ParamValue::F64Array(each(&items, |i| i.extract::<f64>())?),
        _ => ParamValue::StrArray(each(&items, |i| i.extract::<String>())?),
    })
}

fn each<'py, T>(
    items: &[Bound<'py, PyAny>],
    f: impl Fn(&Bound<'py, PyAny>) -> PyResult<T>,
) -> PyResult<Vec<T>> {
    items.iter().map(f).collect()
}

/// The Python object of a value.
pub(crate) fn to_py<'py>(py: Python<'py>, v: &ParamValue) -> PyResult<Bound<'py, PyAny>> {
    Ok(match v {
        ParamValue::Bool(b) => PyBool::new(py, *b).to_owned().into_any(),
        ParamValue::I64(i) => i.into_pyobject(py)?.into_any(),
        ParamValue::F64(f) => f.into_pyobject(py)?.into_any(),
        ParamValue::Str(s) => s.into_pyobject(py)?.into_any(),
        ParamValue::BoolArray(v) => PyList::new(py, v)?.into_any(),
        ParamValue::I64Array(v) => PyList::new(py, v)?.into_any(),
        ParamValue::F64Array(v) => PyList::new(py, v)?.into_any(),
        ParamValue::StrArray(v) => PyList::new(py, v)?.into_any(),
    })
}

/// A `(min, max)` range for a parameter of `kind`.
pub(crate) fn to_range(kind: ParamKind, r: &Bound<'_, PyAny>) -> PyResult<Range> {
    let (min, max): (Bound<'_, PyAny>, Bound<'_, PyAny>) = r.extract()?;
    Ok(match kind {
        ParamKind::F64 | ParamKind::F64Array => Range::F64 {
            min: min.extract()?,
            max: max.extract()?,
        },
        // Integer bounds for integers; for other kinds the declaration
        // refuses the range (ParamDeclarationError).
        _ => Range::I64 {
            min: min.extract()?,
            max: max.extract()?,
        },
    })
}

fn range_py<'py>(py: Python<'py>, r: Option<Range>) -> PyResult<Bound<'py, PyAny>> {
    Ok(match r {
        Some(Range::I64 { min, max }) => (min, max).into_pyobject(py)?.into_any(),
        Some(Range::F64 { min, max }) => (min, max).into_pyobject(py)?.into_any(),
        None => py.None().into_bound(py),
    })
}

/// A declaration as a dict: name, kind, default, description, range.
pub(crate) fn info_dict<'py>(
    py: Python<'py>,
    name: &str,
    kind: ParamKind,
    default: &ParamValue,
    description: &str,
    range: Option<Range>,
) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("name", name)?;
    d.set_item("kind", kind.to_string())?;
    d.set_item("default", to_py(py, default)?)?;
    d.set_item("description", description)?;
    d.set_item("range", range_py(py, range)?)?;
    Ok(d)
}

pub(crate) fn remote_info_dict<'py>(
    py: Python<'py>,
    i: &ParamInfo,
) -> PyResult<Bound<'py, PyDict>> {
    info_dict(py, &i.name, i.kind, &i.default, &i.description, i.range)
}
