//! The work of the `tf` benchmark's CPU scene, without its processes and sleeps, for
//! instruction counts: a feeder's share (decode one `TFMessage` of 200 transforms — 40
//! chains `map → cK_f1 → … → cK_f5` — from its CDR bytes, then
//! `TfBuffer::feed_tf_message`) and a lookup process's (`lookup_transform("map",
//! "cK_f5", t)` between two samples, interpolated on every hop), a fixed number of times.
//!
//! Run under callgrind and read the inclusive instruction counts of `feed_message` and
//! `lookup_once` (per message and per lookup: divide by the counts given):
//!
//! ```text
//! cargo build --release -p horus-tf --example feed_cost
//! valgrind --tool=callgrind --callgrind-out-file=/tmp/feed.cg \
//!     target/release/examples/feed_cost --messages 300 --lookups 3000
//! callgrind_annotate --inclusive=yes /tmp/feed.cg | grep -E 'feed_message|lookup_once'
//! ```
//! Without valgrind it prints the time per message and per lookup (hot caches: the scene's
//! processes run cold after each 10 ms sleep).

use std::hint::black_box;
use std::time::Instant;

use horus::cdr::{decode_message, encode_message, CdrBuf};
use horus_ros_msgs::tf2_msgs::msg::TFMessage;
use horus_tf::{time_of_ns, transform_stamped, TfBuffer};

const CHAINS: usize = 40;
/// 100 Hz.
const PERIOD_NS: i64 = 10_000_000;

/// The CDR bytes of the message broadcast at `stamp` (as the benchmark's publisher makes it).
fn message(stamp: i64) -> Vec<u8> {
    let t = stamp as f64 * 1e-9;
    let mut transforms = Vec::with_capacity(CHAINS * 5);
    for c in 0..CHAINS {
        for k in 0..5 {
            let parent = if k == 0 {
                "map".to_owned()
            } else {
                format!("c{c}_f{k}")
            };
            let a = 0.1 * (t + k as f64).sin();
            let (s, co) = (0.5 * a).sin_cos();
            transforms.push(transform_stamped(
                &parent,
                &format!("c{c}_f{}", k + 1),
                time_of_ns(stamp),
                [0.1 + a, 0.2, 0.05 * k as f64],
                [0.0, 0.0, s, co],
            ));
        }
    }
    encode_message(&TFMessage { transforms }).expect("encodes")
}

/// One message as a feeder handles it: a private aligned copy, decoded, stored.
#[inline(never)]
fn feed_message(b: &TfBuffer, cdr: &[u8]) -> usize {
    let msg = decode_message::<TFMessage>(CdrBuf::new(cdr).bytes()).expect("decodes");
    b.feed_tf_message(&msg, false).accepted
}

#[inline(never)]
fn lookup_once(b: &TfBuffer, source: &str, t: i64) -> bool {
    b.lookup_transform("map", source, t).is_ok()
}

fn arg(args: &[String], name: &str, default: usize) -> usize {
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1)?.parse().ok())
        .unwrap_or(default)
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let messages = arg(&args, "--messages", 1000).max(2);
    let lookups = arg(&args, "--lookups", 100_000);
    let start = 1_000_000_000_000i64;
    let bytes: Vec<Vec<u8>> = (0..messages as i64)
        .map(|k| message(start + k * PERIOD_NS))
        .collect();
    let b = TfBuffer::builder()
        .max_future(None)
        .in_process()
        .expect("buffer");

    let t0 = Instant::now();
    let stored: usize = bytes.iter().map(|m| feed_message(&b, m)).sum();
    let feed = t0.elapsed();
    assert_eq!(stored, messages * CHAINS * 5, "every transform stored");

    let sources: Vec<String> = (0..CHAINS).map(|c| format!("c{c}_f5")).collect();
    // Between the last two samples' predecessors: interpolation on every hop.
    let t = start + (messages as i64 - 2) * PERIOD_NS + PERIOD_NS / 2;
    let t1 = Instant::now();
    let ok = (0..lookups)
        .filter(|k| lookup_once(&b, black_box(&sources[k % CHAINS]), t))
        .count();
    let look = t1.elapsed();
    assert_eq!(ok, lookups, "every lookup succeeds");
    println!(
        "{messages} messages of {} transforms: {:.1} µs per message; {lookups} lookups: {:.0} ns each",
        CHAINS * 5,
        feed.as_secs_f64() * 1e6 / messages as f64,
        look.as_secs_f64() * 1e9 / lookups.max(1) as f64,
    );
}
