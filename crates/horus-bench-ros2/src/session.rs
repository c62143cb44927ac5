//! One measurement: one system at one payload size, every end (and the bridge) a fresh
//! process, pong first, then ping; ping's result line is the measurement.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

use anyhow::{anyhow, bail, Context};

use super::discovery::DiscoveryRange;
use super::rust_end::EndArgs;
use super::system::{End, System};
use super::{
    BridgeDrops, PingResult, BRIDGE_PREFIX, BRIDGE_ROLE, CHILD_FLAG, READY, RESULT_PREFIX,
    RUST_END_ROLE,
};

/// How long a pong or the bridge may take to print [`READY`].
const READY_TIMEOUT: Duration = Duration::from_secs(60);
/// How long a process may take to exit once told to.
const EXIT_TIMEOUT: Duration = Duration::from_secs(30);

/// Where the programs are.
#[derive(Debug, Clone)]
pub struct Programs {
    /// The repository (for `scripts/ros2-python`, `.venv`, `endpoint.py`).
    pub repo: PathBuf,
    /// Fast DDS XML profile every rclpy process gets (`FASTDDS_DEFAULT_PROFILES_FILE`), or
    /// none (Fast DDS's defaults).
    pub fastdds_profile: Option<PathBuf>,
    /// The ROS 2 discovery range of every child (rclpy and the bridge).
    pub discovery: DiscoveryRange,
}

impl Programs {
    /// The repository this binary was built from, rclpy with the repository's large-message
    /// profile ([`Programs::large_messages_profile`]), every child under `discovery`.
    pub fn from_build(discovery: DiscoveryRange) -> Programs {
        let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        Programs {
            fastdds_profile: Some(Programs::large_messages_profile(&repo)),
            repo,
            discovery,
        }
    }

    /// `ros2/fastdds-large-messages.xml`: Fast DDS's default transports with a 4 MiB UDP
    /// receive buffer (docs/ros2-bridge.md, "Large messages to Fast DDS over UDP").
    pub fn large_messages_profile(repo: &Path) -> PathBuf {
        repo.join("ros2/fastdds-large-messages.xml")
    }

    fn endpoint_py(&self) -> PathBuf {
        self.repo.join("crates/horus-bench-ros2/src/endpoint.py")
    }

    /// `scripts/ros2-python` (rclpy).
    pub fn ros2_python(&self) -> PathBuf {
        self.repo.join("scripts/ros2-python")
    }

    /// The horus Python (`.venv/bin/python`).
    pub fn horus_python(&self) -> PathBuf {
        self.repo.join(".venv/bin/python")
    }

    /// Why `system` cannot run here, if it cannot.
    pub fn missing(&self, system: System) -> Option<String> {
        if let Some(profile) = &self.fastdds_profile {
            let uses_rclpy = [system.ends().0, system.ends().1].contains(&End::Rclpy);
            if uses_rclpy && !profile.is_file() {
                return Some(format!("no Fast DDS profile at {}", profile.display()));
            }
        }
        let (a, b) = system.ends();
        for end in [a, b] {
            let path = match end {
                End::Rclpy => self.ros2_python(),
                End::HorusPython => self.horus_python(),
                End::HorusRust => continue,
            };
            let ok = Command::new(&path)
                .args(["-c", probe(end)])
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status()
                .is_ok_and(|s| s.success());
            if !ok {
                return Some(format!(
                    "{} cannot `{}` (make setup-ros2 / make setup-python)",
                    path.display(),
                    probe(end)
                ));
            }
        }
        None
    }
}

fn probe(end: End) -> &'static str {
    match end {
        End::Rclpy => "import rclpy, std_msgs.msg, numpy",
        _ => "import horus, numpy",
    }
}

/// What one measurement asks for.
#[derive(Debug, Clone)]
pub struct Spec {
    /// Which system.
    pub system: System,
    /// Data bytes per message.
    pub size: usize,
    /// Timed round trips.
    pub count: u64,
    /// Untimed round trips first.
    pub warmup: u64,
    /// Ping's wait for one answer before it counts it lost.
    pub timeout: Duration,
    /// (ping, pong) CPUs, or unpinned.
    pub cpus: Option<[usize; 2]>,
    /// Unique per measurement: horus namespace and topic prefix.
    pub id: String,
}

