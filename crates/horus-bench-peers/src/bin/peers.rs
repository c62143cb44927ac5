//! `peers`: the same ping-pong, in the same run, for horus (busy-poll and blocking),
//! iceoryx2, Zenoh (TCP and shared memory), a Unix-domain socket, the hardware floor
//! and the references, side by side; every column says how its receivers wait.
//!
//! ```text
//! cargo run --release -p horus-bench-peers --bin peers -- --quick --json /tmp/peers.json
//! ```

use std::process::ExitCode;

use horus_bench::floors;
use horus_bench::harness::{Config, Mode};
use horus_bench::payload::Touch;
use horus_bench::pubsub::horus::{self as horus_peer, HorusTopic, Wait};
use horus_bench::pubsub::uds::{self, UnixSocket};
use horus_bench::pubsub::PubSub;
use horus_bench::report::{size, Row};
use horus_bench::stats::Summary;
use horus_bench::suite::{self, list, Common, Run, COMMON_USAGE};
use horus_bench::tables;
use horus_bench_peers::iceoryx2::{self as iceoryx2_peer, Iceoryx2PubSub};
use horus_bench_peers::zenoh::{self as zenoh_peer, Pinning, Transport, ZenohPubSub};

/// 16 B, the sweep sizes, a LaserScan frame.
const SIZES: &[usize] = &[16, 64, 256, 1024, 1480, 4096, 16384, 65536, 262144, 1048576];
const QUICK_SIZES: &[usize] = &[16, 1480, 65536, 1048576];
/// How Zenoh is pinned by default: only A's measuring thread, Zenoh's runtime threads
/// left to the scheduler. On the 2-CPU reference machine this gave Zenoh a slightly
/// lower median at small sizes than pinning whole processes, and the same at 64 KiB
/// (`--zenoh-pinning processes` for the other way).
const ZENOH_PINNING: Pinning = Pinning::Threads;
const SYSTEMS: &[&str] = &["ref", "uds", "iceoryx2", "zenoh", "zenoh-shm", "horus"];

fn main() -> ExitCode {
    suite::main_with(horus_bench_peers::CHILD_ROLES, run)
}

