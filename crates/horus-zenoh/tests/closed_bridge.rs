//! A closed bridge (TLS, mutual TLS, user/password, generated access control) between two
//! hosts, and a raw Zenoh peer (no bridge code) on a third host trying to get in: without
//! credentials it cannot connect, read, publish or call; with credentials of its own it cannot
//! speak as another host. Certificates are made here with the `openssl` command-line tool.

mod common;

use std::io::{BufRead, BufReader};
use std::net::Ipv4Addr;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use common::{counters, Proc, Rig};
use horus_netns::Side;
use serde_json::Value;

/// Child processes run this (see common::roles); in the parent it does nothing.
#[test]
fn child_entry() {
    common::child_main();
}

const PORT: u16 = 7447;

/// A CA, a certificate per host (CN = host name), and one from another CA.
struct Certs {
    dir: PathBuf,
}

fn openssl(dir: &Path, args: &[&str]) {
    let out = Command::new("openssl")
        .args(args)
        .current_dir(dir)
        .output()
        .expect("openssl runs");
    assert!(
        out.status.success(),
        "openssl {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

impl Certs {
    fn new(tag: &str, hosts: &[&str]) -> Certs {
        let dir = std::env::temp_dir().join(format!("horus-certs-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(
            dir.join("ext.cnf"),
            "basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature\n\
             extendedKeyUsage=serverAuth,clientAuth\n",
        )
        .unwrap();
        for ca in ["ca", "other-ca"] {
            openssl(
                &dir,
                &[
                    "req",
                    "-x509",
                    "-newkey",
                    "ec",
                    "-pkeyopt",
                    "ec_paramgen_curve:prime256v1",
                    "-nodes",
                    "-keyout",
                    &format!("{ca}.key"),
                    "-out",
                    &format!("{ca}.pem"),
                    "-days",
                    "2",
                    "-subj",
                    &format!("/CN={ca}"),
                    "-addext",
                    "basicConstraints=critical,CA:TRUE",
                    "-addext",
                    "keyUsage=critical,keyCertSign,cRLSign",
                ],
            );
        }
        let mut all: Vec<(&str, &str)> = hosts.iter().map(|h| (*h, "ca")).collect();
        all.push(("intruder", "other-ca"));
        for (h, ca) in all {
            openssl(
                &dir,
                &[
                    "req",
                    "-newkey",
                    "ec",
                    "-pkeyopt",
                    "ec_paramgen_curve:prime256v1",
                    "-nodes",
                    "-keyout",
                    &format!("{h}.key"),
                    "-out",
                    &format!("{h}.csr"),
                    "-subj",
                    &format!("/CN={h}"),
                ],
            );
            openssl(
                &dir,
                &[
                    "x509",
                    "-req",
                    "-in",
                    &format!("{h}.csr"),
                    "-CA",
                    &format!("{ca}.pem"),
                    "-CAkey",
                    &format!("{ca}.key"),
                    "-CAcreateserial",
                    "-out",
                    &format!("{h}.pem"),
                    "-days",
                    "2",
                    "-extfile",
                    "ext.cnf",
                ],
            );
        }
        Certs { dir }
    }

    fn path(&self, name: &str) -> String {
        self.dir.join(name).display().to_string()
    }

    /// The `auth:` section for `host` (mutual TLS, or TLS + user/password).
    fn yaml(&self, host: &str, mutual: bool, hosts: &[&str]) -> String {
        let user = if mutual {
            String::new()
        } else {
            std::fs::write(
                self.dir.join(format!("{host}.password")),
                format!("pw-{host}\n"),
            )
            .unwrap();
            let users: String = hosts.iter().map(|h| format!("{h}:pw-{h}\n")).collect();
            std::fs::write(self.dir.join("users"), users).unwrap();
            format!(
                "  user: {{password_file: {}, users_file: {}}}\n",
                self.path(&format!("{host}.password")),
                self.path("users")
            )
        };
        format!(
            "auth:\n  tls: {{ca: {}, cert: {}, key: {}, mutual: {mutual}}}\n{user}  hosts: {hosts:?}\n",
            self.path("ca.pem"),
            self.path(&format!("{host}.pem")),
            self.path(&format!("{host}.key")),
        )
    }
}

impl Drop for Certs {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// A third host: a network namespace with a veth link to host B only (`10.233.X.1` here,
/// `10.233.X.2` on B's end), named like horus-netns's so that a crashed run's is removed by
/// the next. Deleted on drop.
struct ThirdHost {
    name: String,
    /// B's address on this link.
    b_addr: Ipv4Addr,
}

fn ip(args: &[&str]) {
    let out = Command::new("ip").args(args).output().expect("ip runs");
    assert!(
        out.status.success(),
        "ip {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

impl ThirdHost {
    fn new(rig: &Rig, tag: &str) -> ThirdHost {
        let b = rig.hosts.host(Side::B).name();
        let name = format!("{b}-c");
        let x = (std::process::id() % 250 + 1) as u8;
        ip(&["netns", "add", &name]);
        let third = ThirdHost {
            name,
            b_addr: Ipv4Addr::new(10, 233, x, 2),
        };
        let (c_if, b_if) = (format!("hx{tag}c"), format!("hx{tag}d"));
        ip(&[
            "link",
            "add",
            &c_if,
            "netns",
            &third.name,
            "type",
            "veth",
            "peer",
            "name",
            &b_if,
            "netns",
            b,
        ]);
        for (ns, dev, addr) in [(third.name.as_str(), &c_if, 1), (b, &b_if, 2)] {
            ip(&[
                "-n",
                ns,
                "addr",
                "add",
                &format!("10.233.{x}.{addr}/24"),
                "dev",
                dev,
            ]);
            ip(&["-n", ns, "link", "set", dev, "up"]);
            ip(&["-n", ns, "link", "set", "lo", "up"]);
        }
        third
    }

    /// Runs the raw peer here with `env`; its report, after `while_alive` has run with it.
    fn raw_peer(
        &self,
        rig: &Rig,
        env: &[(&str, String)],
        while_alive: impl FnOnce(&Value),
    ) -> Value {
        let mut cmd = Command::new("ip");
        cmd.args(["netns", "exec", &self.name])
            .arg(std::env::current_exe().unwrap())
            .args(["--exact", "child_entry", "--nocapture", "--test-threads=1"])
            .env("HZ_ROLE", "raw_peer")
            .env("HZ_CLAIM", "host-a")
            .env("HORUS_NAMESPACE", format!("{}-c", rig.namespace(Side::B)))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped());
        for (k, v) in env {
            cmd.env(k, v);
        }
        let mut child = cmd.spawn().expect("raw peer");
        // Kept open until the child has exited (it prints libtest's summary last).
        let mut out = BufReader::new(child.stdout.take().unwrap());
        let report = (&mut out)
            .lines()
            .map_while(Result::ok)
            .find_map(|l| serde_json::from_str::<Value>(l.trim()).ok())
            .expect("the raw peer's report");
        while_alive(&report);
        drop(child.stdin.take());
        let _ = child.wait();
        drop(out);
        report
    }
}

impl Drop for ThirdHost {
    fn drop(&mut self) {
        // Deleting the namespace removes its end of the link, and so the pair.
        let _ = Command::new("ip")
            .args(["netns", "delete", &self.name])
            .output();
    }
}

/// The closed bridge of `side` (host `host-<letter>`), connecting to the other side's over TLS
/// and listening on every address (B is reached from the third host too).
fn closed_bridge(rig: &Rig, side: Side, certs: &Certs, mutual: bool, hosts: &[&str]) -> Proc {
    let other = if side == Side::A { Side::B } else { Side::A };
    let host = format!("host-{}", side.letter());
    let peer = rig.hosts.host(other).addr();
    rig.spawn(
        side,
        "bridge",
        &[
            ("HZ_LISTEN", format!("tls/0.0.0.0:{PORT}")),
            ("HZ_CONNECT", format!("tls/{peer}:{PORT}")),
            ("HZ_AUTH_YAML", certs.yaml(&host, mutual, hosts)),
            ("HZ_HOST", host),
        ],
    )
}

/// Messages cross A → B through the closed bridges.
fn crossing_works(rig: &Rig, count: u64) {
    let env = [("HZ_COUNT", count.to_string())];
    let mut sub = rig.spawn(Side::B, "sub_cmdvel", &env);
    let publ = rig.spawn(Side::A, "pub_cmdvel", &env);
    let got = sub.result();
    assert_eq!(
        got["received"], count,
        "the closed bridges carry A's messages"
    );
    assert_eq!(got["missing"], 0);
    publ.finish();
}

fn assert_shut_out(what: &str, r: &Value) {
    assert_eq!(r["peers"], 0, "{what}: connected ({r})");
    assert_sees_nothing(what, r);
}

/// Connected or not, it read nothing, saw no token and got no reply.
fn assert_sees_nothing(what: &str, r: &Value) {
    eprintln!("{what}: {r}");
    assert_eq!(r["samples"], serde_json::json!([]), "{what}: read data");
    assert_eq!(
        r["tokens"],
        serde_json::json!([]),
        "{what}: saw the hosts' tokens"
    );
    assert_eq!(r["replies"], 0, "{what}: got replies");
    assert_eq!(r["live_replies"], 0, "{what}: got token replies");
}

#[test]
fn unauthenticated_peer_cannot_read_or_publish() {
    if common::child_main() {
        return;
    }
    let Some(rig) = Rig::new("closed") else {
        return;
    };
    // host-x: a certificate of the right CA for a host that is not allowed.
    let certs = Certs::new("mtls", &["host-a", "host-b", "host-x"]);
    let hosts = ["host-a", "host-b"];
    let a = closed_bridge(&rig, Side::A, &certs, true, &hosts);
    let b = closed_bridge(&rig, Side::B, &certs, true, &hosts);
    crossing_works(&rig, 50);
    // Keep a subscriber and a server on B, so that there is something to read and to call.
    let hog = rig.spawn(Side::B, "hog", &[]);
    let server = rig.spawn(Side::B, "server", &[]);
    // Calls cross the closed bridges too (queries, replies and queryables under the rules).
    let mut client = rig.spawn(Side::A, "client", &[("HZ_CALLS", "2".into())]);
    assert_eq!(client.result()["outcomes"], serde_json::json!(["ok", "ok"]));
    client.finish();
    let third = ThirdHost::new(&rig, "closed");
    let b_addr = third.b_addr;
    let intruder = |env: &[(&str, String)]| third.raw_peer(&rig, env, |_| {});
    let plain = intruder(&[("HZ_CONNECT", format!("tcp/{b_addr}:{PORT}"))]);
    assert_shut_out("plain TCP to the TLS port", &plain);
    let tls = format!("tls/{b_addr}:{PORT}");
    let no_cert = intruder(&[
        ("HZ_CONNECT", tls.clone()),
        ("HZ_TLS_CA", certs.path("ca.pem")),
    ]);
    assert_shut_out("TLS without a client certificate", &no_cert);
    let other_ca = intruder(&[
        ("HZ_CONNECT", tls.clone()),
        ("HZ_TLS_CA", certs.path("ca.pem")),
        ("HZ_TLS_CERT", certs.path("intruder.pem")),
        ("HZ_TLS_KEY", certs.path("intruder.key")),
    ]);
    assert_shut_out("a certificate of another CA", &other_ca);
    let not_allowed = intruder(&[
        ("HZ_CONNECT", tls),
        ("HZ_TLS_CA", certs.path("ca.pem")),
        ("HZ_TLS_CERT", certs.path("host-x.pem")),
        ("HZ_TLS_KEY", certs.path("host-x.key")),
    ]);
    // The TLS handshake succeeds (the CA signed it); access control gives it nothing.
    assert_sees_nothing("a host of the CA not allowed in the domain", &not_allowed);
    let s = rig.status(Side::B).expect("B's status");
    assert_eq!(s.open_to_network, None, "a closed bridge is not open");
    let peers: Vec<&str> = s.peers.iter().map(|p| p.host.as_str()).collect();
    assert_eq!(peers, ["host-a"], "only A is seen");
    hog.kill();
    server.kill();
    rig.end([a, b]);
}

#[test]
fn peer_without_the_password_cannot_connect() {
    if common::child_main() {
        return;
    }
    let Some(rig) = Rig::new("usrpwd") else {
        return;
    };
    let certs = Certs::new("usrpwd", &["host-a", "host-b"]);
    let hosts = ["host-a", "host-b"];
    let a = closed_bridge(&rig, Side::A, &certs, false, &hosts);
    let b = closed_bridge(&rig, Side::B, &certs, false, &hosts);
    // Identified both ways without client certificates: B knows A by its user name (A dials
    // B), A knows B by its certificate (or the other way round).
    crossing_works(&rig, 50);
    let third = ThirdHost::new(&rig, "usrpwd");
    let intruder = |env: &[(&str, String)]| third.raw_peer(&rig, env, |_| {});
    let tls = format!("tls/{}:{PORT}", third.b_addr);
    let wrong = intruder(&[
        ("HZ_CONNECT", tls.clone()),
        ("HZ_TLS_CA", certs.path("ca.pem")),
        ("HZ_USER", "host-a".into()),
        ("HZ_PASSWORD", "guessed".into()),
    ]);
    assert_shut_out("host A's user name with a wrong password", &wrong);
    let none = intruder(&[("HZ_CONNECT", tls), ("HZ_TLS_CA", certs.path("ca.pem"))]);
    assert_shut_out("no user name", &none);
    rig.end([a, b]);
}

#[test]
fn authenticated_host_cannot_claim_another_hosts_name() {
    if common::child_main() {
        return;
    }
    let Some(rig) = Rig::new("claim") else {
        return;
    };
    let certs = Certs::new("claim", &["host-a", "host-b", "host-c"]);
    // Only B's bridge runs; host C (a raw peer with its own valid certificate, allowed in the
    // domain) dials it from the third host and speaks both as host-a and as itself.
    let hosts = ["host-a", "host-b", "host-c"];
    let b = closed_bridge(&rig, Side::B, &certs, true, &hosts);
    let mut sub = rig.spawn(Side::B, "sub_cmdvel", &[("HZ_COUNT", "8".into())]);
    let third = ThirdHost::new(&rig, "claim");
    let env = [
        ("HZ_CONNECT", format!("tls/{}:{PORT}", third.b_addr)),
        ("HZ_TLS_CA", certs.path("ca.pem")),
        ("HZ_TLS_CERT", certs.path("host-c.pem")),
        ("HZ_TLS_KEY", certs.path("host-c.key")),
        ("HZ_SELF", "host-c".into()),
    ];
    third.raw_peer(&rig, &env, |c| {
        eprintln!("host-c: {c}");
        assert_eq!(c["peers"], 1, "host C is let in");
        let got = sub.result();
        eprintln!("B's subscriber: {got}");
        // The five messages C put as host-a (stamps 100…) were dropped; the one it put as
        // itself (stamp 7) arrived, after them.
        assert_eq!(
            got["received"], 1,
            "only C's own message reaches B's subscriber"
        );
        assert_eq!(
            got["last"], 8,
            "a message put as host-a reached B's subscriber"
        );
        let s = rig.wait_status(Side::B, "B counts C's message", |s| {
            counters(s, "base/cmd_vel").published >= 1
        });
        let peers: Vec<&str> = s.peers.iter().map(|p| p.host.as_str()).collect();
        assert_eq!(peers, ["host-c"], "C's tokens as host-a were refused");
        assert_eq!(counters(&s, "base/cmd_vel").received, 1);
    });
    // Only one bridge here (Rig::end wants two).
    b.finish();
    for side in [Side::A, Side::B] {
        horus::clean::clean_stale(&rig.namespace(side)).ok();
    }
    rig.assert_clean();
}

#[test]
fn bridge_refuses_to_start_as_another_host_than_its_certificate() {
    if common::child_main() {
        return;
    }
    let certs = Certs::new("refuse", &["host-a", "host-b"]);
    let mut cfg = horus_zenoh::BridgeConfig::new(&format!("hz-refuse-{}", std::process::id()));
    cfg.host = "host-a".into();
    cfg.listen = vec!["tls/127.0.0.1:0".into()];
    cfg.status_file = false;
    cfg.apply_yaml(&certs.yaml("host-b", true, &["host-a", "host-b"]))
        .expect("the file itself is fine");
    // A's name with B's certificate.
    let err = horus_zenoh::Bridge::start(cfg).err().expect("refused");
    assert!(
        matches!(
            err,
            horus_zenoh::BridgeError::Config(horus_zenoh::ConfigError::Auth(
                horus_zenoh::AuthError::NotThisHost { .. }
            ))
        ),
        "{err}"
    );
}
