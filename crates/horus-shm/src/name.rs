//! Segment names: `/dev/shm/horus.<namespace>.<topic>`.
//!
//! The namespace keeps users and test runs apart: `HORUS_NAMESPACE` if set,
//! otherwise `u<uid>`. Topic names are restricted to a small alphabet so that
//! the mapping to a file name is injective (`/` becomes `~`, and `~` is not
//! allowed in topic names).

use crate::error::NameError;

/// Longest topic name accepted.
pub const MAX_TOPIC_NAME: usize = 200;

/// The namespace in force for this process.
pub fn namespace() -> String {
    match std::env::var("HORUS_NAMESPACE") {
        Ok(ns) if !ns.is_empty() => ns,
        // SAFETY: getuid has no preconditions and cannot fail.
        _ => format!("u{}", unsafe { libc::getuid() }),
    }
}

/// Checks a namespace or topic name: non-empty, at most
/// [`MAX_TOPIC_NAME`] bytes, only `[A-Za-z0-9_./-]`.
pub fn validate(name: &str) -> Result<(), NameError> {
    if name.is_empty() || name.len() > MAX_TOPIC_NAME {
        return Err(NameError::Length {
            name: name.to_owned(),
            max: MAX_TOPIC_NAME,
        });
    }
    if let Some(c) = name
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '/' | '-')))
    {
        return Err(NameError::Character {
            name: name.to_owned(),
            character: c,
        });
    }
    Ok(())
}

/// The POSIX shm name (with leading `/`) for `kind` (e.g. `t` for topics)
/// and `name` in `namespace`.
pub fn segment_name(namespace: &str, kind: &str, name: &str) -> Result<String, NameError> {
    validate(namespace)?;
    validate(name)?;
    let clean = |s: &str| s.trim_matches('/').replace('/', "~");
    Ok(format!(
        "/horus.{}.{}.{}",
        clean(namespace),
        kind,
        clean(name)
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slashes_map_to_tilde() {
        assert_eq!(
            segment_name("ns", "t", "/robot/imu").unwrap(),
            "/horus.ns.t.robot~imu"
        );
    }

    #[test]
    fn bad_names_are_typed_errors() {
        assert!(matches!(
            validate("a b"),
            Err(NameError::Character { character: ' ', .. })
        ));
        assert!(matches!(validate(""), Err(NameError::Length { .. })));
        assert!(matches!(validate("a~b"), Err(NameError::Character { .. })));
    }
}
