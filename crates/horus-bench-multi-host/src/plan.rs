//! What one run measures and in which order: rounds, each with a pinned and an
//! unpinned pass; in each pass every system (order reversed in odd rounds) runs
//! the channel table, the ping-pong, throughput and service sweeps and the
//! impaired rows in one session of its two host processes.

use anyhow::Context;
use horus_netns::TwoHosts;

use super::horus_system;
use super::rows::{Impairment, Kind, MhRow};
use super::session::Session;
use super::{
    Channel, Exchange, Flood, SystemName, CHANNEL_SIZES, IMPAIRED_SIZES, RATE_HZ, SWEEP_SIZES,
    TOPIC_COUNTS,
};
use horus_bench_core::harness::unique_id;
use horus_bench_core::suite::Run;

/// First port host A listens on; each session takes the next.
const BASE_PORT: u16 = 17447;

/// A part of a pass (`--only`): one of the four groups of cells.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Part {
    /// The channel table.
    Channel,
    /// Round trip, throughput and service sweeps.
    Sweeps,
    /// The impaired rows (1 % loss, 100 Mbit/s cap).
    Impaired,
}

impl Part {
    /// Inverse of the `--only` spelling.
    pub fn parse(s: &str) -> anyhow::Result<Part> {
        match s {
            "channel" => Ok(Part::Channel),
            "sweeps" => Ok(Part::Sweeps),
            "impaired" => Ok(Part::Impaired),
            _ => anyhow::bail!("unknown part {s:?} (channel, sweeps, impaired)"),
        }
    }
}

/// What one run measures.
#[derive(Debug, Clone)]
pub struct Plan {
    /// Rounds.
    pub rounds: usize,
    /// Passes of each round: `true` = pinned.
    pub pinnings: Vec<bool>,
    /// Systems, in table order.
    pub systems: Vec<SystemName>,
    /// CPUs of A and B when pinned.
    pub cpus: [usize; 2],
    /// `--quick`.
    pub quick: bool,
    /// Only this part of each pass (`--only`), else all of them.
    pub only: Option<Part>,
}

impl Plan {
    /// Whether `part` is measured.
    fn runs(&self, part: Part) -> bool {
        self.only.is_none_or(|p| p == part)
    }
}

impl Plan {
    /// How long each channel cell publishes, ms.
    pub fn channel_ms(&self) -> u64 {
        if self.quick {
            150
        } else {
            500
        }
    }

    /// How long each impaired cell publishes, ms.
    pub fn impaired_ms(&self) -> u64 {
        if self.quick {
            300
        } else {
            1000
        }
    }

    /// `(warm-up, timed)` exchanges of a ping-pong or service cell.
    pub fn exchanges(&self, size: usize) -> (u64, u64) {
        match (self.quick, size >= 65536) {
            (true, false) => (10, 100),
            (true, true) => (3, 20),
            (false, false) => (100, 1000),
            (false, true) => (20, 200),
        }
    }

    /// Messages of a throughput cell: a byte budget, within bounds.
    pub fn flood_count(&self, size: usize) -> u64 {
        let (budget, lo, hi) = if self.quick {
            (8 << 20, 20, 20_000)
        } else {
            (256 << 20, 200, 200_000)
        };
        ((budget / size.max(1)) as u64).clamp(lo, hi)
    }

    /// The counts, for the method text.
    pub fn describe(&self) -> String {
        let (w, n) = self.exchanges(16);
        let (wl, nl) = self.exchanges(1 << 20);
        let only = match self.only {
            None => String::new(),
            Some(Part::Channel) => " (only the channel table)".to_owned(),
            Some(Part::Sweeps) => {
                " (only the round trip, throughput and service sweeps)".to_owned()
            }
            Some(Part::Impaired) => " (only the impaired rows)".to_owned(),
        };
        format!(
            "{} round(s){only}, {}; channel cells publish for {} ms, impaired cells for {} ms; \
             ping-pong and service: {w} warm-up + {n} timed exchanges ({wl} + {nl} from 64 KiB); \
             throughput: {} messages at 16 B … {} at 1 MiB",
            self.rounds,
            if self.pinnings.len() == 2 {
                "pinned then unpinned"
            } else if self.pinnings == [true] {
                "pinned only"
            } else {
                "unpinned only"
            },
            self.channel_ms(),
            self.impaired_ms(),
            self.flood_count(16),
            self.flood_count(1 << 20),
        )
    }
}

