//! iceoryx2 publish-subscribe between two processes, measured like every other system.
//!
//! Round trip ([`round_trip`]): services `<id>/ping` (A → B) and `<id>/pong` (B → A),
//! `[u8]` payloads of exactly the message size. A loans a ping sample, writes the
//! message in place ([`payload::write`]) and sends; B busy-polls `receive()`, loans a
//! pong sample, copies the ping into it (`write_from_slice`, a `memcpy`; in touch mode
//! only the first/last 8 bytes) and sends; A busy-polls `receive()` and reads the
//! reply ([`payload::check`]).
//!
//! One-way ([`one_way`]): A sends `warmup` then `one_way_messages` messages on
//! `<id>/data` as fast as it can; B (the sink) reads each, checks it is the next
//! sequence number, and after each burst reports its count on `<id>/ack`. A's time
//! runs from before the first send of the measured burst to the arrival of B's ack,
//! so it includes one ack latency.
//!
//! No message is ever dropped: the services are created with safe overflow off, the
//! publishers use [`BackpressureStrategy::RetryUntilDelivered`] (a full subscriber
//! buffer makes `send` wait), and every `send` must report exactly one receiver.
//! See [`create_service`] and [`publisher`] for the exact settings.

use anyhow::{ensure, Context};
use horus_bench_core::affinity::{pin_current_thread, run_on_cpu};
use horus_bench_core::child::{cpu_arg, signal_ready, ChildArgs, ChildProcess};
use horus_bench_core::harness::{
    measure_round_trips, one_way_bursts, one_way_child_args, spin_until, unique_id, Config,
};
use horus_bench_core::payload::{self, Touch};
use horus_bench_core::pubsub::ChildRole;
use horus_bench_core::stats::{Summary, Throughput};
use iceoryx2::port::publisher::Publisher;
use iceoryx2::port::subscriber::Subscriber;
use iceoryx2::prelude::*;
use iceoryx2::sample_mut::SampleMut;
use iceoryx2::service::port_factory::publish_subscribe::PortFactory;

/// Child role of the round-trip echo side.
pub const ECHO_ROLE: &str = "iceoryx2-echo";
/// Child role of the one-way sink.
pub const SINK_ROLE: &str = "iceoryx2-sink";

/// The child roles of this peer, for the benchmark binary's child dispatch.
pub const CHILD_ROLES: &[ChildRole] = &[
    ChildRole {
        role: ECHO_ROLE,
        run: echo_child,
    },
    ChildRole {
        role: SINK_ROLE,
        run: sink_child,
    },
    ChildRole {
        role: crate::many::PUB_ROLE,
        run: crate::many::pub_child,
    },
    ChildRole {
        role: crate::many::SUB_ROLE,
        run: crate::many::sub_child,
    },
];
/// Subscriber buffer of the one-way data service (messages in flight).
pub const ONE_WAY_BUFFER: usize = 32;
/// The exact iceoryx2 settings, for the method text.
pub const SETTINGS: &str = "ipc::Service, default Config (no config file), \
    SignalHandlingMode::Disabled; publish_subscribe::<[u8]>: max_publishers 1, \
    max_subscribers 1, max_nodes 2, history_size 0, subscriber_max_buffer_size 1 (one-way data: 32), \
    subscriber_max_borrowed_samples 1, enable_safe_overflow false; publisher: \
    initial_max_slice_len = message size, AllocationStrategy::Static, max_loaned_samples 1, \
    BackpressureStrategy::RetryUntilDelivered; subscriber: default buffer; busy-poll receive()";

pub(crate) type Port = PortFactory<ipc::Service, [u8], ()>;
type Tx = Publisher<ipc::Service, [u8], ()>;
type Rx = Subscriber<ipc::Service, [u8], ()>;
type Loan = SampleMut<ipc::Service, [u8], ()>;

/// Sets iceoryx2's log level to warnings (overridable with `IOX2_LOG_LEVEL`).
pub(crate) fn quiet_logs() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| set_log_level_from_env_or(LogLevel::Warn));
}

pub(crate) fn node() -> anyhow::Result<Node<ipc::Service>> {
    // An explicit default config: results do not depend on a user's iceoryx2 config
    // file, and no "no config file found" warning is printed.
    NodeBuilder::new()
        .config(&iceoryx2::config::Config::default())
        .signal_handling_mode(SignalHandlingMode::Disabled)
        .create::<ipc::Service>()
        .context("creating iceoryx2 node")
}

