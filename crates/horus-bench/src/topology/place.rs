//! Where the endpoints of a run execute: threads of this process behind a start
//! [`Gate`], or child processes started together by a `GO` line on their stdin.

use std::sync::{Condvar, Mutex};

use anyhow::{ensure, Context};

use super::endpoint::{publisher_as, subscriber_as};
use super::{Outcomes, PubOutcome, Role, Shape, SubOutcome, PUB_ROLE, RESULT_TIMEOUT, SUB_ROLE};
use crate::affinity::pin_current_thread;
use crate::child::{self, ChildArgs, ChildProcess};
use crate::robotics::with_spec;

/// A start line all endpoints reach before any message moves; it fails instead of
/// hanging when an endpoint never arrives.
struct Gate {
    state: Mutex<(usize, bool)>,
    cv: Condvar,
    n: usize,
}

impl Gate {
    fn new(n: usize) -> Self {
        Self {
            state: Mutex::new((0, false)),
            cv: Condvar::new(),
            n,
        }
    }
    fn arrive(&self) -> anyhow::Result<()> {
        let mut st = self.state.lock().expect("gate poisoned");
        st.0 += 1;
        self.cv.notify_all();
        let (st, timeout) = self
            .cv
            .wait_timeout_while(st, child::READY_TIMEOUT, |s| s.0 < self.n && !s.1)
            .expect("gate poisoned");
        ensure!(!st.1, "another endpoint failed before the start");
        ensure!(!timeout.timed_out(), "not every endpoint reached the start");
        Ok(())
    }
    fn fail(&self) {
        self.state.lock().expect("gate poisoned").1 = true;
        self.cv.notify_all();
    }
}

pub(super) fn in_threads(
    shape: Shape,
    role: impl Fn(usize, bool) -> Role,
) -> anyhow::Result<Outcomes> {
    let gate = Gate::new(shape.pubs + shape.subs);
    let start = || gate.arrive();
    let endpoint = |r: Role, publisher: bool| {
        let result = (|| {
            if let Some(cpu) = r.cpu {
                pin_current_thread(cpu).with_context(|| format!("pinning to CPU {cpu}"))?;
            }
            if publisher {
                with_spec!(r.spec, publisher_as(&r, &start)).map(Err)
            } else {
                with_spec!(r.spec, subscriber_as(&r, &start)).map(Ok)
            }
        })();
        if result.is_err() {
            gate.fail();
        }
        result
    };
    std::thread::scope(|scope| {
        let subs: Vec<_> = (0..shape.subs)
            .map(|j| {
                let r = role(j, false);
                scope.spawn(move || endpoint(r, false))
            })
            .collect();
        let pubs: Vec<_> = (0..shape.pubs)
            .map(|i| {
                let r = role(i, true);
                scope.spawn(move || endpoint(r, true))
            })
            .collect();
        let join = |h: std::thread::ScopedJoinHandle<'_, _>| {
            h.join().unwrap_or_else(|p| std::panic::resume_unwind(p))
        };
        let mut out = (Vec::new(), Vec::new());
        let mut first_error = None;
        for h in pubs.into_iter().chain(subs) {
            match join(h) {
                Ok(Err(p)) => out.0.push(p),
                Ok(Ok(s)) => out.1.push(s),
                Err(e) => {
                    first_error.get_or_insert(e);
                }
            }
        }
        match first_error {
            Some(e) => Err(e),
            None => Ok(out),
        }
    })
}

pub(super) fn in_processes(
    shape: Shape,
    role: impl Fn(usize, bool) -> Role,
) -> anyhow::Result<Outcomes> {
    let spawn = |r: Role, name: &str| -> anyhow::Result<ChildProcess> {
        let mut c = ChildProcess::spawn_controlled(name, &[serde_json::to_string(&r)?])?;
        c.wait_ready()?;
        Ok(c)
    };
    // Subscribers first: a message sent before a subscriber joins is not for it.
    let mut subs = (0..shape.subs)
        .map(|j| spawn(role(j, false), SUB_ROLE))
        .collect::<anyhow::Result<Vec<_>>>()?;
    let mut pubs = (0..shape.pubs)
        .map(|i| spawn(role(i, true), PUB_ROLE))
        .collect::<anyhow::Result<Vec<_>>>()?;
    for c in subs.iter_mut().chain(pubs.iter_mut()) {
        c.send_line(GO)?;
    }
    let pub_out = pubs
        .iter_mut()
        .map(|c| c.recv_result::<PubOutcome>(RESULT_TIMEOUT))
        .collect::<anyhow::Result<Vec<_>>>()?;
    let sub_out = subs
        .iter_mut()
        .map(|c| c.recv_result::<SubOutcome>(RESULT_TIMEOUT))
        .collect::<anyhow::Result<Vec<_>>>()?;
    for c in pubs.into_iter().chain(subs) {
        c.finish()?;
    }
    Ok((pub_out, sub_out))
}

/// The parent's start signal to its children.
const GO: &str = "GO";

/// Child entry point for [`PUB_ROLE`] and [`SUB_ROLE`]: one JSON [`Role`] argument.
pub fn child_main(role_name: &str, mut args: ChildArgs) -> anyhow::Result<()> {
    let r: Role = serde_json::from_str(&args.next::<String>("role json")?)?;
    if let Some(cpu) = r.cpu {
        pin_current_thread(cpu).with_context(|| format!("pinning to CPU {cpu}"))?;
    }
    let start = || {
        child::signal_ready()?;
        child::wait_for_parent(GO)
    };
    if role_name == PUB_ROLE {
        let out = with_spec!(r.spec, publisher_as(&r, &start))?;
        child::send_result(&out)
    } else {
        let out = with_spec!(r.spec, subscriber_as(&r, &start))?;
        child::send_result(&out)
    }
}
