//! Surviving the truncation of a mapped segment.
//!
//! Any process that can open a segment can `ftruncate` it. Every page of a
//! shared file mapping that now lies beyond the end of the file raises
//! `SIGBUS` when touched, which by default kills the process. horus maps
//! segments of other processes, so one buggy or hostile peer could kill every
//! participant of a topic.
//!
//! This module keeps a process-global registry of the horus mappings and
//! installs (once, at the first registration) a `SIGBUS` handler. For a fault
//! at an address inside a registered mapping, the handler maps a private,
//! anonymous zero page over the faulting page, marks the mapping *lost* and
//! returns, so the access retries on the zero page and succeeds. Every other
//! `SIGBUS` (outside horus mappings, or sent by `kill`) goes to the action
//! that was installed before ours: the default one kills the process exactly
//! as before. (The technique of repairing a fault by remapping and returning
//! is the classic one of user-space fault handlers, e.g. garbage collectors'
//! write barriers and `libsigsegv`.)
//!
//! What the zero page means to horus: readers see stamp 0 (never written),
//! so no slot is ever "ready", and magic 0; writers write into memory only
//! this process sees, which is harmless. The owner of the mapping reads the
//! lost flag ([`Registration::is_lost`], one relaxed load) and reports a
//! typed error; it never trusts the contents again.
//!
//! Async-signal safety: the handler allocates nothing and takes no lock. The
//! registry is a fixed array of atomics; the handler only loads them, and
//! calls `mmap` (a raw system call on Linux) and, to chain, `sigaction` and
//! `raise`, which are async-signal-safe.
//!
//! Unregistering while a fault is handled: each slot's `state` word carries
//! an `ACTIVE` bit and a count of handlers currently using the slot. A handler
//! takes a reference (increments the count) and only then trusts the slot's
//! address range; [`Registration`]'s drop clears `ACTIVE` and waits for the
//! count to drop to zero before the caller unmaps, so a handler never maps a
//! page over memory that has been unmapped and possibly reused.

use std::ffi::c_void;
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU64, AtomicUsize, Ordering};
use std::sync::Mutex;

/// How many mappings can be protected at once. Beyond that a mapping is
/// still usable, just not protected (its truncation kills the process as
/// before); [`protected_slots_in_use`] lets tools see it coming.
pub const MAX_PROTECTED: usize = 512;

/// `state`: the slot describes a live mapping; handlers may use it.
const ACTIVE: u64 = 1 << 63;
/// `state`: the slot is owned by a registration (being set up, live, or
/// being torn down); only a slot with `state == 0` can be claimed.
const CLAIMED: u64 = 1 << 62;
/// `state`: the low bits count handlers that hold a reference to the slot.
const REFS: u64 = CLAIMED - 1;

/// One registered mapping.
struct Slot {
    /// `ACTIVE | CLAIMED | refs`.
    state: AtomicU64,
    /// First byte of the mapping.
    base: AtomicUsize,
    /// Length of the mapping in bytes.
    len: AtomicUsize,
    /// Set by the handler once it replaced a page of this mapping.
    lost: AtomicBool,
}

impl Slot {
    const fn new() -> Slot {
        Slot {
            state: AtomicU64::new(0),
            base: AtomicUsize::new(0),
            len: AtomicUsize::new(0),
            lost: AtomicBool::new(false),
        }
    }

    /// Whether `addr` lies in `[base, base + len)`.
    fn contains(&self, addr: usize) -> bool {
        let base = self.base.load(Ordering::Relaxed);
        let len = self.len.load(Ordering::Relaxed);
        addr.wrapping_sub(base) < len
    }
}

static SLOTS: [Slot; MAX_PROTECTED] = [const { Slot::new() }; MAX_PROTECTED];

/// The lost flag of mappings that found no free slot: never set.
static NEVER_LOST: AtomicBool = AtomicBool::new(false);
/// The lost flag of released registrations of lost mappings: always set.
static LOST: AtomicBool = AtomicBool::new(true);

/// Page size, read once before the handler is installed.
static PAGE: AtomicUsize = AtomicUsize::new(0);

/// The action that was installed before ours: its handler address
/// (`SIG_DFL`, `SIG_IGN` or a function) and its flags. Written once, before
/// our handler is installed; the `sigaction` system call that installs ours
/// orders these stores before any invocation of the handler.
static PREV_HANDLER: AtomicUsize = AtomicUsize::new(libc::SIG_DFL);
static PREV_FLAGS: AtomicI32 = AtomicI32::new(0);

/// Whether the handler is installed (guarded by `INSTALL` for writers).
static INSTALLED: AtomicBool = AtomicBool::new(false);
static INSTALL: Mutex<()> = Mutex::new(());

