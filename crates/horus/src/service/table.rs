//! The service table: one small shared-memory segment per service holding
//! what the request and response channels do not — both types' schemas,
//! the service's configuration, one record per client place (its token,
//! its process, its counters and the claim word of each call slot) and one
//! record per server place (its process, a generation, its counters).
//!
//! Every word is an `AtomicU64`; the segment is validated on open and
//! every index is bounds-checked against the validated configuration, never
//! read from shared memory. Places and lifetime follow the topics' rules, with
//! the same code ([`horus_shm::place`]): a client's pid word and a server's
//! owner word are owner words (a dead owner's place is reclaimed by whoever
//! notices, and a reclaimer that dies mid-reclaim is taken over), and a
//! membership word (bit per client and server place, plus `CLOSING`) lets the
//! last endpoint to leave unlink the segment; an opener that finds it closing
//! reopens a fresh one.

use std::time::{Duration, Instant};

use horus_shm::init::{self, Created};
use horus_shm::place;
// The loom-swappable atomics, as every shared-memory protocol of horus uses.
use horus_shm::sync::{AtomicU64, Ordering};
use horus_shm::{OpenError, ProcessId, Segment, SCHEMA_BYTES};

use super::wire::{claim, MAX_CALL_ID};

/// Largest client and server counts (bounded by the channels' places).
pub(crate) const MAX_CLIENTS: u32 = 16;
pub(crate) const MAX_SERVERS: u32 = 32;
pub(crate) const MAX_DEPTH: u32 = 1024;

const MAGIC: u64 = 0x4853_5643_5442_4c31; // "HSVCTBL1"
/// 2: counters on cache lines of their own, away from the identity words the peer reads.
/// 3: owner words and the membership word follow `horus_shm::place` (a reclaimer names
/// itself in the word; the membership word counts joins and leaves in its epoch bits).
const VERSION: u32 = 3;
/// How long a joining client waits for a live process that is reclaiming its place's
/// record (a handful of stores and one unlink) before giving up with an error.
const RECLAIM_WAIT: Duration = Duration::from_secs(2);

// Header words (word 0 is the magic, published by `horus_shm::init`).
const W_VERSION: usize = 1;
const W_CLIENTS: usize = 2;
const W_SERVERS: usize = 3;
const W_DEPTH: usize = 4;
const W_MEMBERS: usize = 5;
const W_REQ_TAIL: usize = 6;
const W_RESP_TAIL: usize = 7;
const W_REQ_SCHEMA: usize = 8;
const W_RESP_SCHEMA: usize = W_REQ_SCHEMA + SCHEMA_BYTES / 8;
const HEADER_WORDS: usize = 48;
const _: () = assert!(W_RESP_SCHEMA + SCHEMA_BYTES / 8 <= HEADER_WORDS);

/// Client record words (then one claim word per call slot). The identity words (token, pid),
/// which servers read on every reply, are on a cache line of their own; the counters, which
/// the client bumps on every call, start on the next one — sharing a line made it bounce
/// between the two processes twice per call.
pub(crate) const C_TOKEN: usize = 0;
pub(crate) const C_PID: usize = 1;
/// First counter; see [`ClientCounter`].
const C_COUNTERS: usize = 8;
const CLIENT_FIXED: usize = 24;

/// Server record words: identity (owner, generation; read by clients for every call's
/// witnesses) on one cache line, the counters (bumped by the server per call) on the next.
const S_OWNER: usize = 0;
const S_GEN: usize = 1;
const S_COUNTERS: usize = 8;
const SERVER_WORDS: usize = 16;

/// A client's counters, in record order.
#[derive(Clone, Copy, Debug)]
pub(crate) enum ClientCounter {
    Calls,
    Responses,
    NoServer,
    ServerDied,
    Busy,
    TimedOut,
    Cancelled,
    Late,
    Unanswered,
    Failed,
    Malformed,
}
pub(crate) const CLIENT_COUNTERS: usize = 11;
const _: () = assert!(C_COUNTERS + CLIENT_COUNTERS <= CLIENT_FIXED);

