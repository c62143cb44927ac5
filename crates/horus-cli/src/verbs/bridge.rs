//! `horus bridge`: this host's bridge to the others (library: `horus-zenoh`). One per host and
//! namespace; topics and services cross through one Zenoh session. Runs until Ctrl-C or
//! SIGTERM, printing the hosts it sees, what starts and stops crossing, and problems (schema
//! mismatches); `--status` prints a running bridge's status instead.
//!
//! Built only with the `bridge` feature (on by default; `make demo` leaves it out to keep its
//! build small).

use std::collections::BTreeSet;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use anyhow::Context as _;
use clap::Args;
use serde_json::json;

use super::bridge_status;
use crate::output::Output;
use horus_launch::signals;

/// Bridge this host's topics and services to other hosts through Zenoh.
#[derive(Debug, Args)]
pub(crate) struct BridgeArgs {
    /// Other hosts' bridges: `ADDRESS[:PORT]` or `tcp/ADDRESS:PORT` (repeatable). With
    /// addresses, multicast discovery is off unless `--multicast` is given.
    #[arg(long, value_delimiter = ',')]
    connect: Vec<String>,
    /// Zenoh endpoints to listen on (default `tcp/0.0.0.0:7447`).
    #[arg(long, value_delimiter = ',')]
    listen: Vec<String>,
    /// Find other bridges by multicast (the default when no `--connect` is given).
    #[arg(long)]
    multicast: bool,
    /// This host's name on the network (default: the host name).
    #[arg(long)]
    host: Option<String>,
    /// Bridges see each other only within one domain (default `horus`).
    #[arg(long)]
    domain: Option<String>,
    /// Only these topics and services cross (patterns: `*` one name part, `**` any; repeatable).
    #[arg(long)]
    allow: Vec<String>,
    /// These never cross (patterns as for `--allow`).
    #[arg(long)]
    deny: Vec<String>,
    /// What other hosts may do here (boxed: keeps the verb enum small).
    #[command(flatten)]
    policy: Box<PolicyArgs>,
    /// Close the bridge with TLS: the CA certificate (PEM) that signs every host's certificate.
    /// With `--tls-cert` and `--tls-key`; endpoints become `tls/…`.
    #[arg(long, value_name = "PEM")]
    tls_ca: Option<std::path::PathBuf>,
    /// This host's certificate (PEM; its common name must be the host name).
    #[arg(long, value_name = "PEM")]
    tls_cert: Option<std::path::PathBuf>,
    /// This host's private key (PEM).
    #[arg(long, value_name = "PEM")]
    tls_key: Option<std::path::PathBuf>,
    /// Mutual TLS: connecting hosts must present a certificate of the CA too.
    #[arg(long)]
    mtls: bool,
    /// The user name this host connects as (default and only value allowed: the host name).
    #[arg(long)]
    user: Option<String>,
    /// A file holding this host's password (user/password authentication; with TLS). The
    /// password is never taken on the command line.
    #[arg(long, value_name = "FILE")]
    password_file: Option<std::path::PathBuf>,
    /// `user:password` lines: the hosts allowed to connect to this one.
    #[arg(long, value_name = "FILE")]
    users_file: Option<std::path::PathBuf>,
    /// The other hosts allowed in the domain (their certificate common names / user names).
    #[arg(long, value_delimiter = ',')]
    auth_hosts: Vec<String>,
    /// A YAML file with these settings (command-line options win).
    #[arg(long)]
    config: Option<std::path::PathBuf>,
    /// Namespace (default: `HORUS_NAMESPACE`, else one per user).
    #[arg(long)]
    namespace: Option<String>,
    /// Stop after this many seconds.
    #[arg(long)]
    duration: Option<f64>,
    /// Print the status of the namespace's running bridge and exit.
    #[arg(long)]
    status: bool,
}

