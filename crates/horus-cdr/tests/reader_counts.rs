//! Sequence counts against the bytes left.

use horus_cdr::{CdrReader, DecodeError};

#[test]
fn read_count_with_a_huge_element_size_is_refused_not_overflowed() {
    // Count 2 of elements of at least usize::MAX bytes each (a generated type's minimum
    // size saturates there): count × size overflowed u64 and panicked in debug builds.
    let body = [2, 0, 0, 0, 1, 2, 3, 4];
    let mut r = CdrReader::new(&body);
    assert!(matches!(
        r.read_count(usize::MAX, None),
        Err(DecodeError::CountTooLarge {
            count: 2,
            min_bytes: u64::MAX,
            ..
        })
    ));
}

#[test]
fn a_count_the_bytes_can_hold_is_accepted() {
    let body = [2, 0, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8];
    let mut r = CdrReader::new(&body);
    assert_eq!(r.read_count(4, None), Ok(2));
    let mut r = CdrReader::new(&body);
    assert!(matches!(
        r.read_count(4, Some(1)),
        Err(DecodeError::BoundExceeded {
            len: 2,
            bound: 1,
            ..
        })
    ));
}
