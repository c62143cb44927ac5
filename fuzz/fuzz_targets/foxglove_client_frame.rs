//! What a Foxglove client sends the bridge after the WebSocket upgrade
//! (`horus foxglove`, crates/horus-foxglove), on arbitrary bytes.
//!
//! The first byte picks the shape: odd — the rest is the raw byte stream of the
//! client's connection, read by tungstenite with the bridge's own settings
//! (`Limits::websocket_config`: frames and messages capped at 64 KiB, masking
//! required) and every message that comes out handed to the bridge's parser;
//! even — the rest is one message (bit 1: binary, else text) handed to the
//! parser directly, with a limit taken from the next two bytes.
//!
//! What must hold: no panic, no hang; every message tungstenite delivers fits
//! the cap; the parser refuses a message over its limit before parsing
//! (`TooLarge`), refuses binary messages, and otherwise returns an op or a
//! typed error, with no more subscriptions than the message could spell.
//!
//! The bridge's parser (crates/horus-foxglove/src/client_msg.rs) and limits
//! (limits.rs) are compiled here as they are (`#[path]`), so the target needs
//! only serde_json, thiserror and tungstenite, not the bridge's dependencies
//! (horus-record's MCAP and compression libraries).
#![no_main]

use std::io::{self, Read, Write};

use libfuzzer_sys::fuzz_target;
use tungstenite::protocol::Role;
use tungstenite::{Message, WebSocket};

#[allow(dead_code, unreachable_pub)]
#[path = "../../crates/horus-foxglove/src/client_msg.rs"]
mod client_msg;
#[allow(dead_code, unreachable_pub)]
#[path = "../../crates/horus-foxglove/src/limits.rs"]
mod limits;

use client_msg::{parse_client_frame, ClientFrame, ClientMessageError, ClientOp};
use limits::Limits;

/// The client's side of the connection: reads come from the input, then
/// "would block" (as the bridge's socket with its read timeout); writes (pongs,
/// close replies) go nowhere.
struct Wire<'a> {
    input: &'a [u8],
}

impl Read for Wire<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.input.is_empty() {
            return Err(io::ErrorKind::WouldBlock.into());
        }
        let n = buf.len().min(self.input.len());
        buf[..n].copy_from_slice(&self.input[..n]);
        self.input = &self.input[n..];
        Ok(n)
    }
}

impl Write for Wire<'_> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// The parser on one message, and what must hold of its answer.
fn check(frame: ClientFrame<'_>, max: usize) {
    let len = match frame {
        ClientFrame::Text(b) | ClientFrame::Binary(b) => b.len(),
    };
    match parse_client_frame(frame, max) {
        Err(ClientMessageError::TooLarge { len: l, max: m }) => {
            assert!(l == len && m == max && len > max)
        }
        Err(ClientMessageError::Binary) => {
            assert!(matches!(frame, ClientFrame::Binary(_)) && len <= max)
        }
        Err(_) => assert!(len <= max && matches!(frame, ClientFrame::Text(_))),
        Ok(op) => {
            assert!(len <= max && matches!(frame, ClientFrame::Text(_)));
            match op {
                // Each entry is at least `{}` and a comma in the text.
                ClientOp::Subscribe {
                    subscriptions,
                    malformed,
                } => assert!((subscriptions.len() + malformed) * 2 <= len),
                ClientOp::Unsubscribe(ids) => assert!(ids.len() * 2 <= len),
                ClientOp::Other(op) => assert!(op.len() <= len),
            }
        }
    }
}

fuzz_target!(|data: &[u8]| {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    if mode & 1 == 1 {
        let limits = Limits::default();
        let max = limits.max_client_message_bytes;
        let mut ws = WebSocket::from_raw_socket(
            Wire { input: rest },
            Role::Server,
            Some(limits.websocket_config()),
        );
        // Every read consumes input or ends the loop: bounded by the input's length.
        loop {
            match ws.read() {
                Ok(Message::Text(t)) => {
                    assert!(t.len() <= max);
                    check(ClientFrame::Text(t.as_bytes()), max);
                }
                Ok(Message::Binary(b)) => {
                    assert!(b.len() <= max);
                    check(ClientFrame::Binary(&b), max);
                }
                Ok(_) => {}
                Err(_) => break,
            }
        }
    } else {
        let (max, body) = match rest {
            [a, b, body @ ..] => (usize::from(u16::from_le_bytes([*a, *b])), body),
            _ => return,
        };
        let frame = if mode & 2 == 2 {
            ClientFrame::Binary(body)
        } else {
            ClientFrame::Text(body)
        };
        check(frame, max);
    }
});
