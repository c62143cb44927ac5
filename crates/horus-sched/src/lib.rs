//! The horus node scheduler: runs [`Node`]s at their rates against absolute
//! release times, measures every tick, enforces budgets and deadlines,
//! restarts failed nodes by policy, watches for hung nodes, stops the robot on
//! an emergency, and can run deterministically on a simulated clock.
//!
//! # A periodic node
//!
//! ```
//! use std::time::Duration;
//! use horus_sched::prelude::*;
//!
//! struct Motor { ticks: u64 }
//!
//! impl Node for Motor {
//!     fn name(&self) -> &str { "motor" }
//!     fn tick(&mut self, _ctx: &TickContext<'_>) -> Result<(), NodeError> {
//!         self.ticks += 1; // drive the motor
//!         Ok(())
//!     }
//!     fn enter_safe_state(&mut self) { /* zero the motor current */ }
//! }
//!
//! let mut sched = Scheduler::new()
//!     .name("robot")
//!     .namespace("doctest") // default: $HORUS_NAMESPACE, else per user
//!     .tick_rate(1000_u64.hz());
//! sched.add(
//!     Motor { ticks: 0 },
//!     NodeConfig::new()
//!         .rate(500.hz())
//!         .budget(Duration::from_micros(300))
//!         .on_miss(MissPolicy::SafeState)
//!         .on_failure(FailurePolicy::Restart { max: 3, backoff: Duration::from_millis(10) })
//!         .watchdog(Duration::from_millis(50), WatchdogAction::EmergencyStop),
//! )?;
//! let reason = sched.run_for(Duration::from_millis(50))?;
//! assert_eq!(reason, StopReason::Elapsed);
//! let stats = sched.stats();
//! assert!(stats.nodes[0].ticks > 0);
//! println!("p99 start jitter: {:?}", stats.nodes[0].jitter.p99);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Closures, deterministic replay
//!
//! ```
//! use std::sync::{Arc, Mutex};
//! use std::time::Duration;
//! use horus_sched::prelude::*;
//!
//! let log = Arc::new(Mutex::new(Vec::new()));
//! let out = log.clone();
//! let mut sched = Scheduler::new().deterministic(true).publish_stats(false);
//! sched.add(
//!     node_fn("sensor", move |ctx| {
//!         out.lock().unwrap().push(ctx.now()); // simulated time
//!         Ok(())
//!     }),
//!     NodeConfig::new().rate(10.hz()),
//! )?;
//! sched.run_for(Duration::from_secs(1))?; // one simulated second, instantly
//! assert_eq!(log.lock().unwrap().len(), 11); // t = 0, 0.1, …, 1.0 s
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Execution classes
//!
//! [`ExecClass::Main`] nodes share the scheduler's main thread;
//! [`ExecClass::RealTime`] nodes get a dedicated thread with `SCHED_FIFO` when
//! permitted (what was granted is in [`NodeStats::rt_mode`]);
//! [`ExecClass::Compute`] nodes run on a worker pool; [`ExecClass::Event`] nodes
//! tick when their [`Readiness`] source says so.
//!
//! # Statistics from another process
//!
//! While running, the scheduler publishes its [`SchedulerStats`] to
//! `/dev/shm/horus.<namespace>.sched.<name>` ([`stats_path`]); read them
//! with [`read_stats`]. The file is removed on a clean stop.
#![warn(missing_docs)]

mod clock;
mod config;
mod estop;
mod events;
mod frequency;
mod grid;
mod histogram;
mod node;
mod policy;
mod readiness;
mod rt;
mod run;
mod runner;
mod scheduler;
mod signal;
mod stats;
mod stats_file;
mod stats_reader;
mod stats_shm;
mod step;
mod threads;
mod watchdog;
mod worker_pool;

pub use clock::Clock;
pub use config::{AddNodeError, ExecClass, NodeConfig, MAX_NODE_NAME};
pub use estop::{
    EmergencyStopEvent, EmergencyStopReason, EmergencyStopSink, StopHandle, StopReason,
};
pub use events::{EventSink, SchedulerEvent};
pub use frequency::{Frequency, FrequencyExt, InvalidFrequency};
pub use node::{node_fn, FnNode, Node, NodeError, TickContext};
pub use policy::{FailurePolicy, MissPolicy, WatchdogAction};
pub use readiness::{Readiness, Trigger};
pub use rt::{MemoryLock, RtMode};
pub use scheduler::{RunError, Scheduler};
pub use stats::{
    LoopStats, NodeState, NodeStats, Percentiles, SchedulerStats, StatsHandle, STATS_WINDOW,
};
pub use stats_file::{
    judge_stats, namespace, remove_stale_stats, stats_path, stats_writer_alive, StatsFileError,
    StatsVerdict, STATS_DIR,
};
pub use stats_reader::{read_stats, ReadStatsError};

/// The names most programs need.
pub mod prelude {
    pub use crate::{
        node_fn, ExecClass, FailurePolicy, FrequencyExt, MissPolicy, Node, NodeConfig, NodeError,
        Readiness, Scheduler, StopReason, TickContext, WatchdogAction,
    };
}
