//! A horus Rust end of the ping-pong (child role [`RUST_END_ROLE`](super::RUST_END_ROLE)):
//! the same protocol as `endpoint.py` (see there), on `Topic<Ros<UInt8MultiArray>>` with
//! `Overflow::Block` and blocking receives (the subscriber's default wait: polls, then the
//! futex).

use std::io::Read;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{bail, Context};
use horus::ros::Ros;
use horus::{Overflow, Publisher, RecvError, Subscriber, Topic};
use horus_ros_msgs::std_msgs::msg::UInt8MultiArray;

use super::{PingResult, HORUS_DEPTH, MAX_LOST_IN_A_ROW, MAX_SIZE, READY, RESULT_PREFIX};
use horus_bench_core::affinity::pin_current_thread;

type Msg = Ros<UInt8MultiArray>;

/// What a Rust end is asked to do.
#[derive(Debug, Clone)]
pub struct EndArgs {
    /// `ping` or `pong`.
    pub ping: bool,
    /// horus namespace.
    pub namespace: String,
    /// Topic ping publishes on.
    pub ping_topic: String,
    /// Topic pong publishes on.
    pub pong_topic: String,
    /// Data bytes per message.
    pub size: usize,
    /// Timed round trips.
    pub count: u64,
    /// Untimed round trips before them.
    pub warmup: u64,
    /// How long ping waits for an answer before counting it lost.
    pub timeout: Duration,
    /// CPU to pin to, if any.
    pub cpu: Option<usize>,
}

impl EndArgs {
    /// The child's argument list.
    pub fn to_args(&self) -> Vec<String> {
        vec![
            if self.ping { "ping" } else { "pong" }.to_owned(),
            self.namespace.clone(),
            self.ping_topic.clone(),
            self.pong_topic.clone(),
            self.size.to_string(),
            self.count.to_string(),
            self.warmup.to_string(),
            self.timeout.as_millis().to_string(),
            self.cpu.map_or("-".to_owned(), |c| c.to_string()),
        ]
    }

    /// Parses [`EndArgs::to_args`].
    pub fn parse(args: &[String]) -> anyhow::Result<EndArgs> {
        let [side, ns, ping_topic, pong_topic, size, count, warmup, timeout, cpu] = args else {
            bail!("rust end: expected 9 arguments, got {}", args.len());
        };
        let size: usize = size.parse().context("size")?;
        if size > MAX_SIZE {
            bail!("size {size} over {MAX_SIZE}");
        }
        Ok(EndArgs {
            ping: match side.as_str() {
                "ping" => true,
                "pong" => false,
                other => bail!("side {other:?}: ping or pong"),
            },
            namespace: ns.clone(),
            ping_topic: ping_topic.clone(),
            pong_topic: pong_topic.clone(),
            size,
            count: count.parse().context("count")?,
            warmup: warmup.parse().context("warmup")?,
            timeout: Duration::from_millis(timeout.parse().context("timeout")?),
            cpu: match cpu.as_str() {
                "-" => None,
                c => Some(c.parse().context("cpu")?),
            },
        })
    }
}

fn topic(a: &EndArgs, name: &str) -> anyhow::Result<Topic<Msg>> {
    Topic::<Msg>::builder(name)
        .namespace(&a.namespace)
        .depth(HORUS_DEPTH)
        .overflow(Overflow::Block {
            timeout: Duration::from_secs(5),
        })
        .max_tail_bytes((2 * a.size).max(4096))
        .open()
        .with_context(|| format!("opening topic {name}"))
}

/// Runs one end.
pub fn run(a: &EndArgs) -> anyhow::Result<()> {
    if let Some(cpu) = a.cpu {
        pin_current_thread(cpu).with_context(|| format!("pinning to CPU {cpu}"))?;
    }
    let (out_name, in_name) = if a.ping {
        (&a.ping_topic, &a.pong_topic)
    } else {
        (&a.pong_topic, &a.ping_topic)
    };
    let out = topic(a, out_name)?;
    let inp = topic(a, in_name)?;
    let mut tx = out.publisher()?;
    let mut rx = inp.subscriber()?;
    if a.ping {
        let result = ping(a, &mut tx, &mut rx)?;
        println!("{RESULT_PREFIX}{}", serde_json::to_string(&result)?);
        Ok(())
    } else {
        pong(&mut tx, &mut rx)
    }
}

/// Reads every byte once.
fn checksum(d: &[u8]) -> u64 {
    let mut chunks = d.chunks_exact(8);
    let mut sum = 0u64;
    for c in &mut chunks {
        sum = sum.wrapping_add(u64::from_le_bytes(c.try_into().expect("8 bytes")));
    }
    for &b in chunks.remainder() {
        sum = sum.wrapping_add(u64::from(b));
    }
    std::hint::black_box(sum)
}

fn seq_of(d: &[u8]) -> Option<u64> {
    d.get(..8)
        .map(|b| u64::from_le_bytes(b.try_into().expect("8 bytes")))
}

