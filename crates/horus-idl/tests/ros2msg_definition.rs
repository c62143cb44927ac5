//! `Resolved::ros2msg_definition`: the complete definition in rosbag2's / MCAP's
//! `ros2msg` form.

use horus_idl::{standard_interfaces_dir, InterfaceKind, InterfaceSet, Resolved, ResolvedBase};

fn standard() -> Resolved {
    InterfaceSet::standard().unwrap().resolve().unwrap()
}

fn file_text(package: &str, kind: &str, name: &str) -> String {
    let path = standard_interfaces_dir()
        .join(package)
        .join(kind)
        .join(format!("{name}.{kind}"));
    std::fs::read_to_string(path)
        .unwrap()
        .trim_end_matches('\n')
        .to_string()
}

fn delimited(type_name: &str, text: &str) -> String {
    format!("\n{}\nMSG: {type_name}\n{text}", "=".repeat(80))
}

#[test]
fn header_is_its_file_then_time() {
    let d = standard()
        .ros2msg_definition("std_msgs/msg/Header")
        .unwrap();
    let expected = file_text("std_msgs", "msg", "Header")
        + &delimited(
            "builtin_interfaces/msg/Time",
            &file_text("builtin_interfaces", "msg", "Time"),
        );
    assert_eq!(d, expected);
}

#[test]
fn a_type_without_nested_types_is_its_file_alone() {
    let d = standard()
        .ros2msg_definition("std_msgs/msg/String")
        .unwrap();
    assert_eq!(d, file_text("std_msgs", "msg", "String"));
}

#[test]
fn dependencies_come_depth_first_in_order_of_first_use() {
    let d = standard()
        .ros2msg_definition("geometry_msgs/msg/PoseStamped")
        .unwrap();
    let order: Vec<&str> = d.lines().filter_map(|l| l.strip_prefix("MSG: ")).collect();
    assert_eq!(
        order,
        [
            "std_msgs/msg/Header",
            "builtin_interfaces/msg/Time",
            "geometry_msgs/msg/Pose",
            "geometry_msgs/msg/Point",
            "geometry_msgs/msg/Quaternion",
        ]
    );
}

#[test]
fn every_structure_lists_each_type_it_uses_exactly_once() {
    let resolved = standard();
    let mut checked = 0;
    for def in resolved.structs() {
        let name = def.name.to_string();
        let d = resolved.ros2msg_definition(&name).unwrap();
        // The types it uses, from the full type description.
        let description = resolved.type_description(&name).unwrap();
        let mut expected: Vec<String> = description
            .referenced_type_descriptions
            .iter()
            .map(|t| t.type_name.clone())
            .collect();
        expected.sort();
        let mut listed: Vec<String> = d
            .lines()
            .filter_map(|l| l.strip_prefix("MSG: "))
            .map(str::to_string)
            .collect();
        listed.sort();
        assert_eq!(listed, expected, "{name}");
        let delimiters = d.lines().filter(|l| *l == "=".repeat(80)).count();
        assert_eq!(delimiters, expected.len(), "{name}");
        checked += 1;
    }
    assert!(checked > 150, "{checked}");
}

#[test]
fn service_parts_are_their_sections_of_the_srv_file() {
    let resolved = standard();
    let req = resolved
        .ros2msg_definition("std_srvs/srv/SetBool_Request")
        .unwrap();
    assert_eq!(req, "bool data # e.g. for hardware enabling / disabling");
    let resp = resolved
        .ros2msg_definition("std_srvs/srv/SetBool_Response")
        .unwrap();
    assert_eq!(
        resp,
        "bool success   # indicate successful run of triggered service\n\
         string message # informational, e.g. for error messages"
    );
    // std_srvs/Empty: both sections empty (the implied placeholder member is not text).
    assert_eq!(
        resolved
            .ros2msg_definition("std_srvs/srv/Empty_Request")
            .unwrap(),
        ""
    );
}

