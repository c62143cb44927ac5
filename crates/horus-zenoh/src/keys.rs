//! The Zenoh key expressions a bridge declares and listens to.
//!
//! Every key starts with the domain. Liveliness tokens say what each host offers and wants;
//! they vanish with the bridge's session, so a host that goes away takes them along:
//!
//! | key | what |
//! |---|---|
//! | `<domain>/o/<host>/<schema>/<topic…>` | token: `host` has a publisher of `topic` |
//! | `<domain>/w/<host>/<schema>/<topic…>` | token: `host` has a subscriber of `topic` |
//! | `<domain>/l/<host>/<depth>-<zeros>/<topic…>` | token: `host`'s `topic` is latched, keeping `depth` |
//! | `<domain>/lh/<host>/<topic…>` | queryable: `host`'s latched history of `topic` |
//! | `<domain>/td/<host>/<topic…>` | queryable: `host`'s latched `topic`'s QoS and type description |
//! | `<domain>/d/<host>/<topic…>` | data: `host`'s messages of `topic` |
//! | `<domain>/so/<host>/<schema>/<service…>` | token: `host` has a server of `service` |
//! | `<domain>/sc/<host>/<service…>` | queryable: calls to `host`'s server |
//! | `<domain>/sd/<host>/<service…>` | queryable: `service`'s description (JSON) |
//! | `<domain>/h/<host>/<zeros>/bridge` | token: `host`'s bridge is running |
//!
//! `<schema>` is `<schema id>-<layout hash>` in hexadecimal for a topic, and the two hashes of
//! the request and response schemas for a service: both ends compare them before anything
//! crosses.

use std::fmt;

/// What a token says.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum TokenKind {
    /// A host publishes the topic.
    Offer,
    /// A host subscribes to the topic.
    Want,
    /// A host's offered topic is latched (transient-local): the schema's first hash is the
    /// number of messages each publisher keeps, the second zero.
    Latched,
    /// A host serves the service.
    ServiceOffer,
    /// A host's bridge is there (name `bridge`, schema zero): hosts see each other before
    /// anything crosses.
    Host,
}

impl TokenKind {
    fn chunk(self) -> &'static str {
        match self {
            TokenKind::Offer => "o",
            TokenKind::Want => "w",
            TokenKind::Latched => "l",
            TokenKind::ServiceOffer => "so",
            TokenKind::Host => "h",
        }
    }
}

/// Two hashes naming a type (topic: schema id and layout hash; service: its request's and
/// response's schema hashes).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub(crate) struct SchemaKey {
    /// First hash.
    pub id: u64,
    /// Second hash.
    pub layout: u64,
}

impl fmt::Display for SchemaKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:016x}-{:016x}", self.id, self.layout)
    }
}

impl SchemaKey {
    fn parse(s: &str) -> Option<SchemaKey> {
        let (a, b) = s.split_once('-')?;
        if a.len() != 16 || b.len() != 16 {
            return None;
        }
        Some(SchemaKey {
            id: u64::from_str_radix(a, 16).ok()?,
            layout: u64::from_str_radix(b, 16).ok()?,
        })
    }
}

/// A parsed token key.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) struct Token {
    pub(crate) kind: TokenKind,
    pub(crate) host: String,
    pub(crate) schema: SchemaKey,
    pub(crate) name: String,
}

/// Key builders for one domain.
#[derive(Clone, Debug)]
pub(crate) struct Keys {
    domain: String,
}

impl Keys {
    pub(crate) fn new(domain: &str) -> Keys {
        Keys {
            domain: domain.to_owned(),
        }
    }

    pub(crate) fn token(
        &self,
        kind: TokenKind,
        host: &str,
        schema: SchemaKey,
        name: &str,
    ) -> String {
        format!("{}/{}/{host}/{schema}/{name}", self.domain, kind.chunk())
    }

    /// Every token of the domain (what the liveliness subscriber listens to).
    pub(crate) fn all_tokens(&self) -> String {
        format!("{}/**", self.domain)
    }

    pub(crate) fn data(&self, host: &str, topic: &str) -> String {
        format!("{}/d/{host}/{topic}", self.domain)
    }

    /// Every host's data of `topic`.
    pub(crate) fn data_any_host(&self, topic: &str) -> String {
        format!("{}/d/*/{topic}", self.domain)
    }

