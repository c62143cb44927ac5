//! Schema identity of a message type: name, version, size, alignment and a layout hash.
//!
//! A [`SchemaId`] is what two processes compare before they agree to exchange raw bytes: if the
//! publisher's and the subscriber's ids differ in any component, the bytes of one are not the
//! message the other expects. The layout hash is computed at compile time by [`LayoutHasher`]
//! from the field list that [`message!`](crate::message!) sees, so renaming, retyping or
//! reordering a field changes the id even when the size stays the same.

use core::fmt;

/// FNV-1a 64-bit offset basis.
pub const FNV1A64_OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
/// FNV-1a 64-bit prime.
pub const FNV1A64_PRIME: u64 = 0x0000_0100_0000_01b3;

/// FNV-1a 64-bit hash of `bytes`, usable in `const` context.
///
/// ```
/// // Reference value from the FNV test suite.
/// assert_eq!(horus_msgs::fnv1a64(b"a"), 0xaf63_dc4c_8601_ec8c);
/// ```
pub const fn fnv1a64(bytes: &[u8]) -> u64 {
    fnv1a64_extend(FNV1A64_OFFSET, bytes)
}

/// Continue an FNV-1a 64-bit hash from `state` over `bytes`.
///
/// `fnv1a64_extend(fnv1a64(a), b)` equals `fnv1a64(a ++ b)`.
pub const fn fnv1a64_extend(mut state: u64, bytes: &[u8]) -> u64 {
    let mut i = 0;
    while i < bytes.len() {
        state ^= bytes[i] as u64;
        state = state.wrapping_mul(FNV1A64_PRIME);
        i += 1;
    }
    state
}

/// Separator folded in after every string so that `("ab", "c")` and `("a", "bc")` hash apart.
/// `0xFF` never occurs in UTF-8, so it cannot be confused with string content.
const STR_END: u8 = 0xFF;

/// Compile-time builder that folds a message's layout description into one 64-bit hash.
///
/// Every value is fed through FNV-1a: strings as their UTF-8 bytes followed by a `0xFF`
/// terminator, integers as 8 little-endian bytes. [`message!`](crate::message!) feeds, in order:
/// the schema name, the version, then for each field its name, its type (whitespace removed, so
/// `[f64;4]` and `[f64; 4]` agree), its offset and its size, and finally the total size, the
/// alignment and whether the message has a tail.
///
/// ```
/// use horus_msgs::LayoutHasher;
/// const H: u64 = LayoutHasher::new()
///     .str("demo/Msg")
///     .u32(1)
///     .field("x", "f32", 0, 4)
///     .finish();
/// assert_ne!(H, LayoutHasher::new().str("demo/Msg").u32(2).field("x", "f32", 0, 4).finish());
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LayoutHasher {
    state: u64,
}

impl LayoutHasher {
    /// A hasher in its initial state.
    pub const fn new() -> Self {
        Self {
            state: FNV1A64_OFFSET,
        }
    }

    /// Fold in a string and its terminator.
    pub const fn str(self, s: &str) -> Self {
        let state = fnv1a64_extend(self.state, s.as_bytes());
        Self {
            state: fnv1a64_extend(state, &[STR_END]),
        }
    }

    /// Fold in a type name with ASCII whitespace removed, then the terminator.
    ///
    /// `stringify!` is free to change how it spaces tokens; the hash must not depend on that.
    pub const fn type_name(self, ty: &str) -> Self {
        let bytes = ty.as_bytes();
        let mut state = self.state;
        let mut i = 0;
        while i < bytes.len() {
            if !bytes[i].is_ascii_whitespace() {
                state = fnv1a64_extend(state, &[bytes[i]]);
            }
            i += 1;
        }
        Self {
            state: fnv1a64_extend(state, &[STR_END]),
        }
    }

    /// Fold in a `u64` as 8 little-endian bytes.
    pub const fn u64(self, v: u64) -> Self {
        Self {
            state: fnv1a64_extend(self.state, &v.to_le_bytes()),
        }
    }

    /// Fold in a `u32` (widened to `u64`, so the encoding does not depend on the integer type).
    pub const fn u32(self, v: u32) -> Self {
        self.u64(v as u64)
    }

    /// Fold in a `usize` (widened to `u64`, so the hash is the same on 32- and 64-bit targets).
    pub const fn usize(self, v: usize) -> Self {
        self.u64(v as u64)
    }