fn run(argv: Vec<String>) -> anyhow::Result<ExitCode> {
    let mut sizes = None;
    let mut only: Vec<String> = Vec::new();
    let mut zenoh_pinning = ZENOH_PINNING;
    let Some(common) = Common::parse(argv, |flag, value| {
        Ok(match flag {
            "--sizes" => {
                sizes = Some(list(&value()?)?);
                true
            }
            "--zenoh-pinning" => {
                zenoh_pinning = Pinning::parse(&value()?)?;
                true
            }
            "--only" => {
                for s in value()?.split(',') {
                    anyhow::ensure!(SYSTEMS.contains(&s), "--only: unknown system {s:?}");
                    only.push(s.to_owned());
                }
                true
            }
            _ => false,
        })
    })?
    else {
        println!(
            "peers — horus beside iceoryx2, Zenoh, a Unix socket, the hardware floor and references\n\n\
             USAGE: peers [OPTIONS]\n\n{COMMON_USAGE}  \
             --sizes A,B,...    payload sizes (default 16,64,256,1024,1480,4096,16384,65536,262144,1048576)\n  \
             --only S,...       only these: ref (floor + references), uds, iceoryx2, zenoh, zenoh-shm, horus\n  \
             --zenoh-pinning P  threads (default: only A's measuring thread is pinned) or processes \
             (each Zenoh process, runtime threads included, on its CPU)\n"
        );
        return Ok(ExitCode::SUCCESS);
    };
    let sizes = sizes.unwrap_or_else(|| if common.quick { QUICK_SIZES } else { SIZES }.to_vec());
    let cfg = Config {
        warmup: common.warmup(1_000, 30),
        iterations: common.iters(10_000, 300),
        touch: Touch::Full,
        one_way_messages: 0,
        cpus: common.cpus,
    };
    let runs = |s: &str| only.is_empty() || only.iter().any(|o| o == s);
    let [a, b] = cfg.cpus;
    let mut method =
        vec![
        format!(
            "the same ping-pong for every system, in one run: A writes every byte of message seq \
             and sends it; B receives it, copies it into its reply and sends that; A receives \
             the reply and reads every byte; RTT = A's send to A's receipt. A pinned to CPU {a}, \
             B (a separate process; floor and references: a thread) to CPU {b}. {} warm-up + {} timed round \
             trips per system and size.",
            cfg.warmup, cfg.iterations
        ),
        "floor: cache line = two threads handing one 64-byte line back and forth, spinning (the \
         hardware floor: two line transfers, which any cross-core round trip needs). The \
         references are not lower bounds (a transport can beat them, and horus has at some \
         sizes): ref: touch = the same handoff plus the payload written and read in place in \
         two reused buffers (what the user of a zero-copy transport does); ref: copy = the same \
         plus three memcpys"
            .to_owned(),
        format!(
            "horus: two rows per wait: busy-poll (loan, copy) and blocking (loan; futex recv, \
             no spinning, on both sides); loan = written in place, copy = send_ref/copy out; {}",
            horus_peer::SETTINGS
        ),
        format!(
            "iceoryx2 0.10 (crate): busy-poll receive(); {}",
            iceoryx2_peer::SETTINGS
        ),
        format!(
            "zenoh {} (crate): {}; pinned {}",
            zenoh_peer::VERSION,
            zenoh_peer::SETTINGS,
            match zenoh_pinning {
                Pinning::Processes => "per process: A's and B's processes, Zenoh's runtime \
                                       threads included, each on its CPU",
                Pinning::Threads => "per thread: only A's measuring thread; Zenoh's threads \
                                     unpinned",
            }
        ),
        format!("unix socket: {}", uds::SETTINGS),
    ];
    method.extend(suite::method_common());
    let mut run = Run::<Row>::start("peers", &common, method);
    let pinned = Some(cfg.cpus);
    let rtt = |system: &str, s: Option<usize>, mode: Mode, sum: Summary| {
        Row::round_trip(system, s, mode, Some(Touch::Full), true, sum)
    };
    if runs("ref") {
        if let Some(s) = run.measure("floor:cacheline", || floors::cacheline(&cfg, pinned)) {
            let mut r = rtt("floor:cacheline", None, Mode::Reference, s);
            r.payload = None;
            run.push(r);
        }
    }
    // The peers in row order; each size measures all of them.
    let mut systems: Vec<Box<dyn PubSub>> = Vec::new();
    if runs("horus") {
        for mode in [Mode::Loan, Mode::Copy] {
            systems.push(Box::new(HorusTopic {
                mode,
                wait: Wait::Poll,
            }));
        }
        // The blocking row, beside the blocking peers (Zenoh, the Unix socket).
        systems.push(Box::new(HorusTopic {
            mode: Mode::Loan,
            wait: Wait::Futex,
        }));
    }
    if runs("iceoryx2") {
        systems.push(Box::new(Iceoryx2PubSub));
    }
    for transport in [Transport::Shm, Transport::Tcp] {
        if runs(transport.system()) {
            systems.push(Box::new(ZenohPubSub {
                transport,
                pinning: zenoh_pinning,
            }));
        }
    }
    if runs("uds") {
        systems.push(Box::new(UnixSocket));
    }
    for &bytes in &sizes {
        eprintln!("{}:", size(bytes));
        let measure = |run: &mut Run<Row>,
                       system: &str,
                       mode: Mode,
                       f: &dyn Fn() -> anyhow::Result<Summary>| {
            if let Some(s) = run.measure(&format!("{system} {} {}", mode.label(), size(bytes)), f) {
                run.push(rtt(system, Some(bytes), mode, s));
            }
        };
        if runs("ref") {
            measure(&mut run, "ref:touch", Mode::Reference, &|| {
                floors::touch(&cfg, bytes, pinned)
            });
            measure(&mut run, "ref:copy", Mode::Reference, &|| {
                floors::copy(&cfg, bytes, pinned)
            });
        }
        for peer in &systems {
            measure(&mut run, peer.name(), peer.mode(), &|| {
                peer.round_trip(&cfg, bytes, pinned)
            });
        }
    }
    let rows = run.rows();
    let sizes = tables::peer_sizes(rows);
    let mut text = format!(
        "median RTT, pinned, same run\n{}\nhorus / peer with the same kind of wait, ratio of medians\n{}",
        tables::peers_side_by_side(rows, &sizes).to_text(),
        tables::peers_ratios(rows, &sizes).to_text()
    );
    let losses = tables::peers_losses(rows, &sizes);
    if !losses.is_empty() {
        text.push_str("\nwhere a middleware's median was below horus's (same wait, this run):\n");
        for l in losses {
            text.push_str(&format!("  {l}\n"));
        }
    }
    run.finish(&text)
}
