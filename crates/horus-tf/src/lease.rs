//! The writer lease: one word holding the token ([`horus_shm::ProcessId::token`])
//! of the process writing the buffer, 0 when nobody writes.
//!
//! Writers take the lease for one batch of transforms and give it back;
//! readers never look at it. A writer that died holding it (kill -9) is
//! found by its token's liveness and the lease is taken over with one CAS
//! from the dead token, so two survivors never both take it. Threads of one
//! process share a token: the lease is only ever taken from 0 (or from a
//! *dead* token), so a second thread of the holder waits like any other
//! writer instead of believing it holds the lease.
// `pub` items of a private module: the loom build re-exports them (`horus_tf::model`).
#![cfg_attr(not(loom), allow(unreachable_pub))]

use horus_shm::sync::{AtomicU64, Ordering};

/// The outcome of one attempt to take the lease.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Attempt {
    /// Taken from nobody.
    Taken,
    /// Taken over from a holder found dead (its token).
    TookOver(u64),
    /// Held by a live holder (its token).
    Held(u64),
}

/// Tries once to take the lease for `me` (never 0). `is_alive(token)` decides
/// whether a holder still lives; it is only asked about other holders' tokens.
pub fn try_take(lease: &AtomicU64, me: u64, is_alive: impl Fn(u64) -> bool) -> Attempt {
    debug_assert_ne!(me, 0);
    // Acquire (on success): pairs with the previous holder's Release in
    // `give_back`, so everything it wrote (heads, slots, frame records) is
    // visible to us before we write on top of it.
    match lease.compare_exchange(0, me, Ordering::Acquire, Ordering::Relaxed) {
        Ok(_) => Attempt::Taken,
        Err(holder) if holder != me && !is_alive(holder) => {
            // The holder died: take the lease from exactly that token. A
            // concurrent survivor doing the same loses this CAS.
            match lease.compare_exchange(holder, me, Ordering::Acquire, Ordering::Relaxed) {
                Ok(_) => Attempt::TookOver(holder),
                Err(now) => Attempt::Held(now),
            }
        }
        Err(holder) => Attempt::Held(holder),
    }
}

/// Gives the lease back if `me` still holds it. Returns whether it did (false
/// when another process took it over, believing us dead).
pub fn give_back(lease: &AtomicU64, me: u64) -> bool {
    // Release: publishes this holder's writes to the next holder's Acquire.
    lease
        .compare_exchange(me, 0, Ordering::Release, Ordering::Relaxed)
        .is_ok()
}