/// A mapping's entry in the registry; drop it *before* unmapping.
#[derive(Debug)]
pub struct Registration {
    slot: Option<&'static Slot>,
    lost: &'static AtomicBool,
}

impl std::fmt::Debug for Slot {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Slot")
            .field("base", &self.base.load(Ordering::Relaxed))
            .field("len", &self.len.load(Ordering::Relaxed))
            .finish()
    }
}

impl Registration {
    /// Registers the mapping `[base, base + len)`, installing the handler if
    /// this is the first registration. If the registry is full the mapping
    /// is not protected (and never reported lost).
    pub fn new(base: *mut u8, len: usize) -> Registration {
        install();
        for slot in &SLOTS {
            // Acquire: a previous owner's teardown (its Release CAS to 0)
            // happens before we reuse the slot.
            if slot
                .state
                .compare_exchange(0, CLAIMED, Ordering::Acquire, Ordering::Relaxed)
                .is_err()
            {
                continue;
            }
            slot.base.store(base as usize, Ordering::Relaxed);
            slot.len.store(len, Ordering::Relaxed);
            slot.lost.store(false, Ordering::Relaxed);
            // Release: a handler that sees ACTIVE (Acquire RMW on `state`)
            // sees the range and the cleared flag stored above. fetch_or,
            // not store: a handler that read the old range may hold a
            // reference that must not be wiped out.
            slot.state.fetch_or(ACTIVE, Ordering::Release);
            return Registration {
                slot: Some(slot),
                lost: &slot.lost,
            };
        }
        Registration {
            slot: None,
            lost: &NEVER_LOST,
        }
    }

    /// Whether a page of this mapping was replaced by a zero page (the file
    /// was truncated under it). One relaxed load: the flag only ever goes
    /// from false to true, and the caller needs no data published with it.
    #[inline]
    pub fn is_lost(&self) -> bool {
        self.lost.load(Ordering::Relaxed)
    }

    /// Whether the mapping is protected (the registry had room).
    pub fn is_protected(&self) -> bool {
        self.slot.is_some()
    }
}

impl Drop for Registration {
    fn drop(&mut self) {
        self.release();
    }
}

impl Registration {
    /// Unregisters the mapping now (drop does it otherwise); call before
    /// unmapping. Returns once no fault handler uses the entry any more.
    /// The lost flag keeps its last value.
    pub fn release(&mut self) {
        let Some(slot) = self.slot.take() else {
            return;
        };
        // No new handler may use the slot from now on.
        slot.state.fetch_and(!ACTIVE, Ordering::AcqRel);
        // Wait for handlers already inside (each does one mmap and leaves),
        // then free the slot. Once the count is zero after ACTIVE was
        // cleared, no handler can set `lost` any more (late ones see the bit
        // clear and leave), so the flag read here is final. The CAS only
        // succeeds with no reference held, so a handler that incremented in
        // between is never lost track of.
        loop {
            // Acquire: pairs with each handler's Release decrement, so its
            // store to `lost` is visible.
            if slot.state.load(Ordering::Acquire) == CLAIMED {
                let lost = slot.lost.load(Ordering::Relaxed);
                // Release: our use of the slot happens before its next
                // claimer's Acquire CAS.
                if slot
                    .state
                    .compare_exchange(CLAIMED, 0, Ordering::Release, Ordering::Relaxed)
                    .is_ok()
                {
                    // The slot may be reused at once: keep the verdict in a
                    // flag of our own.
                    self.lost = if lost { &LOST } else { &NEVER_LOST };
                    return;
                }
            }
            std::thread::yield_now();
        }
    }
}

/// Mappings currently registered (for diagnostics and tests).
pub fn protected_slots_in_use() -> usize {
    SLOTS
        .iter()
        .filter(|s| s.state.load(Ordering::Relaxed) & CLAIMED != 0)
        .count()
}

