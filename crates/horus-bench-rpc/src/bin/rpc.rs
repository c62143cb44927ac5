//! `rpc`: request/response calls between two processes — horus services (busy-poll
//! and blocking) beside iceoryx2's request/response, Zenoh queryables and gRPC
//! (tonic, TCP loopback and Unix socket), in the same run, interleaved in rounds.
//! Three tables (latency versus payload, calls per second versus payload, latency
//! versus calls in flight at 1 kHz), ratios horus ÷ each peer, and the service
//! latency targets with PASS/MISS.
//!
//! ```text
//! cargo run --release -p horus-bench-rpc --bin rpc -- --quick --json /tmp/rpc.json
//! cargo run --release -p horus-bench-rpc --bin rpc -- --rounds 3 --pinned-only
//! ```

use std::process::ExitCode;

use horus_bench::pubsub::horus as horus_peer;
use horus_bench::rpc::rows::RpcRow;
use horus_bench::rpc::{self, horus_rpc, tables, targets, System};
use horus_bench::suite::{self, list, number, Common, Run, COMMON_USAGE};
use horus_bench_peer_zenoh::pubsub as zenoh_peer;
use horus_bench_rpc::plan::{self, Plan};
use horus_bench_rpc::{grpc, iceoryx2_rpc, zenoh_rpc};

const ROUNDS: usize = 3;
const QUICK_ROUNDS: usize = 1;

fn main() -> ExitCode {
    suite::main_with(&[horus_bench_rpc::CHILD_ROLES], run)
}

fn usage() {
    println!(
        "rpc — request/response calls: horus services beside iceoryx2, Zenoh queryables and gRPC\n\n\
         USAGE: rpc [OPTIONS]\n\n{COMMON_USAGE}  \
         --rounds N         rounds (default {ROUNDS}; --quick: {QUICK_ROUNDS})\n  \
         --pinned-only      only the pinned pass of each round (default: pinned, then unpinned)\n  \
         --systems S,...    {} (default all)\n  \
         --sizes A,B,...    payload sizes (default 64,512,1024,2048,4096,65536,1048576)\n",
        System::ALL.map(System::name).join(", ")
    );
}

fn method(plan: &Plan) -> Vec<String> {
    let [a, b] = plan.cpus;
    let mut m = vec![
        format!(
            "every call is a round trip: the client writes every byte of request seq and sends \
             it; the server (a separate process) reads every byte, writes every byte of a \
             response of the same size carrying seq, and sends it; the client reads every byte \
             of the response and checks seq; latency = the client's start of the call to its \
             receipt of the response. Pinned: client on CPU {a}, server process on CPU {b}; \
             unpinned: left to the scheduler"
        ),
        format!(
            "interleaved rounds: {}; in each round, at each payload size, every system runs \
             one session with its own server process (order reversed in odd rounds); every \
             value is the median over rounds of that round's statistic with its [min–max]",
            plan.describe()
        ),
        format!(
            "stress: one client keeps {} calls in flight (for every system, each allows it: \
             horus and iceoryx2 pending calls, Zenoh concurrent gets, gRPC concurrent HTTP/2 \
             streams); the next call starts as soon as the oldest completes; one server \
             answers in order",
            rpc::STRESS_WINDOW
        ),
        format!(
            "in flight: {} B calls at a total rate of {} calls/s; every k ms the client starts \
             k calls back to back, then completes them in order (k = 1, 2, 4, 8); latency from \
             just before a call's start to its completion; the client sleeps between bursts",
            rpc::IN_FLIGHT_SIZE,
            rpc::CALL_RATE_HZ
        ),
        "waiting: horus (busy-poll) and iceoryx2 spin on both sides; horus (blocking), Zenoh \
         and gRPC block in the kernel (futex, epoll) on both sides (horus blocking polls 64 \
         times before its futex sleep, so a fast answer is caught without sleeping)"
            .to_owned(),
        "copy or loan: horus and iceoryx2 loan — requests and responses are written in place \
         in shared memory and read where they were written (horus up to 512 B: written into a \
         staging buffer and copied into the ring slot with the 32-byte header, read by a copy \
         out of the slot; 513 B–2 KiB: written in place, the body copied out of its chunk by \
         the receiver, which releases the chunk at once); Zenoh copies (Vec<u8> payloads over TCP, shared memory off); gRPC \
         copies (protobuf encoding into HTTP/2 frames and decoding into a Vec<u8>)"
            .to_owned(),
        format!("horus services: {}", horus_rpc::SETTINGS),
        format!(
            "iceoryx2 0.10 (crate) request/response: {}",
            iceoryx2_rpc::SETTINGS
        ),
        format!(
            "zenoh {} (crate) queryables: {}",
            zenoh_peer::VERSION,
            zenoh_rpc::SETTINGS
        ),
        format!("gRPC: {}", grpc::SETTINGS),
        format!(
            "target references, same rounds: horus topic round trip at 16 B (loan, busy-poll; {}); \
             ref:wake = two threads waking each other with FUTEX_WAKE, each sleeping in \
             FUTEX_WAIT; touch mode = horus calls (busy-poll) writing and reading only the first \
             and last 8 bytes of each payload, at 64 B and 1 MiB (1 MiB by loan: request and \
             response written and read in place in shared memory)",
            horus_peer::SETTINGS
        ),
    ];
    m.extend(suite::method_common());
    m
}

