//! A third host for tests that need one: a network namespace with a veth link to one of the
//! rig's two hosts only (`10.234.X.1` here, `10.234.X.2` on the other end), named after that
//! host's namespace (`<its name>-c`) so that a crashed run's is removed with the rig's. Its
//! horus namespace is its own. Deleted on drop.

use std::net::Ipv4Addr;
use std::process::{Command, Stdio};

use horus_netns::Side;

use super::{Proc, Rig, CHILD_TEST};

/// Zenoh's port on every host.
const PORT: u16 = 7447;

/// See the module's documentation.
pub struct ThirdHost {
    name: String,
    /// This host's address.
    pub addr: Ipv4Addr,
    /// The address of the host it is linked to, on this link.
    pub peer_addr: Ipv4Addr,
    /// Its horus namespace.
    pub namespace: String,
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
    /// A host linked to `side` of `rig`; `tag` (1 to 4 of `[a-z0-9]`) names the link's ends.
    pub fn linked_to(rig: &Rig, side: Side, tag: &str) -> ThirdHost {
        let peer = rig.hosts.host(side).name();
        let name = format!("{peer}-c");
        let x = (std::process::id() % 250 + 1) as u8;
        ip(&["netns", "add", &name]);
        let third = ThirdHost {
            name,
            addr: Ipv4Addr::new(10, 234, x, 1),
            peer_addr: Ipv4Addr::new(10, 234, x, 2),
            namespace: format!("{}-c", rig.namespace(side)),
        };
        let (c_if, p_if) = (format!("hx{tag}c"), format!("hx{tag}d"));
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
            &p_if,
            "netns",
            peer,
        ]);
        for (ns, dev, last) in [(third.name.as_str(), &c_if, 1), (peer, &p_if, 2)] {
            ip(&[
                "-n",
                ns,
                "addr",
                "add",
                &format!("10.234.{x}.{last}/24"),
                "dev",
                dev,
            ]);
            ip(&["-n", ns, "link", "set", dev, "up"]);
            ip(&["-n", ns, "link", "set", "lo", "up"]);
        }
        third
    }

    /// This test binary run here as `role` with `env`, once it is ready.
    pub fn spawn(&self, role: &str, env: &[(&str, String)]) -> Proc {
        let mut cmd = Command::new("ip");
        cmd.args(["netns", "exec", &self.name])
            .arg(std::env::current_exe().expect("test binary"))
            .args(["--exact", CHILD_TEST, "--nocapture", "--test-threads=1"])
            .env("HZ_ROLE", role)
            .env("HORUS_NAMESPACE", &self.namespace)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped());
        for (k, v) in env {
            cmd.env(k, v);
        }
        Proc::start(cmd.spawn().expect("spawn child"), &format!("{role} on C"))
    }

    /// This host's bridge (`host-c`), connecting to the host it is linked to.
    pub fn bridge(&self) -> Proc {
        self.spawn(
            "bridge",
            &[
                ("HZ_HOST", "host-c".into()),
                ("HZ_LISTEN", format!("tcp/{}:{PORT}", self.addr)),
                ("HZ_CONNECT", format!("tcp/{}:{PORT}", self.peer_addr)),
                ("HZ_CONFIG", String::new()),
            ],
        )
    }

    /// Nothing of this host's namespace left in /dev/shm.
    pub fn assert_clean(&self) {
        horus::clean::clean_stale(&self.namespace).ok();
        let left: Vec<String> = std::fs::read_dir("/dev/shm")
            .unwrap()
            .filter_map(|e| e.ok()?.file_name().into_string().ok())
            .filter(|n| n.contains(&format!(".{}.", self.namespace)))
            .collect();
        assert!(left.is_empty(), "left behind in /dev/shm: {left:?}");
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
