//! The conformance suite every [`WaitStrategy`] passes: one generic test
//! function per behaviour, instantiated per strategy by `conformance!`.

use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::{Futex, Spin, WaitStrategy, Waitable, Yield};
use crate::sync::{fence, AtomicU32, Ordering};

/// A flag another thread sets, with the futex handshake of `crate::room`.
#[derive(Default)]
struct Shared {
    ready: AtomicBool,
    word: AtomicU32,
    announced: AtomicU32,
}

impl Shared {
    /// The waker's side: make ready, fence, wake if anyone announced.
    fn set(&self) {
        self.ready.store(true, Ordering::Relaxed);
        fence(Ordering::SeqCst);
        if self.announced.load(Ordering::Relaxed) != 0 {
            self.word.fetch_add(1, Ordering::Release);
            crate::futex::wake_all(&self.word);
        }
    }
}

struct Flag {
    shared: Arc<Shared>,
    /// Set the flag on the first tick (a liveness check that finds room).
    ready_on_tick: bool,
    ticks: u32,
}

impl Flag {
    fn new(shared: &Arc<Shared>) -> Flag {
        Flag {
            shared: Arc::clone(shared),
            ready_on_tick: false,
            ticks: 0,
        }
    }
}

impl Waitable for Flag {
    type Ready = ();
    fn poll(&mut self) -> Option<()> {
        self.shared.ready.load(Ordering::Relaxed).then_some(())
    }
    fn word(&self) -> &AtomicU32 {
        &self.shared.word
    }
    fn announce(&self) {
        self.shared.announced.fetch_add(1, Ordering::Relaxed);
        fence(Ordering::SeqCst);
    }
    fn withdraw(&self) {
        self.shared.announced.fetch_sub(1, Ordering::Relaxed);
    }
    fn tick_every(&self) -> Option<Duration> {
        self.ready_on_tick.then_some(Duration::from_millis(5))
    }
    fn tick(&mut self) {
        self.ticks += 1;
        if self.ready_on_tick {
            self.shared.ready.store(true, Ordering::Relaxed);
        }
    }
}

fn ready_at_once_is_returned<S: WaitStrategy>(s: S) {
    let shared = Arc::new(Shared::default());
    shared.set();
    assert_eq!(s.wait(&mut Flag::new(&shared), None), Some(()));
    assert_eq!(shared.announced.load(Ordering::Relaxed), 0);
}

fn never_ready_gives_up_at_the_deadline<S: WaitStrategy>(s: S) {
    let shared = Arc::new(Shared::default());
    let deadline = Instant::now() + Duration::from_millis(30);
    assert_eq!(s.wait(&mut Flag::new(&shared), Some(deadline)), None);
    assert!(Instant::now() >= deadline, "gave up before the deadline");
    assert_eq!(shared.announced.load(Ordering::Relaxed), 0, "withdrawn");
}

fn made_ready_by_another_thread_is_seen<S: WaitStrategy>(s: S) {
    for _ in 0..50 {
        let shared = Arc::new(Shared::default());
        let setter = {
            let shared = Arc::clone(&shared);
            std::thread::spawn(move || {
                std::thread::sleep(Duration::from_micros(200));
                shared.set();
            })
        };
        // A generous deadline: a lost wake-up shows as None, not a hang.
        let deadline = Instant::now() + Duration::from_secs(20);
        assert_eq!(s.wait(&mut Flag::new(&shared), Some(deadline)), Some(()));
        setter.join().unwrap();
        assert_eq!(shared.announced.load(Ordering::Relaxed), 0);
    }
}

fn a_tick_that_makes_it_ready_ends_the_wait<S: WaitStrategy>(s: S) {
    let shared = Arc::new(Shared::default());
    let mut flag = Flag::new(&shared);
    flag.ready_on_tick = true;
    let deadline = Instant::now() + Duration::from_secs(20);
    assert_eq!(s.wait(&mut flag, Some(deadline)), Some(()));
    assert!(flag.ticks >= 1);
}

macro_rules! conformance {
    ($($strategy:ident => $make:expr),* $(,)?) => {$(
        mod $strategy {
            use super::*;
            #[test]
            fn ready_at_once_is_returned() {
                super::ready_at_once_is_returned($make)
            }
            #[test]
            fn never_ready_gives_up_at_the_deadline() {
                super::never_ready_gives_up_at_the_deadline($make)
            }
            #[test]
            fn made_ready_by_another_thread_is_seen() {
                super::made_ready_by_another_thread_is_seen($make)
            }
            #[test]
            fn a_tick_that_makes_it_ready_ends_the_wait() {
                super::a_tick_that_makes_it_ready_ends_the_wait($make)
            }
        }
    )*};
}

conformance! {
    spin => Spin { polls: u32::MAX },
    yielding => Yield { polls: u32::MAX },
    futex => Futex,
}

/// A bounded spin or yield gives up after its polls, deadline or not.
#[test]
fn bounded_spin_and_yield_give_up_after_their_polls() {
    let shared = Arc::new(Shared::default());
    assert_eq!(
        Spin { polls: 1000 }.wait(&mut Flag::new(&shared), None),
        None
    );
    assert_eq!(
        Yield { polls: 10 }.wait(&mut Flag::new(&shared), None),
        None
    );
}
