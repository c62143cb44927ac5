//! `bool` arrays and sequences viewed in place.

use crate::error::DecodeError;

/// `bool` elements viewed in place. Every byte was 0 or 1 when the view was made; the
/// elements are read as `byte != 0`, so bytes rewritten afterwards (a publisher that
/// breaks the protocol and rewrites a chunk it has sent) can make a value wrong but never
/// an invalid `bool`, which a `&[bool]` into shared memory could.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct BoolsView<'a> {
    bytes: &'a [u8],
}

impl<'a> BoolsView<'a> {
    /// Checks that every byte is 0 or 1 (`offset`: where `bytes` start in the body).
    pub(crate) fn new(bytes: &'a [u8], offset: usize) -> Result<Self, DecodeError> {
        match bytes.iter().position(|b| *b > 1) {
            Some(i) => Err(DecodeError::InvalidBool {
                offset: offset + i,
                value: bytes[i],
            }),
            None => Ok(BoolsView { bytes }),
        }
    }

    /// Number of elements.
    pub fn len(&self) -> usize {
        self.bytes.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }

    /// Element `i`.
    pub fn get(&self, i: usize) -> Option<bool> {
        self.bytes.get(i).map(|b| *b != 0)
    }

    /// The elements in order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = bool> + 'a {
        self.bytes.iter().map(|b| *b != 0)
    }

    /// The bytes (0 or 1 when the view was made).
    pub fn as_bytes(&self) -> &'a [u8] {
        self.bytes
    }

    /// The elements copied into a `Vec`.
    pub fn to_vec(&self) -> Vec<bool> {
        self.iter().collect()
    }
}

impl std::fmt::Debug for BoolsView<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

impl PartialEq<[bool]> for BoolsView<'_> {
    fn eq(&self, other: &[bool]) -> bool {
        self.len() == other.len() && self.iter().zip(other).all(|(a, b)| a == *b)
    }
}

impl<const N: usize> PartialEq<[bool; N]> for BoolsView<'_> {
    fn eq(&self, other: &[bool; N]) -> bool {
        *self == other[..]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_other_than_0_or_1_are_refused() {
        assert_eq!(
            BoolsView::new(&[1, 0, 7], 10),
            Err(DecodeError::InvalidBool {
                offset: 12,
                value: 7
            })
        );
        let v = BoolsView::new(&[1, 0, 1], 0).unwrap();
        assert_eq!(v, [true, false, true]);
        assert_eq!(v.to_vec(), vec![true, false, true]);
        assert_eq!(v.get(1), Some(false));
        assert_eq!(v.get(3), None);
        assert_eq!(format!("{v:?}"), "[true, false, true]");
    }
}
