//! The process's logger: its segment, the write path the macros call, and the builder.

use std::cell::Cell;
use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicU32, AtomicU8, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use horus_shm::{ProcessId, Segment};

use crate::callsite::{self, CallSite, Meta, DYNAMIC};
use crate::layout::{self, Geometry, Header, CELL, MAGIC};
use crate::ring;
use crate::sink::{Console, Drain};
use crate::value::{Out, Value, Values};
use crate::view::{View, RECORD_HEAD};
use crate::{Level, LogError};

/// Default ring: 1 MiB of records.
pub const DEFAULT_RING_BYTES: usize = 1 << 20;
/// Default call-site table: 1024 call sites.
pub(crate) const DEFAULT_SITES: u32 = 1024;

/// The logger of this process.
pub(crate) struct Logger {
    seg: Segment,
    pub(crate) view: View,
    /// The ring's bytes, writable.
    ring: *mut u8,
    sites: *mut u8,
    pub(crate) min_level: AtomicU8,
    /// A lower bound of the ring's `tail` that writers check before reading `tail`
    /// itself (see `ring::reserve`); process-local, on its own cache lines.
    seen_tail: TailBound,
    /// The drain thread and its stop flag.
    stop: Arc<AtomicBool>,
    drain: Mutex<Option<JoinHandle<()>>>,
    /// Distinguishes this logger's call-site ids from those of the logger a forked child
    /// inherited from its parent.
    generation: u32,
    /// What a forked child's own logger is created with.
    settings: Settings,
}

/// [`Logger::seen_tail`]: 128-byte aligned and sized, so that no other data shares its
/// cache line or the adjacent line the CPU may prefetch with it.
#[repr(align(128))]
struct TailBound(crate::sync::AtomicU64);

/// The settings a forked child's logger inherits from its parent's.
#[derive(Clone, Debug)]
struct Settings {
    namespace: String,
    ring_bytes: usize,
    sites: u32,
    console_stderr: bool,
    name: String,
}

// SAFETY: the raw pointers name the process-wide mapping owned by `seg`; all shared access
// is through atomics (head, tail, stamps, counters) or cells a writer reserved alone.
unsafe impl Send for Logger {}
// SAFETY: as above.
unsafe impl Sync for Logger {}

/// The logger of this process (leaked once installed, never freed); null until created,
/// and again in a forked child until the child logs (see [`after_fork_in_child`]).
static CURRENT: AtomicPtr<Logger> = AtomicPtr::new(std::ptr::null_mut());
/// Where creating this process's logger stands: [`NONE`], [`CREATING`], [`READY`] or
/// [`FAILED`].
static STATE: AtomicU8 = AtomicU8::new(NONE);
const NONE: u8 = 0;
const CREATING: u8 = 1;
const READY: u8 = 2;
const FAILED: u8 = 3;
/// In a forked child: the parent's logger (its settings seed the child's own; its ring is
/// never written again from here).
static INHERITED: AtomicPtr<Logger> = AtomicPtr::new(std::ptr::null_mut());
/// Generations handed out to loggers (0: none).
static GENERATION: AtomicU32 = AtomicU32::new(0);

/// The logger, created on first use if [`Builder::init`] was not called: from the
/// environment, or in a forked child from its parent's settings (never the parent's ring).
/// `None` if it could not be created (nothing is logged then).
#[inline(always)]
pub(crate) fn logger() -> Option<&'static Logger> {
    // Acquire: pairs with the Release store in `install`; the logger's fields are visible.
    let p = CURRENT.load(Ordering::Acquire);
    if !p.is_null() {
        // SAFETY: installed loggers are leaked, never freed.
        return Some(unsafe { &*p });
    }
    create_implicitly()
}

/// The logger if one is installed; never creates one.
fn installed() -> Option<&'static Logger> {
    // Acquire: as in `logger`.
    let p = CURRENT.load(Ordering::Acquire);
    // SAFETY: installed loggers are leaked, never freed.
    (!p.is_null()).then(|| unsafe { &*p })
}

#[cold]
fn create_implicitly() -> Option<&'static Logger> {
    match install(None) {
        Ok(l) => Some(l),
        // Another thread created it meanwhile, or creating failed (then `None`).
        Err(_) => installed(),
    }
}

