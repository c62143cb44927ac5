//! ROS 2 type names: `package/namespace/Name`, e.g. `sensor_msgs/msg/Image`.

use std::fmt;

use crate::ast::InterfaceKind;

/// A full ROS 2 type name, e.g. `sensor_msgs/msg/Image` or `std_srvs/srv/Empty_Request`.
///
/// Ordered as its text is (for valid names, whose characters all sort after `/`), so
/// that sorted names match ROS 2's sorting of referenced types.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct TypeName {
    /// The package, e.g. `sensor_msgs`.
    pub package: String,
    /// The namespace: `msg`, `srv` or `action`.
    pub namespace: InterfaceKind,
    /// The name, e.g. `Image`, `Empty_Request`, `Fibonacci_SendGoal_Event`.
    pub name: String,
}

impl TypeName {
    /// A type name from its three parts.
    pub fn new(package: &str, namespace: InterfaceKind, name: &str) -> Self {
        Self {
            package: package.to_string(),
            namespace,
            name: name.to_string(),
        }
    }

    /// A message type name `package/msg/name`.
    pub fn msg(package: &str, name: &str) -> Self {
        Self::new(package, InterfaceKind::Message, name)
    }

    /// Reads `package/namespace/Name` (`None` if it does not have that shape).
    pub fn parse(text: &str) -> Option<Self> {
        let mut parts = text.split('/');
        let (package, namespace, name) = (parts.next()?, parts.next()?, parts.next()?);
        if parts.next().is_some() || package.is_empty() || name.is_empty() {
            return None;
        }
        Some(Self::new(
            package,
            InterfaceKind::from_extension(namespace)?,
            name,
        ))
    }

    /// The same package and namespace, with `suffix` appended to the name
    /// (`Foo` → `Foo_Request`).
    pub fn with_suffix(&self, suffix: &str) -> Self {
        Self::new(
            &self.package,
            self.namespace,
            &format!("{}{suffix}", self.name),
        )
    }
}

impl fmt::Display for TypeName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}/{}", self.package, self.namespace, self.name)
    }
}

impl PartialOrd for TypeName {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for TypeName {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        (
            self.package.as_str(),
            self.namespace.namespace(),
            self.name.as_str(),
        )
            .cmp(&(
                other.package.as_str(),
                other.namespace.namespace(),
                other.name.as_str(),
            ))
    }
}
