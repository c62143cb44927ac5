//! `horus foxglove`: a Foxglove WebSocket server for the live robot (library:
//! `horus-foxglove`). Open `ws://HOST:PORT` in Foxglove (Open connection → Foxglove
//! WebSocket). Runs until Ctrl-C or SIGTERM; prints what it advertises, who connects, and
//! every few seconds what each client lost because it fell behind (and at the end).

use std::collections::{BTreeMap, BTreeSet};
use std::net::{IpAddr, SocketAddr};
use std::process::ExitCode;
use std::time::{Duration, Instant};

use anyhow::Context as _;
use clap::Args;
use horus_foxglove::{Bridge, BridgeOptions, BridgeStats, Event};
use serde_json::json;

use crate::launch::signals;
use crate::output::Output;

/// How often the drop counters are looked at.
const REPORT_EVERY: Duration = Duration::from_secs(1);

/// Serve the namespace's topics to Foxglove.
#[derive(Debug, Args)]
pub(crate) struct Foxglove {
    /// TCP port (0: any free port, printed at start).
    #[arg(long, default_value_t = 8765)]
    port: u16,
    /// Address to listen on (0.0.0.0 for other machines).
    #[arg(long, default_value = "127.0.0.1")]
    address: IpAddr,
    /// Serve only these topics (comma-separated or repeated; default: every topic and the
    /// `/log` channel of log records, which is served with a list only if it names `/log`).
    #[arg(long, value_delimiter = ',')]
    topics: Vec<String>,
    /// Namespace (default: `HORUS_NAMESPACE`, else one per user).
    #[arg(long)]
    namespace: Option<String>,
    /// Stop after this many seconds.
    #[arg(long)]
    duration: Option<f64>,
}

pub(crate) fn run(a: Foxglove, out: &Output) -> anyhow::Result<ExitCode> {
    signals::install()?;
    let namespace = a.namespace.clone().unwrap_or_else(horus::namespace);
    let mut bridge = Bridge::start(BridgeOptions {
        address: SocketAddr::new(a.address, a.port),
        namespace: namespace.clone(),
        topics: (!a.topics.is_empty()).then(|| a.topics.iter().cloned().collect::<BTreeSet<_>>()),
    })
    .context("horus foxglove")?;
    let addr = bridge.local_addr();
    if out.is_json() {
        out.json_line(
            &json!({"event": "listening", "address": addr.to_string(), "namespace": namespace}),
        );
    } else {
        println!("foxglove: serving namespace \"{namespace}\" on ws://{addr} (Foxglove: Open connection → Foxglove WebSocket)");
    }
    let events = bridge.events().expect("first call");
    let started = Instant::now();
    let duration = a.duration.map(Duration::from_secs_f64);
    let mut reported: BTreeMap<(SocketAddr, String), u64> = BTreeMap::new();
    let mut next_report = Instant::now() + REPORT_EVERY;
    while signals::count() == 0 && duration.is_none_or(|d| started.elapsed() < d) {
        if let Ok(e) = events.recv_timeout(Duration::from_millis(100)) {
            print_event(&e, out);
            while let Ok(e) = events.try_recv() {
                print_event(&e, out);
            }
        }
        if Instant::now() >= next_report {
            next_report = Instant::now() + REPORT_EVERY;
            report_drops(&bridge.stats(), &mut reported, out);
        }
    }
    let stats = bridge.stats();
    report_drops(&stats, &mut reported, out);
    bridge.stop();
    if out.is_json() {
        out.json_line(&json!({"event": "stopped", "missed": stats.missed}));
    } else {
        println!("foxglove: stopped");
        for (topic, n) in &stats.missed {
            println!("foxglove: the bridge itself missed {n} messages of {topic}");
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn report_drops(
    stats: &BridgeStats,
    reported: &mut BTreeMap<(SocketAddr, String), u64>,
    out: &Output,
) {
    for c in &stats.clients {
        for (topic, &n) in &c.dropped {
            let seen = reported.entry((c.client, topic.clone())).or_default();
            if *seen == n {
                continue;
            }
            *seen = n;
            if out.is_json() {
                out.json_line(&json!({"event": "dropped", "client": c.client.to_string(),
                    "topic": topic, "dropped": n, "sent": c.sent}));
            } else {
                println!(
                    "foxglove: client {} is behind: {n} messages of {topic} dropped for it so far ({} sent)",
                    c.client, c.sent
                );
            }
        }
    }
}

fn print_event(e: &Event, out: &Output) {
    if out.is_json() {
        let v = match e {
            Event::Advertised {
                id,
                topic,
                schema,
                encoding,
            } => json!({"event": "advertised",
                "id": id, "topic": topic, "schema": schema, "encoding": encoding}),
            Event::Unadvertised { id, topic } => {
                json!({"event": "unadvertised", "id": id, "topic": topic})
            }
            Event::Skipped { topic, why } => {
                json!({"event": "skipped", "topic": topic, "why": why})
            }
            Event::Connected { client } => {
                json!({"event": "connected", "client": client.to_string()})
            }
            Event::Disconnected { client, error } => json!({"event": "disconnected",
                "client": client.to_string(), "error": error}),
            Event::Refused { client, why } => {
                json!({"event": "refused", "client": client.to_string(), "why": why})
            }
        };
        out.json_line(&v);
        return;
    }
    match e {
        Event::Advertised {
            id,
            topic,
            schema,
            encoding,
        } => {
            println!("foxglove: advertised {topic} (channel {id}, {schema}, {encoding})")
        }
        Event::Unadvertised { id, topic } => println!("foxglove: {topic} is gone (channel {id})"),
        Event::Skipped { topic, why } => println!("foxglove: not serving {topic}: {why}"),
        Event::Connected { client } => println!("foxglove: client {client} connected"),
        Event::Disconnected {
            client,
            error: None,
        } => println!("foxglove: client {client} left"),
        Event::Disconnected {
            client,
            error: Some(err),
        } => {
            println!("foxglove: client {client} dropped: {err}")
        }
        Event::Refused { client, why } => println!("foxglove: refused {client}: {why}"),
    }
}
