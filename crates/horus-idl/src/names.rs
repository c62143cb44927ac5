//! Name rules, exactly as ROS 2's `rosidl_adapter` checks them.

/// A package name: `[a-z][a-z0-9_]*`, no `__`, no trailing `_`.
pub fn is_valid_package_name(name: &str) -> bool {
    let bytes = name.as_bytes();
    match bytes.first() {
        Some(b'a'..=b'z') => {}
        _ => return false,
    }
    bytes
        .iter()
        .all(|b| matches!(b, b'a'..=b'z' | b'0'..=b'9' | b'_'))
        && !name.contains("__")
        && !name.ends_with('_')
}

/// A field name: the same rule as a package name.
pub fn is_valid_field_name(name: &str) -> bool {
    is_valid_package_name(name)
}

/// A message name: `[A-Z][A-Za-z0-9]*`, after removing an optional `Sample_`
/// prefix and the suffixes ROS 2 uses for implied types (`_Request`,
/// `_Response`, `_Goal`, `_Result`, `_Feedback`), as `rosidl_adapter` does.
pub fn is_valid_message_name(name: &str) -> bool {
    let mut name = name.strip_prefix("Sample_").unwrap_or(name);
    for suffix in ["_Request", "_Response", "_Goal", "_Result", "_Feedback"] {
        if let Some(stripped) = name.strip_suffix(suffix) {
            name = stripped;
        }
    }
    let bytes = name.as_bytes();
    matches!(bytes.first(), Some(b'A'..=b'Z')) && bytes.iter().all(|b| b.is_ascii_alphanumeric())
}

/// A constant name: `[A-Z]([A-Z0-9_]?[A-Z0-9]+)*` — upper case, digits and
/// single underscores, not ending in `_`.
pub fn is_valid_constant_name(name: &str) -> bool {
    let bytes = name.as_bytes();
    matches!(bytes.first(), Some(b'A'..=b'Z'))
        && bytes
            .iter()
            .all(|b| matches!(b, b'A'..=b'Z' | b'0'..=b'9' | b'_'))
        && !name.contains("__")
        && !name.ends_with('_')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn package_and_field_names() {
        for ok in ["a", "std_msgs", "x9_y", "header"] {
            assert!(is_valid_package_name(ok), "{ok}");
        }
        for bad in ["", "Std", "9a", "_a", "a__b", "a_", "a-b", "aB", "ä"] {
            assert!(!is_valid_field_name(bad), "{bad}");
        }
    }

    #[test]
    fn message_names() {
        for ok in [
            "Image",
            "A",
            "TF2Error",
            "Empty_Request",
            "Sample_Foo",
            "X_Goal",
        ] {
            assert!(is_valid_message_name(ok), "{ok}");
        }
        for bad in ["", "image", "My_Type", "Foo_", "Ä", "_Request"] {
            assert!(!is_valid_message_name(bad), "{bad}");
        }
    }

    #[test]
    fn constant_names() {
        for ok in ["A", "NO_ERROR", "X1", "A_B_C", "A1_2"] {
            assert!(is_valid_constant_name(ok), "{ok}");
        }
        for bad in ["", "a", "A__B", "A_", "_A", "1A", "Ab"] {
            assert!(!is_valid_constant_name(bad), "{bad}");
        }
    }
}
