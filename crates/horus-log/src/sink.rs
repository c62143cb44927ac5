//! The drain thread: consumes this process's ring, formats each record and prints it
//! (stderr by default). It is the ring's only consumer; it runs even with the console
//! off, so that the ring keeps room and holds the latest records for `horus log`.

use std::fmt;
use std::io::Write;
use std::sync::atomic::AtomicBool;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::abandon::AbandonWatch;
use crate::record::{self, ClockParams, LogRecord, Sites};
use crate::ring;
use crate::view::{Step, View};

/// How long the drain sleeps when the ring is empty.
const IDLE: Duration = Duration::from_millis(2);
/// Records handled per batch before `tail` is given back.
const BATCH: usize = 256;

/// What one pass of the drain did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Progress {
    /// Nothing to consume.
    Empty,
    /// Consumed records up to one not committed yet: caught up with the writers.
    CaughtUp,
    /// Consumed a full batch: more may be waiting.
    More,
}

/// Where the drain thread prints records.
pub enum Console {
    /// Human lines on stderr (the default).
    Stderr,
    /// Nowhere: records stay in the ring for `horus log` (and are counted as consumed).
    Off,
    /// Human lines into this writer.
    Writer(Box<dyn Write + Send>),
    /// Each record to this function (e.g. tests, or another sink).
    Func(Box<dyn FnMut(&LogRecord) + Send>),
}

impl fmt::Debug for Console {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Console::Stderr => "Stderr",
            Console::Off => "Off",
            Console::Writer(_) => "Writer(..)",
            Console::Func(_) => "Func(..)",
        })
    }
}

pub(crate) struct Drain {
    view: View,
    console: Console,
    sites: Sites,
    process: String,
    pid: u32,
    abandon: AbandonWatch,
}

impl Drain {
    pub(crate) fn new(view: View, console: Console, process: String, pid: u32) -> Drain {
        Drain {
            view,
            console,
            sites: Sites::default(),
            process,
            pid,
            abandon: AbandonWatch::default(),
        }
    }

    fn clock(&self) -> ClockParams {
        let h = self.view.header();
        ClockParams {
            base: h.clock_base,
            unix_base: h.unix_base_ns,
            // Relaxed: an f64 parameter written only by this thread.
            period: f64::from_bits(h.ns_per_tick.load(Ordering::Relaxed)),
        }
    }

    /// Runs until `stop` is set and the ring is empty.
    ///
    /// It sleeps whenever it has caught up with the writers, also after a batch that
    /// consumed records: a drain that kept polling right behind a writer would read each
    /// stamp and record cache line just after the writer wrote it, and the writer would
    /// take a cache miss to get each line back (docs/logging.md, "What a call costs").
    /// Sleeping [`IDLE`] costs nothing in loss: the ring holds what arrives meanwhile as it
    /// does while the drain waits on an empty ring.
    pub(crate) fn run(mut self, stop: Arc<AtomicBool>) {
        let (mut idle_rounds, mut busy_rounds) = (0u32, 0u32);
        loop {
            // Acquire: pairs with the Release in `stop_drain`; records written before the
            // stop was asked are then visible to this last round.
            let stop = stop.load(Ordering::Acquire);
            let progress = self.drain_once();
            if progress != Progress::Empty {
                // Busy: refine the clock now and then all the same.
                busy_rounds = busy_rounds.wrapping_add(1);
                if busy_rounds % 4096 == 0 {
                    self.refine_clock();
                }
                idle_rounds = 0;
                if progress == Progress::More {
                    continue;
                }
            } else {
                idle_rounds = idle_rounds.wrapping_add(1);
                if idle_rounds % 500 == 1 {
                    self.refine_clock();
                }
            }
            if stop {
                break;
            }
            std::thread::sleep(IDLE);
        }
        self.flush();
    }

    fn refine_clock(&self) {
        let h = self.view.header();
        if let Some(p) = crate::clock::period_since(h.clock_base, h.unix_base_ns) {
            // Relaxed: readers take whichever period they see; both are close.
            h.ns_per_tick.store(p.to_bits(), Ordering::Relaxed);
        }
    }

    /// Handles up to a batch of records.
    fn drain_once(&mut self) -> Progress {
        let view = self.view;
        let h = view.header();
        // Relaxed: this thread is the only one that stores `tail`.
        let start = h.tail.load(Ordering::Relaxed);
        let mut pos = start;
        let clock = self.clock();
        let mut unreadable = 0u64;
        let mut progress = Progress::More;
        for _ in 0..BATCH {
            match view.step(pos) {
                Step::Record { bytes, cells } => {
                    let mut refused = 0;
                    let rec = record::decode(
                        &view,
                        &mut self.sites,
                        clock,
                        &bytes,
                        pos,
                        (self.pid, &self.process),
                        &mut refused,
                    );
                    match rec {
                        Ok(rec) => {
                            unreadable += u64::from(refused > 0);
                            self.print(&rec);
                        }
                        Err(_) => unreadable += 1,
                    }
                    pos = pos.saturating_add(cells);
                }
                Step::Uncommitted => {
                    progress = Progress::CaughtUp;
                    if pos != start {
                        break;
                    }
                    // Acquire: the stamps of reservations up to `head` are read next.
                    let head = h.head.load(Ordering::Acquire);
                    if head <= pos {
                        break;
                    }
                    // Stuck at a reservation: skipped once deemed abandoned (abandon.rs).
                    match self.abandon.stuck(&view, pos, head, Instant::now()) {
                        Some(to) => {
                            // Relaxed: a statistic.
                            h.abandoned.fetch_add(to - pos, Ordering::Relaxed);
                            pos = to;
                        }
                        None => break,
                    }
                    progress = Progress::More;
                }
                // Not possible for the consumer of an honest ring (writers never pass
                // `tail`); a peer scribbled on it. Skip a cell.
                Step::Overwritten { .. } | Step::Malformed => {
                    unreadable += 1;
                    pos = pos.saturating_add(1);
                }
            }
        }
        if unreadable > 0 {
            // Relaxed: a statistic.
            h.unreadable.fetch_add(unreadable, Ordering::Relaxed);
        }
        if pos != start {
            ring::consume(&h.tail, pos);
            self.flush();
        } else {
            progress = Progress::Empty;
        }
        progress
    }

    fn print(&mut self, rec: &LogRecord) {
        let line = || {
            format!(
                "{} {:<5} {}: {}\n",
                record::format_time(rec.unix_ns),
                rec.level.name(),
                rec.target,
                rec.message_with_fields()
            )
        };
        match &mut self.console {
            Console::Off => {}
            Console::Stderr => {
                let _ = std::io::stderr().lock().write_all(line().as_bytes());
            }
            Console::Writer(w) => {
                let _ = w.write_all(line().as_bytes());
            }
            Console::Func(f) => f(rec),
        }
    }

    fn flush(&mut self) {
        if let Console::Writer(w) = &mut self.console {
            let _ = w.flush();
        }
    }
}
