//! The bridge in the ROS 2 graph as a node of its own: rclpy lists it by name
//! (`get_node_names_and_namespaces`) with the bridged topics' endpoints under it
//! (`get_publisher_names_and_types_by_node`, `get_publishers_info_by_topic`), as ROS 2
//! learns it from the bridge's `ros_discovery_info` announcement. The bridge and the rclpy
//! nodes are processes of their own, in a network namespace with only `lo`; nothing is
//! left in /dev/shm.
//!
//! Skipped (with the reason printed) when the ROS 2 venv is absent (`make setup-ros2`) or
//! network namespaces cannot be made (not root).

mod common;

use common::World;
use horus::inspect::{open_or_create_ros_topic, ros_qos};
use horus_msgs::Ros2Type;
use horus_ros2::Direction;
use horus_ros_msgs::horus_cdr::RosMessage;
use horus_ros_msgs::std_msgs::msg::String as RosString;

bridge_process_test!();

fn string_type() -> Ros2Type {
    common::ros2_type::<RosString>()
}

macro_rules! skip_unless_ready {
    () => {
        if let Some(why) = common::skip_reason() {
            eprintln!("SKIPPED: {why}");
            return;
        }
    };
}

/// What broke: ROS 2 tools showed every endpoint of the bridge as belonging to
/// `_CREATED_BY_BARE_DDS_APP_` and listed no bridge node (RustDDS publishes no
/// `ros_discovery_info`). Now the bridge is node `/horus_bridge`, owning the writer of a
/// topic going to ROS 2 and the reader of one coming from ROS 2.
#[test]
fn rclpy_lists_the_bridge_as_a_node_owning_its_bridged_endpoints() {
    skip_unless_ready!();
    let w = World::new("graph");
    let qos = ros_qos(4096);
    let out_view =
        open_or_create_ros_topic(&w.namespace, "demo/graph_out", &string_type(), &qos).unwrap();
    let in_view =
        open_or_create_ros_topic(&w.namespace, "demo/graph_in", &string_type(), &qos).unwrap();
    let horus_pub = out_view.ros_publisher().unwrap();
    let horus_sub = in_view.ros_subscriber(true).unwrap();
    let bridge = w.bridge();
    let rclpy_sub = w.rclpy("sub", &["/demo/graph_out:std_msgs/msg/String"]);
    let rclpy_pub = w.rclpy("hold", &["/demo/graph_in:std_msgs/msg/String"]);
    common::wait_status(&w.namespace, "both routes open", |s| {
        [Direction::ToRos, Direction::FromRos]
            .iter()
            .all(|d| s.topics.iter().any(|t| t.direction == *d && t.active))
    });
    let graph = w.rclpy("graph", &["/demo/graph_out", "/demo/graph_in"]);
    // Each line is printed once when it first holds; all must come. (An endpoint ROS 2
    // saw before the announcement shows as `_CREATED_BY_BARE_DDS_APP_` meanwhile, as any
    // ROS 2 node's does for a moment, so that name's absence is not asserted.)
    for line in [
        "node /horus_bridge",
        "pub /horus_bridge /demo/graph_out std_msgs/msg/String",
        "sub /horus_bridge /demo/graph_in std_msgs/msg/String",
        "pubinfo /demo/graph_out /horus_bridge",
        "subinfo /demo/graph_in /horus_bridge",
    ] {
        graph.expect_line(line);
    }
    graph.stop();
    rclpy_pub.stop();
    rclpy_sub.stop();
    bridge.stop();
    drop((horus_pub, horus_sub));
    for v in [&out_view, &in_view] {
        v.unlink_if_unused();
    }
    drop((out_view, in_view));
    assert_eq!(w.leftovers(), Vec::<String>::new(), "left in /dev/shm");
}

/// What broke: the bridge's participant announced no enclave (RustDDS put no USER_DATA in
/// its SPDP data), where every ROS 2 participant announces `enclave=/;` (rmw_dds_common),
/// so ROS 2 listed the bridge's node in no enclave. Now it announces its configured one,
/// `/` by default, and rclpy's `get_node_names_and_namespaces_with_enclaves` lists
/// `/horus_bridge` in `/`, as its own node.
#[test]
fn rclpy_lists_the_bridges_node_in_the_root_enclave_as_its_own_nodes() {
    skip_unless_ready!();
    let w = World::new("enclave");
    let bridge = w.bridge();
    let graph = w.rclpy("graph", &[]);
    // In whichever order rclpy finds the two nodes; each line comes once.
    let mut want = vec![
        "enclave /horus_bridge /".to_owned(),
        "enclave /horus_ros2_test_graph /".to_owned(),
    ];
    while !want.is_empty() {
        let line = graph.next_line("enclave ");
        want.retain(|w| *w != line);
    }
    graph.stop();
    bridge.stop();
    assert_eq!(w.leftovers(), Vec::<String>::new(), "left in /dev/shm");
}

