//! Who may open a connection: the checks on the WebSocket upgrade request, made before the
//! upgrade (a refused client gets an HTTP error with the reason and never a WebSocket).
//!
//! - **Origin.** A browser sends the page's origin with every WebSocket handshake and lets any
//!   page connect anywhere, so without this check any web page the operator has open could
//!   read every topic and log. Allowed by default: no `Origin` header at all (not a browser
//!   page: native clients, scripts), pages served from this machine (`http(s)://localhost`,
//!   `127.x.x.x`, `[::1]`, any port), `file://` (Foxglove's desktop app loads its pages from
//!   files) and Foxglove's web app (`https://app.foxglove.dev`). [`AccessPolicy::origins`]
//!   adds origins (`*`: any).
//! - **Host.** When the bridge listens on a loopback address, the `Host` header must name a
//!   loopback host too: a DNS-rebinding page (whose name now resolves to 127.0.0.1) sends its
//!   own name there. Without a `Host` header (not a browser) the check passes.
//! - **Token.** With [`AccessPolicy::token`] set, the client must present it: `?token=…` in the
//!   URL (what the Foxglove app can do: `ws://host:8765/?token=…`) or an
//!   `Authorization: Bearer …` header. Compared in constant time; never printed.
//! - **Subprotocol** `foxglove.websocket.v1` must be offered.

use std::fmt;
use std::net::{Ipv4Addr, Ipv6Addr};

/// Foxglove's web app.
pub const FOXGLOVE_APP_ORIGIN: &str = "https://app.foxglove.dev";

/// Longest token accepted (bytes).
pub const MAX_TOKEN_BYTES: usize = 1024;

/// A shared secret a client must present. Its `Debug` never shows it.
#[derive(Clone, PartialEq, Eq)]
pub struct Token(String);

/// Why a token cannot be used.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum TokenError {
    /// Empty (after trimming white space).
    #[error("the token is empty")]
    Empty,
    /// Longer than [`MAX_TOKEN_BYTES`].
    #[error("the token is longer than {MAX_TOKEN_BYTES} bytes")]
    TooLong,
    /// Not printable ASCII without spaces (it must fit in a URL and an HTTP header).
    #[error("the token must be printable ASCII without spaces (e.g. `openssl rand -hex 32`)")]
    BadCharacter,
}

impl Token {
    /// A token from its text (e.g. a token file's contents; surrounding white space is
    /// trimmed).
    pub fn new(text: &str) -> Result<Token, TokenError> {
        let t = text.trim();
        if t.is_empty() {
            return Err(TokenError::Empty);
        }
        if t.len() > MAX_TOKEN_BYTES {
            return Err(TokenError::TooLong);
        }
        if !t.bytes().all(|b| b.is_ascii_graphic()) {
            return Err(TokenError::BadCharacter);
        }
        Ok(Token(t.to_owned()))
    }

    /// Whether `presented` is the token. Runs in time that depends only on the token's length,
    /// not on where `presented` differs.
    pub fn matches(&self, presented: &[u8]) -> bool {
        constant_time_eq(presented, self.0.as_bytes())
    }
}

impl fmt::Debug for Token {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Token(<redacted>)")
    }
}

/// `a == secret`, looking at every byte of `secret` whatever `a` is.
fn constant_time_eq(a: &[u8], secret: &[u8]) -> bool {
    let mut diff = a.len() ^ secret.len();
    for (i, s) in secret.iter().enumerate() {
        let x = a.get(i).copied().unwrap_or(0);
        diff |= usize::from(x ^ s);
    }
    std::hint::black_box(diff) == 0
}

/// What the upgrade request must satisfy.
#[derive(Clone, Debug)]
pub struct AccessPolicy {
    /// Origins allowed besides the defaults (see the module's documentation): exact origins
    /// such as `https://viewer.example.com:8443`, `null`, or `*` for any origin.
    pub origins: Vec<String>,
    /// The token clients must present (`None`: none needed).
    pub token: Option<Token>,
}

impl Default for AccessPolicy {
    /// The defaults: loopback pages, `file://`, Foxglove's web app and non-browser clients;
    /// no token.
    fn default() -> AccessPolicy {
        AccessPolicy {
            origins: Vec::new(),
            token: None,
        }
    }
}

