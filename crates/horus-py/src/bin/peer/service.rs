//! Service roles of `horus-py-peer`: a Rust server and a Rust client of the
//! service `CmdVel → Vector3` ("scale": `x = 2·linear`, `y = 2·angular`,
//! `z = stamp_ns`), for the Python cross-language tests
//! (`python/tests/test_services.py`).
//!
//! ```text
//! horus-py-peer serve answer|hold|idle NAME COUNT
//!     answer: answer COUNT requests, then exit
//!     hold:   take one request, print {"holding": stamp}, keep it unanswered until killed
//!     idle:   run a server that never receives, until killed (or COUNT s pass)
//! horus-py-peer call wait|nowait NAME COUNT TIMEOUT_MS
//!     make COUNT calls (stamp_ns = i, linear = i/2, angular = -i) and print each result as
//!     {"ok": [x, y, z]} or {"err": "NoServer" | "ServerDied" | "Timeout" | "Unanswered" | …};
//!     `wait` first waits (at most 20 s) for a server to appear
//! ```

use std::time::{Duration, Instant};

use anyhow::{bail, Result};
use horus::prelude::*;
use horus::CallError;

use super::say;

fn open(name: &str) -> Result<Service<CmdVel, Vector3>> {
    Ok(Service::<CmdVel, Vector3>::open(name)?)
}

/// The server's answer to `req`.
pub(crate) fn scale(req: &CmdVel) -> Vector3 {
    Vector3::new(
        f64::from(req.linear) * 2.0,
        f64::from(req.angular) * 2.0,
        req.stamp_ns as f64,
    )
}

pub(crate) fn serve(mode: &str, name: &str, count: u64) -> Result<()> {
    let service = open(name)?;
    let mut server = service.server()?;
    say("ready");
    match mode {
        "answer" => {
            for _ in 0..count {
                let Some(req) = server.recv_timeout(Duration::from_secs(20)) else {
                    bail!("no request within 20 s");
                };
                let resp = scale(&req);
                let delivered = req.reply(&resp).is_ok();
                say(&format!("{{\"answered\": {}}}", delivered));
            }
            Ok(())
        }
        "hold" => {
            let Some(req) = server.recv_timeout(Duration::from_secs(20)) else {
                bail!("no request within 20 s");
            };
            say(&format!("{{\"holding\": {}}}", req.stamp_ns));
            std::thread::sleep(Duration::from_secs(60));
            drop(req);
            Ok(())
        }
        "idle" => {
            std::thread::sleep(Duration::from_secs(count.max(1)));
            Ok(())
        }
        m => bail!("unknown serve mode {m}"),
    }
}

fn error_name(e: &CallError) -> &'static str {
    match e {
        CallError::NoServer(_) => "NoServer",
        CallError::ServerDied { .. } => "ServerDied",
        CallError::Busy { .. } => "Busy",
        CallError::Timeout(_) => "Timeout",
        CallError::Unanswered => "Unanswered",
        CallError::ReplyFailed => "ReplyFailed",
        CallError::TooLarge { .. } => "TooLarge",
        CallError::PoolExhausted => "PoolExhausted",
        CallError::Taken => "Taken",
        CallError::Stopped => "Stopped",
    }
}

pub(crate) fn call(mode: &str, name: &str, count: u64, timeout_ms: u64) -> Result<()> {
    let service = open(name)?;
    let mut client = service.client()?;
    say("ready");
    if mode == "wait" {
        let start = Instant::now();
        while client.servers() == 0 {
            if start.elapsed() > Duration::from_secs(20) {
                bail!("no server appeared on {name}");
            }
            std::thread::sleep(Duration::from_millis(1));
        }
    }
    for i in 0..count {
        let req = CmdVel::new(i, i as f32 * 0.5, -(i as f32));
        match client.call(&req, Duration::from_millis(timeout_ms)) {
            Ok(r) => say(&format!("{{\"ok\": [{:?}, {:?}, {:?}]}}", r.x, r.y, r.z)),
            Err(e) => say(&format!("{{\"err\": \"{}\"}}", error_name(&e))),
        }
    }
    Ok(())
}
