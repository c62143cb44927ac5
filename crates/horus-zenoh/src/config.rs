//! What a bridge is told: which namespace it serves, which hosts it reaches, what crosses.
//!
//! Given on the command line (`horus bridge --connect tcp/10.0.0.2:7447 …`) or in a YAML file
//! (`horus bridge --config bridge.yaml`); the file is untrusted input: unknown keys, wrong
//! types and bad values are typed errors with their place in the file.

use std::time::Duration;

use serde::Deserialize;

use crate::filter::{Filter, PatternError};
use crate::limits::Limits;
use crate::policy::{Policy, PolicyFile};

/// Zenoh's default port, used when an endpoint gives none.
pub const DEFAULT_PORT: u16 = 7447;

/// Most calls the bridge makes at once on one service (one thread and one client place each).
pub const MAX_CONCURRENT_CALLS: usize = 64;

/// A bridge's settings.
#[derive(Clone, Debug)]
pub struct BridgeConfig {
    /// The local horus namespace whose topics and services cross.
    pub namespace: String,
    /// The first chunk of every Zenoh key the bridge uses: bridges with the same domain see
    /// each other (one robot, or one fleet), others do not.
    pub domain: String,
    /// This host's name on the network (a Zenoh key chunk); by default the host name. Two
    /// bridges of one domain must not share it.
    pub host: String,
    /// Zenoh endpoints to listen on (`tcp/0.0.0.0:7447`).
    pub listen: Vec<String>,
    /// Zenoh endpoints of other hosts' bridges to connect to (retried until they answer).
    pub connect: Vec<String>,
    /// Multicast scouting (finds bridges on the local network without addresses). Off by
    /// default when `connect` is given.
    pub multicast: bool,
    /// Which topics and services cross.
    pub filter: Filter,
    /// How often the local namespace is scanned for endpoints coming and going.
    pub scan_interval: Duration,
    /// How long a call to a remote server may take before the bridge gives up on it.
    pub call_timeout: Duration,
    /// Zenoh's lease: a host silent for this long is considered gone.
    pub lease: Duration,
    /// Calls from other hosts that the bridge makes at once on one local service (each with
    /// a client place of its own; fewer when the service has fewer places free); more wait.
    pub concurrent_calls: usize,
    /// Write the status file (`horus topic info` and `horus bridge status` read it).
    pub status_file: bool,
    /// What other hosts may do here, per direction (after `filter`, which applies to both).
    pub policy: Policy,
    /// How much other hosts may make this bridge hold.
    pub limits: Limits,
    /// Authentication (TLS, mutual TLS, user/password) and the access control that binds each
    /// host's name to its identity; `None`: the bridge is open to whoever reaches it.
    pub auth: Option<crate::auth::AuthConfig>,
}

impl BridgeConfig {
    /// Defaults for `namespace`: listen on every address at Zenoh's port, multicast scouting,
    /// everything crosses.
    pub fn new(namespace: &str) -> BridgeConfig {
        BridgeConfig {
            namespace: namespace.to_owned(),
            domain: "horus".to_owned(),
            host: default_host(),
            listen: vec![format!("tcp/0.0.0.0:{DEFAULT_PORT}")],
            connect: Vec::new(),
            multicast: true,
            filter: Filter::default(),
            scan_interval: Duration::from_millis(100),
            call_timeout: Duration::from_secs(10),
            lease: Duration::from_secs(3),
            concurrent_calls: 4,
            status_file: true,
            policy: Policy::default(),
            limits: Limits::default(),
            auth: None,
        }
    }

