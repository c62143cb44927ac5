//! The ROS 2 identity of a message type that travels as ROS 2's CDR bytes (horus's
//! `Ros<M>` frame): its ROS type name, RIHS01 hash and `ros2msg` definition, which a topic's
//! description carries so that tools decode it without having been compiled with it.

use serde::{Deserialize, Serialize};

use crate::describe::{DescriptionError, MessageDescription, TypeDescription};

/// Prefix of a RIHS01 type hash.
const RIHS01_PREFIX: &[u8; 7] = b"RIHS01_";

/// The layout hash horus gives a ROS 2 type: the first 8 bytes of its RIHS01 SHA-256 (the
/// first 16 hex digits after `RIHS01_`, read as a big-endian `u64`). `None` unless `hash` is
/// `RIHS01_` followed by exactly 64 lowercase hex digits. Usable in `const` context.
///
/// ```
/// let h = "RIHS01_0123456789abcdef0000000000000000000000000000000000000000000000ff";
/// assert_eq!(horus_msgs::rihs01_layout_hash(h), Some(0x0123_4567_89ab_cdef));
/// assert_eq!(horus_msgs::rihs01_layout_hash("RIHS01_12"), None);
/// ```
pub const fn rihs01_layout_hash(hash: &str) -> Option<u64> {
    let b = hash.as_bytes();
    if b.len() != RIHS01_PREFIX.len() + 64 {
        return None;
    }
    let mut i = 0;
    while i < RIHS01_PREFIX.len() {
        if b[i] != RIHS01_PREFIX[i] {
            return None;
        }
        i += 1;
    }
    let mut v = 0u64;
    while i < b.len() {
        let d = match b[i] {
            c @ b'0'..=b'9' => c - b'0',
            c @ b'a'..=b'f' => c - b'a' + 10,
            _ => return None,
        };
        if i < RIHS01_PREFIX.len() + 16 {
            v = (v << 4) | d as u64;
        }
        i += 1;
    }
    Some(v)
}

/// A ROS 2 type's identity as compiled into a program (`RosMessage`'s constants). Horus's
/// `Ros<M>` frame type states it as [`Message::ROS2`](crate::Message::ROS2).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ros2Info {
    /// `pkg/msg/Type` (services: `pkg/srv/Foo_Request`, …).
    pub type_name: &'static str,
    /// `RIHS01_` and 64 hex digits.
    pub type_hash: &'static str,
    /// The `ros2msg` definition text.
    pub definition: &'static str,
}

impl Ros2Info {
    /// The owned form, as a description carries it.
    pub fn to_owned_type(&self) -> Ros2Type {
        Ros2Type::new(self.type_name, self.type_hash, self.definition)
    }
}

/// The `ros2` section of a [`MessageDescription`]: what a tool needs to decode a topic that
/// carries ROS 2 CDR bytes. Read from shared memory or a file it is untrusted: see
/// [`MessageDescription::validate`].
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Ros2Type {
    /// `pkg/msg/Type` (services: `pkg/srv/Foo_Request`, actions: `pkg/action/Foo_Goal`, …).
    pub type_name: String,
    /// `RIHS01_` and 64 lowercase hex digits, as ROS 2 computes it.
    pub type_hash: String,
    /// How a message's bytes are encoded: always `"cdr"` (encapsulation header `00 01 00 00`,
    /// then the little-endian plain CDR body).
    pub encoding: String,
    /// How [`definition`](Self::definition) is written: always `"ros2msg"` (MCAP's name).
    pub schema_encoding: String,
    /// The root type's `.msg` text, then for each type it uses a line of 80 `=`, a line
    /// `MSG: pkg/msg/Type` and that type's `.msg` text.
    pub definition: String,
}

impl Ros2Type {
    /// [`encoding`](Self::encoding) of every ROS 2 type horus carries.
    pub const ENCODING: &'static str = "cdr";
    /// [`schema_encoding`](Self::schema_encoding) of every ROS 2 type horus carries.
    pub const SCHEMA_ENCODING: &'static str = "ros2msg";
    /// Longest definition a description may carry (64 KiB). A segment's whole description
    /// JSON must fit in 64 KiB, so a definition near this bound cannot create a topic.
    pub const MAX_DEFINITION: usize = 64 * 1024;
    /// Longest type name, bytes.
    pub const MAX_TYPE_NAME: usize = 256;

