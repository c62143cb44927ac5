//! Where two values or two encodings differ, said so a person can find it.

use std::ops::Range;

use horus_idl::cdr::CdrValue;

/// At most this many characters of a value in a message.
const SHOWN: usize = 120;

fn shown(v: &CdrValue) -> String {
    let text = format!("{v:?}");
    match text.char_indices().nth(SHOWN) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text,
    }
}

/// The first place where `got` differs from `want` (`None` if they are equal), as
/// `path: got … want …`. Floats compare by bits (`-0.0` is not `0.0`).
pub(crate) fn first_difference(got: &CdrValue, want: &CdrValue) -> Option<String> {
    diff(got, want, &mut String::new())
}

fn diff(got: &CdrValue, want: &CdrValue, path: &mut String) -> Option<String> {
    let here = |path: &str| {
        let at = if path.is_empty() { "(message)" } else { path };
        Some(format!(
            "{at}: {} where {} was expected",
            shown(got),
            shown(want)
        ))
    };
    match (got, want) {
        (CdrValue::Struct(a), CdrValue::Struct(b)) if a.len() == b.len() => {
            for ((na, va), (nb, vb)) in a.iter().zip(b) {
                if na != nb {
                    return here(path);
                }
                let len = path.len();
                path.push('.');
                path.push_str(na);
                if let Some(d) = diff(va, vb, path) {
                    return Some(d);
                }
                path.truncate(len);
            }
            None
        }
        (CdrValue::Array(a), CdrValue::Array(b)) if a.len() == b.len() => {
            for (i, (va, vb)) in a.iter().zip(b).enumerate() {
                let len = path.len();
                path.push_str(&format!("[{i}]"));
                if let Some(d) = diff(va, vb, path) {
                    return Some(d);
                }
                path.truncate(len);
            }
            None
        }
        (CdrValue::Float32(a), CdrValue::Float32(b)) if a.to_bits() == b.to_bits() => None,
        (CdrValue::Float64(a), CdrValue::Float64(b)) if a.to_bits() == b.to_bits() => None,
        (CdrValue::Float32(_) | CdrValue::Float64(_), _) => here(path),
        (CdrValue::String(a), CdrValue::String(b))
        | (CdrValue::WString(a), CdrValue::WString(b))
            if a != b =>
        {
            let at = a.chars().zip(b.chars()).take_while(|(x, y)| x == y).count();
            let from = |s: &str| s.chars().skip(at).take(20).collect::<String>();
            Some(format!(
                "{path}: string differs from character {at} on: {:?} where {:?} was expected \
                 ({} and {} characters)",
                from(a),
                from(b),
                a.chars().count(),
                b.chars().count()
            ))
        }
        (CdrValue::Bytes(a), CdrValue::Bytes(b)) if a != b => {
            let at = a.iter().zip(b).take_while(|(x, y)| x == y).count();
            Some(format!(
                "{path}: bytes differ from byte {at} on: {:?} where {:?} was expected \
                 ({} and {} bytes)",
                &a[at..a.len().min(at + 8)],
                &b[at..b.len().min(at + 8)],
                a.len(),
                b.len()
            ))
        }
        _ if got == want => None,
        _ => here(path),
    }
}

/// Bytes compared and the first difference of `ours` from `theirs` outside `padding`
/// (ranges of `ours`), over `ours.len()` bytes (`theirs` may run on past the message).
pub(crate) struct ByteComparison {
    /// Bytes compared (all but padding).
    pub(crate) compared: usize,
    /// Padding bytes not compared.
    pub(crate) padding: usize,
    /// The first byte that differs: offset, ours, theirs (`None` past their end).
    pub(crate) first_difference: Option<(usize, u8, Option<u8>)>,
    /// A padding byte of ours that is not zero (horus writes zeros).
    pub(crate) nonzero_padding: Option<usize>,
}

/// Compares `ours` with the start of `theirs`, skipping `padding`.
pub(crate) fn compare_bytes(
    ours: &[u8],
    theirs: &[u8],
    padding: &[Range<usize>],
) -> ByteComparison {
    let mut is_padding = vec![false; ours.len()];
    for r in padding {
        for i in r.clone() {
            if let Some(slot) = is_padding.get_mut(i) {
                *slot = true;
            }
        }
    }
    let mut out = ByteComparison {
        compared: 0,
        padding: 0,
        first_difference: None,
        nonzero_padding: None,
    };
    for (i, &byte) in ours.iter().enumerate() {
        if is_padding[i] {
            out.padding += 1;
            if byte != 0 && out.nonzero_padding.is_none() {
                out.nonzero_padding = Some(i);
            }
            continue;
        }
        out.compared += 1;
        let other = theirs.get(i).copied();
        if other != Some(byte) && out.first_difference.is_none() {
            out.first_difference = Some((i, byte, other));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn padding_bytes_are_skipped_and_others_compared() {
        let c = compare_bytes(&[1, 0, 0, 4], &[1, 9, 9, 4, 7], &[1..2, 2..3]);
        assert_eq!((c.compared, c.padding), (2, 2));
        assert!(c.first_difference.is_none() && c.nonzero_padding.is_none());
        let c = compare_bytes(&[1, 2, 3], &[1, 2], &[]);
        assert_eq!(c.first_difference, Some((2, 3, None)));
        let c = compare_bytes(&[1, 5, 3], &[1, 5, 3], &[0..0, 1..2]);
        assert_eq!(c.nonzero_padding, Some(1));
    }

    #[test]
    fn difference_names_the_path_and_tells_negative_zero_apart() {
        let v = |x: f64| {
            CdrValue::Struct(vec![(
                "a".into(),
                CdrValue::Array(vec![CdrValue::Float64(1.0), CdrValue::Float64(x)]),
            )])
        };
        assert_eq!(first_difference(&v(0.0), &v(0.0)), None);
        let d = first_difference(&v(-0.0), &v(0.0)).unwrap();
        assert!(d.starts_with(".a[1]: Float64(-0.0)"), "{d}");
    }

    #[test]
    fn strings_and_bytes_say_where_they_start_to_differ() {
        let s = |t: &str| CdrValue::String(t.into());
        let d = first_difference(&s("abcé"), &s("abcd")).unwrap();
        assert!(d.contains("character 3 on: \"é\" where \"d\""), "{d}");
        let d = first_difference(&CdrValue::Bytes(vec![1, 2]), &CdrValue::Bytes(vec![1])).unwrap();
        assert!(
            d.contains("byte 1 on: [2] where [] was expected (2 and 1 bytes)"),
            "{d}"
        );
    }
}
