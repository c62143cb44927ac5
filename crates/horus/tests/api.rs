//! Black-box tests of the topic API within one process (same thread and
//! across threads): delivery, counters, every overflow policy, loans.

mod common;

use std::time::Duration;

use common::{segment_path, unique_ns};
use horus::prelude::*;
use horus::{LoanError, RecvError};

fn cmd(i: u64) -> CmdVel {
    CmdVel::new(i, i as f32, -(i as f32))
}

fn topic<T: Message>(name: &str, overflow: Overflow, depth: u32) -> Topic<T> {
    Topic::<T>::builder(name)
        .namespace(&unique_ns(name))
        .overflow(overflow)
        .depth(depth)
        .open()
        .unwrap()
}

#[test]
fn same_thread_round_trip_and_counters() {
    let t = topic::<CmdVel>("rt", Overflow::DropOldest, 8);
    let mut p = t.publisher().unwrap();
    let mut s = t.subscriber().unwrap();
    assert_eq!(s.try_recv().map(|m| m.stamp_ns), None);
    for i in 1..=5 {
        assert_eq!(p.send(cmd(i)), Ok(Delivery { subscribers: 1 }));
    }
    for i in 1..=5 {
        assert_eq!(*s.try_recv().unwrap(), cmd(i));
    }
    assert!(s.try_recv().is_none());
    assert_eq!(p.stats().sent, 5);
    assert_eq!(s.stats().received, 5);
    assert_eq!(s.stats().overrun, 0);
    let ts = t.stats();
    assert_eq!((ts.publishers(), ts.subscribers()), (1, 1));
    assert_eq!(ts.snapshot.subscribers[0].received, 5);
}

#[test]
fn held_inline_samples_keep_their_message_while_later_ones_arrive() {
    let t = topic::<CmdVel>("held", Overflow::DropOldest, 8);
    let mut p = t.publisher().unwrap();
    let mut s = t.subscriber().unwrap();
    for i in 1..=5 {
        p.send(cmd(i)).unwrap();
    }
    // Every sample held while the next ones are received into the
    // subscriber's buffer: none may see a later message.
    let held: Vec<Sample<CmdVel>> = (0..5).map(|_| s.try_recv().unwrap()).collect();
    for (i, m) in (1..).zip(&held) {
        assert_eq!(**m, cmd(i));
    }
    // Released on another thread, then the buffer is reused.
    std::thread::spawn(move || drop(held)).join().unwrap();
    for i in 6..=8 {
        p.send(cmd(i)).unwrap();
        assert_eq!(*s.try_recv().unwrap(), cmd(i));
    }
}

#[test]
fn held_large_inline_samples_keep_their_message_while_later_ones_arrive() {
    // 736 B: inline, and its samples share the subscriber's receive buffer
    // (small messages are copied into the sample instead).
    let odom = |i: u64| {
        let mut o: horus::msgs::Odometry = bytemuck::Zeroable::zeroed();
        o.stamp_ns = i;
        o.pose_covariance[35] = i as f64;
        o.twist_covariance[0] = -(i as f64);
        o
    };
    let t = topic::<horus::msgs::Odometry>("held-odom", Overflow::DropOldest, 8);
    let mut p = t.publisher().unwrap();
    let mut s = t.subscriber().unwrap();
    for i in 1..=5 {
        p.send(odom(i)).unwrap();
    }
    let held: Vec<_> = (0..5).map(|_| s.try_recv().unwrap()).collect();
    for (i, m) in (1..).zip(&held) {
        assert_eq!(bytemuck::bytes_of(&**m), bytemuck::bytes_of(&odom(i)));
    }
    std::thread::spawn(move || drop(held)).join().unwrap();
    for i in 6..=8 {
        p.send(odom(i)).unwrap();
        let m = s.try_recv().unwrap();
        assert_eq!(bytemuck::bytes_of(&*m), bytemuck::bytes_of(&odom(i)));
    }
}

