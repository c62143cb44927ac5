//! The writer's one-check paths give the bytes of its field-by-field ones: blocks of
//! scalars, strings reserved whole, padding zeroed by one store (and by the exact fill
//! where fewer than 8 bytes are left).

use horus_cdr::{CdrReader, CdrWriter, EncodeError};

/// `u8 1, u32 2, u8 3, u16 4`, field by field, into a buffer of stale bytes.
fn field_by_field(buf: &mut [u8]) -> usize {
    let mut w = CdrWriter::new(buf);
    w.write(1u8).unwrap();
    w.write(2u32).unwrap();
    w.write(3u8).unwrap();
    w.write(4u16).unwrap();
    w.finish()
}

#[test]
fn a_block_of_scalars_is_the_fields_written_one_by_one() {
    let mut a = vec![0xAAu8; 12];
    let n = field_by_field(&mut a);
    let mut b = vec![0x55u8; 12];
    let mut w = CdrWriter::new(&mut b);
    w.write(1u8).unwrap();
    // What generated code writes for `u32 a, u8 b, u16 c`: offsets 0, 4, 6, padding zero.
    w.write_block::<8>(4, |blk| {
        blk[0..4].copy_from_slice(&2u32.to_le_bytes());
        blk[4] = 3;
        blk[5..6].fill(0);
        blk[6..8].copy_from_slice(&4u16.to_le_bytes());
    })
    .unwrap();
    assert_eq!(w.finish(), n);
    assert_eq!(a[..n], b[..n]);
    assert_eq!(&a[..n], &[1, 0, 0, 0, 2, 0, 0, 0, 3, 0, 4, 0]);
}

#[test]
fn a_counting_block_calls_no_fill_and_a_short_buffer_is_an_error() {
    let mut w = CdrWriter::counting();
    w.write(1u8).unwrap();
    w.write_block::<12>(8, |_| panic!("filled while counting"))
        .unwrap();
    assert_eq!(w.finish(), 8 + 12);
    let mut buf = [0u8; 11];
    let e = CdrWriter::new(&mut buf)
        .write_block::<12>(4, |_| panic!("filled"))
        .unwrap_err();
    assert!(
        matches!(
            e,
            EncodeError::BufferTooSmall {
                needed: 12,
                available: 11
            }
        ),
        "{e}"
    );
}

#[test]
fn padding_in_the_last_bytes_of_an_exact_buffer_is_zeroed() {
    // u8 then u16 at the very end: 1 byte of padding with fewer than 8 bytes left, so
    // the exact fill is used; stale bytes must not survive.
    let mut buf = [0xEEu8; 4];
    let mut w = CdrWriter::new(&mut buf);
    w.write(9u8).unwrap();
    w.write(0x0102u16).unwrap();
    assert_eq!(w.finish(), 4);
    assert_eq!(buf, [9, 0, 2, 1]);
    // ... and with room for the 8-byte store, the same bytes.
    let mut big = [0xEEu8; 16];
    let mut w = CdrWriter::new(&mut big);
    w.write(9u8).unwrap();
    w.write(0x0102u16).unwrap();
    assert_eq!(w.finish(), 4);
    assert_eq!(big[..4], [9, 0, 2, 1]);
}

#[test]
fn strings_are_written_whole_and_read_back() {
    for s in ["", "a", "laser", "base_link_0123456", "ünïcødé 𝄞 frame"] {
        let mut w = CdrWriter::counting();
        w.write(1u8).unwrap();
        w.write_string("s", s, None).unwrap();
        let size = w.finish();
        assert_eq!(size, 4 + 4 + s.len() + 1);
        let mut buf = vec![0xEEu8; size];
        let mut w = CdrWriter::new(&mut buf);
        w.write(1u8).unwrap();
        w.write_string("s", s, None).unwrap();
        assert_eq!(w.finish(), size);
        assert_eq!(buf[1..4], [0, 0, 0], "padding before the length");
        assert_eq!(buf[4..8], ((s.len() + 1) as u32).to_le_bytes());
        assert_eq!(&buf[8..8 + s.len()], s.as_bytes());
        assert_eq!(buf[size - 1], 0, "terminator");
        let mut r = CdrReader::new(&buf);
        let _: u8 = r.read().unwrap();
        assert_eq!(r.read_str(None).unwrap(), s);
    }
}

#[test]
fn a_nul_anywhere_in_a_string_is_refused_with_its_position() {
    for at in 0..20 {
        let mut s = "x".repeat(20);
        s.replace_range(at..at + 1, "\0");
        let mut buf = [0u8; 64];
        let e = CdrWriter::new(&mut buf)
            .write_string("name", &s, None)
            .unwrap_err();
        assert_eq!(e, EncodeError::StringContainsNul { field: "name", at });
    }
}
