//! The generated standard ROS 2 types (`horus_ros_msgs`) on horus topics and services:
//! `sensor_msgs/msg/Image` zero-copy (and the size limit images meet), `PointCloud2` decoded
//! by a tool from the topic's description alone, `std_srvs/srv/SetBool` called.

mod common;

use std::time::Duration;

use common::unique_ns;
use horus::inspect::TopicView;
use horus::ros::{Ros, RosSendError, RosSrv};
use horus::Topic;
use horus_idl::cdr::CdrValue;
use horus_ros_msgs::builtin_interfaces::msg::Time;
use horus_ros_msgs::sensor_msgs::msg::{Image, Imu, PointCloud2, PointField};
use horus_ros_msgs::std_msgs::msg::Header;
use horus_ros_msgs::std_srvs::srv::{SetBool, SetBool_Request, SetBool_Response};

fn header(frame: &str) -> Header {
    Header {
        stamp: Time {
            sec: 1_700_000_000,
            nanosec: 42,
        },
        frame_id: frame.into(),
    }
}

fn image(width: u32, height: u32) -> Image {
    Image {
        header: header("camera"),
        height,
        width,
        encoding: "rgb8".into(),
        is_bigendian: 0,
        step: width * 3,
        data: (0..width * height * 3).map(|i| (i % 251) as u8).collect(),
    }
}

#[test]
fn images_travel_zero_copy_and_large_ones_need_a_larger_max_tail() {
    let ns = unique_ns("ros-image");
    let topic = Topic::<Ros<Image>>::builder("camera/image")
        .namespace(&ns)
        .open()
        .unwrap();
    let mut p = topic.publisher().unwrap();
    let mut s = topic.subscriber().unwrap();
    let vga = image(640, 480);
    p.publish(&vga).unwrap();
    let sample = s.try_recv().unwrap();
    assert_eq!(sample.cdr(), horus::cdr::encode_message(&vga).unwrap());
    let v = sample.view().unwrap();
    assert_eq!((v.width(), v.height(), v.encoding()), (640, 480, "rgb8"));
    assert_eq!(v.header().frame_id(), "camera");
    assert_eq!(v.data(), vga.data.as_slice());
    assert!(sample.body().as_ptr_range().contains(&v.data().as_ptr()));
    assert_eq!(sample.decode().unwrap(), vga);
    drop(sample);

    // 1280×720 rgb8 is 2.7 MB: more than the default 1 MiB body. Typed, nothing sent.
    let hd = image(1280, 720);
    assert!(matches!(
        p.publish(&hd),
        Err(RosSendError::TooLarge { max, .. }) if max == 1 << 20
    ));
    assert!(s.try_recv().is_none());
    // A topic made for them carries them.
    let big = Topic::<Ros<Image>>::builder("camera/hd")
        .namespace(&ns)
        .max_tail_bytes(4 << 20)
        .open()
        .unwrap();
    let mut p = big.publisher().unwrap();
    let mut s = big.subscriber().unwrap();
    p.publish(&hd).unwrap();
    assert_eq!(
        s.try_recv().unwrap().view().unwrap().data(),
        hd.data.as_slice()
    );
}