#[test]
fn sample_size_does_not_depend_on_the_message_size() {
    // Moving a sample (returning it, `Some`, an empty poll's `None`) must not
    // copy the message: it was a `size_of::<T>()` memcpy per move.
    let small = std::mem::size_of::<Option<Sample<[u64; 1]>>>();
    assert!(small <= 80, "{small} B");
    assert_eq!(std::mem::size_of::<Option<Sample<[u64; 512]>>>(), small);
    assert_eq!(std::mem::size_of::<Option<Sample<[u8; 1480]>>>(), small);
}

#[test]
fn send_without_subscribers_is_counted_undelivered() {
    let t = topic::<CmdVel>("undelivered", Overflow::DropOldest, 4);
    let mut p = t.publisher().unwrap();
    assert_eq!(p.send(cmd(1)), Ok(Delivery { subscribers: 0 }));
    assert_eq!(p.stats().undelivered, 1);
    assert_eq!(t.stats().snapshot.publishers[0].undelivered, 1);
}

#[test]
fn drop_oldest_counts_overrun_and_keeps_newest() {
    let t = topic::<CmdVel>("dropoldest", Overflow::DropOldest, 4);
    let mut p = t.publisher().unwrap();
    let mut s = t.subscriber().unwrap();
    for i in 1..=10 {
        p.send(cmd(i)).unwrap();
    }
    let got: Vec<u64> = std::iter::from_fn(|| s.try_recv().map(|m| m.stamp_ns)).collect();
    assert_eq!(got, vec![7, 8, 9, 10]);
    assert_eq!(s.stats().overrun, 6);
    // The publisher sees the subscriber's loss too.
    assert_eq!(p.topic_stats().lost(), 6);
}

#[test]
fn reject_hands_the_message_back() {
    let t = topic::<CmdVel>("reject", Overflow::Reject, 4);
    let mut p = t.publisher().unwrap();
    let mut s = t.subscriber().unwrap();
    for i in 1..=4 {
        p.send(cmd(i)).unwrap();
    }
    let err = p.send(cmd(5)).unwrap_err();
    assert_eq!(err, SendError::Full(cmd(5)));
    assert_eq!(err.into_inner(), cmd(5));
    assert_eq!(p.stats().rejected, 1);
    assert_eq!(t.stats().refused(), 1);
    // Reading one makes room for one.
    assert_eq!(s.try_recv().unwrap().stamp_ns, 1);
    p.send(cmd(5)).unwrap();
    let got: Vec<u64> = std::iter::from_fn(|| s.try_recv().map(|m| m.stamp_ns)).collect();
    assert_eq!(got, vec![2, 3, 4, 5]);
    assert_eq!(s.stats().overrun, 0);
}

#[test]
fn block_times_out_then_proceeds_when_room_appears() {
    let timeout = Duration::from_millis(20);
    let t = topic::<CmdVel>("block", Overflow::Block { timeout }, 2);
    let mut p = t.publisher().unwrap();
    let mut s = t.subscriber().unwrap();
    p.send(cmd(1)).unwrap();
    p.send(cmd(2)).unwrap();
    assert_eq!(p.send(cmd(3)), Err(SendError::Timeout(cmd(3), timeout)));
    assert_eq!(p.stats().timed_out, 1);
    // A reader thread drains; a blocked send then completes without loss.
    let reader = std::thread::spawn(move || {
        let mut got = Vec::new();
        while got.len() < 200 {
            got.push(s.recv().stamp_ns);
        }
        (got, s.stats().overrun)
    });
    let timeout_long = Topic::<CmdVel>::builder("unused").namespace(&unique_ns("u"));
    drop(timeout_long);
    for i in 3..=200 {
        // Retry on timeout: the policy is Block with a short timeout here.
        let mut m = cmd(i);
        loop {
            match p.send(m) {
                Ok(_) => break,
                Err(e) => m = e.into_inner(),
            }
        }
    }
    let (got, overrun) = reader.join().unwrap();
    assert_eq!(got, (1..=200).collect::<Vec<_>>());
    assert_eq!(overrun, 0);
}

