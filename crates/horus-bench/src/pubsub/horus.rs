//! horus between two processes, measured exactly like every other system.
//!
//! Round trip ([`round_trip`]): topics `ping` (A → B) and `pong` (B → A) in a
//! namespace unique to the run, `Overflow::Block` (nothing can be lost),
//! depth 16 (the default).
//!
//! * copy mode — A writes the message in its own buffer and `send_ref`s a
//!   copy; B receives and publishes a copy of what it received; A receives
//!   and copies the reply into its own buffer before reading it. (For sizes
//!   up to [`horus::INLINE_MAX`] the receive itself is the copy out of the
//!   ring.)
//! * loan mode — A loans a sample and writes the message in place; B receives
//!   (a zero-copy read guard for chunked sizes), loans a reply and copies the
//!   received payload into it (touch mode: first and last 8 bytes); A reads
//!   the reply in place.
//!
//! Waiting: busy-polling `try_recv` on both sides (`Wait::Poll`), or a
//! blocking futex `recv` with no spinning (`Wait::Futex`), the setting to
//! compare with the futex wake reference (`ref:wake`) and the blocking peers.
//!
//! One-way ([`one_way`]): A loans, writes and sends `warmup` then
//! `one_way_messages` messages on `data` (depth 32, `Block`) as fast as it
//! can; B reads each, checks it is the next sequence number, and confirms its
//! count on `ack`, as for iceoryx2.

use anyhow::{ensure, Context};
use horus::{Overflow, Publisher, Subscriber, Topic, WaitMode};

use crate::affinity::{pin_current_thread, run_on_cpu};
use crate::child::{cpu_arg, signal_ready, ChildArgs, ChildProcess};
use crate::harness::{
    measure_round_trips, one_way_bursts, one_way_child_args, spin_until, unique_id, Config, Mode,
    STALL_TIMEOUT,
};
use crate::horus_wire::{by_size, Bytes16, Wire};
use crate::payload::{self, Touch};
use crate::stats::{Summary, Throughput};

/// Child role of the round-trip echo side.
pub const ECHO_ROLE: &str = "horus-echo";
/// Child role of the one-way sink.
pub const SINK_ROLE: &str = "horus-sink";
/// History depth of the round-trip topics.
const DEPTH: u32 = 16;
/// History depth of the one-way data topic (messages in flight, as iceoryx2's
/// subscriber buffer).
pub const ONE_WAY_DEPTH: u32 = 32;
/// The exact settings, for the method text.
pub const SETTINGS: &str = "topics ping/pong in a per-run namespace, Overflow::Block (lossless), depth 16 \
    (one-way data: 32); sizes <= 512 B travel inline in the ring slot, larger ones in a pool chunk; \
    busy-poll = try_recv spin on both sides (BusyPoll subscribers, so publishers skip the wake path); \
    futex = blocking recv with no spinning on both sides";

/// How both sides wait for the next message.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Wait {
    /// Busy-poll `try_recv`.
    Poll,
    /// Sleep on the topic's futex (`recv`, spin 0).
    Futex,
}

impl Wait {
    /// `poll` or `futex`.
    pub fn label(self) -> &'static str {
        match self {
            Wait::Poll => "poll",
            Wait::Futex => "futex",
        }
    }
    /// Inverse of [`Wait::label`].
    pub fn parse(s: &str) -> anyhow::Result<Wait> {
        match s {
            "poll" => Ok(Wait::Poll),
            "futex" => Ok(Wait::Futex),
            other => anyhow::bail!("unknown wait {other:?}"),
        }
    }
}

fn mode_label(mode: Mode) -> &'static str {
    mode.label()
}

fn parse_mode(s: &str) -> anyhow::Result<Mode> {
    match s {
        "copy" => Ok(Mode::Copy),
        "loan" => Ok(Mode::Loan),
        other => anyhow::bail!("unknown mode {other:?}"),
    }
}

fn topic<T: Wire>(ns: &str, name: &str, depth: u32) -> anyhow::Result<Topic<T>> {
    Ok(Topic::<T>::builder(name)
        .namespace(ns)
        .depth(depth)
        .overflow(Overflow::Block {
            timeout: STALL_TIMEOUT,
        })
        .max_publishers(1)
        .max_subscribers(2)
        .max_tail_bytes(if T::HAS_TAIL { 1 << 20 } else { 0 })
        .open()?)
}

fn subscriber<T: Wire>(topic: &Topic<T>, wait: Wait) -> anyhow::Result<Subscriber<T>> {
    Ok(match wait {
        Wait::Poll => topic.subscriber_with(WaitMode::BusyPoll)?,
        Wait::Futex => {
            let mut s = topic.subscriber()?;
            s.set_spin(0);
            s
        }
    })
}

