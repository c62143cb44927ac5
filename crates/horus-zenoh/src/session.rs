//! The bridge's one Zenoh session: peer mode, the configured endpoints, fast reconnection and
//! a short lease (a host that goes silent is noticed within the lease); with authentication,
//! TLS, user/password and access control (`auth.rs`).

use zenoh::{Session, Wait};

use crate::{BridgeConfig, BridgeError};

/// The session settings as `(key, json5 value)` pairs.
pub(crate) fn settings(cfg: &BridgeConfig) -> Vec<(&'static str, String)> {
    let list = |v: &[String]| serde_json::to_string(v).unwrap_or_else(|_| "[]".to_owned());
    let lease = cfg.lease.as_millis().max(1);
    vec![
        ("mode", "\"peer\"".to_owned()),
        ("listen/endpoints", list(&cfg.listen)),
        ("connect/endpoints", list(&cfg.connect)),
        // Try each endpoint once at start and go on; retry in the background every second
        // at most, so that a host started later is reached within about a second.
        ("connect/timeout_ms", "0".to_owned()),
        ("connect/exit_on_failure", "false".to_owned()),
        (
            "connect/retry",
            "{period_init_ms: 200, period_max_ms: 1000, period_increase_factor: 2}".to_owned(),
        ),
        ("scouting/multicast/enabled", cfg.multicast.to_string()),
        // Peers tell each other about further peers (a third host given only one address).
        ("scouting/gossip/enabled", "true".to_owned()),
        // Hosts are other machines: never move payloads through this machine's shared memory
        // (two test hosts on one machine would otherwise bypass the network).
        ("transport/shared_memory/enabled", "false".to_owned()),
        ("transport/link/tx/lease", lease.to_string()),
        ("transport/link/tx/keep_alive", "4".to_owned()),
        // No Zenoh admin space or timestamps needed.
        ("timestamping/enabled", "false".to_owned()),
        // A message reassembled from fragments is bounded like any other (limits.rs).
        (
            "transport/link/rx/max_message_size",
            cfg.limits.max_message_bytes.to_string(),
        ),
    ]
}

/// Opens the session. With authentication, first reads the credential files and checks that
/// this host's identity (certificate common name, user name) is its host name.
pub(crate) fn open(cfg: &BridgeConfig) -> Result<Session, BridgeError> {
    let mut config = zenoh::Config::default();
    let mut all: Vec<(&'static str, String, bool)> = settings(cfg)
        .into_iter()
        .map(|(k, v)| (k, v, false))
        .collect();
    if let Some(auth) = &cfg.auth {
        all.extend(
            crate::auth::session_settings(auth, &cfg.domain, &cfg.host)
                .map_err(crate::ConfigError::from)?,
        );
    }
    for (key, value, secret) in all {
        config.insert_json5(key, &value).map_err(|e| {
            // Zenoh's error may quote the value: a secret's is not shown at all.
            if secret {
                BridgeError::Session(format!("{key}: refused"))
            } else {
                BridgeError::Session(format!("{key} = {value}: {e}"))
            }
        })?;
    }
    zenoh::open(config)
        .wait()
        .map_err(|e| BridgeError::Session(e.to_string()))
}
