//! Reconciliation: from the send logs and the subscribers' last reports,
//! what each subscriber should have received from each publisher, and
//! whether every difference was counted as a loss.
//!
//! For a pair (publisher P, subscriber S), "sent while both were alive" is
//! the run of P's sequence numbers between two bounds, known from P's log of
//! stamps (monotonic clock shared by all processes; the stamp of message n
//! is taken before its send, so it is at most its publication time, and
//! message n was published before n+1 was stamped):
//!
//! * from, strict: the first message stamped at or after S's `join_done`
//!   (published after S's `subscriber()` returned: S must see it);
//!   loose: the message before the first one stamped at or after S's
//!   `join_start` (the earliest that may have been published after S began
//!   joining, so the library may count it);
//! * to, strict: the last message S received from P if S was killed (later
//!   ones may have been in flight when it died), P's last committed send if S
//!   drained the rings at the end; loose: the last message P stamped before
//!   S's report was written (a message lost after S's last receipt from P
//!   may already be counted).
//!
//! Strict missing = strict window − receipts in it; loose likewise. Each
//! subscriber's counted losses (`overrun + malformed`) must lie between the
//! sum of its strict and the sum of its loose missing counts; under `Block`
//! every strict missing count, gap and overrun must be 0.

use serde::Serialize;

use crate::report::{PairCounts, PubReport, SendLog, SubReport};

/// One publisher as the analysis sees it.
pub(crate) struct PubInput<'a> {
    pub(crate) id: u64,
    pub(crate) log: &'a SendLog,
}

/// What one pair reconciles to.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub(crate) struct PairResult {
    pub(crate) publisher: u64,
    pub(crate) subscriber: u64,
    /// Messages sent while both were alive (strict and loose bounds).
    pub(crate) window_strict: u64,
    pub(crate) window_loose: u64,
    pub(crate) received: u64,
    pub(crate) missing_strict: i64,
    pub(crate) missing_loose: i64,
    pub(crate) gaps: u64,
    pub(crate) out_of_order: u64,
}

/// Index of the first stamp `>= t` (stamps never decrease).
fn first_at_or_after(stamps: &[u64], t: u64) -> u64 {
    stamps.partition_point(|&s| s < t) as u64
}

/// Messages `from..=to` (0 when empty).
fn span(from: u64, to: Option<u64>) -> u64 {
    match to {
        Some(to) if to >= from => to - from + 1,
        _ => 0,
    }
}

/// Reconciles publisher `p` with subscriber `s` (its last report).
pub(crate) fn pair(p: &PubInput<'_>, s: &SubReport) -> PairResult {
    let empty = PairCounts::default();
    let seen = s.pairs.get(&p.id);
    let c = seen.unwrap_or(&empty);
    let stamps = &p.log.stamps;
    let committed_last = p.log.committed.checked_sub(1);
    let last_seen = seen.map(|c| c.last);
    // Upper bounds (inclusive sequence numbers).
    let to_strict = if s.is_final {
        committed_last.max(last_seen)
    } else {
        last_seen
    };
    let stamped_by_report = first_at_or_after(stamps, s.written_ns.saturating_add(1));
    let sent_by_report = match (stamped_by_report.checked_sub(1), committed_last) {
        (Some(stamped), Some(committed)) => Some(stamped.min(committed)),
        _ => None,
    };
    let to_loose = to_strict.max(sent_by_report);
    // Lower bounds.
    let from_strict = first_at_or_after(stamps, s.join_done_ns);
    let from_loose = first_at_or_after(stamps, s.join_start_ns).saturating_sub(1);
    let window_strict = span(from_strict, to_strict);
    let window_loose = span(from_loose, to_loose);
    let received_loose = c.received - c.before_start
        + u64::from(c.max_seq_before_start == Some(from_loose) && c.before_start > 0);
    PairResult {
        publisher: p.id,
        subscriber: s.id,
        window_strict,
        window_loose,
        received: c.received,
        missing_strict: window_strict as i64 - c.after_done as i64,
        missing_loose: window_loose as i64 - received_loose as i64,
        gaps: c.gaps,
        out_of_order: c.out_of_order,
    }
}

/// One subscriber reconciled against every publisher of its topic.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub(crate) struct SubResult {
    pub(crate) subscriber: u64,
    pub(crate) counted_losses: u64,
    pub(crate) missing_strict: i64,
    pub(crate) missing_loose: i64,
    /// `missing_strict <= counted_losses <= missing_loose`, and no pair
    /// received more than its loose window.
    pub(crate) reconciled: bool,
    /// Receipts from publishers of other topics or unknown ids.
    pub(crate) unknown_publishers: u64,
    pub(crate) pairs: Vec<PairResult>,
}