fn receive<T: Wire>(
    rx: &mut Subscriber<T>,
    wait: Wait,
    alive: impl FnMut() -> anyhow::Result<()>,
) -> anyhow::Result<horus::Sample<T>> {
    match wait {
        Wait::Poll => spin_until(|| Ok(rx.try_recv()), alive),
        Wait::Futex => rx
            .recv_timeout(STALL_TIMEOUT)
            .context("no message within the stall timeout"),
    }
}

fn delivered(d: Result<horus::Delivery, horus::SendError<()>>) -> anyhow::Result<()> {
    let d = d.map_err(|e| anyhow::anyhow!("send failed: {e}"))?;
    ensure!(
        d.subscribers == 1,
        "horus send reached {} subscribers, expected 1",
        d.subscribers
    );
    Ok(())
}

/// Writes message `seq` in place in a loan and sends it.
fn send_loaned<T: Wire>(
    tx: &mut Publisher<T>,
    size: usize,
    seq: u64,
    touch: Touch,
) -> anyhow::Result<()> {
    let mut s = T::loan(tx, size)?;
    payload::write(T::payload_mut(&mut s), seq, touch);
    delivered(s.send().map_err(|e| e.map(drop)))
}

/// Round trips of `size` bytes; A on `cpus[0]`, the echo process on `cpus[1]`.
pub fn round_trip(
    cfg: &Config,
    size: usize,
    mode: Mode,
    wait: Wait,
    cpus: Option<[usize; 2]>,
) -> anyhow::Result<Summary> {
    run_on_cpu(cpus.map(|c| c[0]), || {
        by_size!(size, round_trip_as(cfg, size, mode, wait, cpus))
    })
}

fn round_trip_as<T: Wire>(
    cfg: &Config,
    size: usize,
    mode: Mode,
    wait: Wait,
    cpus: Option<[usize; 2]>,
) -> anyhow::Result<Summary> {
    let ns = unique_id();
    let ping = topic::<T>(&ns, "ping", DEPTH)?;
    let pong = topic::<T>(&ns, "pong", DEPTH)?;
    let mut tx = ping.publisher()?;
    let mut rx = subscriber(&pong, wait)?;
    let args = [
        ns,
        size.to_string(),
        cfg.rounds().to_string(),
        cfg.touch.label().to_owned(),
        mode_label(mode).to_owned(),
        wait.label().to_owned(),
        cpu_arg(cpus.map(|c| c[1])),
    ];
    let mut child = ChildProcess::spawn(ECHO_ROLE, &args)?;
    child.wait_ready()?;
    ensure!(
        tx.subscribers() == 1 && rx.publishers() == 1,
        "echo process did not connect"
    );

    let touch = cfg.touch;
    let mut local = vec![0u8; size];
    let mut back = vec![0u8; size];
    let summary = measure_round_trips(cfg, |seq| {
        match mode {
            Mode::Copy => {
                payload::write(&mut local, seq, touch);
                delivered(T::send_copy(&mut tx, &local))?;
            }
            _ => send_loaned(&mut tx, size, seq, touch)?,
        }
        let reply = receive(&mut rx, wait, || child.check_alive())?;
        match mode {
            Mode::Copy => {
                back.copy_from_slice(T::payload(&reply));
                payload::check(&back, seq, touch)
            }
            _ => payload::check(T::payload(&reply), seq, touch),
        }
    })?;
    // End marker: B exits only after this, i.e. after A has read every reply.
    send_loaned(&mut tx, size, u64::MAX - 1, Touch::Ends)?;
    child.finish()?;
    Ok(summary)
}

/// Child entry point for [`ECHO_ROLE`]:
/// `<ns> <size> <rounds> <full|touch> <copy|loan> <poll|futex> <cpu|->`.
pub fn echo_child(mut args: ChildArgs) -> anyhow::Result<()> {
    let ns: String = args.next("namespace")?;
    let size: usize = args.next("size")?;
    let rounds: u64 = args.next("rounds")?;
    let touch = Touch::parse(&args.next::<String>("touch")?)?;
    let mode = parse_mode(&args.next::<String>("mode")?)?;
    let wait = Wait::parse(&args.next::<String>("wait")?)?;
    if let Some(cpu) = args.next_cpu()? {
        pin_current_thread(cpu).with_context(|| format!("pinning echo to CPU {cpu}"))?;
    }
    by_size!(size, echo_as(&ns, size, rounds, touch, mode, wait))
}

fn echo_as<T: Wire>(
    ns: &str,
    size: usize,
    rounds: u64,
    touch: Touch,
    mode: Mode,
    wait: Wait,
) -> anyhow::Result<()> {
    let mut rx = subscriber(&topic::<T>(ns, "ping", DEPTH)?, wait)?;
    let mut tx = topic::<T>(ns, "pong", DEPTH)?.publisher()?;
    signal_ready()?;
    for _ in 0..rounds {
        let ping = receive(&mut rx, wait, || Ok(()))?;
        let msg = T::payload(&ping);
        match mode {
            Mode::Copy => delivered(T::send_copy(&mut tx, msg))?,
            _ => {
                let mut reply = T::loan(&mut tx, size)?;
                match touch {
                    Touch::Full => T::payload_mut(&mut reply).copy_from_slice(msg),
                    Touch::Ends => payload::copy_ends(T::payload_mut(&mut reply), msg),
                }
                delivered(reply.send().map_err(|e| e.map(drop)))?;
            }
        }
    }
    receive(&mut rx, wait, || Ok(()))?; // end marker
    Ok(())
}