    /// The section for a type (encodings set to `cdr` / `ros2msg`).
    pub fn new(type_name: &str, type_hash: &str, definition: &str) -> Ros2Type {
        Ros2Type {
            type_name: type_name.to_owned(),
            type_hash: type_hash.to_owned(),
            encoding: Self::ENCODING.to_owned(),
            schema_encoding: Self::SCHEMA_ENCODING.to_owned(),
            definition: definition.to_owned(),
        }
    }

    /// The layout hash of the type's horus schema ([`rihs01_layout_hash`]).
    pub fn layout_hash(&self) -> Option<u64> {
        rihs01_layout_hash(&self.type_hash)
    }

    /// Checks the section alone: a type name of `[A-Za-z0-9_/]` (at most
    /// [`Self::MAX_TYPE_NAME`] bytes), a well-formed RIHS01 hash, the fixed encodings and a
    /// definition of at most [`Self::MAX_DEFINITION`] bytes.
    pub fn validate(&self) -> Result<(), DescriptionError> {
        let bad = |why: String| Err(DescriptionError::Ros2(why));
        let name = &self.type_name;
        if name.is_empty() || name.len() > Self::MAX_TYPE_NAME {
            return bad(format!(
                "type name of {} bytes (1 to {})",
                name.len(),
                Self::MAX_TYPE_NAME
            ));
        }
        if !name
            .bytes()
            .all(|c| c.is_ascii_alphanumeric() || c == b'_' || c == b'/')
        {
            return bad(format!(
                "type name {name:?} has characters outside [A-Za-z0-9_/]"
            ));
        }
        if self.layout_hash().is_none() {
            return bad(format!(
                "type hash {:?} is not RIHS01_ and 64 lowercase hex digits",
                self.type_hash.chars().take(80).collect::<String>()
            ));
        }
        if self.encoding != Self::ENCODING {
            return bad(format!("encoding {:?}, not \"cdr\"", self.encoding));
        }
        if self.schema_encoding != Self::SCHEMA_ENCODING {
            return bad(format!(
                "schema encoding {:?}, not \"ros2msg\"",
                self.schema_encoding
            ));
        }
        if self.definition.len() > Self::MAX_DEFINITION {
            return bad(format!(
                "definition of {} bytes (at most {})",
                self.definition.len(),
                Self::MAX_DEFINITION
            ));
        }
        Ok(())
    }

    /// The horus frame type that carries this ROS type (`Ros<M>`'s description's only type).
    pub fn frame_type(&self) -> Option<TypeDescription> {
        Some(TypeDescription {
            name: self.type_name.clone(),
            version: 1,
            size: 8,
            align: 8,
            has_tail: true,
            layout_hash: self.layout_hash()?,
            fields: Vec::new(),
        })
    }
}

impl MessageDescription {
    /// The description of a topic carrying the ROS 2 type `ty` (what `Ros<M>`'s description
    /// is for a compiled `M`), checked with [`validate`](Self::validate).
    pub fn ros2(ty: Ros2Type) -> Result<MessageDescription, DescriptionError> {
        ty.validate()?;
        let frame = ty
            .frame_type()
            .ok_or_else(|| DescriptionError::Ros2("bad type hash".into()))?;
        let d = MessageDescription {
            types: vec![frame],
            ros2: Some(ty),
        };
        d.validate()?;
        Ok(d)
    }
}

/// [`MessageDescription::validate`] of a description with a `ros2` section: the section is
/// valid and the description holds exactly the frame type it implies.
pub(crate) fn check(d: &MessageDescription, ty: &Ros2Type) -> Result<(), DescriptionError> {
    ty.validate()?;
    let want = ty
        .frame_type()
        .ok_or_else(|| DescriptionError::Ros2("bad type hash".into()))?;
    match d.types.as_slice() {
        [] => Err(DescriptionError::Empty),
        [only] if *only == want => Ok(()),
        [only] => Err(DescriptionError::Ros2(format!(
            "type {} v{} ({} B, align {}, tail {}, layout {:#018x}, {} fields) is not the \
             8-byte frame of {} (layout {:#018x})",
            only.name,
            only.version,
            only.size,
            only.align,
            only.has_tail,
            only.layout_hash,
            only.fields.len(),
            want.name,
            want.layout_hash
        ))),
        more => Err(DescriptionError::Ros2(format!(
            "{} types; a ROS 2 type's description holds only its frame",
            more.len()
        ))),
    }
}
