//! What the other hosts have, as their bridges' liveliness tokens say. Updated from Zenoh's
//! callback thread; read by the bridge's loop. A token vanishes when its bridge undeclares it
//! or its session ends (process exit, or silence beyond the lease).
//!
//! Bounded: at most `limits.max_hosts` hosts and `limits.max_tokens_per_host` tokens each;
//! tokens beyond are ignored and counted (a peer declaring tokens without end costs this
//! bridge nothing more).

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use crate::keys::{Keys, SchemaKey, Token, TokenKind};
use crate::refusals::{Refusals, Refused};
use crate::status::PeerStatus;

/// Every other host's tokens.
#[derive(Clone)]
pub(crate) struct RemoteView {
    tokens: Arc<Mutex<Tokens>>,
    max_hosts: usize,
    max_tokens_per_host: usize,
    refusals: Refusals,
    /// Tokens of hosts beyond `max_hosts`.
    hosts_refused: Arc<AtomicU64>,
    /// Token keys that are not tokens (bad host or topic name, too long, bad schema).
    malformed_tokens: Arc<AtomicU64>,
}

/// The tokens, and how many each host has.
#[derive(Default)]
struct Tokens {
    set: BTreeSet<TokenEntry>,
    per_host: HashMap<String, usize>,
}

/// A token, ordered for stable iteration.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct TokenEntry {
    name: String,
    kind: u8,
    host: String,
    id: u64,
    layout: u64,
}

impl TokenEntry {
    fn of(t: &Token) -> TokenEntry {
        TokenEntry {
            name: t.name.clone(),
            kind: match t.kind {
                TokenKind::Offer => 0,
                TokenKind::Want => 1,
                TokenKind::ServiceOffer => 2,
                TokenKind::Host => 3,
                TokenKind::Latched => 4,
            },
            host: t.host.clone(),
            id: t.schema.id,
            layout: t.schema.layout,
        }
    }
}

/// A host and the schema it has a name with.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct HostSchema {
    pub(crate) host: String,
    pub(crate) schema: SchemaKey,
}

impl RemoteView {
    /// An empty view keeping at most `max_hosts` hosts of `max_tokens_per_host` tokens each.
    pub(crate) fn new(max_hosts: usize, max_tokens_per_host: usize, refusals: Refusals) -> Self {
        RemoteView {
            tokens: Arc::default(),
            max_hosts,
            max_tokens_per_host,
            refusals,
            hosts_refused: Arc::default(),
            malformed_tokens: Arc::default(),
        }
    }

    /// Tokens of hosts beyond `max_hosts` ignored so far.
    pub(crate) fn hosts_refused(&self) -> u64 {
        // Relaxed: a statistic.
        self.hosts_refused.load(Ordering::Relaxed)
    }

    /// Malformed token keys declared by other hosts, ignored so far.
    pub(crate) fn malformed_tokens(&self) -> u64 {
        // Relaxed: a statistic.
        self.malformed_tokens.load(Ordering::Relaxed)
    }

