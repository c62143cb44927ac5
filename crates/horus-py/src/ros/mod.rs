//! ROS 2 types from Python: the interface definitions (the standard packages, embedded
//! in the module, and a user's packages), Python classes generated from them
//! ([`gen`]), and CDR encoding/decoding of those classes' objects ([`encode`],
//! [`decode`]) with no per-element Python code.

mod decode;
mod encode;
pub(crate) mod errors;
mod gen;
mod loan;
mod ndarray;
mod plan;
mod pybuf;
mod slots;
mod topic;

pub(crate) use loan::{LoanedArray, RosLoan};
pub(crate) use topic::{RosPublisher, RosSample, RosSubscriber, RosTopic};

use std::collections::BTreeSet;
use std::path::Path;
use std::sync::{Arc, Mutex};

use horus_idl::{InterfaceKind, InterfaceSet, Resolved, TypeName};
use pyo3::exceptions::{PyKeyError, PyValueError};
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyType};

use self::decode::{Dec, PyRefs};
use self::encode::{Counter, Enc, Parts, Writer, HEADER};
use self::errors::{Failure, Side};
use self::plan::Plans;
use crate::buffer::{with_bytes, with_bytes_mut};
use crate::errors::InterfaceError;

/// Definitions and their compiled form; replaced as a whole when a package is added.
pub(crate) struct Codec {
    set: InterfaceSet,
    resolved: Resolved,
    pub(crate) plans: Plans,
    packages: BTreeSet<String>,
}

/// The interface definitions of this process and the classes bound to their types.
/// `horus.interfaces` makes one (`RosTypes.standard()`); every generated class encodes
/// and decodes through it.
#[pyclass(module = "horus._horus", frozen)]
pub(crate) struct RosTypes {
    codec: Mutex<Arc<Codec>>,
    refs: PyRefs,
}

fn interface_error(e: impl std::fmt::Display) -> PyErr {
    InterfaceError::new_err(e.to_string())
}

impl RosTypes {
    /// NumPy's C API and the dtypes, for arrays made natively.
    pub(crate) fn refs(&self) -> &PyRefs {
        &self.refs
    }

    pub(crate) fn codec(&self) -> Arc<Codec> {
        // Held only to clone the Arc: never across Python code.
        match self.codec.lock() {
            Ok(g) => Arc::clone(&g),
            Err(p) => Arc::clone(&p.into_inner()),
        }
    }

    pub(crate) fn index(codec: &Codec, type_name: &str) -> PyResult<usize> {
        codec.plans.index.get(type_name).copied().ok_or_else(|| {
            PyKeyError::new_err(format!(
                "unknown ROS type {type_name:?} (standard packages and loaded ones only)"
            ))
        })
    }

    /// Adds interfaces with `add`, resolves, and swaps the codec in.
    fn extend(
        &self,
        py: Python<'_>,
        package: &str,
        add: impl FnOnce(&mut InterfaceSet) -> PyResult<()>,
    ) -> PyResult<Vec<String>> {
        let mut guard = match self.codec.lock() {
            Ok(g) => g,
            Err(p) => p.into_inner(),
        };
        if guard.packages.contains(package) {
            return Err(InterfaceError::new_err(format!(
                "package {package:?} is already loaded"
            )));
        }
        let mut set = guard.set.clone();
        add(&mut set)?;
        let resolved = set.resolve().map_err(interface_error)?;
        let plans = Plans::build(py, &resolved, Some(&guard.plans));
        let mut packages = guard.packages.clone();
        packages.insert(package.to_owned());
        let names = resolved
            .structs()
            .filter(|s| s.name.package == package)
            .map(|s| s.name.to_string())
            .collect();
        *guard = Arc::new(Codec {
            set,
            resolved,
            plans,
            packages,
        });
        Ok(names)
    }