#[test]
fn cross_thread_blocking_recv_wakes_and_times_out() {
    let t = topic::<Imu>("wake", Overflow::DropOldest, 16);
    let mut s = t.subscriber().unwrap();
    s.set_spin(0);
    assert_eq!(
        s.recv_timeout(Duration::from_millis(10))
            .map(|m| m.stamp_ns),
        Err(RecvError::Timeout(Duration::from_millis(10)))
    );
    let t2 = t.clone();
    let sender = std::thread::spawn(move || {
        let mut p = t2.publisher().unwrap();
        std::thread::sleep(Duration::from_millis(20));
        let mut imu = Imu::zeroed_msg();
        imu.stamp_ns = 42;
        p.send(imu).unwrap();
    });
    assert_eq!(s.recv().stamp_ns, 42);
    sender.join().unwrap();
}

trait Zeroed {
    fn zeroed_msg() -> Self;
}
impl<T: Message> Zeroed for T {
    fn zeroed_msg() -> Self {
        bytemuck::Zeroable::zeroed()
    }
}

#[test]
fn latest_skips_and_counts() {
    let t = topic::<CmdVel>("latest", Overflow::DropOldest, 16);
    let mut p = t.publisher().unwrap();
    let mut s = t.subscriber().unwrap();
    assert!(s.latest().is_none());
    for i in 1..=6 {
        p.send(cmd(i)).unwrap();
    }
    assert_eq!(s.latest().unwrap().stamp_ns, 6);
    assert_eq!(s.stats().skipped, 5);
    assert_eq!(s.stats().overrun, 0);
    assert!(s.latest().is_none());
}

#[test]
fn second_subscriber_does_not_change_what_the_first_sees() {
    let t = topic::<CmdVel>("monitor", Overflow::Reject, 4);
    let mut p = t.publisher().unwrap();
    let mut a = t.subscriber().unwrap();
    p.send(cmd(1)).unwrap();
    let mut monitor = t.subscriber().unwrap();
    for i in 2..=4 {
        assert_eq!(p.send(cmd(i)).unwrap().subscribers, 2);
    }
    let got: Vec<u64> = std::iter::from_fn(|| a.try_recv().map(|m| m.stamp_ns)).collect();
    assert_eq!(got, vec![1, 2, 3, 4]);
    let seen: Vec<u64> = std::iter::from_fn(|| monitor.try_recv().map(|m| m.stamp_ns)).collect();
    assert_eq!(seen, vec![2, 3, 4]);
}

#[test]
fn many_to_many_across_threads_loses_nothing_under_block() {
    const N: u64 = 5_000;
    let t = Topic::<CmdVel>::builder("nm")
        .namespace(&unique_ns("nm"))
        .overflow(Overflow::Block {
            timeout: Duration::from_secs(30),
        })
        .depth(8)
        .open()
        .unwrap();
    let subs: Vec<_> = (0..3).map(|_| t.subscriber().unwrap()).collect();
    let mut pubs: Vec<_> = (0..3).map(|_| t.publisher().unwrap()).collect();
    let readers: Vec<_> = subs
        .into_iter()
        .map(|mut s| {
            std::thread::spawn(move || {
                let mut last = [0u64; 3];
                for _ in 0..3 * N {
                    let m = s.recv();
                    let who = m.linear as usize;
                    assert_eq!(
                        m.stamp_ns,
                        last[who] + 1,
                        "out of order from publisher {who}"
                    );
                    last[who] = m.stamp_ns;
                }
                (last, s.stats())
            })
        })
        .collect();
    let writers: Vec<_> = pubs
        .drain(..)
        .enumerate()
        .map(|(who, mut p)| {
            std::thread::spawn(move || {
                for i in 1..=N {
                    p.send(CmdVel::new(i, who as f32, 0.0)).unwrap();
                }
            })
        })
        .collect();
    for w in writers {
        w.join().unwrap();
    }
    for r in readers {
        let (last, stats) = r.join().unwrap();
        assert_eq!(last, [N; 3]);
        assert_eq!((stats.overrun, stats.malformed), (0, 0));
    }
}