/// A server's counters, in record order.
#[derive(Clone, Copy, Debug)]
pub(crate) enum ServerCounter {
    Received,
    Replied,
    Unanswered,
    ClientGone,
    Malformed,
    ReplyFailed,
}
pub(crate) const SERVER_COUNTERS: usize = 6;
const _: () = assert!(S_COUNTERS + SERVER_COUNTERS <= SERVER_WORDS);

/// The service's fixed configuration, stored in the table header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct TableConfig {
    pub(crate) max_clients: u32,
    pub(crate) max_servers: u32,
    /// Calls in flight per client (power of two): the request queue.
    pub(crate) depth: u32,
    pub(crate) req_tail: u64,
    pub(crate) resp_tail: u64,
    pub(crate) req_schema: [u8; SCHEMA_BYTES],
    pub(crate) resp_schema: [u8; SCHEMA_BYTES],
}

impl TableConfig {
    pub(crate) fn validate(&self) -> Result<(), String> {
        if self.max_clients == 0 || self.max_clients > MAX_CLIENTS {
            return Err(format!("max_clients must be 1..={MAX_CLIENTS}"));
        }
        if self.max_servers == 0 || self.max_servers > MAX_SERVERS {
            return Err(format!("max_servers must be 1..={MAX_SERVERS}"));
        }
        if !self.depth.is_power_of_two() || self.depth > MAX_DEPTH {
            return Err(format!("depth must be a power of two ≤ {MAX_DEPTH}"));
        }
        if self.req_tail > 1 << 31 || self.resp_tail > 1 << 31 {
            return Err("tails are limited to 2 GiB".into());
        }
        Ok(())
    }

    fn client_words(&self) -> usize {
        (CLIENT_FIXED + self.depth as usize).next_multiple_of(8)
    }

    fn total_words(&self) -> usize {
        HEADER_WORDS
            + self.client_words() * self.max_clients as usize
            + SERVER_WORDS * self.max_servers as usize
    }
}

/// The call id `n` ids after `id`, as a client numbers its calls: ids wrap
/// from `MAX_CALL_ID - 1` to 1 (0 is never a call's id).
fn successor(id: u64, n: u64) -> u64 {
    debug_assert!(id < MAX_CALL_ID && n < MAX_CALL_ID);
    let next = id + n;
    if next < MAX_CALL_ID {
        next
    } else {
        next - MAX_CALL_ID + 1
    }
}

/// Adds one to a counter that only the caller writes (Relaxed: counted for
/// tools, ordered with nothing).
fn single_writer_bump(word: &AtomicU64) {
    word.store(
        word.load(Ordering::Relaxed).wrapping_add(1),
        Ordering::Relaxed,
    );
}

/// The `n` lowest bits set (n ≤ 32).
fn low_bits(n: u32) -> u32 {
    if n >= 32 {
        u32::MAX
    } else {
        (1 << n) - 1
    }
}

/// Why a client could not take its place in the table.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum EnterError {
    /// The table is closing: reopen and try again.
    Closing,
    /// A live process has held the place's record as its reclaimer for longer
    /// than any reclaim takes (stopped, or hostile): the place is not ours.
    Stuck {
        /// Process id of the holder.
        pid: u32,
    },
}

/// The table's word layout for one validated configuration.
#[derive(Clone, Copy, Debug)]
struct Geometry {
    /// [`TableConfig::client_words`].
    client_words: usize,
    /// Index of server place 0's first word.
    server_base: usize,
    /// [`TableConfig::total_words`]: the mapping holds at least this many.
    total_words: usize,
}

impl Geometry {
    fn of(config: &TableConfig) -> Geometry {
        Geometry {
            client_words: config.client_words(),
            server_base: HEADER_WORDS + config.client_words() * config.max_clients as usize,
            total_words: config.total_words(),
        }
    }
}