fn run(argv: Vec<String>) -> anyhow::Result<ExitCode> {
    let mut rounds = None;
    let mut pinned_only = false;
    let mut systems: Vec<System> = Vec::new();
    let mut sizes = None;
    let Some(common) = Common::parse(argv, |flag, value| {
        Ok(match flag {
            "--rounds" => {
                rounds = Some(number::<usize>(&value()?)?);
                true
            }
            "--pinned-only" => {
                pinned_only = true;
                true
            }
            "--systems" => {
                for s in value()?.split(',') {
                    systems.push(System::parse(s)?);
                }
                true
            }
            "--sizes" => {
                sizes = Some(list::<usize>(&value()?)?);
                true
            }
            _ => false,
        })
    })?
    else {
        usage();
        return Ok(ExitCode::SUCCESS);
    };
    let rounds = rounds.unwrap_or(if common.quick { QUICK_ROUNDS } else { ROUNDS });
    anyhow::ensure!(rounds >= 1, "--rounds must be at least 1");
    let sizes = sizes.unwrap_or_else(plan::default_sizes);
    anyhow::ensure!(
        sizes.iter().all(|&s| s >= 64),
        "--sizes: payloads of at least 64 B"
    );
    if systems.is_empty() {
        systems = System::ALL.to_vec();
    }
    let plan = Plan {
        rounds,
        pinnings: if pinned_only {
            vec![true]
        } else {
            vec![true, false]
        },
        systems,
        sizes,
        cpus: common.cpus,
        quick: common.quick,
    };
    let mut run = Run::<RpcRow>::start("rpc", &common, method(&plan));
    plan::run_all(&plan, &mut run);
    let text = report(run.rows(), &plan, run.errors());
    run.finish(&text)
}

fn report(rows: &[RpcRow], plan: &Plan, errors: &[String]) -> String {
    let mut out = String::new();
    for &pinned in &plan.pinnings {
        let pin = if pinned { "pinned" } else { "unpinned" };
        out.push_str(&format!(
            "\n1. call latency versus payload, one call in flight ({pin})\n{}",
            tables::latency(rows, &plan.systems, errors, pinned).to_text()
        ));
        out.push_str(&format!(
            "\n2. calls per second versus payload, stress ({pin})\n{}",
            tables::stress(rows, &plan.systems, errors, pinned).to_text()
        ));
        out.push_str(&format!(
            "\n3. latency versus calls in flight at {} calls/s ({pin})\n{}",
            rpc::CALL_RATE_HZ,
            tables::in_flight(rows, &plan.systems, errors, pinned).to_text()
        ));
        out.push_str(&format!(
            "\nratios horus ÷ peer ({pin})\n{}",
            tables::ratios(rows, &plan.systems, pinned).to_text()
        ));
    }
    if plan.pinnings.contains(&true) {
        out.push_str(&format!(
            "\nservice latency targets (pinned, median over rounds)\n{}",
            targets::table(&targets::targets(rows)).to_text()
        ));
    }
    if !errors.is_empty() {
        out.push_str("\nfailed measurements (their cells say \"failed\"):\n");
        for e in errors {
            out.push_str(&format!("  {e}\n"));
        }
    }
    out
}
