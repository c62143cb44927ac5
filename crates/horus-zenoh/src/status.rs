//! What a bridge reports: per topic and service, what crossed, what was lost where, and what
//! is wrong (a schema mismatch with another host). Written to a small JSON file beside the
//! namespace's segments (`/dev/shm/horus.<namespace>.bridge`), which `horus topic info` and
//! `horus bridge status` read; removed when the bridge stops.

use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};

use serde::{Deserialize, Serialize};

/// A topic's counters at this bridge. Outbound (this host publishes, another subscribes):
/// `read` from shared memory, then `sent` on the network or `send_failed`. Inbound (another
/// host publishes): `received` from the network, `wire_lost` (gaps in the sending bridge's
/// sequence), `source_lost` (gaps in the publishers' own sequences: what this host missed of
/// them for any reason — not delivered there while no bridge ran, lost in a bridge that died,
/// or on the wire, which `wire_lost` is the part of),
/// `malformed` (bad header) and `schema_refused` (another type) dropped, then `published` into
/// shared memory or `publish_failed` (refused by the topic's policy, counted by the topic's
/// own publisher record too). They reconcile: `read = sent + send_failed` at the sender and
/// `sent(sender) = received + wire_lost` at the receiver, once traffic has settled.
///
/// Refused before any of that (never received, published or counted as loss):
/// `unknown_sender` (a message from a host that does not offer the topic). Received but
/// dropped (its sequences followed, so never a gap): `oversize` (larger than the topic can
/// hold or `limits.max_message_bytes`); `suspect` counts sequence jumps larger than
/// `limits.max_seq_jump` (not counted as loss). Outbound, `slow_puts` counts the times a
/// put to the network held the topic longer than `limits.stall_after`, `stall_dropped` what
/// the bridge drained from the ring meanwhile (also in `send_failed`; the newest message
/// drained is still sent, so receivers count the rest in `source_lost`), and `stalls` the
/// puts among them that lasted `limits.stalled_reader_after` (their remote readers stalled:
/// the topic is then cut off, `cut_off_ms`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct TopicCounters {
    /// Messages read from the local topic (outbound).
    pub read: u64,
    /// Messages handed to Zenoh (outbound).
    pub sent: u64,
    /// Messages Zenoh refused (outbound).
    pub send_failed: u64,
    /// Messages received from the network (inbound).
    pub received: u64,
    /// Messages missing from the sending bridges' sequences: lost on the network (inbound).
    pub wire_lost: u64,
    /// Messages missing from the remote publishers' sequences, whatever the cause (inbound).
    pub source_lost: u64,
    /// Messages with a bad header (inbound).
    pub malformed: u64,
    /// Messages of another type than the local topic's (inbound).
    pub schema_refused: u64,
    /// Messages published into the local topic (inbound).
    pub published: u64,
    /// Messages the local topic refused (inbound).
    pub publish_failed: u64,
    /// Messages from a host that does not offer the topic (inbound; dropped).
    pub unknown_sender: u64,
    /// Messages larger than the topic can take (inbound; dropped).
    pub oversize: u64,
    /// Implausible sequence jumps, not counted as loss (inbound).
    pub suspect: u64,
    /// Puts that lasted `limits.stalled_reader_after`: remote readers that stopped reading
    /// (outbound; each cuts the topic off).
    pub stalls: u64,
    /// Puts that held the topic longer than `limits.stall_after`, stalls included (outbound;
    /// the ring was drained meanwhile).
    pub slow_puts: u64,
    /// Messages drained from the ring while a put was stalled (outbound; in `send_failed`).
    pub stall_dropped: u64,
    /// Latched messages sent in answer to other hosts' history queries (outbound).
    pub history_served: u64,
    /// History queries not answered: more were waiting than the bridge takes (outbound).
    pub history_queries_refused: u64,
    /// Latched messages received from other hosts' histories (inbound; not in `received`).
    pub history_received: u64,
    /// History messages published into the local topic (inbound; not in `published`).
    pub history_published: u64,
    /// Messages not published because this host already had them: history messages it had
    /// received before, and live messages that the history had already brought (inbound).
    pub history_duplicates: u64,
    /// History replies refused: from a host that does not offer the topic latched, with a bad
    /// header, another type, too large, or beyond `limits.max_history_messages` /
    /// `max_history_bytes` (inbound).
    pub history_refused: u64,
}

/// Live counters, shared with the thread that moves a topic's messages.
#[derive(Debug, Default)]
pub(crate) struct LiveCounters {
    pub(crate) read: AtomicU64,
    pub(crate) sent: AtomicU64,
    pub(crate) send_failed: AtomicU64,
    pub(crate) received: AtomicU64,
    pub(crate) wire_lost: AtomicU64,
    pub(crate) source_lost: AtomicU64,
    pub(crate) malformed: AtomicU64,
    pub(crate) schema_refused: AtomicU64,
    pub(crate) published: AtomicU64,
    pub(crate) publish_failed: AtomicU64,
    pub(crate) unknown_sender: AtomicU64,
    pub(crate) oversize: AtomicU64,
    pub(crate) suspect: AtomicU64,
    pub(crate) stalls: AtomicU64,
    pub(crate) slow_puts: AtomicU64,
    pub(crate) stall_dropped: AtomicU64,
    pub(crate) history_served: AtomicU64,
    pub(crate) history_queries_refused: AtomicU64,
    pub(crate) history_received: AtomicU64,
    pub(crate) history_published: AtomicU64,
    pub(crate) history_duplicates: AtomicU64,
    pub(crate) history_refused: AtomicU64,
}

