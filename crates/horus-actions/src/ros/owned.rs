//! A raw endpoint with the topic it is on: the topic is unlinked when the endpoint is
//! dropped and nobody else uses it (dead processes' places reclaimed first), as a typed
//! `Topic` does — else a topic whose other users were killed stays in shared memory.

use std::mem::ManuallyDrop;
use std::ops::{Deref, DerefMut};

use horus::inspect::TopicView;

pub(crate) struct Owned<E> {
    endpoint: ManuallyDrop<E>,
    view: TopicView,
}

impl<E> Owned<E> {
    pub(crate) fn new<X>(
        view: TopicView,
        make: impl FnOnce(&TopicView) -> Result<E, X>,
    ) -> Result<Self, X> {
        let endpoint = ManuallyDrop::new(make(&view)?);
        Ok(Owned { endpoint, view })
    }
}

impl<E> Deref for Owned<E> {
    type Target = E;
    fn deref(&self) -> &E {
        &self.endpoint
    }
}

impl<E> DerefMut for Owned<E> {
    fn deref_mut(&mut self) -> &mut E {
        &mut self.endpoint
    }
}

impl<E> Drop for Owned<E> {
    fn drop(&mut self) {
        // SAFETY: `endpoint` is dropped exactly once, here, and never used again: `self`
        // is being dropped and `ManuallyDrop` keeps the field from being dropped twice.
        unsafe { ManuallyDrop::drop(&mut self.endpoint) };
        // The endpoint has left the topic: unlink it unless another process uses it.
        self.view.unlink_if_unused();
    }
}
