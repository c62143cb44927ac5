//! Closing the bridge: TLS, mutual TLS and user/password authentication through Zenoh's own
//! mechanisms, and a host's name bound to its authenticated identity by Zenoh access control.
//!
//! Without [`AuthConfig`] the bridge is open: any host that reaches its listening address can
//! read every topic, publish into this host's topics, call its services and claim any host
//! name. With it:
//!
//! * every link is TLS (`tls/<address>:<port>` endpoints); the other end's certificate must be
//!   signed by the configured CA;
//! * every host is identified both ways: by its certificate's common name with mutual TLS, or
//!   (TLS without client certificates) by its user name when it connects and its certificate's
//!   common name when it is connected to — Zenoh's user/password check authenticates only the
//!   connecting side;
//! * generated access-control rules (default deny) let a host identified as `h`, and only the
//!   hosts listed, put, declare liveliness tokens, declare queryables and reply only under keys
//!   whose host chunk is `h` (`<domain>/<kind>/h/…`), and subscribe and query within the
//!   domain; anything else from it, and everything from anyone else, is dropped by Zenoh;
//! * the bridge refuses to start when its own certificate's common name or user name is not its
//!   host name.

use std::collections::BTreeSet;
use std::io::Read;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde_json::json;

/// Largest credential file read (certificates, keys, password and users files).
const MAX_FILE_BYTES: u64 = 1 << 20;

/// Most hosts a domain's access control lists (one subject, rule and policy each).
pub const MAX_AUTH_HOSTS: usize = 1024;

/// How the bridge authenticates other hosts and proves itself to them.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct AuthConfig {
    /// TLS on every link (required: it encrypts, and identifies the host connected to).
    pub tls: Option<TlsAuth>,
    /// User/password: identifies the connecting host (Zenoh's `auth/usrpwd`).
    pub user: Option<UserAuth>,
    /// The other hosts allowed in the domain, by name (their certificate's common name, or user
    /// name). The users of [`UserAuth::users_file`] are added.
    pub hosts: Vec<String>,
}

/// TLS settings (PEM files).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TlsAuth {
    /// The CA that signs every host's certificate.
    pub ca: PathBuf,
    /// This host's certificate (its common name must be the host name), used both when
    /// listening and when connecting.
    pub cert: PathBuf,
    /// This host's private key.
    pub key: PathBuf,
    /// Mutual TLS: connecting hosts must present a certificate too (identifies them by its
    /// common name).
    pub mutual: bool,
}

/// User/password settings. The password is read from a file, never given on a command line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UserAuth {
    /// The user name this host connects as (must be the host name; `None`: the host name).
    pub name: Option<String>,
    /// A file holding this host's password (surrounding whitespace ignored).
    pub password_file: PathBuf,
    /// `user:password` lines: the hosts allowed to connect to this one.
    pub users_file: PathBuf,
}

/// Why the authentication settings are unusable.
#[derive(Debug, thiserror::Error)]
pub enum AuthError {
    /// Authentication without TLS.
    #[error(
        "authentication needs TLS (auth.tls / --tls-ca --tls-cert --tls-key): it encrypts the \
         links and identifies the host connected to (user/password alone authenticates only \
         the connecting host and leaves everything in clear)"
    )]
    NoTls,
    /// TLS that identifies nobody connecting.
    #[error(
        "TLS without client certificates leaves connecting hosts anonymous: set auth.tls.mutual \
         (--mtls) or user/password (auth.user / --password-file)"
    )]
    AnonymousClients,
    /// A plain TCP endpoint while authentication is on, or a TLS one while it is off.
    #[error("endpoint {endpoint:?}: {reason}")]
    Endpoint {
        /// The endpoint.
        endpoint: String,
        /// What is wrong.
        reason: &'static str,
    },
    /// No other host is allowed.
    #[error(
        "no hosts allowed: list the other hosts' names (auth.hosts / --auth-hosts), or give a \
         users file"
    )]
    NoHosts,
    /// A host or user name that is not a key chunk.
    #[error("{what} {name:?}: letters, digits, '-', '_' and '.' only")]
    BadName {
        /// Where the name comes from.
        what: String,
        /// The name.
        name: String,
    },
    /// More hosts than [`MAX_AUTH_HOSTS`].
    #[error("{0} hosts allowed: at most {MAX_AUTH_HOSTS}")]
    TooManyHosts(usize),
    /// The identity this host would present is not its host name.
    #[error("{what} is {found:?} but this host is {host:?}: a host may only speak as itself")]
    NotThisHost {
        /// "certificate common name" or "user name".
        what: &'static str,
        /// What the credential says.
        found: String,
        /// The configured host name.
        host: String,
    },
    /// A credential file cannot be read or is too large or empty.
    #[error("{}: {reason}", path.display())]
    File {
        /// The file.
        path: PathBuf,
        /// Why.
        reason: String,
    },
    /// The certificate is not a PEM X.509 certificate with a common name.
    #[error("certificate {}: {reason}", path.display())]
    Certificate {
        /// The file.
        path: PathBuf,
        /// Why.
        reason: String,
    },
    /// A line of the users file is not `user:password`.
    #[error("users file {} line {line}: {reason}", path.display())]
    UsersFile {
        /// The file.
        path: PathBuf,
        /// 1-based line.
        line: usize,
        /// Why.
        reason: String,
    },
}