    fn lock_all(&self) -> MutexGuard<'_, Tokens> {
        // A panic while holding this lock leaves a set that is still consistent.
        self.tokens.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn lock(&self) -> TokenSet<'_> {
        TokenSet(self.lock_all())
    }

    /// Applies a liveliness sample: `alive` for a put, not for a delete. Keys that are not
    /// tokens, and our own host's tokens, are ignored.
    pub(crate) fn apply(&self, keys: &Keys, me: &str, key: &str, alive: bool) {
        let Some(t) = keys.parse_token(key) else {
            if alive {
                // Relaxed: a statistic. Counted when declared, not again when it goes.
                self.malformed_tokens.fetch_add(1, Ordering::Relaxed);
            }
            return;
        };
        if t.host == me {
            return;
        }
        let e = TokenEntry::of(&t);
        let mut all = self.lock_all();
        let Tokens { set, per_host } = &mut *all;
        if !alive {
            if set.remove(&e) {
                if let Some(n) = per_host.get_mut(&t.host) {
                    *n -= 1;
                    if *n == 0 {
                        per_host.remove(&t.host);
                    }
                }
            }
            return;
        }
        if set.contains(&e) {
            return;
        }
        let hosts = per_host.len();
        match per_host.get_mut(&t.host) {
            None if hosts >= self.max_hosts => {
                // Relaxed: a statistic.
                self.hosts_refused.fetch_add(1, Ordering::Relaxed);
            }
            Some(n) if *n >= self.max_tokens_per_host => {
                drop(all);
                self.refusals.add(&t.host, Refused::OverLimit);
            }
            Some(n) => {
                *n += 1;
                set.insert(e);
            }
            None => {
                per_host.insert(t.host.clone(), 1);
                set.insert(e);
            }
        }
    }

    /// Whether `host` has any token now.
    pub(crate) fn knows(&self, host: &str) -> bool {
        self.lock_all().per_host.contains_key(host)
    }

    /// Hosts with a token of `kind` for `name`.
    pub(crate) fn hosts(&self, kind: TokenKind, name: &str) -> Vec<HostSchema> {
        let k = TokenEntry::of(&Token {
            kind,
            host: String::new(),
            schema: SchemaKey { id: 0, layout: 0 },
            name: name.to_owned(),
        })
        .kind;
        self.lock()
            .iter()
            .filter(|e| e.name == name && e.kind == k)
            .map(|e| HostSchema {
                host: e.host.clone(),
                schema: SchemaKey {
                    id: e.id,
                    layout: e.layout,
                },
            })
            .collect()
    }

    /// Every name with a service-offer token, and the hosts serving it.
    pub(crate) fn services(&self) -> BTreeMap<String, Vec<HostSchema>> {
        let mut out: BTreeMap<String, Vec<HostSchema>> = BTreeMap::new();
        for e in self.lock().iter().filter(|e| e.kind == 2) {
            out.entry(e.name.clone()).or_default().push(HostSchema {
                host: e.host.clone(),
                schema: SchemaKey {
                    id: e.id,
                    layout: e.layout,
                },
            });
        }
        out
    }

    /// Every topic some host offers latched: per topic, each such host with its offer's
    /// schema and the depth its latched token states (a host whose latched token has no
    /// offer beside it is left out).
    pub(crate) fn latched_offers(&self) -> BTreeMap<String, Vec<(HostSchema, u32)>> {
        let tokens = self.lock();
        // One pass for the latched tokens, one for the offers (linear in the tokens held).
        let latched: HashMap<(&str, &str), u32> = tokens
            .iter()
            .filter(|e| e.kind == 4)
            .filter_map(|e| {
                Some((
                    (e.name.as_str(), e.host.as_str()),
                    u32::try_from(e.id).ok()?,
                ))
            })
            .collect();
        let mut out: BTreeMap<String, Vec<(HostSchema, u32)>> = BTreeMap::new();
        for o in tokens.iter().filter(|e| e.kind == 0) {
            let Some(depth) = latched.get(&(o.name.as_str(), o.host.as_str())) else {
                continue;
            };
            out.entry(o.name.clone()).or_default().push((
                HostSchema {
                    host: o.host.clone(),
                    schema: SchemaKey {
                        id: o.id,
                        layout: o.layout,
                    },
                },
                *depth,
            ));
        }
        out
    }

    /// Every host with a token now.
    pub(crate) fn host_names(&self) -> Vec<String> {
        self.lock_all().per_host.keys().cloned().collect()
    }

    /// What each host has, for the status.
    pub(crate) fn peers(&self) -> Vec<PeerStatus> {
        let mut peers: BTreeMap<String, PeerStatus> = BTreeMap::new();
        for e in self.lock().iter() {
            let p = peers.entry(e.host.clone()).or_insert_with(|| PeerStatus {
                host: e.host.clone(),
                offers: Vec::new(),
                wants: Vec::new(),
                services: Vec::new(),
            });
            match e.kind {
                0 => p.offers.push(e.name.clone()),
                1 => p.wants.push(e.name.clone()),
                2 => p.services.push(e.name.clone()),
                _ => {}
            }
        }
        peers.into_values().collect()
    }
}

