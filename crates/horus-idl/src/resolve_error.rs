//! Errors of resolving interfaces against each other.

/// A set of interfaces that does not resolve.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum ResolveError {
    /// A field names a message type that no loaded package defines.
    #[error("{file}:{line}:{column}: unknown type '{type_name}' (field '{field}' of {owner})")]
    UnknownType {
        /// The file of the field.
        file: String,
        /// Its line.
        line: usize,
        /// Its column.
        column: usize,
        /// The full name that was looked for, e.g. `geometry_msgs/msg/Pointt`.
        type_name: String,
        /// The field.
        field: String,
        /// The structure that has the field.
        owner: String,
    },
    /// A service or action needs a type ROS 2 implies from another package
    /// (`service_msgs/msg/ServiceEventInfo`, `unique_identifier_msgs/msg/UUID`,
    /// `builtin_interfaces/msg/Time`) that is not loaded.
    #[error("{file}: {owner} needs '{type_name}', which is not loaded (add its package)")]
    MissingImpliedType {
        /// The file of the service or action.
        file: String,
        /// The missing type.
        type_name: String,
        /// The implied structure that needs it.
        owner: String,
    },
    /// Message types that contain themselves, directly or through others.
    #[error("{file}:{line}:{column}: recursive type: {}", cycle.join(" -> "))]
    Recursive {
        /// The file of the first type of the cycle.
        file: String,
        /// The line of the member that closes the cycle's first step.
        line: usize,
        /// Its column.
        column: usize,
        /// The types of the cycle, the first repeated at the end.
        cycle: Vec<String>,
    },
}
