//! Unix-domain-socket baseline: a `SOCK_STREAM` ping-pong between two processes.
//!
//! A writes the whole message with `write_all`, B reads it fully with `read_exact`
//! (a blocking read, the natural way to use a socket) and writes it back, A reads it
//! fully. The kernel copies the full payload twice per direction whatever
//! [`crate::payload::Touch`] says; the touch mode only decides how much of its local
//! buffer A writes and reads.
//!
//! Set-up: A binds a listener on a unique path in the temp directory and spawns B
//! ([`ECHO_ROLE`]); B connects (which completes in the listener's backlog), signals
//! ready, and serves exactly `rounds` echoes; A then accepts. The socket file is
//! removed when A is done.

use crate::affinity::{pin_current_thread, run_on_cpu};
use crate::child::{cpu_arg, signal_ready, ChildArgs, ChildProcess};
use crate::harness::{measure_round_trips, unique_id, Config};
use crate::payload;
use crate::stats::Summary;
use anyhow::Context;
use std::io::{Read, Write};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::PathBuf;

/// Child role name of the echo side.
pub const ECHO_ROLE: &str = "uds-echo";

/// Removes the socket file when dropped.
#[derive(Debug)]
struct SocketFile(PathBuf);

impl Drop for SocketFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// Measures `cfg.rounds()` UDS round trips of `size` bytes; A runs on `cpus[0]`,
/// the echo process on `cpus[1]` (unpinned if `None`).
pub fn round_trip(cfg: &Config, size: usize, cpus: Option<[usize; 2]>) -> anyhow::Result<Summary> {
    run_on_cpu(cpus.map(|c| c[0]), || {
        let socket = SocketFile(std::env::temp_dir().join(format!("{}.sock", unique_id())));
        let listener = UnixListener::bind(&socket.0)
            .with_context(|| format!("binding {}", socket.0.display()))?;
        let args = [
            socket.0.display().to_string(),
            size.to_string(),
            cfg.rounds().to_string(),
            cpu_arg(cpus.map(|c| c[1])),
        ];
        let mut child = ChildProcess::spawn(ECHO_ROLE, &args)?;
        child.wait_ready()?;
        let (mut stream, _) = listener.accept().context("accepting the echo process")?;

        let mut out = vec![0u8; size];
        let mut back = vec![0u8; size];
        let summary = measure_round_trips(cfg, |seq| {
            payload::write(&mut out, seq, cfg.touch);
            stream.write_all(&out)?;
            stream.read_exact(&mut back)?;
            payload::check(&back, seq, cfg.touch)
        })?;
        drop(stream);
        child.finish()?;
        Ok(summary)
    })
}

/// Child entry point for [`ECHO_ROLE`]: `<socket path> <size> <rounds> <cpu|->`.
pub fn echo_child(mut args: ChildArgs) -> anyhow::Result<()> {
    let path: String = args.next("socket path")?;
    let size: usize = args.next("size")?;
    let rounds: u64 = args.next("rounds")?;
    if let Some(cpu) = args.next_cpu()? {
        pin_current_thread(cpu).with_context(|| format!("pinning echo to CPU {cpu}"))?;
    }
    let mut stream = UnixStream::connect(&path).with_context(|| format!("connecting {path}"))?;
    signal_ready()?;
    let mut buf = vec![0u8; size];
    for round in 0..rounds {
        stream
            .read_exact(&mut buf)
            .with_context(|| format!("reading message {round}"))?;
        stream
            .write_all(&buf)
            .with_context(|| format!("echoing message {round}"))?;
    }
    Ok(())
}

/// What the Unix socket does, for the method text.
pub const SETTINGS: &str =
    "AF_UNIX SOCK_STREAM, blocking write_all/read_exact of the whole message (blocking)";

/// A Unix-domain stream socket as a [`PubSub`](super::PubSub) peer: copy, blocking.
#[derive(Debug, Clone, Copy)]
pub struct UnixSocket;

impl crate::peer::Peer for UnixSocket {
    fn name(&self) -> &'static str {
        "uds"
    }

    fn settings(&self) -> String {
        SETTINGS.to_owned()
    }
}

impl super::PubSub for UnixSocket {
    fn mode(&self) -> crate::harness::Mode {
        crate::harness::Mode::Copy
    }

    fn busy_polls(&self) -> bool {
        false
    }

    fn round_trip(
        &self,
        cfg: &Config,
        size: usize,
        cpus: Option<[usize; 2]>,
    ) -> anyhow::Result<Summary> {
        round_trip(cfg, size, cpus)
    }
}
