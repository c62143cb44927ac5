//! One connected client: the handshake (the checks of access.rs, then subprotocol
//! `foxglove.websocket.v1`), its subscriptions (capped, limits.rs), and its thread, which
//! sleeps in `poll` on the socket and on its queue's wake-up socket, writes what is queued and
//! reads what the client asks for. A client that stops reading blocks only this thread (the
//! socket's write times out so that the thread still notices shutdown); its queue then drops
//! for it alone.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::io::{self, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpStream};
use std::os::fd::AsRawFd;
use std::os::unix::net::UnixStream;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tungstenite::handshake::server::{ErrorResponse, Request, Response};
use tungstenite::http::{HeaderValue, StatusCode};
use tungstenite::protocol::frame::coding::CloseCode;
use tungstenite::protocol::{CloseFrame, Role};
use tungstenite::{Message, WebSocket};

use crate::access::{AccessPolicy, Refusal, UpgradeRequest};
use crate::limits::{Limits, HANDSHAKE_TIMEOUT};
use crate::protocol::{self, parse_client_frame, ClientFrame, ClientOp, SUBPROTOCOL};
use crate::send::{Item, RawFrame, SendQueue};
use crate::server::Shared;
use crate::subs::SubTable;

/// Longest a write may block before the thread looks at shutdown again.
const WRITE_TIMEOUT: Duration = Duration::from_millis(200);
/// Read timeout once `poll` said the socket is readable (drains tungstenite's buffer).
const READ_TIMEOUT: Duration = Duration::from_millis(1);
/// Longest `poll` sleeps.
const POLL_MS: i32 = 200;
/// After refusing a client with a close frame: most bytes of its read and discarded so that
/// closing the socket does not reset the connection before it read the reason.
const LINGER_BYTES: usize = 1 << 20;
/// ... and for at most this long.
const LINGER: Duration = Duration::from_millis(500);

/// What the pump and the client's thread share about one client.
pub(crate) struct ClientShared {
    pub(crate) addr: SocketAddr,
    pub(crate) queue: SendQueue,
    /// Channel id → the client's subscription to it.
    subs: Mutex<HashMap<u32, Sub>>,
    /// Whether a subscription waits to go live ([`ClientShared::go_live`]): a hint that
    /// spares the pump the lock on passes where nothing changed.
    pending: AtomicBool,
    /// Every client's subscriptions together.
    table: Arc<SubTable>,
}

/// A client's subscription to one channel.
#[derive(Clone, Copy)]
struct Sub {
    /// The client's subscription id.
    id: u32,
    /// Whether the pump sends it live messages. A new subscription is not live until the
    /// pump made it so, between two of its deliveries, after sending the latched history of
    /// a transient-local channel: so that history comes first and meets the live stream
    /// with no gap and no duplicate.
    live: bool,
}

/// Why a subscription was refused.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum SubscribeRefusal {
    /// The client has as many as one client may.
    PerClient,
    /// All clients together have as many as allowed.
    Total,
}

impl ClientShared {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<u32, Sub>> {
        self.subs.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The subscription id live messages of `channel` go out with, if it is live.
    pub(crate) fn subscription(&self, channel: u32) -> Option<u32> {
        self.lock().get(&channel).filter(|s| s.live).map(|s| s.id)
    }

    /// Makes every new subscription live (called by the pump between deliveries), first
    /// calling `catch_up(channel, subscription id)` for each: it sends what a new subscriber
    /// gets before the live stream (a latched topic's history). Holds the subscriptions'
    /// lock meanwhile, so an unsubscribe waits until it is done.
    pub(crate) fn go_live(&self, mut catch_up: impl FnMut(u32, u32)) {
        // Relaxed: a hint; the subscriptions themselves are read under the lock.
        if !self.pending.swap(false, Ordering::Relaxed) {
            return;
        }
        let mut s = self.lock();
        for (channel, sub) in s.iter_mut().filter(|(_, sub)| !sub.live) {
            catch_up(*channel, sub.id);
            sub.live = true;
        }
    }

