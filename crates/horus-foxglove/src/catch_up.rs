//! A client that subscribes to a latched (transient-local) topic after others did gets the
//! topic's latched history before the live stream, as a late horus subscriber does.
//!
//! The pump reads each subscribed channel with one observer shared by every client; the
//! first subscribers get the history through it (it joins at
//! [`StartAt::Durability`](horus::StartAt)). A later subscription goes live only between
//! two of the pump's deliveries ([`ClientShared::go_live`]); just before, a second observer
//! joined at the history reads it, and this client is sent exactly the messages the shared
//! observer had already delivered (per ring, numbered up to the last one it delivered): the
//! rest reach the client live. So the history comes first, then the live stream, with no
//! gap and no duplicate.

use std::collections::HashMap;
use std::sync::Arc;

use horus::{Durability, StartAt};

use crate::client::ClientShared;
use crate::discovery::Channel;
use crate::send::Outgoing;

/// Sends `client` (subscription `sub`) the latched history of `ch` that the channel's shared
/// observer delivered before (`last`: per ring, the last message it delivered). Returns how
/// many history messages were lost (overwritten while read, malformed, or not encodable), or
/// why the history could not be read (no free observer place).
pub(crate) fn send_history(
    ch: &Channel,
    last: &HashMap<usize, u64>,
    client: &ClientShared,
    sub: u32,
    scratch: &mut Vec<u8>,
) -> Result<u64, horus::inspect::InspectError> {
    let latched = match ch.view.durability() {
        Durability::Volatile => return Ok(0),
        Durability::TransientLocal { depth } => depth,
    };
    if last.is_empty() {
        // The shared observer delivered nothing yet: it delivers the history itself.
        return Ok(0);
    }
    let mut history = ch.view.observer_at(false, StartAt::Durability)?;
    let mut lost = 0;
    // At most the history of every publisher place (whatever the rings say).
    let bound = latched as usize * ch.view.qos().max_publishers as usize;
    for _ in 0..bound {
        let Some(m) = history.try_recv_sample() else {
            break;
        };
        // Not yet delivered by the shared observer: it comes live.
        if last.get(&m.source()).is_none_or(|&l| m.seq() > l) {
            continue;
        }
        let recv = crate::server::now_ns();
        if ch.mapping.encode(m.bytes(), recv, scratch).is_err() {
            lost += 1;
            continue;
        }
        client.queue.push_data(Outgoing {
            channel: ch.id,
            subscription: sub,
            log_time_ns: recv,
            payload: Arc::new(std::mem::take(scratch)),
        });
    }
    let (_, overrun, malformed) = history.counts();
    Ok(lost + overrun + malformed)
}