pub(crate) fn run(a: BridgeArgs, out: &Output) -> anyhow::Result<ExitCode> {
    let namespace = a.namespace.clone().unwrap_or_else(horus::namespace);
    if a.status {
        return status(&namespace, out);
    }
    signals::install()?;
    let mut cfg = horus_zenoh::BridgeConfig::new(&namespace);
    if let Some(path) = &a.config {
        let text =
            std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
        cfg.apply_yaml(&text)
            .with_context(|| format!("{}", path.display()))?;
    }
    if a.namespace.is_some() {
        cfg.namespace = namespace.clone();
    }
    if let Some(h) = &a.host {
        cfg.host = h.clone();
    }
    apply_auth_flags(&a, &mut cfg)?;
    apply_policy_flags(&a, &mut cfg.policy)?;
    if !a.connect.is_empty() {
        cfg.connect = a.connect.iter().map(|c| cfg.endpoint(c)).collect();
        cfg.multicast = false;
    }
    if !a.listen.is_empty() {
        cfg.listen = a.listen.iter().map(|c| cfg.endpoint(c)).collect();
    }
    if a.multicast {
        cfg.multicast = true;
    }
    if let Some(d) = a.domain {
        cfg.domain = d;
    }
    if !a.allow.is_empty() || !a.deny.is_empty() {
        cfg.filter = horus_zenoh::Filter::new(&a.allow, &a.deny)?;
    }
    // Before Zenoh allocates anything: see horus_zenoh::tune_allocator_for_bridge.
    horus_zenoh::tune_allocator_for_bridge();
    let bridge = horus_zenoh::Bridge::start(cfg.clone()).context("horus bridge")?;
    let open = cfg.open_to_network();
    if let Some(w) = &open {
        eprintln!("bridge: WARNING open to the network: {w}");
    }
    if out.is_json() {
        out.json_line(&json!({
            "event": "started", "host": cfg.host, "namespace": cfg.namespace,
            "domain": cfg.domain, "listen": cfg.listen, "connect": cfg.connect,
            "multicast": cfg.multicast, "pid": std::process::id(),
            "authenticated": cfg.auth.is_some(), "open_to_network": open,
        }));
    } else {
        println!(
            "bridge: host {} namespace \"{}\" domain {} listening on {:?}, connecting to {:?}{}",
            cfg.host,
            cfg.namespace,
            cfg.domain,
            cfg.listen,
            cfg.connect,
            if cfg.multicast {
                ", multicast discovery"
            } else {
                ""
            }
        );
    }
    let started = Instant::now();
    let duration = a.duration.map(Duration::from_secs_f64);
    let mut seen = Seen::default();
    while signals::count() == 0 && duration.is_none_or(|d| started.elapsed() < d) {
        std::thread::sleep(Duration::from_millis(100));
        seen.report(&bridge.status(), out);
    }
    let last = bridge.status();
    bridge.stop();
    if out.is_json() {
        out.json_line(&json!({ "event": "stopped", "status": last }));
    } else {
        println!("bridge: stopped");
        print_status(&last);
    }
    Ok(ExitCode::SUCCESS)
}

/// The policy options of `horus bridge`.
#[derive(Debug, Args)]
pub(crate) struct PolicyArgs {
    /// Policy: these local topics never leave this host (repeatable).
    #[arg(long, value_name = "PAT")]
    deny_leave: Vec<String>,
    /// Policy: other hosts may not publish into these topics here (repeatable).
    #[arg(long, value_name = "PAT")]
    deny_enter: Vec<String>,
    /// Policy: other hosts may call only these local services (repeatable; replaces the
    /// default, which refuses `**/params`, `**/send_goal` and `**/cancel`).
    #[arg(long, value_name = "PAT")]
    allow_call: Vec<String>,
    /// Policy: another host may serve only these services here (repeatable; replaces the
    /// default, which refuses `**/params`, `**/send_goal` and `**/cancel`).
    #[arg(long, value_name = "PAT")]
    allow_stand_in: Vec<String>,
}

