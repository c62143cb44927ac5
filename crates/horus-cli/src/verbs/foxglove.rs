//! `horus foxglove`: a Foxglove WebSocket server for the live robot (library:
//! `horus-foxglove`). Open `ws://HOST:PORT` in Foxglove (Open connection → Foxglove
//! WebSocket). Runs until Ctrl-C or SIGTERM; prints what it advertises, who connects, and
//! every few seconds what each client lost because it fell behind (and at the end).
//!
//! Who may connect: see docs/foxglove.md, "Security" (origin check, optional token from
//! `--token-file` or `HORUS_FOXGLOVE_TOKEN`, caps). The token is never printed.

use std::collections::{BTreeMap, BTreeSet};
use std::net::{IpAddr, SocketAddr};
use std::process::ExitCode;
use std::time::{Duration, Instant};

use anyhow::Context as _;
use clap::Args;
use horus_foxglove::{AccessPolicy, Bridge, BridgeOptions, BridgeStats, Event, Limits, Token};
use serde_json::json;

use crate::output::Output;
use horus_launch::signals;

/// How often the drop counters are looked at.
const REPORT_EVERY: Duration = Duration::from_secs(1);
/// The token itself, when no `--token-file` is given.
const TOKEN_ENV: &str = "HORUS_FOXGLOVE_TOKEN";