/// Why a connection was refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Refusal {
    /// The page's origin is not allowed.
    #[error("origin {origin:?} is not allowed (allowed: loopback pages, file://, {FOXGLOVE_APP_ORIGIN}; more with --allow-origin)")]
    ForeignOrigin {
        /// The `Origin` header as sent (cut to 200 bytes).
        origin: String,
    },
    /// The `Host` header names a host that is not loopback while the bridge listens on
    /// loopback (DNS rebinding).
    #[error("host {host:?} is not a loopback name while the bridge listens on loopback")]
    ForeignHost {
        /// The `Host` header as sent (cut to 200 bytes).
        host: String,
    },
    /// A token is configured and the client presented none.
    #[error("a token is required: connect to ws://HOST:PORT/?token=TOKEN (or send Authorization: Bearer TOKEN)")]
    MissingToken,
    /// The client presented a token that is not the configured one.
    #[error("wrong token")]
    WrongToken,
    /// The client did not offer the Foxglove subprotocol.
    #[error("subprotocol foxglove.websocket.v1 required")]
    NoSubprotocol,
    /// As many clients as allowed are connected.
    #[error("too many clients: {cap} connected, the most allowed (--max-clients)")]
    TooManyClients {
        /// The cap.
        cap: usize,
    },
    /// As many connections as the bridge has threads for are open (clients and handshakes).
    #[error("too many connections: {cap} open (clients and handshakes in progress)")]
    TooManyConnections {
        /// The cap.
        cap: usize,
    },
    /// The handshake failed (malformed, too slow, too large, or the client left).
    #[error("handshake failed: {0}")]
    Handshake(String),
}

impl Refusal {
    /// A short stable name, the key of [`crate::BridgeStats::refused`].
    pub fn kind(&self) -> &'static str {
        match self {
            Refusal::ForeignOrigin { .. } => "origin",
            Refusal::ForeignHost { .. } => "host",
            Refusal::MissingToken => "token_missing",
            Refusal::WrongToken => "token_wrong",
            Refusal::NoSubprotocol => "subprotocol",
            Refusal::TooManyClients { .. } => "too_many_clients",
            Refusal::TooManyConnections { .. } => "too_many_connections",
            Refusal::Handshake(_) => "handshake",
        }
    }

    /// The HTTP status a refusal before the upgrade answers with.
    pub fn http_status(&self) -> u16 {
        match self {
            Refusal::ForeignOrigin { .. } | Refusal::ForeignHost { .. } => 403,
            Refusal::MissingToken | Refusal::WrongToken => 401,
            Refusal::NoSubprotocol | Refusal::Handshake(_) => 400,
            Refusal::TooManyClients { .. } | Refusal::TooManyConnections { .. } => 503,
        }
    }
}

/// The parts of an upgrade request the checks look at (header values as bytes; `None`:
/// absent).
#[derive(Clone, Copy, Debug, Default)]
pub struct UpgradeRequest<'a> {
    /// `Origin`.
    pub origin: Option<&'a [u8]>,
    /// `Host`.
    pub host: Option<&'a [u8]>,
    /// The request target's query (after `?`).
    pub query: Option<&'a str>,
    /// `Authorization`.
    pub authorization: Option<&'a [u8]>,
    /// Whether some `Sec-WebSocket-Protocol` offers `foxglove.websocket.v1`.
    pub offers_subprotocol: bool,
}

fn cut(b: &[u8]) -> String {
    let s = String::from_utf8_lossy(&b[..b.len().min(200)]);
    s.into_owned()
}

impl AccessPolicy {
    /// Checks a request: `bound_loopback` says whether the bridge listens on a loopback
    /// address (then the `Host` header must be a loopback name).
    pub fn check(&self, req: &UpgradeRequest<'_>, bound_loopback: bool) -> Result<(), Refusal> {
        if bound_loopback {
            if let Some(h) = req.host {
                if !host_is_loopback(h) {
                    return Err(Refusal::ForeignHost { host: cut(h) });
                }
            }
        }
        if let Some(o) = req.origin {
            if !self.origin_allowed(o) {
                return Err(Refusal::ForeignOrigin { origin: cut(o) });
            }
        }
        if let Some(token) = &self.token {
            let presented = req
                .query
                .and_then(query_token)
                .or_else(|| req.authorization.and_then(bearer).map(<[u8]>::to_vec));
            match presented {
                None => return Err(Refusal::MissingToken),
                Some(p) if !token.matches(&p) => return Err(Refusal::WrongToken),
                Some(_) => {}
            }
        }
        if !req.offers_subprotocol {
            return Err(Refusal::NoSubprotocol);
        }
        Ok(())
    }