    /// Checks names and values (what Zenoh does not check itself).
    pub fn validate(&self) -> Result<(), ConfigError> {
        for (what, v) in [("domain", &self.domain), ("host", &self.host)] {
            if !crate::keys::valid_host_name(v) {
                return Err(ConfigError::Invalid(format!(
                    "{what} {v:?}: 1 to {} letters, digits, '-', '_' and '.' only",
                    crate::keys::MAX_HOST_NAME_BYTES
                )));
            }
        }
        horus::inspect::list_topics(&self.namespace)
            .map(|_| ())
            .or_else(|e| match e {
                horus::inspect::InspectError::Name(n) => {
                    Err(ConfigError::Invalid(format!("namespace: {n}")))
                }
                _ => Ok(()),
            })?;
        for e in self.listen.iter().chain(&self.connect) {
            check_endpoint(e)?;
        }
        let endpoints: Vec<&String> = self.listen.iter().chain(&self.connect).collect();
        crate::auth::validate(self.auth.as_ref(), &endpoints, &self.host)?;
        if self.scan_interval.is_zero() || self.lease < Duration::from_millis(500) {
            return Err(ConfigError::Invalid(
                "scan interval must be > 0 and lease ≥ 500 ms".into(),
            ));
        }
        if !(1..=MAX_CONCURRENT_CALLS).contains(&self.concurrent_calls) {
            return Err(ConfigError::Invalid(format!(
                "concurrent_calls {}: 1 to {MAX_CONCURRENT_CALLS}",
                self.concurrent_calls
            )));
        }
        self.limits.validate().map_err(ConfigError::Invalid)?;
        Ok(())
    }

    /// Applies a YAML configuration file's settings on top of these.
    pub fn apply_yaml(&mut self, text: &str) -> Result<(), ConfigError> {
        let file: FileConfig = serde_yaml::from_str(text).map_err(|e| ConfigError::Yaml {
            line: e.location().map(|l| l.line()),
            column: e.location().map(|l| l.column()),
            reason: e.to_string(),
        })?;
        if let Some(v) = file.namespace {
            self.namespace = v;
        }
        if let Some(v) = file.domain {
            self.domain = v;
        }
        if let Some(v) = file.host {
            self.host = v;
        }
        if let Some(v) = file.listen {
            self.listen = v;
        }
        if let Some(v) = file.connect {
            self.multicast = false;
            self.connect = v;
        }
        if let Some(v) = file.multicast {
            self.multicast = v;
        }
        if file.allow.is_some() || file.deny.is_some() {
            self.filter = Filter::new(
                &file.allow.unwrap_or_default(),
                &file.deny.unwrap_or_default(),
            )?;
        }
        if let Some(ms) = file.scan_interval_ms {
            self.scan_interval = Duration::from_millis(ms);
        }
        if let Some(ms) = file.call_timeout_ms {
            self.call_timeout = Duration::from_millis(ms);
        }
        if let Some(ms) = file.lease_ms {
            self.lease = Duration::from_millis(ms);
        }
        if let Some(n) = file.concurrent_calls {
            self.concurrent_calls = n;
        }
        if let Some(p) = file.policy {
            self.policy.apply(p)?;
        }
        if let Some(a) = file.auth {
            self.set_auth(Some(a.into()));
        }
        if let Some(l) = file.limits {
            l.apply(&mut self.limits);
        }
        self.validate()
    }
}

/// The host name (`/proc/sys/kernel/hostname`), made a valid key chunk.
fn default_host() -> String {
    let name = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap_or_default();
    let clean: String = name
        .trim()
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' || c == '.' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if clean.is_empty() {
        format!("host-{}", std::process::id())
    } else {
        clean
    }
}

/// `tcp/<host>:<port>` or `tls/<host>:<port>` (the transports this build of Zenoh has).
fn check_endpoint(e: &str) -> Result<(), ConfigError> {
    let bad = |why: &str| ConfigError::Endpoint {
        endpoint: e.to_owned(),
        reason: why.to_owned(),
    };
    let rest = e
        .strip_prefix("tcp/")
        .or_else(|| e.strip_prefix("tls/"))
        .ok_or_else(|| {
            bad("only tcp/<address>:<port> and tls/<address>:<port> endpoints are supported")
        })?;
    let (host, port) = rest
        .rsplit_once(':')
        .ok_or_else(|| bad("missing :<port>"))?;
    if host.is_empty() {
        return Err(bad("missing address"));
    }
    port.parse::<u16>()
        .map_err(|_| bad("port is not a number 0–65535"))?;
    Ok(())
}

