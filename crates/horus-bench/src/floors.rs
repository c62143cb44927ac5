//! Reference round trips, measured with the same loop as the transports.
//!
//! All four are two threads in one process (A measures, B echoes), pinned to the
//! pass's two CPUs when pinned, timed by the same [`measure_round_trips`] loop as
//! the transports. Only the first is a lower bound; the other three are
//! *references* (rows `ref:copy`, `ref:touch`, `ref:wake`), not floors: they reuse
//! two buffers in one process, and a transport can and does beat them in some runs
//! (horus and the Unix socket have come in below `ref:wake`, horus below `ref:touch`
//! at 64–256 KiB and below `ref:copy` at 1 MiB).
//!
//! * [`cacheline`] — row `floor:cacheline`: one 64-byte line handed back and forth:
//!   A stores `2s+1`, B spins until it sees it and stores `2s+2`, A spins until it
//!   sees that. Two cache-line transfers per round trip, which any cross-core round
//!   trip needs at least: the hardware floor.
//! * [`copy`] — row `ref:copy`: the same handoff plus three `memcpy`s of the payload
//!   (A's local buffer → shared 1, shared 1 → shared 2 by B, shared 2 → A's local
//!   buffer): what a copying transport does, reduced to `memcpy`.
//! * [`touch`] — row `ref:touch`: the same handoff plus writing and reading the
//!   payload in place with [`crate::payload`] (A writes shared 1, B reads it and
//!   writes shared 2, A reads shared 2): what a zero-copy transport's user does.
//! * [`wake`] — row `ref:wake`: no spinning: each side sleeps in `FUTEX_WAIT` on its
//!   own word and the other bumps the word and calls `FUTEX_WAKE` (non-private ops,
//!   i.e. the cross-process flavour): a blocking wake-up in each direction.
//!
//! The shared buffers are page-aligned heap memory owned by A's stack frame; the
//! handoff counter serialises access, so at any moment exactly one side owns each.

use crate::harness::{measure_round_trips, spin_until, Config};
use crate::payload;
use crate::stats::Summary;
use anyhow::bail;
use std::alloc::{alloc_zeroed, dealloc, Layout};
use std::ptr::NonNull;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};

/// Keeps each shared word on its own pair of cache lines (the adjacent-line
/// prefetcher pulls lines in pairs on x86), so unrelated words never share a line.
#[repr(align(128))]
#[derive(Debug, Default)]
struct Padded<T>(T);

/// The one-line handoff all spinning references use.
///
/// `turn` is the only shared state touched in the fast path. Round `s` is: A stores
/// `2s+1` (Release: publishes A's payload writes), B observes it (Acquire: sees
/// them), B stores `2s+2` (Release: publishes B's writes and releases shared buffer
/// 1 back to A), A observes it (Acquire). `abort` is read only every 65 k spins.
#[derive(Debug, Default)]
struct Handoff {
    turn: Padded<AtomicU64>,
    abort: Padded<AtomicBool>,
}

impl Handoff {
    fn a_send(&self, seq: u64) {
        self.turn.0.store(2 * seq + 1, Ordering::Release);
    }
    fn a_wait(&self, seq: u64) -> anyhow::Result<()> {
        self.wait_for(2 * seq + 2)
    }
    fn b_wait(&self, seq: u64) -> anyhow::Result<()> {
        self.wait_for(2 * seq + 1)
    }
    fn b_send(&self, seq: u64) {
        self.turn.0.store(2 * seq + 2, Ordering::Release);
    }
    fn wait_for(&self, value: u64) -> anyhow::Result<()> {
        spin_until(
            || Ok((self.turn.0.load(Ordering::Acquire) == value).then_some(())),
            || self.check_abort(),
        )
    }
    fn check_abort(&self) -> anyhow::Result<()> {
        if self.abort.0.load(Ordering::Relaxed) {
            bail!("the other side of the reference failed");
        }
        Ok(())
    }
}

/// Page-aligned, zero-initialised buffer shared by the two threads of a reference.
#[derive(Debug)]
struct SharedBuf {
    ptr: NonNull<u8>,
    layout: Layout,
}

// SAFETY: the buffer is plain bytes; all access goes through `bytes`/`bytes_mut`,
// whose callers guarantee (via the handoff protocol) that no two threads access it
// at the same time with at least one writing.
unsafe impl Sync for SharedBuf {}
// SAFETY: as above; ownership of the allocation may move between threads.
unsafe impl Send for SharedBuf {}

impl SharedBuf {
    fn new(len: usize) -> Self {
        let layout = Layout::from_size_align(len.max(1), 4096).expect("valid buffer layout");
        // SAFETY: `layout` has a non-zero size.
        let raw = unsafe { alloc_zeroed(layout) };
        let ptr = NonNull::new(raw).unwrap_or_else(|| std::alloc::handle_alloc_error(layout));
        Self { ptr, layout }
    }

