//! Every client's subscriptions counted together: how many there are (the total cap) and
//! which channels someone subscribes to (what the pump observes), kept up to date as clients
//! subscribe and leave, so the pump looks at them only when they changed.

use std::collections::{BTreeSet, HashMap};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

#[derive(Default)]
struct Table {
    total: usize,
    /// Channel → how many clients subscribe to it.
    per_channel: HashMap<u32, usize>,
}

/// The subscriptions of all clients.
#[derive(Default)]
pub(crate) struct SubTable {
    table: Mutex<Table>,
    /// Bumped (under the lock) on every change of the set of subscribed channels.
    generation: AtomicU64,
}

impl SubTable {
    fn lock(&self) -> std::sync::MutexGuard<'_, Table> {
        self.table.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Counts one more subscription to `channel`, unless `max_total` are counted already.
    pub(crate) fn add(&self, channel: u32, max_total: usize) -> bool {
        let mut t = self.lock();
        if t.total >= max_total {
            return false;
        }
        t.total += 1;
        let n = t.per_channel.entry(channel).or_default();
        *n += 1;
        if *n == 1 {
            // Relaxed: readers take the lock before using the set (see `changed`).
            self.generation.fetch_add(1, Ordering::Relaxed);
        }
        true
    }

    /// Counts one subscription to `channel` less.
    pub(crate) fn remove(&self, channel: u32) {
        let mut t = self.lock();
        let Some(n) = t.per_channel.get_mut(&channel) else {
            return;
        };
        *n -= 1;
        if *n == 0 {
            t.per_channel.remove(&channel);
            // Relaxed: as in `add`.
            self.generation.fetch_add(1, Ordering::Relaxed);
        }
        t.total -= 1;
    }

    /// All subscriptions now.
    pub(crate) fn total(&self) -> usize {
        self.lock().total
    }

    /// The subscribed channels, if they changed since `seen` (which is updated); `None`
    /// costs one atomic load.
    pub(crate) fn changed(&self, seen: &mut u64) -> Option<BTreeSet<u32>> {
        // Relaxed: a stale value only delays the update to a later pass; the set itself is
        // read under the lock, with the generation that goes with it.
        if self.generation.load(Ordering::Relaxed) == *seen {
            return None;
        }
        let t = self.lock();
        *seen = self.generation.load(Ordering::Relaxed);
        Some(t.per_channel.keys().copied().collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_channel_set_changes_only_when_a_channel_gains_its_first_or_loses_its_last() {
        let t = SubTable::default();
        let mut seen = 0;
        assert!(t.changed(&mut seen).is_none());
        assert!(t.add(3, 10) && t.add(3, 10) && t.add(4, 10));
        assert_eq!(t.changed(&mut seen), Some([3, 4].into()));
        t.remove(3);
        assert!(t.changed(&mut seen).is_none(), "3 still has a subscriber");
        t.remove(3);
        assert_eq!(t.changed(&mut seen), Some([4].into()));
        assert_eq!(t.total(), 1);
    }

    #[test]
    fn the_total_is_capped() {
        let t = SubTable::default();
        assert!(t.add(1, 2) && t.add(2, 2));
        assert!(!t.add(3, 2));
        t.remove(1);
        assert!(t.add(3, 2));
        t.remove(99); // not counted: nothing happens
        assert_eq!(t.total(), 2);
    }
}
