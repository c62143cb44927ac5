//! The ROS 2 security enclave the bridge's participant announces (`/` unless configured).
//!
//! Every ROS 2 participant puts `enclave=<enclave>;` in its participant USER_DATA
//! (rmw_dds_common's graph cache reads it there, `rmw_fastrtps` and `rmw_cyclonedds` write it;
//! `--ros-args --enclave`, default `/`), and ROS 2 lists each node with the enclave of its
//! participant (`rclpy.node.Node.get_node_names_and_namespaces_with_enclaves`). The bridge
//! does not use DDS Security: the enclave only names the bridge's place in the graph.

use crate::node_name::{valid_part, MAX_NODE_NAME_BYTES};

/// The environment variable naming the bridge's enclave (`/`, `/robot1/bridge`).
pub const ENCLAVE_ENV: &str = "HORUS_ROS2_ENCLAVE";

/// A ROS 2 enclave name: `/` or absolute parts (`/robot1/bridge`), each a ROS 2 name part.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RosEnclave(String);

/// Why an enclave name cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EnclaveError {
    /// Not absolute (no leading `/`).
    #[error("ROS 2 enclave {0:?}: not absolute (it starts with `/`)")]
    NotAbsolute(String),
    /// A part is empty (`/a//b`, a trailing `/`) or holds a character other than ASCII
    /// letters, digits and `_`, or starts with a digit (rcl's rule for enclave names).
    #[error(
        "ROS 2 enclave {name:?}: part {part:?} is not a ROS 2 name part (letters, digits, \
         `_`; not starting with a digit)"
    )]
    BadPart {
        /// The enclave given.
        name: String,
        /// The offending part.
        part: String,
    },
    /// Longer than [`MAX_NODE_NAME_BYTES`] (rcl's limit for an enclave, as for a namespace).
    #[error("ROS 2 enclave {0:?}: longer than 255 bytes")]
    TooLong(String),
}

impl Default for RosEnclave {
    /// `/`, ROS 2's default enclave.
    fn default() -> RosEnclave {
        RosEnclave("/".into())
    }
}

impl RosEnclave {
    /// Parses `/` or `/part/part…`.
    pub fn parse(s: &str) -> Result<RosEnclave, EnclaveError> {
        let Some(rel) = s.strip_prefix('/') else {
            return Err(EnclaveError::NotAbsolute(s.to_owned()));
        };
        if s.len() > MAX_NODE_NAME_BYTES {
            return Err(EnclaveError::TooLong(s.to_owned()));
        }
        if !rel.is_empty() {
            if let Some(part) = rel.split('/').find(|p| !valid_part(p)) {
                return Err(EnclaveError::BadPart {
                    name: s.to_owned(),
                    part: part.to_owned(),
                });
            }
        }
        Ok(RosEnclave(s.to_owned()))
    }

    /// The enclave (`/`, `/robot1/bridge`).
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The participant USER_DATA announcing it, as rmw writes it: `enclave=<enclave>;`
    /// (the parts' characters hold no `=` or `;`).
    pub fn participant_user_data(&self) -> Vec<u8> {
        format!("enclave={};", self.0).into_bytes()
    }
}

impl std::fmt::Display for RosEnclave {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_enclave_is_announced_as_rmw_announces_it() {
        assert_eq!(RosEnclave::default().participant_user_data(), b"enclave=/;");
        assert_eq!(
            RosEnclave::parse("/robot1/bridge_2")
                .unwrap()
                .participant_user_data(),
            b"enclave=/robot1/bridge_2;"
        );
    }

    #[test]
    fn enclaves_ros2_refuses_are_refused_with_the_part_at_fault() {
        assert_eq!(
            RosEnclave::parse("robot1"),
            Err(EnclaveError::NotAbsolute("robot1".into()))
        );
        for (bad, part) in [
            ("/a//b", ""),
            ("/a/", ""),
            ("/1a", "1a"),
            // What would end the key-value pair or add another to the USER_DATA.
            ("/a;enclave=/b", "a;enclave="),
            ("/a=b", "a=b"),
        ] {
            match RosEnclave::parse(bad) {
                Err(EnclaveError::BadPart { part: p, .. }) => assert_eq!(p, part, "{bad}"),
                other => panic!("{bad}: {other:?}"),
            }
        }
        let long = format!("/{}", "a".repeat(MAX_NODE_NAME_BYTES));
        assert!(matches!(
            RosEnclave::parse(&long),
            Err(EnclaveError::TooLong(_))
        ));
    }
}
