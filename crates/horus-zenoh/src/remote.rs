//! What the other hosts have, as their bridges' liveliness tokens say. Updated from Zenoh's
//! callback thread; read by the bridge's loop. A token vanishes when its bridge undeclares it
//! or its session ends (process exit, or silence beyond the lease).

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex, MutexGuard};

use crate::keys::{Keys, SchemaKey, Token, TokenKind};
use crate::status::PeerStatus;

/// Every other host's tokens.
#[derive(Clone, Default)]
pub(crate) struct RemoteView {
    tokens: Arc<Mutex<BTreeSet<TokenEntry>>>,
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
    fn lock(&self) -> MutexGuard<'_, BTreeSet<TokenEntry>> {
        // A panic while holding this lock leaves a set that is still consistent.
        self.tokens.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Applies a liveliness sample: `alive` for a put, not for a delete. Keys that are not
    /// tokens, and our own host's tokens, are ignored.
    pub(crate) fn apply(&self, keys: &Keys, me: &str, key: &str, alive: bool) {
        let Some(t) = keys.parse_token(key) else {
            return;
        };
        if t.host == me {
            return;
        }
        let e = TokenEntry::of(&t);
        let mut set = self.lock();
        if alive {
            set.insert(e);
        } else {
            set.remove(&e);
        }
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