#[test]
fn a_tool_decodes_a_point_cloud_from_the_topic_description_alone() {
    let ns = unique_ns("ros-cloud");
    let topic = Topic::<Ros<PointCloud2>>::builder("lidar/points")
        .namespace(&ns)
        .open()
        .unwrap();
    let mut p = topic.publisher().unwrap();
    // A tool that was not compiled with PointCloud2.
    let view = TopicView::open(&ns, "lidar/points").unwrap();
    let ty = view.ros2().unwrap();
    assert_eq!(ty.type_name, "sensor_msgs/msg/PointCloud2");
    let mut tool = view.ros_observer(false).unwrap();

    let field = |name: &str, offset| PointField {
        name: name.into(),
        offset,
        datatype: PointField::FLOAT32,
        count: 1,
    };
    let points: Vec<f32> = (0..3000).map(|i| i as f32 * 0.5).collect();
    let cloud = PointCloud2 {
        header: header("lidar"),
        height: 1,
        width: 1000,
        fields: vec![field("x", 0), field("y", 4), field("z", 8)],
        is_bigendian: false,
        point_step: 12,
        row_step: 12_000,
        data: bytemuck::cast_slice(&points).to_vec(),
        is_dense: true,
    };
    p.publish(&cloud).unwrap();

    let sample = tool.try_recv().unwrap();
    assert!(sample.is_zero_copy());
    let (resolved, root) = horus_idl::resolve_ros2msg(&ty.type_name, &ty.definition).unwrap();
    let value = horus_idl::cdr::decode(&resolved, &root, sample.cdr()).unwrap();
    assert_eq!(value.field("width"), Some(&CdrValue::UInt(1000)));
    assert_eq!(value.field("is_dense"), Some(&CdrValue::Bool(true)));
    assert_eq!(
        value.field("data"),
        Some(&CdrValue::Bytes(cloud.data.clone()))
    );
    let Some(CdrValue::Array(fields)) = value.field("fields") else {
        panic!("fields: {value:?}")
    };
    let names: Vec<_> = fields.iter().map(|f| f.field("name").cloned()).collect();
    assert_eq!(
        names,
        ["x", "y", "z"].map(|n| Some(CdrValue::String(n.into())))
    );
    // The same bytes through the generated view: the points as floats, in place.
    let typed = horus::cdr::view_message::<PointCloud2>(sample.cdr()).unwrap();
    let xyz: &[f32] = bytemuck::cast_slice(typed.data());
    assert_eq!(xyz, points.as_slice());
    assert_eq!(typed.fields().len(), 3);
}

#[test]
fn a_ros_service_is_called() {
    let ns = unique_ns("ros-setbool");
    let svc = RosSrv::<SetBool>::builder("motor/enable")
        .namespace(&ns)
        .open()
        .unwrap();
    let mut server = svc.server().unwrap();
    let mut client = svc.client().unwrap();
    let worker = std::thread::spawn(move || {
        let req = server.recv_timeout(Duration::from_secs(30)).unwrap();
        let on = req.view().unwrap().data();
        req.reply_ros(&SetBool_Response {
            success: on,
            message: format!("motor {}", if on { "on" } else { "off" }),
        })
        .unwrap();
    });
    let resp = client
        .call_ros(&SetBool_Request { data: true }, Duration::from_secs(30))
        .unwrap();
    worker.join().unwrap();
    let v = resp.view().unwrap();
    assert!(v.success());
    assert_eq!(v.message(), "motor on");
}

#[test]
fn an_image_topic_refuses_imu_and_horus_image_naming_both() {
    let ns = unique_ns("ros-img-mismatch");
    let _t = Topic::<Ros<Image>>::builder("cam")
        .namespace(&ns)
        .open()
        .unwrap();
    let names = |e: horus::TopicError| match e {
        horus::TopicError::SchemaMismatch {
            expected, found, ..
        } => (expected, found),
        e => panic!("expected a schema mismatch, got {e}"),
    };
    let (expected, found) = names(
        Topic::<Ros<Imu>>::builder("cam")
            .namespace(&ns)
            .open()
            .err()
            .unwrap(),
    );
    assert!(expected.starts_with("sensor_msgs/msg/Imu v1"), "{expected}");
    assert!(found.starts_with("sensor_msgs/msg/Image v1"), "{found}");
    // horus's own fixed-layout Image is another type.
    let (expected, found) = names(
        Topic::<horus::msgs::Image>::builder("cam")
            .namespace(&ns)
            .open()
            .err()
            .unwrap(),
    );
    assert!(expected.starts_with("horus/Image"), "{expected}");
    assert!(found.starts_with("sensor_msgs/msg/Image"), "{found}");
}
