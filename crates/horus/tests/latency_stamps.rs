//! What a subscriber's latency histogram makes of the stamps it receives: a wall-clock
//! stamp is recorded, a stamp that cannot be a publish time (a counter, one too old, one in
//! the future) is counted implausible, once per message, however many arrive in a row (the
//! probe judges most of a run of counters without reading the clock: the count must not
//! depend on that).

mod common;

use std::path::Path;

use common::{segment_path, unique_ns};
use horus::prelude::*;

/// One message with `stamp` through `p` to `s`; returns the subscriber's (recorded,
/// implausible) counts after it.
fn one(p: &mut Publisher<CmdVel>, s: &mut Subscriber<CmdVel>, stamp: u64) -> (u64, u64) {
    p.send(CmdVel::new(stamp, 1.0, 0.0)).unwrap();
    assert_eq!(s.try_recv().map(|m| m.stamp_ns), Some(stamp));
    let l = s.stats().latency;
    assert_eq!(l.count, l.total(), "count and buckets agree");
    (l.count, l.implausible)
}

#[test]
fn implausible_stamps_are_counted_once_per_message_and_plausible_ones_recorded() {
    let ns = unique_ns("lat-stamps");
    let t = Topic::<CmdVel>::builder("lat/stamps")
        .namespace(&ns)
        .depth(8)
        .open()
        .unwrap();
    let mut s = t.subscriber().unwrap();
    let mut p = t.publisher().unwrap();
    const SEC: u64 = 1_000_000_000;

    // A run of sequence numbers, longer than the probe judges against one clock reading.
    let run = 3_000u64;
    for i in 1..=run {
        assert_eq!(one(&mut p, &mut s, i), (0, i), "counter stamp {i}");
    }
    // A wall-clock stamp right after the run is recorded, not counted.
    assert_eq!(one(&mut p, &mut s, Time::now().nanos), (1, run));
    // Too old by minutes and by days; in the future by an hour: each counted once.
    let now = Time::now().nanos;
    assert_eq!(one(&mut p, &mut s, now - 120 * SEC), (1, run + 1));
    assert_eq!(one(&mut p, &mut s, now - 2 * 86_400 * SEC), (1, run + 2));
    assert_eq!(one(&mut p, &mut s, now + 3_600 * SEC), (1, run + 3));
    // Counters and live stamps interleaved: each judged on its own.
    for i in 0..10u64 {
        assert_eq!(one(&mut p, &mut s, 7 + i), (1 + i, run + 4 + i));
        assert_eq!(one(&mut p, &mut s, Time::now().nanos), (2 + i, run + 4 + i));
    }
    // A zero stamp is "not stamped": neither recorded nor counted.
    assert_eq!(one(&mut p, &mut s, 0), (11, run + 13));

    drop((s, p, t));
    assert!(!Path::new(&segment_path(&ns, "lat/stamps")).exists());
}
