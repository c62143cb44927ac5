//! Where the fields of a decoded structure live in an instance of its class: the
//! `__slots__` offsets, so the decoder stores each field straight into its slot instead
//! of going through `setattr` (a third of a small message's decode).
//!
//! Only what `setattr` would do itself: the layout is taken from the class's own
//! attribute lookup (a writable object slot, `member_descriptor` of type
//! `Py_T_OBJECT_EX`, for every field), only for classes that keep the generic
//! `__setattr__`, and is used only while the class is unchanged (same object, same
//! type version tag: any change to the class or its bases gives it a new tag). Anything
//! else — a property, a `__setattr__`, a class without slots — and the decoder uses
//! `setattr`.

use std::ffi::c_uint;
use std::sync::{Arc, Mutex};

use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::PyType;

use super::plan::StructPlan;

/// The slot offsets of one class's fields, valid for one version of the class.
pub(crate) struct SlotLayout {
    class: Py<PyType>,
    version: c_uint,
    /// Per field of the plan (placeholders: unused, 0): its offset in an instance.
    offsets: Arc<[isize]>,
}

/// A structure plan's cached layout (`None`: not computed yet, or not usable).
pub(crate) type SlotCache = Mutex<Option<SlotLayout>>;

/// The class's current version tag, if it has a valid one.
fn version(cls: &Bound<'_, PyType>) -> Option<c_uint> {
    let tp = cls.as_type_ptr();
    // SAFETY: `tp` is a live type object (`cls` holds a reference) and the GIL is held.
    let tag = unsafe { (*tp).tp_version_tag };
    (tag != 0).then_some(tag)
}

/// The offsets of `plan`'s fields in instances of `cls` when every field is a writable
/// object slot found by the class's own lookup and `cls` uses the generic `__setattr__`.
fn compute(cls: &Bound<'_, PyType>, plan: &StructPlan) -> Option<SlotLayout> {
    let py = cls.py();
    let tp = cls.as_type_ptr();
    // SAFETY: `tp` is a live type object and the GIL is held.
    // Addresses of C functions in the interpreter (one each), compared as CPython
    // compares slots.
    let setattro = unsafe { (*tp).tp_setattro }.map(|f| f as usize);
    let generic = setattro == Some(ffi::PyObject_GenericSetAttr as *const () as usize);
    if !generic {
        return None;
    }
    let mut offsets = Vec::with_capacity(plan.fields.len());
    for f in &plan.fields {
        if f.placeholder {
            offsets.push(0);
            continue;
        }
        // A slot read on the class is its descriptor (what `setattr` finds on the type).
        let d = cls.getattr(f.attr.bind(py)).ok()?;
        let p = d.as_ptr();
        // SAFETY: `p` is a live object; its type is compared with the member descriptor
        // type before it is read as a `PyMemberDescrObject`, whose `d_member` points to
        // the class's `PyMemberDef` (it lives as long as the class, which the layout
        // keeps alive); `PyType_IsSubtype` only reads the two types.
        let offset = unsafe {
            if ffi::Py_TYPE(p) != std::ptr::addr_of_mut!(ffi::PyMemberDescr_Type) {
                return None;
            }
            let descr = p.cast::<ffi::PyMemberDescrObject>();
            if ffi::PyType_IsSubtype(tp, (*descr).d_common.d_type) == 0 {
                return None;
            }
            let m = (*descr).d_member.cast::<ffi::PyMemberDef>();
            if m.is_null() || (*m).type_code != ffi::Py_T_OBJECT_EX || (*m).flags != 0 {
                return None;
            }
            (*m).offset
        };
        offsets.push(offset);
    }
    Some(SlotLayout {
        class: cls.clone().unbind(),
        version: version(cls)?,
        offsets: offsets.into(),
    })
}

/// `plan`'s field offsets in a new instance of `cls`, when its fields are plain slots
/// (computed once per class version); `None`: use `setattr`.
pub(crate) fn offsets(
    cache: &SlotCache,
    cls: &Bound<'_, PyType>,
    plan: &StructPlan,
) -> Option<Arc<[isize]>> {
    let mut g = match cache.lock() {
        Ok(g) => g,
        Err(p) => p.into_inner(),
    };
    let current = version(cls)?;
    let fresh = g
        .as_ref()
        .is_some_and(|l| l.class.is(cls) && l.version == current);
    if !fresh {
        *g = compute(cls, plan);
    }
    g.as_ref()
        .filter(|l| l.class.is(cls) && l.version == current)
        .map(|l| Arc::clone(&l.offsets))
}

/// Stores `value` in the slot at `offset` of `obj`, as `setattr` does through the slot's
/// descriptor (the old value, if any, released).
///
/// # Safety
/// `offset` must come from [`offsets`] for `obj`'s exact class. (The class may change
/// meanwhile — Python code can run while the fields are decoded — but an instance's
/// layout never does: the slot stays a slot of `obj`.)
pub(crate) unsafe fn store(obj: &Bound<'_, PyAny>, offset: isize, value: Bound<'_, PyAny>) {
    // SAFETY: per the contract, `offset` is a `Py_T_OBJECT_EX` slot of `obj`'s class,
    // inside the instance: a `*mut PyObject` field, NULL or owning a reference. We move
    // our reference in and release the old one, as `PyMember_SetOne` does.
    unsafe {
        let addr = obj
            .as_ptr()
            .cast::<u8>()
            .offset(offset)
            .cast::<*mut ffi::PyObject>();
        let old = std::mem::replace(&mut *addr, value.into_ptr());
        ffi::Py_XDECREF(old);
    }
}