/// What one measurement gave.
#[derive(Debug, Clone)]
pub struct Outcome {
    /// Ping's result.
    pub ping: PingResult,
    /// The bridge's counters, when bridged.
    pub bridge: Option<BridgeDrops>,
}

/// A child process with its stdout read line by line on a thread.
struct Proc {
    name: String,
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
}

impl Proc {
    fn spawn(name: &str, mut cmd: Command) -> anyhow::Result<Proc> {
        let mut child = cmd
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .with_context(|| format!("spawning {name}"))?;
        let stdout = child.stdout.take().expect("stdout is piped");
        let stdin = child.stdin.take();
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        Ok(Proc {
            name: name.to_owned(),
            child,
            stdin,
            lines,
        })
    }

    /// The next line starting with `prefix` (others go to stderr), within `timeout`.
    fn line(&mut self, prefix: &str, timeout: Duration) -> anyhow::Result<String> {
        let deadline = Instant::now() + timeout;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(line) if line.starts_with(prefix) => return Ok(line[prefix.len()..].to_owned()),
                Ok(line) => eprintln!("    [{}] {line}", self.name),
                Err(RecvTimeoutError::Timeout) => {
                    bail!("{}: no {prefix:?} line within {timeout:?}", self.name)
                }
                Err(RecvTimeoutError::Disconnected) => {
                    let status = self.child.wait().ok();
                    bail!("{}: exited before {prefix:?} ({status:?})", self.name)
                }
            }
        }
    }

    /// Closes stdin (the stop signal) and waits for a successful exit.
    fn finish(mut self) -> anyhow::Result<()> {
        drop(self.stdin.take());
        let deadline = Instant::now() + EXIT_TIMEOUT;
        loop {
            if let Some(status) = self.child.try_wait()? {
                if !status.success() {
                    bail!("{} exited with {status}", self.name);
                }
                return Ok(());
            }
            if Instant::now() > deadline {
                bail!("{} did not exit within {EXIT_TIMEOUT:?}", self.name);
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Proc {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// Runs one measurement.
pub fn run(programs: &Programs, spec: &Spec) -> anyhow::Result<Outcome> {
    let result = run_processes(programs, spec);
    remove_namespace(&spec.id);
    result
}

fn run_processes(programs: &Programs, spec: &Spec) -> anyhow::Result<Outcome> {
    let (ping_end, pong_end) = spec.system.ends();
    let bridge = if spec.system.bridged() {
        let mut cmd = Command::new(std::env::current_exe()?);
        cmd.args([CHILD_FLAG, BRIDGE_ROLE, &spec.id]);
        let mut p = Proc::spawn("bridge", with_env(programs, cmd))?;
        p.line(READY, READY_TIMEOUT)?;
        Some(p)
    } else {
        None
    };
    let mut pong = Proc::spawn("pong", end_command(programs, spec, pong_end, false)?)?;
    pong.line(READY, READY_TIMEOUT)?;
    let mut ping = Proc::spawn("ping", end_command(programs, spec, ping_end, true)?)?;
    let budget = Duration::from_secs(90)
        + spec.timeout
            * u32::try_from(spec.count + spec.warmup)
                .unwrap_or(u32::MAX)
                .min(1000);
    let line = ping.line(RESULT_PREFIX, budget)?;
    let result: PingResult =
        serde_json::from_str(&line).map_err(|e| anyhow!("ping's result {line:?}: {e}"))?;
    ping.finish()?;
    pong.finish()?;
    let drops = match bridge {
        Some(mut b) => {
            drop(b.stdin.take());
            let line = b.line(BRIDGE_PREFIX, EXIT_TIMEOUT)?;
            let d: BridgeDrops = serde_json::from_str(&line)
                .map_err(|e| anyhow!("bridge's counters {line:?}: {e}"))?;
            b.finish()?;
            Some(d)
        }
        None => None,
    };
    Ok(Outcome {
        ping: result,
        bridge: drops,
    })
}

fn with_env(programs: &Programs, mut cmd: Command) -> Command {
    // The bridge keeps its DDS on 127.0.0.1 whatever the range (bridge_child); rclpy gets the
    // range through scripts/ros2-python, which sets ROS_AUTOMATIC_DISCOVERY_RANGE from
    // HORUS_ROS2_DISCOVERY_RANGE (LOCALHOST when unset).
    let range = programs.discovery.env_value();
    cmd.env("ROS_AUTOMATIC_DISCOVERY_RANGE", range);
    cmd.env("HORUS_ROS2_DISCOVERY_RANGE", range);
    match programs.discovery {
        // No multicast route in the namespace: Fast DDS participants find each other through
        // 127.0.0.1 as a static peer (the bridge's RustDDS announces itself to the localhost
        // SPDP ports on its own).
        DiscoveryRange::SystemDefault => cmd.env("ROS_STATIC_PEERS", "127.0.0.1"),
        DiscoveryRange::Localhost => cmd.env_remove("ROS_STATIC_PEERS"),
    };
    cmd
}

/// The horus and ROS names of the two topics (`prefix/ping` ↔ `/prefix/ping`).
fn topics(spec: &Spec, ros: bool) -> (String, String) {
    let prefix = format!("{}/ping", spec.id.replace('-', "_"));
    let pong = prefix.replace("/ping", "/pong");
    if ros {
        (format!("/{prefix}"), format!("/{pong}"))
    } else {
        (prefix, pong)
    }
}

fn end_command(programs: &Programs, spec: &Spec, end: End, ping: bool) -> anyhow::Result<Command> {
    let cpu = spec.cpus.map(|c| if ping { c[0] } else { c[1] });
    let (ping_topic, pong_topic) = topics(spec, end == End::Rclpy);
    let cmd = match end {
        End::HorusRust => {
            let args = EndArgs {
                ping,
                namespace: spec.id.clone(),
                ping_topic,
                pong_topic,
                size: spec.size,
                count: spec.count,
                warmup: spec.warmup,
                timeout: spec.timeout,
                cpu,
            };
            let mut cmd = Command::new(std::env::current_exe()?);
            cmd.args([CHILD_FLAG, RUST_END_ROLE]).args(args.to_args());
            cmd
        }
        End::Rclpy | End::HorusPython => {
            let python = if end == End::Rclpy {
                programs.ros2_python()
            } else {
                programs.horus_python()
            };
            let mut cmd = Command::new(python);
            if end == End::Rclpy {
                match &programs.fastdds_profile {
                    Some(profile) => cmd.env("FASTDDS_DEFAULT_PROFILES_FILE", profile),
                    None => cmd.env_remove("FASTDDS_DEFAULT_PROFILES_FILE"),
                };
            }
            cmd.arg(programs.endpoint_py())
                .args(["--api", if end == End::Rclpy { "rclpy" } else { "horus" }])
                .args(["--side", if ping { "ping" } else { "pong" }])
                .args(["--ping-topic", &ping_topic, "--pong-topic", &pong_topic])
                .args(["--size", &spec.size.to_string()])
                .args(["--count", &spec.count.to_string()])
                .args(["--warmup", &spec.warmup.to_string()])
                .args(["--timeout", &spec.timeout.as_secs_f64().to_string()])
                .args(["--ns", &spec.id]);
            if let Some(c) = cpu {
                cmd.args(["--core", &c.to_string()]);
            }
            cmd
        }
    };
    Ok(with_env(programs, cmd))
}

/// Removes what the measurement's horus namespace left in /dev/shm (every process of it
/// has exited).
fn remove_namespace(namespace: &str) {
    let prefix = format!("horus.{namespace}.");
    let Ok(dir) = std::fs::read_dir("/dev/shm") else {
        return;
    };
    for entry in dir.flatten() {
        if entry.file_name().to_string_lossy().starts_with(&prefix) {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}