/// One-way throughput of `size`-byte messages; A on `cpus[0]`, the sink on `cpus[1]`.
pub fn one_way(cfg: &Config, size: usize, cpus: Option<[usize; 2]>) -> anyhow::Result<Throughput> {
    run_on_cpu(cpus.map(|c| c[0]), || {
        by_size!(size, one_way_as(cfg, size, cpus))
    })
}

fn one_way_as<T: Wire>(
    cfg: &Config,
    size: usize,
    cpus: Option<[usize; 2]>,
) -> anyhow::Result<Throughput> {
    let ns = unique_id();
    let mut tx = topic::<T>(&ns, "data", ONE_WAY_DEPTH)?.publisher()?;
    let mut rx = subscriber(&topic::<Bytes16>(&ns, "ack", DEPTH)?, Wait::Poll)?;
    let args = one_way_child_args(ns, size, cfg, cpus.map(|c| c[1]));
    let mut child = ChildProcess::spawn(SINK_ROLE, &args)?;
    child.wait_ready()?;
    let touch = cfg.touch;
    let throughput = one_way_bursts(
        cfg,
        |seq| send_loaned(&mut tx, size, seq, touch),
        || {
            let ack = receive(&mut rx, Wait::Poll, || child.check_alive())?;
            payload::read(&ack.data, Touch::Ends)
        },
    )?;
    send_loaned(&mut tx, size, u64::MAX - 1, Touch::Ends)?; // end marker
    child.finish()?;
    Ok(throughput)
}

/// Child entry point for [`SINK_ROLE`]:
/// `<ns> <size> <warmup> <messages> <full|touch> <cpu|->`.
pub fn sink_child(mut args: ChildArgs) -> anyhow::Result<()> {
    let ns: String = args.next("namespace")?;
    let size: usize = args.next("size")?;
    let warmup: u64 = args.next("warmup")?;
    let messages: u64 = args.next("messages")?;
    let touch = Touch::parse(&args.next::<String>("touch")?)?;
    if let Some(cpu) = args.next_cpu()? {
        pin_current_thread(cpu).with_context(|| format!("pinning sink to CPU {cpu}"))?;
    }
    by_size!(size, sink_as(&ns, size, warmup, messages, touch))
}

fn sink_as<T: Wire>(
    ns: &str,
    size: usize,
    warmup: u64,
    messages: u64,
    touch: Touch,
) -> anyhow::Result<()> {
    let mut rx = subscriber(&topic::<T>(ns, "data", ONE_WAY_DEPTH)?, Wait::Poll)?;
    let mut tx = topic::<Bytes16>(ns, "ack", DEPTH)?.publisher()?;
    signal_ready()?;
    let mut next = 0u64;
    for count in [warmup, messages] {
        for _ in 0..count {
            let msg = receive(&mut rx, Wait::Poll, || Ok(()))?;
            let bytes = T::payload(&msg);
            ensure!(bytes.len() == size, "message of {} bytes", bytes.len());
            let seq = payload::read(bytes, touch)?;
            ensure!(
                seq == next,
                "lost or reordered: expected message {next}, got {seq}"
            );
            next += 1;
        }
        send_loaned(&mut tx, 16, count, Touch::Ends)?;
    }
    receive(&mut rx, Wait::Poll, || Ok(()))?; // end marker
    ensure!(
        rx.stats().overrun == 0,
        "sink counted {} overruns",
        rx.stats().overrun
    );
    Ok(())
}

/// horus topics as a [`PubSub`](super::PubSub) peer: `horus` (busy-poll) or
/// `horus:futex` (blocking), by loan or by copy.
#[derive(Debug, Clone, Copy)]
pub struct HorusTopic {
    /// Loan (written in place) or copy (`send_ref`, copied out).
    pub mode: Mode,
    /// How both sides wait.
    pub wait: Wait,
}

impl crate::peer::Peer for HorusTopic {
    fn name(&self) -> &'static str {
        match self.wait {
            Wait::Poll => "horus",
            Wait::Futex => "horus:futex",
        }
    }

    fn settings(&self) -> String {
        SETTINGS.to_owned()
    }
}

impl super::PubSub for HorusTopic {
    fn mode(&self) -> Mode {
        self.mode
    }

    fn busy_polls(&self) -> bool {
        self.wait == Wait::Poll
    }

    fn round_trip(
        &self,
        cfg: &Config,
        size: usize,
        cpus: Option<[usize; 2]>,
    ) -> anyhow::Result<Summary> {
        round_trip(cfg, size, self.mode, self.wait, cpus)
    }
}
