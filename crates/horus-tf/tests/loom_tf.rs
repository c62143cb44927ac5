//! Loom models of the tf buffer's lock-free protocols (`src/seqlock.rs`,
//! `src/lease.rs`): a reader never accepts a torn sample, also not one a
//! killed writer left half-written and the next writer repairs; the writer
//! lease admits one writer at a time and a dead holder's lease is taken over
//! by exactly one survivor.
//!
//! Run: `RUSTFLAGS="--cfg loom" cargo test -p horus-tf --test loom_tf --release`
#![cfg(loom)]

use horus_tf::model::{
    give_back, read, read_first, try_take, write, Attempt, Read, DATA_WORDS, SLOT_WORDS,
};
use loom::cell::UnsafeCell;
use loom::sync::atomic::{fence, AtomicU64, AtomicUsize, Ordering};
use loom::sync::Arc;

fn slot() -> [AtomicU64; SLOT_WORDS] {
    std::array::from_fn(|_| AtomicU64::new(0))
}

fn model(f: impl Fn() + Sync + Send + 'static) {
    let mut b = loom::model::Builder::new();
    b.preemption_bound = Some(3);
    b.check(f);
}

#[test]
fn a_reader_never_accepts_a_torn_sample() {
    model(|| {
        let s = Arc::new(slot());
        let w = {
            let s = Arc::clone(&s);
            loom::thread::spawn(move || {
                write(&s, 0, &[1; DATA_WORDS]);
                write(&s, 1, &[2; DATA_WORDS]);
            })
        };
        for lap in [0u64, 1] {
            if let Some(first) = read_first(&s, lap) {
                assert_eq!(first, lap + 1, "torn stamp of lap {lap}");
            }
            match read(&s, lap) {
                Read::Sample(d) => assert_eq!(d, [lap + 1; DATA_WORDS], "torn read of lap {lap}"),
                Read::Gone { .. } => {}
            }
        }
        w.join().unwrap();
        assert_eq!(read(&s, 1), Read::Sample([2; DATA_WORDS]));
        assert!(
            matches!(read(&s, 0), Read::Gone { .. }),
            "lap 0 was overwritten"
        );
    });
}

#[test]
fn a_sample_left_torn_by_a_killed_writer_is_never_read_and_is_repaired() {
    model(|| {
        let s = Arc::new(slot());
        // The killed writer: the first steps of `write` for lap 0 (odd sequence,
        // Release fence, some data), then nothing ever again.
        {
            let s = Arc::clone(&s);
            loom::thread::spawn(move || {
                s[0].store(1, Ordering::Relaxed);
                fence(Ordering::Release);
                s[1].store(99, Ordering::Relaxed);
                s[2].store(99, Ordering::Relaxed);
            })
            .join()
            .unwrap();
        }
        assert!(matches!(read(&s, 0), Read::Gone { seq: 1 }));
        // The next writer writes the same position again while a reader looks.
        let w = {
            let s = Arc::clone(&s);
            loom::thread::spawn(move || write(&s, 0, &[5; DATA_WORDS]))
        };
        match read(&s, 0) {
            Read::Sample(d) => assert_eq!(d, [5; DATA_WORDS], "torn or stale read"),
            Read::Gone { .. } => {}
        }
        w.join().unwrap();
        assert_eq!(read(&s, 0), Read::Sample([5; DATA_WORDS]));
    });
}

#[test]
fn the_lease_admits_one_writer_and_one_survivor_takes_a_dead_holders_lease() {
    const DEAD: u64 = 7;
    model(|| {
        let lease = Arc::new(AtomicU64::new(DEAD));
        let inside = Arc::new(UnsafeCell::new(0u32));
        let takeovers = Arc::new(AtomicUsize::new(0));
        let writers: Vec<_> = [1u64, 2]
            .into_iter()
            .map(|me| {
                let (lease, inside, takeovers) = (
                    Arc::clone(&lease),
                    Arc::clone(&inside),
                    Arc::clone(&takeovers),
                );
                loom::thread::spawn(move || {
                    loop {
                        match try_take(&lease, me, |t| t != DEAD) {
                            Attempt::Taken => break,
                            Attempt::TookOver(from) => {
                                assert_eq!(from, DEAD);
                                takeovers.fetch_add(1, Ordering::Relaxed);
                                break;
                            }
                            Attempt::Held(_) => loom::thread::yield_now(),
                        }
                    }
                    // Loom reports a data race here if two writers are inside at once.
                    // SAFETY: the pointer is the UnsafeCell's own, valid for the model's
                    // life; exclusive access is what the lease claims and loom checks.
                    inside.with_mut(|n| unsafe { *n += 1 });
                    assert!(give_back(&lease, me));
                })
            })
            .collect();
        for w in writers {
            w.join().unwrap();
        }
        assert_eq!(takeovers.load(Ordering::Relaxed), 1);
        assert_eq!(lease.load(Ordering::Relaxed), 0);
        // SAFETY: every writer thread has been joined; nothing else touches the cell.
        inside.with(|n| assert_eq!(unsafe { *n }, 2));
    });
}

#[test]
fn a_live_holders_lease_is_never_taken() {
    model(|| {
        let lease = Arc::new(AtomicU64::new(0));
        let holder = {
            let lease = Arc::clone(&lease);
            loom::thread::spawn(move || {
                if try_take(&lease, 1, |_| true) == Attempt::Taken {
                    assert!(give_back(&lease, 1));
                }
            })
        };
        match try_take(&lease, 2, |_| true) {
            Attempt::Taken => assert!(give_back(&lease, 2)),
            Attempt::Held(h) => assert_eq!(h, 1),
            Attempt::TookOver(_) => panic!("took a live holder's lease"),
        }
        holder.join().unwrap();
    });
}
