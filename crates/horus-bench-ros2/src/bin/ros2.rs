//! `ros2`: the reference report's ROS 2 ping-pong (`std_msgs/msg/UInt8MultiArray`, 64 B to
//! 1 MiB; average, minimum and maximum round trip, msg/s, MB/s) for rclpy ↔ rclpy (Fast
//! DDS), horus Python ↔ horus Python, horus Rust ↔ horus Rust, and horus ↔ rclpy through
//! the `horus ros2` bridge in both directions, in one run of interleaved rounds; losses
//! counted by sequence number; the bridge target checked per round.
//!
//! ```text
//! cargo run --release -p horus-bench-ros2 --bin ros2 -- --quick --json /tmp/ros2.json
//! cargo run --release -p horus-bench-ros2 --bin ros2 -- --rounds 3
//! ```

use std::path::Path;
use std::process::ExitCode;
use std::time::Duration;

use horus_bench_core::affinity::available_cpus;
use horus_bench_core::suite::{self, list, number, Common, Run, COMMON_USAGE};
use horus_bench_ros2::discovery::DiscoveryRange;
use horus_bench_ros2::session::{self, Programs, Spec};
use horus_bench_ros2::table::{self, Row};
use horus_bench_ros2::targets;
use horus_bench_ros2::{
    bridge_child, netns, rust_end, System, BRIDGE_ROLE, CHILD_FLAG, GAVE_UP, MAX_LOST_IN_A_ROW,
    RUST_END_ROLE,
};

const SIZES: [usize; 8] = [64, 256, 1024, 4096, 16384, 65536, 262144, 1 << 20];
const QUICK_SIZES: [usize; 2] = [64, 65536];

fn main() -> ExitCode {
    let argv: Vec<String> = std::env::args().skip(1).collect();
    if argv.first().map(String::as_str) == Some(CHILD_FLAG) {
        let role = argv.get(1).cloned().unwrap_or_default();
        let rest = argv.get(2..).unwrap_or_default();
        let result = match role.as_str() {
            RUST_END_ROLE => rust_end::EndArgs::parse(rest).and_then(|a| rust_end::run(&a)),
            BRIDGE_ROLE => bridge_child::run(rest),
            other => Err(anyhow::anyhow!("unknown child role {other:?}")),
        };
        return match result {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("ros2 child {role}: {e:#}");
                ExitCode::FAILURE
            }
        };
    }
    suite::main_with(&[], run)
}

fn usage() {
    println!(
        "ros2 — ROS 2 ping-pong: rclpy, horus Python, horus Rust, and horus <-> rclpy through the bridge\n\n\
         USAGE: ros2 [OPTIONS]\n\n{COMMON_USAGE}  \
         --rounds N         interleaved rounds (default 3; --quick: 1)\n  \
         --systems S,...    {} (default all)\n  \
         --sizes A,B,...    data bytes (default 64,256,1024,4096,16384,65536,262144,1048576;\n                     \
         --quick: 64,65536)\n  \
         --unpinned         leave every process to the scheduler (default: ping on the first\n                     \
         CPU of --cpus, pong on the second, the bridge unpinned)\n  \
         --no-netns         do not move into a private network namespace (then DDS is kept\n                     \
         on loopback by ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST only)\n  \
         --ros-discovery-range localhost|system-default\n                     \
         ROS_AUTOMATIC_DISCOVERY_RANGE of every process (default: system-default\n                     \
         in the private namespace, with ROS_STATIC_PEERS=127.0.0.1 and no multicast\n                     \
         route: the profile's transports as declared, each datagram sent once;\n                     \
         localhost with --no-netns, and on request: rmw_fastrtps then adds its own\n                     \
         transports to the profile's and rclpy sends every datagram twice)\n  \
         --fastdds-default-buffers\n                     \
         run rclpy without the Fast DDS profile (default: every rclpy process,\n                     \
         rclpy <-> rclpy included, gets FASTDDS_DEFAULT_PROFILES_FILE=\n                     \
         ros2/fastdds-large-messages.xml: a 4 MiB UDP receive buffer)\n  \
         --fastdds-profile FILE\n                     \
         every rclpy process gets this Fast DDS profile instead (experiments)\n",
        System::ALL.map(System::name).join(", ")
    );
}

/// Timed round trips at `size` (each measurement about a second for rclpy).
fn count(common: &Common, size: usize) -> u64 {
    let full = match size {
        0..=16384 => 1000,
        16385..=65536 => 500,
        65537..=262144 => 200,
        _ => 100,
    };
    common.iters(full, 20)
}

