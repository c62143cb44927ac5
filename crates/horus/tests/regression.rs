//! Regression tests, each named after what broke (issue: hardening against
//! hostile peers, late joiners and observers). Each failed on the code
//! before its fix.

mod common;

use std::time::Duration;

use common::{segment_path, unique_ns, within};
use horus::prelude::*;
use horus::TopicError;
use horus_shm::{Channel, ChannelConfig, OpenError};

horus::message! {
    /// A numbered message: `seq` counts 1, 2, 3, … per publisher.
    pub struct Numbered: "horus-test/Numbered", version 1 {
        /// Position in the stream.
        pub seq: u64,
        /// Filler, so the message is not trivially small.
        pub pad: [u64; 3],
    }
}

fn numbered(seq: u64) -> Numbered {
    Numbered { seq, pad: [seq; 3] }
}

const BLOCK: Overflow = Overflow::Block {
    timeout: Duration::from_secs(30),
};

/// Receives `n` messages, asserting they are consecutive; returns the last.
fn receive_consecutive(s: &mut Subscriber<Numbered>, n: usize) -> u64 {
    let mut last = 0;
    for i in 0..n {
        let m = s
            .recv_timeout(common::PEER_PATIENCE)
            .expect("publisher is streaming");
        if i > 0 {
            assert_eq!(m.seq, last + 1, "gap in the stream");
        }
        last = m.seq;
    }
    last
}

// ------------------------------------------------------------ late joiners

/// Regression: a subscriber joining a live `Block` stream (depth 64) read
/// its start before its (15 ms) futex registration and before it became a
/// member, so the publisher lapped its cursor in between and it counted
/// 1,000–1,700 overruns with no gap in what it received. Repeated joins.
#[test]
fn late_joiner_on_a_live_block_stream_counts_no_overrun() {
    late_joiners_count_no_overrun(BLOCK, WaitMode::Futex);
}

#[test]
fn late_joiner_on_a_live_reject_stream_counts_no_overrun() {
    late_joiners_count_no_overrun(Overflow::Reject, WaitMode::Futex);
}

#[test]
fn late_busy_poll_joiner_on_a_live_block_stream_counts_no_overrun() {
    late_joiners_count_no_overrun(BLOCK, WaitMode::BusyPoll);
}