/// The token set, borrowed from the view's lock.
struct TokenSet<'a>(MutexGuard<'a, Tokens>);

impl TokenSet<'_> {
    fn iter(&self) -> std::collections::btree_set::Iter<'_, TokenEntry> {
        self.0.set.iter()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn token_flood_is_bounded_per_host_and_in_hosts() {
        let refusals = Refusals::default();
        let view = RemoteView::new(2, 3, refusals.clone());
        let keys = Keys::new("horus");
        let s = SchemaKey { id: 1, layout: 2 };
        let key = |host: &str, i: usize| keys.token(TokenKind::Want, host, s, &format!("t/{i}"));
        for i in 0..100 {
            view.apply(&keys, "me", &key("evil", i), true);
        }
        assert_eq!(view.hosts(TokenKind::Want, "t/0").len(), 1);
        assert_eq!(view.peers()[0].wants.len(), 3, "3 tokens kept of 100");
        assert_eq!(refusals.snapshot()[0].over_limit, 97);
        view.apply(&keys, "me", &key("other", 0), true);
        for h in 0..10 {
            view.apply(&keys, "me", &key(&format!("h{h}"), 0), true);
        }
        assert_eq!(view.host_names().len(), 2, "2 hosts kept");
        assert_eq!(view.hosts_refused(), 10);
        // A host's tokens gone: its place is free again.
        view.apply(&keys, "me", &key("other", 0), false);
        assert!(!view.knows("other"));
        view.apply(&keys, "me", &key("h0", 0), true);
        assert!(view.knows("h0"));
    }

    #[test]
    fn overlong_or_malformed_token_names_are_refused_and_counted() {
        let refusals = Refusals::default();
        let view = RemoteView::new(8, 8, refusals.clone());
        let keys = Keys::new("horus");
        let s = SchemaKey { id: 1, layout: 2 };
        let long_name = "t".repeat(horus_shm::name::MAX_TOPIC_NAME + 1);
        let long_host = "h".repeat(crate::keys::MAX_HOST_NAME_BYTES + 1);
        let bad = [
            keys.token(TokenKind::Offer, "evil", s, &"x".repeat(60_000)),
            keys.token(TokenKind::Offer, "evil", s, &long_name),
            keys.token(TokenKind::Want, "evil", s, "t$opic"),
            keys.token(TokenKind::ServiceOffer, "evil", s, "srv name"),
            keys.token(TokenKind::Offer, &long_host, s, "t"),
            keys.token(TokenKind::Offer, "ev*l", s, "t"),
            keys.token(TokenKind::Host, "év", s, "bridge"),
        ];
        for k in &bad {
            assert_eq!(keys.parse_token(k), None, "{k:.80}");
            view.apply(&keys, "me", k, true);
        }
        assert!(view.peers().is_empty(), "nothing kept of malformed tokens");
        assert_eq!(view.malformed_tokens(), bad.len() as u64);
        // Their undeclarations are not counted again.
        for k in &bad {
            view.apply(&keys, "me", k, false);
        }
        assert_eq!(view.malformed_tokens(), bad.len() as u64);
        // Names at the limits are tokens.
        let at_limit = "t".repeat(horus_shm::name::MAX_TOPIC_NAME);
        let host = "h".repeat(crate::keys::MAX_HOST_NAME_BYTES);
        view.apply(
            &keys,
            "me",
            &keys.token(TokenKind::Offer, &host, s, &at_limit),
            true,
        );
        assert_eq!(view.hosts(TokenKind::Offer, &at_limit).len(), 1);
        assert_eq!(view.malformed_tokens(), bad.len() as u64);
        assert!(refusals.snapshot().is_empty());
    }
}
