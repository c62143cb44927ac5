//! A hostile live peer: another process scribbles into the segments of live
//! topics (seeded patterns: random bytes, all-ones, plausible-but-wrong
//! lengths and chunk descriptors, stamps far ahead, corrupt cursors, heads
//! and membership words) while publishers and subscribers run. They must
//! not crash, must not hang (each `try_recv` returns; the watchdog only turns
//! a hang into a failure), must hand out only messages that passed
//! validation (the right size; chunk descriptors inside the pool), and must
//! count what failed validation as `malformed`.

mod common;

use std::os::unix::fs::FileExt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use common::{enter_peer, peer_ns, report, segment_path, unique_ns, within, Peer};
use horus::prelude::*;
use horus_shm::{Channel, Layout};

const SCAN: &str = "scan";
const CLOUD: &str = "cloud";

fn scan_topic(ns: &str) -> Topic<CmdVel> {
    Topic::<CmdVel>::builder(SCAN)
        .namespace(ns)
        .depth(16)
        .max_publishers(2)
        .max_subscribers(4)
        .open()
        .unwrap()
}

fn cloud_topic(ns: &str) -> Topic<PointCloud> {
    Topic::<PointCloud>::builder(CLOUD)
        .namespace(ns)
        .depth(4)
        .max_tail_bytes(256)
        .max_publishers(2)
        .max_subscribers(4)
        .open()
        .unwrap()
}

/// Dispatches peer roles; does nothing in a normal test run.
#[test]
fn peer() {
    let Some((role, args)) = enter_peer() else {
        return;
    };
    match (role.as_str(), args.as_slice()) {
        ("scribble", [seed, rounds]) => scribble(seed.parse().unwrap(), rounds.parse().unwrap()),
        _ => panic!("unknown peer role {role} {args:?}"),
    }
}

/// A small deterministic generator (xorshift64*), so a failing seed can be
/// replayed.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
}

/// Scribbles `rounds` patterns into both topics' segments, then reports.
fn scribble(seed: u64, rounds: u32) {
    let ns = peer_ns();
    let mut rng = Rng(seed | 1);
    let targets: Vec<(std::fs::File, Layout)> = [SCAN, CLOUD]
        .iter()
        .map(|name| {
            let shm = horus_shm::name::segment_name(&ns, "t", name).unwrap();
            let layout = *Channel::open_existing(&shm, None).unwrap().layout();
            let file = std::fs::OpenOptions::new()
                .write(true)
                .open(segment_path(&ns, name))
                .unwrap();
            (file, layout)
        })
        .collect();
    report("scribbling");
    for _ in 0..rounds {
        let (file, l) = &targets[rng.below(2) as usize];
        let c = l.config;
        let k = rng.below(u64::from(c.max_publishers)) as usize;
        let slot = l.slot(k, rng.below(u64::from(c.depth)) as usize);
        let head = rng.below(1 << 20);
        let (offset, value): (usize, u64) = match rng.below(9) {
            // Random bytes anywhere in the rings.
            0 => (
                slot + 8 * rng.below(l.slot_size as u64 / 8) as usize,
                rng.next(),
            ),
            // All-ones stamp or meta.
            1 => (slot + 8 * rng.below(2) as usize, u64::MAX),
            // A committed-looking stamp far ahead of any head.
            2 => (slot, 2 * (head + 1_000_000)),
            // A plausible stamp with a length past the slot.
            3 => (slot + 8, l.slot_size as u64 + 8 * rng.below(64)),
            // A chunk descriptor naming a chunk past the pool, or with a
            // wild generation, or a length past the chunk.
            4 => (
                slot + 16,
                (rng.next() << 32) | (u64::from(c.chunks_per_publisher) + rng.below(8)),
            ),
            5 => (slot + 24, c.chunk_size + 1 + rng.below(1 << 20)),
            // A subscriber's cursor or a publisher's head.
            6 => (
                l.sub_record(rng.below(u64::from(c.max_subscribers)) as usize) + 64 + 8 * k,
                rng.next() >> rng.below(64),
            ),
            7 => (l.pub_record(k) + 64, rng.next() >> rng.below(64)),
            // Chunk state words (pins, generations).
            _ if c.chunks_per_publisher > 0 => (
                l.chunk_state(k, rng.below(u64::from(c.chunks_per_publisher)) as usize),
                rng.next(),
            ),
            _ => (slot, rng.next()),
        };
        file.write_all_at(&value.to_ne_bytes(), offset as u64)
            .unwrap();
        if rng.below(16) == 0 {
            std::thread::yield_now();
        }
    }
    report("done");
    common::command();
}