/// The enclave is configurable ([`horus_ros2::ENCLAVE_ENV`]), and what the bridge
/// announces is what rclpy lists.
#[test]
fn rclpy_lists_the_bridges_node_in_the_configured_enclave() {
    skip_unless_ready!();
    let w = World::new("enclave2");
    let bridge = w.bridge_with_env(&[(horus_ros2::ENCLAVE_ENV, "/robot1/bridge")]);
    let graph = w.rclpy("graph", &[]);
    graph.expect_line("enclave /horus_bridge /robot1/bridge");
    graph.stop();
    bridge.stop();
    assert_eq!(w.leftovers(), Vec::<String>::new(), "left in /dev/shm");
}

/// What broke: the bridge's DDS endpoints announced no type hash (RustDDS put no USER_DATA
/// in its SEDP data), so rclpy's `get_publishers_info_by_topic` /
/// `get_subscriptions_info_by_topic` (and `ros2 topic info -v`) gave their type hash as
/// INVALID. Now each announces `typehash=RIHS01_…;` as rmw does, and ROS 2 reports the
/// type's RIHS01 hash: the one rclpy's own endpoints of the type have.
#[test]
fn rclpy_reports_the_type_hash_of_the_bridges_endpoints_not_invalid() {
    skip_unless_ready!();
    let w = World::new("typehash");
    let qos = ros_qos(4096);
    let out_view =
        open_or_create_ros_topic(&w.namespace, "demo/hash_out", &string_type(), &qos).unwrap();
    let in_view =
        open_or_create_ros_topic(&w.namespace, "demo/hash_in", &string_type(), &qos).unwrap();
    let horus_pub = out_view.ros_publisher().unwrap();
    let horus_sub = in_view.ros_subscriber(true).unwrap();
    let bridge = w.bridge();
    let rclpy_sub = w.rclpy("sub", &["/demo/hash_out:std_msgs/msg/String"]);
    let rclpy_pub = w.rclpy("hold", &["/demo/hash_in:std_msgs/msg/String"]);
    common::wait_status(&w.namespace, "both routes open", |s| {
        [Direction::ToRos, Direction::FromRos]
            .iter()
            .all(|d| s.topics.iter().any(|t| t.direction == *d && t.active))
    });
    let graph = w.rclpy("graph", &["/demo/hash_out", "/demo/hash_in"]);
    // `RIHS01_` and lowercase hex, as rclpy's `TypeHash` prints too.
    let hash = RosString::TYPE_HASH;
    let want = [
        format!("pubhash /demo/hash_out /horus_bridge {hash}"),
        format!("subhash /demo/hash_in /horus_bridge {hash}"),
        // rclpy's own endpoints of the type, for comparison.
        format!("subhash /demo/hash_out /horus_ros2_test_sub {hash}"),
        format!("pubhash /demo/hash_in /horus_ros2_test_hold {hash}"),
    ];
    // The lines come in any order, each once.
    let mut seen = Vec::new();
    while !want.iter().all(|l| seen.contains(l)) {
        seen.push(graph.next_line(""));
    }
    seen.extend(graph.drain());
    let invalid: Vec<&String> = seen
        .iter()
        .filter(|l| l.contains("hash /demo/") && l.ends_with(" INVALID"))
        .collect();
    assert!(
        invalid.is_empty(),
        "endpoints without a type hash: {invalid:?}"
    );
    graph.stop();
    rclpy_pub.stop();
    rclpy_sub.stop();
    bridge.stop();
    drop((horus_pub, horus_sub));
    for v in [&out_view, &in_view] {
        v.unlink_if_unused();
    }
    drop((out_view, in_view));
    assert_eq!(w.leftovers(), Vec::<String>::new(), "left in /dev/shm");
}

/// `HORUS_ROS2_NODE_NAME` names the node, namespace included.
#[test]
fn the_bridges_node_name_and_namespace_are_configurable() {
    skip_unless_ready!();
    let w = World::new("nodename");
    let bridge = w.bridge_with_env(&[(horus_ros2::NODE_NAME_ENV, "/robot1/arm_bridge")]);
    let graph = w.rclpy("graph", &[]);
    graph.expect_line("node /robot1/arm_bridge");
    graph.stop();
    bridge.stop();
    assert_eq!(w.leftovers(), Vec::<String>::new(), "left in /dev/shm");
}
