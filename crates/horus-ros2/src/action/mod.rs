//! Actions across the bridge. A ROS 2 action `name` is three services and two topics
//! (rcl_action), and a horus ROS-typed action (`horus_actions::ros`) is built from exactly
//! those, under the same names and with the same ROS 2 types, as horus services and topics:
//!
//! | endpoint | kind | type | crosses as |
//! |---|---|---|---|
//! | `name/_action/send_goal` | service | `pkg/action/Foo_SendGoal` | a service (`service/`) |
//! | `name/_action/cancel_goal` | service | `action_msgs/srv/CancelGoal` | a service |
//! | `name/_action/get_result` | service | `pkg/action/Foo_GetResult` | a service |
//! | `name/_action/feedback` | topic | `pkg/action/Foo_FeedbackMessage` | a topic |
//! | `name/_action/status` | topic | `action_msgs/msg/GoalStatusArray` | a topic, offered transient-local ([`offered_to_ros`]) |
//!
//! So an action crosses as its five parts, each by the service and topic routes, with the
//! same CDR bytes on both sides (goal ids are the same 16 UUID bytes, status codes ROS 2's).
//! What is specific to actions is here:
//!
//! - **The status topic is offered to ROS 2 as transient-local, depth 1.** rcl_action's
//!   clients subscribe to `_action/status` with TRANSIENT_LOCAL durability (its status QoS
//!   profile), and a volatile writer does not match such a reader: the topic route would
//!   refuse it, and rclpy's `ActionClient.wait_for_server` (which counts the status topic's
//!   publishers) would never see the server. A `GoalStatusArray` lists every goal the server
//!   keeps, so the last one is the whole state: keeping it for late readers is what an
//!   rcl_action server does. (The horus topic itself stays volatile: what was published
//!   before the route opened is not replayed; the next status change reaches the reader.)
//!
//! - **`get_result` calls last as long as their goal** (`service/workers.rs`,
//!   `service/from_ros.rs`): not given up at the bridge's call timeout, and up to 16 of
//!   them in flight at once per action (horus server → ROS 2 clients); kept while the
//!   horus client's process lives (ROS 2 server → horus clients).
//!
//! From ROS 2 an action is served in horus with the types its horus client's services
//! carry (the client creates them with its types when it opens) or, with no such client
//! yet, the types horus was built with (docs/ros2-bridge.md, "Actions").

use std::borrow::Cow;
use std::collections::BTreeMap;

use horus::Durability;

use crate::local::LocalTopic;

/// The part of a name that marks an action's own services and topics.
const ACTION_INFIX: &str = "/_action/";

/// The type of every action's status topic.
pub(crate) const STATUS_TYPE: &str = "action_msgs/msg/GoalStatusArray";

/// One of the five endpoints of an action.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Endpoint {
    /// Service `_action/send_goal`.
    SendGoal,
    /// Service `_action/cancel_goal`.
    CancelGoal,
    /// Service `_action/get_result`.
    GetResult,
    /// Topic `_action/feedback`.
    Feedback,
    /// Topic `_action/status`.
    Status,
}

/// The action and endpoint a service or topic name belongs to (`nav/_action/status` →
/// (`nav`, [`Endpoint::Status`])); `None` for a name that is not an action's.
pub(crate) fn endpoint_of(name: &str) -> Option<(&str, Endpoint)> {
    let name = name.trim_start_matches('/');
    let at = name.rfind(ACTION_INFIX)?;
    let (action, what) = (&name[..at], &name[at + ACTION_INFIX.len()..]);
    if action.is_empty() {
        return None;
    }
    let e = match what {
        "send_goal" => Endpoint::SendGoal,
        "cancel_goal" => Endpoint::CancelGoal,
        "get_result" => Endpoint::GetResult,
        "feedback" => Endpoint::Feedback,
        "status" => Endpoint::Status,
        _ => return None,
    };
    Some((action, e))
}

/// Whether horus topic `name` of ROS 2 type `type_name` is an action's status topic.
fn is_status_topic(name: &str, type_name: &str) -> bool {
    type_name == STATUS_TYPE && matches!(endpoint_of(name), Some((_, Endpoint::Status)))
}

