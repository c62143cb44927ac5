//! iceoryx2 between M publisher and K subscriber processes on one service, measured
//! like horus's M:K topology (`horus_bench::topology`), for the `many_to_many`
//! benchmark.
//!
//! Service `<id>/data` carries the message under test (M publishers, K
//! subscribers); service `<id>/ack/<i>` carries 16-byte acknowledgements back to
//! publisher `i` (K publishers, 1 subscriber). Every endpoint is its own process
//! (a re-exec of the benchmark binary), pinned to its CPU if one is given. Each
//! publisher, in a closed loop and concurrently with the others, loans message
//! `seq` (tagged with its index, [`tag`]), writes it in place and sends it to all K
//! subscribers; *every* subscriber busy-polls `receive()`, reads the message (every
//! byte in `full` mode), checks it is the next message of that publisher and
//! acknowledges it on `ack/<i>`; the sample ends when the publisher holds all K
//! acks. Samples of all publishers are pooled.
//!
//! Nothing can be dropped: safe overflow is off, publishers use
//! `RetryUntilDelivered`, every data `send` must reach exactly K subscribers and
//! every ack exactly one, and a subscriber fails on any gap or reordering.

use std::time::Duration;

use anyhow::{ensure, Context};
use horus_bench_core::affinity::pin_current_thread;
use horus_bench_core::child::{
    cpu_arg, send_result, signal_ready, wait_for_parent, ChildArgs, ChildProcess,
};
use horus_bench_core::harness::{
    measure_round_trip_samples, spin_until, unique_id, Config, Samples,
};
use horus_bench_core::payload::{self, Touch};
use horus_bench_core::stats::Summary;
use iceoryx2::prelude::*;

use crate::pubsub::{loan, node, open_service, publisher, quiet_logs, subscriber, Port};

/// Child role of a publisher endpoint.
pub const PUB_ROLE: &str = "iceoryx2-nn-pub";
/// Child role of a subscriber endpoint.
pub const SUB_ROLE: &str = "iceoryx2-nn-sub";
/// The exact iceoryx2 settings of the M:K services, for the method text.
pub const SETTINGS: &str = "ipc::Service, default Config, SignalHandlingMode::Disabled; \
    data: publish_subscribe::<[u8]> with max_publishers M, max_subscribers K, history_size 0, \
    subscriber_max_buffer_size 1 (per publisher; each publisher has one message in flight), \
    subscriber_max_borrowed_samples 1, enable_safe_overflow false; ack/<i>: the same with K \
    publishers and 1 subscriber; publishers: AllocationStrategy::Static, max_loaned_samples 1, \
    BackpressureStrategy::RetryUntilDelivered; busy-poll receive()";
/// The parent's start signal to its children.
const GO: &str = "GO";
/// How long the parent waits for a child's result.
const RESULT_TIMEOUT: Duration = Duration::from_secs(900);

/// Publisher `index`'s message `seq` as one number: the index in the top 16 bits
/// (the same tagging as horus's topology).
pub fn tag(index: usize, seq: u64) -> u64 {
    debug_assert!(index < 1 << 16 && seq < 1 << 48);
    ((index as u64) << 48) | seq
}

/// Inverse of [`tag`].
pub fn untag(tag: u64) -> (usize, u64) {
    ((tag >> 48) as usize, tag & ((1 << 48) - 1))
}

/// One M:K service: M publishers, K subscribers, nothing dropped.
fn create(node: &Node<ipc::Service>, name: &str, pubs: usize, subs: usize) -> anyhow::Result<Port> {
    node.service_builder(&ServiceName::new(name)?)
        .publish_subscribe::<[u8]>()
        .max_publishers(pubs)
        .max_subscribers(subs)
        .max_nodes(pubs + subs + 1)
        .history_size(0)
        .subscriber_max_buffer_size(1)
        .subscriber_max_borrowed_samples(1)
        .enable_safe_overflow(false)
        .create()
        .with_context(|| format!("creating iceoryx2 service {name}"))
}

/// Round trips of `size`-byte messages between `pubs` publisher and `subs`
/// subscriber processes; each publisher runs `warmup` + `iters`; `cpus`, if given,
/// holds one CPU per endpoint, publishers first.
#[allow(clippy::too_many_arguments)]
pub fn round_trips(
    pubs: usize,
    subs: usize,
    size: usize,
    touch: Touch,
    warmup: u64,
    iters: u64,
    cpus: Option<&[usize]>,
) -> anyhow::Result<Summary> {
    ensure!(
        (1..=16).contains(&pubs) && (1..=16).contains(&subs),
        "need 1..=16 publishers and subscribers"
    );
    ensure!(
        size >= payload::MIN_SIZE,
        "payload below {} B",
        payload::MIN_SIZE
    );
    if let Some(c) = cpus {
        ensure!(
            c.len() == pubs + subs,
            "{} CPUs for {} endpoints",
            c.len(),
            pubs + subs
        );
    }
    quiet_logs();
    let id = unique_id();
    let node = node()?;
    // The parent creates every service and holds it open until all children exit.
    let _data = create(&node, &format!("{id}/data"), pubs, subs)?;
    let _acks = (0..pubs)
        .map(|i| create(&node, &format!("{id}/ack/{i}"), subs, 1))
        .collect::<anyhow::Result<Vec<_>>>()?;
    let cpu = |k: usize| cpu_arg(cpus.map(|c| c[k]));
    let args = |index: usize, cpu: String| {
        vec![
            id.clone(),
            pubs.to_string(),
            subs.to_string(),
            index.to_string(),
            size.to_string(),
            warmup.to_string(),
            iters.to_string(),
            touch.label().to_owned(),
            cpu,
        ]
    };
    let spawn = |role: &str, a: Vec<String>| -> anyhow::Result<ChildProcess> {
        let mut c = ChildProcess::spawn_controlled(role, &a)?;
        c.wait_ready()?;
        Ok(c)
    };
    // Subscribers first, so that every publisher's first send reaches all of them.
    let mut sub_children = (0..subs)
        .map(|j| spawn(SUB_ROLE, args(j, cpu(pubs + j))))
        .collect::<anyhow::Result<Vec<_>>>()?;
    let mut pub_children = (0..pubs)
        .map(|i| spawn(PUB_ROLE, args(i, cpu(i))))
        .collect::<anyhow::Result<Vec<_>>>()?;
    for c in sub_children.iter_mut().chain(pub_children.iter_mut()) {
        c.send_line(GO)?;
    }
    let samples = pub_children
        .iter_mut()
        .map(|c| c.recv_result::<Samples>(RESULT_TIMEOUT))
        .collect::<anyhow::Result<Vec<_>>>()?;
    let want = (warmup + iters) * pubs as u64;
    for c in sub_children.iter_mut() {
        let got: u64 = c.recv_result(RESULT_TIMEOUT)?;
        ensure!(
            got == want,
            "a subscriber received {got} of {want} messages"
        );
    }
    for c in pub_children.into_iter().chain(sub_children) {
        c.finish()?;
    }
    Samples::merge(samples).summary()
}

