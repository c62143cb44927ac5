//! What one run of `rpc` measures, in which order, with which counts.
//!
//! A run is `rounds` rounds, each pinned and/or unpinned. In a round, at each
//! payload size, every system runs one session (its own server process): the
//! latency calls, then the stress calls, and at [`IN_FLIGHT_SIZE`] the paced
//! points. The systems' order is reversed in odd rounds so that none always goes
//! first. Each round ends with the targets' references: the horus topic round
//! trip at 16 B, the futex wake reference, and horus calls in touch mode at 64 B
//! and 1 MiB. A session that fails is recorded as an error and the run goes on.

use horus_bench::floors;
use horus_bench::harness::{Config, Mode};
use horus_bench::payload::Touch;
use horus_bench::pubsub::horus::{self as horus_peer, Wait};
use horus_bench::report::size as size_label;
use horus_bench::suite::Run;

use horus_bench::rpc::rows::{Kind, RpcRow, TOPIC, WAKE};
use horus_bench::rpc::{Measured, Spec, System, IN_FLIGHT_SIZE, SIZES, STRESS_WINDOW};

/// Sizes of the touch-mode target (1 MiB by loan against 64 B).
pub const TOUCH_SIZES: [usize; 2] = [64, 1048576];

/// The counts of one run.
#[derive(Debug, Clone)]
pub struct Plan {
    /// Rounds.
    pub rounds: usize,
    /// Pinned and/or unpinned passes of each round.
    pub pinnings: Vec<bool>,
    /// Systems measured.
    pub systems: Vec<System>,
    /// Payload sizes.
    pub sizes: Vec<usize>,
    /// CPUs of client and server when pinned.
    pub cpus: [usize; 2],
    /// A `--quick` run.
    pub quick: bool,
}

impl Plan {
    /// What one session at `size` measures.
    pub fn spec(&self, size: usize, touch: Touch) -> Spec {
        let q = self.quick;
        let pick = |full: u64, quick: u64| if q { quick } else { full };
        let (calls, stress) = match size {
            s if s <= 4096 => (pick(2000, 100), pick(5000, 200)),
            s if s <= 65536 => (pick(500, 50), pick(1000, 50)),
            _ => (pick(100, 20), pick(100, 16)),
        };
        Spec {
            size,
            touch,
            warmup: pick(200, 20),
            calls,
            stress_calls: if touch == Touch::Full { stress } else { 0 },
            paced_calls: if touch == Touch::Full && size == IN_FLIGHT_SIZE {
                pick(400, 40)
            } else {
                0
            },
        }
    }

    /// The method statement of the counts.
    pub fn describe(&self) -> String {
        let s = |size| self.spec(size, Touch::Full);
        let (small, mid, big) = (s(64), s(65536), s(1048576));
        format!(
            "{} round(s), {}; per session: {} warm-up calls, then {} timed calls (64 KiB: {}, \
             1 MiB: {}); stress {} calls (64 KiB: {}, 1 MiB: {}) with {STRESS_WINDOW} in flight; \
             in-flight table {} calls per point",
            self.rounds,
            match self.pinnings[..] {
                [true] => "pinned only".to_owned(),
                [false] => "unpinned only".to_owned(),
                _ => "each round pinned then unpinned".to_owned(),
            },
            small.warmup,
            small.calls,
            mid.calls,
            big.calls,
            small.stress_calls,
            mid.stress_calls,
            big.stress_calls,
            small.paced_calls
        )
    }
}

/// Runs `f`, turning a panic (a peer library's, say) into an error, so that one
/// failing system never ends the run.
fn guarded<T>(f: impl FnOnce() -> anyhow::Result<T>) -> anyhow::Result<T> {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)) {
        Ok(r) => r,
        Err(panic) => {
            let msg = panic
                .downcast_ref::<String>()
                .map(String::as_str)
                .or_else(|| panic.downcast_ref::<&str>().copied())
                .unwrap_or("(no message)");
            anyhow::bail!("panicked: {msg}")
        }
    }
}

fn label(pinned: bool) -> &'static str {
    if pinned {
        "pinned"
    } else {
        "unpinned"
    }
}

