//! Watching a waiting call: who took it (its claim word), whether that
//! process is alive, and whether anyone who could still take it is.

use horus_shm::sync::Ordering;
use std::time::{Duration, Instant};

use super::client_core::{ClientCore, Slot};
use super::error::CallError;
use super::table::{ClientCounter, Table};
use super::wire::claim;

/// How often a waiting call checks that its server is alive.
pub(super) const LIVENESS_EVERY: Duration = Duration::from_millis(2);

/// The servers visible when a request was sent (each sees it): their
/// places, generations (low bits) and one pid to name in an error.
#[derive(Clone, Copy)]
pub(super) struct Witnesses {
    pub(super) mask: u32,
    pub(super) gens: [u16; 32],
    pub(super) pid: u32,
}

/// The witnesses of the latest call and the membership word they were read
/// under: reused while the word is unchanged, so that a call reads one word
/// instead of two per server.
///
/// Sound because every change a witness set reflects moves the word's epoch:
/// a server joins (generation bumped, then its bit set), leaves (bit
/// cleared, then generation bumped) or is reclaimed (generation bumped, then
/// bit cleared). A set read while such a change was under way either has
/// the place's bit clear (a join: its generation is not read) or is read
/// again by the next call (the word moved). The one difference from a fresh
/// read: a place being reclaimed under an unchanged word stays a witness
/// with its old generation, which every later liveness check refuses (the
/// reclaim moves the generation), as it refuses a dead owner not yet
/// reclaimed. A peer that rewrites the word on every call only makes every
/// call read afresh, as without the cache.
#[derive(Default)]
pub(super) struct WitnessCache(Option<(u64, Witnesses)>);

impl WitnessCache {
    /// The witnesses under membership word `members` (just read).
    pub(super) fn get(&mut self, table: &Table, members: u64) -> Witnesses {
        match self.0 {
            Some((m, w)) if m == members => w,
            _ => {
                let w = Witnesses::read(table, members);
                self.0 = Some((members, w));
                w
            }
        }
    }
}

impl Witnesses {
    /// The servers of membership word `members` (read just before), with
    /// their generations as of now.
    fn read(table: &Table, members: u64) -> Witnesses {
        let mask = table.server_places_in(members);
        let mut w = Witnesses {
            mask,
            gens: [0; 32],
            pid: 0,
        };
        // Only the set bits (one per server: this runs on every call).
        let mut rest = mask;
        while rest != 0 {
            let s = rest.trailing_zeros() as usize;
            rest &= rest - 1;
            if let Some((pid, gen)) = table.server_owner(s) {
                w.gens[s] = gen as u16;
                if w.pid == 0 {
                    w.pid = pid.pid;
                }
            } else {
                w.mask &= !(1 << s);
            }
        }
        w
    }
}

impl<Resp> ClientCore<Resp> {
    /// Marks call `id` withdrawn unless a server took it; true if it did.
    pub(super) fn try_cancel(&self, id: u64) -> bool {
        claim::try_withdraw(self.table.claim(self.k, id), id)
    }
}

impl<Resp> ClientCore<Resp> {
    /// Why untaken call `id` can no longer be served, if so: no server is
    /// left (`NoServer`), or every server that could see the request died
    /// or left without taking it (`ServerDied`; a server that started
    /// later never sees it). The call is withdrawn first; if a server took
    /// it meanwhile, it is not a failure.
    fn unclaimed_failure(&mut self, id: u64) -> Option<CallError> {
        let live = self.table.live_servers();
        let failure = if live == 0 {
            CallError::NoServer(self.svc.name.clone())
        } else {
            let Slot::Waiting(_, _, w) = &self.slots[self.slot_of(id)] else {
                return None;
            };
            // `live_servers` just reclaimed the dead: a place still owned
            // with the generation we saw is a live witness.
            let alive = (0..32).any(|s| {
                w.mask & (1 << s) != 0
                    && self
                        .table
                        .server_owner(s)
                        .is_some_and(|(_, g)| claim::gen_matches(g, u64::from(w.gens[s])))
            });
            if alive {
                return None;
            }
            CallError::ServerDied { pid: w.pid }
        };
        self.try_cancel(id).then_some(failure)
    }

    /// Whether call `id` has failed for a reason other than the clock: its
    /// server died, or no server is left to take it.
    pub(super) fn check_liveness(&mut self, id: u64) -> Option<CallError> {
        let now = Instant::now();
        if now < self.next_check {
            return None;
        }
        self.next_check = now + LIVENESS_EVERY;
        let word = self.table.claim(self.k, id).load(Ordering::Acquire);
        let failed = match claim::state(word, id) {
            claim::State::Claimed { server, gen } => match self.table.server_owner(server) {
                Some((pid, g)) if claim::gen_matches(g, gen) => {
                    (!pid.is_alive()).then_some(CallError::ServerDied { pid: pid.pid })
                }
                // The place was given up or reclaimed since it took our call.
                _ => Some(CallError::ServerDied { pid: 0 }),
            },
            claim::State::Unclaimed => self.unclaimed_failure(id),
            claim::State::Cancelled | claim::State::Stale => {
                Some(CallError::NoServer(self.svc.name.clone()))
            }
        }?;
        let i = self.slot_of(id);
        // A server that answered and then exited (or gave up its place) between the caller's
        // look at the response channel and this check: its response is already there and
        // wins (found by the rpc benchmark: `ServerDied` instead of the answer).
        self.pump_all();
        if matches!(self.slots[i], Slot::Done(d, _) if d == id) {
            return None;
        }
        self.slots[i] = Slot::Free;
        self.bump(match failed {
            CallError::ServerDied { .. } => {
                self.table.reclaim_dead();
                ClientCounter::ServerDied
            }
            _ => ClientCounter::NoServer,
        });
        Some(failed)
    }
}