/// Creates and installs this process's logger (from `builder`, else from the parent's
/// settings after a fork, else from the environment), unless one is installed or was
/// tried: then `AlreadyInitialised`.
fn install(builder: Option<Builder>) -> Result<&'static Logger, LogError> {
    loop {
        // Acquire on failure: a READY seen here makes CURRENT's store visible.
        match STATE.compare_exchange(NONE, CREATING, Ordering::AcqRel, Ordering::Acquire) {
            Ok(_) => break,
            // Bounded by the creator's progress (a segment and a thread).
            Err(CREATING) => std::thread::yield_now(),
            Err(_) => return Err(LogError::AlreadyInitialised),
        }
    }
    let builder = builder.unwrap_or_else(|| {
        // Acquire: pairs with nothing written concurrently (set in the fork handler of
        // this single-threaded child); the parent's logger is intact memory.
        let parent = INHERITED.load(Ordering::Acquire);
        if parent.is_null() {
            Builder::from_env()
        } else {
            // SAFETY: the parent's logger was leaked before the fork; its memory is ours.
            Builder::inheriting(unsafe { &*parent })
        }
    });
    match builder.create() {
        Ok(l) => {
            let l: &'static Logger = Box::leak(Box::new(l));
            // Release: the logger's fields happen-before any Acquire load that sees it.
            CURRENT.store(std::ptr::from_ref(l).cast_mut(), Ordering::Release);
            STATE.store(READY, Ordering::Release);
            Ok(l)
        }
        Err(e) => {
            STATE.store(FAILED, Ordering::Release);
            Err(e)
        }
    }
}

/// Runs in a forked child (`pthread_atfork`), in its only thread, before `fork` returns.
/// The child must not write into its parent's ring: a child killed between reserving and
/// committing a record would leave a reservation the parent's drain waits at, and records
/// of two processes would mix in one segment. So the child forgets the logger (its first
/// record creates its own segment, named by its pid, with its parent's settings) and the
/// thread's cached tid. Only atomic stores and a thread-local write: async-signal-safe.
extern "C" fn after_fork_in_child() {
    let parent = CURRENT.swap(std::ptr::null_mut(), Ordering::Relaxed);
    if !parent.is_null() {
        INHERITED.store(parent, Ordering::Relaxed);
    }
    STATE.store(NONE, Ordering::Relaxed);
    let _ = TID.try_with(|t| t.set(0));
}

/// Registers [`after_fork_in_child`] once per process (children inherit it).
fn watch_forks() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        // SAFETY: registers a handler that only does async-signal-safe work (see there).
        let rc = unsafe { libc::pthread_atfork(None, None, Some(after_fork_in_child)) };
        debug_assert_eq!(rc, 0);
    });
}

thread_local! {
    static TID: Cell<u32> = const { Cell::new(0) };
}

#[inline(always)]
fn tid() -> u32 {
    TID.with(|t| {
        let v = t.get();
        if v != 0 {
            return v;
        }
        // SAFETY: gettid has no preconditions and cannot fail.
        let v = unsafe { libc::gettid() } as u32;
        t.set(v);
        v
    })
}

impl Logger {
    fn header(&self) -> &Header {
        self.view.header()
    }

    /// Whether records of `level` are kept.
    #[inline(always)]
    pub(crate) fn enabled(&self, level: Level) -> bool {
        // Relaxed: a filter setting, no data published with it.
        level as u8 >= self.min_level.load(Ordering::Relaxed)
    }

    /// Counts one dropped record.
    #[cold]
    pub(crate) fn drop_one(&self) {
        // Relaxed: a statistic.
        self.header().dropped.fetch_add(1, Ordering::Relaxed);
    }

    #[cold]
    fn register(&self, site: &CallSite) -> u32 {
        let h = self.header();
        // Relaxed: the counter only hands out distinct indices; the entry is published by
        // its own stamp.
        let index = h.sites_next.fetch_add(1, Ordering::Relaxed);
        if index >= self.view.site_capacity {
            return 0;
        }
        // SAFETY: the table holds site_capacity entries inside the mapping and `index`
        // (< capacity) was handed to us alone by the fetch_add.
        unsafe { callsite::write_entry(self.sites, index, site.meta) };
        site.set_id(self.generation, index + 1)
    }

