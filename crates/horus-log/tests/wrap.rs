//! Records that wrap around the ring's end arrive whole: a small ring, records of many
//! sizes (the ring wraps hundreds of times), every printed record checked against what was
//! written.

use std::sync::{Arc, Mutex};

use horus_log::{Console, LogRecord, Val};

fn text(i: u32) -> String {
    let len = (i as usize * 37) % 700;
    (0..len)
        .map(|k| (b'a' + ((k + i as usize) % 26) as u8) as char)
        .collect()
}

#[test]
fn wrapped_records_arrive_whole() {
    let ns = format!("logtest-wrap-{}", std::process::id());
    let seen: Arc<Mutex<Vec<LogRecord>>> = Arc::default();
    let sink = Arc::clone(&seen);
    let guard = horus_log::Builder::new()
        .namespace(&ns)
        .ring_bytes(4096)
        .console(Console::Func(Box::new(move |r| {
            sink.lock().unwrap().push(r.clone())
        })))
        .init()
        .unwrap();
    let n = 500u32;
    for i in 0..n {
        horus_log::info!("{} {}", i, text(i).as_str(); tail = i.wrapping_mul(7));
        // Wait until the drain printed it: one record in the ring at a time, so none is
        // dropped and the ring wraps every ~10 records.
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
        while seen.lock().unwrap().len() as u32 <= i {
            assert!(
                std::time::Instant::now() < deadline,
                "record {i} never printed"
            );
            std::thread::sleep(std::time::Duration::from_micros(200));
        }
    }
    let dropped = horus_log::dropped();
    drop(guard);
    let seen = seen.lock().unwrap();
    assert!(!seen.is_empty());
    let mut last = None;
    for r in seen.iter() {
        let (i, rest) = r.message.split_once(' ').unwrap();
        let i: u32 = i.parse().unwrap();
        assert_eq!(rest, text(i), "record {i} corrupted");
        assert_eq!(
            r.fields,
            [("tail".to_owned(), Val::U64(u64::from(i.wrapping_mul(7))))]
        );
        assert!(last.is_none_or(|l| i > l), "out of order at {i}");
        last = Some(i);
    }
    assert_eq!(dropped, 0);
    assert_eq!(seen.len() as u64, u64::from(n));
}
