//! A host's bridge as a process of its own: this binary run again with
//! [`BRIDGE_ROLE`] and a [`BridgeSpec`], started by the host child (so it is in
//! the host's network namespace and inherits its CPU affinity). It runs until its
//! stdin closes — the host child closing it, or dying — then stops the bridge.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{bail, ensure, Context};
use serde::{Deserialize, Serialize};

use horus_bench_core::child::{EXIT_TIMEOUT, READY_TIMEOUT};

/// First argument of a bridge process.
pub const BRIDGE_ROLE: &str = "--bridge-role";

/// What a bridge process serves (its JSON argument).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct BridgeSpec {
    /// The host's horus namespace.
    pub namespace: String,
    /// Zenoh key domain (one per session: bridges of other sessions never meet).
    pub domain: String,
    /// The host's name.
    pub host: String,
    /// Endpoints to listen on.
    pub listen: Vec<String>,
    /// Endpoints to connect to.
    pub connect: Vec<String>,
}

/// Entry point of a bridge process: `json` is a [`BridgeSpec`].
pub fn bridge_main(json: &str) -> anyhow::Result<()> {
    let spec: BridgeSpec = serde_json::from_str(json).context("bridge spec")?;
    let mut cfg = horus_zenoh::BridgeConfig::new(&spec.namespace);
    cfg.domain = spec.domain;
    cfg.host = spec.host;
    cfg.listen = spec.listen;
    cfg.connect = spec.connect;
    cfg.multicast = false;
    // As `horus bridge` does (see horus_zenoh::tune_allocator_for_bridge).
    horus_zenoh::tune_allocator_for_bridge();
    let bridge = horus_zenoh::Bridge::start(cfg).context("starting the bridge")?;
    let mut out = std::io::stdout().lock();
    writeln!(out, "ready")?;
    out.flush()?;
    let mut line = String::new();
    let mut stdin = std::io::stdin().lock();
    while stdin.read_line(&mut line).is_ok_and(|n| n > 0) {
        line.clear();
    }
    bridge.stop();
    Ok(())
}

/// A running bridge process, seen from its host child.
pub(super) struct BridgeProc {
    child: Child,
    stdin: Option<ChildStdin>,
    namespace: String,
}

impl BridgeProc {
    /// Starts the bridge and waits until it writes its status.
    pub(super) fn spawn(spec: &BridgeSpec) -> anyhow::Result<Self> {
        let exe = std::env::current_exe().context("own executable")?;
        let mut child = Command::new(exe)
            .arg(BRIDGE_ROLE)
            .arg(serde_json::to_string(spec)?)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .context("starting the bridge process")?;
        let stdin = child.stdin.take();
        let stdout = child.stdout.take().context("bridge stdout")?;
        let mut me = Self {
            child,
            stdin,
            namespace: spec.namespace.clone(),
        };
        // `ready` comes once Bridge::start returned (or EOF if it failed).
        let mut line = String::new();
        BufReader::new(stdout)
            .read_line(&mut line)
            .context("reading the bridge's stdout")?;
        if line.trim() != "ready" {
            me.check_alive()?;
            bail!("the bridge process said {line:?} instead of ready");
        }
        me.wait_status("bridge status written", |_| true)?;
        Ok(me)
    }

    /// The bridge's process id.
    pub(super) fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Fails if the bridge process has exited.
    pub(super) fn check_alive(&mut self) -> anyhow::Result<()> {
        match self.child.try_wait()? {
            None => Ok(()),
            Some(status) => bail!("the bridge process exited ({status})"),
        }
    }

    /// Waits (up to [`READY_TIMEOUT`]) until the bridge's status satisfies `f`.
    pub(super) fn wait_status(
        &self,
        what: &str,
        f: impl Fn(&horus_zenoh::BridgeStatus) -> bool,
    ) -> anyhow::Result<horus_zenoh::BridgeStatus> {
        let deadline = Instant::now() + READY_TIMEOUT;
        loop {
            if let Some(s) = horus_zenoh::read_status_file(&self.namespace)? {
                if f(&s) {
                    return Ok(s);
                }
            }
            ensure!(
                Instant::now() < deadline,
                "{what}: not within {READY_TIMEOUT:?}"
            );
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// Closes its stdin and waits for it to stop.
    pub(super) fn stop(mut self) -> anyhow::Result<()> {
        self.halt()
    }

    fn halt(&mut self) -> anyhow::Result<()> {
        self.stdin.take();
        let deadline = Instant::now() + EXIT_TIMEOUT;
        loop {
            if let Some(status) = self.child.try_wait()? {
                ensure!(status.success(), "the bridge process ended with {status}");
                return Ok(());
            }
            if Instant::now() >= deadline {
                let _ = self.child.kill();
                let _ = self.child.wait();
                bail!("the bridge process did not stop within {EXIT_TIMEOUT:?}: killed");
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}

impl Drop for BridgeProc {
    fn drop(&mut self) {
        if self.stdin.is_some() {
            if let Err(e) = self.halt() {
                eprintln!("bridge of {}: {e:#}", self.namespace);
            }
        }
    }
}
