//! Round trips of ROS 2 messages between two processes, and of the same bytes as a
//! fixed-layout message through the chunk path (the baseline).
//!
//! Both use topics `ping` (A → B) and `pong` (B → A) in a per-run namespace with the
//! same settings: depth 16, `Overflow::Block` (lossless), one publisher, chunks of at
//! least the message (`max_tail_bytes` = the next power of two), busy-polling
//! `try_recv` on both sides.
//!
//! * ROS (`Topic<Ros<M>>`): A builds message `seq` in a loan ([`Workload::publish`]);
//!   B receives it, checks it with `view()` (every count and string, as any typed
//!   receiver must) and answers with a copy of its CDR body built with `publish_with`
//!   (every byte read and written once); A reads every byte of the answer through its
//!   view ([`Workload::read`]) and checks the sequence number.
//! * fixed (`Blob`, a header and a tail of the body's size): A loans it and writes
//!   every byte in place; B copies the received bytes into its loaned answer; A reads
//!   every byte (checksum) and checks the sequence number — `horus_peer`'s loan mode.

use anyhow::{ensure, Context};
use horus::ros::{Ros, RosSendError};
use horus::{Delivery, Message, Overflow, SendError, Subscriber, Topic, WaitMode};
use horus_bench::affinity::{pin_current_thread, run_on_cpu};
use horus_bench::child::{cpu_arg, signal_ready, ChildArgs, ChildProcess};
use horus_bench::harness::{
    measure_round_trip_samples, spin_until, unique_id, Config, Samples, STALL_TIMEOUT,
};
use horus_bench::horus_wire::Blob;
use horus_bench::payload::{self, Touch};
use horus_bench::stats::Summary;

use crate::ros_kinds::{with_ros_kind, RosKind, Workload};

/// Child role of the ROS echo.
pub const ROS_ECHO_ROLE: &str = "ros-echo";
/// Child role of the fixed-layout echo.
pub const FIXED_ECHO_ROLE: &str = "ros-fixed-echo";

/// The child roles of this module, for [`horus_bench::suite::main_with`].
pub const CHILD_ROLES: &[horus_bench::pubsub::ChildRole] = &[
    horus_bench::pubsub::ChildRole {
        role: ROS_ECHO_ROLE,
        run: |args| echo_child(ROS_ECHO_ROLE, args),
    },
    horus_bench::pubsub::ChildRole {
        role: FIXED_ECHO_ROLE,
        run: |args| echo_child(FIXED_ECHO_ROLE, args),
    },
];
/// History depth of both topics.
const DEPTH: u32 = 16;
/// The settings, for the method text.
pub const SETTINGS: &str = "topics ping/pong in a per-run namespace, depth 16, Overflow::Block \
    (lossless), chunk capacity = the next power of two >= the message, busy-poll try_recv on both \
    sides (BusyPoll subscribers)";

/// Which path a round trip takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Path {
    /// `Topic<Ros<M>>`: built in the loan, read through the view.
    Ros,
    /// A fixed-layout message with a tail of the same byte size (`Blob`).
    Fixed,
}

impl Path {
    /// Label in tables.
    pub fn label(self) -> &'static str {
        match self {
            Path::Ros => "ROS (Ros<M>)",
            Path::Fixed => "fixed layout (chunk)",
        }
    }
}

fn topic<T: Message>(ns: &str, name: &str, size: usize) -> anyhow::Result<Topic<T>> {
    Ok(Topic::<T>::builder(name)
        .namespace(ns)
        .depth(DEPTH)
        .overflow(Overflow::Block {
            timeout: STALL_TIMEOUT,
        })
        .max_publishers(1)
        .max_subscribers(2)
        .max_tail_bytes(size.next_power_of_two().max(4096))
        .open()?)
}

fn one_subscriber(d: Delivery) -> anyhow::Result<()> {
    ensure!(
        d.subscribers == 1,
        "send reached {} subscribers, expected 1",
        d.subscribers
    );
    Ok(())
}

fn ros_sent(d: Result<Delivery, RosSendError>) -> anyhow::Result<()> {
    one_subscriber(d.context("ROS publish failed")?)
}

fn fixed_sent(d: Result<Delivery, SendError<()>>) -> anyhow::Result<()> {
    one_subscriber(d.map_err(|e| anyhow::anyhow!("send failed: {e}"))?)
}

fn busy<T: Message>(topic: &Topic<T>) -> anyhow::Result<Subscriber<T>> {
    Ok(topic.subscriber_with(WaitMode::BusyPoll)?)
}

/// Round trips of `kind` along `path`; A on `cpus[0]`, the echo process on `cpus[1]`
/// (both unpinned when `None`).
pub fn round_trip(
    cfg: &Config,
    kind: RosKind,
    path: Path,
    cpus: Option<[usize; 2]>,
) -> anyhow::Result<Summary> {
    round_trip_samples(cfg, kind, path, cpus)?.summary()
}

/// As [`round_trip`], the raw per-round-trip times (to merge several blocks of one path).
pub fn round_trip_samples(
    cfg: &Config,
    kind: RosKind,
    path: Path,
    cpus: Option<[usize; 2]>,
) -> anyhow::Result<Samples> {
    run_on_cpu(cpus.map(|c| c[0]), || match path {
        Path::Ros => with_ros_kind!(kind, ros_round_trip(cfg, cpus)),
        Path::Fixed => fixed_round_trip(cfg, kind.body_len(), kind, cpus),
    })
}