/// A mapped, validated service table.
#[derive(Debug)]
pub(crate) struct Table {
    seg: Segment,
    config: TableConfig,
    /// Word counts derived from `config` once (every access bounds-checks
    /// against them; computing them per access cost a few instructions on
    /// each of the several accesses per call).
    geometry: Geometry,
    /// Segment name of a client's response channel, minus its token's 16
    /// hex digits: a dead client's is removed when its place is reclaimed.
    resp_prefix: String,
}

impl Table {
    /// Opens `name` or creates it with `config`. An existing table is
    /// validated and returned with *its* configuration (the caller compares).
    pub(crate) fn open_or_create(name: &str, config: &TableConfig) -> Result<Table, OpenError> {
        let deadline = Instant::now() + init::INIT_WAIT;
        match init::create_or_open(name, config.total_words() * 8, HEADER_WORDS * 8, deadline)? {
            Created::New(seg) => Ok(Self::initialise(seg, config)),
            Created::Existing(seg, magic) => Self::validated(name, seg, magic),
        }
    }

    fn initialise(seg: Segment, config: &TableConfig) -> Table {
        let t = Table {
            seg,
            config: *config,
            geometry: Geometry::of(config),
            resp_prefix: String::new(),
        };
        t.word(W_VERSION)
            .store(u64::from(VERSION), Ordering::Relaxed);
        t.word(W_CLIENTS)
            .store(u64::from(config.max_clients), Ordering::Relaxed);
        t.word(W_SERVERS)
            .store(u64::from(config.max_servers), Ordering::Relaxed);
        t.word(W_DEPTH)
            .store(u64::from(config.depth), Ordering::Relaxed);
        t.word(W_REQ_TAIL).store(config.req_tail, Ordering::Relaxed);
        t.word(W_RESP_TAIL)
            .store(config.resp_tail, Ordering::Relaxed);
        for (w0, bytes) in [
            (W_REQ_SCHEMA, &config.req_schema),
            (W_RESP_SCHEMA, &config.resp_schema),
        ] {
            for (i, chunk) in bytes.chunks_exact(8).enumerate() {
                let v = u64::from_ne_bytes(chunk.try_into().expect("8 bytes"));
                t.word(w0 + i).store(v, Ordering::Relaxed);
            }
        }
        init::publish(&t.seg, MAGIC);
        t
    }

    fn open(name: &str, deadline: Instant) -> Result<Table, OpenError> {
        let (seg, magic) = init::open_initialised(name, HEADER_WORDS * 8, deadline)?;
        Self::validated(name, seg, magic)
    }

    /// Validates the header of `seg`, whose creator published `magic`.
    fn validated(name: &str, seg: Segment, magic: u64) -> Result<Table, OpenError> {
        let corrupt = |reason: String| OpenError::Corrupt {
            name: name.to_owned(),
            reason,
        };
        let w = |i: usize| {
            debug_assert!(i < HEADER_WORDS);
            // SAFETY: words below HEADER_WORDS are in the mapping
            // (`open_initialised` checked its length), which is page
            // aligned and only accessed through atomics.
            let word = unsafe { &*seg.base().cast::<AtomicU64>().add(i) };
            word.load(Ordering::Relaxed)
        };
        let narrow = |v: u64| u32::try_from(v).unwrap_or(u32::MAX);
        // A wrong magic or version is reported as a corrupt table, as before
        // the check moved to horus-shm.
        init::check_version(magic, narrow(w(W_VERSION)), MAGIC, VERSION)
            .map_err(|e| corrupt(e.to_string()))?;
        let mut config = TableConfig {
            max_clients: narrow(w(W_CLIENTS)),
            max_servers: narrow(w(W_SERVERS)),
            depth: narrow(w(W_DEPTH)),
            req_tail: w(W_REQ_TAIL),
            resp_tail: w(W_RESP_TAIL),
            req_schema: [0; SCHEMA_BYTES],
            resp_schema: [0; SCHEMA_BYTES],
        };
        for (w0, bytes) in [
            (W_REQ_SCHEMA, &mut config.req_schema),
            (W_RESP_SCHEMA, &mut config.resp_schema),
        ] {
            for (i, chunk) in bytes.chunks_exact_mut(8).enumerate() {
                chunk.copy_from_slice(&w(w0 + i).to_ne_bytes());
            }
        }
        config.validate().map_err(corrupt)?;
        if seg.len() < config.total_words() * 8 {
            return Err(corrupt(format!(
                "{} bytes, its configuration needs {}",
                seg.len(),
                config.total_words() * 8
            )));
        }
        Ok(Table {
            seg,
            geometry: Geometry::of(&config),
            config,
            resp_prefix: String::new(),
        })
    }

