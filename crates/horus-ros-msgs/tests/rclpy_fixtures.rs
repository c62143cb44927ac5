//! The generated codecs against rclpy: every fixture of `horus-idl/tests/fixtures/cdr`
//! (messages rclpy serialized, rmw_fastrtps_cpp). Generated decoding followed by
//! generated encoding gives exactly horus_idl's dynamic encoding of the value the
//! dynamic decoder reads (so both decoders read the same value), which equals rclpy's
//! bytes except padding; views read the same; and typed spot checks read fields directly.

mod common;

use std::collections::BTreeSet;

use horus_cdr::{decode_message, view_message, CdrBuf};
use horus_idl::cdr::{decode, decode_prefix, encode_with_padding};
use horus_idl::TypeName;
use horus_ros_msgs::sensor_msgs::msg::{JointState, LaserScan, PointCloud2};

#[test]
fn generated_codecs_agree_with_rclpy_and_the_dynamic_codec() {
    let resolved = common::standard();
    let (mut cases, mut types) = (0, BTreeSet::new());
    for f in common::fixtures() {
        let what = format!("{} case {}", f.type_name, f.case);
        let name = TypeName::parse(&f.type_name).unwrap();
        let info = common::info(&f.type_name);
        let (dynamic, end) = decode_prefix(&resolved, &name, &f.cdr).unwrap();
        let ours = (info.reencode)(&f.cdr).unwrap_or_else(|e| panic!("{what}: {e}"));
        assert_eq!(ours.len(), end, "{what}: length");
        // Generated decode = dynamic decode: re-encoded, it reads as the same value ...
        assert_eq!(decode(&resolved, &name, &ours).unwrap(), dynamic, "{what}");
        // ... and is byte for byte the dynamic encoding (both write zero padding).
        let reference = encode_with_padding(&resolved, &name, &dynamic).unwrap();
        assert_eq!(ours, reference.bytes, "{what}: bytes");
        // rclpy's bytes, except padding (unspecified in ROS 2).
        let padding: BTreeSet<usize> = reference.padding.iter().flat_map(|r| r.clone()).collect();
        for (i, (a, b)) in ours.iter().zip(&f.cdr).enumerate() {
            if !padding.contains(&i) {
                assert_eq!(a, b, "{what}: byte {i}");
            }
        }
        // The view reads the same message.
        let viewed = (info.view_reencode)(&f.cdr).unwrap_or_else(|e| panic!("{what}: {e}"));
        assert_eq!(viewed, ours, "{what}: view");
        cases += 1;
        types.insert(f.type_name.clone());
    }
    assert!(cases >= 84 && types.len() >= 14, "{cases} cases, {types:?}");
}

fn f64s(j: &serde_json::Value) -> Vec<f64> {
    j.as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_f64().unwrap())
        .collect()
}

#[test]
fn typed_fields_and_views_read_rclpys_values() {
    let mut checked = 0;
    for f in common::fixtures() {
        let buf = CdrBuf::new(&f.cdr);
        let v = &f.value;
        match f.type_name.as_str() {
            "sensor_msgs/msg/JointState" => {
                let m: JointState = decode_message(&f.cdr).unwrap();
                let view = view_message::<JointState>(buf.bytes()).unwrap();
                let names: Vec<&str> = v["name"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|s| s.as_str().unwrap())
                    .collect();
                assert_eq!(m.name, names);
                assert_eq!(view.name().iter().collect::<Vec<_>>(), names);
                assert_eq!(m.position, f64s(&v["position"]));
                assert_eq!(view.velocity(), &f64s(&v["velocity"])[..]);
                assert_eq!(
                    view.header().frame_id(),
                    v["header"]["frame_id"].as_str().unwrap()
                );
                assert_eq!(
                    view.header().stamp().sec() as i64,
                    v["header"]["stamp"]["sec"].as_i64().unwrap()
                );
            }
            "sensor_msgs/msg/LaserScan" => {
                let m: LaserScan = decode_message(&f.cdr).unwrap();
                let view = view_message::<LaserScan>(buf.bytes()).unwrap();
                let ranges: Vec<f32> = f64s(&v["ranges"]).into_iter().map(|x| x as f32).collect();
                assert_eq!(m.ranges, ranges);
                assert_eq!(view.ranges(), &ranges[..]);
                assert_eq!(view.angle_min() as f64, v["angle_min"].as_f64().unwrap());
            }
            "sensor_msgs/msg/PointCloud2" => {
                let m: PointCloud2 = decode_message(&f.cdr).unwrap();
                let view = view_message::<PointCloud2>(buf.bytes()).unwrap();
                let data: Vec<u8> = v["data"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|x| x.as_u64().unwrap() as u8)
                    .collect();
                assert_eq!(m.data, data);
                assert_eq!(view.data(), &data[..]);
                assert_eq!(view.is_dense(), v["is_dense"].as_bool().unwrap());
                let fields = v["fields"].as_array().unwrap();
                assert_eq!(view.fields().len(), fields.len());
                for (fv, fj) in view.fields().iter().zip(fields) {
                    assert_eq!(fv.name(), fj["name"].as_str().unwrap());
                    assert_eq!(fv.offset() as u64, fj["offset"].as_u64().unwrap());
                }
            }
            _ => continue,
        }
        checked += 1;
    }
    assert!(checked >= 18, "{checked}");
}
