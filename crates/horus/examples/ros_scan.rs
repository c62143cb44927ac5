//! Publishes three `sensor_msgs/msg/LaserScan` messages on `robot/scan` — a ROS 2 type,
//! as the CDR bytes a ROS 2 node would put on the wire — once a subscriber is there.
//! docs/interfaces.md ("Rust publishes, Python receives") runs it beside
//! `python/examples/ros_scan_listener.py`.

use std::time::Duration;

use horus::prelude::*;
use horus::ros::Ros;
use horus_ros_msgs::builtin_interfaces::msg::Time;
use horus_ros_msgs::sensor_msgs::msg::LaserScan;
use horus_ros_msgs::std_msgs::msg::Header;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let topic = Topic::<Ros<LaserScan>>::open("robot/scan")?;
    let mut publisher = topic.publisher()?;
    while publisher.subscribers() == 0 {
        std::thread::sleep(Duration::from_millis(10));
    }
    for i in 0..3 {
        let beams = 360;
        let scan = LaserScan {
            header: Header {
                stamp: Time {
                    sec: 100 + i,
                    nanosec: 0,
                },
                frame_id: "laser".into(),
            },
            angle_min: -std::f32::consts::PI,
            angle_max: std::f32::consts::PI,
            angle_increment: 2.0 * std::f32::consts::PI / beams as f32,
            range_min: 0.1,
            range_max: 10.0,
            ranges: (0..beams)
                .map(|k| 1.0 + (k + i as usize) as f32 * 0.01)
                .collect(),
            ..Default::default()
        };
        publisher.publish(&scan)?;
        println!(
            "sent scan {} ({} ranges, {} bytes of CDR)",
            i,
            scan.ranges.len(),
            4 + horus::cdr::RosMessage::cdr_size(&scan)?
        );
    }
    // Stay until the subscriber has read them (a subscriber may also read after we exit).
    while publisher.subscribers() > 0 {
        std::thread::sleep(Duration::from_millis(10));
    }
    Ok(())
}