    /// Opens an existing table without waiting for a creator that has not
    /// published its header yet ([`OpenError::NotInitialized`] at once).
    /// For tools: snapshots and `horus clean`.
    pub(crate) fn open_now(name: &str) -> Result<Table, OpenError> {
        Self::open(name, Instant::now())
    }

    /// Sets the response-channel name prefix (see `resp_prefix`).
    pub(crate) fn with_response_prefix(mut self, prefix: String) -> Table {
        self.resp_prefix = prefix;
        self
    }

    pub(crate) fn config(&self) -> &TableConfig {
        &self.config
    }

    /// Word `i` of the table; `i` must be below the validated size.
    fn word(&self, i: usize) -> &AtomicU64 {
        assert!(i < self.geometry.total_words);
        // SAFETY: in bounds (asserted; the mapping is at least
        // total_words × 8 bytes, checked on open or created so), 8-aligned
        // (page-aligned base), and only ever accessed atomically.
        unsafe { &*self.seg.base().cast::<AtomicU64>().add(i) }
    }

    fn client_word(&self, k: usize, i: usize) -> &AtomicU64 {
        let words = self.geometry.client_words;
        assert!(k < self.config.max_clients as usize && i < words);
        self.word(HEADER_WORDS + k * words + i)
    }

    fn server_word(&self, s: usize, i: usize) -> &AtomicU64 {
        assert!(s < self.config.max_servers as usize && i < SERVER_WORDS);
        self.word(self.geometry.server_base + s * SERVER_WORDS + i)
    }

    /// The claim word of call slot `id & (depth - 1)` of client `k`.
    pub(crate) fn claim(&self, k: usize, id: u64) -> &AtomicU64 {
        let slot = (id & u64::from(self.config.depth - 1)) as usize;
        self.client_word(k, CLIENT_FIXED + slot)
    }

    /// The token of the client now at place `k` (0: none).
    pub(crate) fn client_token(&self, k: usize) -> u64 {
        // Acquire pairs with the Release store in `enter_client`.
        self.client_word(k, C_TOKEN).load(Ordering::Acquire)
    }

    /// Counts one `c` of client place `k`. Only the client holding the place
    /// writes its counters (its core, behind the client's lock), so a load and
    /// a store count exactly without a read-modify-write (a locked instruction
    /// per count, several per call); Relaxed: counters for tools, ordered with
    /// nothing. A foreign writer can only make the numbers wrong, as it could
    /// with `fetch_add`.
    pub(crate) fn bump_client(&self, k: usize, c: ClientCounter) {
        single_writer_bump(self.client_word(k, C_COUNTERS + c as usize));
    }

    pub(crate) fn client_counters(&self, k: usize) -> [u64; CLIENT_COUNTERS] {
        std::array::from_fn(|i| self.client_word(k, C_COUNTERS + i).load(Ordering::Relaxed))
    }

