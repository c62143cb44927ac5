//! Service names on both sides, as rmw names them on DDS: horus service `demo/add` ↔ ROS 2
//! service `/demo/add` ↔ request topic `rq/demo/addRequest` and reply topic
//! `rr/demo/addReply`; ROS 2 types `pkg/srv/Foo_Request` / `pkg/srv/Foo_Response` ↔ DDS types
//! `pkg::srv::dds_::Foo_Request_` / `pkg::srv::dds_::Foo_Response_`.

use crate::names::{ros_topic_name, NameError};

/// The DDS request topic of horus service `horus` (`demo/add` → `rq/demo/addRequest`).
pub(crate) fn request_topic(horus: &str) -> Result<String, NameError> {
    Ok(format!("rq{}Request", ros_topic_name(horus)?))
}

/// The DDS reply topic of horus service `horus` (`demo/add` → `rr/demo/addReply`).
pub(crate) fn reply_topic(horus: &str) -> Result<String, NameError> {
    Ok(format!("rr{}Reply", ros_topic_name(horus)?))
}

/// The horus service whose request topic is `dds` (`rq/demo/addRequest` → `demo/add`);
/// `None` for a topic that is not a ROS 2 request topic horus can name.
pub(crate) fn service_of_request_topic(dds: &str) -> Option<String> {
    let name = dds.strip_prefix("rq/")?.strip_suffix("Request")?;
    ros_topic_name(name).ok().map(|_| name.to_owned())
}

/// The ROS 2 service type of a request type (`std_srvs/srv/SetBool_Request` →
/// `std_srvs/srv/SetBool`); `None` when `request` is not `pkg/kind/Name_Request`.
pub(crate) fn service_type_of_request(request: &str) -> Option<&str> {
    let base = request.strip_suffix("_Request")?;
    let parts: Vec<&str> = base.split('/').collect();
    (parts.len() == 3 && parts.iter().all(|p| !p.is_empty())).then_some(base)
}

/// The response type that goes with request type `request`.
pub(crate) fn response_type_of_request(request: &str) -> Option<String> {
    service_type_of_request(request).map(|s| format!("{s}_Response"))
}

/// ROS 2 node-infrastructure services (every rclpy/rclcpp node serves these): they are
/// not bridged, so that each ROS 2 node does not add seven services to horus.
const NODE_SERVICES: [&str; 7] = [
    "describe_parameters",
    "get_parameters",
    "get_parameter_types",
    "list_parameters",
    "set_parameters",
    "set_parameters_atomically",
    "get_type_description",
];

/// Whether `service` (horus name) with request type `request` is one of a ROS 2 node's own
/// parameter / type-description services.
pub(crate) fn is_node_service(service: &str, request: &str) -> bool {
    let last = service.rsplit('/').next().unwrap_or(service);
    NODE_SERVICES.contains(&last)
        && (request.starts_with("rcl_interfaces/")
            || request.starts_with("type_description_interfaces/"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn service_names_map_both_ways() {
        assert_eq!(request_topic("demo/add").unwrap(), "rq/demo/addRequest");
        assert_eq!(reply_topic("/demo/add").unwrap(), "rr/demo/addReply");
        assert_eq!(
            service_of_request_topic("rq/demo/addRequest").as_deref(),
            Some("demo/add")
        );
        for bad in [
            "rt/demo/add",
            "rq/demo/add",
            "rq/Request",
            "rq/a//bRequest",
            "rr/xReply",
        ] {
            assert_eq!(service_of_request_topic(bad), None, "{bad}");
        }
        assert!(request_topic("demo.add").is_err());
    }

    #[test]
    fn service_types_come_from_the_request_type() {
        assert_eq!(
            service_type_of_request("std_srvs/srv/SetBool_Request"),
            Some("std_srvs/srv/SetBool")
        );
        assert_eq!(
            response_type_of_request("std_srvs/srv/SetBool_Request").as_deref(),
            Some("std_srvs/srv/SetBool_Response")
        );
        for bad in [
            "std_msgs/msg/String",
            "SetBool_Request",
            "a//B_Request",
            "a/b/c/D_Request",
        ] {
            assert_eq!(service_type_of_request(bad), None, "{bad}");
        }
    }

    #[test]
    fn node_services_are_recognised() {
        assert!(is_node_service(
            "talker/get_parameters",
            "rcl_interfaces/srv/GetParameters_Request"
        ));
        assert!(!is_node_service(
            "talker/get_parameters",
            "std_srvs/srv/Trigger_Request"
        ));
        assert!(!is_node_service(
            "demo/add",
            "rcl_interfaces/srv/GetParameters_Request"
        ));
    }
}