fn push_session(run: &mut Run<RpcRow>, base: &RpcRow, system: System, spec: &Spec, m: Measured) {
    let row = |kind, in_flight, rtt, calls_per_sec| RpcRow {
        kind,
        system: system.name().to_owned(),
        size: spec.size,
        in_flight,
        touch: spec.touch,
        rtt,
        calls_per_sec,
        ..base.clone()
    };
    run.push(row(Kind::Latency, 1, m.latency, None));
    if let Some(rate) = m.stress {
        run.push(row(Kind::Stress, STRESS_WINDOW, None, Some(rate)));
    }
    for (k, s) in m.paced {
        run.push(row(Kind::InFlight, k, Some(s), None));
    }
}

/// One round, pinned or not: every system at every size, then the references.
pub fn round(plan: &Plan, run: &mut Run<RpcRow>, round: usize, pinned: bool) {
    let cpus = pinned.then_some(plan.cpus);
    let base = RpcRow {
        round,
        pinned,
        kind: Kind::Latency,
        system: String::new(),
        size: 0,
        in_flight: 1,
        touch: Touch::Full,
        rtt: None,
        calls_per_sec: None,
    };
    let mut order = plan.systems.clone();
    if round % 2 == 1 {
        order.reverse();
    }
    let tag = format!("{} round {round}", label(pinned));
    for &bytes in &plan.sizes {
        eprintln!("{tag}, {}:", size_label(bytes));
        for &system in &order {
            let spec = plan.spec(bytes, Touch::Full);
            let what = format!("{tag} {} {}", system.name(), size_label(bytes));
            if let Some(m) = run.measure(&what, || guarded(|| crate::run(system, &spec, cpus))) {
                push_session(run, &base, system, &spec, m);
            }
        }
    }
    eprintln!("{tag}, references:");
    if plan.systems.contains(&System::Horus) {
        for bytes in TOUCH_SIZES {
            let spec = plan.spec(bytes, Touch::Ends);
            let what = format!("{tag} horus touch {}", size_label(bytes));
            if let Some(m) =
                run.measure(&what, || guarded(|| crate::run(System::Horus, &spec, cpus)))
            {
                push_session(run, &base, System::Horus, &spec, m);
            }
        }
    }
    let spec = plan.spec(64, Touch::Full);
    let cfg = Config {
        warmup: spec.warmup,
        iterations: spec.calls,
        touch: Touch::Full,
        one_way_messages: 0,
        cpus: plan.cpus,
    };
    let reference = |kind, system: &str, size, s| RpcRow {
        kind,
        system: system.to_owned(),
        size,
        rtt: Some(s),
        ..base.clone()
    };
    if let Some(s) = run.measure(&format!("{tag} {TOPIC} 16"), || {
        guarded(|| horus_peer::round_trip(&cfg, 16, Mode::Loan, Wait::Poll, cpus))
    }) {
        run.push(reference(Kind::Topic, TOPIC, 16, s));
    }
    if let Some(s) = run.measure(&format!("{tag} {WAKE}"), || {
        guarded(|| floors::wake(&cfg, cpus))
    }) {
        run.push(reference(Kind::Wake, WAKE, 0, s));
    }
}

/// Every round of `plan`.
pub fn run_all(plan: &Plan, run: &mut Run<RpcRow>) {
    for k in 0..plan.rounds {
        for &pinned in &plan.pinnings {
            round(plan, run, k, pinned);
        }
    }
}

/// The sizes of a run (all of them unless narrowed).
pub fn default_sizes() -> Vec<usize> {
    SIZES.to_vec()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_panicking_session_is_an_error_with_its_message() {
        let e = guarded::<()>(|| panic!("peer library gave up")).unwrap_err();
        assert!(e.to_string().contains("peer library gave up"), "{e}");
        assert_eq!(guarded(|| Ok(7)).unwrap(), 7);
    }

    #[test]
    fn only_the_in_flight_size_has_paced_calls_and_touch_mode_only_latency() {
        let plan = Plan {
            rounds: 1,
            pinnings: vec![true],
            systems: System::ALL.to_vec(),
            sizes: default_sizes(),
            cpus: [0, 1],
            quick: true,
        };
        assert!(plan.spec(IN_FLIGHT_SIZE, Touch::Full).paced_calls > 0);
        assert_eq!(plan.spec(1048576, Touch::Full).paced_calls, 0);
        let touch = plan.spec(64, Touch::Ends);
        assert_eq!((touch.stress_calls, touch.paced_calls), (0, 0));
        assert!(plan.describe().contains("pinned only"));
    }
}
