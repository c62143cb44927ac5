//! Glue between topics and the [scheduler](crate::sched): event-driven nodes
//! that tick when a subscriber has data, and an emergency stop announced on
//! a topic.
//!
//! # An event-driven node
//!
//! The node owns its [`Subscriber`](crate::Subscriber); the scheduler gets a
//! [`SubscriberReadiness`] watching the same cursor, and ticks the node once
//! per pending message (as long as each tick takes one).
//!
//! ```
//! use std::time::Duration;
//! use horus::prelude::*;
//! # let ns = format!("doctest-glue-{}", std::process::id());
//!
//! struct Driver { cmds: Subscriber<CmdVel>, last: f32 }
//!
//! impl Node for Driver {
//!     fn tick(&mut self, _ctx: &TickContext<'_>) -> Result<(), NodeError> {
//!         if let Some(cmd) = self.cmds.try_recv() {
//!             self.last = cmd.linear; // drive the wheels
//!         }
//!         Ok(())
//!     }
//! }
//!
//! let topic = Topic::<CmdVel>::builder("base/cmd_vel").namespace(&ns).open()?;
//! let cmds = topic.subscriber()?;
//! let ready = cmds.readiness();
//!
//! let estop = Topic::<EmergencyStop>::builder("estop").namespace(&ns).open()?;
//! let mut sched = Scheduler::new()
//!     .namespace(&ns)
//!     .on_emergency_stop(TopicEmergencyStop::from_topic(&estop)?);
//! sched.add(Driver { cmds, last: 0.0 }, NodeConfig::new().event(ready))?;
//! sched.run_for(Duration::from_millis(20))?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod estop;
mod readiness;

pub use estop::TopicEmergencyStop;
pub use readiness::SubscriberReadiness;
