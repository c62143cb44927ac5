//! Helpers shared by the test binaries.
#![allow(dead_code)]

use std::sync::atomic::{AtomicU32, Ordering};

use horus_tf::{Capacities, TfBuffer, Transform};

/// A namespace no other test (or test run) uses.
pub(crate) fn unique_ns(tag: &str) -> String {
    static N: AtomicU32 = AtomicU32::new(0);
    format!(
        "tftest-{}-{}-{}",
        std::process::id(),
        tag,
        N.fetch_add(1, Ordering::Relaxed)
    )
}

/// Whether `/dev/shm` holds anything of namespace `ns`.
pub(crate) fn shm_leftovers(ns: &str) -> Vec<String> {
    let prefix = format!("horus.{ns}.");
    std::fs::read_dir("/dev/shm")
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| n.starts_with(&prefix))
        .collect()
}

thread_local! {
    static OPENED: std::cell::RefCell<Vec<String>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// Asserts that every shared buffer this thread made with [`buffer`] is gone
/// from `/dev/shm` (their handles are dropped by now).
pub(crate) fn assert_nothing_left() {
    for ns in OPENED.with(|o| std::mem::take(&mut *o.borrow_mut())) {
        assert!(
            shm_leftovers(&ns).is_empty(),
            "{ns}: {:?}",
            shm_leftovers(&ns)
        );
    }
}

/// The two implementations every semantic test runs against.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Backend {
    Shared,
    InProcess,
}

/// A buffer of `backend` with `caps`; the namespace (shared) to check afterwards.
pub(crate) fn buffer(backend: Backend, caps: Capacities, tag: &str) -> (TfBuffer, Option<String>) {
    let b = TfBuffer::builder().capacities(caps);
    match backend {
        Backend::Shared => {
            let ns = unique_ns(tag);
            OPENED.with(|o| o.borrow_mut().push(ns.clone()));
            (b.open(&ns).unwrap(), Some(ns))
        }
        Backend::InProcess => (b.in_process().unwrap(), None),
    }
}

pub(crate) const S: i64 = 1_000_000_000;

pub(crate) fn yaw(angle: f64) -> [f64; 4] {
    [0.0, 0.0, (angle / 2.0).sin(), (angle / 2.0).cos()]
}

pub(crate) fn tf(t: [f64; 3], q: [f64; 4]) -> Transform {
    Transform {
        translation: t,
        rotation: q,
    }
}

pub(crate) fn at(t: [f64; 3]) -> Transform {
    tf(t, [0.0, 0.0, 0.0, 1.0])
}

#[track_caller]
pub(crate) fn assert_close(actual: &Transform, expected: &Transform) {
    let ok_t = actual
        .translation
        .iter()
        .zip(&expected.translation)
        .all(|(a, b)| (a - b).abs() < 1e-9);
    // q and -q are the same rotation.
    let d: f64 = actual
        .rotation
        .iter()
        .zip(&expected.rotation)
        .map(|(a, b)| a * b)
        .sum();
    let ok_q = (d.abs() - 1.0).abs() < 1e-9;
    assert!(ok_t && ok_q, "got {actual:?}, expected {expected:?}");
}