    /// Counts one `c` of server place `s`, from any thread of its server
    /// (a read-modify-write).
    pub(crate) fn bump_server(&self, s: usize, c: ServerCounter) {
        self.server_word(s, S_COUNTERS + c as usize)
            .fetch_add(1, Ordering::Relaxed);
    }

    /// [`Table::bump_server`] by the counter's only writer: the server's
    /// receiving end for `Received` and `Malformed` (it receives through
    /// `&mut`), its answering end, under its ports lock and while the server
    /// holds the place, for `Replied`, `Unanswered` and `ReplyFailed`. A load
    /// and a store then count exactly (see [`Table::bump_client`]).
    pub(crate) fn bump_server_sole(&self, s: usize, c: ServerCounter) {
        single_writer_bump(self.server_word(s, S_COUNTERS + c as usize));
    }

    pub(crate) fn server_counters(&self, s: usize) -> [u64; SERVER_COUNTERS] {
        std::array::from_fn(|i| self.server_word(s, S_COUNTERS + i).load(Ordering::Relaxed))
    }

    fn members(&self) -> &AtomicU64 {
        self.word(W_MEMBERS)
    }

    fn client_bit(k: usize) -> u64 {
        1 << k
    }

    fn server_bit(s: usize) -> u64 {
        1 << (16 + s)
    }

    /// Server places marked active (some may belong to dead processes
    /// not yet reclaimed).
    ///
    /// Only bits of places that exist: a hostile writer's extra bits never
    /// become indices.
    pub(crate) fn server_places(&self) -> u32 {
        self.server_places_in(self.membership())
    }

    /// The membership word: the place bits, `CLOSING`, and an epoch that
    /// every join and leave moves on, so that what a reader derived from
    /// one value stays valid while the word keeps it (see `Witnesses`).
    pub(crate) fn membership(&self) -> u64 {
        // Acquire: pairs with the joins' and leaves' read-modify-writes, so
        // that the records they follow or precede are read as of this word.
        self.members().load(Ordering::Acquire)
    }

    /// [`Table::server_places`] of membership word `m`.
    pub(crate) fn server_places_in(&self, m: u64) -> u32 {
        ((m >> 16) & 0xffff_ffff) as u32 & low_bits(self.config.max_servers)
    }

    /// Client places marked active (bounded as for servers).
    pub(crate) fn client_places(&self) -> u32 {
        let m = (self.members().load(Ordering::Acquire) & 0xffff) as u32;
        m & low_bits(self.config.max_clients)
    }

    /// The process owning server place `s` and its generation; `None` if
    /// the place is free or being reclaimed, or does not exist: `s` may come
    /// from a claim word a hostile peer wrote (a tag up to 32 whatever the
    /// server count), so it is checked here, not asserted.
    pub(crate) fn server_owner(&self, s: usize) -> Option<(ProcessId, u64)> {
        if s >= self.config.max_servers as usize {
            return None;
        }
        // Acquire pairs with the Release claim in `enter_server`.
        let owner = self.server_word(s, S_OWNER).load(Ordering::Acquire);
        let gen = self.server_word(s, S_GEN).load(Ordering::Acquire);
        (owner != 0 && owner & place::RECLAIMING == 0).then(|| (ProcessId::from_token(owner), gen))
    }

    /// The process of the client at place `k`, if any.
    pub(crate) fn client_owner(&self, k: usize) -> Option<ProcessId> {
        let pid = self.client_word(k, C_PID).load(Ordering::Acquire);
        (pid != 0 && pid & place::RECLAIMING == 0).then(|| ProcessId::from_token(pid))
    }

    /// Sets membership bit `bit` unless the table is closing.
    fn join(&self, bit: u64) -> bool {
        place::join(self.members(), bit)
    }

    fn leave(&self, bit: u64) -> u64 {
        place::leave(self.members(), bit)
    }

