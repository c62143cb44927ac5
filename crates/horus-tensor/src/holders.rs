//! Holder places: joining a pool, reclaiming dead holders, leaving it.
//!
//! Each process mapping a pool owns one of [`HOLDERS`] places, claimed and
//! reclaimed with `horus_shm::place` (the protocol topics and services
//! use): its owner word names the process (pid + start time), its bit in
//! the membership word says it is active, and the same bit in every slot's
//! state word is its reference on that slot. A dead holder's place is
//! reclaimed by whoever notices — also when that reclaimer dies half-way,
//! since every step (clearing the holder's bit in each slot, leaving the
//! membership) is idempotent — and the last holder out closes and unlinks
//! the segment.

use horus_shm::place;
use horus_shm::sync::Ordering;
use horus_shm::Segment;

use crate::refs;
use crate::{OpenError, TensorPool, HOLDERS};

impl TensorPool {
    /// Claims a holder place and marks it active. `None` if the pool is
    /// closing (its last holder is removing it).
    pub(crate) fn join(&self) -> Result<Option<usize>, OpenError> {
        let mut reclaimed = false;
        let place = loop {
            match (0..HOLDERS).find(|&j| place::try_claim(self.owner(j))) {
                Some(j) => break j,
                None if !reclaimed => {
                    self.reclaim_dead();
                    reclaimed = true;
                }
                None => return Err(OpenError::TooManyHolders(self.pool_id)),
            }
        };
        if place::join(self.members(), refs::bit(place)) {
            Ok(Some(place))
        } else {
            place::free(self.owner(place));
            Ok(None)
        }
    }

    /// Clears the references and places of holders whose process died (or
    /// finishes a reclaim whose reclaimer died). Returns how many places
    /// this call reclaimed. Bounded: one pass over the places, each
    /// reclaimed place one pass over the slots.
    pub fn reclaim_dead(&self) -> usize {
        (0..HOLDERS)
            .filter(|&j| {
                place::reclaim_if_dead(self.owner(j), || {
                    let bit = refs::bit(j);
                    for s in 0..self.geo.slots {
                        refs::drop_holder(self.state(s), bit);
                    }
                    place::leave(self.members(), bit);
                })
            })
            .count()
    }

    /// Processes holding the pool mapped (live or not yet reclaimed).
    pub fn holders(&self) -> u32 {
        (self.members().load(Ordering::Relaxed) & refs::HOLDER_BITS).count_ones()
    }

    /// Leaves the pool now, while tensors of this process may still be
    /// alive: drops every reference this process holds, gives up its holder
    /// place and, if it was the last holder, unlinks the segment. The
    /// mapping stays until the last handle drops, so live tensors keep
    /// working on memory nobody else will hand out (once the name is gone,
    /// a pool of the same id is a new segment); this process takes no new
    /// tensors or references ([`AllocError::Departed`](crate::AllocError::Departed),
    /// [`AttachError::Departed`](crate::AttachError::Departed)). For an
    /// interpreter's exit, which may never free objects still referenced.
    /// Idempotent.
    pub fn depart(&self) {
        let mut local = self.lock_local();
        if self.place >= HOLDERS || self.departed.swap(true, Ordering::Relaxed) {
            return;
        }
        local.iter_mut().for_each(|n| *n = 0);
        self.leave_place();
    }

    /// Clears our bits, gives up our place and unlinks the segment if we
    /// were the last holder.
    fn leave_place(&self) {
        let bit = refs::bit(self.place);
        for s in 0..self.geo.slots {
            refs::drop_holder(self.state(s), bit);
        }
        self.reclaim_dead();
        let left = place::leave(self.members(), bit);
        place::free(self.owner(self.place));
        // Last one out removes the name (existing mappings stay valid).
        if left & refs::HOLDER_BITS == 0 && place::try_close(self.members()) {
            Segment::unlink(&self.name);
        }
    }
}

impl Drop for TensorPool {
    fn drop(&mut self) {
        // Every Tensor holds an Arc of the pool, so none is alive: our bits
        // are clear (`leave_place` clears them anyway, in case of a leaked
        // local count). Nothing to do if we left already.
        if self.place >= HOLDERS || *self.departed.get_mut() {
            return;
        }
        self.leave_place();
    }
}
