//! Why a bridge could not start.

/// Why [`Bridge::start`](crate::Bridge::start) failed.
#[derive(Debug, thiserror::Error)]
pub enum BridgeError {
    /// The configuration is unusable (names, endpoints, patterns).
    #[error(transparent)]
    Config(#[from] crate::ConfigError),
    /// Zenoh refused the session configuration or could not open the session (an endpoint
    /// that cannot be listened on, for instance).
    #[error("zenoh session: {0}")]
    Session(String),
    /// A Zenoh declaration (token, subscriber, queryable) failed.
    #[error("zenoh declaration of {what}: {reason}")]
    Declare {
        /// What was being declared.
        what: String,
        /// Zenoh's reason.
        reason: String,
    },
    /// The bridge's thread could not be started.
    #[error("cannot start the bridge thread: {0}")]
    Thread(std::io::Error),
}