/// The policy options, on top of the configuration file's `policy:` (a direction given on
/// the command line replaces that direction).
fn apply_policy_flags(a: &BridgeArgs, p: &mut horus_zenoh::Policy) -> anyhow::Result<()> {
    let a = &a.policy;
    let none: &[String] = &[];
    if !a.deny_leave.is_empty() {
        p.leave = horus_zenoh::Filter::new(none, &a.deny_leave)?;
    }
    if !a.deny_enter.is_empty() {
        p.enter = horus_zenoh::Filter::new(none, &a.deny_enter)?;
    }
    if !a.allow_call.is_empty() {
        p.call = horus_zenoh::Filter::new(&a.allow_call, none)?;
    }
    if !a.allow_stand_in.is_empty() {
        p.stand_in = horus_zenoh::Filter::new(&a.allow_stand_in, none)?;
    }
    Ok(())
}

/// The authentication options, on top of the configuration file's `auth:` (options win).
fn apply_auth_flags(a: &BridgeArgs, cfg: &mut horus_zenoh::BridgeConfig) -> anyhow::Result<()> {
    let tls_given = a.tls_ca.is_some() || a.tls_cert.is_some() || a.tls_key.is_some();
    let user_given = a.password_file.is_some() || a.users_file.is_some() || a.user.is_some();
    if !tls_given && !user_given && !a.mtls && a.auth_hosts.is_empty() {
        return Ok(());
    }
    let mut auth = cfg.auth.clone().unwrap_or_default();
    if tls_given {
        let (Some(ca), Some(cert), Some(key)) = (&a.tls_ca, &a.tls_cert, &a.tls_key) else {
            anyhow::bail!("TLS needs all of --tls-ca, --tls-cert and --tls-key");
        };
        auth.tls = Some(horus_zenoh::TlsAuth {
            ca: ca.clone(),
            cert: cert.clone(),
            key: key.clone(),
            mutual: a.mtls,
        });
    } else if a.mtls {
        match &mut auth.tls {
            Some(t) => t.mutual = true,
            None => anyhow::bail!("--mtls needs --tls-ca, --tls-cert and --tls-key"),
        }
    }
    if user_given {
        let (Some(password_file), Some(users_file)) = (&a.password_file, &a.users_file) else {
            anyhow::bail!("user/password needs both --password-file and --users-file");
        };
        auth.user = Some(horus_zenoh::UserAuth {
            name: a.user.clone(),
            password_file: password_file.clone(),
            users_file: users_file.clone(),
        });
    }
    if !a.auth_hosts.is_empty() {
        auth.hosts = a.auth_hosts.clone();
    }
    cfg.set_auth(Some(auth));
    Ok(())
}

/// What has been reported already, to print changes only.
#[derive(Default)]
struct Seen {
    peers: BTreeSet<String>,
    crossing: BTreeSet<String>,
    issues: BTreeSet<String>,
}

impl Seen {
    fn report(&mut self, s: &horus_zenoh::BridgeStatus, out: &Output) {
        let peers: BTreeSet<String> = s.peers.iter().map(|p| p.host.clone()).collect();
        let crossing: BTreeSet<String> = s
            .topics
            .iter()
            .flat_map(|t| {
                let outs = t
                    .sending_to
                    .iter()
                    .map(move |h| format!("{} → {h}", t.name));
                let ins = t
                    .receiving_from
                    .iter()
                    .map(move |h| format!("{} ← {h}", t.name));
                outs.chain(ins)
            })
            .chain(
                s.services
                    .iter()
                    .filter(|v| !v.served_by.is_empty())
                    .map(|v| format!("service {} served by {}", v.name, v.served_by)),
            )
            .collect();
        let issues: BTreeSet<String> = s
            .topics
            .iter()
            .flat_map(|t| t.issues.iter().map(|i| i.to_string()))
            .chain(s.services.iter().flat_map(|v| {
                v.issues
                    .iter()
                    .map(move |i| format!("service {}: {i}", v.name))
            }))
            .collect();
        for (what, new, old) in [
            ("host", &peers, &self.peers),
            ("crossing", &crossing, &self.crossing),
            ("issue", &issues, &self.issues),
        ] {
            for x in new.difference(old) {
                event(out, what, true, x);
            }
            for x in old.difference(new) {
                event(out, what, false, x);
            }
        }
        self.peers = peers;
        self.crossing = crossing;
        self.issues = issues;
    }
}