    /// # Safety
    /// The caller must own the buffer in the current handoff phase: no other thread
    /// may write it until this borrow ends.
    unsafe fn bytes(&self) -> &[u8] {
        // SAFETY: `ptr` is a live allocation of `layout.size()` initialised bytes;
        // the caller guarantees no concurrent writer.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.layout.size()) }
    }

    /// # Safety
    /// The caller must own the buffer exclusively in the current handoff phase: no
    /// other thread may read or write it until this borrow ends.
    #[allow(clippy::mut_from_ref)] // exclusivity is the caller's obligation, see above
    unsafe fn bytes_mut(&self) -> &mut [u8] {
        // SAFETY: `ptr` is a live allocation of `layout.size()` initialised bytes;
        // the caller guarantees exclusive access for the borrow's lifetime.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.layout.size()) }
    }
}

impl Drop for SharedBuf {
    fn drop(&mut self) {
        // SAFETY: `ptr` was returned by `alloc_zeroed(self.layout)` and is freed once.
        unsafe { dealloc(self.ptr.as_ptr(), self.layout) };
    }
}

/// Runs B's `rounds` echoes on one thread and A's measured loop on another.
fn run_pair<A, B>(
    cfg: &Config,
    cpus: Option<[usize; 2]>,
    abort: &AtomicBool,
    a_round: A,
    mut b_round: B,
) -> anyhow::Result<Summary>
where
    A: FnMut(u64) -> anyhow::Result<()> + Send,
    B: FnMut(u64) -> anyhow::Result<()> + Send,
{
    let fail = |e: anyhow::Error| {
        abort.store(true, Ordering::Relaxed);
        e
    };
    let pin = |cpu: Option<usize>| -> anyhow::Result<()> {
        if let Some(cpu) = cpu {
            crate::affinity::pin_current_thread(cpu)
                .map_err(|e| anyhow::anyhow!("pinning thread to CPU {cpu}: {e}"))?;
        }
        Ok(())
    };
    std::thread::scope(|scope| {
        let b = scope.spawn(|| {
            pin(cpus.map(|c| c[1]))
                .and_then(|()| (0..cfg.rounds()).try_for_each(&mut b_round))
                .map_err(fail)
        });
        let a = scope.spawn(|| {
            pin(cpus.map(|c| c[0]))
                .and_then(|()| measure_round_trips(cfg, a_round))
                .map_err(fail)
        });
        let a = a.join().unwrap_or_else(|p| std::panic::resume_unwind(p));
        let b = b.join().unwrap_or_else(|p| std::panic::resume_unwind(p));
        b?;
        a
    })
}

/// Cache-line ping-pong: the hardware floor of a core-to-core round trip.
pub fn cacheline(cfg: &Config, cpus: Option<[usize; 2]>) -> anyhow::Result<Summary> {
    let h = Handoff::default();
    let a = |seq| {
        h.a_send(seq);
        h.a_wait(seq)
    };
    let b = |seq| {
        h.b_wait(seq)?;
        h.b_send(seq);
        Ok(())
    };
    run_pair(cfg, cpus, &h.abort.0, a, b)
}

/// Handoff plus three `memcpy`s of `size` bytes, with the application work of a
/// copying transport row (A writes its message and reads the reply in its own buffers):
/// the `ref:copy` reference (not a lower bound).
pub fn copy(cfg: &Config, size: usize, cpus: Option<[usize; 2]>) -> anyhow::Result<Summary> {
    let h = Handoff::default();
    let (ping, pong) = (SharedBuf::new(size), SharedBuf::new(size));
    let touch = cfg.touch;
    let mut src = vec![0u8; size];
    let mut dst = vec![0u8; size];
    // The same application work as a copying transport's row: A writes the
    // message in its own buffer and reads the reply from its own buffer;
    // the three copies in between are the only transport cost.
    let a = |seq| {
        payload::write(&mut src, seq, touch);
        // SAFETY: A owns `ping` between B's `2s` (or the start) and A's `2s+1`.
        unsafe { ping.bytes_mut() }.copy_from_slice(&src);
        h.a_send(seq);
        h.a_wait(seq)?;
        // SAFETY: A owns `pong` after observing B's `2s+2` until its next send.
        dst.copy_from_slice(unsafe { pong.bytes() });
        payload::check(&dst, seq, touch)
    };
    let b = |seq| {
        h.b_wait(seq)?;
        // SAFETY: after observing `2s+1`, B owns both buffers until it stores `2s+2`.
        unsafe { pong.bytes_mut().copy_from_slice(ping.bytes()) };
        h.b_send(seq);
        Ok(())
    };
    run_pair(cfg, cpus, &h.abort.0, a, b)
}

