//! Views of sequences and arrays of structures: validated once, iterated in place.

use std::marker::PhantomData;

use crate::error::DecodeError;
use crate::message::RosView;
use crate::reader::CdrReader;

/// A sequence (or fixed array) of nested messages, viewed in place: every element was
/// read and checked when the view was made; iterating reads each again, allocating
/// nothing.
///
/// If the bytes change under the view after it was made (only a publisher that breaks
/// the protocol and rewrites a chunk it has sent can do that), iteration stops at the
/// first element that no longer reads; it never reads out of bounds.
#[derive(Clone, Copy)]
pub struct SeqView<'a, V> {
    start: CdrReader<'a>,
    len: usize,
    _v: PhantomData<fn() -> V>,
}

impl<'a, V: RosView<'a>> SeqView<'a, V> {
    /// Reads `len` elements from `r` (checking each) and returns a view of them; `r` is
    /// left after the last.
    pub fn read(r: &mut CdrReader<'a>, len: usize) -> Result<Self, DecodeError> {
        let start = *r;
        for _ in 0..len {
            V::read_view(r)?;
        }
        Ok(SeqView {
            start,
            len,
            _v: PhantomData,
        })
    }

    /// Number of elements.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The elements in order.
    pub fn iter(&self) -> SeqIter<'a, V> {
        SeqIter {
            r: self.start,
            left: self.len,
            _v: PhantomData,
        }
    }

    /// Element `i` (reads the elements before it: O(i)).
    pub fn get(&self, i: usize) -> Option<V> {
        self.iter().nth(i)
    }
}

impl<'a, V: RosView<'a>> IntoIterator for SeqView<'a, V> {
    type Item = V;
    type IntoIter = SeqIter<'a, V>;
    fn into_iter(self) -> SeqIter<'a, V> {
        self.iter()
    }
}

impl<'a, V: RosView<'a> + std::fmt::Debug> std::fmt::Debug for SeqView<'a, V> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

/// Iterator over a [`SeqView`].
#[derive(Clone)]
pub struct SeqIter<'a, V> {
    r: CdrReader<'a>,
    left: usize,
    _v: PhantomData<fn() -> V>,
}

impl<'a, V: RosView<'a>> Iterator for SeqIter<'a, V> {
    type Item = V;
    fn next(&mut self) -> Option<V> {
        if self.left == 0 {
            return None;
        }
        match V::read_view(&mut self.r) {
            Ok(v) => {
                self.left -= 1;
                Some(v)
            }
            Err(_) => {
                self.left = 0;
                None
            }
        }
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (0, Some(self.left))
    }
}
