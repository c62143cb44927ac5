//! The release grid of a periodic node: release `k` is at `start + k·period`,
//! exactly — computed from `k`, never by adding periods, so rounding never
//! accumulates into drift, and never relative to when the previous tick ended.

/// Release times of one periodic node.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Grid {
    start_ns: u64,
    period_ns: u64,
    /// Index of the next release not yet taken.
    k: u64,
}

impl Grid {
    pub(crate) fn new(start_ns: u64, period_ns: u64) -> Grid {
        debug_assert!(period_ns > 0);
        Grid {
            start_ns,
            period_ns,
            k: 0,
        }
    }

    /// The next release time.
    #[inline]
    pub(crate) fn next(&self) -> u64 {
        self.start_ns + self.k * self.period_ns
    }

    /// Takes the release to serve at `now_ns` (which must be at or after
    /// [`next`](Grid::next)). If more than one release is already due, the
    /// node is late by at least a period: the older releases are dropped and
    /// only the latest is served — a late node never bursts to catch up.
    /// Returns `(release, dropped)`.
    #[inline]
    pub(crate) fn take(&mut self, now_ns: u64) -> (u64, u64) {
        debug_assert!(now_ns >= self.next());
        let due = (now_ns - self.start_ns) / self.period_ns;
        let dropped = due - self.k;
        self.k = due + 1;
        (self.start_ns + due * self.period_ns, dropped)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn releases_are_on_the_grid() {
        let mut g = Grid::new(1_000, 100);
        assert_eq!(g.next(), 1_000);
        assert_eq!(g.take(1_005), (1_000, 0));
        assert_eq!(g.next(), 1_100);
        assert_eq!(g.take(1_199), (1_100, 0));
        assert_eq!(g.next(), 1_200);
    }

    #[test]
    fn a_late_node_drops_releases_instead_of_bursting() {
        let mut g = Grid::new(0, 100);
        assert_eq!(g.take(0), (0, 0));
        // 3.5 periods late: releases 100 and 200 are dropped, 300 is served.
        assert_eq!(g.take(350), (300, 2));
        assert_eq!(g.next(), 400);
    }

    #[test]
    fn no_drift_over_many_periods() {
        // 1/3 s period in ns does not divide evenly; the grid still lands
        // exactly on start + k * period.
        let mut g = Grid::new(7, 333_333_333);
        for _ in 0..1_000_000 {
            let n = g.next();
            g.take(n);
        }
        assert_eq!(g.next(), 7 + 1_000_000 * 333_333_333);
    }
}
