//! One connected client: the handshake (subprotocol `foxglove.websocket.v1`), its
//! subscriptions, and its thread, which sleeps in `poll` on the socket and on its queue's
//! wake-up socket, writes what is queued and reads what the client asks for. A client that
//! stops reading blocks only this thread (the socket's write times out so that the thread
//! still notices shutdown); its queue then drops for it alone.

use std::collections::HashMap;
use std::io;
use std::net::{SocketAddr, TcpStream};
use std::os::fd::AsRawFd;
use std::os::unix::net::UnixStream;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tungstenite::handshake::server::{ErrorResponse, Request, Response};
use tungstenite::http::{HeaderValue, StatusCode};
use tungstenite::{Message, WebSocket};

use crate::protocol::{parse_client, ClientOp, SUBPROTOCOL};
use crate::send::{Item, RawFrame, SendQueue};

/// Longest a write may block before the thread looks at shutdown again.
const WRITE_TIMEOUT: Duration = Duration::from_millis(200);
/// Read timeout once `poll` said the socket is readable (drains tungstenite's buffer).
const READ_TIMEOUT: Duration = Duration::from_millis(1);
/// Longest `poll` sleeps.
const POLL_MS: i32 = 200;

/// What the pump and the client's thread share about one client.
pub(crate) struct ClientShared {
    pub(crate) addr: SocketAddr,
    pub(crate) queue: SendQueue,
    /// Channel id → the client's subscription id for it.
    pub(crate) subs: Mutex<HashMap<u32, u32>>,
}

impl ClientShared {
    pub(crate) fn subscription(&self, channel: u32) -> Option<u32> {
        self.subs
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(&channel)
            .copied()
    }

    pub(crate) fn channels(&self) -> Vec<u32> {
        let s = self.subs.lock().unwrap_or_else(|p| p.into_inner());
        s.keys().copied().collect()
    }

    pub(crate) fn remove_channel(&self, channel: u32) {
        let mut s = self.subs.lock().unwrap_or_else(|p| p.into_inner());
        s.remove(&channel);
        drop(s);
        self.queue.forget(channel);
    }
}

/// Accepts the WebSocket handshake, requiring the Foxglove subprotocol.
// The callback's error type is tungstenite's (an HTTP response), not ours to shrink.
#[allow(clippy::result_large_err)]
pub(crate) fn handshake(stream: TcpStream) -> Result<WebSocket<TcpStream>, String> {
    stream
        .set_read_timeout(Some(Duration::from_secs(5)))
        .map_err(|e| e.to_string())?;
    let check = |req: &Request, mut resp: Response| -> Result<Response, ErrorResponse> {
        let offered = req
            .headers()
            .get_all("Sec-WebSocket-Protocol")
            .iter()
            .filter_map(|v| v.to_str().ok())
            .flat_map(|v| v.split(','))
            .any(|p| p.trim() == SUBPROTOCOL);
        if !offered {
            let mut e = ErrorResponse::new(Some(format!("subprotocol {SUBPROTOCOL} required")));
            *e.status_mut() = StatusCode::BAD_REQUEST;
            return Err(e);
        }
        resp.headers_mut().insert(
            "Sec-WebSocket-Protocol",
            HeaderValue::from_static(SUBPROTOCOL),
        );
        Ok(resp)
    };
    tungstenite::accept_hdr(stream, check).map_err(|e| e.to_string())
}

/// A new client's shared part and the end of its wake-up socket its thread polls.
pub(crate) fn new_client(addr: SocketAddr) -> io::Result<(Arc<ClientShared>, UnixStream)> {
    let (tx, rx) = UnixStream::pair()?;
    tx.set_nonblocking(true)?;
    rx.set_nonblocking(true)?;
    Ok((
        Arc::new(ClientShared {
            addr,
            queue: SendQueue::new(tx),
            subs: Mutex::new(HashMap::new()),
        }),
        rx,
    ))
}

/// What a sleeping client thread was woken for.
struct Ready {
    socket: bool,
}

