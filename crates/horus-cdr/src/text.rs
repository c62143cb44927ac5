//! The byte checks of CDR strings, eight bytes at a time: whether a string holds a NUL
//! (refused on write and on read), and the one-pass fast path of the read check — plain
//! ASCII without NUL, which is valid UTF-8 without asking `str::from_utf8`.
//!
//! Both use the classic SWAR zero-byte test (Mycroft's "haszero", as in Hacker's Delight
//! and Rust's own `memchr`): for a word `x`, `(x - 0x01…01) & !x & 0x80…80` is non-zero
//! exactly when some byte of `x` is zero. Frame ids and joint names are short, so these
//! loops beat a call to `memchr` and a separate UTF-8 pass (measured: the reader's string
//! checks were half of a 50-transform TFMessage view, ~290 instructions per string).

/// `0x01` in every byte.
const LO: u64 = 0x0101_0101_0101_0101;
/// `0x80` in every byte.
const HI: u64 = 0x8080_8080_8080_8080;

#[inline]
fn word(chunk: &[u8]) -> u64 {
    let mut a = [0u8; 8];
    a.copy_from_slice(chunk);
    u64::from_le_bytes(a)
}

/// Whether `b` contains a zero byte.
#[inline]
pub(crate) fn has_nul(b: &[u8]) -> bool {
    let mut chunks = b.chunks_exact(8);
    let mut found = 0u64;
    for c in &mut chunks {
        let x = word(c);
        found |= x.wrapping_sub(LO) & !x & HI;
    }
    found != 0 || chunks.remainder().contains(&0)
}

/// Whether every byte of `b` is in `1..=0x7F`: ASCII without NUL, so valid UTF-8 with no
/// NUL inside.
///
/// Per word: `x & HI` flags a byte ≥ 0x80; when every byte is below 0x80, `x - LO` sets a
/// byte's top bit exactly when the lowest zero byte is reached (bytes below it are ≥ 1 and
/// borrow nothing), so `(x | (x - LO)) & HI == 0` holds exactly for words of bytes in
/// `1..=0x7F`. The same test on single bytes for the remainder.
#[inline]
pub(crate) fn is_ascii_without_nul(b: &[u8]) -> bool {
    let mut chunks = b.chunks_exact(8);
    let mut bad = 0u64;
    for c in &mut chunks {
        let x = word(c);
        bad |= (x | x.wrapping_sub(LO)) & HI;
    }
    for &c in chunks.remainder() {
        bad |= u64::from((c | c.wrapping_sub(1)) & 0x80);
    }
    bad == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nul_is_found_at_every_position_and_length() {
        for len in 0..40 {
            let clean = vec![b'a'; len];
            assert!(!has_nul(&clean), "len {len}");
            for at in 0..len {
                let mut v = clean.clone();
                v[at] = 0;
                assert!(has_nul(&v), "len {len} at {at}");
                // A byte of 0x80 or 0x01 next to it changes nothing.
                if at + 1 < len {
                    v[at + 1] = 0x80;
                    assert!(has_nul(&v));
                }
            }
        }
        assert!(!has_nul("ü€𝄞 frame".as_bytes()));
    }

    #[test]
    fn ascii_without_nul_is_exactly_bytes_1_to_7f() {
        // Every byte value at every position of words and remainders.
        for len in 1..20 {
            for at in 0..len {
                for value in 0..=255u8 {
                    let mut v = vec![b'x'; len];
                    v[at] = value;
                    let expected = (1..=0x7F).contains(&value);
                    assert_eq!(
                        is_ascii_without_nul(&v),
                        expected,
                        "len {len} at {at} value {value:#x}"
                    );
                }
            }
        }
        assert!(is_ascii_without_nul(b""));
        assert!(is_ascii_without_nul(b"base_link\x01\x7f"));
    }
}