/// One system in one pass: a session opened on demand and reopened after a failure.
struct Pass<'a> {
    plan: &'a Plan,
    hosts: &'a TwoHosts,
    system: SystemName,
    round: usize,
    pinned: bool,
    session: Option<Session>,
    port: &'a mut u16,
}

impl Pass<'_> {
    fn label(&self) -> String {
        format!(
            "round {} {} {}",
            self.round,
            if self.pinned { "pinned" } else { "unpinned" },
            self.system.name()
        )
    }

    fn row(&self, kind: Kind, size: usize) -> MhRow {
        MhRow::new(self.round, self.pinned, self.system, kind, size)
    }

    /// Runs one cell in the session (opening it if needed); a failure is recorded
    /// and closes the session.
    fn cell(
        &mut self,
        run: &mut Run<MhRow>,
        what: &str,
        f: impl FnOnce(&mut Session, MhRow) -> anyhow::Result<MhRow>,
        row: MhRow,
    ) {
        let what = format!("{} {what}", self.label());
        let outcome = run.measure(&what, || {
            if self.session.is_none() {
                let port = *self.port;
                *self.port = port.wrapping_add(1).max(BASE_PORT);
                let cpus = self.pinned.then_some(self.plan.cpus);
                self.session = Some(Session::open(self.system, self.hosts, cpus, port)?);
            }
            let session = self.session.as_mut().context("no session")?;
            f(session, row)
        });
        match outcome {
            Some(row) => run.push(row),
            None => self.session = None, // kills both hosts
        }
    }

    fn channel(&mut self, run: &mut Run<MhRow>, size: usize, topics: usize, imp: Impairment) {
        let duration_ms = match imp {
            Impairment::None => self.plan.channel_ms(),
            _ => self.plan.impaired_ms(),
        };
        let mut row = self.row(Kind::Channel, size);
        row.topics = topics;
        row.impairment = imp;
        let what = format!("channel {size} B × {topics} topic(s), link {}", imp.label());
        let (hosts, system) = (self.hosts, self.system);
        let cell = |s: &mut Session, mut row: MhRow| {
            let c = Channel {
                id: unique_id(),
                size,
                topics,
                rate_hz: RATE_HZ,
                duration_ms,
            };
            let impaired = impair(hosts, imp);
            let result = impaired.and_then(|()| s.channel(&c)).map_err(|e| {
                // What host A's bridge (still running: only a failed host stops) counted.
                match system {
                    SystemName::Horus => {
                        let ns = horus_system::host_namespace(std::process::id(), s.port(), "a");
                        e.context(horus_system::bridge_counters(&ns, "host A's", &c.id))
                    }
                    SystemName::Zenoh => e,
                }
            });
            let cleared = clear(hosts);
            let (p, r) = result?;
            cleared?;
            let sent: u64 = p.sent.iter().sum();
            let received: u64 = r.received.iter().sum();
            let secs = (p.end_ns.saturating_sub(p.start_ns)).max(1) as f64 / 1e9;
            row.latency = r.latency;
            row.sent = Some(sent);
            row.received = Some(received);
            row.loss = Some(sent.saturating_sub(received) as f64 / sent.max(1) as f64);
            row.out_of_order = Some(r.out_of_order);
            row.rate_hz = Some(p.sent.first().copied().unwrap_or(0) as f64 / secs);
            row.cpu_a_percent = Some(p.cpu.percent);
            row.cpu_b_percent = r.cpu.map(|c| c.percent);
            Ok(row)
        };
        self.cell(run, &what, cell, row);
    }

    fn exchange(&self, size: usize) -> Exchange {
        let (warmup, iterations) = self.plan.exchanges(size);
        Exchange {
            id: unique_id(),
            size,
            warmup,
            iterations,
        }
    }

    fn sweeps(&mut self, run: &mut Run<MhRow>, size: usize) {
        let e = self.exchange(size);
        let row = self.row(Kind::RoundTrip, size);
        self.cell(
            run,
            &format!("round trip {size} B"),
            |s, mut row| {
                row.latency = Some(s.round_trip(&e)?);
                Ok(row)
            },
            row,
        );
        let f = Flood {
            id: unique_id(),
            size,
            count: self.plan.flood_count(size),
        };
        let row = self.row(Kind::Throughput, size);
        self.cell(
            run,
            &format!("throughput {size} B"),
            |s, mut row| {
                let (start, sunk) = s.flood(&f)?;
                let secs = sunk.last_ns.saturating_sub(start).max(1) as f64 / 1e9;
                let rate = sunk.received as f64 / secs;
                row.sent = Some(f.count);
                row.received = Some(sunk.received);
                row.loss = Some(f.count.saturating_sub(sunk.received) as f64 / f.count as f64);
                row.msgs_per_sec = Some(rate);
                row.mb_per_sec = Some(rate * size as f64 / 1e6);
                Ok(row)
            },
            row,
        );
        let e = self.exchange(size);
        let row = self.row(Kind::Service, size);
        self.cell(
            run,
            &format!("service call {size} B"),
            |s, mut row| {
                row.latency = Some(s.call(&e)?);
                Ok(row)
            },
            row,
        );
    }

    fn close(&mut self, run: &mut Run<MhRow>) {
        if let Some(session) = self.session.take() {
            let what = format!("{} closing", self.label());
            run.measure(&what, || session.close());
        }
    }
}

