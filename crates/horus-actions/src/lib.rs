//! horus actions: long-running goals with feedback, a result and cancel,
//! built from horus services and topics (no second mechanism).
//!
//! An action `name` is three services, `name/send_goal`, `name/cancel` and
//! `name/get_result`, and two topics, `name/feedback` and `name/status`.
//! Goals follow ROS 2's status model: `Accepted` → `Executing` →
//! `Succeeded` / `Aborted`, or, on a cancel request, `Canceling` →
//! `Canceled`. A server runs several goals at once; each has a 128-bit
//! [`GoalId`]; a finished goal's result is kept for a configurable time.
//!
//! Goals, feedback and results here are fixed-size horus messages of at most
//! [`PAYLOAD_MAX`] bytes. For ROS 2 action types (a `.action` file's generated
//! `Foo_Goal`/`Foo_Result`/`Foo_Feedback`, with strings and sequences of any length) use
//! [`RosActionServer`] / [`RosActionClient`] ([`ros`]): the same semantics on ROS 2's
//! services and topics (`name/_action/send_goal`, …, `action_msgs/msg/GoalStatusArray`).
//!
//! ```
//! use std::time::Duration;
//! use horus_actions::{ActionClient, ActionServer, GoalStatus};
//!
//! horus::message! {
//!     /// Drive this far.
//!     pub struct Drive: "demo/Drive", version 1 { pub metres: f64 }
//! }
//! horus::message! {
//!     /// Distance covered so far / in the end.
//!     pub struct Progress: "demo/Progress", version 1 { pub metres: f64 }
//! }
//!
//! let ns = format!("doc-actions-{}", std::process::id());
//! let mut server = ActionServer::<Drive, Progress, Progress>::new_in("drive", &ns).unwrap();
//! let mut client = ActionClient::<Drive, Progress, Progress>::open_in("drive", &ns).unwrap();
//!
//! // The client blocks in send_goal until the server accepts: run the
//! // server's tick on another thread.
//! let node = std::thread::spawn(move || {
//!     let new = loop {
//!         if let Some(g) = server.next_goal() { break g; }
//!     };
//!     let target = new.goal().metres;
//!     let id = server.accept(new);
//!     server.execute(id).unwrap();
//!     server.publish_feedback(id, &Progress { metres: target / 2.0 }).unwrap();
//!     server.succeed(id, &Progress { metres: target }).unwrap();
//!     // Keep answering result requests for a while.
//!     for _ in 0..2000 { server.poll(); std::thread::sleep(Duration::from_millis(1)); }
//! });
//!
//! let goal = client.send_goal(&Drive { metres: 3.0 }, Duration::from_secs(5)).unwrap();
//! let (status, result) = goal.result(Duration::from_secs(5)).unwrap();
//! assert_eq!(status, GoalStatus::Succeeded);
//! assert_eq!(result.metres, 3.0);
//! assert_eq!(goal.feedback().map(|f| f.metres), Some(1.5));
//! # drop(goal); drop(client); node.join().unwrap();
//! ```

mod client;
mod client_goals;
mod endpoints;
mod error;
mod goal_table;
pub mod ros;
mod server;
mod wire;

pub use client::{ActionClient, GoalHandle, FEEDBACK_KEPT};
pub use error::{ActionError, GoalError, OpenError};
pub use ros::{
    RosActionClient, RosActionError, RosActionServer, RosGoalError, RosGoalHandle, RosNewGoal,
    RosOpenError,
};
pub use server::{ActionServer, NewGoal, DEFAULT_RETENTION};
pub use wire::{
    ActionRequest, ActionResponse, FeedbackMsg, GoalId, GoalStatus, Payload, RawPayload, RawSpec,
    StatusMsg, PAYLOAD_MAX,
};