    /// Decodes a received sample (its bytes read in place, no buffer request) as
    /// structure `idx`; the arrays view the sample.
    pub(crate) fn decode_sample<'py>(
        &self,
        codec: &Codec,
        idx: usize,
        sample: &Bound<'py, RosSample>,
        offset: usize,
    ) -> PyResult<Bound<'py, PyAny>> {
        let all = sample.get().cdr();
        self.decode_in(codec, idx, all, offset, sample.as_any(), true)
    }

    /// Decodes structure `idx` from `all[offset..]` (header first), the bytes of
    /// `owner` (`owner_is_sample`: a [`RosSample`]'s own bytes).
    fn decode_in<'py>(
        &self,
        codec: &Codec,
        idx: usize,
        all: &[u8],
        offset: usize,
        owner: &Bound<'py, PyAny>,
        owner_is_sample: bool,
    ) -> PyResult<Bound<'py, PyAny>> {
        let py = owner.py();
        let type_name = &codec.plans.structs[idx].name;
        let fail = |kind, msg: String| Failure::new(Side::Decode, kind, msg).into_py(py, type_name);
        let Some(msg) = all.get(offset..) else {
            return Err(fail(
                "truncated",
                format!("offset {offset} is past the end of {} bytes", all.len()),
            ));
        };
        match msg.get(..4) {
            Some([0x00, 0x01, _, _]) => {}
            _ => {
                return Err(fail(
                    "bad_header",
                    format!(
                        "encapsulation header {:02x?} is not little-endian CDR (00 01 xx xx)",
                        &msg[..msg.len().min(4)]
                    ),
                ))
            }
        }
        let mut d = Dec {
            py,
            plans: &codec.plans,
            refs: &self.refs,
            data: &msg[4..],
            pos: 0,
            owner,
            body_offset: offset + 4,
            owner_is_sample,
            base: None,
        };
        d.structure(idx, 0).map_err(|e| e.into_py(py, type_name))
    }

    /// Encodes `obj` as structure `idx` into a buffer made by `alloc(size)`.
    fn encode_with<R>(
        codec: &Codec,
        idx: usize,
        obj: &Bound<'_, PyAny>,
        alloc: impl FnOnce(usize, &mut dyn FnMut(&mut [u8]) -> Result<(), Failure>) -> PyResult<R>,
    ) -> PyResult<R> {
        let py = obj.py();
        let type_name = &codec.plans.structs[idx].name;
        let mut counter = Enc {
            plans: &codec.plans,
            sink: Counter { pos: 0 },
        };
        counter
            .structure(idx, obj, 0)
            .map_err(|e| e.into_py(py, type_name))?;
        let body = counter.sink.pos;
        let mut fill = |out: &mut [u8]| -> Result<(), Failure> {
            out[..4].copy_from_slice(&HEADER);
            let mut w = Enc {
                plans: &codec.plans,
                sink: Writer {
                    out: &mut out[4..],
                    pos: 0,
                },
            };
            w.structure(idx, obj, 0)?;
            if w.sink.pos != body {
                return Err(Failure::new(
                    Side::Encode,
                    "changed",
                    "the message shrank while it was being encoded (changed by another thread?)",
                ));
            }
            Ok(())
        };
        alloc(4 + body, &mut fill)
    }
}

#[pymethods]
impl RosTypes {
    /// The standard packages (embedded in the module).
    #[staticmethod]
    fn standard(py: Python<'_>) -> PyResult<Self> {
        let set = InterfaceSet::standard_embedded().map_err(interface_error)?;
        let packages = horus_idl::STANDARD_PACKAGES
            .iter()
            .map(|p| (*p).to_owned())
            .collect();
        let resolved = set.resolve().map_err(interface_error)?;
        let plans = Plans::build(py, &resolved, None);
        Ok(RosTypes {
            codec: Mutex::new(Arc::new(Codec {
                set,
                resolved,
                plans,
                packages,
            })),
            refs: PyRefs::new(py)?,
        })
    }