fn fill(d: &mut [u8], seq: u64) {
    d.fill(seq as u8); // every byte written
    if let Some(head) = d.get_mut(..8) {
        head.copy_from_slice(&seq.to_le_bytes());
    }
}

fn receive(
    rx: &mut Subscriber<Msg>,
    timeout: Duration,
) -> anyhow::Result<Option<horus::Sample<Msg>>> {
    match rx.recv_timeout(timeout) {
        Ok(s) => Ok(Some(s)),
        Err(RecvError::Timeout(_)) => Ok(None),
        Err(e) => Err(e.into()),
    }
}

fn ping(
    a: &EndArgs,
    tx: &mut Publisher<Msg>,
    rx: &mut Subscriber<Msg>,
) -> anyhow::Result<PingResult> {
    let mut msg = UInt8MultiArray {
        data: vec![0; a.size],
        ..Default::default()
    };
    // First contact (the bridge's routes open when it sees both sides).
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut seq = 0u64;
    'contact: loop {
        if Instant::now() > deadline {
            bail!("ping: no answer within 60 s");
        }
        fill(&mut msg.data, seq);
        tx.publish(&msg).context("publish")?;
        seq += 1;
        let until = Instant::now() + Duration::from_millis(200);
        while let Some(left) = until.checked_duration_since(Instant::now()) {
            if let Some(s) = receive(rx, left)? {
                checksum(s.view()?.data());
                break 'contact;
            }
        }
    }
    let first = seq;
    let mut result = PingResult {
        samples_ns: Vec::with_capacity(a.count as usize),
        wall_ns: 0,
        lost: 0,
        stale: 0,
        aborted: false,
    };
    let mut in_a_row = 0u32;
    let mut started = Instant::now();
    for k in 0..a.warmup + a.count {
        let seq = first + k;
        if k == a.warmup {
            started = Instant::now();
        }
        let t0 = Instant::now();
        fill(&mut msg.data, seq);
        tx.publish(&msg).context("publish")?;
        let until = t0 + a.timeout;
        let mut ok = false;
        while let Some(left) = until.checked_duration_since(Instant::now()) {
            let Some(s) = receive(rx, left)? else {
                continue;
            };
            let view = s.view()?;
            let d = view.data();
            checksum(d); // every byte read once
            let got = seq_of(d);
            if got == Some(seq) && d.last() == Some(&(seq as u8)) {
                ok = true;
                break;
            }
            match got {
                Some(g) if g < seq => {
                    if k >= a.warmup && g >= first + a.warmup {
                        result.stale += 1;
                    }
                }
                _ => bail!("ping: answer carries {got:?}, expected {seq}"),
            }
        }
        let t1 = Instant::now();
        if k >= a.warmup {
            if ok {
                result.samples_ns.push((t1 - t0).as_nanos() as u64);
            } else {
                result.lost += 1;
            }
        }
        in_a_row = if ok { 0 } else { in_a_row + 1 };
        if in_a_row >= MAX_LOST_IN_A_ROW {
            result.aborted = true;
            break;
        }
    }
    result.wall_ns = started.elapsed().as_nanos() as u64;
    Ok(result)
}

fn pong(tx: &mut Publisher<Msg>, rx: &mut Subscriber<Msg>) -> anyhow::Result<()> {
    let stop = Arc::new(AtomicBool::new(false));
    let flag = Arc::clone(&stop);
    std::thread::spawn(move || {
        let _ = std::io::stdin().read_to_end(&mut Vec::new());
        // Relaxed: a flag polled every 100 ms; nothing else is published through it.
        flag.store(true, Ordering::Relaxed);
    });
    println!("{READY}");
    let mut msg = UInt8MultiArray::default();
    while !stop.load(Ordering::Relaxed) {
        let Some(s) = receive(rx, Duration::from_millis(100))? else {
            continue;
        };
        {
            let view = s.view()?;
            let d = view.data();
            checksum(d); // every byte read once
            msg.data.clear();
            msg.data.extend_from_slice(d); // the data back
        }
        drop(s);
        tx.publish(&msg).context("publish")?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn args_round_trip() {
        let a = EndArgs {
            ping: true,
            namespace: "ns".into(),
            ping_topic: "a/ping".into(),
            pong_topic: "a/pong".into(),
            size: 64,
            count: 10,
            warmup: 2,
            timeout: Duration::from_millis(2000),
            cpu: Some(1),
        };
        let b = EndArgs::parse(&a.to_args()).unwrap();
        assert_eq!(b.to_args(), a.to_args());
        let mut too_big = a.to_args();
        too_big[4] = (MAX_SIZE + 1).to_string();
        assert!(EndArgs::parse(&too_big).is_err());
    }

    #[test]
    fn the_sequence_number_is_in_the_first_eight_bytes() {
        let mut d = vec![0u8; 64];
        fill(&mut d, 0x1_0203);
        assert_eq!(seq_of(&d), Some(0x1_0203));
        assert_eq!(d[63], 0x03);
    }
}
