//! What a client sends: its text messages (`subscribe`, `unsubscribe`; every other op is
//! ignored, the server announcing no capabilities) and binary messages (refused). A pure
//! parser, bounded in time and memory by the message's size, which is checked first; the
//! fuzz target `foxglove_client_frame` compiles this file as it is.

use serde_json::Value;

/// What a client asked for.
#[derive(Debug, PartialEq, Eq)]
pub enum ClientOp {
    /// Subscriptions: (subscription id, channel id).
    Subscribe {
        /// The well-formed entries.
        subscriptions: Vec<(u32, u32)>,
        /// Entries without a `u32` `id` and `channelId` (not subscribed).
        malformed: usize,
    },
    /// Subscription ids to end.
    Unsubscribe(Vec<u32>),
    /// Any other op (ignored; the server announced no capabilities).
    Other(String),
}

/// A message as a client sent it.
#[derive(Clone, Copy, Debug)]
pub enum ClientFrame<'a> {
    /// A text message (JSON).
    Text(&'a [u8]),
    /// A binary message (client publishing, service calls: not offered by this server).
    Binary(&'a [u8]),
}

/// Why a client's message was not understood.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
pub enum ClientMessageError {
    /// Larger than allowed: refused before parsing.
    #[error("message of {len} bytes is larger than the {max} bytes allowed")]
    TooLarge {
        /// Its size.
        len: usize,
        /// The limit.
        max: usize,
    },
    /// A binary message (the server announced no capability that takes one).
    #[error("binary client messages are not supported (the server announced no capabilities)")]
    Binary,
    /// Not JSON (or too deeply nested).
    #[error("not JSON: {0}")]
    Json(String),
    /// JSON, but not an object with an `op` string.
    #[error("not an object with an \"op\" string")]
    NoOp,
    /// A known op without its list.
    #[error("{op}: \"{field}\" missing or not an array")]
    Field {
        /// The op.
        op: &'static str,
        /// The missing field.
        field: &'static str,
    },
}

fn u32_of(v: &Value) -> Option<u32> {
    v.as_u64().and_then(|x| u32::try_from(x).ok())
}

/// Parses a client's message. A message longer than `max_bytes` is refused before anything
/// looks at its contents; JSON nesting is bounded by `serde_json`'s recursion limit (128), so
/// time and memory are bounded by `max_bytes`.
pub fn parse_client_frame(
    frame: ClientFrame<'_>,
    max_bytes: usize,
) -> Result<ClientOp, ClientMessageError> {
    let bytes = match frame {
        ClientFrame::Text(b) => b,
        ClientFrame::Binary(b) => {
            if b.len() > max_bytes {
                return Err(ClientMessageError::TooLarge {
                    len: b.len(),
                    max: max_bytes,
                });
            }
            return Err(ClientMessageError::Binary);
        }
    };
    parse_client(bytes, max_bytes)
}

/// Parses a client's text message (see [`parse_client_frame`]).
pub fn parse_client(text: &[u8], max_bytes: usize) -> Result<ClientOp, ClientMessageError> {
    if text.len() > max_bytes {
        return Err(ClientMessageError::TooLarge {
            len: text.len(),
            max: max_bytes,
        });
    }
    let v: Value =
        serde_json::from_slice(text).map_err(|e| ClientMessageError::Json(e.to_string()))?;
    let op = v
        .get("op")
        .and_then(Value::as_str)
        .ok_or(ClientMessageError::NoOp)?;
    let list = |op: &'static str, field: &'static str| {
        v.get(field)
            .and_then(Value::as_array)
            .ok_or(ClientMessageError::Field { op, field })
    };
    Ok(match op {
        "subscribe" => {
            let all = list("subscribe", "subscriptions")?;
            let subscriptions: Vec<(u32, u32)> = all
                .iter()
                .filter_map(|s| Some((u32_of(s.get("id")?)?, u32_of(s.get("channelId")?)?)))
                .collect();
            ClientOp::Subscribe {
                malformed: all.len() - subscriptions.len(),
                subscriptions,
            }
        }
        "unsubscribe" => ClientOp::Unsubscribe(
            list("unsubscribe", "subscriptionIds")?
                .iter()
                .filter_map(u32_of)
                .collect(),
        ),
        other => ClientOp::Other(other.to_owned()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_subscribe_and_unsubscribe() {
        let max = 1 << 16;
        let s = br#"{"op":"subscribe","subscriptions":[{"id":7,"channelId":3},{"id":-1,"channelId":2}]}"#;
        assert_eq!(
            parse_client(s, max),
            Ok(ClientOp::Subscribe {
                subscriptions: vec![(7, 3)],
                malformed: 1
            })
        );
        let u = br#"{"op":"unsubscribe","subscriptionIds":[7,8]}"#;
        assert_eq!(parse_client(u, max), Ok(ClientOp::Unsubscribe(vec![7, 8])));
        assert!(matches!(
            parse_client(b"not json", max),
            Err(ClientMessageError::Json(_))
        ));
        assert_eq!(parse_client(b"[1]", max), Err(ClientMessageError::NoOp));
        assert_eq!(
            parse_client(br#"{"op":"subscribe"}"#, max),
            Err(ClientMessageError::Field {
                op: "subscribe",
                field: "subscriptions"
            })
        );
        assert_eq!(
            parse_client_frame(ClientFrame::Binary(&[1, 2]), max),
            Err(ClientMessageError::Binary)
        );
    }

    #[test]
    fn oversized_text_is_refused_before_parsing() {
        // Valid JSON one byte over the limit: refused by size, not parsed.
        let mut s = br#"{"op":"subscribe","subscriptions":[{"id":1,"channelId":1}]}"#.to_vec();
        let max = s.len() + 10;
        s.resize(max + 1, b' ');
        assert_eq!(
            parse_client(&s, max),
            Err(ClientMessageError::TooLarge { len: max + 1, max })
        );
        s.truncate(max);
        assert!(parse_client(&s, max).is_ok());
    }

    #[test]
    fn deep_nesting_is_a_typed_error_not_a_stack_overflow() {
        let s = "[".repeat(60_000);
        assert!(matches!(
            parse_client(s.as_bytes(), 1 << 16),
            Err(ClientMessageError::Json(_))
        ));
    }
}