/// The horus topics as the bridge offers them to ROS 2: an action's status topic as
/// transient-local, depth 1 (see the module docs); every other topic unchanged. Borrowed
/// (no copy) when there is no volatile status topic.
pub(crate) fn offered_to_ros(
    locals: &BTreeMap<String, LocalTopic>,
) -> Cow<'_, BTreeMap<String, LocalTopic>> {
    let volatile_status = |(n, t): (&String, &LocalTopic)| {
        is_status_topic(n, &t.ty.type_name) && t.durability.latched() == 0
    };
    if !locals.iter().any(volatile_status) {
        return Cow::Borrowed(locals);
    }
    let mut out = locals.clone();
    for (n, t) in out.iter_mut() {
        if volatile_status((n, t)) {
            t.durability = Durability::TransientLocal { depth: 1 };
        }
    }
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use horus_msgs::Ros2Type;

    fn topic(type_name: &str, durability: Durability) -> LocalTopic {
        LocalTopic {
            ty: Ros2Type::new(type_name, "RIHS01_00", ""),
            qos: horus::inspect::ros_qos(1024),
            durability,
            has_publisher: true,
            has_subscriber: false,
        }
    }

    #[test]
    fn action_endpoints_are_recognised_by_name() {
        assert_eq!(
            endpoint_of("nav/_action/send_goal"),
            Some(("nav", Endpoint::SendGoal))
        );
        assert_eq!(
            endpoint_of("/robot1/nav/_action/status"),
            Some(("robot1/nav", Endpoint::Status))
        );
        assert_eq!(
            endpoint_of("a/_action/cancel_goal"),
            Some(("a", Endpoint::CancelGoal))
        );
        assert_eq!(
            endpoint_of("a/_action/get_result"),
            Some(("a", Endpoint::GetResult))
        );
        assert_eq!(
            endpoint_of("a/_action/feedback"),
            Some(("a", Endpoint::Feedback))
        );
        for not in [
            "_action/status",
            "a/_action/other",
            "a/status",
            "a/_action/",
            "",
        ] {
            assert_eq!(endpoint_of(not), None, "{not}");
        }
    }

    /// Before, an action's status topic was offered volatile and rcl_action's
    /// transient-local status reader was refused, so rclpy never saw the server.
    #[test]
    fn action_status_topic_is_offered_transient_local() {
        let mut locals = BTreeMap::new();
        locals.insert(
            "nav/_action/status".to_owned(),
            topic(STATUS_TYPE, Durability::Volatile),
        );
        locals.insert(
            "nav/_action/feedback".to_owned(),
            topic("pkg/action/Nav_FeedbackMessage", Durability::Volatile),
        );
        // Another topic of the status type, not an action's: unchanged.
        locals.insert(
            "statuses".to_owned(),
            topic(STATUS_TYPE, Durability::Volatile),
        );
        let offered = offered_to_ros(&locals);
        let d = |n: &str| offered[n].durability;
        assert_eq!(
            d("nav/_action/status"),
            Durability::TransientLocal { depth: 1 }
        );
        assert_eq!(d("nav/_action/feedback"), Durability::Volatile);
        assert_eq!(d("statuses"), Durability::Volatile);
        // A status topic of another type is not an action's.
        let mut other = BTreeMap::new();
        other.insert(
            "x/_action/status".to_owned(),
            topic("std_msgs/msg/String", Durability::Volatile),
        );
        assert!(matches!(offered_to_ros(&other), Cow::Borrowed(_)));
    }

    /// The action types horus was built with can be served from ROS 2: both types of
    /// their `send_goal` and `get_result` services and their feedback message are known.
    #[test]
    fn built_in_action_types_are_known_with_every_part() {
        let known = |t: &str| horus_ros_msgs::REGISTRY.iter().any(|r| r.type_name == t);
        let goals: Vec<&str> = horus_ros_msgs::REGISTRY
            .iter()
            .filter_map(|r| r.type_name.strip_suffix("_SendGoal_Request"))
            .filter(|t| t.contains("/action/"))
            .collect();
        assert!(
            goals.contains(&"tf2_msgs/action/LookupTransform"),
            "{goals:?}"
        );
        for a in goals {
            for part in [
                "_SendGoal_Response",
                "_GetResult_Request",
                "_GetResult_Response",
                "_FeedbackMessage",
            ] {
                assert!(known(&format!("{a}{part}")), "{a}{part}");
            }
        }
        assert!(known(STATUS_TYPE));
        assert!(known("action_msgs/srv/CancelGoal_Request"));
        assert!(known("action_msgs/srv/CancelGoal_Response"));
    }
}