    /// Marks the table closing if no place is active (after reclaiming
    /// dead ones) and unlinks it. Returns whether it did.
    pub(crate) fn close_if_unused(&self) -> bool {
        self.reclaim_dead();
        let closed = place::try_close(self.members());
        if closed {
            self.seg.unlink_if_same();
        }
        closed
    }

    /// Client place `k` (taken on the request channel, so exclusively ours)
    /// now belongs to this process under `token`. Returns the first call
    /// id to use (after every call of the place's previous owner, below
    /// `MAX_CALL_ID`). Never goes on without owning the place's pid word:
    /// a dead previous owner's record (or one whose reclaimer died) is
    /// reclaimed here first; a live reclaimer is waited for, for at most
    /// [`RECLAIM_WAIT`] ([`EnterError::Stuck`] after that).
    pub(crate) fn enter_client(&self, k: usize, token: u64) -> Result<u64, EnterError> {
        self.own_client_record(k)?;
        for i in 0..CLIENT_COUNTERS {
            self.client_word(k, C_COUNTERS + i)
                .store(0, Ordering::Relaxed);
        }
        // The previous owner's latest id in a claim word (serial order: its
        // ids may have wrapped). Every call of a previous owner but its last
        // `depth` left its id in a claim word (answered, withdrawn or
        // refused), so its calls that may still be in the ring are at most
        // `depth` ids after that one.
        let depth = u64::from(self.config.depth);
        let latest = (0..depth)
            .map(|i| claim::id_of(self.claim(k, i).load(Ordering::Acquire)) % MAX_CALL_ID)
            .reduce(|a, b| if claim::after(b, a) { b } else { a })
            .unwrap_or(0);
        let last_theirs = successor(latest, depth);
        let first = successor(last_theirs, 1);
        // Every claim word of the place now says "call `last_theirs`
        // withdrawn", whatever the previous owner (dead, hostile, or one
        // whose ids were about to wrap) left there. Sound because:
        // - our calls `first`, `first + 1`, … are after `last_theirs`, so
        //   each finds its word unclaimed, and no leftover word (however
        //   far ahead) can read as a later call's and fail ours as stale;
        // - a server's late claim on a call of the previous owner still in
        //   the ring (it read their token before they left) needs its word
        //   unclaimed for that id; the word's id is `last_theirs`, at or
        //   after every such call, so the CAS is refused. A claim that won
        //   its CAS before our store is overwritten: that server answers a
        //   response channel that is not ours (named by their token).
        // Nobody else writes these words now: the place is ours alone (the
        // previous owner gave up its request port), and servers only CAS.
        // Relaxed: the Release store of our token below publishes the words
        // to every server that reads it; one that read the old token only
        // CASes, ordered against our store by the word's own modification
        // order.
        for i in 0..depth {
            self.claim(k, i)
                .store(claim::cancelled(last_theirs), Ordering::Relaxed);
        }
        // Release: a server that reads this token sees the record above.
        self.client_word(k, C_TOKEN).store(token, Ordering::Release);
        if !self.join(Self::client_bit(k)) {
            self.leave_client(k);
            return Err(EnterError::Closing);
        }
        Ok(first)
    }

    /// Makes this process the owner of client place `k`'s pid word (see
    /// [`Table::enter_client`]).
    fn own_client_record(&self, k: usize) -> Result<(), EnterError> {
        // A dead owner whose record nobody cleaned, or a reclaimer that died
        // cleaning it, is cleaned here (its response channel's name goes); a
        // live token is replaced (the place is ours: our request port holds
        // it); a live reclaimer is waited for (a handful of stores).
        let pid = self.client_word(k, C_PID);
        place::take_waiting(
            pid,
            || self.clean_client_record(k),
            Instant::now() + RECLAIM_WAIT,
        )
        .map_err(|holder| EnterError::Stuck {
            pid: ProcessId::from_token(holder).pid,
        })
    }