fn method(
    cpus: Option<[usize; 2]>,
    netns: bool,
    discovery: DiscoveryRange,
    rounds: usize,
    timeout: Duration,
    fastdds_profile: Option<&Path>,
) -> Vec<String> {
    let pin = match cpus {
        Some([a, b]) => format!(
            "pinned: ping process on CPU {a}, pong process on CPU {b} (every thread of each, \
             pinned before it starts), the bridge process unpinned (a third process on a \
             two-CPU machine shares them)"
        ),
        None => "unpinned: every process left to the scheduler".to_owned(),
    };
    let mut m = vec![
        "round trip, blocking: ping writes every byte of a std_msgs/msg/UInt8MultiArray \
         (data = the payload size; seq in its first 8 bytes, every other byte seq & 0xff) and \
         publishes it; pong (another process) reads every byte (checksum) and publishes the \
         data back in a new message; ping reads every byte of the answer and checks seq; \
         RTT = ping's start of writing to its check of the answer. Both ends wait blocking \
         (rclpy spin_once; horus recv with timeout: polls, then the futex)"
            .to_owned(),
        pin,
        format!(
            "interleaved rounds: {rounds}; round r runs every system at every size (each \
             measurement with fresh processes: pong, then ping; bridged systems start the \
             bridge first), then round r+1; tables give the median over rounds of each \
             round's figure with [min–max]"
        ),
        "avg / min / max: of every timed round trip of the measurement (none discarded); \
         msg/s = timed round trips / wall time of the timed loop; MB/s = size × msg/s / 2^20 \
         (the reference report's definitions)"
            .to_owned(),
        format!(
            "losses: a round trip whose answer does not come within {:.0} s is counted lost \
             (and the next seq sent; after {MAX_LOST_IN_A_ROW} in a row the measurement \
             stops and is reported as an error); an answer to an earlier seq is counted stale; the bridge \
             reports its own drops (lost, refused, malformed, oversize) when it stops. Before \
             timing, ping resends every 0.2 s until the first answer (discovery; the bridge \
             opens its routes when it sees both sides), then untimed warm-up round trips",
            timeout.as_secs_f64()
        ),
        "rclpy: ROS 2 kilted PyPI wheels, rmw_fastrtps_cpp, RELIABLE keep-last 10, through \
         scripts/ros2-python; horus Python: horus.RosTopic (.venv), Overflow.block, depth 16; \
         horus Rust: Topic<Ros<UInt8MultiArray>> (horus-ros-msgs), Overflow::Block, depth 16; \
         the bridge: horus_ros2::Bridge (RustDDS, CDR bytes passed through), loopback only, \
         in its own process"
            .to_owned(),
        if netns {
            format!(
                "every process runs in a private network namespace with only lo up (DDS \
                 cannot leave the host){}",
                match discovery {
                    DiscoveryRange::SystemDefault =>
                        "; ROS_AUTOMATIC_DISCOVERY_RANGE=SYSTEM_DEFAULT and \
                         ROS_STATIC_PEERS=127.0.0.1 for every process, no multicast route \
                         (rmw_fastrtps uses the profile's transports as declared: rclpy sends \
                         each datagram once; the multicast copy Fast DDS would send to the \
                         bridge's readers' multicast locator has no route); the bridge's DDS on \
                         127.0.0.1",
                    DiscoveryRange::Localhost =>
                        "; ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST (--ros-discovery-range \
                         localhost: rmw_fastrtps appends its own shared-memory and UDPv4 \
                         transports to the profile's, so rclpy sends every datagram to the bridge \
                         twice; rclpy <-> rclpy moves data through shared memory either way)",
                }
            )
        } else {
            "no private network namespace: DDS kept on loopback by \
             ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST and the bridge's localhost_only"
                .to_owned()
        },
        match fastdds_profile {
            Some(p) => format!(
                "every rclpy process (rclpy <-> rclpy included) runs with \
                 FASTDDS_DEFAULT_PROFILES_FILE={} (by default the repository's \
                 ros2/fastdds-large-messages.xml: Fast DDS's default transports, shared \
                 memory and UDPv4, with a 4 MiB UDP receive buffer; net.core.rmem_max here: \
                 {}); --fastdds-default-buffers runs without a profile",
                p.display(),
                rmem_max()
            ),
            None => "rclpy with Fast DDS's default UDP buffers (--fastdds-default-buffers: no \
                     FASTDDS_DEFAULT_PROFILES_FILE; the receive buffer is \
                     net.core.rmem_default)"
                .to_owned(),
        },
    ];
    m.extend(suite::method_common());
    m
}

/// `net.core.rmem_max` (the kernel's cap on a requested receive buffer), as text.
fn rmem_max() -> String {
    std::fs::read_to_string("/proc/sys/net/core/rmem_max")
        .map(|s| s.trim().to_owned())
        .unwrap_or_else(|e| format!("unknown ({e})"))
}