#[test]
fn loan_slice_round_trips_a_point_cloud_zero_copy() {
    let t = topic::<PointCloud>("cloud", Overflow::DropOldest, 4);
    let mut p = t.publisher().unwrap();
    let mut s = t.subscriber().unwrap();
    let header = PointCloud::new(10_000, false);
    let mut sample = p.loan_slice(header.tail_len()).unwrap();
    *sample = header;
    for (i, b) in sample.tail_mut().iter_mut().enumerate() {
        *b = i as u8;
    }
    sample.send().unwrap();
    let got = s.recv();
    assert!(got.is_zero_copy());
    assert_eq!(got.num_points, 10_000);
    assert_eq!(got.tail().len(), header.tail_len());
    assert!(got.tail().iter().enumerate().all(|(i, &b)| b == i as u8));
    assert_eq!(got.points(got.tail()).unwrap().len(), 10_000);
}

#[test]
fn oversized_loan_is_a_typed_error() {
    let t = Topic::<PointCloud>::builder("big")
        .namespace(&unique_ns("big"))
        .max_tail_bytes(1024)
        .open()
        .unwrap();
    let mut p = t.publisher().unwrap();
    assert_eq!(
        p.loan_slice(1025).err(),
        Some(LoanError::TooLarge {
            requested: 1025,
            max: 1024
        })
    );
    assert!(p.loan_slice(1024).is_ok());
    assert_eq!(
        p.send_with_tail(&PointCloud::new(0, false), &[0; 1025]),
        Err(SendError::TooLarge((), 1024))
    );
    let t2 = topic::<CmdVel>("notail", Overflow::DropOldest, 4);
    assert_eq!(
        t2.publisher().unwrap().loan_slice(8).err(),
        Some(LoanError::NoTail)
    );
}

#[test]
fn held_samples_exhaust_the_pool_and_return_on_drop() {
    let t = Topic::<PointCloud>::builder("pool")
        .namespace(&unique_ns("pool"))
        .depth(2)
        .loan_pool(4)
        .max_tail_bytes(64)
        .open()
        .unwrap();
    let mut p = t.publisher().unwrap();
    let mut s = t.subscriber().unwrap();
    let mut held = Vec::new();
    for _ in 0..4 {
        p.send_with_tail(&PointCloud::new(1, false), &[0; 12])
            .unwrap();
        held.push(s.recv());
    }
    // 4 chunks: all pinned by the subscriber (two also by the ring).
    assert_eq!(p.loan().err(), Some(LoanError::PoolExhausted));
    assert_eq!(p.stats().pool_exhausted, 1);
    held.clear();
    // Abandoned loans give their chunk back too.
    for _ in 0..10 {
        drop(p.loan().unwrap());
    }
    assert!(p.loan().is_ok());
}

#[test]
fn inline_loan_is_sent_in_place() {
    let t = topic::<Imu>("imuloan", Overflow::DropOldest, 4);
    let mut p = t.publisher().unwrap();
    let mut s = t.subscriber().unwrap();
    let mut m = p.loan().unwrap();
    m.stamp_ns = 7;
    m.covariance[26] = 1.5;
    m.send().unwrap();
    let got = s.recv();
    assert_eq!((got.stamp_ns, got.covariance[26]), (7, 1.5));
    assert!(!got.is_zero_copy());
}

#[test]
fn schema_mismatch_names_both_types() {
    let ns = unique_ns("schema");
    let _a = Topic::<CmdVel>::builder("mix")
        .namespace(&ns)
        .open()
        .unwrap();
    let err = Topic::<Imu>::builder("mix")
        .namespace(&ns)
        .open()
        .err()
        .unwrap();
    match &err {
        TopicError::SchemaMismatch {
            expected, found, ..
        } => {
            assert!(expected.contains("horus/Imu"), "{err}");
            assert!(found.contains("horus/CmdVel"), "{err}");
        }
        other => panic!("expected SchemaMismatch, got {other:?}"),
    }
}

