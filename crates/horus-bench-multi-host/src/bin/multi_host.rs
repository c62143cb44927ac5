//! `multi_host`: topics and service calls between two hosts — two network
//! namespaces joined by a veth pair on this machine — for raw Zenoh and horus
//! through its bridge (one bridge process per host), interleaved in rounds.
//! Four tables per pinning: the channel table (one-way latency, loss and CPU per
//! host versus payload and topics at 1 kHz), round trip and throughput versus
//! payload, service calls versus payload, and the 16 B / 1 MiB rows on a link
//! with 1 % packet loss and with a 100 Mbit/s cap. Needs root (namespaces).
//!
//! ```text
//! cargo run --release -p horus-bench-multi-host --bin multi_host -- --quick --json /tmp/mh.json
//! cargo run --release -p horus-bench-multi-host --bin multi_host -- --rounds 3 --systems zenoh
//! ```

use std::process::ExitCode;

use anyhow::Context;
use horus_bench_core::markdown::Table;
use horus_bench_core::suite::{self, Common, Run, COMMON_USAGE};
use horus_bench_multi_host::plan::{self, Part, Plan};
use horus_bench_multi_host::rows::MhRow;
use horus_bench_multi_host::{self as mh, horus_system, tables, SystemName};

const ROUNDS: usize = 3;
const QUICK_ROUNDS: usize = 1;

fn main() -> ExitCode {
    let argv: Vec<String> = std::env::args().skip(1).collect();
    if argv.first().map(String::as_str) == Some(horus_system::BRIDGE_ROLE) {
        // A host's bridge process (started by a host child, hidden from the usage).
        let spec = argv.get(1).map_or("", String::as_str);
        return match horus_system::bridge_main(spec) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("bridge: {e:#}");
                ExitCode::FAILURE
            }
        };
    }
    suite::main_with(&[mh::CHILD_ROLES], run)
}

fn usage() {
    println!(
        "multi_host — topics and services between two hosts (network namespaces + veth; root)\n\n\
         USAGE: multi_host [OPTIONS]\n\n{COMMON_USAGE}  \
         --rounds N         rounds (default {ROUNDS}; --quick: {QUICK_ROUNDS})\n  \
         --pinned-only      only the pinned pass of each round (default: pinned, then unpinned)\n  \
         --systems S,...    {} (default all, interleaved per round)\n  \
         --only PART        only channel, sweeps or impaired cells of each pass (default all)\n  \
         --loss-percent N   packet loss of the impaired rows (default {}; more makes rare \
         loss effects frequent)\n  \
         --markdown FILE    also write the tables as Markdown\n",
        SystemName::ALL.map(SystemName::name).join(", "),
        mh::DROP_PERCENT
    );
}