fn wait(sock: &TcpStream, wake: &UnixStream, want_write: bool) -> io::Result<Ready> {
    let mut fds = [
        libc::pollfd {
            fd: sock.as_raw_fd(),
            events: libc::POLLIN | if want_write { libc::POLLOUT } else { 0 },
            revents: 0,
        },
        libc::pollfd {
            fd: wake.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        },
    ];
    // SAFETY: `fds` is a valid array of two initialised pollfd structures that outlives
    // the call; both descriptors are open (owned by `sock` and `wake`).
    let r = unsafe { libc::poll(fds.as_mut_ptr(), 2, POLL_MS) };
    if r < 0 {
        let e = io::Error::last_os_error();
        if e.kind() != io::ErrorKind::Interrupted {
            return Err(e);
        }
    }
    Ok(Ready {
        socket: fds[0].revents & (libc::POLLIN | libc::POLLHUP | libc::POLLERR) != 0,
    })
}

fn would_block(e: &tungstenite::Error) -> bool {
    matches!(e, tungstenite::Error::Io(io) if matches!(io.kind(), io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut))
}

/// The client's thread: runs until the client leaves, errs, or `stop` is set.
pub(crate) fn run(
    mut ws: WebSocket<TcpStream>,
    me: Arc<ClientShared>,
    wake: UnixStream,
    stop: &AtomicBool,
) -> Result<(), String> {
    let e = |e: io::Error| e.to_string();
    ws.get_mut()
        .set_write_timeout(Some(WRITE_TIMEOUT))
        .map_err(e)?;
    ws.get_mut()
        .set_read_timeout(Some(READ_TIMEOUT))
        .map_err(e)?;
    ws.get_mut().set_nodelay(true).map_err(e)?;
    // A binary frame half written; a text frame tungstenite still has to flush.
    let mut partial: Option<RawFrame> = None;
    let mut text_pending = false;
    // Relaxed: a flag polled every loop; nothing else is published through it.
    while !stop.load(Ordering::Relaxed) && !me.queue.is_closed() {
        let ready = wait(ws.get_ref(), &wake, partial.is_some() || text_pending).map_err(e)?;
        let mut drain = [0u8; 64];
        while matches!((&wake).read_wake(&mut drain), Ok(n) if n > 0) {}
        // Write: finish what is half written, then everything queued.
        loop {
            if text_pending {
                match ws.flush() {
                    Ok(()) => text_pending = false,
                    Err(err) if would_block(&err) => break,
                    Err(err) => return Err(err.to_string()),
                }
            }
            if let Some(f) = &mut partial {
                if !f.write_to(ws.get_mut()).map_err(e)? {
                    break;
                }
                partial = None;
            }
            match me.queue.pop() {
                None => break,
                Some(Item::Text(t)) => match ws.send(Message::text(t)) {
                    Ok(()) => {}
                    Err(err) if would_block(&err) => text_pending = true,
                    Err(err) => return Err(err.to_string()),
                },
                Some(Item::Data(o)) => partial = Some(RawFrame::new(o)),
            }
        }
        // Read only between frames: tungstenite may write a pong while reading.
        if ready.socket && partial.is_none() && !text_pending {
            loop {
                match ws.read() {
                    Ok(Message::Text(t)) => handle(&me, t.as_str()),
                    Ok(Message::Close(_)) => return Ok(()),
                    Ok(_) => {}
                    Err(err) if would_block(&err) => break,
                    Err(tungstenite::Error::ConnectionClosed) => return Ok(()),
                    Err(err) => return Err(err.to_string()),
                }
            }
        }
    }
    let _ = ws.close(None);
    let _ = ws.flush();
    Ok(())
}

fn handle(me: &ClientShared, text: &str) {
    match parse_client(text) {
        Some(ClientOp::Subscribe(subs)) => {
            let mut s = me.subs.lock().unwrap_or_else(|p| p.into_inner());
            for (sub, channel) in subs {
                s.insert(channel, sub);
            }
        }
        Some(ClientOp::Unsubscribe(ids)) => {
            let gone: Vec<u32> = {
                let s = me.subs.lock().unwrap_or_else(|p| p.into_inner());
                s.iter()
                    .filter(|(_, sub)| ids.contains(sub))
                    .map(|(c, _)| *c)
                    .collect()
            };
            for c in gone {
                me.remove_channel(c);
            }
        }
        Some(ClientOp::Other(_)) | None => {}
    }
}

/// Reading the wake-up socket without needing `&mut`.
trait ReadWake {
    fn read_wake(self, buf: &mut [u8]) -> io::Result<usize>;
}

impl ReadWake for &UnixStream {
    fn read_wake(mut self, buf: &mut [u8]) -> io::Result<usize> {
        io::Read::read(&mut self, buf)
    }
}