fn run(argv: Vec<String>) -> anyhow::Result<ExitCode> {
    let mut rounds = None;
    let mut systems: Vec<System> = Vec::new();
    let mut sizes = None;
    let mut unpinned = false;
    let mut use_netns = true;
    let mut fastdds_default_buffers = false;
    let mut fastdds_profile: Option<std::path::PathBuf> = None;
    let mut discovery = None;
    let Some(common) = Common::parse(argv, |flag, value| {
        Ok(match flag {
            "--rounds" => {
                rounds = Some(number::<usize>(&value()?)?);
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
            "--unpinned" => {
                unpinned = true;
                true
            }
            "--no-netns" => {
                use_netns = false;
                true
            }
            "--fastdds-default-buffers" => {
                fastdds_default_buffers = true;
                true
            }
            "--fastdds-profile" => {
                fastdds_profile = Some(value()?.into());
                true
            }
            "--ros-discovery-range" => {
                discovery = Some(DiscoveryRange::parse(&value()?)?);
                true
            }
            _ => false,
        })
    })?
    else {
        usage();
        return Ok(ExitCode::SUCCESS);
    };
    let discovery = match (discovery, use_netns) {
        (Some(DiscoveryRange::SystemDefault), false) => anyhow::bail!(
            "--ros-discovery-range system-default needs the private network namespace (without \
             it, multicast discovery would reach the real interfaces): drop --no-netns"
        ),
        (Some(d), _) => d,
        (None, true) => DiscoveryRange::SystemDefault,
        (None, false) => DiscoveryRange::Localhost,
    };
    if use_netns {
        netns::enter_private_loopback()?;
    }
    let rounds = rounds.unwrap_or(if common.quick { 1 } else { 3 }).max(1);
    let sizes = sizes.unwrap_or_else(|| {
        if common.quick {
            QUICK_SIZES.to_vec()
        } else {
            SIZES.to_vec()
        }
    });
    if let Some(&big) = sizes.iter().find(|&&s| s > horus_bench_ros2::MAX_SIZE) {
        anyhow::bail!(
            "size {big} is over the largest, {}",
            horus_bench_ros2::MAX_SIZE
        );
    }
    if systems.is_empty() {
        systems = System::ALL.to_vec();
    }
    let cpus = (!unpinned && available_cpus() >= 2).then_some(common.cpus);
    let timeout = Duration::from_secs(if common.quick { 5 } else { 2 });
    let mut programs = Programs::from_build(discovery);
    if fastdds_default_buffers {
        programs.fastdds_profile = None;
    } else if let Some(p) = fastdds_profile {
        programs.fastdds_profile = Some(std::path::absolute(&p)?);
    }
    let mut run: Run<Row> = Run::start(
        "ros2",
        &common,
        method(
            cpus,
            use_netns,
            discovery,
            rounds,
            timeout,
            programs.fastdds_profile.as_deref(),
        ),
    );
    let mut runnable = Vec::new();
    for &system in &systems {
        match programs.missing(system) {
            None => runnable.push(system),
            Some(why) => {
                println!("skipped: {}: {why}", system.label());
            }
        }
    }
    let warmup = common.warmup(50, 5);
    let mut n = 0usize;
    for round in 0..rounds {
        eprintln!("round {} of {rounds}", round + 1);
        for &size in &sizes {
            for &system in &runnable {
                n += 1;
                let spec = Spec {
                    system,
                    size,
                    count: count(&common, size),
                    warmup,
                    timeout,
                    cpus,
                    id: format!("ros2bench-{}-{n}", std::process::id()),
                };
                let what = targets::measurement(round, size, system);
                let Some(out) = run.measure(&what, || session::run(&programs, &spec)) else {
                    continue;
                };
                if out.ping.aborted {
                    run.measure(&what, || -> anyhow::Result<()> {
                        anyhow::bail!(
                            "{GAVE_UP} {MAX_LOST_IN_A_ROW} round trips lost in a row \
                             ({} lost, {} completed)",
                            out.ping.lost,
                            out.ping.samples_ns.len()
                        )
                    });
                }
                let Some(summary) = horus_bench_core::stats::Summary::from_samples(
                    out.ping.samples_ns,
                    out.ping.wall_ns,
                ) else {
                    // One error per measurement: a ping that gave up has said so already.
                    if !out.ping.aborted {
                        run.measure(&what, || -> anyhow::Result<()> {
                            anyhow::bail!("no round trip completed ({} lost)", out.ping.lost)
                        });
                    }
                    continue;
                };
                run.push(Row {
                    lost: out.ping.lost,
                    stale: out.ping.stale,
                    bridge_dropped: out.bridge.map(|b| b.dropped()),
                    ..Row::new(round, system, size, summary)
                });
            }
        }
    }
    let text = format!(
        "{}\n{}",
        table::markdown(run.rows(), &sizes, &runnable),
        targets::to_text(&targets::verdicts(run.rows(), run.errors()))
    );
    run.finish(&text)
}
