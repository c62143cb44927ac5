//! Why a route (one topic in one direction) could not open.

/// Why a route could not open. The bridge reports it in the topic's status and tries again
/// at the next scan.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RouteError {
    /// RustDDS refused to create the topic, writer or reader.
    #[error("DDS topic {topic}: {reason}")]
    Dds {
        /// The DDS topic.
        topic: String,
        /// RustDDS's reason.
        reason: String,
    },
    /// The horus topic could not be joined.
    #[error("horus topic {topic}: {reason}")]
    Horus {
        /// The horus topic.
        topic: String,
        /// Why.
        reason: String,
    },
    /// The route's thread could not be started.
    #[error("horus topic {topic}: starting its route thread: {reason}")]
    Thread {
        /// The horus topic.
        topic: String,
        /// The OS's reason.
        reason: String,
    },
}

impl RouteError {
    pub(crate) fn dds(topic: &str, e: impl std::fmt::Debug) -> RouteError {
        RouteError::Dds {
            topic: topic.to_owned(),
            reason: format!("{e:?}"),
        }
    }

    pub(crate) fn horus(topic: &str, e: impl std::fmt::Display) -> RouteError {
        RouteError::Horus {
            topic: topic.to_owned(),
            reason: e.to_string(),
        }
    }

    pub(crate) fn thread(topic: &str, e: std::io::Error) -> RouteError {
        RouteError::Thread {
            topic: topic.to_owned(),
            reason: e.to_string(),
        }
    }
}
