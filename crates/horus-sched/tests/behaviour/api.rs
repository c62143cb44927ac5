//! Registration errors and lifecycle rules.

use std::sync::atomic::{AtomicU32, Ordering::Relaxed};
use std::sync::Arc;
use std::time::Duration;

use horus_sched::prelude::*;
use horus_sched::{AddNodeError, FnNode, NodeState, RunError};

use crate::common::scheduler;

fn noop(
    name: &'static str,
) -> FnNode<impl FnMut(&TickContext<'_>) -> Result<(), NodeError> + Send + 'static> {
    node_fn(name, |_| Ok(()))
}

#[test]
fn bad_registrations_are_typed_errors() {
    let (mut s, _) = scheduler("api_add");
    s.add(noop("a"), NodeConfig::new()).unwrap();
    assert_eq!(
        s.add(noop("a"), NodeConfig::new()),
        Err(AddNodeError::DuplicateName("a".into()))
    );
    assert!(matches!(
        s.add(noop("b"), NodeConfig::new().core(0)),
        Err(AddNodeError::CoreNeedsDedicatedThread(_))
    ));
    assert!(matches!(
        s.add(noop("x y"), NodeConfig::new()),
        Err(AddNodeError::InvalidName(_))
    ));
}

#[test]
fn init_failure_aborts_the_run_and_shuts_down_the_initialised_nodes() {
    let (mut s, _) = scheduler("api_init_fail");
    let down = Arc::new(AtomicU32::new(0));
    let d = down.clone();
    s.add(
        noop("first").on_shutdown(move || {
            d.fetch_add(1, Relaxed);
            Ok(())
        }),
        NodeConfig::new(),
    )
    .unwrap();
    s.add(
        noop("second").on_init(|| Err(NodeError::msg("no device"))),
        NodeConfig::new(),
    )
    .unwrap();
    match s.run_for(Duration::from_secs(1)) {
        Err(RunError::InitFailed { node, error }) => {
            assert_eq!(node, "second");
            assert_eq!(error.to_string(), "no device");
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(down.load(Relaxed), 1);
    assert!(matches!(s.run(), Err(RunError::Finished)));
    assert!(matches!(
        s.add(noop("late"), NodeConfig::new()),
        Err(AddNodeError::AlreadyStarted)
    ));
}

#[test]
fn tick_once_on_the_real_clock_ticks_due_nodes_then_shutdown_finishes() {
    let (mut s, _) = scheduler("api_tick_once");
    let ticks = Arc::new(AtomicU32::new(0));
    let t = ticks.clone();
    s.add(
        node_fn("n", move |_| {
            t.fetch_add(1, Relaxed);
            Ok(())
        }),
        NodeConfig::new().rate(1000_u64.hz()),
    )
    .unwrap();
    for _ in 0..5 {
        s.tick_once().unwrap();
    }
    assert_eq!(ticks.load(Relaxed), 5);
    assert_eq!(s.shutdown(), StopReason::Requested);
    assert_eq!(s.stats().nodes[0].state, NodeState::ShutDown);
    assert!(matches!(s.tick_once(), Err(RunError::Finished)));
}

#[test]
fn tick_once_reports_a_stop() {
    let (mut s, _) = scheduler("api_tick_once_stop");
    s.add(
        node_fn("quitter", |ctx| {
            ctx.request_stop();
            Ok(())
        }),
        NodeConfig::new(),
    )
    .unwrap();
    s.tick_once().unwrap();
    assert!(matches!(
        s.tick_once(),
        Err(RunError::Stopped(StopReason::Requested))
    ));
}
