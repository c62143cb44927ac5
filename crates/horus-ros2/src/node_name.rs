//! The ROS 2 node name the bridge goes by in the ROS 2 graph (`/horus_bridge` unless
//! configured), checked by the rules rcl applies to node names and namespaces.

/// The name a bridge goes by when none is configured.
pub const DEFAULT_NODE_NAME: &str = "horus_bridge";

/// Longest node name and longest namespace, in bytes (rmw_dds_common's
/// `NodeEntitiesInfo` carries each as a `string<=256`; rcl allows 255 for a name).
pub const MAX_NODE_NAME_BYTES: usize = 255;

/// A ROS 2 node name with its namespace (`/horus_bridge`, `/robot1/horus_bridge`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RosNodeName {
    /// `/` or `/a/b`.
    namespace: String,
    /// The last part.
    name: String,
}

/// Why a node name cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NodeNameError {
    /// Nothing after the namespace.
    #[error("ROS 2 node name {0:?}: empty")]
    Empty(String),
    /// A part is empty (`a//b`, a trailing `/`) or holds a character other than ASCII
    /// letters, digits and `_`, or starts with a digit (rcl's rule for names and
    /// namespace parts).
    #[error(
        "ROS 2 node name {name:?}: part {part:?} is not a ROS 2 name part (letters, digits, \
         `_`; not starting with a digit)"
    )]
    BadPart {
        /// The name given.
        name: String,
        /// The offending part.
        part: String,
    },
    /// The name or the namespace is longer than [`MAX_NODE_NAME_BYTES`].
    #[error("ROS 2 node name {0:?}: name or namespace longer than 255 bytes")]
    TooLong(String),
}

impl Default for RosNodeName {
    fn default() -> RosNodeName {
        RosNodeName {
            namespace: "/".into(),
            name: DEFAULT_NODE_NAME.into(),
        }
    }
}

/// Whether `part` is a ROS 2 name part (also the rule for an enclave's parts).
pub(crate) fn valid_part(part: &str) -> bool {
    let mut chars = part.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

impl RosNodeName {
    /// Parses `name`, `/name`, `ns/name` or `/ns1/ns2/name` (a leading `/` optional: the
    /// namespace is always absolute).
    pub fn parse(s: &str) -> Result<RosNodeName, NodeNameError> {
        let rel = s.strip_prefix('/').unwrap_or(s);
        let (ns, name) = match rel.rsplit_once('/') {
            Some((ns, name)) => (Some(ns), name),
            None => (None, rel),
        };
        if name.is_empty() && ns.is_none() {
            return Err(NodeNameError::Empty(s.to_owned()));
        }
        let parts = ns.into_iter().flat_map(|ns| ns.split('/')).chain([name]);
        for part in parts {
            if !valid_part(part) {
                return Err(NodeNameError::BadPart {
                    name: s.to_owned(),
                    part: part.to_owned(),
                });
            }
        }
        let namespace = format!("/{}", ns.unwrap_or(""));
        if namespace.len() > MAX_NODE_NAME_BYTES || name.len() > MAX_NODE_NAME_BYTES {
            return Err(NodeNameError::TooLong(s.to_owned()));
        }
        Ok(RosNodeName {
            namespace,
            name: name.to_owned(),
        })
    }

    /// The namespace (`/`, `/robot1`).
    pub fn namespace(&self) -> &str {
        &self.namespace
    }

    /// The node's own name (`horus_bridge`).
    pub fn name(&self) -> &str {
        &self.name
    }
}

impl std::fmt::Display for RosNodeName {
    /// The fully qualified name (`/horus_bridge`, `/robot1/horus_bridge`).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.namespace == "/" {
            write!(f, "/{}", self.name)
        } else {
            write!(f, "{}/{}", self.namespace, self.name)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_with_and_without_namespace_parse() {
        let n = RosNodeName::parse("horus_bridge").unwrap();
        assert_eq!((n.namespace(), n.name()), ("/", "horus_bridge"));
        assert_eq!(n, RosNodeName::default());
        assert_eq!(RosNodeName::parse("/horus_bridge").unwrap(), n);
        let n = RosNodeName::parse("/robot1/arm/bridge_2").unwrap();
        assert_eq!((n.namespace(), n.name()), ("/robot1/arm", "bridge_2"));
        assert_eq!(n.to_string(), "/robot1/arm/bridge_2");
        assert_eq!(
            RosNodeName::parse("robot1/b").unwrap().namespace(),
            "/robot1"
        );
    }

    #[test]
    fn names_ros2_refuses_are_refused_with_the_part_at_fault() {
        assert!(matches!(
            RosNodeName::parse(""),
            Err(NodeNameError::Empty(_))
        ));
        assert!(matches!(
            RosNodeName::parse("/"),
            Err(NodeNameError::Empty(_))
        ));
        for (bad, part) in [
            ("1bridge", "1bridge"),
            ("my-bridge", "my-bridge"),
            ("a//b", ""),
            ("/a/b/", ""),
            ("a/9x/b", "9x"),
            ("brücke", "brücke"),
            ("a b", "a b"),
        ] {
            match RosNodeName::parse(bad) {
                Err(NodeNameError::BadPart { part: p, .. }) => assert_eq!(p, part, "{bad}"),
                other => panic!("{bad}: {other:?}"),
            }
        }
        let long = "x".repeat(MAX_NODE_NAME_BYTES + 1);
        assert!(matches!(
            RosNodeName::parse(&long),
            Err(NodeNameError::TooLong(_))
        ));
        let long_ns = format!("{}/{}/n", "a".repeat(200), "b".repeat(60));
        assert!(matches!(
            RosNodeName::parse(&long_ns),
            Err(NodeNameError::TooLong(_))
        ));
        assert!(RosNodeName::parse(&"x".repeat(MAX_NODE_NAME_BYTES)).is_ok());
    }
}