impl LiveCounters {
    /// Adds `n` to a counter. Counters are statistics read by the status writer; no other
    /// memory is published through them, so relaxed ordering suffices.
    pub(crate) fn add(c: &AtomicU64, n: u64) {
        c.fetch_add(n, Ordering::Relaxed);
    }

    pub(crate) fn snapshot(&self) -> TopicCounters {
        let l = |c: &AtomicU64| c.load(Ordering::Relaxed);
        TopicCounters {
            read: l(&self.read),
            sent: l(&self.sent),
            send_failed: l(&self.send_failed),
            received: l(&self.received),
            wire_lost: l(&self.wire_lost),
            source_lost: l(&self.source_lost),
            malformed: l(&self.malformed),
            schema_refused: l(&self.schema_refused),
            published: l(&self.published),
            publish_failed: l(&self.publish_failed),
            unknown_sender: l(&self.unknown_sender),
            oversize: l(&self.oversize),
            suspect: l(&self.suspect),
            stalls: l(&self.stalls),
            slow_puts: l(&self.slow_puts),
            stall_dropped: l(&self.stall_dropped),
            history_served: l(&self.history_served),
            history_queries_refused: l(&self.history_queries_refused),
            history_received: l(&self.history_received),
            history_published: l(&self.history_published),
            history_duplicates: l(&self.history_duplicates),
            history_refused: l(&self.history_refused),
        }
    }
}

/// Something wrong with a topic across hosts.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, thiserror::Error)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum TopicIssue {
    /// Another host has the topic with another type: nothing crosses between the two.
    #[error("host {host} has {topic} as schema {remote}, this host as {local}: nothing crosses between them")]
    SchemaMismatch {
        /// The topic.
        topic: String,
        /// The other host.
        host: String,
        /// This host's schema key (`<schema id>-<layout hash>`) and type.
        local: String,
        /// The other host's schema key.
        remote: String,
    },
    /// Another host has the topic latched and this host has it volatile (a subscriber here
    /// created it without a durability): what the bridge receives, the latched history
    /// included, reaches the subscribers here at the time, but the topic keeps nothing for
    /// later ones. Open it with the same durability everywhere.
    #[error("host {host} has {topic} {remote}, this host {local}: later subscribers here get no history")]
    DurabilityMismatch {
        /// The topic.
        topic: String,
        /// The other host.
        host: String,
        /// This host's durability.
        local: String,
        /// The other host's durability.
        remote: String,
    },
    /// The local topic could not be joined or created for the remote side.
    #[error("{topic}: {reason}")]
    Local {
        /// The topic.
        topic: String,
        /// Why.
        reason: String,
    },
}

/// One topic at this bridge.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TopicStatus {
    /// The topic.
    pub name: String,
    /// Its type here (`horus/CmdVel v1`) and schema key.
    pub schema: String,
    /// Hosts receiving this host's messages of the topic.
    pub sending_to: Vec<String>,
    /// Hosts whose messages of the topic this host receives.
    pub receiving_from: Vec<String>,
    /// The counters.
    pub counters: TopicCounters,
    /// What is wrong, if anything.
    pub issues: Vec<TopicIssue>,
    /// Hosts refused by the policy for this topic: `enter` (the host offers it, this host
    /// takes nothing of it from them) or `leave` (the host wants it, it does not leave).
    #[serde(default)]
    pub refused: Vec<TopicRefusal>,
    /// Until when (ms from now) the topic is sent without waiting for remote readers,
    /// after they stalled it; 0 when it is not.
    #[serde(default)]
    pub cut_off_ms: u64,
    /// The host whose latched offer made this bridge create the topic here, ahead of its
    /// subscribers (`None`: created by an endpoint of this host).
    #[serde(default)]
    pub latched_copy_of: Option<String>,
}

/// A host refused by the policy for one topic.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TopicRefusal {
    /// The other host.
    pub host: String,
    /// `enter` or `leave`.
    pub direction: String,
}

/// What the policy and the limits refused of one other host, counted since this bridge
/// started (while the host stays known, and `limits.forget_host_after` after it went).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct HostRefusals {
    /// The other host (`?` for calls that did not say who they came from).
    pub host: String,
    /// Its offers of topics it may not publish into here (each offer counted once).
    pub publish_refused: u64,
    /// Its wants of local topics that may not leave (each want counted once).
    pub want_refused: u64,
    /// Its calls of local services it may not call.
    pub call_refused: u64,
    /// Its offers of services it may not serve here (each offer counted once).
    pub stand_in_refused: u64,
    /// Its tokens or offers beyond `limits` (tokens per host, stand-ins).
    pub over_limit: u64,
    /// Stalls of topics this host was among the receivers of.
    pub stalls: u64,
}

