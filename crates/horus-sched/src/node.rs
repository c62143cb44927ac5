//! The [`Node`] trait, its error type, the per-tick [`TickContext`], and
//! nodes built from closures ([`node_fn`]).

use std::time::Duration;

use crate::clock::Clock;
use crate::estop::Control;

/// A component the scheduler runs: `init` once, `tick` at its rate, `shutdown`
/// once at the end. Only [`tick`](Node::tick) is required.
///
/// A node owns its resources (publishers, subscribers, device handles). The
/// scheduler calls all methods of one node from one thread at a time, never
/// concurrently, but not necessarily always from the same thread (`init` and
/// `shutdown` run on the thread that called `run`; compute nodes tick on any
/// worker of the pool) — hence `Send`.
pub trait Node: Send {
    /// The node's name in statistics and events; defaults to the type's name.
    /// [`NodeConfig::name`](crate::NodeConfig::name) overrides it.
    fn name(&self) -> &str {
        let full = std::any::type_name::<Self>();
        // `my_crate::motor::Motor` → `Motor` (keeps generic arguments intact).
        let base = full.split('<').next().unwrap_or(full);
        match base.rfind("::") {
            Some(i) => &full[i + 2..],
            None => full,
        }
    }

    /// Called once before the first tick (and again after a restart).
    /// An error aborts [`Scheduler::run`](crate::Scheduler::run), or counts as
    /// a failure during a restart.
    fn init(&mut self) -> Result<(), NodeError> {
        Ok(())
    }

    /// One unit of work. An `Err` or a panic is handled by the node's
    /// [`FailurePolicy`](crate::FailurePolicy).
    fn tick(&mut self, ctx: &TickContext<'_>) -> Result<(), NodeError>;

    /// Called once when the scheduler stops (also after an emergency stop),
    /// and before a restart.
    fn shutdown(&mut self) -> Result<(), NodeError> {
        Ok(())
    }

    /// Told about every failed tick (error or panic) before the failure policy
    /// acts.
    fn on_error(&mut self, _error: &NodeError) {}

    /// Put the hardware this node drives into a safe state (stop motors, close
    /// valves). Called on a deadline miss under
    /// [`MissPolicy::SafeState`](crate::MissPolicy::SafeState) and for every
    /// node on an emergency stop. May be called repeatedly: make it idempotent.
    fn enter_safe_state(&mut self) {}
}

/// Why a node's `init`, `tick` or `shutdown` failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum NodeError {
    /// A failure described by a message.
    #[error("{0}")]
    Message(String),
    /// A failure caused by another error.
    #[error(transparent)]
    Other(Box<dyn std::error::Error + Send + Sync + 'static>),
    /// The method panicked; the payload's message, if it was a string.
    #[error("panicked: {0}")]
    Panicked(String),
}

impl NodeError {
    /// A failure described by `message`.
    pub fn msg(message: impl Into<String>) -> NodeError {
        NodeError::Message(message.into())
    }

    /// A failure caused by `error`.
    pub fn other(error: impl std::error::Error + Send + Sync + 'static) -> NodeError {
        NodeError::Other(Box::new(error))
    }

    /// Whether this records a panic rather than a returned error.
    pub fn is_panic(&self) -> bool {
        matches!(self, NodeError::Panicked(_))
    }

    /// Converts a `catch_unwind` payload.
    pub(crate) fn from_panic(payload: Box<dyn std::any::Any + Send>) -> NodeError {
        let msg = if let Some(s) = payload.downcast_ref::<&str>() {
            (*s).to_owned()
        } else if let Some(s) = payload.downcast_ref::<String>() {
            s.clone()
        } else {
            "non-string panic payload".to_owned()
        };
        NodeError::Panicked(msg)
    }
}

impl From<String> for NodeError {
    fn from(s: String) -> NodeError {
        NodeError::Message(s)
    }
}

impl From<&str> for NodeError {
    fn from(s: &str) -> NodeError {
        NodeError::Message(s.to_owned())
    }
}

impl From<std::io::Error> for NodeError {
    fn from(e: std::io::Error) -> NodeError {
        NodeError::other(e)
    }
}

/// What a node sees during one tick: time on the scheduler's clock, which
/// release this is, and the stop / emergency-stop controls.
pub struct TickContext<'a> {
    pub(crate) name: &'a str,
    pub(crate) clock: &'a Clock,
    pub(crate) origin_ns: u64,
    pub(crate) release_ns: u64,
    pub(crate) tick: u64,
    pub(crate) period_ns: Option<u64>,
    pub(crate) control: &'a Control,
}