fn late_joiners_count_no_overrun(overflow: Overflow, mode: WaitMode) {
    let ns = unique_ns("latejoin");
    let t = Topic::<Numbered>::builder("stream")
        .namespace(&ns)
        .overflow(overflow)
        .depth(64)
        .open()
        .unwrap();
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let (t2, stop2) = (t.clone(), stop.clone());
    let publisher = std::thread::spawn(move || {
        let mut p = t2.publisher().unwrap();
        let mut seq = 0;
        while !stop2.load(std::sync::atomic::Ordering::Relaxed) {
            // Reject hands the message back while the ring is full: retry
            // it (the counter says how often).
            if p.send(numbered(seq + 1)).is_ok() {
                seq += 1;
            }
        }
        p.stats()
    });
    for _ in 0..6 {
        let mut s = t.subscriber_with(mode).unwrap();
        receive_consecutive(&mut s, 20_000);
        let stats = s.stats();
        assert_eq!(stats.overrun, 0, "late joiner counted a loss: {stats:?}");
        assert_eq!(stats.malformed, 0);
        assert_eq!(stats.received, 20_000);
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let sent = publisher.join().unwrap();
    assert_eq!(sent.timed_out, 0, "{sent:?}");
}

/// Under `DropOldest` a joiner starts with the publisher's next message:
/// what was published before it joined is not its loss.
#[test]
fn late_joiner_after_a_burst_counts_no_overrun_for_earlier_messages() {
    let ns = unique_ns("lateburst");
    let t = Topic::<Numbered>::builder("burst")
        .namespace(&ns)
        .depth(8)
        .open()
        .unwrap();
    let mut p = t.publisher().unwrap();
    let _early = t.subscriber_with(WaitMode::BusyPoll).unwrap();
    for seq in 1..=100 {
        p.send(numbered(seq)).unwrap();
    }
    let mut late = t.subscriber_with(WaitMode::BusyPoll).unwrap();
    assert!(
        late.try_recv().is_none(),
        "nothing published since it joined"
    );
    for seq in 101..=104 {
        p.send(numbered(seq)).unwrap();
    }
    let got: Vec<u64> = std::iter::from_fn(|| late.try_recv().map(|m| m.seq)).collect();
    assert_eq!(got, [101, 102, 103, 104]);
    assert_eq!(late.stats().overrun, 0);
}

// ------------------------------------------------------------ observers

/// Everything a scenario's publisher and reliable subscriber observed.
#[derive(Debug, PartialEq)]
struct Observed {
    sends: Vec<String>,
    publisher: horus::PublisherStats,
    subscriber: horus::SubscriberStats,
    received: Vec<u64>,
}

/// A fixed single-threaded interleaving of sends and receives on a topic
/// with `overflow`; with `observer`, a stalled observer is attached first
/// (it never reads until the end). Returns what the robot's endpoints saw,
/// and the observer's stats after it finally reads everything it can.
fn scenario(overflow: Overflow, observer: bool) -> (Observed, Option<horus::SubscriberStats>) {
    let ns = unique_ns("observer");
    let t = Topic::<Numbered>::builder("scan")
        .namespace(&ns)
        .overflow(match overflow {
            Overflow::Block { .. } => Overflow::Block {
                timeout: Duration::from_millis(20),
            },
            o => o,
        })
        .depth(4)
        .open()
        .unwrap();
    let mut tool = observer.then(|| t.observer_with(WaitMode::BusyPoll).unwrap());
    let mut s = t.subscriber_with(WaitMode::BusyPoll).unwrap();
    let mut p = t.publisher().unwrap();
    let mut sends = Vec::new();
    let mut received = Vec::new();
    for seq in 1..=40u64 {
        let outcome = match p.send(numbered(seq)) {
            Ok(d) => format!("ok {}", d.subscribers),
            Err(e) => format!("{e}").split(':').next().unwrap_or("").to_owned(),
        };
        sends.push(outcome);
        // The reliable subscriber reads two of every three messages' worth.
        if seq % 3 != 0 {
            if let Some(m) = s.try_recv() {
                received.push(m.seq);
            }
        }
    }
    while let Some(m) = s.try_recv() {
        received.push(m.seq);
    }
    let observed = Observed {
        sends,
        publisher: p.stats(),
        subscriber: s.stats(),
        received,
    };
    let tool_stats = tool.as_mut().map(|o| {
        while o.try_recv().is_some() {}
        o.stats()
    });
    (observed, tool_stats)
}

fn stalled_observer_changes_nothing(overflow: Overflow) {
    let (without, _) = scenario(overflow, false);
    let (with, tool) = scenario(overflow, true);
    assert_eq!(
        with, without,
        "attaching a stalled observer changed what the robot saw"
    );
    let tool = tool.unwrap();
    // The observer got the last `depth` messages published and counts the
    // rest as its own overrun: every published message is accounted for.
    let published = with.publisher.sent;
    assert_eq!(tool.received + tool.overrun, published, "{tool:?}");
    assert_eq!(tool.received, 4);
}

#[test]
fn stalled_observer_changes_nothing_under_reject() {
    stalled_observer_changes_nothing(Overflow::Reject);
}

#[test]
fn stalled_observer_changes_nothing_under_block() {
    stalled_observer_changes_nothing(BLOCK);
}

#[test]
fn stalled_observer_changes_nothing_under_drop_oldest() {
    stalled_observer_changes_nothing(Overflow::DropOldest);
}

/// Loaned (chunked) messages: a stalled observer neither holds the
/// publisher's chunks nor changes who frees them.
#[test]
fn stalled_observer_changes_nothing_for_loaned_messages() {
    let run = |observer: bool| {
        let ns = unique_ns("obscloud");
        let t = Topic::<PointCloud>::builder("cloud")
            .namespace(&ns)
            .overflow(Overflow::Reject)
            .depth(4)
            .loan_pool(6)
            .max_tail_bytes(256)
            .open()
            .unwrap();
        let tool = observer.then(|| t.observer_with(WaitMode::BusyPoll).unwrap());
        let mut s = t.subscriber_with(WaitMode::BusyPoll).unwrap();
        let mut p = t.publisher().unwrap();
        let mut outcomes = Vec::new();
        for seq in 1..=30u64 {
            let mut cloud = PointCloud::new(1, false);
            cloud.stamp_ns = seq;
            let r = p.send_with_tail(&cloud, &[seq as u8; 12]);
            outcomes.push(r.map(|d| d.subscribers).map_err(|e| e.to_string()));
            if seq % 2 == 0 {
                s.try_recv();
            }
        }
        let stats = (p.stats(), s.stats());
        drop(tool);
        (outcomes, stats)
    };
    assert_eq!(run(true), run(false));
}

/// Regression (found by the Foxglove bridge): an observer read none of a large-message topic's
/// messages when the topic's only subscriber consumed each at once — that subscriber frees the
/// chunk immediately, and a free chunk could not be pinned. A free chunk that was not yet
/// reused still holds its message; the observer now reads every one.
#[test]
fn observer_reads_loaned_messages_the_only_subscriber_consumed_first() {
    let ns = unique_ns("obsfreed");
    let t = Topic::<PointCloud>::builder("cloud")
        .namespace(&ns)
        .depth(4)
        .max_tail_bytes(256)
        .open()
        .unwrap();
    let mut tool = t.observer_with(WaitMode::BusyPoll).unwrap();
    let mut s = t.subscriber_with(WaitMode::BusyPoll).unwrap();
    let mut p = t.publisher().unwrap();
    for seq in 1..=50u64 {
        let mut cloud = PointCloud::new(1, false);
        cloud.stamp_ns = seq;
        p.send_with_tail(&cloud, &[seq as u8; 16]).unwrap();
        // The robot's subscriber reads and drops it first (freeing the chunk) ...
        assert_eq!(s.try_recv().unwrap().stamp_ns, seq);
        // ... and the tool still gets the intact message.
        let seen = tool
            .try_recv()
            .expect("the observer reads the consumed message");
        assert_eq!(seen.stamp_ns, seq);
        assert_eq!(seen.tail(), &[seq as u8; 16]);
    }
    assert_eq!(tool.stats().overrun, 0);
    assert_eq!(tool.stats().received, 50);
    assert_eq!(p.stats().pool_exhausted, 0);
}

#[test]
fn observer_is_not_counted_as_a_subscriber_by_publishers() {
    let ns = unique_ns("obscount");
    let t = Topic::<Numbered>::builder("t")
        .namespace(&ns)
        .open()
        .unwrap();
    let mut o = t.observer().unwrap();
    assert!(o.is_observer());
    let mut p = t.publisher().unwrap();
    let d = p.send(numbered(1)).unwrap();
    assert_eq!(d.subscribers, 0);
    assert_eq!(p.stats().undelivered, 1);
    assert_eq!(p.subscribers(), 0);
    // It still receives, and shows as an observer in the topic's stats.
    assert_eq!(o.try_recv().unwrap().seq, 1);
    let snap = t.stats().snapshot;
    assert!(snap.subscribers.iter().all(|s| s.observer));
}

// ------------------------------------------------------------ hostile segments

/// The schema bytes a topic of `T` stores (read back from a real segment).
fn schema_of<T: Message>(ns: &str) -> [u8; horus_shm::SCHEMA_BYTES] {
    let t = Topic::<T>::builder("schema-probe")
        .namespace(ns)
        .open()
        .unwrap();
    let _p = t.publisher().unwrap();
    let name = horus_shm::name::segment_name(ns, "t", "schema-probe").unwrap();
    Channel::open_existing(&name, None)
        .unwrap()
        .layout()
        .config
        .schema
}

/// A consistent segment for `name` with `T`'s schema and the given chunk
/// and slot sizes: what a buggy or hostile peer could create.
fn plant_segment(
    ns: &str,
    name: &str,
    schema: [u8; horus_shm::SCHEMA_BYTES],
    chunk: u64,
    slot: u32,
) -> std::sync::Arc<Channel> {
    let config = ChannelConfig {
        schema,
        depth: 4,
        slot_payload: slot,
        max_publishers: 8,
        max_subscribers: 16,
        chunk_size: chunk,
        chunks_per_publisher: if chunk == 0 { 0 } else { 12 },
        qos_code: 0,
    };
    let seg = horus_shm::name::segment_name(ns, "t", name).unwrap();
    Channel::open_or_create(&seg, &config).unwrap()
}

fn assert_corrupt(r: Result<Topic<PointCloud>, TopicError>) {
    match r {
        Err(TopicError::Segment {
            source: OpenError::Corrupt { reason, .. },
            ..
        }) => assert!(reason.contains("chunks"), "{reason}"),
        Err(e) => panic!("expected a corrupt-segment error, got {e}"),
        Ok(_) => panic!("a segment whose chunks cannot hold the message was accepted"),
    }
}

/// Regression: a segment with the right schema but a `chunk_size` smaller
/// than the message was accepted when the opener set no explicit tail size
/// (`compatible()` compared `chunk_size` only then), and `loan()` then
/// wrote past the chunk.
#[test]
fn hostile_chunk_size_is_a_typed_error_on_open() {
    let ns = unique_ns("hostilechunk");
    let schema = schema_of::<PointCloud>(&ns);
    let _planted = plant_segment(&ns, "cloud", schema, 8, 16);
    assert_corrupt(Topic::<PointCloud>::builder("cloud").namespace(&ns).open());
    std::fs::remove_file(segment_path(&ns, "cloud")).unwrap();
}

/// Regression: the reopen path (the segment was unlinked by its last
/// participant while this handle had no endpoint, and someone else created
/// it again) skipped every check: a hostile recreation with tiny chunks was
/// adopted as is.
#[test]
fn hostile_segment_on_the_reopen_path_is_a_typed_error() {
    let ns = unique_ns("hostilereopen");
    let schema = schema_of::<PointCloud>(&ns);
    let handle = Topic::<PointCloud>::builder("cloud")
        .namespace(&ns)
        .open()
        .unwrap();
    // Another handle's endpoint comes and goes: the last one out unlinks.
    {
        let other = Topic::<PointCloud>::builder("cloud")
            .namespace(&ns)
            .open()
            .unwrap();
        drop(other.publisher().unwrap());
    }
    let path = segment_path(&ns, "cloud");
    assert!(
        !std::path::Path::new(&path).exists(),
        "last participant unlinked"
    );
    let _planted = plant_segment(&ns, "cloud", schema, 8, 16);
    match handle.publisher() {
        Err(TopicError::QosMismatch { .. }) => {}
        Err(e) => panic!("expected QosMismatch, got {e}"),
        Ok(_) => panic!("reopened a hostile segment without checking it"),
    }
    std::fs::remove_file(&path).unwrap();
}

/// Scribbles `value` into every slot stamp of publisher place 0's ring.
fn scribble_stamps(ns: &str, name: &str, value: u64) {
    use std::os::unix::fs::FileExt;
    let seg = horus_shm::name::segment_name(ns, "t", name).unwrap();
    let layout = *Channel::open_existing(&seg, None).unwrap().layout();
    let file = std::fs::OpenOptions::new()
        .write(true)
        .open(segment_path(ns, name))
        .unwrap();
    for i in 0..layout.config.depth as usize {
        file.write_all_at(&value.to_ne_bytes(), layout.slot(0, i) as u64)
            .unwrap();
    }
}

/// Regression: slot stamps set far beyond the reader's sequence number
/// while the ring's head stayed small kept `receive_from` in its lapped
/// branch for ever (`try_recv`, documented as never waiting, hung), and
/// `has_pending` reported true so the scheduler spun too.
#[test]
fn hostile_stamps_far_ahead_do_not_hang_try_recv() {
    let ns = unique_ns("hostilestamps");
    let t = Topic::<Numbered>::builder("s")
        .namespace(&ns)
        .depth(16)
        .open()
        .unwrap();
    let mut s = t.subscriber_with(WaitMode::BusyPoll).unwrap();
    let mut p = t.publisher().unwrap();
    p.send(numbered(1)).unwrap();
    assert_eq!(s.try_recv().unwrap().seq, 1);
    for stamp in [u64::MAX - 1, 1 << 62, 2 * 1_000_000] {
        scribble_stamps(&ns, "s", stamp);
        let (s2, pending) = within(60, move || {
            let mut s = s;
            for _ in 0..1000 {
                assert!(s.try_recv().is_none());
            }
            let pending = s.has_pending();
            (s, pending)
        });
        s = s2;
        assert!(!pending, "corrupt stamps made a message look pending");
    }
    assert!(s.stats().malformed > 0, "{:?}", s.stats());
}

/// Regression: corrupt heads and cursors (values near `u64::MAX`) made the
/// stats snapshot overflow a sum (a panic in debug builds).
#[test]
fn hostile_heads_do_not_panic_the_stats_snapshot() {
    use std::os::unix::fs::FileExt;
    let ns = unique_ns("hostileheads");
    let t = Topic::<Numbered>::builder("h")
        .namespace(&ns)
        .open()
        .unwrap();
    let _s1 = t.subscriber_with(WaitMode::BusyPoll).unwrap();
    let _p = t.publisher().unwrap();
    let seg = horus_shm::name::segment_name(&ns, "t", "h").unwrap();
    let layout = *Channel::open_existing(&seg, None).unwrap().layout();
    let file = std::fs::OpenOptions::new()
        .write(true)
        .open(segment_path(&ns, "h"))
        .unwrap();
    // `head` is word 8 of every publisher record; cursors follow the
    // 64-byte head of each subscriber record.
    for k in 0..layout.config.max_publishers as usize {
        file.write_all_at(
            &(u64::MAX - 3).to_ne_bytes(),
            (layout.pub_record(k) + 64) as u64,
        )
        .unwrap();
        file.write_all_at(
            &0u64.to_ne_bytes(),
            (layout.sub_record(0) + 64 + 8 * k) as u64,
        )
        .unwrap();
    }
    let snap = t.stats().snapshot;
    assert_eq!(snap.subscribers.len(), 1);
}

/// Regression (found by the Python tests during this change): a publisher
/// that started a joining subscriber's cursor, sent, and left before the
/// subscriber looked again left that message unpolled.
#[test]
fn message_of_a_publisher_that_left_at_once_is_received() {
    let ns = unique_ns("leftatonce");
    let t = Topic::<Numbered>::builder("t")
        .namespace(&ns)
        .open()
        .unwrap();
    let mut s = t.subscriber_with(WaitMode::BusyPoll).unwrap();
    t.publisher().unwrap().send(numbered(5)).unwrap();
    assert_eq!(s.try_recv().map(|m| m.seq), Some(5));
}

/// Writes `value` at byte `offset` of topic `name`'s segment file.
fn poke(ns: &str, name: &str, offset: usize, value: u64) {
    use std::os::unix::fs::FileExt;
    let file = std::fs::OpenOptions::new()
        .write(true)
        .open(segment_path(ns, name))
        .unwrap();
    file.write_all_at(&value.to_ne_bytes(), offset as u64)
        .unwrap();
}

/// Regression (fuzz findings F2, F3): membership bits beyond the channel's
/// capacities made a publisher index a subscriber record out of range (a
/// read and CAS in another region in release builds) and every subscriber
/// index its cursors out of bounds (a panic, release builds too).
#[test]
fn membership_bits_beyond_the_capacities_are_ignored() {
    let ns = unique_ns("hostilemembers");
    let t = Topic::<Numbered>::builder("m")
        .namespace(&ns)
        .max_publishers(4)
        .max_subscribers(4)
        .open()
        .unwrap();
    let mut s = t.subscriber_with(WaitMode::BusyPoll).unwrap();
    let mut p = t.publisher().unwrap();
    // Membership word at offset 256: our two places plus a subscriber bit 5
    // and a publisher bit 37 that no place backs.
    poke(&ns, "m", 256, 1 | (1 << 32) | (1 << 5) | (1 << 37));
    p.send(numbered(1)).unwrap();
    assert_eq!(s.try_recv().map(|m| m.seq), Some(1));
    let _ = t.stats();
    // The phantom bits keep the last endpoint from unlinking the segment.
    drop((s, p, t));
    std::fs::remove_file(segment_path(&ns, "m")).unwrap();
}

/// Regression (fuzz finding F1): a publisher taking over a place whose
/// `head` (or `sent`) a dead or hostile predecessor left near u64::MAX
/// overflowed its sequence number on the first send.
#[test]
fn publisher_adopting_a_head_near_the_maximum_does_not_overflow() {
    let ns = unique_ns("hostilehead");
    let t = Topic::<Numbered>::builder("h")
        .namespace(&ns)
        .max_publishers(1)
        .open()
        .unwrap();
    let _s = t.subscriber_with(WaitMode::BusyPoll).unwrap();
    let seg = horus_shm::name::segment_name(&ns, "t", "h").unwrap();
    let layout = *Channel::open_existing(&seg, None).unwrap().layout();
    poke(&ns, "h", layout.pub_record(0) + 64, u64::MAX - 1);
    poke(&ns, "h", layout.pub_record(0) + 72, u64::MAX);
    let mut p = t.publisher().unwrap();
    for seq in 1..=3 {
        p.send(numbered(seq)).unwrap();
    }
}