    /// Loads the package `package` from `path` (`msg/*.msg`, `srv/*.srv`,
    /// `action/*.action`). Returns the names of its structures.
    fn load_package_dir(&self, py: Python<'_>, package: &str, path: &str) -> PyResult<Vec<String>> {
        self.extend(py, package, |set| {
            set.add_package_dir(package, Path::new(path))
                .map(|_| ())
                .map_err(interface_error)
        })
    }

    /// Loads the package `package` from sources: (kind `msg`/`srv`/`action`, name,
    /// text). Returns the names of its structures.
    fn load_package_sources(
        &self,
        py: Python<'_>,
        package: &str,
        sources: Vec<(String, String, String)>,
    ) -> PyResult<Vec<String>> {
        self.extend(py, package, |set| {
            for (kind, name, text) in &sources {
                let k = InterfaceKind::from_extension(kind).ok_or_else(|| {
                    PyValueError::new_err(format!("kind must be msg, srv or action, not {kind:?}"))
                })?;
                let file = format!("{package}/{kind}/{name}.{kind}");
                set.add_source(&file, package, name, k, text.as_bytes())
                    .map_err(interface_error)?;
            }
            Ok(())
        })
    }

    /// Loaded package names.
    fn packages(&self) -> Vec<String> {
        self.codec().packages.iter().cloned().collect()
    }

    /// Names of every structure (messages, and the types of services and actions).
    fn type_names(&self) -> Vec<String> {
        self.codec().plans.index.keys().cloned().collect()
    }

    /// Binds the Python class whose objects encode as, and decode from, `type_name`.
    fn bind(&self, type_name: &str, cls: &Bound<'_, PyType>) -> PyResult<()> {
        let codec = self.codec();
        let idx = Self::index(&codec, type_name)?;
        codec.plans.structs[idx].bind(cls.clone().unbind());
        Ok(())
    }

