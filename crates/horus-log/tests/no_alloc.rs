//! The calling thread never allocates in a log macro (after the first call of each call
//! site and thread, which may create the logger and register the site): checked with a
//! counting global allocator that counts this thread's allocations only (the drain thread
//! formats, and allocates, on its own).

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

struct Counting;

thread_local! {
    static COUNT_HERE: Cell<bool> = const { Cell::new(false) };
    static ALLOCS: Cell<u64> = const { Cell::new(0) };
}

fn note() {
    // try_with: the allocator may run while thread-locals are being torn down.
    let _ = COUNT_HERE.try_with(|c| {
        if c.get() {
            let _ = ALLOCS.try_with(|a| a.set(a.get() + 1));
        }
    });
}

// SAFETY: forwards every call to the system allocator unchanged; only counts.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        note();
        // SAFETY: same contract as ours.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: same contract as ours.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        note();
        // SAFETY: same contract as ours.
        unsafe { System.alloc_zeroed(layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        note();
        // SAFETY: same contract as ours.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static A: Counting = Counting;

fn log_all_kinds(i: u64, text: &str) {
    horus_log::info!("step {} of {} at {:.3}", i, 10_000u32, 0.25f64 * i as f64; node = "ctl", ok = true);
    horus_log::warn!(target: "motor", "current {} A, {}", 1.5f32, 'x'; id = -7i16);
    horus_log::error!("{}", text);
    horus_log::info!(
        "{}",
        horus_log::display(&std::net::Ipv4Addr::new(10, 0, 0, i as u8))
    );
    horus_log::debug!("below the level: filtered out {}", i);
}

#[test]
fn log_calls_do_not_allocate_on_the_calling_thread() {
    let ns = format!("logtest-alloc-{}", std::process::id());
    let guard = horus_log::Builder::new()
        .namespace(&ns)
        .ring_bytes(1 << 22)
        .console(horus_log::Console::Off)
        .init()
        .unwrap();
    let text = "x".repeat(4096);
    // Warm-up: registers the call sites and caches the thread id.
    log_all_kinds(0, &text);
    COUNT_HERE.with(|c| c.set(true));
    // The counter works: an allocation here is seen.
    drop(std::hint::black_box(vec![1u8; 16]));
    assert_eq!(ALLOCS.with(Cell::get), 1);
    ALLOCS.with(|a| a.set(0));
    for i in 1..=10_000u64 {
        log_all_kinds(i, &text);
    }
    COUNT_HERE.with(|c| c.set(false));
    assert_eq!(
        ALLOCS.with(Cell::get),
        0,
        "allocations on the calling thread"
    );
    // The records were written (or counted as dropped), not silently skipped.
    let name = horus_log::segment_name().unwrap();
    let seg = horus_log::LogSegment::open(&name).unwrap();
    assert!(seg.counters().head > 0);
    drop(seg);
    drop(guard);
    assert!(horus_log::segments(&ns).unwrap().is_empty());
}