/// A service's calls at this bridge.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ServiceCounters {
    /// Calls from other hosts served by a local server (this host serves).
    pub served: u64,
    /// Of those, calls that failed here (no server, server died, timeout).
    pub serve_failed: u64,
    /// Local calls forwarded to another host (this host stands in for the remote server).
    pub forwarded: u64,
    /// Of those, calls that failed (remote had no server, died, timed out, host lost).
    pub forward_failed: u64,
}

/// One service at this bridge.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ServiceStatus {
    /// The service.
    pub name: String,
    /// `local` (served here, offered to others) or the remote host it is served from.
    pub served_by: String,
    /// The counters.
    pub counters: ServiceCounters,
    /// What is wrong, if anything (a schema mismatch, a description that could not be read).
    pub issues: Vec<String>,
    /// Served here, but other hosts may not call it (`policy.call`): calls are refused and
    /// counted per host.
    #[serde(default)]
    pub not_callable: bool,
}

/// Another host's bridge, as seen from here.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PeerStatus {
    /// Its host name.
    pub host: String,
    /// Topics it publishes.
    pub offers: Vec<String>,
    /// Topics it subscribes to.
    pub wants: Vec<String>,
    /// Services it serves.
    pub services: Vec<String>,
}

/// Everything a bridge reports.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct BridgeStatus {
    /// This host's name.
    pub host: String,
    /// The Zenoh domain.
    pub domain: String,
    /// The local namespace.
    pub namespace: String,
    /// The bridge's process.
    pub pid: u32,
    /// Its epoch (start time, ns since the Unix epoch).
    pub epoch: u64,
    /// Other hosts' bridges currently seen.
    pub peers: Vec<PeerStatus>,
    /// Topics crossing (or refused) here.
    pub topics: Vec<TopicStatus>,
    /// Services crossing here.
    pub services: Vec<ServiceStatus>,
    /// Why this bridge is open to the network (it listens on a non-loopback address without
    /// authentication: anyone reaching it may read, publish, call and claim any host name);
    /// `None` when it is closed or listens on loopback only.
    #[serde(default)]
    pub open_to_network: Option<String>,
    /// What the policy and the limits refused, per other host.
    #[serde(default)]
    pub refusals: Vec<HostRefusals>,
    /// Tokens of hosts beyond `limits.max_hosts`, ignored.
    #[serde(default)]
    pub hosts_refused: u64,
    /// Malformed liveliness tokens of other hosts (a host or topic name that is not one, or
    /// too long), ignored.
    #[serde(default)]
    pub malformed_tokens: u64,
}

/// Where `namespace`'s bridge writes its status.
pub fn status_file_path(namespace: &str) -> PathBuf {
    PathBuf::from(format!("/dev/shm/horus.{namespace}.bridge"))
}

/// Why the status file could not be read.
#[derive(Debug, thiserror::Error)]
pub enum StatusReadError {
    /// It could not be read.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// Why.
        source: std::io::Error,
    },
    /// It is not a bridge status.
    #[error("{path}: not a bridge status: {reason}")]
    Format {
        /// The file.
        path: String,
        /// Why.
        reason: String,
    },
}

/// The status of `namespace`'s running bridge: `Ok(None)` when there is none (no file, or the
/// file of a bridge that died).
pub fn read_status_file(namespace: &str) -> Result<Option<BridgeStatus>, StatusReadError> {
    let path = status_file_path(namespace);
    let shown = path.display().to_string();
    let text = match std::fs::read(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(source) => {
            return Err(StatusReadError::Io {
                path: shown,
                source,
            })
        }
    };
    let status: BridgeStatus =
        serde_json::from_slice(&text).map_err(|e| StatusReadError::Format {
            path: shown,
            reason: e.to_string(),
        })?;
    Ok(crate::local::alive(status.pid).then_some(status))
}

/// Writes the status atomically (a temporary file renamed over the old one).
pub(crate) fn write_status_file(status: &BridgeStatus) -> std::io::Result<()> {
    let path = status_file_path(&status.namespace);
    let tmp = PathBuf::from(format!("{}.{}.tmp", path.display(), status.pid));
    let json = serde_json::to_vec_pretty(status).map_err(std::io::Error::other)?;
    std::fs::write(&tmp, json)?;
    std::fs::rename(&tmp, &path)
}

/// Removes the status file if it is ours.
pub(crate) fn remove_status_file(namespace: &str, pid: u32) {
    let path = status_file_path(namespace);
    let ours = std::fs::read(&path)
        .ok()
        .and_then(|t| serde_json::from_slice::<BridgeStatus>(&t).ok())
        .is_some_and(|s| s.pid == pid);
    if ours {
        let _ = std::fs::remove_file(path);
    }
}
