//! What the policy and the limits refused, per other host: shared by the bridge's loop and
//! the threads that refuse things as they happen (Zenoh's callbacks, topic workers). Keyed
//! only by hosts this bridge knows (at most `limits.max_hosts`) and `?`; a host's entry is
//! removed when the bridge forgets the host (`limits.forget_host_after` after it went).

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, MutexGuard};

use crate::status::HostRefusals;

/// The host name for refusals whose sender did not say (or named an unknown host).
pub(crate) const UNKNOWN_HOST: &str = "?";

/// Which refusal counter.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Refused {
    Publish,
    Want,
    Call,
    StandIn,
    OverLimit,
    Stall,
}

#[derive(Default)]
struct Entry {
    counts: HostRefusals,
}

/// Refusal counters per host.
#[derive(Clone, Default)]
pub(crate) struct Refusals {
    hosts: Arc<Mutex<BTreeMap<String, Entry>>>,
}

impl Refusals {
    fn lock(&self) -> MutexGuard<'_, BTreeMap<String, Entry>> {
        // Counters only: a panic while holding the lock leaves them usable.
        self.hosts.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Counts one refusal of `host` (callers pass a known host or [`UNKNOWN_HOST`]).
    pub(crate) fn add(&self, host: &str, what: Refused) {
        let mut hosts = self.lock();
        let e = match hosts.get_mut(host) {
            Some(e) => e,
            None => hosts.entry(host.to_owned()).or_default(),
        };
        e.counts.host = host.to_owned();
        let c = &mut e.counts;
        let n = match what {
            Refused::Publish => &mut c.publish_refused,
            Refused::Want => &mut c.want_refused,
            Refused::Call => &mut c.call_refused,
            Refused::StandIn => &mut c.stand_in_refused,
            Refused::OverLimit => &mut c.over_limit,
            Refused::Stall => &mut c.stalls,
        };
        *n += 1;
    }

    /// Removes the entries of hosts the bridge has forgotten.
    pub(crate) fn forget(&self, gone: &[String]) {
        if !gone.is_empty() {
            self.lock().retain(|host, _| !gone.contains(host));
        }
    }

    /// The counters, for the status.
    pub(crate) fn snapshot(&self) -> Vec<HostRefusals> {
        self.lock().values().map(|e| e.counts.clone()).collect()
    }
}
