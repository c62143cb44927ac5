//! Action roles of `horus-py-peer` for `python/tests/test_actions.py`: the
//! action "drive" with goal `Pose2D`, feedback `Vector3`, result `Pose2D`.
//!
//! Server behaviour (the Python tests' own server does the same): a goal
//! with `x < 0` is rejected; else accepted and executed by its mode `y`:
//! `0` → feedback `Vector3 { x: k }` for k = 1..=x, then succeeded with
//! `Pose2D { x, y: 0, theta }`; `1` → runs until a cancel request, then
//! canceled with `Pose2D { x: 0.5 }`; `2` → aborted with `Pose2D { x: -1 }`.
//!
//! ```text
//! horus-py-peer action-serve NAME SECONDS     serve (print {"goal": x, "mode": y} per goal) until SECONDS pass or killed
//! horus-py-peer action-call NAME X MODE       send one goal; print {"send_err": E} or {"accepted": true},
//!                                             then (mode 1) {"cancel": S}, then {"result": S, "x": x, "feedback": [..]} or {"result_err": E}
//! ```

use std::time::{Duration, Instant};

use anyhow::Result;
use horus::prelude::*;
use horus_actions::{ActionClient, ActionError, ActionServer, GoalId};

use super::say;

type Server = ActionServer<Pose2D, Vector3, Pose2D>;
type Client = ActionClient<Pose2D, Vector3, Pose2D>;

pub(crate) fn serve(name: &str, seconds: u64) -> Result<()> {
    let mut s = Server::new(name)?;
    say("ready");
    let end = Instant::now() + Duration::from_secs(seconds);
    // Goals of mode 1 waiting for a cancel.
    let mut slow: Vec<GoalId> = Vec::new();
    while Instant::now() < end {
        if let Some(g) = s.next_goal() {
            let goal = *g.goal();
            say(&format!("{{\"goal\": {}, \"mode\": {}}}", goal.x, goal.y));
            if goal.x < 0.0 {
                s.reject(g);
                continue;
            }
            let id = s.accept(g);
            s.execute(id)?;
            match goal.y as i64 {
                1 | 3 => slow.push(id),
                2 => s.abort(id, &Pose2D::new(-1.0, 0.0, 0.0))?,
                _ => {
                    for k in 1..=(goal.x as u64).min(60) {
                        s.publish_feedback(id, &Vector3::new(k as f64, 0.0, 0.0))?;
                    }
                    s.succeed(id, &Pose2D::new(goal.x, 0.0, goal.theta))?;
                }
            }
        }
        for id in s.take_cancel_requests() {
            say("{\"cancel\": true}");
            if slow.contains(&id) {
                s.canceled(id, &Pose2D::new(0.5, 0.0, 0.0))?;
            }
        }
        std::thread::sleep(Duration::from_micros(300));
    }
    Ok(())
}

fn error_name(e: &ActionError) -> &'static str {
    match e {
        ActionError::NoServer(_) => "NoServer",
        ActionError::Rejected(_) => "Rejected",
        ActionError::UnknownGoal(_) => "UnknownGoal",
        ActionError::WrongType => "WrongType",
        ActionError::ServerDied { .. } => "ServerDied",
        ActionError::Timeout(_) => "Timeout",
        ActionError::Call(_) => "Call",
        ActionError::Malformed => "Malformed",
    }
}

pub(crate) fn call(name: &str, x: f64, mode: f64) -> Result<()> {
    let mut c = Client::open(name)?;
    say("ready");
    let t = Duration::from_secs(10);
    let h = match c.send_goal(&Pose2D::new(x, mode, 0.25), t) {
        Ok(h) => h,
        Err(e) => {
            say(&format!("{{\"send_err\": \"{}\"}}", error_name(&e)));
            return Ok(());
        }
    };
    say("{\"accepted\": true}");
    if mode == 1.0 {
        match h.cancel(t) {
            Ok(s) => say(&format!("{{\"cancel\": \"{s:?}\"}}")),
            Err(e) => say(&format!("{{\"cancel_err\": \"{}\"}}", error_name(&e))),
        }
    }
    match h.result(t) {
        Ok((s, r)) => {
            let mut fb = Vec::new();
            while let Some(f) = h.feedback() {
                fb.push(f.x.to_string());
            }
            say(&format!(
                "{{\"result\": \"{s:?}\", \"x\": {}, \"theta\": {}, \"feedback\": [{}]}}",
                r.x,
                r.theta,
                fb.join(", ")
            ));
        }
        Err(e) => say(&format!("{{\"result_err\": \"{}\"}}", error_name(&e))),
    }
    Ok(())
}