    /// Fold in a `bool` as `0` or `1`.
    pub const fn bool(self, v: bool) -> Self {
        self.u64(v as u64)
    }

    /// Fold in one field: name, type, byte offset and byte size.
    pub const fn field(self, name: &str, ty: &str, offset: usize, size: usize) -> Self {
        self.str(name).type_name(ty).usize(offset).usize(size)
    }

    /// The hash of everything folded in so far.
    pub const fn finish(self) -> u64 {
        self.state
    }
}

impl Default for LayoutHasher {
    fn default() -> Self {
        Self::new()
    }
}

/// Stable identity of a message type: name + version + size + alignment + layout hash.
///
/// Two ids are equal only if every component is equal. Messages defined with
/// [`message!`](crate::message!) get theirs as [`Message::SCHEMA`](crate::Message::SCHEMA).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct SchemaId {
    name: &'static str,
    version: u32,
    size: u32,
    align: u32,
    layout_hash: u64,
}

impl SchemaId {
    /// Assemble an id from its parts. Normally only [`message!`](crate::message!) calls this.
    pub const fn new(
        name: &'static str,
        version: u32,
        size: u32,
        align: u32,
        layout_hash: u64,
    ) -> Self {
        Self {
            name,
            version,
            size,
            align,
            layout_hash,
        }
    }

    /// Schema name, e.g. `"horus/CmdVel"`.
    pub const fn name(&self) -> &'static str {
        self.name
    }

    /// Schema version, bumped by hand when the meaning of a field changes without its layout.
    pub const fn version(&self) -> u32 {
        self.version
    }

    /// `size_of` the message's fixed part, in bytes.
    pub const fn size(&self) -> u32 {
        self.size
    }

    /// `align_of` the message, in bytes.
    pub const fn align(&self) -> u32 {
        self.align
    }

    /// Compile-time hash of the field layout (see [`LayoutHasher`]).
    pub const fn layout_hash(&self) -> u64 {
        self.layout_hash
    }
}

impl fmt::Display for SchemaId {
    /// `horus/CmdVel v1 (16 B, layout 0x1a2b3c4d5e6f7788)`
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} v{} ({} B, layout {:#018x})",
            self.name, self.version, self.size, self.layout_hash
        )
    }
}

/// Description of one field of a message, as listed in [`Message::FIELDS`](crate::Message::FIELDS).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FieldInfo {
    /// Field name as written in the message definition.
    pub name: &'static str,
    /// Field type as written in the message definition (`stringify!`'d).
    pub ty: &'static str,
    /// Byte offset of the field from the start of the message.
    pub offset: usize,
    /// Size of the field in bytes.
    pub size: usize,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fnv1a64_matches_reference_vectors() {
        assert_eq!(fnv1a64(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv1a64(b"a"), 0xaf63_dc4c_8601_ec8c);
        assert_eq!(fnv1a64(b"foobar"), 0x8594_4171_f739_67e8);
    }

    #[test]
    fn extend_is_concatenation() {
        assert_eq!(fnv1a64_extend(fnv1a64(b"foo"), b"bar"), fnv1a64(b"foobar"));
    }

    #[test]
    fn string_boundaries_matter() {
        let a = LayoutHasher::new().str("ab").str("c").finish();
        let b = LayoutHasher::new().str("a").str("bc").finish();
        assert_ne!(a, b);
    }

    #[test]
    fn type_name_ignores_whitespace() {
        let a = LayoutHasher::new().type_name("[f64; 4]").finish();
        let b = LayoutHasher::new().type_name("[f64;4]").finish();
        assert_eq!(a, b);
        assert_ne!(a, LayoutHasher::new().type_name("[f32; 4]").finish());
    }

    #[test]
    fn display_shows_all_parts() {
        let id = SchemaId::new("horus/CmdVel", 1, 16, 8, 0x1a2b_3c4d_5e6f_7788);
        assert_eq!(
            id.to_string(),
            "horus/CmdVel v1 (16 B, layout 0x1a2b3c4d5e6f7788)"
        );
        let small = SchemaId::new("x", 2, 4, 4, 0xff);
        assert_eq!(small.to_string(), "x v2 (4 B, layout 0x00000000000000ff)");
    }
}