/// Installs the handler once per process.
fn install() {
    // Acquire pairs with the Release store below: the handler is in place.
    if INSTALLED.load(Ordering::Acquire) {
        return;
    }
    let _guard = INSTALL.lock().unwrap_or_else(|p| p.into_inner());
    if INSTALLED.load(Ordering::Relaxed) {
        return;
    }
    // SAFETY: sysconf has no preconditions.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    PAGE.store(
        if page > 0 { page as usize } else { 4096 },
        Ordering::Relaxed,
    );
    // SAFETY: an all-zero sigaction is a valid value to fill in.
    let mut old: libc::sigaction = unsafe { std::mem::zeroed() };
    // SAFETY: reading the current action into a valid out-pointer.
    if unsafe { libc::sigaction(libc::SIGBUS, std::ptr::null(), &mut old) } != 0 {
        return;
    }
    PREV_HANDLER.store(old.sa_sigaction, Ordering::Relaxed);
    PREV_FLAGS.store(old.sa_flags, Ordering::Relaxed);
    // SAFETY: as above.
    let mut act: libc::sigaction = unsafe { std::mem::zeroed() };
    let handler: extern "C" fn(libc::c_int, *mut libc::siginfo_t, *mut c_void) = on_sigbus;
    act.sa_sigaction = handler as usize;
    // SA_SIGINFO: we need si_addr. SA_ONSTACK: run on the thread's
    // alternate stack if it has one (Rust threads do), like the handler we
    // may replace. No SA_NODEFER: a SIGBUS inside the handler (a bug) then
    // kills the process instead of recursing.
    act.sa_flags = libc::SA_SIGINFO | libc::SA_ONSTACK | libc::SA_RESTART;
    // SAFETY: sa_mask is a valid sigset_t to initialise.
    unsafe { libc::sigemptyset(&mut act.sa_mask) };
    // SAFETY: installing a handler with a valid action; the previous action
    // was saved above, before ours can run.
    if unsafe { libc::sigaction(libc::SIGBUS, &act, std::ptr::null_mut()) } == 0 {
        INSTALLED.store(true, Ordering::Release);
    }
}

/// The `SIGBUS` handler. Async-signal-safe: no allocation, no lock.
extern "C" fn on_sigbus(sig: libc::c_int, info: *mut libc::siginfo_t, ctx: *mut c_void) {
    // SAFETY: the kernel passes a valid siginfo_t with SA_SIGINFO.
    let (code, addr) = unsafe { ((*info).si_code, (*info).si_addr() as usize) };
    // Only a kernel-reported access beyond the end of a mapped object
    // (BUS_ADRERR) is ours to repair; si_addr means nothing for a SIGBUS
    // sent with kill (si_code <= 0), and hardware errors are not ours.
    if code == libc::BUS_ADRERR && rescue(addr) {
        return;
    }
    chain(sig, info, ctx);
}

/// Replaces the faulting page if `addr` lies in a registered mapping.
fn rescue(addr: usize) -> bool {
    for slot in &SLOTS {
        // Cheap filter without a reference; confirmed under one below.
        if slot.state.load(Ordering::Relaxed) & ACTIVE == 0 || !slot.contains(addr) {
            continue;
        }
        // Acquire: pairs with the registration's Release fetch_or, so the
        // range we re-read is the one that was made ACTIVE.
        let old = slot.state.fetch_add(1, Ordering::Acquire);
        // The slot may have been torn down and reused since the filter:
        // only an ACTIVE slot whose range still holds `addr` is trusted, and
        // while we hold the reference it cannot be unregistered (its owner
        // waits for us before unmapping).
        if old & ACTIVE == 0 || !slot.contains(addr) {
            slot.state.fetch_sub(1, Ordering::Release);
            continue;
        }
        debug_assert!(old & REFS < REFS);
        let ok = map_zero_page(addr);
        if ok {
            slot.lost.store(true, Ordering::Relaxed);
        }
        // Release: our mmap happens before the owner's munmap.
        slot.state.fetch_sub(1, Ordering::Release);
        return ok;
    }
    false
}

/// Maps a private zero page over the page holding `addr`. Keeps `errno`.
fn map_zero_page(addr: usize) -> bool {
    let page = PAGE.load(Ordering::Relaxed);
    let start = addr & !(page - 1);
    // SAFETY: errno is thread-local; saving it is always sound.
    let errno = unsafe { *libc::__errno_location() };
    // SAFETY: the page lies inside a registered mapping that cannot be
    // unmapped while we hold its slot reference, so MAP_FIXED replaces only
    // memory of that mapping; it is memory nobody can use any more (the
    // file behind it is gone). mmap is a plain system call on Linux.
    let p = unsafe {
        libc::mmap(
            start as *mut c_void,
            page,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_FIXED | libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
            -1,
            0,
        )
    };
    // SAFETY: restoring the interrupted code's errno.
    unsafe { *libc::__errno_location() = errno };
    p != libc::MAP_FAILED
}