/// Serve the namespace's topics to Foxglove.
#[derive(Debug, Args)]
pub(crate) struct Foxglove {
    /// TCP port (0: any free port, printed at start).
    #[arg(long, default_value_t = 8765)]
    port: u16,
    /// Address to listen on (0.0.0.0 for other machines: use a token then).
    #[arg(long, default_value = "127.0.0.1")]
    address: IpAddr,
    /// Also allow browser pages of this origin (e.g. https://viewer.example:8443; `*`: any).
    /// Always allowed: clients without an Origin (not browsers), loopback pages, file://
    /// and https://app.foxglove.dev. Comma-separated or repeated.
    #[arg(long = "allow-origin", value_delimiter = ',', value_name = "ORIGIN")]
    allow_origin: Vec<String>,
    /// Require this token (the file's contents, trimmed): clients connect to
    /// ws://HOST:PORT/?token=TOKEN or send `Authorization: Bearer TOKEN`. Default: the
    /// HORUS_FOXGLOVE_TOKEN environment variable, else no token.
    #[arg(long, value_name = "FILE")]
    token_file: Option<std::path::PathBuf>,
    /// Most clients connected at once (one more is told why and closed).
    #[arg(long, default_value_t = horus_foxglove::limits::DEFAULT_MAX_CLIENTS)]
    max_clients: usize,
    /// Most channels one client may subscribe to at once.
    #[arg(long, default_value_t = horus_foxglove::limits::DEFAULT_MAX_SUBSCRIPTIONS_PER_CLIENT)]
    max_subscriptions: usize,
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

/// The token: from `--token-file`, else the environment, else none.
fn token(a: &Foxglove) -> anyhow::Result<Option<Token>> {
    if let Some(path) = &a.token_file {
        let text = read_token_file(path)?;
        let t = Token::new(&text).with_context(|| format!("the token file {}", path.display()))?;
        return Ok(Some(t));
    }
    match std::env::var(TOKEN_ENV) {
        Ok(v) => Ok(Some(Token::new(&v).with_context(|| TOKEN_ENV.to_owned())?)),
        Err(std::env::VarError::NotPresent) => Ok(None),
        Err(e) => Err(anyhow::anyhow!("{TOKEN_ENV}: {e}")),
    }
}

/// The most a token file may hold (the token itself is at most
/// `horus_foxglove::access::MAX_TOKEN_BYTES`; the rest is room for blank space).
const MAX_TOKEN_FILE_BYTES: u64 = 64 * 1024;

/// Reads a token file, bounded: a longer file (or an endless one, `/dev/zero`) is refused
/// after [`MAX_TOKEN_FILE_BYTES`] + 1 bytes.
fn read_token_file(path: &std::path::Path) -> anyhow::Result<String> {
    use std::io::Read as _;
    let context = || format!("reading the token file {}", path.display());
    let file = std::fs::File::open(path).with_context(context)?;
    let mut raw = Vec::new();
    file.take(MAX_TOKEN_FILE_BYTES + 1)
        .read_to_end(&mut raw)
        .with_context(context)?;
    if raw.len() as u64 > MAX_TOKEN_FILE_BYTES {
        anyhow::bail!(
            "the token file {} is longer than {MAX_TOKEN_FILE_BYTES} bytes",
            path.display()
        );
    }
    String::from_utf8(raw)
        .map_err(|_| anyhow::anyhow!("the token file {} is not UTF-8 text", path.display()))
}

/// Says what is exposed: a warning on stderr (or a `warning` JSON line).
fn warn(out: &Output, text: &str) {
    if out.is_json() {
        out.json_line(&json!({"event": "warning", "message": text}));
    } else {
        eprintln!("foxglove: warning: {text}");
    }
}

pub(crate) fn run(a: Foxglove, out: &Output) -> anyhow::Result<ExitCode> {
    signals::install()?;
    let namespace = a.namespace.clone().unwrap_or_else(horus::namespace);
    let token = token(&a)?;
    let has_token = token.is_some();
    if let Some(path) = &a.token_file {
        use std::os::unix::fs::PermissionsExt as _;
        let mode = std::fs::metadata(path).map(|m| m.permissions().mode());
        if mode.is_ok_and(|m| m & 0o077 != 0) {
            warn(
                out,
                &format!(
                    "the token file {} is readable by other users (chmod 600 it)",
                    path.display()
                ),
            );
        }
    }
    if a.max_clients == 0 || a.max_subscriptions == 0 {
        anyhow::bail!("--max-clients and --max-subscriptions must be at least 1");
    }
    let limits = Limits {
        max_clients: a.max_clients,
        max_subscriptions_per_client: a.max_subscriptions,
        max_subscriptions_total: Limits::default()
            .max_subscriptions_total
            .max(a.max_subscriptions),
        ..Limits::default()
    };
    let mut bridge = Bridge::start(BridgeOptions {
        address: SocketAddr::new(a.address, a.port),
        namespace: namespace.clone(),
        topics: (!a.topics.is_empty()).then(|| a.topics.iter().cloned().collect::<BTreeSet<_>>()),
        access: AccessPolicy {
            origins: a.allow_origin.clone(),
            token,
        },
        limits,
    })
    .context("horus foxglove")?;
    let addr = bridge.local_addr();
    if out.is_json() {
        out.json_line(&json!({"event": "listening", "address": addr.to_string(),
            "namespace": namespace, "token": has_token}));
    } else {
        let with = if has_token {
            " (token required: ws://HOST:PORT/?token=…)"
        } else {
            ""
        };
        println!("foxglove: serving namespace \"{namespace}\" on ws://{addr}{with} (Foxglove: Open connection → Foxglove WebSocket)");
    }
    if !addr.ip().is_loopback() && !has_token {
        warn(
            out,
            &format!(
                "listening on {addr}, reachable from other machines, without a token: anyone \
                 who can reach this port can read every topic and log (--token-file FILE)"
            ),
        );
    }
    if a.allow_origin.iter().any(|o| o == "*") {
        warn(
            out,
            "--allow-origin '*': any web page open in a browser on a machine that can reach \
             the bridge can read every topic and log",
        );
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
        out.json_line(
            &json!({"event": "stopped", "missed": stats.missed, "refused": stats.refused}),
        );
    } else {
        println!("foxglove: stopped");
        for (kind, n) in &stats.refused {
            println!("foxglove: refused {n} × {kind}");
        }
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
            Event::Refused { client, kind, why } => json!({"event": "refused",
                "client": client.to_string(), "kind": kind, "why": why}),
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
        Event::Refused { client, why, .. } => println!("foxglove: refused {client}: {why}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn endless_token_file_is_refused_bounded() {
        let e = read_token_file(std::path::Path::new("/dev/zero")).unwrap_err();
        assert!(e.to_string().contains("longer than"), "{e:#}");
        let dir = std::env::temp_dir().join(format!("horus-token-file-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("token");
        std::fs::write(&file, "secret-token\n").unwrap();
        assert_eq!(read_token_file(&file).unwrap(), "secret-token\n");
        std::fs::write(&file, vec![b' '; MAX_TOKEN_FILE_BYTES as usize + 1]).unwrap();
        assert!(read_token_file(&file).is_err());
        std::fs::write(&file, [0xff, 0xfe]).unwrap();
        assert!(read_token_file(&file).is_err());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
