//! [`TwoHosts`]: two network namespaces joined by a veth pair, each a [`Host`]
//! with its own loopback, one address on the link and a multicast route.

use std::net::Ipv4Addr;
use std::process::Command;

use crate::error::{NetnsError, Unavailable};
use crate::{cmd, enter, names};

/// One of the two hosts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Side {
    /// The first host, `10.231.X.1`.
    A,
    /// The second host, `10.231.X.2`.
    B,
}

impl Side {
    /// `a` or `b`.
    pub fn letter(self) -> char {
        match self {
            Side::A => 'a',
            Side::B => 'b',
        }
    }
}

/// One namespace of a [`TwoHosts`]: a "host" with a veth interface to the other.
#[derive(Debug)]
pub struct Host {
    name: String,
    interface: String,
    addr: Ipv4Addr,
}

impl Host {
    /// The namespace name (as `ip netns list` shows it).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// This host's address on the link.
    pub fn addr(&self) -> Ipv4Addr {
        self.addr
    }

    /// The name of this host's end of the veth pair (inside its namespace).
    pub fn interface(&self) -> &str {
        &self.interface
    }

    /// A command that runs `program` inside this namespace (`ip netns exec <name>
    /// <program>`); add its arguments with `.arg`/`.args` as usual.
    pub fn command(&self, program: impl AsRef<std::ffi::OsStr>) -> Command {
        let mut c = Command::new("ip");
        c.args(["netns", "exec", &self.name]).arg(program);
        c
    }

    /// Runs `f` on a new thread inside this namespace (see [`crate::run_in`]).
    pub fn run_in<R: Send>(&self, f: impl FnOnce() -> R + Send) -> Result<R, NetnsError> {
        enter::run_in(&self.name, f)
    }

    /// Runs `program args…` inside this namespace; fails unless it exits with 0.
    pub(crate) fn exec(&self, args: &[&str], stdin: Option<&str>) -> Result<String, NetnsError> {
        let mut full = vec!["netns", "exec", &self.name];
        full.extend_from_slice(args);
        cmd::run_with_input("ip", &full, stdin)
    }

    /// `ip -n <name> args…`.
    fn ip(&self, args: &[&str]) -> Result<String, NetnsError> {
        let mut full = vec!["-n", &self.name];
        full.extend_from_slice(args);
        cmd::run("ip", &full)
    }
}

/// Two hosts joined by a veth pair; both namespaces (and so the link) are deleted
/// on drop.
#[derive(Debug)]
pub struct TwoHosts {
    a: Host,
    b: Host,
}

impl TwoHosts {
    /// Creates the pair: namespaces `hx-<pid>-<n>-<tag>-a` and `…-b`, a veth pair
    /// `hx<tag>a` ↔ `hx<tag>b` created directly inside them, addresses
    /// `10.231.X.1/24` (A) and `10.231.X.2/24` (B), `lo` and both ends up,
    /// multicast on and a `224.0.0.0/4` route on each end. First removes the
    /// namespaces of runs whose process has died. `tag` is 1 to 8 of `[a-z0-9]`.
    pub fn create(tag: &str) -> Result<TwoHosts, NetnsError> {
        if !names::valid_tag(tag) {
            return Err(NetnsError::BadTag(tag.to_owned()));
        }
        crate::check_tools()?;
        names::remove_stale();
        let (n, base) = names::fresh_base();
        let x = names::subnet_octet(n);
        let host = |side: Side, last: u8| Host {
            name: format!("{base}-{tag}-{}", side.letter()),
            interface: format!("hx{tag}{}", side.letter()),
            addr: Ipv4Addr::new(10, 231, x, last),
        };
        let (a, b) = (host(Side::A, 1), host(Side::B, 2));
        cmd::run("ip", &["netns", "add", &a.name])?;
        // From here on, dropping `hosts` deletes whatever exists.
        let mut hosts = TwoHosts { a, b };
        cmd::run("ip", &["netns", "add", &hosts.b.name])?;
        hosts.link()?;
        Ok(hosts)
    }

    fn link(&mut self) -> Result<(), NetnsError> {
        let (a, b) = (&self.a, &self.b);
        cmd::run(
            "ip",
            &[
                "link",
                "add",
                &a.interface,
                "netns",
                &a.name,
                "type",
                "veth",
                "peer",
                "name",
                &b.interface,
                "netns",
                &b.name,
            ],
        )?;
        for h in [a, b] {
            let cidr = format!("{}/24", h.addr);
            h.ip(&["addr", "add", &cidr, "dev", &h.interface])?;
            h.ip(&["link", "set", "lo", "up"])?;
            h.ip(&["link", "set", &h.interface, "multicast", "on", "up"])?;
            h.ip(&["route", "add", "224.0.0.0/4", "dev", &h.interface])?;
        }
        Ok(())
    }

    /// One of the two hosts.
    pub fn host(&self, side: Side) -> &Host {
        match side {
            Side::A => &self.a,
            Side::B => &self.b,
        }
    }
}

impl Drop for TwoHosts {
    fn drop(&mut self) {
        for h in [&self.a, &self.b] {
            // Deleting the namespace that holds one end removes the whole veth pair.
            let _ = cmd::run("ip", &["netns", "delete", &h.name]);
        }
    }
}

/// Maps a failure to start `program` (not installed) to [`Unavailable::Missing`].
pub(crate) fn missing(e: NetnsError, command: &'static str, package: &'static str) -> NetnsError {
    match e {
        NetnsError::Spawn { source, .. } if source.kind() == std::io::ErrorKind::NotFound => {
            Unavailable::Missing {
                command,
                package,
                reason: source.to_string(),
            }
            .into()
        }
        other => other,
    }
}