/// Adds Zenoh's port to an address given without one (`10.0.0.2` → `tcp/10.0.0.2:7447`).
pub fn endpoint_of(addr: &str) -> String {
    let with_proto = if addr.contains('/') {
        addr.to_owned()
    } else {
        format!("tcp/{addr}")
    };
    let rest = with_proto.split_once('/').map_or("", |(_, r)| r);
    if rest.contains(':') && !rest.ends_with(']') {
        with_proto
    } else {
        format!("{with_proto}:{DEFAULT_PORT}")
    }
}

/// A bad configuration.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The YAML file does not parse or has unknown keys or wrong types.
    #[error("configuration file{}: {reason}", place(*.line, *.column))]
    Yaml {
        /// 1-based line, when known.
        line: Option<usize>,
        /// 1-based column, when known.
        column: Option<usize>,
        /// What is wrong.
        reason: String,
    },
    /// An endpoint is not `tcp/<address>:<port>`.
    #[error("endpoint {endpoint:?}: {reason}")]
    Endpoint {
        /// The endpoint.
        endpoint: String,
        /// What is wrong.
        reason: String,
    },
    /// An allow or deny pattern is malformed.
    #[error(transparent)]
    Pattern(#[from] PatternError),
    /// Another value is out of range.
    #[error("{0}")]
    Invalid(String),
    /// The authentication settings are unusable.
    #[error(transparent)]
    Auth(#[from] crate::auth::AuthError),
}

fn place(line: Option<usize>, column: Option<usize>) -> String {
    match (line, column) {
        (Some(l), Some(c)) => format!(" (line {l}, column {c})"),
        (Some(l), None) => format!(" (line {l})"),
        _ => String::new(),
    }
}

/// The file's shape.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FileConfig {
    namespace: Option<String>,
    domain: Option<String>,
    host: Option<String>,
    listen: Option<Vec<String>>,
    connect: Option<Vec<String>>,
    multicast: Option<bool>,
    allow: Option<Vec<String>>,
    deny: Option<Vec<String>>,
    scan_interval_ms: Option<u64>,
    call_timeout_ms: Option<u64>,
    lease_ms: Option<u64>,
    concurrent_calls: Option<usize>,
    policy: Option<PolicyFile>,
    limits: Option<LimitsFile>,
    auth: Option<crate::auth::FileAuth>,
}

/// The `limits:` section (names as in [`Limits`]; durations in milliseconds).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct LimitsFile {
    max_hosts: Option<usize>,
    max_tokens_per_host: Option<usize>,
    max_stand_ins: Option<usize>,
    max_message_bytes: Option<usize>,
    max_description_bytes: Option<usize>,
    describes_in_flight: Option<usize>,
    max_seq_jump: Option<u64>,
    max_places_per_host: Option<usize>,
    max_history_messages: Option<usize>,
    max_history_bytes: Option<usize>,
    max_latched_copy_bytes: Option<u64>,
    forget_host_after_ms: Option<u64>,
    stall_after_ms: Option<u64>,
    stalled_reader_after_ms: Option<u64>,
    stall_cutoff_ms: Option<u64>,
}