#[test]
fn implied_structures_are_reconstructed_from_their_members() {
    let resolved = standard();
    let d = resolved
        .ros2msg_definition("std_srvs/srv/SetBool_Event")
        .unwrap();
    let expected = "service_msgs/ServiceEventInfo info\n\
                    std_srvs/SetBool_Request[<=1] request\n\
                    std_srvs/SetBool_Response[<=1] response"
        .to_string()
        + &delimited(
            "service_msgs/msg/ServiceEventInfo",
            &file_text("service_msgs", "msg", "ServiceEventInfo"),
        )
        + &delimited(
            "builtin_interfaces/msg/Time",
            &file_text("builtin_interfaces", "msg", "Time"),
        )
        + &delimited(
            "std_srvs/srv/SetBool_Request",
            "bool data # e.g. for hardware enabling / disabling",
        )
        + &delimited(
            "std_srvs/srv/SetBool_Response",
            "bool success   # indicate successful run of triggered service\n\
             string message # informational, e.g. for error messages",
        );
    assert_eq!(d, expected);

    let fb = resolved
        .ros2msg_definition("tf2_msgs/action/LookupTransform_FeedbackMessage")
        .unwrap();
    assert!(fb.starts_with(
        "unique_identifier_msgs/UUID goal_id\ntf2_msgs/LookupTransform_Feedback feedback\n"
    ));
    assert!(fb.contains("\nMSG: tf2_msgs/action/LookupTransform_Feedback\n"));
}

#[test]
fn action_parts_are_their_sections_of_the_action_file() {
    let resolved = standard();
    let text = std::fs::read_to_string(
        standard_interfaces_dir().join("tf2_msgs/action/LookupTransform.action"),
    )
    .unwrap();
    let sections: Vec<&str> = text.split("\n---\n").collect();
    assert_eq!(sections.len(), 3);
    let goal = resolved
        .msg_text(&horus_idl::TypeName::new(
            "tf2_msgs",
            InterfaceKind::Action,
            "LookupTransform_Goal",
        ))
        .unwrap();
    assert_eq!(goal, sections[0].trim_end_matches('\n'));
}

#[test]
fn unknown_or_malformed_names_have_no_definition() {
    let resolved = standard();
    assert_eq!(resolved.ros2msg_definition("std_msgs/msg/Nope"), None);
    assert_eq!(resolved.ros2msg_definition("std_msgs/Header"), None);
    assert_eq!(resolved.ros2msg_definition(""), None);
    // Services and actions themselves are not structures.
    assert_eq!(resolved.ros2msg_definition("std_srvs/srv/SetBool"), None);
}

#[test]
fn user_package_nesting_standard_types() {
    let mut set = InterfaceSet::standard().unwrap();
    set.add_source(
        "my_msgs/msg/Tagged.msg",
        "my_msgs",
        "Tagged",
        InterfaceKind::Message,
        b"# A tagged pose.\r\nstd_msgs/Header header\r\nTag[] tags\r\n",
    )
    .unwrap();
    set.add_source(
        "my_msgs/msg/Tag.msg",
        "my_msgs",
        "Tag",
        InterfaceKind::Message,
        b"string name\nbuiltin_interfaces/Time stamp\n\n\n",
    )
    .unwrap();
    let resolved = set.resolve().unwrap();
    let d = resolved.ros2msg_definition("my_msgs/msg/Tagged").unwrap();
    let expected = "# A tagged pose.\nstd_msgs/Header header\nTag[] tags".to_string()
        + &delimited(
            "std_msgs/msg/Header",
            &file_text("std_msgs", "msg", "Header"),
        )
        + &delimited(
            "builtin_interfaces/msg/Time",
            &file_text("builtin_interfaces", "msg", "Time"),
        )
        + &delimited(
            "my_msgs/msg/Tag",
            "string name\nbuiltin_interfaces/Time stamp",
        );
    assert_eq!(d, expected);
    // Nested types are found through the members, never by reading the text.
    let tagged = resolved
        .get_struct(&horus_idl::TypeName::msg("my_msgs", "Tagged"))
        .unwrap();
    assert!(matches!(
        tagged.members[1].member_type.base,
        ResolvedBase::Nested(_)
    ));
}