/// Reconciles subscriber `s` with `pubs` (all publishers of its topic).
pub(crate) fn subscriber(pubs: &[PubInput<'_>], s: &SubReport) -> SubResult {
    let pairs: Vec<PairResult> = pubs
        .iter()
        .map(|p| pair(p, s))
        .filter(|r| r.window_loose > 0 || r.received > 0)
        .collect();
    let missing_strict: i64 = pairs.iter().map(|r| r.missing_strict).sum();
    let missing_loose: i64 = pairs.iter().map(|r| r.missing_loose).sum();
    let counted_losses = s.overrun + s.malformed;
    let unknown_publishers = s
        .pairs
        .keys()
        .filter(|id| !pubs.iter().any(|p| p.id == **id))
        .count() as u64;
    let reconciled = pairs
        .iter()
        .all(|r| r.missing_strict >= 0 && r.missing_loose >= 0)
        && missing_strict <= counted_losses as i64
        && counted_losses as i64 <= missing_loose
        && unknown_publishers == 0;
    SubResult {
        subscriber: s.id,
        counted_losses,
        missing_strict,
        missing_loose,
        reconciled,
        unknown_publishers,
        pairs,
    }
}

/// Under `Block`: nothing lost, nothing skipped, nothing counted as lost.
pub(crate) fn block_lossless(r: &SubResult) -> bool {
    r.counted_losses == 0
        && r.pairs
            .iter()
            .all(|p| p.missing_strict == 0 && p.gaps == 0 && p.out_of_order == 0)
}

/// The library's counters agree with the child's own.
pub(crate) fn counters_agree_pub(r: &PubReport) -> bool {
    r.horus_sent == r.sent
}

/// The library's receive counter agrees with the child's own.
pub(crate) fn counters_agree_sub(r: &SubReport) -> bool {
    r.horus_received == r.received + r.corrupt
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A log of `n` messages stamped 100, 200, 300, ….
    fn log(n: u64) -> SendLog {
        SendLog {
            committed: n,
            stamps: (1..=n).map(|i| i * 100).collect(),
        }
    }

    fn sub(join_start: u64, join_done: u64, written: u64, is_final: bool) -> SubReport {
        SubReport {
            id: 2,
            join_start_ns: join_start,
            join_done_ns: join_done,
            written_ns: written,
            is_final,
            ..SubReport::default()
        }
    }

    fn receive(s: &mut SubReport, publisher: u64, log: &SendLog, seqs: impl Iterator<Item = u64>) {
        for seq in seqs {
            let (start, done) = (s.join_start_ns, s.join_done_ns);
            s.received += 1;
            s.pairs.entry(publisher).or_default().observe(
                seq,
                log.stamps[seq as usize],
                start,
                done,
            );
        }
    }

    #[test]
    fn a_final_subscriber_that_got_everything_since_joining_reconciles_with_no_loss() {
        let l = log(10);
        let p = PubInput { id: 1, log: &l };
        // Joined between messages 2 (stamp 300) and 3 (stamp 400).
        let mut s = sub(350, 360, 2000, true);
        receive(&mut s, 1, &l, 3..10);
        let r = subscriber(&[p], &s);
        assert_eq!(r.pairs[0].window_strict, 7);
        // Message 2 (stamped before joining began) may have been published
        // after it began: the loose bound allows for it.
        assert_eq!((r.missing_strict, r.missing_loose), (0, 1));
        assert!(r.reconciled && block_lossless(&r));
    }

    #[test]
    fn an_uncounted_gap_does_not_reconcile() {
        let l = log(10);
        let p = PubInput { id: 1, log: &l };
        let mut s = sub(50, 60, 2000, true);
        receive(&mut s, 1, &l, (0..10).filter(|&i| i != 4));
        let r = subscriber(&[p], &s);
        assert_eq!(r.missing_strict, 1);
        assert!(!r.reconciled && !block_lossless(&r));
    }

    #[test]
    fn a_counted_overrun_reconciles_but_is_not_lossless() {
        let l = log(10);
        let p = PubInput { id: 1, log: &l };
        let mut s = sub(50, 60, 2000, true);
        receive(&mut s, 1, &l, (0..10).filter(|&i| i != 4));
        s.overrun = 1;
        let r = subscriber(&[p], &s);
        assert!(r.reconciled && !block_lossless(&r));
    }

    #[test]
    fn overruns_counted_for_messages_before_joining_do_not_reconcile() {
        // The late-joiner bug: losses counted for messages 0..5, published
        // long before the subscriber existed.
        let l = log(10);
        let p = PubInput { id: 1, log: &l };
        let mut s = sub(550, 560, 2000, true);
        receive(&mut s, 1, &l, 5..10);
        s.overrun = 5;
        assert!(!subscriber(&[p], &s).reconciled);
    }

    #[test]
    fn messages_in_flight_when_a_subscriber_died_are_not_missing() {
        let l = log(10);
        let p = PubInput { id: 1, log: &l };
        // Killed after its report at t=650, having received 0..=4; 5 was
        // stamped at 600 and still in the ring.
        let mut s = sub(50, 60, 650, false);
        receive(&mut s, 1, &l, 0..5);
        let r = subscriber(&[p], &s);
        assert_eq!((r.missing_strict, r.missing_loose), (0, 1));
        assert!(r.reconciled && block_lossless(&r));
    }

    #[test]
    fn a_publisher_killed_mid_send_leaves_an_uncommitted_stamp_that_is_not_expected() {
        let mut l = log(10);
        l.committed = 9; // message 9 stamped, its send never returned
        let p = PubInput { id: 1, log: &l };
        let mut s = sub(50, 60, 2000, true);
        receive(&mut s, 1, &l, 0..9);
        let r = subscriber(&[p], &s);
        assert_eq!(r.missing_strict, 0);
        assert!(r.reconciled);
    }

    #[test]
    fn receipts_from_an_unknown_publisher_do_not_reconcile() {
        let l = log(3);
        let mut s = sub(50, 60, 2000, true);
        receive(&mut s, 7, &l, 0..3);
        let none: [PubInput<'_>; 0] = [];
        assert!(!subscriber(&none, &s).reconciled);
    }
}
