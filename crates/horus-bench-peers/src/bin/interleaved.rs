//! `interleaved`: horus and each peer measured back to back, round after round, and
//! the per-round ratio of their median round trips (median and range over rounds).
//! Every "horus is faster" on the benchmark page is drawn from this table.
//!
//! ```text
//! cargo run --release -p horus-bench-peers --bin interleaved -- --quick --json /tmp/il.json
//! cargo run --release -p horus-bench-peers --bin interleaved -- --rounds 5 --peers iceoryx2
//! ```

use std::process::ExitCode;

use horus_bench::harness::Config;
use horus_bench::interleaved::{self, RoundRow, PAIRS};
use horus_bench::payload::Touch;
use horus_bench::pubsub::horus as horus_peer;
use horus_bench::pubsub::PubSub;
use horus_bench::report::size;
use horus_bench::suite::{self, list, number, Common, Run, COMMON_USAGE};
use horus_bench::tables;
use horus_bench_peers::{iceoryx2 as iceoryx2_peer, zenoh as zenoh_peer};

/// The full run's sizes: a command, a LaserScan frame, both sides of the inline/chunk
/// boundary (2 KiB), 64 KiB and 1 MiB.
const SIZES: &[usize] = &[16, 1480, 4096, 16384, 65536, 1048576];
/// `--quick` (the smoke test) keeps the four headline sizes.
const QUICK_SIZES: &[usize] = &[16, 1480, 65536, 1048576];
const ROUNDS: usize = 5;
const QUICK_ROUNDS: usize = 2;

fn main() -> ExitCode {
    suite::main_with(horus_bench_peers::CHILD_ROLES, run)
}

/// The peer whose rows are named `system` (every name in [`PAIRS`] and their
/// horus rows is known).
fn peer(system: &str) -> anyhow::Result<Box<dyn PubSub>> {
    horus_bench_peers::by_name(system).ok_or_else(|| anyhow::anyhow!("unknown system {system:?}"))
}

fn run(argv: Vec<String>) -> anyhow::Result<ExitCode> {
    let mut rounds = None;
    let mut sizes = None;
    let mut peers: Vec<&'static str> = Vec::new();
    let Some(common) = Common::parse(argv, |flag, value| {
        Ok(match flag {
            "--rounds" => {
                rounds = Some(number::<usize>(&value()?)?);
                true
            }
            "--sizes" => {
                sizes = Some(list(&value()?)?);
                true
            }
            "--peers" => {
                for p in value()?.split(',') {
                    let pair = interleaved::pair(p)
                        .ok_or_else(|| anyhow::anyhow!("--peers: unknown peer {p:?}"))?;
                    if !peers.contains(&pair.peer) {
                        peers.push(pair.peer);
                    }
                }
                true
            }
            _ => false,
        })
    })?
    else {
        println!(
            "interleaved — horus and each peer back to back, R rounds; the per-round ratio \
             horus/peer of median RTTs, its median and range\n\n\
             USAGE: interleaved [OPTIONS]\n\n{COMMON_USAGE}  \
             --rounds R         rounds (default {ROUNDS}; --quick: {QUICK_ROUNDS}); verdicts need >= {}\n  \
             --sizes A,B,...    payload sizes (default 16,1480,4096,16384,65536,1048576; --quick: 16,1480,65536,1048576)\n  \
             --peers P,...      iceoryx2 (against busy-poll horus), uds, zenoh-shm, zenoh \
             (against blocking horus); default all\n",
            interleaved::MIN_ROUNDS_FOR_VERDICT
        );
        return Ok(ExitCode::SUCCESS);
    };
    let rounds = rounds.unwrap_or(if common.quick { QUICK_ROUNDS } else { ROUNDS });
    anyhow::ensure!(rounds >= 1, "--rounds must be at least 1");
    let sizes = sizes.unwrap_or_else(|| if common.quick { QUICK_SIZES } else { SIZES }.to_vec());
    if peers.is_empty() {
        peers = PAIRS.iter().map(|p| p.peer).collect();
    }
    // The horus rows the selected peers need, then the peers, in PAIRS order.
    let mut horus: Vec<&'static str> = Vec::new();
    for p in PAIRS.iter().filter(|p| peers.contains(&p.peer)) {
        if !horus.contains(&p.horus) {
            horus.push(p.horus);
        }
    }
    let cfg = Config {
        warmup: common.warmup(500, 20),
        iterations: common.iters(5_000, 200),
        touch: Touch::Full,
        one_way_messages: 0,
        cpus: common.cpus,
    };
    let [a, b] = cfg.cpus;
    let mut method = vec![
        format!(
            "interleaved rounds: {rounds} rounds; in each round, at each size, horus and every \
             selected peer are measured back to back (horus first in even rounds, the peers \
             first in odd rounds); per round and size, ratio = horus median RTT / peer median \
             RTT; reported: median and min–max of the per-round ratios; a verdict (\"horus \
             faster in every round\") only from at least {} rounds and only if the largest ratio \
             is below 1",
            interleaved::MIN_ROUNDS_FOR_VERDICT
        ),
        format!(
            "each measurement: the ping-pong of `peers` (A writes every byte of message seq and \
             sends it; B receives it, copies it into its reply and sends that; A receives the \
             reply and reads every byte; RTT = A's send to A's receipt), round trip, A pinned to \
             CPU {a}, B (a separate process) to CPU {b}; {} warm-up + {} timed round trips",
            cfg.warmup, cfg.iterations
        ),
        "pairs, each waiting the same way: horus loan busy-poll (try_recv spin) vs iceoryx2 \
         loan busy-poll; horus loan blocking (futex recv, no spinning) vs the Unix socket \
         (copy, blocking read), Zenoh shm (loan, blocking) and Zenoh tcp (copy, blocking)"
            .to_owned(),
        format!("horus: {}", horus_peer::SETTINGS),
        format!("iceoryx2 0.10 (crate): {}", iceoryx2_peer::SETTINGS),
        format!(
            "zenoh {} (crate): {}; pinned per thread: only A's measuring thread",
            zenoh_peer::VERSION,
            zenoh_peer::SETTINGS
        ),
    ];
    method.extend(suite::method_common());
    let mut run = Run::<RoundRow>::start("interleaved", &common, method);
    for round in 0..rounds {
        eprintln!("round {}/{rounds}:", round + 1);
        for &bytes in &sizes {
            let mut order: Vec<&'static str> = Vec::new();
            if round % 2 == 0 {
                order.extend(&horus);
                order.extend(&peers);
            } else {
                order.extend(&peers);
                order.extend(&horus);
            }
            for (k, system) in order.into_iter().enumerate() {
                let peer = peer(system)?;
                let what = format!("round {round} {system} {}", size(bytes));
                let measured = run.measure(&what, || peer.round_trip(&cfg, bytes, Some(cfg.cpus)));
                if let Some(s) = measured {
                    let wait = if peer.busy_polls() {
                        "busy-poll"
                    } else {
                        "blocking"
                    };
                    run.push(RoundRow {
                        round,
                        order: k,
                        system: system.to_owned(),
                        size: bytes,
                        mode: peer.mode(),
                        wait: wait.to_owned(),
                        pinned: true,
                        rtt: s,
                    });
                }
            }
        }
    }
    let comparisons = interleaved::compare(run.rows());
    let mut text = format!(
        "per-round ratio horus / peer of median RTT over {rounds} rounds\n{}",
        tables::interleaved(&comparisons).to_text()
    );
    for claim in interleaved::claims(&comparisons) {
        text.push_str(&format!("{}\n", claim.replace("**", "")));
    }
    run.finish(&text)
}
