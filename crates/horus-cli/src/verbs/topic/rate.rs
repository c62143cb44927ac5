//! `horus topic hz` and `horus topic bw`: rate and bandwidth per window.
//!
//! The publishers' counters are polled every millisecond; a window's figure is the messages
//! (or bytes) sent between the first change seen before the window and the last change seen in
//! it, divided by the time between those two changes. Both ends are message arrivals (seen
//! within one poll period), so a 30 Hz topic reads 30.0, not 29 or 31 depending on where the
//! window's edges fall.

use std::process::ExitCode;
use std::time::{Duration, Instant};

use clap::Args;
use serde_json::json;

use super::sampler::{Mark, Sampler};
use super::TopicArg;
use crate::output::Output;
use horus_launch::signals;
use horus_monitor::text::{human_bytes, human_rate};

/// How often the counters are read.
const POLL: Duration = Duration::from_millis(1);

/// Options shared by `hz` and `bw`.
#[derive(Debug, Args)]
pub(crate) struct RateArgs {
    #[command(flatten)]
    topic: TopicArg,
    /// Seconds per report.
    #[arg(long, default_value_t = 1.0)]
    window: f64,
    /// Stop after this many reports (default: until Ctrl-C).
    #[arg(long)]
    count: Option<u64>,
}

/// Message rate of a topic.
#[derive(Debug, Args)]
pub(crate) struct Hz {
    #[command(flatten)]
    args: RateArgs,
}

/// Bandwidth of a topic.
#[derive(Debug, Args)]
pub(crate) struct Bw {
    #[command(flatten)]
    args: RateArgs,
}

/// One window's figures.
struct Window {
    messages: u64,
    bytes: u64,
    /// Seconds between the two changes the figures span (0: fewer than two changes).
    span: f64,
    publishers: usize,
}

impl Window {
    fn rate(&self) -> Option<f64> {
        (self.span > 0.0).then(|| self.messages as f64 / self.span)
    }
    fn bandwidth(&self) -> Option<f64> {
        (self.span > 0.0).then(|| self.bytes as f64 / self.span)
    }
}

pub(super) fn run_hz(a: Hz, out: &Output) -> anyhow::Result<ExitCode> {
    let topic = a.args.topic.topic.clone();
    measure(&a.args, |w| {
        if out.is_json() {
            out.json_line(&json!({
                "topic": topic,
                "rate_hz": w.rate(),
                "messages": w.messages,
                "span_s": w.span,
                "publishers": w.publishers,
            }));
        } else {
            match w.rate() {
                Some(r) => println!(
                    "{topic}: {r:.3} Hz ({} messages in {:.3} s, {} publisher(s))",
                    w.messages, w.span, w.publishers
                ),
                None => println!("{topic}: no messages ({} publisher(s))", w.publishers),
            }
        }
    })
}

pub(super) fn run_bw(a: Bw, out: &Output) -> anyhow::Result<ExitCode> {
    let topic = a.args.topic.topic.clone();
    measure(&a.args, |w| {
        let mean = (w.messages > 0).then(|| w.bytes as f64 / w.messages as f64);
        if out.is_json() {
            out.json_line(&json!({
                "topic": topic,
                "bytes_per_s": w.bandwidth(),
                "mean_message_bytes": mean,
                "messages": w.messages,
                "bytes": w.bytes,
                "span_s": w.span,
                "publishers": w.publishers,
            }));
        } else {
            match (w.bandwidth(), mean) {
                (Some(b), Some(m)) => println!(
                    "{topic}: {} ({} messages of {} mean in {:.3} s)",
                    human_rate(b),
                    w.messages,
                    human_bytes(m),
                    w.span
                ),
                _ => println!("{topic}: no messages ({} publisher(s))", w.publishers),
            }
        }
    })
}

fn measure(a: &RateArgs, mut report: impl FnMut(&Window)) -> anyhow::Result<ExitCode> {
    anyhow::ensure!(
        a.window.is_finite() && a.window >= 0.01,
        "--window must be at least 0.01 s"
    );
    signals::install()?;
    let window = Duration::from_secs_f64(a.window);
    let view = a.topic.open()?;
    let mut sampler = Sampler::new(&view);
    // The change the next window's figures start from.
    let mut reference: Option<Mark> = None;
    let mut reports = 0u64;
    let mut window_end = Instant::now() + window;
    let mut last_in_window: Option<Mark> = None;
    while signals::count() == 0 {
        std::thread::sleep(POLL);
        let now = Instant::now();
        if let Some(mark) = sampler.poll(now) {
            if reference.is_none() {
                reference = Some(mark);
            } else {
                last_in_window = Some(mark);
            }
        }
        if now < window_end {
            continue;
        }
        let w = match (reference, last_in_window) {
            (Some(r), Some(l)) => Window {
                messages: l.messages - r.messages,
                bytes: l.bytes - r.bytes,
                span: (l.at - r.at).as_secs_f64(),
                publishers: sampler.publishers(),
            },
            _ => Window {
                messages: 0,
                bytes: 0,
                span: 0.0,
                publishers: sampler.publishers(),
            },
        };
        report(&w);
        if let Some(l) = last_in_window.take() {
            reference = Some(l);
        }
        if view.is_lost() {
            anyhow::bail!("the topic's segment was truncated");
        }
        reports += 1;
        if a.count.is_some_and(|c| reports >= c) {
            break;
        }
        window_end += window;
    }
    Ok(ExitCode::SUCCESS)
}