    /// Subscribes (a second subscription to one channel replaces the first), within the caps.
    pub(crate) fn subscribe(
        &self,
        sub: u32,
        channel: u32,
        limits: &Limits,
    ) -> Result<(), SubscribeRefusal> {
        let mut s = self.lock();
        if let Some(old) = s.get_mut(&channel) {
            old.id = sub;
            return Ok(());
        }
        if s.len() >= limits.max_subscriptions_per_client {
            return Err(SubscribeRefusal::PerClient);
        }
        if !self.table.add(channel, limits.max_subscriptions_total) {
            return Err(SubscribeRefusal::Total);
        }
        s.insert(
            channel,
            Sub {
                id: sub,
                live: false,
            },
        );
        // Relaxed: see `go_live` (set under the lock, read as a hint).
        self.pending.store(true, Ordering::Relaxed);
        Ok(())
    }

    pub(crate) fn remove_channel(&self, channel: u32) {
        let mut s = self.lock();
        if s.remove(&channel).is_some() {
            self.table.remove(channel);
        }
        drop(s);
        self.queue.forget(channel);
    }

    /// Ends every subscription (the client left).
    pub(crate) fn clear(&self) {
        let mut s = self.lock();
        for (channel, _) in s.drain() {
            self.table.remove(channel);
        }
    }

    /// How many channels it subscribes to.
    pub(crate) fn subscriptions(&self) -> usize {
        self.lock().len()
    }
}

/// The handshake's view of the socket: every read and write fails once the deadline has
/// passed, so that a client sending its request byte by byte cannot hold the thread longer.
struct Deadlined<'a> {
    tcp: &'a TcpStream,
    deadline: Instant,
}

impl Deadlined<'_> {
    fn left(&self) -> io::Result<Duration> {
        let left = self.deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(io::Error::new(
                io::ErrorKind::TimedOut,
                "handshake took too long",
            ));
        }
        Ok(left)
    }
}

impl Read for Deadlined<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.tcp.set_read_timeout(Some(self.left()?))?;
        let mut t = self.tcp;
        t.read(buf)
    }
}

impl Write for Deadlined<'_> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.tcp.set_write_timeout(Some(self.left()?))?;
        let mut t = self.tcp;
        t.write(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

fn upgrade_request(req: &Request) -> UpgradeRequest<'_> {
    let h = req.headers();
    UpgradeRequest {
        origin: h.get("Origin").map(HeaderValue::as_bytes),
        host: h.get("Host").map(HeaderValue::as_bytes),
        query: req.uri().query(),
        authorization: h.get("Authorization").map(HeaderValue::as_bytes),
        offers_subprotocol: h
            .get_all("Sec-WebSocket-Protocol")
            .iter()
            .filter_map(|v| v.to_str().ok())
            .flat_map(|v| v.split(','))
            .any(|p| p.trim() == SUBPROTOCOL),
    }
}