fn event(out: &Output, what: &str, started: bool, text: &str) {
    if out.is_json() {
        out.json_line(&json!({ "event": what, "present": started, "what": text }));
    } else {
        let verb = match (what, started) {
            ("host", true) => "host seen:",
            ("host", false) => "host gone:",
            ("crossing", true) => "crossing:",
            ("crossing", false) => "stopped:",
            ("issue", true) => "ERROR",
            _ => "resolved:",
        };
        println!("bridge: {verb} {text}");
    }
}

fn status(namespace: &str, out: &Output) -> anyhow::Result<ExitCode> {
    let no_bridge = format!("no bridge is running for namespace \"{namespace}\"");
    let found = horus_zenoh::read_status_file(namespace)?;
    Ok(bridge_status::report(
        found,
        namespace,
        &no_bridge,
        out,
        print_status,
    ))
}

fn print_status(s: &horus_zenoh::BridgeStatus) {
    println!(
        "bridge {} (pid {}) namespace \"{}\" domain {}",
        s.host, s.pid, s.namespace, s.domain
    );
    if let Some(w) = &s.open_to_network {
        println!("  WARNING open to the network: {w}");
    }
    for p in &s.peers {
        println!(
            "  host {}: {} topic(s) published, {} subscribed, {} service(s)",
            p.host,
            p.offers.len(),
            p.wants.len(),
            p.services.len()
        );
    }
    for t in &s.topics {
        let c = &t.counters;
        println!(
            "  topic {} [{}] → {:?} ← {:?}: read {} sent {} send-failed {} | received {} wire-lost {} source-lost {} malformed {} other-schema {} published {} refused {}",
            t.name, t.schema, t.sending_to, t.receiving_from, c.read, c.sent, c.send_failed,
            c.received, c.wire_lost, c.source_lost, c.malformed, c.schema_refused, c.published, c.publish_failed
        );
        if c.unknown_sender + c.oversize + c.suspect + c.stalls + c.slow_puts > 0 {
            println!(
                "    unknown-sender {} oversize {} suspect {} | slow puts {} stalls {} stall-dropped {}",
                c.unknown_sender, c.oversize, c.suspect, c.slow_puts, c.stalls, c.stall_dropped
            );
        }
        if t.cut_off_ms > 0 {
            println!(
                "    cut off: sent without waiting for remote readers for {} ms more (they stalled it)",
                t.cut_off_ms
            );
        }
        for r in &t.refused {
            println!(
                "    REFUSED {} ({}: policy.{})",
                r.host,
                if r.direction == "enter" {
                    "may not publish into it here"
                } else {
                    "may not receive it"
                },
                r.direction
            );
        }
        for i in &t.issues {
            println!("    ERROR {i}");
        }
    }
    for v in &s.services {
        let c = &v.counters;
        println!(
            "  service {} served by {}: served {} ({} failed), forwarded {} ({} failed)",
            v.name,
            if v.served_by.is_empty() {
                "-"
            } else {
                &v.served_by
            },
            c.served,
            c.serve_failed,
            c.forwarded,
            c.forward_failed
        );
        if v.not_callable {
            println!("    not callable from other hosts (policy.call): calls refused");
        }
        for i in &v.issues {
            println!("    ERROR {i}");
        }
    }
    if s.hosts_refused > 0 {
        println!(
            "  {} token(s) of hosts beyond limits.max_hosts ignored",
            s.hosts_refused
        );
    }
    for r in &s.refusals {
        println!(
            "  refused of host {}: publish {} want {} call {} stand-in {} over-limit {} stalls {}",
            r.host,
            r.publish_refused,
            r.want_refused,
            r.call_refused,
            r.stand_in_refused,
            r.over_limit,
            r.stalls
        );
    }
}