/// Handoff plus writing and reading `size` bytes in place (per `cfg.touch`): the
/// `ref:touch` reference for a zero-copy transport whose user produces and consumes
/// the message (not a lower bound).
pub fn touch(cfg: &Config, size: usize, cpus: Option<[usize; 2]>) -> anyhow::Result<Summary> {
    let h = Handoff::default();
    let (ping, pong) = (SharedBuf::new(size), SharedBuf::new(size));
    let touch = cfg.touch;
    let a = |seq| {
        // SAFETY: A owns `ping` between B's `2s` (or the start) and A's `2s+1`.
        payload::write(unsafe { ping.bytes_mut() }, seq, touch);
        h.a_send(seq);
        h.a_wait(seq)?;
        // SAFETY: A owns `pong` after observing B's `2s+2` until its next send.
        payload::check(unsafe { pong.bytes() }, seq, touch)
    };
    let b = |seq| {
        h.b_wait(seq)?;
        // SAFETY: after observing `2s+1`, B owns both buffers until it stores `2s+2`.
        let got = payload::read(unsafe { ping.bytes() }, touch)?;
        // SAFETY: as above.
        payload::write(unsafe { pong.bytes_mut() }, got, touch);
        h.b_send(seq);
        Ok(())
    };
    run_pair(cfg, cpus, &h.abort.0, a, b)
}

/// Futex ping-pong: each side blocks in `FUTEX_WAIT`; the `ref:wake` reference for a
/// blocking wake-up (not a lower bound).
pub fn wake(cfg: &Config, cpus: Option<[usize; 2]>) -> anyhow::Result<Summary> {
    let a_word = Padded(AtomicU32::new(0));
    let b_word = Padded(AtomicU32::new(0));
    let h = Handoff::default();
    // Round `s` publishes the value `s + 1` (wrapping) in the peer's word.
    let a = |seq: u64| {
        let v = (seq as u32).wrapping_add(1);
        b_word.0.store(v, Ordering::Release);
        futex::wake(&b_word.0);
        futex::wait_until(&a_word.0, v, || h.check_abort())
    };
    let b = |seq: u64| {
        let v = (seq as u32).wrapping_add(1);
        futex::wait_until(&b_word.0, v, || h.check_abort())?;
        a_word.0.store(v, Ordering::Release);
        futex::wake(&a_word.0);
        Ok(())
    };
    run_pair(cfg, cpus, &h.abort.0, a, b)
}

/// Raw futex calls (not the `_PRIVATE` variants: those skip the cross-process hash).
mod futex {
    use crate::harness::STALL_TIMEOUT;
    use std::sync::atomic::{AtomicU32, Ordering};
    use std::time::Instant;

    /// Sleeps until `word == value`, re-checking `alive` at least every 100 ms.
    pub(super) fn wait_until(
        word: &AtomicU32,
        value: u32,
        mut alive: impl FnMut() -> anyhow::Result<()>,
    ) -> anyhow::Result<()> {
        let timeout = libc::timespec {
            tv_sec: 0,
            tv_nsec: 100_000_000,
        };
        let mut started: Option<Instant> = None;
        loop {
            let current = word.load(Ordering::Acquire);
            if current == value {
                return Ok(());
            }
            // SAFETY: `word` is a live, aligned u32 for the duration of the call and
            // `timeout` a valid relative timespec; FUTEX_WAIT only reads them. It
            // returns at once (EAGAIN) if the word no longer holds `current`.
            let rc = unsafe {
                libc::syscall(
                    libc::SYS_futex,
                    word.as_ptr(),
                    libc::FUTEX_WAIT,
                    current,
                    &timeout as *const libc::timespec,
                )
            };
            if rc != 0 {
                // ETIMEDOUT / EINTR / EAGAIN: check the peer, then re-check the word.
                alive()?;
                let started = *started.get_or_insert_with(Instant::now);
                anyhow::ensure!(
                    started.elapsed() < STALL_TIMEOUT,
                    "futex peer silent for {STALL_TIMEOUT:?}"
                );
            }
        }
    }

    /// Wakes one waiter on `word` (always issued, as a transport without a waiter
    /// count would).
    pub(super) fn wake(word: &AtomicU32) {
        // SAFETY: `word` is a live, aligned u32; FUTEX_WAKE only uses its address.
        unsafe {
            libc::syscall(libc::SYS_futex, word.as_ptr(), libc::FUTEX_WAKE, 1);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::payload::Touch;

    fn cfg(touch: Touch) -> Config {
        Config {
            warmup: 10,
            iterations: 50,
            touch,
            one_way_messages: 10,
            cpus: [0, 1],
        }
    }

    #[test]
    fn every_reference_completes_unpinned() {
        let c = cfg(Touch::Full);
        assert_eq!(cacheline(&c, None).unwrap().iterations, 50);
        assert_eq!(copy(&c, 4096, None).unwrap().iterations, 50);
        assert_eq!(touch(&c, 304, None).unwrap().iterations, 50);
        assert_eq!(touch(&cfg(Touch::Ends), 304, None).unwrap().iterations, 50);
        assert_eq!(wake(&c, None).unwrap().iterations, 50);
    }
}