    /// Whether a browser page of this origin may connect.
    pub fn origin_allowed(&self, origin: &[u8]) -> bool {
        let Ok(origin) = std::str::from_utf8(origin) else {
            return false;
        };
        let origin = origin.trim();
        if self
            .origins
            .iter()
            .any(|a| a == "*" || same_origin(a, origin))
        {
            return true;
        }
        if origin.eq_ignore_ascii_case("file://") || same_origin(FOXGLOVE_APP_ORIGIN, origin) {
            return true;
        }
        match parse_origin(origin) {
            Some(o) => matches!(o.scheme.as_str(), "http" | "https") && name_is_loopback(&o.host),
            None => false,
        }
    }
}

/// An origin `scheme://host[:port]`, lower-cased, with the scheme's default port filled in.
#[derive(Debug, PartialEq, Eq)]
struct Origin {
    scheme: String,
    host: String,
    port: Option<u16>,
}

fn parse_origin(s: &str) -> Option<Origin> {
    let (scheme, rest) = s.split_once("://")?;
    let scheme = scheme.to_ascii_lowercase();
    if scheme.is_empty()
        || !scheme
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"+-.".contains(&b))
    {
        return None;
    }
    let (host, port) = split_host_port(rest)?;
    let port = port.or(match scheme.as_str() {
        "http" | "ws" => Some(80),
        "https" | "wss" => Some(443),
        _ => None,
    });
    Some(Origin {
        scheme,
        host: host.to_ascii_lowercase(),
        port,
    })
}

fn same_origin(a: &str, b: &str) -> bool {
    if a == b {
        return true;
    }
    match (parse_origin(a), parse_origin(b)) {
        (Some(x), Some(y)) => x == y,
        _ => false,
    }
}

/// `host[:port]` or `[v6][:port]`, nothing else (no path, user or query).
fn split_host_port(s: &str) -> Option<(&str, Option<u16>)> {
    if s.is_empty() || s.bytes().any(|b| b"/?#@ \t".contains(&b)) {
        return None;
    }
    let (host, port) = if let Some(v6) = s.strip_prefix('[') {
        let (inside, after) = v6.split_once(']')?;
        let port = match after {
            "" => None,
            p => Some(p.strip_prefix(':')?),
        };
        (&s[..inside.len() + 2], port)
    } else {
        match s.rsplit_once(':') {
            Some((h, p)) => (h, Some(p)),
            None => (s, None),
        }
    };
    if host.is_empty() {
        return None;
    }
    let port = match port {
        None => None,
        Some(p) => Some(p.parse::<u16>().ok()?),
    };
    Some((host, port))
}

/// `localhost`, `127.x.x.x` or `[::1]` (with or without the brackets).
fn name_is_loopback(host: &str) -> bool {
    let h = host.trim_end_matches('.');
    if h.eq_ignore_ascii_case("localhost") {
        return true;
    }
    let inner = h.strip_prefix('[').and_then(|x| x.strip_suffix(']'));
    if let Some(v6) = inner {
        return v6.parse::<Ipv6Addr>().is_ok_and(|a| a.is_loopback());
    }
    h.parse::<Ipv4Addr>().is_ok_and(|a| a.is_loopback())
}

/// Whether a `Host` header names a loopback host.
fn host_is_loopback(h: &[u8]) -> bool {
    let Ok(s) = std::str::from_utf8(h) else {
        return false;
    };
    split_host_port(s.trim()).is_some_and(|(host, _)| name_is_loopback(host))
}

/// The value of `token` in a query string, percent-decoded.
fn query_token(query: &str) -> Option<Vec<u8>> {
    query
        .split('&')
        .filter_map(|kv| kv.split_once('='))
        .find(|(k, _)| *k == "token")
        .map(|(_, v)| percent_decode(v))
}

fn percent_decode(s: &str) -> Vec<u8> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let hex = |c: u8| (c as char).to_digit(16);
        if b[i] == b'%' && i + 2 < b.len() {
            if let (Some(h), Some(l)) = (hex(b[i + 1]), hex(b[i + 2])) {
                out.push((h * 16 + l) as u8);
                i += 3;
                continue;
            }
        }
        out.push(b[i]);
        i += 1;
    }
    out
}