/// The arguments every endpoint child gets.
struct Endpoint {
    id: String,
    pubs: usize,
    subs: usize,
    index: usize,
    size: usize,
    warmup: u64,
    iters: u64,
    touch: Touch,
}

impl Endpoint {
    /// `<id> <pubs> <subs> <index> <size> <warmup> <iters> <full|touch> <cpu|->`;
    /// pins the calling thread if a CPU is given.
    fn parse(mut args: ChildArgs) -> anyhow::Result<Self> {
        let e = Endpoint {
            id: args.next("service id")?,
            pubs: args.next("publishers")?,
            subs: args.next("subscribers")?,
            index: args.next("index")?,
            size: args.next("size")?,
            warmup: args.next("warmup")?,
            iters: args.next("iterations")?,
            touch: Touch::parse(&args.next::<String>("touch")?)?,
        };
        if let Some(cpu) = args.next_cpu()? {
            pin_current_thread(cpu).with_context(|| format!("pinning to CPU {cpu}"))?;
        }
        quiet_logs();
        Ok(e)
    }
}

/// Child entry point for [`PUB_ROLE`].
pub fn pub_child(args: ChildArgs) -> anyhow::Result<()> {
    let e = Endpoint::parse(args)?;
    let node = node()?;
    let tx = publisher(&open_service(&node, &format!("{}/data", e.id))?, e.size)?;
    let acks = subscriber(&open_service(&node, &format!("{}/ack/{}", e.id, e.index))?)?;
    signal_ready()?;
    wait_for_parent(GO)?;
    let cfg = Config {
        warmup: e.warmup,
        iterations: e.iters,
        touch: e.touch,
        one_way_messages: 0,
        cpus: [0, 1],
    };
    let samples = measure_round_trip_samples(&cfg, |seq| {
        let t = tag(e.index, seq);
        let mut msg = loan(&tx, e.size)?;
        payload::write(msg.payload_mut(), t, e.touch);
        let reached = msg.send()?;
        ensure!(
            reached == e.subs,
            "iceoryx2 send reached {reached} subscribers, expected {}",
            e.subs
        );
        for _ in 0..e.subs {
            let ack = spin_until(|| Ok(acks.receive()?), || Ok(()))?;
            let got = payload::read(ack.payload(), Touch::Ends)?;
            ensure!(got == t, "ack for {got:#x}, expected {t:#x}");
        }
        Ok(())
    })?;
    send_result(&samples)
}

/// Child entry point for [`SUB_ROLE`].
pub fn sub_child(args: ChildArgs) -> anyhow::Result<()> {
    let e = Endpoint::parse(args)?;
    let node = node()?;
    let rx = subscriber(&open_service(&node, &format!("{}/data", e.id))?)?;
    let acks = (0..e.pubs)
        .map(|i| {
            let port = open_service(&node, &format!("{}/ack/{i}", e.id))?;
            publisher(&port, payload::MIN_SIZE)
        })
        .collect::<anyhow::Result<Vec<_>>>()?;
    signal_ready()?;
    wait_for_parent(GO)?;
    let mut next = vec![0u64; e.pubs];
    let total = (e.warmup + e.iters) * e.pubs as u64;
    for _ in 0..total {
        let (origin, seq) = {
            let msg = spin_until(|| Ok(rx.receive()?), || Ok(()))?;
            let bytes = msg.payload();
            ensure!(
                bytes.len() == e.size,
                "message of {} B, expected {}",
                bytes.len(),
                e.size
            );
            untag(payload::read(bytes, e.touch)?)
        }; // the sample is released here, before the ack
        ensure!(origin < e.pubs, "message from unknown publisher {origin}");
        ensure!(
            seq == next[origin],
            "lost or reordered: publisher {origin} sent {seq}, expected {}",
            next[origin]
        );
        next[origin] += 1;
        let mut ack = loan(&acks[origin], payload::MIN_SIZE)?;
        payload::write(ack.payload_mut(), tag(origin, seq), Touch::Ends);
        let reached = ack.send()?;
        ensure!(
            reached == 1,
            "ack reached {reached} subscribers, expected 1"
        );
    }
    send_result(&total)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tags_round_trip() {
        assert_eq!(untag(tag(3, 12345)), (3, 12345));
    }
}