#[test]
fn hostile_peer_scribbling_live_segments_crashes_and_hangs_nothing() {
    let ns = unique_ns("hostile");
    let scan = scan_topic(&ns);
    let cloud = cloud_topic(&ns);
    let stop = Arc::new(AtomicBool::new(false));

    let publishers = {
        let (scan, cloud, stop) = (scan.clone(), cloud.clone(), stop.clone());
        std::thread::spawn(move || {
            let mut ps = scan.publisher().unwrap();
            let mut pc = cloud.publisher().unwrap();
            let mut sent = 0u64;
            while !stop.load(Ordering::Relaxed) {
                sent += 1;
                // Refusals (a corrupt cursor can make a ring look full, a
                // corrupt pool exhausted) are typed errors, not crashes.
                let _ = ps.send(CmdVel::new(sent, 0.5, 0.1));
                let mut c = PointCloud::new(1, false);
                c.stamp_ns = sent;
                let _ = pc.send_with_tail(&c, &[7; 12]);
            }
            sent
        })
    };
    let subscriber = |name: &'static str| {
        let (scan, cloud, stop) = (scan.clone(), cloud.clone(), stop.clone());
        std::thread::spawn(move || {
            let mut received = 0u64;
            let malformed = if name == SCAN {
                let mut s = scan.subscriber_with(WaitMode::BusyPoll).unwrap();
                while !stop.load(Ordering::Relaxed) {
                    if s.try_recv().is_some() {
                        received += 1;
                    }
                    let _ = s.has_pending();
                }
                s.stats().malformed
            } else {
                let mut s = cloud.subscriber_with(WaitMode::BusyPoll).unwrap();
                while !stop.load(Ordering::Relaxed) {
                    if let Some(m) = s.try_recv() {
                        // Handed out only after validation: the tail lies
                        // inside the chunk it was pinned in.
                        let _ = m.tail().len();
                        received += 1;
                    }
                }
                s.stats().malformed
            };
            (received, malformed)
        })
    };
    let scan_sub = subscriber(SCAN);
    let cloud_sub = subscriber(CLOUD);

    let mut scribbler = Peer::spawn(&ns, "scribble", &["20261122", "40000"]);
    scribbler.expect("scribbling");
    scribbler.expect("done");
    scribbler.finish();

    stop.store(true, Ordering::Relaxed);
    // Joining is the hang check: every loop above polls `stop`.
    let (sent, scan_result, cloud_result) = within(120, move || {
        (
            publishers.join().expect("publishers did not panic"),
            scan_sub.join().expect("scan subscriber did not panic"),
            cloud_sub.join().expect("cloud subscriber did not panic"),
        )
    });
    eprintln!(
        "hostile peer: {sent} sends per topic; scan received {} malformed {}; cloud received {} malformed {}",
        scan_result.0, scan_result.1, cloud_result.0, cloud_result.1
    );
    assert!(
        scan_result.1 + cloud_result.1 > 0,
        "the scribbles were never counted as malformed"
    );
    drop((scan, cloud));
    // Scribbled membership words may keep a segment from being unlinked
    // by its last endpoint: remove what is left of this test's namespace.
    for name in [SCAN, CLOUD] {
        let _ = std::fs::remove_file(segment_path(&ns, name));
    }
}
