//! What the monitor reads of a ROS 2-typed topic, from the `ros2msg` definition its segment
//! carries: the members of the message (for the detail view), and the publish stamp —
//! `header.stamp` (or `stamp`) when it is the message's first member, the only place whose
//! CDR offset does not depend on the message's contents.
//!
//! A ROS-typed message is read as its chunk: an 8-byte frame (4 reserved bytes and the
//! encapsulation header), then the CDR body. A first member `std_msgs/msg/Header` starts
//! with `builtin_interfaces/msg/Time stamp` (`int32 sec`, `uint32 nanosec`), as does a first
//! member `builtin_interfaces/msg/Time`: both put the stamp at body offset 0, chunk offset 8.

use horus::msgs::Ros2Type;
use horus_idl::{ArrayKind, ResolvedBase, ResolvedType};

use crate::model::FieldRow;

/// Chunk offset of the CDR body of a ROS-typed message.
const BODY: usize = 8;

/// The members of the type's root structure, with their ROS types (`std_msgs/msg/Header`,
/// `float32[]`); CDR has no fixed offsets, so rows carry none. Empty when the definition
/// does not read.
pub(crate) fn field_rows(ty: &Ros2Type) -> Vec<FieldRow> {
    // The definition comes from the topic's segment: untrusted, and read by horus_idl's
    // bounded reader (typed errors; a topic whose definition does not read shows nothing).
    let Ok((resolved, root)) = horus_idl::resolve_ros2msg(&ty.type_name, &ty.definition) else {
        return Vec::new();
    };
    let Some(root) = resolved.get_struct(&root) else {
        return Vec::new();
    };
    root.members
        .iter()
        .filter(|m| !m.placeholder)
        .map(|m| FieldRow {
            path: m.name.clone(),
            ty: type_text(&m.member_type),
            offset: None,
            size: None,
        })
        .collect()
}

/// A member's type as a `.msg` file writes it, with full names for nested types.
fn type_text(t: &ResolvedType) -> String {
    let base = match &t.base {
        ResolvedBase::Primitive(p) => format!("{p:?}").to_lowercase(),
        ResolvedBase::String { bound: None } => "string".into(),
        ResolvedBase::String { bound: Some(n) } => format!("string<={n}"),
        ResolvedBase::WString { bound: None } => "wstring".into(),
        ResolvedBase::WString { bound: Some(n) } => format!("wstring<={n}"),
        ResolvedBase::Nested(name) => name.to_string(),
    };
    match t.array {
        ArrayKind::Single => base,
        ArrayKind::Fixed(n) => format!("{base}[{n}]"),
        ArrayKind::Bounded(n) => format!("{base}[<={n}]"),
        ArrayKind::Unbounded => format!("{base}[]"),
    }
}

/// The path of the stamp (`header.stamp`, `stamp`) when the type's first member holds it.
pub(crate) fn find(ty: &Ros2Type) -> Option<(String, usize)> {
    let (resolved, root) = horus_idl::resolve_ros2msg(&ty.type_name, &ty.definition).ok()?;
    let first = resolved.get_struct(&root)?.members.first()?;
    if first.member_type.array != ArrayKind::Single {
        return None;
    }
    let ResolvedBase::Nested(nested) = &first.member_type.base else {
        return None;
    };
    match nested.to_string().as_str() {
        "std_msgs/msg/Header" => Some((format!("{}.stamp", first.name), BODY)),
        "builtin_interfaces/msg/Time" => Some((first.name.clone(), BODY)),
        _ => None,
    }
}

/// A `builtin_interfaces/msg/Time` at `offset` of `bytes` as ns since the epoch; `None` for
/// bytes too short, a negative `sec` or `nanosec` ≥ 1 s (not a wall-clock publish time).
pub(crate) fn read(bytes: &[u8], offset: usize) -> Option<u64> {
    let end = offset.checked_add(8)?;
    let b = bytes.get(offset..end)?;
    let sec = i32::from_le_bytes(b[..4].try_into().ok()?);
    let nanosec = u32::from_le_bytes(b[4..].try_into().ok()?);
    if sec < 0 || nanosec >= 1_000_000_000 {
        return None;
    }
    Some(sec as u64 * 1_000_000_000 + nanosec as u64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use horus::cdr::RosMessage;
    use horus_ros_msgs::nav_msgs::msg::Path;
    use horus_ros_msgs::sensor_msgs::msg::LaserScan;
    use horus_ros_msgs::tf2_msgs::msg::TFMessage;

    fn ty<M: RosMessage>() -> Ros2Type {
        Ros2Type::new(M::TYPE_NAME, M::TYPE_HASH, M::DEFINITION)
    }

    #[test]
    fn a_first_header_member_gives_header_stamp_at_the_body_start() {
        assert_eq!(find(&ty::<LaserScan>()), Some(("header.stamp".into(), 8)));
        assert_eq!(find(&ty::<Path>()), Some(("header.stamp".into(), 8)));
    }

    #[test]
    fn the_members_are_listed_with_their_ros_types() {
        let rows = field_rows(&ty::<LaserScan>());
        let got: Vec<_> = rows
            .iter()
            .map(|r| (r.path.as_str(), r.ty.as_str()))
            .collect();
        assert_eq!(got[0], ("header", "std_msgs/msg/Header"));
        assert_eq!(got[1], ("angle_min", "float32"));
        assert_eq!(got.last(), Some(&("intensities", "float32[]")));
        assert!(rows.iter().all(|r| r.offset.is_none() && r.size.is_none()));
    }

    #[test]
    fn a_type_without_a_leading_header_has_no_stamp() {
        assert_eq!(find(&ty::<TFMessage>()), None);
    }

    #[test]
    fn a_definition_that_does_not_read_has_no_stamp() {
        let bad = Ros2Type::new("pkg/msg/Bad", LaserScan::TYPE_HASH, "int32[ x\n");
        assert_eq!(find(&bad), None);
        assert!(field_rows(&bad).is_empty());
    }

    #[test]
    fn the_stamp_reads_from_the_chunk_and_refuses_what_is_not_a_time() {
        let mut scan = LaserScan::default();
        scan.header.stamp.sec = 1_700_000_000;
        scan.header.stamp.nanosec = 5;
        let wire = horus::cdr::encode_message(&scan).unwrap();
        let mut chunk = vec![0u8; 4];
        chunk.extend_from_slice(&wire);
        assert_eq!(read(&chunk, 8), Some(1_700_000_000_000_000_005));
        assert_eq!(read(&chunk[..12], 8), None);
        scan.header.stamp.sec = -1;
        let mut neg = vec![0u8; 4];
        neg.extend_from_slice(&horus::cdr::encode_message(&scan).unwrap());
        assert_eq!(read(&neg, 8), None);
    }
}
