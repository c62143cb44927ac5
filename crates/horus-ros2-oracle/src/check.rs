//! One message: rclpy's value and bytes against horus's encoding and decoding.

use anyhow::{anyhow, Context, Result};
use horus_idl::cdr::{decode_prefix, encode_with_padding};
use horus_idl::{Resolved, TypeName};
use serde_json::Value as Json;

use crate::compare::{compare_bytes, first_difference};
use crate::generated::Generated;
use crate::value_json::{from_hex, structure, to_hex};

/// A message the rclpy side wrote: `{"type", "case", "value", "cdr"}`.
pub(crate) struct Case {
    /// `pkg/msg/Name`.
    pub(crate) type_name: String,
    /// Which randomised message of that type (for messages).
    pub(crate) case: String,
    /// Its fields as JSON.
    pub(crate) value: Json,
    /// `serialize_message`'s bytes.
    pub(crate) rclpy: Vec<u8>,
}

impl Case {
    /// Reads one JSON line.
    pub(crate) fn parse(line: &str) -> Result<Self> {
        let mut j: Json = serde_json::from_str(line)?;
        let text = |j: &Json, key: &str| {
            j[key]
                .as_str()
                .map(str::to_string)
                .ok_or_else(|| anyhow!("no \"{key}\" text"))
        };
        Ok(Self {
            type_name: text(&j, "type")?,
            case: text(&j, "case")?,
            rclpy: from_hex(&text(&j, "cdr")?).context("\"cdr\"")?,
            value: j["value"].take(),
        })
    }
}

/// What checking one message found.
#[derive(Debug)]
pub(crate) struct Checked {
    /// horus's bytes (header included).
    pub(crate) horus: Vec<u8>,
    /// Bytes compared equal.
    pub(crate) compared: usize,
    /// Padding bytes not compared.
    pub(crate) padding: usize,
    /// Bytes of rclpy's buffer after the message.
    pub(crate) overrun: usize,
}

/// Checks one message; the error says what differs.
///
/// - decoding rclpy's bytes with horus gives the value rclpy was given, and the message
///   ends where horus's encoding ends;
/// - horus's encoding of that value equals rclpy's bytes everywhere but alignment padding
///   (ROS 2 leaves padding unspecified: rmw_fastrtps leaves what was in memory), and
///   horus's padding is zeros;
/// - horus's generated type decodes rclpy's message and encodes it to the same bytes, so
///   does its view, and its `Default` encodes as rclpy's default message (case `default`).
pub(crate) fn check(resolved: &Resolved, generated: &Generated, case: &Case) -> Result<Checked> {
    let name = TypeName::parse(&case.type_name)
        .ok_or_else(|| anyhow!("not a type name: {}", case.type_name))?;
    let expected =
        structure(resolved, &name, &case.value).context("reading the value rclpy was given")?;

    let (decoded, end) =
        decode_prefix(resolved, &name, &case.rclpy).context("decoding rclpy's bytes")?;
    if let Some(d) = first_difference(&decoded, &expected) {
        return Err(anyhow!("horus decodes rclpy's bytes to another value: {d}"));
    }

    let ours = encode_with_padding(resolved, &name, &expected).context("encoding")?;
    if ours.bytes.len() != end {
        return Err(anyhow!(
            "horus's encoding is {} bytes, rclpy's message {end} (its buffer {})",
            ours.bytes.len(),
            case.rclpy.len()
        ));
    }
    let c = compare_bytes(&ours.bytes, &case.rclpy, &ours.padding);
    if let Some((at, mine, theirs)) = c.first_difference {
        return Err(anyhow!(
            "byte {at} (payload offset {}) is {mine:#04x} in horus's encoding, {} in rclpy's",
            at.saturating_sub(4),
            theirs.map_or("absent".into(), |b| format!("{b:#04x}"))
        ));
    }
    if let Some(at) = c.nonzero_padding {
        return Err(anyhow!("horus's padding byte {at} is not zero"));
    }
    generated.check(
        &case.type_name,
        &case.rclpy[..end],
        &ours.bytes,
        case.case == "default",
    )?;
    Ok(Checked {
        overrun: case.rclpy.len() - end,
        horus: ours.bytes,
        compared: c.compared,
        padding: c.padding,
    })
}

/// The line handed back to the rclpy side: `{"type", "case", "end", "horus", "compared",
/// "padding"}`.
pub(crate) fn answer(case: &Case, checked: &Checked) -> String {
    serde_json::json!({
        "type": case.type_name,
        "case": case.case,
        "end": checked.horus.len(),
        "horus": to_hex(&checked.horus),
        "compared": checked.compared,
        "padding": checked.padding,
    })
    .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use horus_idl::InterfaceSet;

    /// geometry_msgs/msg/Vector3Stamped {stamp 1 s 2 ns, frame "a", (1, -0, 2.5)} as
    /// rmw_fastrtps writes it: 2 padding bytes after the frame id (here 0xaa, whatever was
    /// in memory), and 2 bytes of its buffer past the message.
    fn rclpy_vector3_stamped() -> Vec<u8> {
        let mut b = vec![
            0, 1, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0, 2, 0, 0, 0, b'a', 0, 0xaa, 0xaa,
        ];
        for x in [1.0f64, -0.0, 2.5] {
            b.extend_from_slice(&x.to_le_bytes());
        }
        b.extend_from_slice(&[0x55, 0x55]);
        b
    }

    fn case(rclpy: Vec<u8>, y: f64) -> Case {
        let line = serde_json::json!({
            "type": "geometry_msgs/msg/Vector3Stamped",
            "case": "hand-made",
            "value": {"header": {"stamp": {"sec": 1, "nanosec": 2}, "frame_id": "a"},
                      "vector": {"x": 1.0, "y": y, "z": 2.5}},
            "cdr": to_hex(&rclpy),
        });
        Case::parse(&line.to_string()).unwrap()
    }

    fn standard() -> Resolved {
        InterfaceSet::standard().unwrap().resolve().unwrap()
    }

    #[test]
    fn rclpy_padding_and_bytes_past_the_message_are_not_differences() {
        let checked = check(
            &standard(),
            &Generated::new(),
            &case(rclpy_vector3_stamped(), -0.0),
        )
        .unwrap();
        assert_eq!(checked.horus.len(), 44);
        assert_eq!(
            (checked.compared, checked.padding, checked.overrun),
            (42, 2, 2)
        );
        assert_eq!(&checked.horus[18..20], &[0, 0]);
    }

    #[test]
    fn a_changed_value_byte_is_a_difference_naming_the_field() {
        let mut bytes = rclpy_vector3_stamped();
        bytes[20] ^= 1; // lowest byte of x
        let e = check(&standard(), &Generated::new(), &case(bytes, -0.0)).unwrap_err();
        assert!(format!("{e:#}").contains(".vector.x"), "{e:#}");
    }

    #[test]
    fn negative_zero_is_not_zero() {
        let e = check(
            &standard(),
            &Generated::new(),
            &case(rclpy_vector3_stamped(), 0.0),
        )
        .unwrap_err();
        assert!(
            format!("{e:#}").contains(".vector.y: Float64(-0.0)"),
            "{e:#}"
        );
    }

    #[test]
    fn bytes_cut_short_are_a_decoding_error() {
        let mut bytes = rclpy_vector3_stamped();
        bytes.truncate(43);
        let e = check(&standard(), &Generated::new(), &case(bytes, -0.0)).unwrap_err();
        assert!(format!("{e:#}").contains("decoding rclpy's bytes"), "{e:#}");
    }
}