/// A creates each service: one publisher, one subscriber, nothing dropped.
fn create_service(node: &Node<ipc::Service>, name: &str, buffer: usize) -> anyhow::Result<Port> {
    node.service_builder(&ServiceName::new(name)?)
        .publish_subscribe::<[u8]>()
        .max_publishers(1)
        .max_subscribers(1)
        .max_nodes(2)
        .history_size(0)
        .subscriber_max_buffer_size(buffer)
        .subscriber_max_borrowed_samples(1)
        .enable_safe_overflow(false)
        .create()
        .with_context(|| format!("creating iceoryx2 service {name}"))
}

/// B opens the services A created (inheriting all of A's settings).
pub(crate) fn open_service(node: &Node<ipc::Service>, name: &str) -> anyhow::Result<Port> {
    node.service_builder(&ServiceName::new(name)?)
        .publish_subscribe::<[u8]>()
        .open()
        .with_context(|| format!("opening iceoryx2 service {name}"))
}

pub(crate) fn publisher(port: &Port, size: usize) -> anyhow::Result<Tx> {
    port.publisher_builder()
        .initial_max_slice_len(size)
        .allocation_strategy(AllocationStrategy::Static)
        .max_loaned_samples(1)
        .backpressure_strategy(BackpressureStrategy::RetryUntilDelivered)
        .create()
        .context("creating iceoryx2 publisher")
}

pub(crate) fn subscriber(port: &Port) -> anyhow::Result<Rx> {
    Ok(port.subscriber_builder().create()?)
}

/// Loans `len` bytes to be written in place.
pub(crate) fn loan(tx: &Tx, len: usize) -> anyhow::Result<Loan> {
    let sample = tx.loan_slice_uninit(len)?;
    // SAFETY: the chunk lies in a shared-memory segment the OS zero-filled when it was
    // mapped, and both processes only ever store plain bytes into it, so every byte
    // is initialised even though the API types it `MaybeUninit<u8>`; `u8` has no
    // invalid bit patterns. Callers then overwrite what they send.
    Ok(unsafe { sample.assume_init() })
}

/// Sends and checks the message reached exactly our one subscriber.
fn send(sample: Loan) -> anyhow::Result<()> {
    let receivers = sample.send()?;
    ensure!(
        receivers == 1,
        "iceoryx2 send reached {receivers} subscribers, expected 1"
    );
    Ok(())
}

/// Round trips of `size` bytes; A on `cpus[0]`, the echo process on `cpus[1]`.
pub fn round_trip(cfg: &Config, size: usize, cpus: Option<[usize; 2]>) -> anyhow::Result<Summary> {
    run_on_cpu(cpus.map(|c| c[0]), || {
        quiet_logs();
        let id = unique_id();
        let node = node()?;
        let ping = create_service(&node, &format!("{id}/ping"), 1)?;
        let pong = create_service(&node, &format!("{id}/pong"), 1)?;
        let tx = publisher(&ping, size)?;
        let rx = subscriber(&pong)?;
        let args = [
            id,
            size.to_string(),
            cfg.rounds().to_string(),
            cfg.touch.label().to_owned(),
            cpu_arg(cpus.map(|c| c[1])),
        ];
        let mut child = ChildProcess::spawn(ECHO_ROLE, &args)?;
        child.wait_ready()?;

        let touch = cfg.touch;
        let summary = measure_round_trips(cfg, |seq| {
            let mut ping = loan(&tx, size)?;
            payload::write(ping.payload_mut(), seq, touch);
            send(ping)?;
            let reply = spin_until(|| Ok(rx.receive()?), || child.check_alive())?;
            payload::check(reply.payload(), seq, touch)
        })?;
        // End marker: B exits only after this, i.e. after A has read every reply.
        send(loan(&tx, size)?)?;
        child.finish()?;
        Ok(summary)
    })
}

/// Child entry point for [`ECHO_ROLE`]: `<id> <size> <rounds> <full|touch> <cpu|->`.
pub fn echo_child(mut args: ChildArgs) -> anyhow::Result<()> {
    let id: String = args.next("service id")?;
    let size: usize = args.next("size")?;
    let rounds: u64 = args.next("rounds")?;
    let touch = Touch::parse(&args.next::<String>("touch")?)?;
    if let Some(cpu) = args.next_cpu()? {
        pin_current_thread(cpu).with_context(|| format!("pinning echo to CPU {cpu}"))?;
    }
    quiet_logs();
    let node = node()?;
    let rx = subscriber(&open_service(&node, &format!("{id}/ping"))?)?;
    let tx = publisher(&open_service(&node, &format!("{id}/pong"))?, size)?;
    signal_ready()?;

    for _ in 0..rounds {
        let ping = spin_until(|| Ok(rx.receive()?), || Ok(()))?;
        let msg = ping.payload();
        let reply = match touch {
            Touch::Full => tx.loan_slice_uninit(msg.len())?.write_from_slice(msg),
            Touch::Ends => {
                let mut reply = loan(&tx, msg.len())?;
                payload::copy_ends(reply.payload_mut(), msg);
                reply
            }
        };
        send(reply)?;
    }
    spin_until(|| Ok(rx.receive()?), || Ok(()))?; // end marker
    Ok(())
}

