//! `read_str`'s checks: plain ASCII takes the one-pass path, everything else the exact
//! checks, and both give the same answers and errors as `str::from_utf8` + a NUL scan.

use horus_cdr::{CdrReader, DecodeError};

/// A CDR string of `text` (length with terminator, bytes, NUL).
fn wire(text: &[u8]) -> Vec<u8> {
    let mut v = ((text.len() + 1) as u32).to_le_bytes().to_vec();
    v.extend_from_slice(text);
    v.push(0);
    v
}

#[test]
fn strings_read_as_from_utf8_and_a_nul_scan_say() {
    let mut cases: Vec<Vec<u8>> = vec![
        b"".to_vec(),
        b"base_link".to_vec(),
        b"\x01\x7f exactly ascii".to_vec(),
        "ünïcødé 𝄞".as_bytes().to_vec(),
        b"bad \xff byte".to_vec(),
        b"\x80".to_vec(),
        b"lone \xe2\x82 prefix".to_vec(),
        b"nul \0 inside".to_vec(),
        b"nul \0 and \xff".to_vec(),
    ];
    // A NUL or a high byte at every position of words and remainders.
    for len in 1..20 {
        for at in 0..len {
            for bad in [0u8, 0x80, 0xC3] {
                let mut t = vec![b'k'; len];
                t[at] = bad;
                cases.push(t);
            }
        }
    }
    for text in cases {
        let expected = if text.contains(&0) {
            Err(DecodeError::StringContainsNul { offset: 0 })
        } else {
            std::str::from_utf8(&text).map_err(|_| DecodeError::StringNotUtf8 { offset: 0 })
        };
        let bytes = wire(&text);
        assert_eq!(CdrReader::new(&bytes).read_str(None), expected, "{text:?}");
    }
}
