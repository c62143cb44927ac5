//! Schema ids: uniqueness, sensitivity of the layout hash, field tables, display.

use std::collections::HashSet;

use horus_msgs::{Message, SchemaId, STANDARD_SCHEMAS};

#[test]
fn standard_names_and_hashes_are_unique() {
    let names: HashSet<_> = STANDARD_SCHEMAS.iter().map(|s| s.name()).collect();
    let hashes: HashSet<_> = STANDARD_SCHEMAS.iter().map(|s| s.layout_hash()).collect();
    assert_eq!(names.len(), STANDARD_SCHEMAS.len());
    assert_eq!(hashes.len(), STANDARD_SCHEMAS.len());
    for s in STANDARD_SCHEMAS {
        assert!(s.name().starts_with("horus/"), "{s}");
    }
}

#[test]
fn standard_schema_names_match_type_names() {
    for s in STANDARD_SCHEMAS {
        assert_eq!(horus_msgs::standard_schema(s.name()), Some(*s));
    }
}

// Variants of one 8-byte message, each differing from `Base` in exactly one respect. Size and
// alignment are the same throughout, so the schema ids differ only where the description does.
mod variants {
    horus_msgs::message! {
        /// Baseline.
        pub struct Base: "test/Variant", version 1 {
            pub a: u32,
            pub b: u32,
        }
    }

    horus_msgs::message! {
        /// Identical field list under another Rust name.
        pub struct SameAsBase: "test/Variant", version 1 {
            pub a: u32,
            pub b: u32,
        }
    }

    horus_msgs::message! {
        /// `b` renamed to `c`.
        pub struct Renamed: "test/Variant", version 1 {
            pub a: u32,
            pub c: u32,
        }
    }

    horus_msgs::message! {
        /// `b` is now `f32`: same size, same offset.
        pub struct Retyped: "test/Variant", version 1 {
            pub a: u32,
            pub b: f32,
        }
    }

    horus_msgs::message! {
        /// `a` and `b` swapped.
        pub struct Reordered: "test/Variant", version 1 {
            pub b: u32,
            pub a: u32,
        }
    }

    horus_msgs::message! {
        /// Version bumped.
        pub struct Bumped: "test/Variant", version 2 {
            pub a: u32,
            pub b: u32,
        }
    }

    horus_msgs::message! {
        /// Same fields, but followed by a tail.
        pub struct Tailed: "test/Variant", version 1, tail {
            pub a: u32,
            pub b: u32,
        }
    }

    horus_msgs::message! {
        /// Same fields, other schema name.
        pub struct OtherName: "test/Other", version 1 {
            pub a: u32,
            pub b: u32,
        }
    }
}

#[test]
fn layout_hash_is_a_function_of_the_description_only() {
    use variants::*;
    assert_eq!(Base::SCHEMA, SameAsBase::SCHEMA);
}

#[test]
fn layout_hash_changes_with_each_field_change() {
    use variants::*;
    let base = Base::SCHEMA.layout_hash();
    for (what, other) in [
        ("rename", Renamed::SCHEMA),
        ("retype", Retyped::SCHEMA),
        ("reorder", Reordered::SCHEMA),
        ("version", Bumped::SCHEMA),
        ("tail", Tailed::SCHEMA),
        ("name", OtherName::SCHEMA),
    ] {
        assert_eq!(other.size(), Base::SCHEMA.size(), "{what}");
        assert_ne!(
            other.layout_hash(),
            base,
            "{what} must change the layout hash"
        );
        assert_ne!(other, Base::SCHEMA, "{what}");
    }
}

#[test]
fn display_contains_name_version_size_and_hash() {
    let s = horus_msgs::CmdVel::SCHEMA.to_string();
    assert!(s.starts_with("horus/CmdVel v1 (16 B, layout 0x"), "{s}");
    let hash = format!("{:016x}", horus_msgs::CmdVel::SCHEMA.layout_hash());
    assert!(s.contains(&hash), "{s}");
}

/// Asserts that `T::FIELDS` lists exactly these fields, in order, with `offset_of!` offsets.
macro_rules! assert_fields {
    ($t:ty { $($f:ident),* $(,)? }) => {{
        let names: &[&str] = &[$(stringify!($f)),*];
        let offsets: &[usize] = &[$(core::mem::offset_of!($t, $f)),*];
        let fields = <$t as Message>::FIELDS;
        assert_eq!(fields.iter().map(|f| f.name).collect::<Vec<_>>(), names);
        for (field, offset) in fields.iter().zip(offsets) {
            assert_eq!(field.offset, *offset, "{}::{}", stringify!($t), field.name);
        }
    }};
}

