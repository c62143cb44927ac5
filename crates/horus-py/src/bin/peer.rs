//! `horus-py-peer`: the Rust endpoint of the Python package's cross-language
//! tests (`python/tests/test_cross_language.py`). Each subcommand opens one
//! topic in `HORUS_NAMESPACE`, prints `ready` once its endpoints exist, then
//! prints one JSON object per line.
//!
//! ```text
//! horus-py-peer pub cmdvel|pointcloud|twist TOPIC COUNT    wait for a subscriber, publish COUNT
//! horus-py-peer sub cmdvel|pointcloud TOPIC COUNT          receive COUNT, print each
//! horus-py-peer pub-for cmdvel TOPIC SECONDS               publish at 1 kHz, print stats
//! horus-py-peer tensor-echo IN OUT COUNT                   double each tensor in place, echo its ref
//! horus-py-peer tensor-pub POOL TOPIC ACK                  publish one tensor, hold it until ACK
//! horus-py-peer pong cmdvel|tensor PING PONG busy|futex     echo until stamp_ns == u64::MAX (benchmark)
//! horus-py-peer serve answer|hold|idle SERVICE COUNT        a service server (see `service`)
//! horus-py-peer call wait|nowait SERVICE COUNT TIMEOUT_MS   a service client (see `service`)
//! horus-py-peer action-serve NAME SECONDS                   an action server (see `action`)
//! horus-py-peer action-call NAME X MODE                     an action client (see `action`)
//! horus-py-peer param-serve NODE SECONDS                    a node's parameters (see `params`)
//! horus-py-peer param-call NODE                             a parameter client (see `params`)
//! horus-py-peer ros-sub TYPE TOPIC N                         N ROS 2 messages, decoded by horus_idl (see `ros`)
//! horus-py-peer ros-pub TYPE TOPIC CDR_HEX N                 publishes those ROS 2 wire bytes N times
//! horus-py-peer ros-pub-unchecked TYPE TOPIC CDR_HEX N       the same, not checked first (hostile bytes)
//! horus-py-peer ros-typed-sub|ros-typed-pub laserscan TOPIC N  Topic<Ros<LaserScan>> (generated type)
//! horus-py-peer ros-action-serve|ros-action-call|ros-srv-serve|ros-srv-call …  ROS-typed actions and services (see `ros_action`)
//! ```

#[path = "peer/action.rs"]
mod action;
#[path = "peer/params.rs"]
mod params;
#[path = "peer/ros.rs"]
mod ros;
#[path = "peer/ros_action.rs"]
mod ros_action;
#[path = "peer/service.rs"]
mod service;

use std::io::Write;
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use horus::prelude::*;
use horus_tensor::{PoolConfig, TensorPool, TensorRef};

fn say(line: &str) {
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{line}");
    let _ = out.flush();
}

