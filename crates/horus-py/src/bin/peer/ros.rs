//! ROS 2-typed topics, the Rust side: the run-time endpoints of `horus::inspect` (the
//! chunk layout `Topic<Ros<M>>` uses), decoding with horus_idl's dynamic CDR codec — an
//! implementation independent of the Python package's —, and typed `Topic<Ros<LaserScan>>`
//! endpoints with the generated type of horus-ros-msgs.

use std::time::Duration;

use anyhow::{anyhow, bail, Context, Result};
use horus::inspect;
use horus::msgs::Ros2Type;
use horus::ros::Ros;
use horus::Topic;
use horus_idl::{InterfaceSet, Resolved, TypeName};
use horus_ros_msgs::sensor_msgs::msg::LaserScan;

use super::{recv, say, wait_for_subscribers};

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn unhex(text: &str) -> Result<Vec<u8>> {
    if !text.len().is_multiple_of(2) {
        bail!("odd hex length");
    }
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&text[i..i + 2], 16).context("bad hex"))
        .collect()
}

fn open(type_name: &str, topic: &str) -> Result<(Resolved, TypeName, inspect::TopicView)> {
    let resolved = InterfaceSet::standard_embedded()?.resolve()?;
    let hash = resolved
        .type_hash(type_name)
        .ok_or_else(|| anyhow!("unknown type {type_name}"))?;
    let definition = resolved
        .ros2msg_definition(type_name)
        .ok_or_else(|| anyhow!("no definition of {type_name}"))?;
    let ty = Ros2Type::new(type_name, &hash.to_string(), &definition);
    let view = inspect::open_or_create_ros_topic(
        &horus_shm::name::namespace(),
        topic,
        &ty,
        &inspect::ros_qos(1 << 20),
    )?;
    let t = TypeName::parse(type_name).ok_or_else(|| anyhow!("bad type name {type_name}"))?;
    Ok((resolved, t, view))
}

/// Receives `count` messages; prints each decoded and re-encoded by horus_idl (hex).
pub(crate) fn sub(type_name: &str, topic: &str, count: u64) -> Result<()> {
    let (resolved, t, view) = open(type_name, topic)?;
    let mut r = view.ros_subscriber(true)?;
    say("ready");
    for _ in 0..count {
        let s = r
            .recv_timeout(Duration::from_secs(10))
            .ok_or_else(|| anyhow!("no message within 10 s"))?;
        let v = horus_idl::cdr::decode(&resolved, &t, s.cdr())?;
        let again = horus_idl::cdr::encode(&resolved, &t, &v)?;
        say(&format!(
            "{{\"cdr\": \"{}\", \"zero_copy\": {}, \"body_aligned\": {}}}",
            hex(&again),
            s.is_zero_copy(),
            (s.body().as_ptr() as usize).is_multiple_of(8)
        ));
    }
    let (received, overrun, malformed) = r.counts();
    say(&format!(
        "{{\"received\": {received}, \"overrun\": {overrun}, \"malformed\": {malformed}}}"
    ));
    Ok(())
}

/// Publishes the message `cdr_hex` (header and body) `count` times; `checked`: refuses
/// bytes horus_idl does not decode (else they go out as given: a hostile publisher).
pub(crate) fn publish(
    type_name: &str,
    topic: &str,
    cdr_hex: &str,
    count: u64,
    checked: bool,
) -> Result<()> {
    let (resolved, t, view) = open(type_name, topic)?;
    let cdr = unhex(cdr_hex)?;
    if checked {
        horus_idl::cdr::decode(&resolved, &t, &cdr)?;
    }
    let mut p = view.ros_publisher()?;
    say("ready");
    for _ in 0..count {
        let n = p.send_cdr(&cdr)?;
        say(&format!("{{\"subscribers\": {n}}}"));
    }
    Ok(())
}

/// The scan the Python tests build as `scan(i)` (python/tests/test_ros_topics.py).
fn scan(i: u32) -> LaserScan {
    let mut s = LaserScan {
        angle_min: -1.5,
        angle_max: 1.5,
        range_max: 30.0,
        ranges: (0..360).map(|k| (k + i) as f32).collect(),
        intensities: vec![i as f32; 360],
        ..LaserScan::default()
    };
    s.header.frame_id = format!("laser{i}");
    s.header.stamp.sec = i as i32;
    s
}

/// A typed Rust subscriber (`Topic<Ros<LaserScan>>`, generated type): prints each
/// message's wire bytes, re-encoded from its owned decode (hex), and fields read through
/// its zero-copy view.
pub(crate) fn typed_sub(topic: &str, count: u64) -> Result<()> {
    let t = Topic::<Ros<LaserScan>>::open(topic)?;
    let mut s = t.subscriber()?;
    say("ready");
    for _ in 0..count {
        let sample = recv(&mut s)?;
        let v = sample.view()?;
        let owned = sample.decode()?;
        say(&format!(
            "{{\"cdr\": \"{}\", \"frame_id\": {:?}, \"sec\": {}, \"ranges\": {}, \"last_range\": {:?}, \"zero_copy\": {}, \"in_chunk\": {}}}",
            hex(&horus::cdr::encode_message(&owned)?),
            v.header().frame_id(),
            v.header().stamp().sec(),
            v.ranges().len(),
            v.ranges().last().copied().unwrap_or_default(),
            sample.is_zero_copy(),
            sample.cdr().as_ptr_range().contains(&v.ranges().as_ptr().cast()),
        ));
    }
    let st = s.stats();
    say(&format!(
        "{{\"received\": {}, \"overrun\": {}, \"malformed\": {}}}",
        st.received, st.overrun, st.malformed
    ));
    Ok(())
}

/// A typed Rust publisher (`Topic<Ros<LaserScan>>`): publishes `scan(0..count)`.
pub(crate) fn typed_pub(topic: &str, count: u64) -> Result<()> {
    let t = Topic::<Ros<LaserScan>>::open(topic)?;
    let mut p = t.publisher()?;
    say("ready");
    wait_for_subscribers(&p)?;
    for i in 0..count {
        p.publish(&scan(i as u32))?;
    }
    say("{\"sent\": true}");
    Ok(())
}