    /// Writes one record: the write path of every macro. Never allocates, formats, locks
    /// or blocks; a full ring drops the record and counts it.
    #[inline]
    pub(crate) fn write<V: Values + ?Sized>(&self, site: &CallSite, flags: u16, values: &V) {
        let mut id = site.id(self.generation);
        if id == 0 {
            id = self.register(site);
            if id == 0 {
                return self.drop_one();
            }
        }
        let len = RECORD_HEAD + values.encoded_len();
        let count = values.count();
        let cap = self.view.cap;
        let cells = len.div_ceil(CELL) as u64;
        if cells > cap || count > u16::MAX as usize {
            return self.drop_one();
        }
        let h = self.header();
        let Some(pos) = ring::reserve(&h.head, &h.tail, &self.seen_tail.0, cap, cells) else {
            return self.drop_one();
        };
        let mut out = Out {
            base: self.ring,
            mask: cap as usize * CELL - 1,
            off: (pos as usize).wrapping_mul(CELL),
        };
        let mut head = [0u8; RECORD_HEAD];
        head[0..4].copy_from_slice(&id.to_ne_bytes());
        head[4..8].copy_from_slice(&(len as u32).to_ne_bytes());
        head[8..16].copy_from_slice(&crate::clock::now().to_ne_bytes());
        head[16..20].copy_from_slice(&tid().to_ne_bytes());
        head[20..22].copy_from_slice(&(count as u16).to_ne_bytes());
        head[22..24].copy_from_slice(&flags.to_ne_bytes());
        out.put(&head);
        let cut = values.encode_all(&mut out);
        if cut > 0 {
            // Relaxed: a statistic.
            h.truncated.fetch_add(cut, Ordering::Relaxed);
        }
        debug_assert_eq!(out.off - (pos as usize).wrapping_mul(CELL), len);
        ring::commit(self.view.stamp(pos), pos);
    }

    /// Stops the drain thread after it consumed everything written so far.
    pub(crate) fn stop_drain(&self) {
        self.stop.store(true, Ordering::Release);
        if let Some(h) = self.drain.lock().ok().and_then(|mut g| g.take()) {
            let _ = h.join();
        }
    }

    /// The segment's name.
    pub(crate) fn segment_name(&self) -> &str {
        self.seg.name()
    }
}

/// One bridged record (from `log`, `tracing` or Python): its target, file, line, message
/// and fields travel as values. May allocate (the `fields` slice); the macros do not.
pub(crate) fn write_dynamic(
    level: Level,
    target: &str,
    file: &str,
    line: u32,
    message: &str,
    fields: &[(&str, &dyn Value)],
) {
    static SITES: [CallSite; 5] = {
        const fn meta(level: Level) -> Meta {
            Meta {
                level,
                target: "",
                file: "",
                line: 0,
                format: "{}",
                fields: &[],
                nargs: 0,
                flags: DYNAMIC,
            }
        }
        static M: [Meta; 5] = [
            meta(Level::Trace),
            meta(Level::Debug),
            meta(Level::Info),
            meta(Level::Warn),
            meta(Level::Error),
        ];
        [
            CallSite::new(&M[0]),
            CallSite::new(&M[1]),
            CallSite::new(&M[2]),
            CallSite::new(&M[3]),
            CallSite::new(&M[4]),
        ]
    };
    let Some(l) = logger() else { return };
    if !l.enabled(level) {
        return;
    }
    let line = u64::from(line);
    let mut values: Vec<&dyn Value> = Vec::with_capacity(4 + 2 * fields.len());
    values.extend([&target as &dyn Value, &file, &message, &line]);
    for (k, v) in fields {
        values.push(k);
        values.push(*v);
    }
    l.write(&SITES[level as usize], DYNAMIC, &values[..]);
}

/// How the logger is set up: ring size, level, console output, process name.
#[derive(Debug)]
pub struct Builder {
    namespace: Option<String>,
    ring_bytes: usize,
    sites: u32,
    level: Level,
    console: Console,
    name: Option<String>,
}

impl Builder {
    /// Defaults: the namespace of `HORUS_NAMESPACE` (else per user), a 1 MiB ring, level
    /// `info`, human lines on stderr.
    pub fn new() -> Self {
        Builder {
            namespace: None,
            ring_bytes: DEFAULT_RING_BYTES,
            sites: DEFAULT_SITES,
            level: Level::Info,
            console: Console::Stderr,
            name: None,
        }
    }