fn wait_for_subscribers<T: Message>(p: &Publisher<T>) -> Result<()> {
    let start = Instant::now();
    while p.subscribers() == 0 {
        if start.elapsed() > Duration::from_secs(20) {
            bail!("no subscriber appeared on {}", p.topic());
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    Ok(())
}

fn recv<T: Message>(s: &mut Subscriber<T>) -> Result<Sample<T>> {
    s.recv_timeout(Duration::from_secs(20))
        .with_context(|| format!("nothing received on {}", s.topic()))
}

fn pub_cmdvel(topic: &str, count: u64) -> Result<()> {
    let t = Topic::<CmdVel>::open(topic)?;
    let mut p = t.publisher()?;
    say("ready");
    wait_for_subscribers(&p)?;
    for i in 0..count {
        let d = p
            .send(CmdVel::new(i, i as f32 * 0.5, -(i as f32)))
            .map_err(|e| anyhow::anyhow!("{e}"))?;
        say(&format!(
            "{{\"sent\": {i}, \"subscribers\": {}}}",
            d.subscribers
        ));
    }
    Ok(())
}

fn pub_twist(topic: &str, count: u64) -> Result<()> {
    let t = Topic::<Twist>::open(topic)?;
    let mut p = t.publisher()?;
    say("ready");
    for _ in 0..count {
        p.send(bytemuck::Zeroable::zeroed()).ok();
    }
    // Stay up so the topic exists while the other side tries to open it.
    std::thread::sleep(Duration::from_secs(2));
    Ok(())
}

/// Point `k` of cloud `i`: `[i + k, 2k, -k]`.
fn pub_pointcloud(topic: &str, count: u64) -> Result<()> {
    let t = Topic::<PointCloud>::open(topic)?;
    let mut p = t.publisher()?;
    say("ready");
    wait_for_subscribers(&p)?;
    for i in 0..count {
        let n = 1000 + i as u32;
        let mut header = PointCloud::new(n, false);
        header.seq = i as u32;
        header.stamp_ns = i;
        header
            .set_frame_id("lidar")
            .map_err(|e| anyhow::anyhow!("{e}"))?;
        let mut sample = p
            .loan_slice(header.tail_len())
            .map_err(|e| anyhow::anyhow!("{e}"))?;
        *sample = header;
        let pts = header
            .points_mut(sample.tail_mut())
            .map_err(|e| anyhow::anyhow!("{e}"))?;
        for (k, pt) in pts.iter_mut().enumerate() {
            *pt = [(i as usize + k) as f32, 2.0 * k as f32, -(k as f32)];
        }
        let d = sample.send().map_err(|_| anyhow::anyhow!("send refused"))?;
        say(&format!(
            "{{\"sent\": {i}, \"subscribers\": {}}}",
            d.subscribers
        ));
    }
    Ok(())
}

fn sub_cmdvel(topic: &str, count: u64) -> Result<()> {
    let t = Topic::<CmdVel>::open(topic)?;
    let mut s = t.subscriber()?;
    say("ready");
    for _ in 0..count {
        let m = recv(&mut s)?;
        say(&format!(
            "{{\"stamp_ns\": {}, \"linear\": {:?}, \"angular\": {:?}}}",
            m.stamp_ns, m.linear, m.angular
        ));
    }
    let st = s.stats();
    say(&format!(
        "{{\"received\": {}, \"overrun\": {}}}",
        st.received, st.overrun
    ));
    Ok(())
}

fn sub_pointcloud(topic: &str, count: u64) -> Result<()> {
    let t = Topic::<PointCloud>::open(topic)?;
    let mut s = t.subscriber()?;
    say("ready");
    for _ in 0..count {
        let m = recv(&mut s)?;
        let pts = m.points(m.tail()).map_err(|e| anyhow::anyhow!("{e}"))?;
        let sum: f64 = pts.iter().map(|p| f64::from(p[0] + p[1] + p[2])).sum();
        let last = pts.last().copied().unwrap_or_default();
        say(&format!(
            "{{\"seq\": {}, \"num_points\": {}, \"frame_id\": {:?}, \"sum\": {sum:?}, \"last\": [{:?}, {:?}, {:?}], \"zero_copy\": {}}}",
            m.seq,
            pts.len(),
            m.frame_id_str().unwrap_or("<invalid>"),
            last[0],
            last[1],
            last[2],
            m.is_zero_copy()
        ));
    }
    Ok(())
}

fn pub_for(topic: &str, seconds: f64) -> Result<()> {
    let t = Topic::<CmdVel>::open(topic)?;
    let mut p = t.publisher()?;
    say("ready");
    let end = Instant::now() + Duration::from_secs_f64(seconds);
    let (mut sent, mut failed, mut i) = (0u64, 0u64, 0u64);
    while Instant::now() < end {
        match p.send(CmdVel::new(i, 1.0, 0.0)) {
            Ok(_) => sent += 1,
            Err(_) => failed += 1,
        }
        i += 1;
        std::thread::sleep(Duration::from_millis(1));
    }
    let st = p.stats();
    say(&format!(
        "{{\"sent\": {sent}, \"failed\": {failed}, \"stats_sent\": {}, \"subscribers\": {}}}",
        st.sent, st.subscribers
    ));
    Ok(())
}

/// Receives tensor refs, doubles every f32 of each tensor in place, and
/// echoes the ref once done (the sender keeps its handle meanwhile).
fn tensor_echo(topic_in: &str, topic_out: &str, count: u64) -> Result<()> {
    let tin = Topic::<TensorRef>::open(topic_in)?;
    let tout = Topic::<TensorRef>::open(topic_out)?;
    let mut s = tin.subscriber()?;
    let mut p = tout.publisher()?;
    say("ready");
    for _ in 0..count {
        let r = *recv(&mut s)?;
        let pool = TensorPool::open(
            &horus_shm::name::namespace(),
            r.pool_id,
            PoolConfig::default(),
        )?;
        let t = pool.acquire(r.slot, r.generation, r.offset, r.nbytes)?;
        let n = t.nbytes() / 4;
        // SAFETY: the tensor is referenced (so its slot is not reused) and
        // at least n*4 bytes long; slots are page aligned, so f32-aligned.
        // The protocol of this test gives us exclusive use until we reply.
        let data = unsafe { std::slice::from_raw_parts_mut(t.as_ptr().cast::<f32>(), n) };
        let sum: f64 = data.iter().map(|&x| f64::from(x)).sum();
        data.iter_mut().for_each(|x| *x *= 2.0);
        let refs = t.refcount();
        drop(t);
        p.send(r).map_err(|e| anyhow::anyhow!("{e}"))?;
        say(&format!("{{\"sum\": {sum:?}, \"refcount\": {refs}}}"));
    }
    Ok(())
}

/// Allocates one f32 tensor of 1024 elements `[0, 1, 2 …]`, publishes its
/// ref, and holds it until a CmdVel arrives on `ack`.
fn tensor_pub(pool_id: u64, topic: &str, ack: &str) -> Result<()> {
    let pool = TensorPool::open(
        &horus_shm::name::namespace(),
        pool_id,
        PoolConfig::default(),
    )?;
    let t = pool.alloc(4096)?;
    // SAFETY: freshly allocated, 4096 bytes, page aligned; ours alone.
    let data = unsafe { std::slice::from_raw_parts_mut(t.as_ptr().cast::<f32>(), 1024) };
    for (k, x) in data.iter_mut().enumerate() {
        *x = k as f32;
    }
    let mut r: TensorRef = bytemuck::Zeroable::zeroed();
    r.pool_id = pool_id;
    r.slot = t.slot();
    r.generation = t.generation();
    r.offset = t.offset();
    r.nbytes = 4096;
    r.ndim = 1;
    r.shape[0] = 1024;
    r.dtype[..3].copy_from_slice(b"<f4");
    let tt = Topic::<TensorRef>::open(topic)?;
    let ta = Topic::<CmdVel>::open(ack)?;
    let mut p = tt.publisher()?;
    let mut a = ta.subscriber()?;
    say("ready");
    wait_for_subscribers(&p)?;
    p.send(r).map_err(|e| anyhow::anyhow!("{e}"))?;
    recv(&mut a)?;
    say(&format!("{{\"refcount_before_drop\": {}}}", t.refcount()));
    Ok(())
}

/// The Rust side of `python/bench/python_latency.py`: echoes every message
/// of `ping` on `pong` until one carries `stamp_ns == u64::MAX`. Tensor refs
/// are attached (a reference taken and dropped) before being echoed, as a
/// real consumer would.
fn pong<T: Message>(ping: &str, pong: &str, busy: bool, stamp: impl Fn(&T) -> u64) -> Result<()> {
    let tin = Topic::<T>::open(ping)?;
    let tout = Topic::<T>::open(pong)?;
    let mode = if busy {
        WaitMode::BusyPoll
    } else {
        WaitMode::Futex
    };
    let mut s = tin.subscriber_with(mode)?;
    let mut p = tout.publisher()?;
    let mut pools: Vec<std::sync::Arc<TensorPool>> = Vec::new();
    say("ready");
    loop {
        let m = *s.recv();
        if stamp(&m) == u64::MAX {
            return Ok(());
        }
        if let Some(r) = bytemuck::try_cast_ref::<T, TensorRef>(&m)
            .ok()
            .filter(|_| T::SCHEMA == TensorRef::SCHEMA)
        {
            let pool = match pools.iter().find(|p| p.pool_id() == r.pool_id) {
                Some(p) => std::sync::Arc::clone(p),
                None => {
                    let p = TensorPool::open(
                        &horus_shm::name::namespace(),
                        r.pool_id,
                        PoolConfig::default(),
                    )?;
                    pools.push(std::sync::Arc::clone(&p));
                    p
                }
            };
            let t = pool.acquire(r.slot, r.generation, r.offset, r.nbytes)?;
            std::hint::black_box(t.bytes().first());
        }
        p.send(m).map_err(|e| anyhow::anyhow!("{e}"))?;
    }
}

fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let a = |i: usize| -> Result<&str> {
        args.get(i)
            .map(String::as_str)
            .with_context(|| format!("missing argument {i}; see the module docs"))
    };
    let n = |i: usize| -> Result<u64> { Ok(a(i)?.parse()?) };
    match (a(0)?, args.get(1).map(String::as_str)) {
        ("pub", Some("cmdvel")) => pub_cmdvel(a(2)?, n(3)?),
        ("pub", Some("pointcloud")) => pub_pointcloud(a(2)?, n(3)?),
        ("pub", Some("twist")) => pub_twist(a(2)?, n(3)?),
        ("sub", Some("cmdvel")) => sub_cmdvel(a(2)?, n(3)?),
        ("sub", Some("pointcloud")) => sub_pointcloud(a(2)?, n(3)?),
        ("pub-for", Some("cmdvel")) => pub_for(a(2)?, a(3)?.parse()?),
        ("tensor-echo", _) => tensor_echo(a(1)?, a(2)?, n(3)?),
        ("tensor-pub", _) => tensor_pub(n(1)?, a(2)?, a(3)?),
        ("pong", Some(kind)) => {
            let busy = a(4)? == "busy";
            match kind {
                "cmdvel" => pong::<CmdVel>(a(2)?, a(3)?, busy, |m| m.stamp_ns),
                "tensor" => pong::<TensorRef>(a(2)?, a(3)?, busy, |m| m.stamp_ns),
                k => bail!("unknown pong kind {k}"),
            }
        }
        ("serve", Some(mode)) => service::serve(mode, a(2)?, n(3)?),
        ("call", Some(mode)) => service::call(mode, a(2)?, n(3)?, n(4)?),
        ("action-serve", _) => action::serve(a(1)?, n(2)?),
        ("action-call", _) => action::call(a(1)?, a(2)?.parse()?, a(3)?.parse()?),
        ("param-serve", _) => params::serve(a(1)?, n(2)?),
        ("param-call", _) => params::call(a(1)?),
        ("ros-sub", Some(ty)) => ros::sub(ty, a(2)?, n(3)?),
        ("ros-pub", Some(ty)) => ros::publish(ty, a(2)?, a(3)?, n(4)?, true),
        ("ros-pub-unchecked", Some(ty)) => ros::publish(ty, a(2)?, a(3)?, n(4)?, false),
        ("ros-typed-sub", Some("laserscan")) => ros::typed_sub(a(2)?, n(3)?),
        ("ros-typed-pub", Some("laserscan")) => ros::typed_pub(a(2)?, n(3)?),
        ("ros-action-serve", _) => ros_action::serve(a(1)?, n(2)?),
        ("ros-action-call", _) => ros_action::call(a(1)?),
        ("ros-srv-serve", _) => ros_action::srv_serve(a(1)?, n(2)?),
        ("ros-srv-call", _) => ros_action::srv_call(a(1)?),
        (cmd, kind) => bail!("unknown command {cmd} {kind:?}"),
    }
}
