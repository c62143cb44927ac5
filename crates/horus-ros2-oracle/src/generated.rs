//! The same messages through horus's generated Rust types (crates/horus-ros-msgs, listed in
//! its `REGISTRY`): the owned type decoded from rclpy's message and the one converted from
//! its zero-copy view must encode to the bytes `horus_idl::cdr` wrote, and a type's
//! `Default` to what rclpy's default message is.

use std::collections::HashMap;

use anyhow::{anyhow, Context, Result};
use horus_cdr::RosTypeInfo;

/// The generated types by ROS 2 name.
pub(crate) struct Generated {
    by_name: HashMap<&'static str, &'static RosTypeInfo>,
}

impl Generated {
    /// Every type in horus-ros-msgs's registry.
    pub(crate) fn new() -> Self {
        Self {
            by_name: horus_ros_msgs::REGISTRY
                .iter()
                .map(|info| (info.type_name, info))
                .collect(),
        }
    }

    /// Checks one message: `message` is rclpy's (its buffer cut where the message ends),
    /// `horus` what horus_idl encoded, equal to it but for padding (zeros).
    pub(crate) fn check(
        &self,
        type_name: &str,
        message: &[u8],
        horus: &[u8],
        is_default: bool,
    ) -> Result<()> {
        let info = self
            .by_name
            .get(type_name)
            .ok_or_else(|| anyhow!("horus-ros-msgs has no type {type_name}"))?;
        let owned = (info.reencode)(message).context("generated type: decoding rclpy's bytes")?;
        same(
            &owned,
            horus,
            "the generated type decoded from rclpy's bytes encodes",
        )?;
        let viewed =
            (info.view_reencode)(message).context("generated view: reading rclpy's bytes")?;
        same(
            &viewed,
            horus,
            "the generated type made from its view encodes",
        )?;
        if is_default {
            let default = (info.encode_default)().context("generated Default: encoding")?;
            same(&default, horus, "the generated type's Default encodes")?;
        }
        Ok(())
    }
}

fn same(got: &[u8], want: &[u8], what: &str) -> Result<()> {
    if got == want {
        return Ok(());
    }
    let at = got.iter().zip(want).take_while(|(a, b)| a == b).count();
    Err(anyhow!(
        "{what} {} bytes, horus_idl {}; first difference at byte {at}: {:?} where {:?}",
        got.len(),
        want.len(),
        got.get(at),
        want.get(at)
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// std_msgs/msg/String "hi" (rclpy's bytes).
    const HI: &[u8] = &[0, 1, 0, 0, 3, 0, 0, 0, b'h', b'i', 0];

    #[test]
    fn generated_types_encode_what_they_decode_and_report_a_difference() {
        let g = Generated::new();
        g.check("std_msgs/msg/String", HI, HI, false).unwrap();
        let mut other = HI.to_vec();
        other[9] = b'o';
        let e = g
            .check("std_msgs/msg/String", HI, &other, false)
            .unwrap_err();
        assert!(
            format!("{e:#}").contains("first difference at byte 9"),
            "{e:#}"
        );
    }

    #[test]
    fn a_default_that_is_not_the_default_message_is_a_difference() {
        let g = Generated::new();
        let e = g.check("std_msgs/msg/String", HI, HI, true).unwrap_err();
        assert!(format!("{e:#}").contains("Default encodes"), "{e:#}");
    }

    #[test]
    fn a_type_the_registry_lacks_is_a_difference() {
        let e = Generated::new()
            .check("std_msgs/msg/NoSuchType", HI, HI, false)
            .unwrap_err();
        assert!(format!("{e:#}").contains("has no type"), "{e:#}");
    }
}
