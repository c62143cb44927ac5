//! Actions whose goals, feedback and results are ROS 2 types (a `.action` file's
//! generated `Foo_Goal`, `Foo_Result`, `Foo_Feedback`), of any length, on ROS 2's
//! services and topics.
//!
//! An action `name` is, as in ROS 2:
//!
//! | endpoint | kind | type |
//! |---|---|---|
//! | `name/_action/send_goal` | service | `pkg/action/Foo_SendGoal` (goal id + goal → accepted + stamp) |
//! | `name/_action/cancel_goal` | service | `action_msgs/srv/CancelGoal` |
//! | `name/_action/get_result` | service | `pkg/action/Foo_GetResult` (goal id → status + result) |
//! | `name/_action/feedback` | topic | `pkg/action/Foo_FeedbackMessage` (goal id + feedback) |
//! | `name/_action/status` | topic | `action_msgs/msg/GoalStatusArray` (every goal kept, on every change) |
//!
//! Each carries the ROS 2 wire bytes in horus's ROS-typed records (`Ros<M>` frames, the
//! CDR body in the record's tail), so goals, feedback and results have no fixed size.
//! Goal ids are 16-byte UUIDs (a horus [`GoalId`](crate::GoalId), big-endian); status
//! codes are ROS 2's (the same numbers as [`GoalStatus::code`](crate::GoalStatus::code)).
//!
//! - [`RosActionServer<A>`] / [`RosActionClient<A>`] for a generated action `A`
//!   (`horus_cdr::RosAction`, e.g. `tf2_msgs::action::LookupTransform`).
//! - [`RawRosActionServer`] / [`RawRosActionClient`]: the same on wire bytes, types named
//!   at run time ([`RosActionTypes`]), for bindings (Python).
//!
//! Errors: a goal, feedback or result that cannot be encoded is an error and nothing is
//! sent; bytes from a peer that do not decode are counted (`malformed()`) and answered or
//! returned as a typed error, never a panic. A result request for a goal the server does
//! not know is answered with `STATUS_UNKNOWN` ([`ActionError::UnknownGoal`](crate::ActionError::UnknownGoal)).
//!
//! The fixed-layout [`ActionServer`](crate::ActionServer)/[`ActionClient`](crate::ActionClient)
//! are unchanged (their own endpoints `name/send_goal`, … with 512-byte payloads).

mod client;
mod error;
mod frames;
mod owned;
mod server;
mod typed;
mod types;

pub use client::{RawRosActionClient, RawRosGoalHandle, TopicMalformed};
pub use error::{RosActionError, RosGoalError, RosOpenError};
pub use server::{
    MalformedCounts, RawRosActionServer, RawRosNewGoal, MAX_STATUS_LIST, TOPIC_DEPTH,
    TOPIC_MAX_BODY,
};
pub use typed::{RosActionClient, RosActionServer, RosGoalHandle, RosNewGoal};
pub use types::RosActionTypes;