#[test]
fn explicit_qos_mismatch_is_an_error_and_defaults_adopt() {
    let ns = unique_ns("qos");
    let t = Topic::<CmdVel>::builder("q")
        .namespace(&ns)
        .overflow(Overflow::Reject)
        .depth(4)
        .open()
        .unwrap();
    let _keep = t.publisher().unwrap();
    let err = Topic::<CmdVel>::builder("q")
        .namespace(&ns)
        .depth(8)
        .open()
        .err()
        .unwrap();
    assert!(matches!(err, TopicError::QosMismatch { .. }), "{err:?}");
    // A tool that asks for nothing adopts the topic's policy.
    let adopted = Topic::<CmdVel>::builder("q").namespace(&ns).open().unwrap();
    assert_eq!(adopted.overflow(), Overflow::Reject);
}

#[test]
fn bad_topic_name_is_a_typed_error() {
    let err = Topic::<CmdVel>::builder("a b")
        .namespace(&unique_ns("name"))
        .open()
        .err()
        .unwrap();
    assert!(matches!(err, TopicError::Invalid { .. }), "{err:?}");
}

#[test]
fn last_participant_unlinks_the_segment() {
    let ns = unique_ns("unlink");
    let path = segment_path(&ns, "gone");
    let t = Topic::<CmdVel>::builder("gone")
        .namespace(&ns)
        .open()
        .unwrap();
    let p = t.publisher().unwrap();
    let s = t.subscriber().unwrap();
    assert!(std::path::Path::new(&path).exists());
    drop(p);
    assert!(std::path::Path::new(&path).exists());
    drop(s);
    assert!(!std::path::Path::new(&path).exists());
    // The handle still works: a new endpoint recreates the segment.
    let mut p = t.publisher().unwrap();
    let mut s = t.subscriber().unwrap();
    p.send(cmd(1)).unwrap();
    assert_eq!(s.try_recv().unwrap().stamp_ns, 1);
}

#[test]
fn too_many_endpoints_is_a_typed_error() {
    let t = Topic::<CmdVel>::builder("full")
        .namespace(&unique_ns("full"))
        .max_subscribers(2)
        .open()
        .unwrap();
    let _a = t.subscriber().unwrap();
    let _b = t.subscriber().unwrap();
    assert!(matches!(
        t.subscriber().err(),
        Some(TopicError::Full { .. })
    ));
}

/// Regression: a publisher that joined, sent and left between two polls of
/// a subscriber left the membership bits unchanged, and the subscriber never
/// looked at its ring (fixed by the epoch counter in the membership word).
#[test]
fn publisher_that_comes_and_goes_between_polls_is_not_missed() {
    let t = topic::<Imu>("aba", Overflow::DropOldest, 4);
    let mut s = t.subscriber_with(WaitMode::BusyPoll).unwrap();
    let _steady = t.publisher().unwrap();
    assert!(s.try_recv().is_none());
    let t2 = t.clone();
    std::thread::spawn(move || {
        let mut p = t2.publisher().unwrap();
        let mut m = Imu::zeroed_msg();
        m.stamp_ns = 9;
        p.send(m).unwrap();
    })
    .join()
    .unwrap();
    assert_eq!(s.try_recv().map(|m| m.stamp_ns), Some(9));
}

/// Regression: a topic handle that never made an endpoint left its segment
/// in /dev/shm for ever.
#[test]
fn handle_without_endpoints_leaves_no_segment() {
    let ns = unique_ns("handle");
    let path = segment_path(&ns, "idle");
    let t = Topic::<CmdVel>::builder("idle")
        .namespace(&ns)
        .open()
        .unwrap();
    assert!(std::path::Path::new(&path).exists());
    drop(t);
    assert!(!std::path::Path::new(&path).exists());
}
