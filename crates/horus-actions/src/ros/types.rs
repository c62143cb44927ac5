//! The ROS 2 types and names of one action's services and topics.

use horus::msgs::Ros2Type;
use horus_cdr::{RosAction, RosMessage, RosService};

/// The ROS 2 types an action's own services and topics carry (the action-specific ones;
/// `cancel_goal` and `status` carry `action_msgs` types, the same for every action).
///
/// A generated action gives them with [`RosActionTypes::of`]; bindings build them from
/// type names, RIHS01 hashes and `ros2msg` definitions known at run time.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RosActionTypes {
    /// `pkg/action/Foo_SendGoal_Request` (goal id and goal).
    pub send_goal_request: Ros2Type,
    /// `pkg/action/Foo_SendGoal_Response` (accepted and stamp).
    pub send_goal_response: Ros2Type,
    /// `pkg/action/Foo_GetResult_Request` (goal id).
    pub get_result_request: Ros2Type,
    /// `pkg/action/Foo_GetResult_Response` (status and result).
    pub get_result_response: Ros2Type,
    /// `pkg/action/Foo_FeedbackMessage` (goal id and feedback).
    pub feedback_message: Ros2Type,
}

fn ros2<M: RosMessage>() -> Ros2Type {
    Ros2Type::new(M::TYPE_NAME, M::TYPE_HASH, M::DEFINITION)
}

impl RosActionTypes {
    /// The types of the generated action `A`.
    pub fn of<A: RosAction>() -> Self {
        RosActionTypes {
            send_goal_request: ros2::<<A::SendGoal as RosService>::Request>(),
            send_goal_response: ros2::<<A::SendGoal as RosService>::Response>(),
            get_result_request: ros2::<<A::GetResult as RosService>::Request>(),
            get_result_response: ros2::<<A::GetResult as RosService>::Response>(),
            feedback_message: ros2::<A::FeedbackMessage>(),
        }
    }
}

/// `action_msgs/srv/CancelGoal`'s request type.
pub(crate) fn cancel_request() -> Ros2Type {
    ros2::<horus_ros_msgs::action_msgs::srv::CancelGoal_Request>()
}

/// `action_msgs/srv/CancelGoal`'s response type.
pub(crate) fn cancel_response() -> Ros2Type {
    ros2::<horus_ros_msgs::action_msgs::srv::CancelGoal_Response>()
}

/// `action_msgs/msg/GoalStatusArray`.
pub(crate) fn status_array() -> Ros2Type {
    ros2::<horus_ros_msgs::action_msgs::msg::GoalStatusArray>()
}

/// Service `name/_action/<what>` or topic, as ROS 2 names an action's endpoints.
pub(crate) fn endpoint(action: &str, what: &str) -> String {
    format!("{action}/_action/{what}")
}
