//! `CdrWriter::write_slice_with`: elements written in place give the bytes `write_slice`
//! gives, and counting never calls the fill.

use horus_cdr::CdrWriter;

#[test]
fn slice_written_in_place_equals_slice_copied() {
    let values: Vec<f64> = (0..9).map(|k| k as f64 * 1.5).collect();
    let mut a = vec![0xAAu8; 4 + 4 + 72];
    let mut b = vec![0x55u8; 4 + 4 + 72];
    let mut wa = CdrWriter::new(&mut a);
    wa.write(7u32).unwrap();
    wa.write_slice(&values).unwrap();
    let na = wa.finish();
    let mut wb = CdrWriter::new(&mut b);
    wb.write(7u32).unwrap();
    wb.write_slice_with::<f64>("v", values.len(), |out| {
        for (o, v) in out.chunks_exact_mut(8).zip(&values) {
            o.copy_from_slice(&v.to_le_bytes());
        }
    })
    .unwrap();
    assert_eq!(wb.finish(), na);
    assert_eq!(
        a, b,
        "padding zeroed and elements placed as write_slice places them"
    );
}

#[test]
fn counting_writer_sizes_without_calling_the_fill() {
    let mut w = CdrWriter::counting();
    w.write(1u8).unwrap();
    w.write_slice_with::<u32>("v", 3, |_| panic!("fill called while counting"))
        .unwrap();
    assert_eq!(w.finish(), 4 + 12);
    let mut w = CdrWriter::counting();
    w.write(1u8).unwrap();
    w.write_slice_with::<u32>("v", 0, |_| unreachable!())
        .unwrap();
    assert_eq!(w.finish(), 1, "no padding before absent elements");
}

#[test]
fn too_small_buffer_is_an_error_not_a_partial_fill() {
    let mut buf = [0u8; 8];
    let mut w = CdrWriter::new(&mut buf);
    let e = w
        .write_slice_with::<u64>("v", 2, |_| panic!("filled"))
        .unwrap_err();
    assert!(
        matches!(e, horus_cdr::EncodeError::BufferTooSmall { .. }),
        "{e}"
    );
}
