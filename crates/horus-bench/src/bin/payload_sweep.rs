//! `payload_sweep`: the ping-pong of the industry reports, 64 B to 1 MiB — message
//! throughput, bandwidth and average/min/max/p99 round trip, copy and loan.
//!
//! ```text
//! cargo run --release -p horus-bench --bin payload_sweep -- --quick --json /tmp/ps.json
//! ```

use std::process::ExitCode;

use horus_bench::harness::{Config, Mode};
use horus_bench::payload::Touch;
use horus_bench::pubsub::horus::{self as horus_peer, Wait};
use horus_bench::report::size;
use horus_bench::rows::SweepRow;
use horus_bench::suite::{self, list, Common, Run, COMMON_USAGE};
use horus_bench::tables;

/// The sizes of the industry reports.
const SIZES: &[usize] = &[64, 256, 1024, 4096, 16384, 65536, 262144, 1048576];

fn main() -> ExitCode {
    suite::main(run)
}

fn run(argv: Vec<String>) -> anyhow::Result<ExitCode> {
    let mut sizes = SIZES.to_vec();
    let Some(common) = Common::parse(argv, |flag, value| {
        Ok(match flag {
            "--sizes" => {
                sizes = list(&value()?)?;
                true
            }
            _ => false,
        })
    })?
    else {
        println!(
            "payload_sweep — ping-pong of 64 B .. 1 MiB between two processes\n\n\
             USAGE: payload_sweep [OPTIONS]\n\n{COMMON_USAGE}  \
             --sizes A,B,...    payload sizes (default 64,256,1024,4096,16384,65536,262144,1048576)\n"
        );
        return Ok(ExitCode::SUCCESS);
    };
    let cfg = Config {
        warmup: common.warmup(1_000, 50),
        iterations: common.iters(10_000, 300),
        touch: Touch::Full,
        one_way_messages: 0,
        cpus: common.cpus,
    };
    let [a, b] = cfg.cpus;
    let mut method = vec![
        format!(
            "ping-pong between two processes (node A on CPU {a}, node B on CPU {b}, pinned), \
             busy-poll: A writes every byte of the message and sends it, B receives it and returns \
             the whole message, A receives and reads every byte; RTT = A's send to A's receipt \
             (never a send alone); {} warm-up + {} timed round trips per size",
            cfg.warmup, cfg.iterations
        ),
        "copy: send_ref of A's buffer / copy of the reply out; loan: written in place in a \
         loaned sample, reply loaned and filled by B (sizes <= 512 B travel inline in the ring, \
         larger ones in a pool chunk, zero copy)"
            .to_owned(),
        "message throughput = round trips / wall time of the measured loop; bandwidth = payload \
         size x message throughput / 2^20 (MiB/s, as the report computes its \"MB/s\"); \
         average/min/max/p99 over all round trips"
            .to_owned(),
        format!("horus: {}", horus_peer::SETTINGS),
    ];
    method.extend(suite::method_common());
    let mut run = Run::<SweepRow>::start("payload_sweep", &common, method);
    for &bytes in &sizes {
        for mode in [Mode::Copy, Mode::Loan] {
            let what = format!("{} {}", size(bytes), mode.label());
            if let Some(rtt) = run.measure(&what, || {
                horus_peer::round_trip(&cfg, bytes, mode, Wait::Poll, Some(cfg.cpus))
            }) {
                run.push(SweepRow {
                    size: bytes,
                    mode,
                    rtt,
                    msgs_per_sec: rtt.msgs_per_sec,
                    bandwidth_mib_s: bytes as f64 * rtt.msgs_per_sec / (1u64 << 20) as f64,
                });
            }
        }
    }
    let table = tables::sweep(run.rows()).to_text();
    run.finish(&table)
}