impl TickContext<'_> {
    /// The node's name.
    pub fn name(&self) -> &str {
        self.name
    }

    /// Time since the scheduler started, on its clock (simulated in
    /// deterministic mode: use this, not `Instant::now()`, for replayable
    /// output).
    pub fn now(&self) -> Duration {
        Duration::from_nanos(self.clock.now_ns().saturating_sub(self.origin_ns))
    }

    /// When this tick was meant to start, since the scheduler started.
    /// For periodic nodes this is `k · period` exactly.
    pub fn release_time(&self) -> Duration {
        Duration::from_nanos(self.release_ns.saturating_sub(self.origin_ns))
    }

    /// How many ticks of this node ran before this one (counts since the
    /// scheduler started, across restarts).
    pub fn tick_index(&self) -> u64 {
        self.tick
    }

    /// The node's period, or `None` for an event-driven node.
    pub fn period(&self) -> Option<Duration> {
        self.period_ns.map(Duration::from_nanos)
    }

    /// Whether the scheduler runs on the simulated clock (deterministic mode).
    pub fn is_simulated(&self) -> bool {
        self.clock.is_simulated()
    }

    /// Asks the scheduler to stop cleanly after this tick.
    pub fn request_stop(&self) {
        self.control.request_stop();
    }

    /// Triggers an emergency stop: all nodes halt, the emergency-stop sink is
    /// told, every node enters its safe state and shuts down.
    pub fn emergency_stop(&self, reason: &str) {
        self.control
            .emergency_stop(crate::EmergencyStopReason::Requested {
                by: self.name.to_owned(),
                reason: reason.to_owned(),
            });
    }
}

type Hook = Box<dyn FnMut() -> Result<(), NodeError> + Send>;

/// A node made of closures; see [`node_fn`].
pub struct FnNode<F> {
    name: String,
    tick: F,
    init: Option<Hook>,
    shutdown: Option<Hook>,
    safe_state: Option<Box<dyn FnMut() + Send>>,
}

/// A node named `name` whose tick is `tick`; add the other hooks with the
/// builder methods.
///
/// ```
/// use horus_sched::{node_fn, NodeError};
/// let mut count = 0_u64;
/// let node = node_fn("counter", move |_ctx| {
///     count += 1;
///     Ok::<(), NodeError>(())
/// })
/// .on_shutdown(|| {
///     println!("bye");
///     Ok(())
/// });
/// # let _ = node;
/// ```
pub fn node_fn<F>(name: impl Into<String>, tick: F) -> FnNode<F>
where
    F: FnMut(&TickContext<'_>) -> Result<(), NodeError> + Send,
{
    FnNode {
        name: name.into(),
        tick,
        init: None,
        shutdown: None,
        safe_state: None,
    }
}

impl<F> FnNode<F> {
    /// Runs `f` as the node's `init`.
    pub fn on_init(mut self, f: impl FnMut() -> Result<(), NodeError> + Send + 'static) -> Self {
        self.init = Some(Box::new(f));
        self
    }

    /// Runs `f` as the node's `shutdown`.
    pub fn on_shutdown(
        mut self,
        f: impl FnMut() -> Result<(), NodeError> + Send + 'static,
    ) -> Self {
        self.shutdown = Some(Box::new(f));
        self
    }

    /// Runs `f` as the node's `enter_safe_state`.
    pub fn on_safe_state(mut self, f: impl FnMut() + Send + 'static) -> Self {
        self.safe_state = Some(Box::new(f));
        self
    }
}

impl<F> Node for FnNode<F>
where
    F: FnMut(&TickContext<'_>) -> Result<(), NodeError> + Send,
{
    fn name(&self) -> &str {
        &self.name
    }

    fn init(&mut self) -> Result<(), NodeError> {
        self.init.as_mut().map_or(Ok(()), |f| f())
    }

    fn tick(&mut self, ctx: &TickContext<'_>) -> Result<(), NodeError> {
        (self.tick)(ctx)
    }

    fn shutdown(&mut self) -> Result<(), NodeError> {
        self.shutdown.as_mut().map_or(Ok(()), |f| f())
    }

    fn enter_safe_state(&mut self) {
        if let Some(f) = self.safe_state.as_mut() {
            f();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Motor;
    impl Node for Motor {
        fn tick(&mut self, _: &TickContext<'_>) -> Result<(), NodeError> {
            Ok(())
        }
    }

    #[test]
    fn default_name_is_the_type_name() {
        assert_eq!(Motor.name(), "Motor");
    }

    #[test]
    fn panic_payloads_become_messages() {
        let e = NodeError::from_panic(Box::new("boom"));
        assert!(e.is_panic());
        assert_eq!(e.to_string(), "panicked: boom");
        let e = NodeError::from_panic(Box::new(String::from("bang")));
        assert_eq!(e.to_string(), "panicked: bang");
    }
}