fn child_args(ns: String, kind: RosKind, cfg: &Config, cpu: Option<usize>) -> [String; 4] {
    [
        ns,
        format!("{kind:?}"),
        cfg.rounds().to_string(),
        cpu_arg(cpu),
    ]
}

fn ros_round_trip<W: Workload>(
    kind: RosKind,
    cfg: &Config,
    cpus: Option<[usize; 2]>,
) -> anyhow::Result<Samples> {
    let mut w = W::new(kind);
    let size = w.body_len();
    let ns = unique_id();
    let ping = topic::<Ros<W::M>>(&ns, "ping", size)?;
    let pong = topic::<Ros<W::M>>(&ns, "pong", size)?;
    let mut tx = ping.publisher()?;
    let mut rx = busy(&pong)?;
    let args = child_args(ns, kind, cfg, cpus.map(|c| c[1]));
    let mut child = ChildProcess::spawn(ROS_ECHO_ROLE, &args)?;
    child.wait_ready()?;
    ensure!(
        tx.subscribers() == 1 && rx.publishers() == 1,
        "echo process did not connect"
    );
    let summary = measure_round_trip_samples(cfg, |seq| {
        ros_sent(w.publish(&mut tx, seq))?;
        let reply = spin_until(|| Ok(rx.try_recv()), || child.check_alive())?;
        let got = W::read(reply.view()?)?;
        ensure!(got == seq, "expected message {seq}, got {got}");
        Ok(())
    })?;
    ros_sent(w.publish(&mut tx, 0))?; // end marker: B exits after A read every reply
    child.finish()?;
    Ok(summary)
}

fn fixed_round_trip(
    cfg: &Config,
    size: usize,
    kind: RosKind,
    cpus: Option<[usize; 2]>,
) -> anyhow::Result<Samples> {
    let ns = unique_id();
    let mut tx = topic::<Blob>(&ns, "ping", size)?.publisher()?;
    let mut rx = busy(&topic::<Blob>(&ns, "pong", size)?)?;
    let args = child_args(ns, kind, cfg, cpus.map(|c| c[1]));
    let mut child = ChildProcess::spawn(FIXED_ECHO_ROLE, &args)?;
    child.wait_ready()?;
    ensure!(
        tx.subscribers() == 1 && rx.publishers() == 1,
        "echo process did not connect"
    );
    let send = |tx: &mut horus::Publisher<Blob>, seq: u64| -> anyhow::Result<()> {
        let mut s = tx.loan_slice(size)?;
        s.len = size as u64;
        payload::write(s.tail_mut(), seq, Touch::Full);
        fixed_sent(s.send().map_err(|e| e.map(drop)))
    };
    let summary = measure_round_trip_samples(cfg, |seq| {
        send(&mut tx, seq)?;
        let reply = spin_until(|| Ok(rx.try_recv()), || child.check_alive())?;
        payload::check(reply.tail(), seq, Touch::Full)
    })?;
    send(&mut tx, 0)?; // end marker
    child.finish()?;
    Ok(summary)
}

/// Child entry point of [`ROS_ECHO_ROLE`] and [`FIXED_ECHO_ROLE`]:
/// `<ns> <kind> <rounds> <cpu|->`.
pub fn echo_child(role: &str, mut args: ChildArgs) -> anyhow::Result<()> {
    let ns: String = args.next("namespace")?;
    let kind = RosKind::parse(&args.next::<String>("kind")?)?;
    let rounds: u64 = args.next("rounds")?;
    if let Some(cpu) = args.next_cpu()? {
        pin_current_thread(cpu).with_context(|| format!("pinning echo to CPU {cpu}"))?;
    }
    if role == ROS_ECHO_ROLE {
        with_ros_kind!(kind, ros_echo(&ns, rounds))
    } else {
        fixed_echo(&ns, kind.body_len(), rounds)
    }
}

fn ros_echo<W: Workload>(kind: RosKind, ns: &str, rounds: u64) -> anyhow::Result<()> {
    let size = W::new(kind).body_len();
    let mut rx = busy(&topic::<Ros<W::M>>(ns, "ping", size)?)?;
    let mut tx = topic::<Ros<W::M>>(ns, "pong", size)?.publisher()?;
    signal_ready()?;
    for _ in 0..rounds {
        let ping = spin_until(|| Ok(rx.try_recv()), || Ok(()))?;
        std::hint::black_box(ping.view()?);
        let body = ping.body();
        ros_sent(tx.publish_with(body.len(), |w| w.write_slice(body)))?;
    }
    spin_until(|| Ok(rx.try_recv()), || Ok(()))?; // end marker
    Ok(())
}

fn fixed_echo(ns: &str, size: usize, rounds: u64) -> anyhow::Result<()> {
    let mut rx = busy(&topic::<Blob>(ns, "ping", size)?)?;
    let mut tx = topic::<Blob>(ns, "pong", size)?.publisher()?;
    signal_ready()?;
    for _ in 0..rounds {
        let ping = spin_until(|| Ok(rx.try_recv()), || Ok(()))?;
        let mut reply = tx.loan_slice(size)?;
        reply.len = size as u64;
        reply.tail_mut().copy_from_slice(ping.tail());
        fixed_sent(reply.send().map_err(|e| e.map(drop)))?;
    }
    spin_until(|| Ok(rx.try_recv()), || Ok(()))?; // end marker
    Ok(())
}