    /// Defaults overridden by the environment: `HORUS_LOG` (a level name),
    /// `HORUS_LOG_CONSOLE=0` (no console output), `HORUS_LOG_RING_KB`.
    pub fn from_env() -> Self {
        let mut b = Builder::new();
        if let Some(l) = std::env::var("HORUS_LOG").ok().and_then(|s| s.parse().ok()) {
            b.level = l;
        }
        if std::env::var("HORUS_LOG_CONSOLE").is_ok_and(|v| v == "0" || v == "off") {
            b.console = Console::Off;
        }
        if let Some(kb) = std::env::var("HORUS_LOG_RING_KB")
            .ok()
            .and_then(|s| s.parse::<usize>().ok())
        {
            b.ring_bytes = kb.saturating_mul(1024);
        }
        b
    }

    /// Namespace of the segment (default: `HORUS_NAMESPACE`, else one per user).
    pub fn namespace(mut self, ns: &str) -> Self {
        self.namespace = Some(ns.to_owned());
        self
    }

    /// Ring size in bytes (rounded up to a power of two, at least 4 KiB).
    pub fn ring_bytes(mut self, bytes: usize) -> Self {
        self.ring_bytes = bytes;
        self
    }

    /// Lowest level kept (records below it cost one load and a compare).
    pub fn level(mut self, level: Level) -> Self {
        self.level = level;
        self
    }

    /// Where the drain thread prints records (default: stderr, human format).
    pub fn console(mut self, console: Console) -> Self {
        self.console = console;
        self
    }

    /// The process name readers show (default: the executable's name).
    pub fn name(mut self, name: &str) -> Self {
        self.name = Some(name.to_owned());
        self
    }

    /// Installs the logger for this process. Fails if one is already installed (also
    /// implicitly, by a macro called before). In a forked child, installs the child's
    /// own logger (the parent's is never written from the child).
    pub fn init(self) -> Result<LogGuard, LogError> {
        install(Some(self))?;
        Ok(LogGuard { _private: () })
    }

    /// The builder of a forked child's logger: its parent's settings and current level;
    /// the console is stderr if the parent's was, else off (a writer or function cannot
    /// be shared with another process).
    fn inheriting(parent: &Logger) -> Builder {
        let s = &parent.settings;
        Builder {
            namespace: Some(s.namespace.clone()),
            ring_bytes: s.ring_bytes,
            sites: s.sites,
            // Relaxed: a filter setting.
            level: Level::from_u32(u32::from(parent.min_level.load(Ordering::Relaxed)))
                .unwrap_or(Level::Info),
            console: if s.console_stderr {
                Console::Stderr
            } else {
                Console::Off
            },
            name: Some(s.name.clone()),
        }
    }

    fn create(self) -> Result<Logger, LogError> {
        watch_forks();
        let ns = self.namespace.unwrap_or_else(horus_shm::name::namespace);
        let pid = std::process::id();
        let name = horus_shm::name::segment_name(&ns, "log", &pid.to_string())?;
        let cells = (self.ring_bytes.max(4096) / CELL).next_power_of_two() as u64;
        let g = Geometry::new(
            cells.min(layout::MAX_CELLS),
            self.sites.min(layout::MAX_SITES),
        );
        let seg = match Segment::create(&name, g.total as usize) {
            Err(horus_shm::SegmentError::Exists(_)) => {
                // A segment of a dead process that had our pid: ours now.
                Segment::unlink(&name);
                Segment::create(&name, g.total as usize)?
            }
            other => other?,
        };
        prefault(&seg);
        let process = self.name.unwrap_or_else(process_name);
        let settings = Settings {
            namespace: ns,
            ring_bytes: self.ring_bytes,
            sites: self.sites,
            console_stderr: matches!(self.console, Console::Stderr),
            name: process.clone(),
        };
        let me = ProcessId::current();
        // SAFETY: the segment is fresh (O_EXCL), zeroed, page aligned and g.total bytes
        // long; nobody reads it before the magic is published below.
        let header = unsafe { &mut *seg.base().cast::<Header>() };
        layout::init_header(
            header,
            &g,
            pid,
            me.start_time,
            &process,
            crate::clock::calibrate(),
        );
        // SAFETY: the mapping is g.total bytes and outlives the view (both live in Logger).
        let view = unsafe { View::new(seg.base(), &g) };
        // Release: the header written above is visible to readers that Acquire the magic.
        view.header().magic.store(MAGIC, Ordering::Release);
        let logger = Logger {
            ring: view.ring.cast_mut(),
            sites: view.sites.cast_mut(),
            seg,
            view,
            min_level: AtomicU8::new(self.level as u8),
            seen_tail: TailBound(crate::sync::AtomicU64::new(0)),
            stop: Arc::new(AtomicBool::new(false)),
            drain: Mutex::new(None),
            generation: GENERATION.fetch_add(1, Ordering::Relaxed) + 1,
            settings,
        };
        let drain = Drain::new(view, self.console, process, pid);
        let stop = Arc::clone(&logger.stop);
        let handle = std::thread::Builder::new()
            .name("horus-log".into())
            .spawn(move || drain.run(stop))
            .map_err(LogError::Thread)?;
        *logger.drain.lock().expect("fresh mutex") = Some(handle);
        Ok(logger)
    }
}

