//! One process: the console sink sees every record of several writer threads, in each
//! thread's order; the `log` and `tracing` bridges arrive on the same path; the guard
//! removes the segment.

use std::sync::{Arc, Mutex};

use horus_log::{Console, Level, LogRecord, Val};

#[test]
fn threads_bridges_and_console() {
    let ns = format!("logtest-inproc-{}", std::process::id());
    let seen: Arc<Mutex<Vec<LogRecord>>> = Arc::default();
    let sink = Arc::clone(&seen);
    let guard = horus_log::Builder::new()
        .namespace(&ns)
        .level(Level::Debug)
        .ring_bytes(1 << 22)
        .console(Console::Func(Box::new(move |r| {
            sink.lock().unwrap().push(r.clone())
        })))
        .init()
        .unwrap();
    // Several writers at once: every record arrives whole, each thread's in order.
    let threads: Vec<_> = (0..4u32)
        .map(|t| {
            std::thread::spawn(move || {
                for i in 0..2000u32 {
                    horus_log::info!("t{} #{}", t, i; t = t, i = i);
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    horus_log::LogBridge::install().unwrap();
    log::warn!(target: "some_lib", "from log {}", 42);
    let subscriber = {
        use tracing_subscriber::layer::SubscriberExt;
        tracing_subscriber::registry().with(horus_log::TracingLayer)
    };
    tracing::subscriber::with_default(subscriber, || {
        tracing::error!(speed = 3, "from tracing");
    });
    let dropped = horus_log::dropped();
    drop(guard);
    let seen = seen.lock().unwrap();
    let mut next = [0u32; 4];
    let mut mine = 0;
    for r in seen.iter().filter(|r| r.message.starts_with('t')) {
        let (Val::U64(t), Val::U64(i)) = (&r.fields[0].1, &r.fields[1].1) else {
            panic!("{r:?}");
        };
        assert_eq!(r.message, format!("t{t} #{i}"));
        assert!(*i >= next[*t as usize] as u64, "thread {t} out of order");
        next[*t as usize] = *i as u32 + 1;
        mine += 1;
    }
    assert_eq!(
        mine + dropped,
        8000,
        "every record printed or counted as dropped"
    );
    let from_log = seen.iter().find(|r| r.message == "from log 42").unwrap();
    assert_eq!(
        (from_log.level, from_log.target.as_str()),
        (Level::Warn, "some_lib")
    );
    let from_tracing = seen.iter().find(|r| r.message == "from tracing").unwrap();
    assert_eq!(from_tracing.level, Level::Error);
    assert_eq!(
        from_tracing.fields,
        [("speed".to_owned(), Val::Str("3".into()))]
    );
    assert!(horus_log::segments(&ns).unwrap().is_empty());
}
