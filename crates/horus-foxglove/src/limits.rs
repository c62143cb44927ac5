//! Caps on what clients can make the bridge hold: connections, subscriptions, the size of a
//! client's message. A client over a cap is refused with the reason (an HTTP error before the
//! upgrade, or a `status` message and a close frame after it), counted in
//! [`crate::BridgeStats::refused`]; the robot is never involved (the bridge only observes).

use std::time::Duration;

/// Most clients connected at once (default of [`Limits::max_clients`]).
pub const DEFAULT_MAX_CLIENTS: usize = 8;
/// Most subscriptions of one client (default of [`Limits::max_subscriptions_per_client`]).
pub const DEFAULT_MAX_SUBSCRIPTIONS_PER_CLIENT: usize = 256;
/// Most subscriptions of all clients together (default of
/// [`Limits::max_subscriptions_total`]).
pub const DEFAULT_MAX_SUBSCRIPTIONS_TOTAL: usize = 1024;
/// Largest message a client may send (default of [`Limits::max_client_message_bytes`]):
/// a `subscribe` of a few hundred channels is a few KiB.
pub const DEFAULT_MAX_CLIENT_MESSAGE_BYTES: usize = 64 << 10;
/// Connections in their handshake allowed besides the connected clients; past
/// `max_clients + HANDSHAKE_SLOTS` open connections a new one is closed at once.
pub const HANDSHAKE_SLOTS: usize = 4;
/// Longest a client may take to send its upgrade request (all of it).
pub const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(5);

/// The caps (see the constants for the defaults).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Most clients connected at once; one more is told why and closed.
    pub max_clients: usize,
    /// Most channels one client subscribes to at once; subscriptions past it are refused
    /// with a `status` error.
    pub max_subscriptions_per_client: usize,
    /// Most subscriptions of all clients together.
    pub max_subscriptions_total: usize,
    /// Largest client message (WebSocket frame and message) in bytes; a larger one closes
    /// the connection (close code 1009) before it is read, let alone parsed.
    pub max_client_message_bytes: usize,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            max_clients: DEFAULT_MAX_CLIENTS,
            max_subscriptions_per_client: DEFAULT_MAX_SUBSCRIPTIONS_PER_CLIENT,
            max_subscriptions_total: DEFAULT_MAX_SUBSCRIPTIONS_TOTAL,
            max_client_message_bytes: DEFAULT_MAX_CLIENT_MESSAGE_BYTES,
        }
    }
}

impl Limits {
    /// The WebSocket settings of a client's connection: its frames and messages capped at
    /// [`Limits::max_client_message_bytes`] (tungstenite refuses a larger one from its header,
    /// before reading its payload), a small read buffer.
    pub fn websocket_config(&self) -> tungstenite::protocol::WebSocketConfig {
        let max = self.max_client_message_bytes;
        tungstenite::protocol::WebSocketConfig::default()
            .max_message_size(Some(max))
            .max_frame_size(Some(max))
            .read_buffer_size(16 << 10)
    }
}