#[test]
fn fields_offsets_match_offset_of() {
    use horus_msgs::*;
    assert_fields!(CmdVel {
        stamp_ns,
        linear,
        angular
    });
    assert_fields!(Header {
        stamp_ns,
        seq,
        _pad,
        frame_id
    });
    assert_fields!(Imu {
        stamp_ns,
        orientation,
        angular_velocity,
        linear_acceleration,
        covariance
    });
    assert_fields!(Odometry {
        stamp_ns,
        frame_id,
        child_frame_id,
        pose,
        twist,
        pose_covariance,
        twist_covariance
    });
    assert_fields!(LaserScan {
        stamp_ns,
        angle_min,
        angle_max,
        angle_increment,
        time_increment,
        scan_time,
        range_min,
        range_max,
        num_ranges,
        ranges
    });
    assert_fields!(PointCloud {
        stamp_ns,
        seq,
        num_points,
        point_step,
        flags,
        frame_id
    });
    assert_fields!(Image {
        stamp_ns,
        width,
        height,
        step,
        encoding,
        seq,
        _pad,
        frame_id
    });
    assert_eq!(Imu::FIELDS[4].ty, "[f64; 27]");
    assert_eq!(Imu::FIELDS[4].size, 27 * 8);
}

/// Every standard message's field table tiles the struct exactly: contiguous, no padding.
#[test]
fn fields_tile_every_standard_message() {
    fn tiles<T: Message>() {
        let mut end = 0;
        for FieldInfo {
            name, offset, size, ..
        } in T::FIELDS
        {
            assert_eq!(*offset, end, "{} field {name}", T::SCHEMA);
            end = offset + size;
        }
        assert_eq!(end, core::mem::size_of::<T>(), "{}", T::SCHEMA);
    }
    use horus_msgs::*;
    tiles::<Time>();
    tiles::<Header>();
    tiles::<Vector3>();
    tiles::<Quaternion>();
    tiles::<Pose2D>();
    tiles::<Pose>();
    tiles::<Twist>();
    tiles::<CmdVel>();
    tiles::<EmergencyStop>();
    tiles::<BatteryState>();
    tiles::<Imu>();
    tiles::<Odometry>();
    tiles::<LaserScan>();
    tiles::<JointState>();
    tiles::<PointCloud>();
    tiles::<Image>();
}

#[test]
fn schema_id_accessors() {
    let id = SchemaId::new("a/B", 3, 40, 8, 7);
    assert_eq!(
        (
            id.name(),
            id.version(),
            id.size(),
            id.align(),
            id.layout_hash()
        ),
        ("a/B", 3, 40, 8, 7)
    );
}

#[test]
fn schema_is_usable_in_const_context() {
    const ID: SchemaId = horus_msgs::Imu::SCHEMA;
    const _: () = assert!(ID.size() == 304);
    assert_eq!(ID.name(), "horus/Imu");
}

/// Another language can recompute the hash from `SCHEMA` and `FIELDS` alone.
#[test]
fn layout_hash_is_recomputable_from_the_field_table() {
    fn recompute<T: Message>() -> u64 {
        let mut h = horus_msgs::LayoutHasher::new()
            .str(T::SCHEMA.name())
            .u32(T::SCHEMA.version());
        for f in T::FIELDS {
            h = h.field(f.name, f.ty, f.offset, f.size);
        }
        h.u32(T::SCHEMA.size())
            .u32(T::SCHEMA.align())
            .bool(T::HAS_TAIL)
            .finish()
    }
    use horus_msgs::*;
    assert_eq!(recompute::<CmdVel>(), CmdVel::SCHEMA.layout_hash());
    assert_eq!(recompute::<Odometry>(), Odometry::SCHEMA.layout_hash());
    assert_eq!(recompute::<Image>(), Image::SCHEMA.layout_hash());
    assert_eq!(recompute::<JointState>(), JointState::SCHEMA.layout_hash());
}

/// The hash is a wire contract: processes built from different horus versions compare it.
/// If this fails, the hashing scheme changed; that must be deliberate (and bump every version).
#[test]
fn cmd_vel_layout_hash_is_pinned() {
    assert_eq!(
        horus_msgs::CmdVel::SCHEMA.layout_hash(),
        0xf078_b749_8f29_e523
    );
}