/// Hands a fault that is not ours to the action installed before ours.
fn chain(sig: libc::c_int, info: *mut libc::siginfo_t, ctx: *mut c_void) {
    let prev = PREV_HANDLER.load(Ordering::Relaxed);
    let flags = PREV_FLAGS.load(Ordering::Relaxed);
    if prev == libc::SIG_DFL || prev == libc::SIG_IGN {
        // Default behaviour: put the default action back and deliver the
        // signal again. SIGBUS is blocked while we run, so the raised signal
        // is delivered as we return, and kills the process with SIGBUS (a
        // synchronous SIGBUS cannot be ignored: the kernel kills anyway).
        // SAFETY: an all-zero sigaction is SIG_DFL with no flags; sigaction
        // and raise are async-signal-safe.
        unsafe {
            let mut dfl: libc::sigaction = std::mem::zeroed();
            dfl.sa_sigaction = libc::SIG_DFL;
            libc::sigemptyset(&mut dfl.sa_mask);
            libc::sigaction(sig, &dfl, std::ptr::null_mut());
            libc::raise(sig);
        }
        return;
    }
    if flags & libc::SA_SIGINFO != 0 {
        // SAFETY: the previous action was installed with SA_SIGINFO, so its
        // handler has this signature; we pass on what the kernel gave us.
        let f: extern "C" fn(libc::c_int, *mut libc::siginfo_t, *mut c_void) =
            unsafe { std::mem::transmute(prev) };
        f(sig, info, ctx);
    } else {
        // SAFETY: a handler installed without SA_SIGINFO takes the signal
        // number only.
        let f: extern "C" fn(libc::c_int) = unsafe { std::mem::transmute(prev) };
        f(sig);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn registration_frees_its_slot() {
        // Its own slot, not the count of all: tests running beside this one in the same
        // process (plain `cargo test`) register and free slots of their own meanwhile.
        let mut buf = vec![0u8; 64];
        let r = Registration::new(buf.as_mut_ptr(), buf.len());
        assert!(r.is_protected());
        assert!(!r.is_lost());
        let slot = r.slot.expect("a protected registration holds a slot");
        let base = buf.as_mut_ptr() as usize;
        assert_ne!(slot.state.load(Ordering::Relaxed) & CLAIMED, 0);
        assert_eq!(slot.base.load(Ordering::Relaxed), base);
        drop(r);
        // Freed: unclaimed, or already claimed again by another test for its own mapping.
        let state = slot.state.load(Ordering::Relaxed);
        assert!(state & CLAIMED == 0 || slot.base.load(Ordering::Relaxed) != base);
    }

    /// Set in the child process of `sigbus_outside_horus_mappings_still_kills`.
    const CHILD: &str = "HORUS_FAULT_TEST_FOREIGN_SIGBUS";

    /// In the child: protect a mapping (installs the handler), then touch a
    /// truncated mapping horus knows nothing about. Must die of SIGBUS.
    #[test]
    fn foreign_sigbus_child() {
        let Ok(path) = std::env::var(CHILD) else {
            return;
        };
        let mut buf = vec![0u8; 64];
        let _r = Registration::new(buf.as_mut_ptr(), buf.len());
        assert!(INSTALLED.load(Ordering::Acquire));
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(true)
            .open(&path)
            .unwrap();
        file.set_len(4096).unwrap();
        use std::os::fd::AsRawFd;
        // SAFETY: a fresh shared mapping of an open file of 4096 bytes.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                4096,
                libc::PROT_READ,
                libc::MAP_SHARED,
                file.as_raw_fd(),
                0,
            )
        };
        assert_ne!(p, libc::MAP_FAILED);
        file.set_len(0).unwrap();
        // SAFETY: inside the mapping; the page is gone, so this faults.
        let v = unsafe { std::ptr::read_volatile(p.cast::<u8>()) };
        println!("survived a foreign SIGBUS (read {v}): the handler swallowed it");
        std::process::exit(3);
    }

    #[test]
    fn sigbus_outside_horus_mappings_still_kills() {
        use std::os::unix::process::ExitStatusExt;
        let path = format!("/dev/shm/horus.test.fault.{}", std::process::id());
        let status = std::process::Command::new(std::env::current_exe().unwrap())
            .args([
                "--exact",
                "fault::tests::foreign_sigbus_child",
                "--nocapture",
            ])
            .env(CHILD, &path)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .status()
            .unwrap();
        let _ = std::fs::remove_file(&path);
        assert_eq!(
            status.signal(),
            Some(libc::SIGBUS),
            "child ended with {status}"
        );
    }

    #[test]
    fn rescue_ignores_addresses_outside_registered_mappings() {
        let mut buf = vec![0u8; 64];
        let r = Registration::new(buf.as_mut_ptr(), buf.len());
        // One byte past the end, and address 0: not ours, nothing mapped.
        assert!(!rescue(buf.as_ptr() as usize + buf.len()));
        assert!(!rescue(0));
        assert!(!r.is_lost());
    }
}