impl LimitsFile {
    fn apply(self, l: &mut Limits) {
        let ms = Duration::from_millis;
        macro_rules! set {
            ($($f:ident),*) => { $( if let Some(v) = self.$f { l.$f = v; } )* };
        }
        set!(
            max_hosts,
            max_tokens_per_host,
            max_stand_ins,
            max_message_bytes,
            max_description_bytes,
            describes_in_flight,
            max_seq_jump,
            max_places_per_host,
            max_history_messages,
            max_history_bytes,
            max_latched_copy_bytes
        );
        if let Some(v) = self.forget_host_after_ms {
            l.forget_host_after = ms(v);
        }
        if let Some(v) = self.stall_after_ms {
            l.stall_after = ms(v);
        }
        if let Some(v) = self.stalled_reader_after_ms {
            l.stalled_reader_after = ms(v);
        }
        if let Some(v) = self.stall_cutoff_ms {
            l.stall_cutoff = ms(v);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_settings_apply_and_bad_files_are_typed_errors() {
        let mut c = BridgeConfig::new("cfg-test");
        c.apply_yaml(
            "host: robot-a\nconnect: [tcp/10.1.0.2:7447]\nallow: ['lidar/**', cmd_vel]\ndeny: ['**/debug']\nlease_ms: 2000\nconcurrent_calls: 8\n",
        )
        .unwrap();
        assert_eq!(c.host, "robot-a");
        assert!(!c.multicast, "addresses given: no multicast unless asked");
        assert!(c.filter.allows("lidar/points"));
        assert!(!c.filter.allows("lidar/debug"));
        assert!(!c.filter.allows("camera/image"));
        assert_eq!(c.lease, Duration::from_secs(2));
        assert_eq!(c.concurrent_calls, 8);

        let err = BridgeConfig::new("x").apply_yaml("hots: a\n").unwrap_err();
        assert!(
            matches!(err, ConfigError::Yaml { line: Some(1), .. }),
            "{err}"
        );
        let err = BridgeConfig::new("x")
            .apply_yaml("connect: [udp/1.2.3.4]\n")
            .unwrap_err();
        assert!(matches!(err, ConfigError::Endpoint { .. }), "{err}");
        let err = BridgeConfig::new("x")
            .apply_yaml("host: 'a b'\n")
            .unwrap_err();
        assert!(matches!(err, ConfigError::Invalid(_)), "{err}");
        let err = BridgeConfig::new("x")
            .apply_yaml("allow: ['a/***']\n")
            .unwrap_err();
        assert!(matches!(err, ConfigError::Pattern(_)), "{err}");
        for bad in ["concurrent_calls: 0\n", "concurrent_calls: 65\n"] {
            let err = BridgeConfig::new("x").apply_yaml(bad).unwrap_err();
            assert!(matches!(err, ConfigError::Invalid(_)), "{bad}: {err}");
        }
        let err = BridgeConfig::new("x")
            .apply_yaml("concurrent_calls: -1\n")
            .unwrap_err();
        assert!(matches!(err, ConfigError::Yaml { .. }), "{err}");
        let err = BridgeConfig::new("x")
            .apply_yaml("lease_ms: many\n")
            .unwrap_err();
        assert!(matches!(err, ConfigError::Yaml { .. }), "{err}");
    }

    #[test]
    fn policy_and_limits_sections_apply_and_bad_ones_are_typed_errors() {
        let mut c = BridgeConfig::new("cfg-policy");
        assert!(!c.policy.call.allows("node/params"), "protected by default");
        c.apply_yaml(
            "policy:\n  enter: {deny: ['base/**']}\n  call: {allow: ['**']}\nlimits:\n  max_hosts: 3\n  stall_after_ms: 50\n  stalled_reader_after_ms: 3000\n",
        )
        .unwrap();
        assert!(!c.policy.enter.allows("base/cmd_vel"));
        assert!(c.policy.leave.allows("base/cmd_vel"), "leave untouched");
        assert!(
            c.policy.call.allows("node/params"),
            "a given direction replaces its default"
        );
        assert!(
            !c.policy.stand_in.allows("node/params"),
            "stand_in untouched"
        );
        assert_eq!(c.limits.max_hosts, 3);
        assert_eq!(c.limits.stall_after, Duration::from_millis(50));
        assert_eq!(c.limits.stalled_reader_after, Duration::from_secs(3));
        for bad in [
            "policy:\n  exit: {}\n",
            "policy:\n  call: {allow: ['a/***']}\n",
            "limits:\n  max_hosts: 0\n",
            "limits:\n  max_message_bytes: 10\n",
            "limits:\n  max_hots: 3\n",
            "limits:\n  max_hosts: -3\n",
        ] {
            assert!(BridgeConfig::new("x").apply_yaml(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn endpoints_get_zenohs_port() {
        assert_eq!(endpoint_of("10.0.0.2"), "tcp/10.0.0.2:7447");
        assert_eq!(endpoint_of("10.0.0.2:9000"), "tcp/10.0.0.2:9000");
        assert_eq!(endpoint_of("tcp/10.0.0.2:9000"), "tcp/10.0.0.2:9000");
    }
}
