//! The calling thread takes no page fault on the ring: the logger maps its whole segment
//! when it creates it. Before, every page of the ring and of its stamps faulted on the
//! first record written into it (one ~3 µs fault per ~50 records of 64 bytes during the
//! ring's first lap; docs/logging.md, "What a call costs").

fn thread_minor_faults() -> i64 {
    // SAFETY: a zeroed rusage is a valid out-parameter.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: RUSAGE_THREAD with a valid out-pointer.
    let rc = unsafe { libc::getrusage(libc::RUSAGE_THREAD, &mut ru) };
    assert_eq!(rc, 0);
    ru.ru_minflt
}

#[test]
fn first_lap_of_a_fresh_ring_takes_no_page_faults() {
    let ns = format!("logtest-faults-{}", std::process::id());
    const RING: usize = 1 << 20;
    let guard = horus_log::Builder::new()
        .namespace(&ns)
        .ring_bytes(RING)
        .console(horus_log::Console::Off)
        .init()
        .unwrap();
    let msg = "m".repeat(32);
    // Warm-up: registers the call site, caches the thread id, touches this stack.
    horus_log::info!("{}", msg.as_str());
    let before = thread_minor_faults();
    // 61-byte records take 2 cells (64 bytes): this covers the ring's first lap, 256 pages
    // of cells and 64 of stamps, minus the warm-up's record.
    let records = RING / 64 - 1;
    for _ in 0..records {
        horus_log::info!("{}", msg.as_str());
    }
    let faults = thread_minor_faults() - before;
    assert_eq!(
        faults, 0,
        "page faults on the calling thread during the first lap"
    );
    // The records were written or counted, not skipped.
    let name = horus_log::segment_name().unwrap();
    let seg = horus_log::LogSegment::open(&name).unwrap();
    assert!(seg.counters().head >= 2 * records as u64 || horus_log::dropped() > 0);
    drop(seg);
    drop(guard);
    assert!(horus_log::segments(&ns).unwrap().is_empty());
}