/// The `auth:` section of the YAML file.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct FileAuth {
    tls: Option<FileTls>,
    user: Option<FileUser>,
    hosts: Option<Vec<String>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FileTls {
    ca: PathBuf,
    cert: PathBuf,
    key: PathBuf,
    #[serde(default)]
    mutual: bool,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FileUser {
    name: Option<String>,
    password_file: PathBuf,
    users_file: PathBuf,
}

impl From<FileAuth> for AuthConfig {
    fn from(f: FileAuth) -> AuthConfig {
        AuthConfig {
            tls: f.tls.map(|t| TlsAuth {
                ca: t.ca,
                cert: t.cert,
                key: t.key,
                mutual: t.mutual,
            }),
            user: f.user.map(|u| UserAuth {
                name: u.name,
                password_file: u.password_file,
                users_file: u.users_file,
            }),
            hosts: f.hosts.unwrap_or_default(),
        }
    }
}

/// The default listening endpoint, plain or TLS.
pub(crate) fn default_listen(tls: bool) -> String {
    format!(
        "{}/0.0.0.0:{}",
        if tls { "tls" } else { "tcp" },
        crate::DEFAULT_PORT
    )
}

/// Checks the shape of the settings (no file is read): what goes with what, endpoints, names.
pub(crate) fn validate(
    auth: Option<&AuthConfig>,
    endpoints: &[&String],
    host: &str,
) -> Result<(), AuthError> {
    let Some(auth) = auth else {
        for e in endpoints {
            if e.starts_with("tls/") {
                return Err(AuthError::Endpoint {
                    endpoint: (*e).clone(),
                    reason: "a TLS endpoint needs the TLS settings (auth.tls / --tls-ca …)",
                });
            }
        }
        return Ok(());
    };
    let Some(tls) = &auth.tls else {
        return Err(AuthError::NoTls);
    };
    if !tls.mutual && auth.user.is_none() {
        return Err(AuthError::AnonymousClients);
    }
    for e in endpoints {
        if !e.starts_with("tls/") {
            return Err(AuthError::Endpoint {
                endpoint: (*e).clone(),
                reason: "with authentication on, every endpoint must be tls/<address>:<port>",
            });
        }
    }
    if let Some(name) = auth.user.as_ref().and_then(|u| u.name.as_ref()) {
        if name != host {
            return Err(AuthError::NotThisHost {
                what: "user name",
                found: name.clone(),
                host: host.to_owned(),
            });
        }
    }
    for h in &auth.hosts {
        if !crate::keys::valid_host_name(h) {
            return Err(AuthError::BadName {
                what: "allowed host".into(),
                name: h.clone(),
            });
        }
    }
    if auth.hosts.len() > MAX_AUTH_HOSTS {
        return Err(AuthError::TooManyHosts(auth.hosts.len()));
    }
    Ok(())
}

/// Reads a credential file, bounded.
fn read_file(path: &Path) -> Result<Vec<u8>, AuthError> {
    let bad = |reason: String| AuthError::File {
        path: path.to_owned(),
        reason,
    };
    let f = std::fs::File::open(path).map_err(|e| bad(e.to_string()))?;
    let mut bytes = Vec::new();
    f.take(MAX_FILE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| bad(e.to_string()))?;
    if bytes.len() as u64 > MAX_FILE_BYTES {
        return Err(bad(format!("larger than {MAX_FILE_BYTES} bytes")));
    }
    if bytes.is_empty() {
        return Err(bad("empty".into()));
    }
    Ok(bytes)
}

/// The common name of the first certificate of a PEM file.
pub(crate) fn certificate_common_name(path: &Path) -> Result<String, AuthError> {
    let bytes = read_file(path)?;
    let bad = |reason: String| AuthError::Certificate {
        path: path.to_owned(),
        reason,
    };
    let (_, pem) =
        x509_parser::pem::parse_x509_pem(&bytes).map_err(|e| bad(format!("not PEM: {e}")))?;
    let cert = pem
        .parse_x509()
        .map_err(|e| bad(format!("not an X.509 certificate: {e}")))?;
    let cn = cert
        .subject()
        .iter_common_name()
        .next()
        .ok_or_else(|| bad("no common name (CN) in its subject".into()))?;
    cn.as_str()
        .map(str::to_owned)
        .map_err(|e| bad(format!("common name is not text: {e}")))
}

/// The users of a users file (`user:password` lines, parsed as Zenoh parses them).
pub(crate) fn users_of(path: &Path) -> Result<Vec<String>, AuthError> {
    let bytes = read_file(path)?;
    let text = String::from_utf8(bytes).map_err(|_| AuthError::File {
        path: path.to_owned(),
        reason: "not UTF-8 text".into(),
    })?;
    let mut users = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let bad = |reason: &str| AuthError::UsersFile {
            path: path.to_owned(),
            line: i + 1,
            reason: reason.to_owned(),
        };
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        let (user, password) = line
            .split_once(':')
            .ok_or_else(|| bad("not user:password"))?;
        let user = user.trim();
        if !crate::keys::valid_host_name(user) {
            return Err(bad(
                "the user name must be a host name (letters, digits, '-', '_', '.')",
            ));
        }
        if password.trim().is_empty() {
            return Err(bad("empty password"));
        }
        users.push(user.to_owned());
    }
    if users.len() > MAX_AUTH_HOSTS {
        return Err(AuthError::TooManyHosts(users.len()));
    }
    Ok(users)
}

