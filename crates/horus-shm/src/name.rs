//! Segment names: `/dev/shm/horus.<namespace>.<kind>.<name>`.
//!
//! The namespace keeps users and test runs apart: `HORUS_NAMESPACE` if set,
//! otherwise `u<uid>`. Names are restricted to a small alphabet so that the
//! mapping to a file name is injective: `/` becomes `~`, and `~` is not
//! allowed; a namespace has no `.` ([`validate_namespace`]), so the first
//! `.`-separated part after `horus` is the namespace, the next the kind (a
//! fixed word) and the rest the name, whatever dots the name has. (A
//! namespace with dots made namespace `a` with topic `b.t.c` and namespace
//! `a.t.b` with topic `c` one segment: each read the other's messages.)

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

/// Checks a namespace: a valid name ([`validate`]) without `.` (the
/// separator of a segment name's parts), so that no two namespaces share a
/// segment.
pub fn validate_namespace(namespace: &str) -> Result<(), NameError> {
    validate(namespace)?;
    if namespace.contains('.') {
        return Err(NameError::NamespaceDot {
            namespace: namespace.to_owned(),
        });
    }
    Ok(())
}

/// The POSIX shm name (with leading `/`) for `kind` (e.g. `t` for topics)
/// and `name` in `namespace`.
pub fn segment_name(namespace: &str, kind: &str, name: &str) -> Result<String, NameError> {
    validate_namespace(namespace)?;
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

    /// What broke: namespace `zq` with topic `b.t.c` and namespace `zq.t.b` with
    /// topic `c` were the one segment `/horus.zq.t.b.t.c` (found by a misuse probe: a
    /// message sent in one namespace was received in the other).
    #[test]
    fn no_two_namespaces_share_a_segment_name() {
        assert_eq!(
            segment_name("zq", "t", "b.t.c").unwrap(),
            "/horus.zq.t.b.t.c"
        );
        assert_eq!(
            segment_name("zq.t.b", "t", "c"),
            Err(NameError::NamespaceDot {
                namespace: "zq.t.b".into()
            })
        );
        assert!(validate_namespace("robot-1_a/b").is_ok());
        assert!(validate_namespace("robot.1").is_err());
        // Names keep their dots.
        assert!(validate("scan.front").is_ok());
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