    /// The host a data key came from.
    pub(crate) fn data_host<'k>(&self, key: &'k str) -> Option<&'k str> {
        key.strip_prefix(self.domain.as_str())?
            .strip_prefix("/d/")?
            .split('/')
            .next()
    }

    /// The queryable answering with `host`'s latched history of `topic`.
    pub(crate) fn history(&self, host: &str, topic: &str) -> String {
        format!("{}/lh/{host}/{topic}", self.domain)
    }

    /// The host a history key (a reply's key) names.
    pub(crate) fn history_host<'k>(&self, key: &'k str) -> Option<&'k str> {
        key.strip_prefix(self.domain.as_str())?
            .strip_prefix("/lh/")?
            .split('/')
            .next()
    }

    pub(crate) fn call(&self, host: &str, service: &str) -> String {
        format!("{}/sc/{host}/{service}", self.domain)
    }

    /// The queryable answering with `host`'s latched `topic`'s shape (QoS and description),
    /// from which other hosts create the topic ahead of their subscribers.
    pub(crate) fn topic_describe(&self, host: &str, topic: &str) -> String {
        format!("{}/td/{host}/{topic}", self.domain)
    }

    pub(crate) fn describe(&self, host: &str, service: &str) -> String {
        format!("{}/sd/{host}/{service}", self.domain)
    }

    /// Parses a token key of this domain (`None` for anything else: data keys, other
    /// domains' keys, or a malformed key from a misbehaving peer, including a host name that is
    /// not one ([`valid_host_name`]) and a topic or service name that horus would refuse
    /// (`horus_shm::name::validate`: at most `MAX_TOPIC_NAME` bytes)).
    pub(crate) fn parse_token(&self, key: &str) -> Option<Token> {
        let rest = key.strip_prefix(self.domain.as_str())?.strip_prefix('/')?;
        let mut parts = rest.splitn(4, '/');
        let kind = match parts.next()? {
            "o" => TokenKind::Offer,
            "w" => TokenKind::Want,
            "l" => TokenKind::Latched,
            "so" => TokenKind::ServiceOffer,
            "h" => TokenKind::Host,
            _ => return None,
        };
        let host = parts.next()?;
        let schema = SchemaKey::parse(parts.next()?)?;
        let name = parts.next()?;
        // A peer's names are bounded and of horus's alphabets before anything is kept of them.
        if !valid_host_name(host) || horus_shm::name::validate(name).is_err() {
            return None;
        }
        Some(Token {
            kind,
            host: host.to_owned(),
            schema,
            name: name.to_owned(),
        })
    }
}

/// The longest host (or domain, or user) name: a DNS name's limit.
pub(crate) const MAX_HOST_NAME_BYTES: usize = 253;

/// Whether `s` may name a host (also a domain, a user): 1 to [`MAX_HOST_NAME_BYTES`] bytes of
/// letters, digits, '-', '_' and '.' — a key chunk. Names from the configuration and from
/// peers' keys alike. (Here, not in `config`, so the fuzz target that compiles this file alone
/// reaches it.)
pub(crate) fn valid_host_name(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= MAX_HOST_NAME_BYTES
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_' || c == '.')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_round_trip_and_garbage_is_ignored() {
        let k = Keys::new("horus");
        let s = SchemaKey {
            id: 1,
            layout: u64::MAX,
        };
        let key = k.token(TokenKind::Want, "robot-b", s, "lidar/points");
        assert_eq!(
            k.parse_token(&key),
            Some(Token {
                kind: TokenKind::Want,
                host: "robot-b".into(),
                schema: s,
                name: "lidar/points".into()
            })
        );
        assert_eq!(k.parse_token("horus/o/h/zz-00/t"), None);
        assert_eq!(
            k.parse_token("other/o/h/0000000000000001-0000000000000002/t"),
            None
        );
        assert_eq!(k.parse_token("horus/d/h/t"), None);
        assert_eq!(k.data_host("horus/d/robot-a/lidar/points"), Some("robot-a"));
        let depth = SchemaKey { id: 3, layout: 0 };
        let latched = k.token(TokenKind::Latched, "robot-a", depth, "tf_static");
        assert_eq!(
            k.parse_token(&latched).map(|t| (t.kind, t.schema.id)),
            Some((TokenKind::Latched, 3))
        );
        assert_eq!(
            k.history_host(&k.history("robot-a", "tf_static")),
            Some("robot-a")
        );
        assert_eq!(k.history_host("horus/d/robot-a/tf_static"), None);
    }
}