/// With authentication on, Zenoh opens and accepts TLS links only. The configured endpoints
/// are checked to be `tls/` (`validate`), but locators learnt from multicast scouting or gossip
/// are not: without this, a host on the network answering scouting with `tcp/<its address>`
/// would get a plain TCP session, and could relay another host's user/password challenge
/// (not bound to the TLS channel) over it to pass as this host.
fn tls_only_links() -> (&'static str, String, bool) {
    ("transport/link/protocols", r#"["tls"]"#.to_owned(), false)
}

/// Zenoh session settings for `auth` (`(key, json5 value, secret)`): the value of a secret
/// setting is never shown. Reads the credential files and checks that this host's identity is
/// its host name.
pub(crate) fn session_settings(
    auth: &AuthConfig,
    domain: &str,
    host: &str,
) -> Result<Vec<(&'static str, String, bool)>, AuthError> {
    let Some(tls) = &auth.tls else {
        return Err(AuthError::NoTls);
    };
    let path = |p: &Path| json!(p.to_string_lossy()).to_string();
    for p in [&tls.ca, &tls.key] {
        read_file(p)?;
    }
    let cn = certificate_common_name(&tls.cert)?;
    if cn != host {
        return Err(AuthError::NotThisHost {
            what: "certificate common name",
            found: cn,
            host: host.to_owned(),
        });
    }
    let mut out = vec![
        tls_only_links(),
        (
            "transport/link/tls/root_ca_certificate",
            path(&tls.ca),
            false,
        ),
        (
            "transport/link/tls/listen_certificate",
            path(&tls.cert),
            false,
        ),
        (
            "transport/link/tls/listen_private_key",
            path(&tls.key),
            false,
        ),
        (
            "transport/link/tls/connect_certificate",
            path(&tls.cert),
            false,
        ),
        (
            "transport/link/tls/connect_private_key",
            path(&tls.key),
            false,
        ),
        (
            "transport/link/tls/enable_mtls",
            tls.mutual.to_string(),
            false,
        ),
        // Identity is the certificate's common name, bound to the host name by access control
        // below; the address connected to (an IP, often learnt by gossip) is not checked.
        (
            "transport/link/tls/verify_name_on_connect",
            "false".into(),
            false,
        ),
        // A link whose other end's certificate expires is closed then (not only refused at
        // the next handshake).
        (
            "transport/link/tls/close_link_on_expiration",
            "true".into(),
            false,
        ),
    ];
    let mut hosts: BTreeSet<String> = auth.hosts.iter().cloned().collect();
    if let Some(user) = &auth.user {
        let name = user.name.clone().unwrap_or_else(|| host.to_owned());
        if name != host {
            return Err(AuthError::NotThisHost {
                what: "user name",
                found: name,
                host: host.to_owned(),
            });
        }
        let raw = read_file(&user.password_file)?;
        let password = String::from_utf8(raw)
            .ok()
            .map(|p| p.trim().to_owned())
            .filter(|p| !p.is_empty())
            .ok_or_else(|| AuthError::File {
                path: user.password_file.clone(),
                reason: "not a password (UTF-8 text, not blank)".into(),
            })?;
        hosts.extend(users_of(&user.users_file)?);
        out.push(("transport/auth/usrpwd/user", json!(name).to_string(), false));
        out.push((
            "transport/auth/usrpwd/password",
            json!(password).to_string(),
            true,
        ));
        out.push((
            "transport/auth/usrpwd/dictionary_file",
            path(&user.users_file),
            false,
        ));
    }
    hosts.remove(host);
    if hosts.is_empty() {
        return Err(AuthError::NoHosts);
    }
    if hosts.len() > MAX_AUTH_HOSTS {
        return Err(AuthError::TooManyHosts(hosts.len()));
    }
    out.push((
        "access_control",
        access_control(domain, &hosts, tls.mutual).to_string(),
        false,
    ));
    Ok(out)
}

/// Zenoh access control binding each allowed host's name to its identity. Default deny; each
/// host `h` (a subject: certificate common name `h`, or user name `h` without mutual TLS) may
/// subscribe and query anywhere in the domain, receive anything of the domain, and put,
/// declare tokens and queryables, and reply only under `<domain>/*/h/**`.
pub(crate) fn access_control(
    domain: &str,
    hosts: &BTreeSet<String>,
    mutual: bool,
) -> serde_json::Value {
    let everything = format!("{domain}/**");
    let mut rules = vec![
        json!({
            "id": "any-host-subscribes-and-queries",
            "messages": ["declare_subscriber", "query", "liveliness_query",
                         "declare_liveliness_subscriber"],
            "flows": ["ingress"],
            "permission": "allow",
            "key_exprs": [everything],
        }),
        json!({
            "id": "any-host-receives",
            "messages": ["put", "delete", "declare_subscriber", "query", "reply",
                         "declare_queryable", "liveliness_token", "liveliness_query",
                         "declare_liveliness_subscriber"],
            "flows": ["egress"],
            "permission": "allow",
            "key_exprs": [everything],
        }),
    ];
    let mut subjects = Vec::new();
    let mut policies = Vec::new();
    for h in hosts {
        let own = format!("own-keys-of-{h}");
        rules.push(json!({
            "id": own,
            "messages": ["put", "delete", "reply", "declare_queryable", "liveliness_token"],
            "flows": ["ingress"],
            "permission": "allow",
            "key_exprs": [format!("{domain}/*/{h}/**")],
        }));
        // With mutual TLS both ends of every link have a certificate; without it, the
        // listening end knows the connecting host by its user name and the connecting end the
        // listening host by its certificate.
        let mut ids = vec![format!("certificate-{h}")];
        subjects.push(json!({ "id": ids[0], "cert_common_names": [h] }));
        if !mutual {
            ids.push(format!("user-{h}"));
            subjects.push(json!({ "id": ids[1], "usernames": [h] }));
        }
        policies.push(json!({
            "id": format!("host-{h}"),
            "rules": ["any-host-subscribes-and-queries", "any-host-receives", own],
            "subjects": ids,
        }));
    }
    json!({
        "enabled": true,
        "default_permission": "deny",
        "rules": rules,
        "subjects": subjects,
        "policies": policies,
    })
}

/// Whether an endpoint's address is a loopback one (`127.0.0.0/8`, `::1`, `localhost`).
fn loopback(endpoint: &str) -> bool {
    let rest = endpoint.split_once('/').map_or(endpoint, |(_, r)| r);
    let addr = rest.rsplit_once(':').map_or(rest, |(a, _)| a);
    let addr = addr.trim_start_matches('[').trim_end_matches(']');
    addr == "localhost"
        || addr
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

/// The warning for a bridge open to the network: listening on a non-loopback address without
/// authentication (`None` when it is closed or listens on loopback only).
pub(crate) fn open_to_network(auth: Option<&AuthConfig>, listen: &[String]) -> Option<String> {
    if auth.is_some() {
        return None;
    }
    let open: Vec<&String> = listen.iter().filter(|e| !loopback(e)).collect();
    if open.is_empty() {
        return None;
    }
    Some(format!(
        "listening on {open:?} without authentication: any host that reaches it can read every \
         topic, publish into this host's topics, call its services and claim any host name \
         (close it with TLS: docs/multi-host.md, \"Closing the bridge\")"
    ))
}

impl crate::BridgeConfig {
    /// Turns authentication on (or off with `None`). With TLS, the default listening endpoint
    /// (`tcp/0.0.0.0:7447`) becomes `tls/0.0.0.0:7447`; other endpoints are kept as given
    /// ([`validate`](crate::BridgeConfig::validate) refuses plain ones).
    pub fn set_auth(&mut self, auth: Option<AuthConfig>) {
        let tls = auth.as_ref().is_some_and(|a| a.tls.is_some());
        if tls && self.listen == [default_listen(false)] {
            self.listen = vec![default_listen(true)];
        }
        self.auth = auth;
    }

    /// An endpoint for `addr` (`10.0.0.2`, `10.0.0.2:9000` or a full endpoint): `tls/` when TLS
    /// is on, else `tcp/`; Zenoh's port when none is given.
    pub fn endpoint(&self, addr: &str) -> String {
        let tls = self.auth.as_ref().is_some_and(|a| a.tls.is_some());
        if tls && !addr.contains('/') {
            crate::endpoint_of(&format!("tls/{addr}"))
        } else {
            crate::endpoint_of(addr)
        }
    }

    /// The warning for a bridge listening on a non-loopback address without authentication
    /// (`None` when it is closed, or listens on loopback only).
    pub fn open_to_network(&self) -> Option<String> {
        open_to_network(self.auth.as_ref(), &self.listen)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use zenoh::Wait;

    #[test]
    fn loopback_listeners_are_not_open_to_the_network() {
        let l = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert!(open_to_network(None, &l(&["tcp/0.0.0.0:7447"])).is_some());
        assert!(open_to_network(None, &l(&["tcp/10.0.0.1:7447"])).is_some());
        assert!(open_to_network(None, &l(&["tcp/127.0.0.1:7447", "tcp/[::1]:7447"])).is_none());
        assert!(open_to_network(None, &l(&["tcp/localhost:7447"])).is_none());
        assert!(open_to_network(None, &l(&["tcp/127.0.0.1:1", "tcp/[::]:7447"])).is_some());
        let auth = AuthConfig::default();
        assert!(open_to_network(Some(&auth), &l(&["tls/0.0.0.0:7447"])).is_none());
        assert!(
            crate::BridgeConfig::new("x").open_to_network().is_some(),
            "the default bridge is open, and says so"
        );
    }

    #[test]
    fn auth_section_applies_and_bad_ones_are_typed_errors() {
        let tls =
            "auth:\n  tls: {ca: ca.pem, cert: a.pem, key: a.key, mutual: true}\n  hosts: [b]\n";
        let mut c = crate::BridgeConfig::new("auth-test");
        c.host = "a".into();
        c.apply_yaml(tls).unwrap();
        assert_eq!(
            c.listen,
            ["tls/0.0.0.0:7447"],
            "the default listener becomes TLS"
        );
        assert_eq!(c.endpoint("10.0.0.2"), "tls/10.0.0.2:7447");
        assert!(c.open_to_network().is_none());
        assert!(c.auth.as_ref().unwrap().tls.as_ref().unwrap().mutual);

        let err = |text: &str| {
            let mut c = crate::BridgeConfig::new("auth-test");
            c.host = "a".into();
            c.apply_yaml(text).unwrap_err()
        };
        use crate::ConfigError::{Auth, Yaml};
        let e = err("auth:\n  tls: {ca: x, cert: y, key: z, mutul: true}\n");
        assert!(matches!(e, Yaml { line: Some(2), .. }), "{e}");
        let e = err("auth:\n  password: secret\n");
        assert!(matches!(e, Yaml { line: Some(2), .. }), "{e}");
        let e = err("auth:\n  user: {password_file: p, users_file: u}\n");
        assert!(matches!(e, Auth(AuthError::NoTls)), "{e}");
        let e = err("auth:\n  tls: {ca: x, cert: y, key: z}\n");
        assert!(matches!(e, Auth(AuthError::AnonymousClients)), "{e}");
        let e = err(&format!("connect: [tcp/10.0.0.2:7447]\n{tls}"));
        assert!(matches!(e, Auth(AuthError::Endpoint { .. })), "{e}");
        let e = err("listen: [tls/0.0.0.0:7447]\n");
        assert!(matches!(e, Auth(AuthError::Endpoint { .. })), "{e}");
        let e = err(&format!(
            "{tls}  user: {{name: b, password_file: p, users_file: u}}\n"
        ));
        assert!(matches!(e, Auth(AuthError::NotThisHost { .. })), "{e}");
        let e = err("auth:\n  tls: {ca: x, cert: y, key: z, mutual: true}\n  hosts: ['a/*']\n");
        assert!(matches!(e, Auth(AuthError::BadName { .. })), "{e}");
    }

    #[test]
    fn users_files_are_parsed_as_zenoh_does_and_bad_lines_are_named() {
        let dir = std::env::temp_dir().join(format!("horus-users-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("users");
        std::fs::write(&file, "a:pw1\n\n  b : pw2 \n").unwrap();
        assert_eq!(users_of(&file).unwrap(), ["a", "b"]);
        for (text, line) in [("a:pw\nb\n", 2), ("a:\n", 1), ("a/b:pw\n", 1)] {
            std::fs::write(&file, text).unwrap();
            let e = users_of(&file).unwrap_err();
            assert!(
                matches!(e, AuthError::UsersFile { line: l, .. } if l == line),
                "{text:?}: {e}"
            );
        }
        std::fs::write(&file, "").unwrap();
        assert!(matches!(users_of(&file), Err(AuthError::File { .. })));
        std::fs::write(&file, vec![b'a'; (MAX_FILE_BYTES + 1) as usize]).unwrap();
        assert!(matches!(users_of(&file), Err(AuthError::File { .. })));
        std::fs::write(&file, "not a certificate").unwrap();
        assert!(matches!(
            certificate_common_name(&file),
            Err(AuthError::Certificate { .. })
        ));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn closed_session_opens_no_plain_tcp_link_to_scouted_locators() {
        let dir = std::env::temp_dir().join(format!("horus-tls-only-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let out = std::process::Command::new("openssl")
            .args([
                "req",
                "-x509",
                "-newkey",
                "ec",
                "-pkeyopt",
                "ec_paramgen_curve:P-256",
            ])
            .args(["-nodes", "-days", "1", "-subj", "/CN=host-a"])
            .args(["-keyout", "a.key", "-out", "a.pem"])
            .current_dir(&dir)
            .output()
            .expect("openssl runs");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let auth = AuthConfig {
            tls: Some(TlsAuth {
                ca: dir.join("a.pem"),
                cert: dir.join("a.pem"),
                key: dir.join("a.key"),
                mutual: true,
            }),
            user: None,
            hosts: vec!["host-b".into()],
        };
        let settings = session_settings(&auth, "horus", "host-a").unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
        assert!(
            settings
                .iter()
                .any(|(k, v, _)| *k == "transport/link/protocols" && v == r#"["tls"]"#),
            "TLS links only: {settings:?}"
        );
        let mut c = zenoh::Config::default();
        for (k, v, _) in &settings {
            c.insert_json5(k, v).expect("zenoh takes every setting");
        }
        assert_eq!(
            c.get_json("transport/link/protocols").unwrap(),
            r#"["tls"]"#
        );
        // And Zenoh enforces it: a plain TCP link is refused (listening here; opening a link to
        // a scouted locator goes through the same check).
        c.insert_json5("listen/endpoints", r#"["tcp/127.0.0.1:0"]"#)
            .unwrap();
        c.insert_json5("scouting/multicast/enabled", "false")
            .unwrap();
        c.insert_json5("access_control", r#"{"enabled": false}"#)
            .unwrap();
        let Err(e) = zenoh::open(c).wait() else {
            panic!("a tcp/ listener is refused");
        };
        assert!(e.to_string().contains("Unsupported protocol"), "{e}");
    }

    #[test]
    fn generated_access_control_is_accepted_by_zenoh() {
        let hosts: BTreeSet<String> = ["host-a".to_owned(), "laptop.lan".to_owned()].into();
        for mutual in [true, false] {
            let acl = access_control("horus", &hosts, mutual);
            let mut c = zenoh::Config::default();
            c.insert_json5("access_control", &acl.to_string())
                .expect("zenoh takes the rules");
        }
        let acl = access_control("horus", &hosts, false);
        assert_eq!(acl["policies"].as_array().unwrap().len(), 2);
        assert_eq!(acl["subjects"].as_array().unwrap().len(), 4);
        assert_eq!(acl["rules"][2]["key_exprs"][0], "horus/*/host-a/**");
    }
}
