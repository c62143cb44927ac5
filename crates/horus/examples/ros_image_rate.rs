//! Cost of a ROS 2 `sensor_msgs/msg/Image` on a horus topic, per message: `publish` (size,
//! loan, CDR written once in place) and `view` (checked, in place), against a plain copy
//! of the same bytes and against `encode_message` into a fresh `Vec` (what a serialising
//! transport does before it copies).
//!
//! `cargo run --release -p horus --example ros_image_rate [WIDTH HEIGHT COUNT]`

use std::time::Instant;

use horus::ros::Ros;
use horus::Topic;
use horus_ros_msgs::sensor_msgs::msg::Image;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<usize> = std::env::args()
        .skip(1)
        .map(|a| a.parse())
        .collect::<Result<_, _>>()?;
    let (w, h, n) = match args.as_slice() {
        [w, h, n] => (*w, *h, *n),
        _ => (640, 480, 2000),
    };
    std::env::set_var(
        "HORUS_NAMESPACE",
        format!("example-ros-image-{}", std::process::id()),
    );
    let img = Image {
        height: h as u32,
        width: w as u32,
        encoding: "rgb8".into(),
        step: (w * 3) as u32,
        data: (0..w * h * 3).map(|i| i as u8).collect(),
        ..Default::default()
    };
    let topic = Topic::<Ros<Image>>::builder("camera")
        .max_tail_bytes(w * h * 3 + 4096)
        .open()?;
    let mut p = topic.publisher()?;
    let mut s = topic.subscriber()?;

    let (mut publish, mut view) = (0f64, 0f64);
    let mut sum = 0u64;
    for _ in 0..n {
        let t = Instant::now();
        p.publish(&img)?;
        publish += t.elapsed().as_secs_f64();
        let sample = s.try_recv().expect("published");
        let t = Instant::now();
        let v = sample.view()?;
        sum += u64::from(v.data()[v.data().len() / 2]) + v.width() as u64;
        view += t.elapsed().as_secs_f64();
    }

    let mut dst = vec![0u8; img.data.len()];
    let t = Instant::now();
    for _ in 0..n {
        dst.copy_from_slice(std::hint::black_box(&img.data));
        std::hint::black_box(&mut dst);
    }
    let copy = t.elapsed().as_secs_f64();
    let t = Instant::now();
    for _ in 0..n {
        sum += std::hint::black_box(horus::cdr::encode_message(&img)?).len() as u64;
    }
    let encode = t.elapsed().as_secs_f64();

    let us = |secs: f64| secs / n as f64 * 1e6;
    println!(
        "{w}x{h} rgb8 ({} bytes), {n} messages: publish {:.1} µs, view {:.2} µs; \
         memcpy of the pixels {:.1} µs; encode_message into a new Vec {:.1} µs \
         (checksum {sum})",
        img.data.len(),
        us(publish),
        us(view),
        us(copy),
        us(encode)
    );
    Ok(())
}
