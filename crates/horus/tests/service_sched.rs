//! Services on the scheduler (issue 9, item 6): a server node is event
//! driven (ticked when a request arrives), and a periodic node calls a
//! service without blocking its tick (`call_async`, then `try_result` on
//! later ticks). Behaviour only.

use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use horus::prelude::*;
use horus::PendingCall;

horus::message! {
    /// Two numbers to add.
    pub struct Add: "horus-test/SchedAdd", version 1 {
        /// First term.
        pub a: i64,
        /// Second term.
        pub b: i64,
    }
}

horus::message! {
    /// Their sum.
    pub struct Sum: "horus-test/SchedSum", version 1 {
        /// a + b.
        pub sum: i64,
    }
}

fn unique_ns(tag: &str) -> String {
    static N: AtomicU32 = AtomicU32::new(0);
    format!(
        "test-svcsched-{tag}-{}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    )
}

#[derive(Default)]
struct Counts {
    server_ticks: AtomicU64,
    served: AtomicU64,
    caller_ticks: AtomicU64,
    /// Caller ticks that found the call still in flight (and returned).
    in_flight_ticks: AtomicU64,
    results: AtomicU64,
}

/// Answers one request per tick.
struct Adder {
    server: Server<Add, Sum>,
    counts: Arc<Counts>,
}

impl Node for Adder {
    fn tick(&mut self, _ctx: &TickContext<'_>) -> Result<(), NodeError> {
        self.counts.server_ticks.fetch_add(1, Ordering::Relaxed);
        if let Some(req) = self.server.try_recv() {
            let sum = req.a + req.b;
            req.reply(&Sum { sum }).expect("client alive");
            self.counts.served.fetch_add(1, Ordering::Relaxed);
        }
        Ok(())
    }
}

/// Keeps one call in flight: starts it, then polls it on later ticks
/// without ever waiting; stops the scheduler after `want` results.
struct Caller {
    client: Client<Add, Sum>,
    pending: Option<(i64, PendingCall<Sum>)>,
    next: i64,
    want: u64,
    counts: Arc<Counts>,
}

impl Node for Caller {
    fn tick(&mut self, ctx: &TickContext<'_>) -> Result<(), NodeError> {
        self.counts.caller_ticks.fetch_add(1, Ordering::Relaxed);
        match self.pending.take() {
            None => {
                let call = self
                    .client
                    .call_async(&Add { a: self.next, b: 1 })
                    .expect("server up");
                self.pending = Some((self.next, call));
                self.next += 1;
            }
            Some((a, mut call)) => match call.try_result() {
                None => {
                    self.counts.in_flight_ticks.fetch_add(1, Ordering::Relaxed);
                    self.pending = Some((a, call));
                }
                Some(result) => {
                    assert_eq!(result.expect("answered").sum, a + 1);
                    let n = self.counts.results.fetch_add(1, Ordering::Relaxed) + 1;
                    if n >= self.want {
                        ctx.request_stop();
                    }
                }
            },
        }
        Ok(())
    }
}

#[test]
fn server_node_ticks_per_request_and_a_caller_node_never_blocks_its_tick() {
    const CALLS: u64 = 50;
    let ns = unique_ns("nodes");
    let service = Service::<Add, Sum>::builder("math/add")
        .namespace(&ns)
        .open()
        .unwrap();
    let server = service.server().unwrap();
    let ready = server.readiness();
    let counts = Arc::new(Counts::default());
    let mut sched = Scheduler::new()
        .namespace(&ns)
        .handle_signals(false)
        .publish_stats(false);
    sched
        .add(
            Adder {
                server,
                counts: counts.clone(),
            },
            NodeConfig::new().name("adder").event(ready),
        )
        .unwrap();
    sched
        .add(
            Caller {
                client: service.client().unwrap(),
                pending: None,
                next: 0,
                want: CALLS,
                counts: counts.clone(),
            },
            NodeConfig::new().name("caller").rate(200.hz()),
        )
        .unwrap();
    let reason = sched.run_for(Duration::from_secs(60)).unwrap();
    assert_eq!(reason, StopReason::Requested, "all calls answered");
    let c = &counts;
    assert_eq!(c.results.load(Ordering::Relaxed), CALLS);
    assert_eq!(c.served.load(Ordering::Relaxed), CALLS);
    // Event driven: one tick per request, no idle ticks.
    assert_eq!(c.server_ticks.load(Ordering::Relaxed), CALLS);
    // The caller's ticks start a call or poll one; none waited for an
    // answer (the answers arrive between its ticks).
    assert!(c.caller_ticks.load(Ordering::Relaxed) >= 2 * CALLS);
}
