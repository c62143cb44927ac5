//! What generated services and actions provide: the types that travel for them.

use crate::message::RosMessage;

/// A ROS 2 service (`pkg/srv/Foo`, or an action's `_SendGoal` / `_GetResult`), generated
/// as a marker type tying its request, response and event messages together.
pub trait RosService: 'static {
    /// The service type name, e.g. `std_srvs/srv/SetBool`.
    const SERVICE_NAME: &'static str;
    /// The RIHS01 hash of the service type (over request, response and event).
    const TYPE_HASH: &'static str;
    /// `Foo_Request`
    type Request: RosMessage;
    /// `Foo_Response`
    type Response: RosMessage;
    /// `Foo_Event` (what service introspection publishes).
    type Event: RosMessage;
}

/// A ROS 2 action (`pkg/action/Foo`), generated as a marker type tying its goal, result
/// and feedback messages and its two services together.
pub trait RosAction: 'static {
    /// The action type name, e.g. `tf2_msgs/action/LookupTransform`.
    const ACTION_NAME: &'static str;
    /// The RIHS01 hash of the action type.
    const TYPE_HASH: &'static str;
    /// `Foo_Goal`
    type Goal: RosMessage;
    /// `Foo_Result`
    type Result: RosMessage;
    /// `Foo_Feedback`
    type Feedback: RosMessage;
    /// `Foo_SendGoal` (request: goal id and goal; response: accepted and stamp).
    type SendGoal: RosService;
    /// `Foo_GetResult` (request: goal id; response: status and result).
    type GetResult: RosService;
    /// `Foo_FeedbackMessage` (goal id and feedback).
    type FeedbackMessage: RosMessage;
}