fn method(plan: &Plan, hosts: &horus_netns::TwoHosts) -> Vec<String> {
    let [a, b] = plan.cpus;
    let (ha, hb) = (
        hosts.host(horus_netns::Side::A),
        hosts.host(horus_netns::Side::B),
    );
    let mut m = vec![
        format!(
            "two hosts on one machine: network namespaces {} ({}) and {} ({}) joined by a veth \
             pair (MTU 1500, no delay: this kernel has no netem); the benchmark re-executes \
             itself once per host, each child entering its namespace (setns) before starting \
             any thread; the parent (root namespace) only drives them over pipes",
            ha.name(),
            ha.addr(),
            hb.name(),
            hb.addr()
        ),
        format!(
            "pinned: host A's whole process (every thread, the middleware's included) on CPU \
             {a}, host B's on CPU {b} — for horus, each host's bridge process too (it inherits \
             its host process's namespace and affinity: A's bridge on CPU {a}, B's on CPU {b}); \
             unpinned: left to the scheduler"
        ),
        "every message: sequence number, CLOCK_MONOTONIC stamp (both namespaces read the same \
         kernel clock, so one-way latency = receiver's clock at arrival − stamp, no offset), \
         then every payload byte written by the sender; the receiver checks the header and \
         every byte"
            .to_owned(),
        format!(
            "channel table: payloads {:?} B with {:?} topics, each topic published at {} Hz by \
             host A (a late tick delays the schedule, no catch-up bursts), received on host B; \
             loss from sequence numbers: (sent − received) / sent; CPU: user + system time of \
             each host's process (getrusage, the counters of /proc/<pid>/stat's utime and \
             stime) over A's publishing window and B's first-arrival-to-last-end-marker window, \
             % of one core",
            mh::CHANNEL_SIZES,
            mh::TOPIC_COUNTS,
            mh::RATE_HZ
        ),
        format!(
            "round trip: A sends, B echoes a fresh message of the same size, A receives; \
             throughput: A publishes as fast as Block allows, B counts, msgs/s = received ÷ \
             (first send → last arrival); service: client on B calls a server on A; payloads \
             {:?} B",
            mh::SWEEP_SIZES
        ),
        format!(
            "impaired rows: {:?} B, 1 topic at {} Hz, with {} % of each host's packets on the \
             link dropped at random (nftables numgen random) and with each host's sending capped \
             at {} Mbit/s (tc tbf)",
            mh::IMPAIRED_SIZES,
            mh::RATE_HZ,
            mh::drop_percent(),
            mh::CAP_MBIT
        ),
        format!(
            "interleaved rounds: {}; every value is the median over rounds, max the largest of \
             any round",
            plan.describe()
        ),
    ];
    for s in &plan.systems {
        m.push(format!("{}: {}", s.name(), mh::system(*s).settings()));
    }
    m.extend(suite::method_common());
    m
}

fn run(argv: Vec<String>) -> anyhow::Result<ExitCode> {
    let mut rounds = None;
    let mut pinned_only = false;
    let mut systems: Vec<SystemName> = Vec::new();
    let mut markdown = None;
    let mut only = None;
    let Some(common) = Common::parse(argv, |flag, value| {
        Ok(match flag {
            "--rounds" => {
                rounds = Some(suite::number::<usize>(&value()?)?);
                true
            }
            "--markdown" => {
                markdown = Some(std::path::PathBuf::from(value()?));
                true
            }
            "--loss-percent" => {
                let p = suite::number::<u32>(&value()?)?;
                anyhow::ensure!(p <= 100, "--loss-percent must be at most 100");
                mh::set_drop_percent(p);
                true
            }
            "--only" => {
                only = Some(Part::parse(&value()?)?);
                true
            }
            "--pinned-only" => {
                pinned_only = true;
                true
            }
            "--systems" => {
                for s in value()?.split(',') {
                    systems.push(SystemName::parse(s)?);
                }
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
    if systems.is_empty() {
        systems = SystemName::ALL.to_vec();
    }
    if let Err(why) = horus_netns::available() {
        anyhow::bail!("two test hosts cannot be created here: {why}");
    }
    let hosts = horus_netns::TwoHosts::create("bench")?;
    let plan = Plan {
        rounds,
        pinnings: if pinned_only {
            vec![true]
        } else {
            vec![true, false]
        },
        systems,
        cpus: common.cpus,
        quick: common.quick,
        only,
    };
    let mut run = Run::<MhRow>::start("multi_host", &common, method(&plan, &hosts));
    plan::run_all(&plan, &hosts, &mut run);
    drop(hosts);
    let sections = tables::sections(run.rows(), &plan.systems, &plan.pinnings);
    if let Some(path) = &markdown {
        let md: String = sections
            .iter()
            .map(|(title, table)| format!("\n**{title}**\n\n{}", table.to_markdown()))
            .collect();
        std::fs::write(path, md).with_context(|| format!("writing {}", path.display()))?;
        println!("wrote {}", path.display());
    }
    let text = report(&sections, run.errors());
    run.finish(&text)
}

fn report(sections: &[(String, Table)], errors: &[String]) -> String {
    let mut out = String::new();
    for (title, table) in sections {
        out.push_str(&format!("\n{title}\n{}", table.to_text()));
    }
    if !errors.is_empty() {
        out.push_str("\nfailed measurements (their cells say \"–\"):\n");
        for e in errors {
            out.push_str(&format!("  {e}\n"));
        }
    }
    out
}
