//! Why a service route could not open.

/// Why a service route (one service in one direction) could not open. The bridge reports it
/// in the service's status and tries again at the next scan.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ServiceOpenError {
    /// RustDDS refused to create a topic, reader or writer.
    #[error("DDS topic {topic}: {reason}")]
    Dds {
        /// The DDS topic.
        topic: String,
        /// RustDDS's reason.
        reason: String,
    },
    /// The horus service could not be joined or created.
    #[error("horus service {service}: {reason}")]
    Horus {
        /// The horus service.
        service: String,
        /// Why.
        reason: String,
    },
    /// The horus service does not carry ROS 2 types (a horus fixed-layout service).
    #[error("horus service {0} does not carry ROS 2 types")]
    NotRosTyped(String),
    /// The service's name is not a ROS 2 name.
    #[error(transparent)]
    Name(#[from] crate::names::NameError),
}

impl ServiceOpenError {
    pub(crate) fn dds(topic: &str, e: impl std::fmt::Debug) -> ServiceOpenError {
        ServiceOpenError::Dds {
            topic: topic.to_owned(),
            reason: format!("{e:?}"),
        }
    }

    pub(crate) fn horus(service: &str, e: impl std::fmt::Display) -> ServiceOpenError {
        ServiceOpenError::Horus {
            service: service.to_owned(),
            reason: e.to_string(),
        }
    }
}