/// The HTTP answer to a refused upgrade: the status and the reason as text.
fn error_response(r: &Refusal) -> ErrorResponse {
    let body = format!("horus foxglove: {r}\n");
    let mut e = ErrorResponse::new(Some(body.clone()));
    *e.status_mut() = StatusCode::from_u16(r.http_status()).unwrap_or(StatusCode::FORBIDDEN);
    let h = e.headers_mut();
    h.insert(
        "Content-Type",
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    h.insert("Content-Length", HeaderValue::from(body.len()));
    h.insert("Connection", HeaderValue::from_static("close"));
    e
}

/// The WebSocket handshake, after the access checks. On success the socket is a WebSocket
/// (nothing the client sent after its request has been read: tungstenite refuses such
/// bytes), to be wrapped by [`websocket`].
// The callback's error type is tungstenite's (an HTTP response), not ours to shrink.
#[allow(clippy::result_large_err)]
pub(crate) fn handshake(
    stream: &TcpStream,
    policy: &AccessPolicy,
    bound_loopback: bool,
) -> Result<(), Refusal> {
    let mut refusal = None;
    let check = |req: &Request, mut resp: Response| -> Result<Response, ErrorResponse> {
        if let Err(r) = policy.check(&upgrade_request(req), bound_loopback) {
            let e = error_response(&r);
            refusal = Some(r);
            return Err(e);
        }
        resp.headers_mut().insert(
            "Sec-WebSocket-Protocol",
            HeaderValue::from_static(SUBPROTOCOL),
        );
        Ok(resp)
    };
    let io = Deadlined {
        tcp: stream,
        deadline: Instant::now() + HANDSHAKE_TIMEOUT,
    };
    let r = match tungstenite::accept_hdr(io, check) {
        Ok(_) => Ok(()),
        Err(e) => Err(e.to_string()),
    };
    match (r, refusal) {
        (_, Some(refused)) => Err(refused),
        (Ok(()), None) => Ok(()),
        (Err(e), None) => Err(Refusal::Handshake(e)),
    }
}

/// A WebSocket over the accepted socket once the handshake is done.
pub(crate) fn websocket(stream: TcpStream, limits: &Limits) -> WebSocket<TcpStream> {
    WebSocket::from_raw_socket(stream, Role::Server, Some(limits.websocket_config()))
}

/// Tells a client why it is being disconnected (a `status` error, then a close frame with
/// `code` and the reason), then closes without resetting the connection before the client
/// could read it.
pub(crate) fn refuse_after_upgrade(mut ws: WebSocket<TcpStream>, code: CloseCode, why: &str) {
    let _ = ws.get_mut().set_write_timeout(Some(WRITE_TIMEOUT));
    let _ = ws.send(Message::text(protocol::status(2, why)));
    // A close reason is at most 123 bytes.
    let mut reason = why;
    let mut n = reason.len().min(123);
    while !reason.is_char_boundary(n) {
        n -= 1;
    }
    reason = &reason[..n];
    let _ = ws.close(Some(CloseFrame {
        code,
        reason: reason.into(),
    }));
    let _ = ws.flush();
    let tcp = ws.get_mut();
    let _ = tcp.shutdown(Shutdown::Write);
    let until = Instant::now() + LINGER;
    let _ = tcp.set_read_timeout(Some(LINGER));
    let mut sink = [0u8; 16 << 10];
    let mut drained = 0;
    while drained < LINGER_BYTES && Instant::now() < until {
        match tcp.read(&mut sink) {
            Ok(0) | Err(_) => break,
            Ok(n) => drained += n,
        }
    }
}

/// A new client's shared part and the end of its wake-up socket its thread polls.
pub(crate) fn new_client(
    addr: SocketAddr,
    table: Arc<SubTable>,
) -> io::Result<(Arc<ClientShared>, UnixStream)> {
    let (tx, rx) = UnixStream::pair()?;
    tx.set_nonblocking(true)?;
    rx.set_nonblocking(true)?;
    Ok((
        Arc::new(ClientShared {
            addr,
            queue: SendQueue::new(tx),
            subs: Mutex::new(HashMap::new()),
            pending: AtomicBool::new(false),
            table,
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

/// The client's thread: runs until the client leaves, errs, is refused (a message over the
/// size cap), or the bridge stops.
pub(crate) fn run(
    mut ws: WebSocket<TcpStream>,
    me: Arc<ClientShared>,
    wake: UnixStream,
    shared: &Shared,
) -> Result<(), String> {
    let e = |e: io::Error| e.to_string();
    ws.get_mut()
        .set_write_timeout(Some(WRITE_TIMEOUT))
        .map_err(e)?;
    ws.get_mut()
        .set_read_timeout(Some(READ_TIMEOUT))
        .map_err(e)?;
    ws.get_mut().set_nodelay(true).map_err(e)?;
    let mut session = Session {
        me: &me,
        shared,
        reported: BTreeSet::new(),
    };
    // A binary frame half written; a text frame tungstenite still has to flush.
    let mut partial: Option<RawFrame> = None;
    let mut text_pending = false;
    // Relaxed: a flag polled every loop; nothing else is published through it.
    while !shared.stop.load(Ordering::Relaxed) && !me.queue.is_closed() {
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
                    Ok(Message::Text(t)) => session.handle(ClientFrame::Text(t.as_bytes())),
                    Ok(Message::Binary(b)) => session.handle(ClientFrame::Binary(&b)),
                    Ok(Message::Close(_)) => return Ok(()),
                    Ok(_) => {}
                    Err(err) if would_block(&err) => break,
                    Err(tungstenite::Error::ConnectionClosed) => return Ok(()),
                    Err(tungstenite::Error::Capacity(c)) => {
                        // Refused from the frame's header: its payload is never read into
                        // memory, let alone parsed.
                        let why = format!(
                            "message too large ({c}); the most a client may send is {} bytes",
                            shared.limits.max_client_message_bytes
                        );
                        session.refused("oversized_message", 1, &why);
                        refuse_after_upgrade(ws, CloseCode::Size, &why);
                        return Err(why);
                    }
                    Err(err) => return Err(err.to_string()),
                }
            }
        }
    }
    let _ = ws.close(None);
    let _ = ws.flush();
    Ok(())
}

/// What a client's thread knows while it reads the client's messages.
struct Session<'a> {
    me: &'a ClientShared,
    shared: &'a Shared,
    /// Kinds of refusal already reported as an event for this client (each is counted every
    /// time; reported once, so that a client cannot flood the bridge's log).
    reported: BTreeSet<&'static str>,
}

impl Session<'_> {
    /// Counts `n` refusals of `kind`, reports the first of its kind as an event, and tells
    /// the client (`status`, level error).
    fn refused(&mut self, kind: &'static str, n: u64, why: &str) {
        self.shared.count_refusal(kind, n);
        if self.reported.insert(kind) {
            self.shared.emit(crate::Event::Refused {
                client: self.me.addr,
                kind,
                why: why.to_owned(),
            });
        }
        self.me.queue.push_text(protocol::status(2, why));
    }

    fn handle(&mut self, frame: ClientFrame<'_>) {
        let limits = self.shared.limits;
        match parse_client_frame(frame, limits.max_client_message_bytes) {
            Ok(ClientOp::Subscribe {
                subscriptions,
                malformed,
            }) => {
                if malformed > 0 {
                    let why = format!("{malformed} subscriptions without a valid id and channelId");
                    self.refused("bad_message", malformed as u64, &why);
                }
                let (mut unknown, mut per_client, mut total) = (Vec::new(), 0usize, 0usize);
                for (sub, channel) in subscriptions {
                    if !self.shared.is_channel(channel) {
                        unknown.push(channel);
                        continue;
                    }
                    match self.me.subscribe(sub, channel, &limits) {
                        Ok(()) => {}
                        Err(SubscribeRefusal::PerClient) => per_client += 1,
                        Err(SubscribeRefusal::Total) => total += 1,
                    }
                }
                if !unknown.is_empty() {
                    let n = unknown.len() as u64;
                    unknown.truncate(8);
                    let why = format!(
                        "{n} subscriptions refused: channels never advertised, e.g. {unknown:?}"
                    );
                    self.refused("unknown_channel", n, &why);
                }
                if per_client > 0 {
                    let why = format!(
                        "subscription cap: {per_client} subscriptions refused; a client may \
                         subscribe to {} channels at once",
                        limits.max_subscriptions_per_client
                    );
                    self.refused("subscription_cap", per_client as u64, &why);
                }
                if total > 0 {
                    let why = format!(
                        "subscription cap: {total} subscriptions refused; all clients together \
                         may hold {}",
                        limits.max_subscriptions_total
                    );
                    self.refused("subscription_cap", total as u64, &why);
                }
            }
            Ok(ClientOp::Unsubscribe(ids)) => {
                let ids: HashSet<u32> = ids.into_iter().collect();
                let gone: Vec<u32> = {
                    let s = self.me.lock();
                    s.iter()
                        .filter(|(_, sub)| ids.contains(&sub.id))
                        .map(|(c, _)| *c)
                        .collect()
                };
                for c in gone {
                    self.me.remove_channel(c);
                }
            }
            Ok(ClientOp::Other(_)) => {}
            Err(err) => {
                let why = format!("message not understood: {err}");
                self.refused("bad_message", 1, &why);
            }
        }
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
