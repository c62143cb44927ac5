//! The Foxglove WebSocket protocol (`foxglove.websocket.v1`), the subset a live view needs:
//! the server's `serverInfo`, `advertise`, `unadvertise` and `status` text messages, the
//! client's `subscribe` and `unsubscribe`, and the binary `messageData` frame (opcode 1,
//! subscription id, log time, payload).

use serde_json::{json, Value};

pub use crate::client_msg::{
    parse_client, parse_client_frame, ClientFrame, ClientMessageError, ClientOp,
};
use crate::schemas::ChannelSchema;

/// The WebSocket subprotocol a client must ask for.
pub const SUBPROTOCOL: &str = "foxglove.websocket.v1";

/// Opcode of a binary `messageData` frame.
pub const OP_MESSAGE_DATA: u8 = 1;

/// Bytes of a `messageData` frame before the payload: opcode, subscription id, log time.
pub const MESSAGE_DATA_HEADER: usize = 1 + 4 + 8;

/// The `messageData` header for one message, little-endian as the protocol states.
pub fn message_data_header(subscription: u32, log_time_ns: u64) -> [u8; MESSAGE_DATA_HEADER] {
    let mut h = [0u8; MESSAGE_DATA_HEADER];
    h[0] = OP_MESSAGE_DATA;
    h[1..5].copy_from_slice(&subscription.to_le_bytes());
    h[5..13].copy_from_slice(&log_time_ns.to_le_bytes());
    h
}

/// `serverInfo`: sent first to every client.
pub fn server_info(namespace: &str) -> String {
    json!({
        "op": "serverInfo",
        "name": "horus",
        "capabilities": [],
        "supportedEncodings": [],
        "metadata": {"namespace": namespace},
        "sessionId": format!("{namespace}-{}", std::process::id()),
    })
    .to_string()
}

/// One channel as `advertise` lists it.
pub fn channel_json(id: u32, topic: &str, s: &ChannelSchema) -> Value {
    json!({
        "id": id,
        "topic": topic,
        "encoding": s.encoding,
        "schemaName": s.name,
        "schema": s.text,
        "schemaEncoding": s.schema_encoding,
    })
}

/// `advertise` for some channels.
pub fn advertise(channels: Vec<Value>) -> String {
    json!({"op": "advertise", "channels": channels}).to_string()
}

/// `unadvertise` for some channel ids.
pub fn unadvertise(ids: &[u32]) -> String {
    json!({"op": "unadvertise", "channelIds": ids}).to_string()
}

/// `status` (level 0 info, 1 warning, 2 error).
pub fn status(level: u8, message: &str) -> String {
    json!({"op": "status", "level": level, "message": message}).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn message_data_header_is_little_endian() {
        let h = message_data_header(0x0102_0304, 5);
        assert_eq!(h[..5], [1, 4, 3, 2, 1]);
        assert_eq!(h[5..], [5, 0, 0, 0, 0, 0, 0, 0]);
    }
}
