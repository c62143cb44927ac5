//! Publishes a user-defined message (a nested standard message, arrays, a 2-D array, text)
//! for recording tests in other languages (python/tests/test_mcap_recordings.py).
//!
//! `user_publisher TOPIC COUNT`, in `HORUS_NAMESPACE`: creates the topic with a history deep
//! enough to hold every message, waits until an observer (the recorder) is attached, publishes
//! COUNT messages whose fields are a function of their index `i`, prints `done` and exits:
//! `stamp_ns = 1000 + i`, `cmd = CmdVel { stamp_ns: i, linear: i / 4, angular: -0.5 }`,
//! `ticks = [i, -i]`, `gains = [[i, 0.5], [1.5, -i]]`, `label = "wheel"`.

use std::time::{Duration, Instant};

use horus::inspect::TopicView;
use horus::msgs::CmdVel;
use horus::Topic;

horus::message! {
    /// Wheel odometry of a user's robot.
    pub struct WheelOdom: "my_robot/WheelOdom", version 1 {
        /// Stamp, ns.
        pub stamp_ns: u64,
        /// The command being executed (a nested standard message).
        pub cmd: CmdVel,
        /// Left and right encoder ticks.
        pub ticks: [i32; 2],
        /// A 2 × 2 gain matrix.
        pub gains: [[f32; 2]; 2],
        /// A label, NUL-padded.
        pub label: [u8; 8],
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let (topic, count) = match args.as_slice() {
        [_, t, n] => (t.clone(), n.parse::<u32>().expect("COUNT is a number")),
        _ => {
            eprintln!("usage: user_publisher TOPIC COUNT");
            std::process::exit(2);
        }
    };
    let t = Topic::<WheelOdom>::builder(&topic)
        .depth(count.next_power_of_two().max(2))
        .open()
        .expect("open the topic");
    let view = TopicView::open(&horus::namespace(), &topic).expect("view the topic");
    let deadline = Instant::now() + Duration::from_secs(60);
    while !view.snapshot().subscribers.iter().any(|s| s.observer) {
        assert!(Instant::now() < deadline, "no recorder attached");
        std::thread::sleep(Duration::from_millis(5));
    }
    let mut p = t.publisher().expect("publisher");
    for i in 0..count {
        let f = i as f32;
        let mut label = [0u8; 8];
        label[..5].copy_from_slice(b"wheel");
        let m = WheelOdom {
            stamp_ns: 1000 + u64::from(i),
            cmd: CmdVel::new(u64::from(i), f / 4.0, -0.5),
            ticks: [i as i32, -(i as i32)],
            gains: [[f, 0.5], [1.5, -f]],
            label,
        };
        p.send(m).expect("send");
    }
    println!("done");
}