impl Default for Builder {
    fn default() -> Self {
        Builder::new()
    }
}

/// Maps every page of a fresh segment now, so that no log call takes the first-touch page
/// fault of a ring cell, stamp or call-site entry (~3 µs each, one per ~51 records of 64
/// bytes during the ring's first lap: docs/logging.md, "What a call costs"). One
/// `madvise(MADV_POPULATE_WRITE)` (Linux 5.14); a kernel without it gets each page touched
/// instead. Any other failure (no room left in `/dev/shm`) leaves the pages to be mapped
/// on first use, as without this call.
fn prefault(seg: &Segment) {
    let (base, len) = (seg.base(), seg.len());
    // SAFETY: `base..base + len` is the segment's own live mapping; populating it changes
    // no byte.
    let rc = unsafe { libc::madvise(base.cast(), len, libc::MADV_POPULATE_WRITE) };
    if rc == 0 || std::io::Error::last_os_error().raw_os_error() != Some(libc::EINVAL) {
        return;
    }
    for off in (0..len).step_by(4096) {
        // SAFETY: `off < len`, inside the mapping; the segment is fresh (zeroed) and not
        // yet published (no magic), so writing a zero over a zero races with nothing.
        unsafe { base.add(off).write_volatile(0) };
    }
}

fn process_name() -> String {
    std::fs::read_to_string("/proc/self/comm")
        .map(|s| s.trim().to_owned())
        .unwrap_or_else(|_| "?".into())
}

/// Keeps the logger's segment while alive. Dropping it prints what is left, marks the
/// segment as closed in order and removes it from `/dev/shm`; records written after that
/// are dropped. A process that crashes never drops it: its segment stays readable by
/// `horus log` until `horus log --clean` (or [`crate::remove_dead`]) removes it.
#[derive(Debug)]
#[must_use = "dropping the guard removes the log segment"]
pub struct LogGuard {
    _private: (),
}

impl Drop for LogGuard {
    fn drop(&mut self) {
        shutdown();
    }
}

/// Flushes the console, marks the segment closed and removes it (what dropping a
/// [`LogGuard`] does; for a logger created implicitly by a macro).
pub fn shutdown() {
    // Only this process's own logger: a forked child that never logged has none, and must
    // not mark its parent's segment closed or remove it.
    if let Some(l) = installed() {
        l.stop_drain();
        // Release: a reader that sees `exited` sees every record before it.
        l.header().exited.store(1, Ordering::Release);
        l.seg.unlink_if_same();
    }
}

/// Changes the lowest level kept, at run time.
pub fn set_level(level: Level) {
    if let Some(l) = logger() {
        // Relaxed: a filter setting.
        l.min_level.store(level as u8, Ordering::Relaxed);
    }
}

/// This process's log segment name (`/horus.<ns>.log.<pid>`), if the logger exists.
pub fn segment_name() -> Option<String> {
    logger().map(|l| l.segment_name().to_owned())
}

/// Records dropped so far because the ring was full.
pub fn dropped() -> u64 {
    // Relaxed: a statistic.
    logger().map_or(0, |l| l.header().dropped.load(Ordering::Relaxed))
}

/// The macros' entry point.
#[doc(hidden)]
#[inline(always)]
pub fn __write<V: Values>(site: &'static CallSite, values: V) {
    if let Some(l) = logger() {
        if l.enabled(site.meta.level) {
            l.write(site, 0, &values);
        }
    }
}