fn impair(hosts: &TwoHosts, imp: Impairment) -> anyhow::Result<()> {
    for side in [horus_netns::Side::A, horus_netns::Side::B] {
        let h = hosts.host(side);
        match imp {
            Impairment::None => {}
            Impairment::Drop => h.impair_drop(super::drop_percent())?,
            Impairment::Cap => h.limit_rate(super::CAP_MBIT)?,
        }
    }
    Ok(())
}

fn clear(hosts: &TwoHosts) -> anyhow::Result<()> {
    for side in [horus_netns::Side::A, horus_netns::Side::B] {
        hosts.host(side).clear_impairments()?;
    }
    Ok(())
}

/// Runs the whole plan on `hosts`, recording rows and failures in `run`.
pub fn run_all(plan: &Plan, hosts: &TwoHosts, run: &mut Run<MhRow>) {
    let mut port = BASE_PORT;
    for round in 0..plan.rounds {
        for &pinned in &plan.pinnings {
            let mut systems = plan.systems.clone();
            if round % 2 == 1 {
                systems.reverse();
            }
            for system in systems {
                let mut pass = Pass {
                    plan,
                    hosts,
                    system,
                    round,
                    pinned,
                    session: None,
                    port: &mut port,
                };
                let what = format!("{} available", pass.label());
                if run
                    .measure(&what, || crate::system(system).available())
                    .is_none()
                {
                    continue;
                }
                if plan.runs(Part::Channel) {
                    for &topics in TOPIC_COUNTS {
                        for &size in CHANNEL_SIZES {
                            pass.channel(run, size, topics, Impairment::None);
                        }
                    }
                }
                if plan.runs(Part::Sweeps) {
                    for &size in SWEEP_SIZES {
                        pass.sweeps(run, size);
                    }
                }
                if plan.runs(Part::Impaired) {
                    for imp in [Impairment::Drop, Impairment::Cap] {
                        for &size in IMPAIRED_SIZES {
                            pass.channel(run, size, 1, imp);
                        }
                    }
                }
                pass.close(run);
            }
        }
    }
}