    /// Client place `k` is given up (its request port is dropped after).
    pub(crate) fn leave_client(&self, k: usize) -> u64 {
        self.client_word(k, C_TOKEN).store(0, Ordering::Release);
        self.client_word(k, C_PID).store(0, Ordering::Release);
        self.leave(Self::client_bit(k))
    }

    /// Takes a free server place; returns its index and generation.
    /// `Err(true)` if the table is closing, `Err(false)` if all are taken.
    pub(crate) fn enter_server(&self) -> Result<(usize, u64), bool> {
        self.reclaim_dead();
        for s in 0..self.config.max_servers as usize {
            if !place::try_claim(self.server_word(s, S_OWNER)) {
                continue;
            }
            for i in 0..SERVER_COUNTERS {
                self.server_word(s, S_COUNTERS + i)
                    .store(0, Ordering::Relaxed);
            }
            // Each owner of the place has its own generation, so a claim
            // made by a dead predecessor never looks like ours.
            let gen = self.server_word(s, S_GEN).fetch_add(1, Ordering::AcqRel) + 1;
            if !self.join(Self::server_bit(s)) {
                self.leave_server(s);
                return Err(true);
            }
            return Ok((s, gen));
        }
        Err(false)
    }

    pub(crate) fn leave_server(&self, s: usize) -> u64 {
        // The bit goes first, the owner last: a new server can only claim
        // the place after the owner word is free, so this leave never
        // clears the bit of the place's next owner. The generation moves on
        // before the place is free: a client waiting on a claim of ours
        // sees the server as gone even if the place is taken again.
        let left = self.leave(Self::server_bit(s));
        self.server_word(s, S_GEN).fetch_add(1, Ordering::AcqRel);
        self.server_word(s, S_OWNER).store(0, Ordering::Release);
        left
    }

    /// Frees the places of dead processes (pid + start time, zombies count
    /// as dead), and finishes reclaims whose reclaimer died. Reads `/proc`
    /// once per owned place: not for hot paths.
    pub(crate) fn reclaim_dead(&self) -> usize {
        // Every owned record, member or not: an owner that died between
        // claiming its record and joining (or a reclaimer that died after
        // clearing the bit) must not hold it for ever.
        let servers = (0..self.config.max_servers as usize).filter(|&s| {
            place::reclaim_if_dead(self.server_word(s, S_OWNER), || self.clean_server_record(s))
        });
        let n = servers.count();
        let clients = (0..self.config.max_clients as usize).filter(|&k| {
            place::reclaim_if_dead(self.client_word(k, C_PID), || self.clean_client_record(k))
        });
        n + clients.count()
    }

    /// Cleans server place `s`'s record for a reclaim. Each step may run
    /// twice (a reclaimer before us may have died after it): a second
    /// generation bump only moves the generation on, a second leave clears
    /// a clear bit.
    fn clean_server_record(&self, s: usize) {
        // The generation moves on: a client whose call this server took
        // sees it as gone even once the place is taken again.
        self.server_word(s, S_GEN).fetch_add(1, Ordering::AcqRel);
        self.leave(Self::server_bit(s));
    }

    /// Cleans client place `k`'s record for a reclaim. Idempotent (see
    /// [`Table::clean_server_record`]): the token is cleared only after its
    /// response channel's name is gone, so a successor still finds the name
    /// to remove.
    fn clean_client_record(&self, k: usize) {
        let token = self.client_word(k, C_TOKEN).load(Ordering::Acquire);
        self.leave(Self::client_bit(k));
        // Only the dead client used its response channel's name.
        if token != 0 && !self.resp_prefix.is_empty() {
            Segment::unlink(&format!("{}{token:016x}", self.resp_prefix));
        }
        self.client_word(k, C_TOKEN).store(0, Ordering::Release);
    }

    /// Live server places (reclaiming dead ones first).
    pub(crate) fn live_servers(&self) -> u32 {
        self.reclaim_dead();
        self.server_places().count_ones()
    }
}