/// One-way throughput of `size`-byte messages; A on `cpus[0]`, the sink on `cpus[1]`.
pub fn one_way(cfg: &Config, size: usize, cpus: Option<[usize; 2]>) -> anyhow::Result<Throughput> {
    run_on_cpu(cpus.map(|c| c[0]), || {
        quiet_logs();
        let id = unique_id();
        let node = node()?;
        let data = create_service(&node, &format!("{id}/data"), ONE_WAY_BUFFER)?;
        let ack = create_service(&node, &format!("{id}/ack"), 1)?;
        let tx = publisher(&data, size)?;
        let rx = subscriber(&ack)?;
        let args = one_way_child_args(id, size, cfg, cpus.map(|c| c[1]));
        let mut child = ChildProcess::spawn(SINK_ROLE, &args)?;
        child.wait_ready()?;
        let touch = cfg.touch;
        let throughput = one_way_bursts(
            cfg,
            |seq| {
                let mut msg = loan(&tx, size)?;
                payload::write(msg.payload_mut(), seq, touch);
                send(msg)
            },
            || {
                let ack = spin_until(|| Ok(rx.receive()?), || child.check_alive())?;
                payload::read(ack.payload(), Touch::Ends)
            },
        )?;
        send(loan(&tx, size)?)?; // end marker
        child.finish()?;
        Ok(throughput)
    })
}

/// Child entry point for [`SINK_ROLE`]:
/// `<id> <size> <warmup> <messages> <full|touch> <cpu|->`.
pub fn sink_child(mut args: ChildArgs) -> anyhow::Result<()> {
    let id: String = args.next("service id")?;
    let size: usize = args.next("size")?;
    let warmup: u64 = args.next("warmup")?;
    let messages: u64 = args.next("messages")?;
    let touch = Touch::parse(&args.next::<String>("touch")?)?;
    if let Some(cpu) = args.next_cpu()? {
        pin_current_thread(cpu).with_context(|| format!("pinning sink to CPU {cpu}"))?;
    }
    quiet_logs();
    let node = node()?;
    let rx = subscriber(&open_service(&node, &format!("{id}/data"))?)?;
    let tx = publisher(
        &open_service(&node, &format!("{id}/ack"))?,
        payload::MIN_SIZE,
    )?;
    signal_ready()?;

    let mut next = 0u64;
    for count in [warmup, messages] {
        for _ in 0..count {
            let msg = spin_until(|| Ok(rx.receive()?), || Ok(()))?;
            ensure!(
                msg.payload().len() == size,
                "message of {} bytes",
                msg.payload().len()
            );
            let seq = payload::read(msg.payload(), touch)?;
            ensure!(
                seq == next,
                "lost or reordered: expected message {next}, got {seq}"
            );
            next += 1;
        }
        let mut ack = loan(&tx, payload::MIN_SIZE)?;
        payload::write(ack.payload_mut(), count, Touch::Ends);
        send(ack)?;
    }
    spin_until(|| Ok(rx.receive()?), || Ok(()))?; // end marker
    Ok(())
}

/// iceoryx2 publish/subscribe as a [`PubSub`](horus_bench_core::pubsub::PubSub) peer: loan, busy-poll.
#[derive(Debug, Clone, Copy)]
pub struct Iceoryx2PubSub;

impl horus_bench_core::peer::Peer for Iceoryx2PubSub {
    fn name(&self) -> &'static str {
        "iceoryx2"
    }

    fn settings(&self) -> String {
        SETTINGS.to_owned()
    }
}

impl horus_bench_core::pubsub::PubSub for Iceoryx2PubSub {
    fn mode(&self) -> horus_bench_core::harness::Mode {
        horus_bench_core::harness::Mode::Loan
    }

    fn busy_polls(&self) -> bool {
        true
    }

    fn round_trip(
        &self,
        cfg: &Config,
        size: usize,
        cpus: Option<[usize; 2]>,
    ) -> anyhow::Result<Summary> {
        round_trip(cfg, size, cpus)
    }
}