    /// CDR bytes of `obj` (encapsulation header included). Raises CdrEncodeError.
    ///
    /// One walk into [`Parts`] (small items into one buffer, large arrays left in
    /// place), then each piece copied once into a `bytes` object of the exact size.
    fn encode<'py>(
        &self,
        type_name: &str,
        obj: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let codec = self.codec();
        let idx = Self::index(&codec, type_name)?;
        let py = obj.py();
        let mut enc = Enc {
            plans: &codec.plans,
            sink: Parts::default(),
        };
        enc.structure(idx, obj, 0)
            .map_err(|e| e.into_py(py, type_name))?;
        let parts = enc.sink;
        let pieces = parts.pieces(&HEADER);
        let total: usize = pieces.iter().map(|p| p.len()).sum();
        let len = ffi::Py_ssize_t::try_from(total)
            .map_err(|_| PyValueError::new_err(format!("{type_name}: message too large")))?;
        // SAFETY: a NULL source asks CPython for an uninitialised bytes object of `len`
        // bytes (plus its NUL); we own the returned reference.
        let raw = unsafe { ffi::PyBytes_FromStringAndSize(std::ptr::null(), len) };
        if raw.is_null() {
            return Err(PyErr::fetch(py));
        }
        // SAFETY: `raw` is a new, non-null reference to a bytes object.
        let bytes = unsafe { Bound::from_owned_ptr(py, raw).cast_into_unchecked::<PyBytes>() };
        // SAFETY: the object's buffer has room for `total` bytes; nobody else has seen the
        // object yet. The pieces are copied back to back and their lengths sum to `total`,
        // so every byte is written before the object is handed out; the pieces (our
        // buffer, the arrays' buffers we hold) do not overlap a new object.
        unsafe {
            let dst = ffi::PyBytes_AsString(raw).cast::<u8>();
            let mut at = 0;
            for p in &pieces {
                std::ptr::copy_nonoverlapping(p.as_ptr(), dst.add(at), p.len());
                at += p.len();
            }
        }
        Ok(bytes)
    }

    /// Bytes `encode` would return, without writing them.
    fn encoded_size(&self, type_name: &str, obj: &Bound<'_, PyAny>) -> PyResult<usize> {
        let codec = self.codec();
        let idx = Self::index(&codec, type_name)?;
        Self::encode_with(&codec, idx, obj, |len, _| Ok(len))
    }

    /// Encodes `obj` into the writable buffer `out` at `offset`; returns the bytes
    /// written. Raises CdrEncodeError, ValueError if it does not fit.
    #[pyo3(signature = (type_name, obj, out, offset=0))]
    fn encode_into(
        &self,
        type_name: &str,
        obj: &Bound<'_, PyAny>,
        out: &Bound<'_, PyAny>,
        offset: usize,
    ) -> PyResult<usize> {
        let codec = self.codec();
        let idx = Self::index(&codec, type_name)?;
        let py = obj.py();
        Self::encode_with(&codec, idx, obj, |len, fill| {
            with_bytes_mut(out, |buf| {
                let Some(dst) = buf.get_mut(offset..).and_then(|b| b.get_mut(..len)) else {
                    return Err(PyValueError::new_err(format!(
                        "{type_name}: {len} bytes do not fit the buffer ({} bytes from offset {offset})",
                        buf.len().saturating_sub(offset)
                    )));
                };
                fill(dst).map_err(|e| e.into_py(py, type_name))?;
                Ok(len)
            })?
        })
    }

    /// Decodes the message whose CDR bytes (header first) start at `offset` in the
    /// buffer `data`. Primitive arrays are read-only NumPy views of `data`. Raises
    /// CdrDecodeError.
    #[pyo3(signature = (type_name, data, offset=0))]
    fn decode<'py>(
        &self,
        type_name: &str,
        data: &Bound<'py, PyAny>,
        offset: usize,
    ) -> PyResult<Bound<'py, PyAny>> {
        let codec = self.codec();
        let idx = Self::index(&codec, type_name)?;
        if let Ok(sample) = data.cast::<RosSample>() {
            return self.decode_sample(&codec, idx, sample, offset);
        }
        with_bytes(data, |all| {
            self.decode_in(&codec, idx, all, offset, data, false)
        })?
    }

    /// The RIHS01 type hash of a type.
    fn type_hash(&self, type_name: &str) -> PyResult<String> {
        self.codec()
            .resolved
            .type_hash(type_name)
            .map(|h| h.to_string())
            .ok_or_else(|| PyKeyError::new_err(type_name.to_owned()))
    }

    /// The ros2msg definition text of a message type (as MCAP and ROS 2 tools store it).
    fn definition(&self, type_name: &str) -> PyResult<String> {
        self.codec()
            .resolved
            .ros2msg_definition(type_name)
            .ok_or_else(|| PyKeyError::new_err(type_name.to_owned()))
    }

    /// Python source of the classes of `package`: (path, source) pairs.
    fn generate(&self, package: &str) -> Vec<(String, String)> {
        gen::generate_package(&self.codec().resolved, package)
    }

    /// Test oracle: decodes `data` with horus_idl::cdr and encodes it again (zero
    /// padding). Raises ValueError with horus_idl's message.
    fn _reference_reencode<'py>(
        &self,
        py: Python<'py>,
        type_name: &str,
        data: &[u8],
    ) -> PyResult<Bound<'py, PyBytes>> {
        let codec = self.codec();
        let t = TypeName::parse(type_name)
            .ok_or_else(|| PyValueError::new_err(format!("bad type name {type_name:?}")))?;
        let v = horus_idl::cdr::decode(&codec.resolved, &t, data)
            .map_err(|e| PyValueError::new_err(e.to_string()))?;
        let b = horus_idl::cdr::encode(&codec.resolved, &t, &v)
            .map_err(|e| PyValueError::new_err(e.to_string()))?;
        Ok(PyBytes::new(py, &b))
    }
}