/// The token of `Bearer TOKEN`.
fn bearer(v: &[u8]) -> Option<&[u8]> {
    let s = std::str::from_utf8(v).ok()?.trim();
    let (scheme, token) = s.split_once(' ')?;
    scheme
        .eq_ignore_ascii_case("bearer")
        .then(|| token.trim().as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req<'a>(origin: Option<&'a str>, host: Option<&'a str>) -> UpgradeRequest<'a> {
        UpgradeRequest {
            origin: origin.map(str::as_bytes),
            host: host.map(str::as_bytes),
            query: None,
            authorization: None,
            offers_subprotocol: true,
        }
    }

    #[test]
    fn default_origins_are_loopback_file_and_the_foxglove_app() {
        let p = AccessPolicy::default();
        for ok in [
            "http://localhost",
            "http://localhost:3000",
            "https://127.0.0.1:8080",
            "http://127.1.2.3",
            "http://[::1]:5173",
            "HTTP://LOCALHOST:1",
            "file://",
            "https://app.foxglove.dev",
            "https://app.foxglove.dev:443",
        ] {
            assert!(p.origin_allowed(ok.as_bytes()), "{ok}");
        }
        for bad in [
            "https://evil.example",
            "http://localhost.evil.example",
            "http://127.0.0.1.evil.example",
            "http://app.foxglove.dev",
            "https://app.foxglove.dev.evil.example",
            "https://app.foxglove.dev:8443",
            "null",
            "",
            "ftp://localhost",
            "http://localhost/path",
            "http://user@localhost",
            "http://[::2]",
        ] {
            assert!(!p.origin_allowed(bad.as_bytes()), "{bad}");
        }
        assert!(
            p.check(&req(None, None), true).is_ok(),
            "no Origin: not a browser"
        );
    }

    #[test]
    fn configured_origins_extend_the_defaults() {
        let p = AccessPolicy {
            origins: vec!["https://viewer.example:8443".into(), "null".into()],
            token: None,
        };
        assert!(p.origin_allowed(b"https://VIEWER.example:8443"));
        assert!(p.origin_allowed(b"null"));
        assert!(p.origin_allowed(b"http://localhost"));
        assert!(!p.origin_allowed(b"https://viewer.example"));
        let any = AccessPolicy {
            origins: vec!["*".into()],
            token: None,
        };
        assert!(any.origin_allowed(b"https://anything.example"));
    }

    #[test]
    fn a_rebinding_host_is_refused_on_loopback_only() {
        let p = AccessPolicy::default();
        for ok in [
            "localhost:8765",
            "127.0.0.1:8765",
            "[::1]:8765",
            "localhost",
        ] {
            assert!(p.check(&req(None, Some(ok)), true).is_ok(), "{ok}");
        }
        let r = p.check(&req(None, Some("evil.example:8765")), true);
        assert_eq!(r.unwrap_err().kind(), "host");
        assert!(p.check(&req(None, Some("robot.lan:8765")), false).is_ok());
    }

    #[test]
    fn the_token_comes_from_the_query_or_a_bearer_header() {
        let p = AccessPolicy {
            origins: vec![],
            token: Some(Token::new("s3cr%t\n").unwrap()),
        };
        let mut r = req(None, None);
        assert_eq!(p.check(&r, true), Err(Refusal::MissingToken));
        r.query = Some("a=1&token=s3cr%25t");
        assert!(p.check(&r, true).is_ok());
        r.query = Some("token=s3cr");
        assert_eq!(p.check(&r, true), Err(Refusal::WrongToken));
        r.query = None;
        r.authorization = Some(b"Bearer s3cr%t");
        assert!(p.check(&r, true).is_ok());
        r.authorization = Some(b"Basic s3cr%t");
        assert_eq!(p.check(&r, true), Err(Refusal::MissingToken));
        assert_eq!(format!("{:?}", p.token), "Some(Token(<redacted>))");
    }

    #[test]
    fn bad_tokens_are_typed_errors() {
        assert_eq!(Token::new(" \n"), Err(TokenError::Empty));
        assert_eq!(Token::new("a b"), Err(TokenError::BadCharacter));
        assert_eq!(Token::new(&"x".repeat(2000)), Err(TokenError::TooLong));
        let t = Token::new("abc").unwrap();
        assert!(t.matches(b"abc"));
        assert!(!t.matches(b"abcd") && !t.matches(b"ab") && !t.matches(b""));
    }

    #[test]
    fn percent_decoding_never_reads_past_the_end() {
        assert_eq!(percent_decode("%"), b"%");
        assert_eq!(percent_decode("%4"), b"%4");
        assert_eq!(percent_decode("%41"), b"A");
        assert_eq!(percent_decode("a%zz"), b"a%zz");
    }
}
