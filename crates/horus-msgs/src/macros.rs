//! [`message!`](crate::message!): the single source of truth for a message type.

/// Declare a message: the `#[repr(C)]` struct and its [`Message`](crate::Message) impl, from one
/// field list.
///
/// ```
/// horus_msgs::message! {
///     /// Velocity command for a differential-drive base.
///     pub struct MyCmd: "demo/MyCmd", version 1 {
///         /// Time the command was issued, ns since the UNIX epoch.
///         pub stamp_ns: u64,
///         /// Forward speed, m/s.
///         pub linear: f32,
///         /// Turn rate, rad/s.
///         pub angular: f32,
///     }
/// }
///
/// use horus_msgs::Message;
/// assert_eq!(MyCmd::SCHEMA.name(), "demo/MyCmd");
/// assert_eq!(MyCmd::SCHEMA.size(), 16);
/// assert_eq!(MyCmd::FIELDS[1].name, "linear");
/// assert_eq!(MyCmd::FIELDS[1].offset, 8);
/// ```
///
/// # Syntax
///
/// ```text
/// $(#[attr])* $vis struct Name: "schema/name", version N $(, tail)? {
///     $( $(#[attr])* $vis field: Type, )*
/// }
/// ```
///
/// * `"schema/name"` and `version N` (a `u32` literal) become [`SchemaId::name`] and
///   [`SchemaId::version`]. Bump the version when a field's *meaning* changes without its layout.
/// * `tail` marks a message whose fixed part is followed by a variable-size byte tail
///   (sets [`Message::HAS_TAIL`](crate::Message::HAS_TAIL)).
/// * Attributes, including doc comments, are passed through to the struct and its fields.
///
/// # What is generated
///
/// * `#[repr(C)] #[derive(Clone, Copy, Debug, PartialEq)]` struct, with `bytemuck::Zeroable`
///   and `bytemuck::Pod` implemented.
/// * `Message::SCHEMA` with `size_of`, `align_of` and a layout hash computed at compile time by
///   [`LayoutHasher`] over the schema name, version, every field's name, type (as written),
///   offset and size, the total size, the alignment and the tail flag.
/// * `Message::FIELDS`, one [`FieldInfo`] per field, offsets from `core::mem::offset_of!`.
/// * [`FieldType`](crate::FieldType), so the message can be nested in another, and what
///   [`MessageDescription::of`](crate::MessageDescription::of) needs to describe it at run time.
///   Every field type must be a scalar, an array, or another `message!` type.
///
/// The type is hashed *as written* (ASCII whitespace ignored), so `Vector3` and
/// `horus_msgs::Vector3` hash differently, as do `[u8; 32]` and `[u8; LEN]`. Pick one spelling
/// and keep it; prefer literal array lengths so that [`FieldInfo::ty`] is self-describing and
/// other languages can recompute the hash from the field table.
///
/// # Compile-time checks
///
/// Every field type must be `bytemuck::Pod`, and the struct must have no padding: the sum of the
/// field sizes must equal the struct size. Add explicit `_pad` fields where alignment would
/// otherwise insert padding. `bool`, `char` and enums are not `Pod`; use integer codes with
/// `pub const` values instead.
///
/// ```compile_fail
/// horus_msgs::message! {
///     /// 4 bytes of padding after `a`: rejected.
///     pub struct Padded: "demo/Padded", version 1 {
///         /// A small field.
///         pub a: u32,
///         /// Forces 8-byte alignment.
///         pub b: u64,
///     }
/// }
/// ```
///
/// Why `Pod` is implemented by hand rather than derived: `bytemuck`'s derive names the crate by
/// a string path (`#[bytemuck(crate = "...")]`), which `macro_rules!` cannot fill with
/// `$crate`, so a derive would break for users who rename or do not depend on `bytemuck`. The
/// checks the derive performs (all fields `Pod`, `repr(C)`, no padding) are performed here.
///
/// [`SchemaId::name`]: crate::SchemaId::name
/// [`SchemaId::version`]: crate::SchemaId::version
/// [`LayoutHasher`]: crate::LayoutHasher
/// [`FieldInfo`]: crate::FieldInfo
/// [`FieldInfo::ty`]: crate::FieldInfo::ty
#[macro_export]
macro_rules! message {
    // Internal: the optional `tail` marker as a `bool`.
    (@has_tail) => { false };
    (@has_tail tail) => { true };

    (
        $(#[$meta:meta])*
        $vis:vis struct $name:ident : $schema_name:literal, version $version:literal
            $(, $tail:ident)? {
            $(
                $(#[$field_meta:meta])*
                $field_vis:vis $field:ident : $field_ty:ty
            ),* $(,)?
        }
    ) => {
        $(#[$meta])*
        #[repr(C)]
        #[derive(Clone, Copy, Debug, PartialEq)]
        $vis struct $name {
            $(
                $(#[$field_meta])*
                $field_vis $field: $field_ty,
            )*
        }

        const _: () = {
            // Every field must be `Pod` (checked by the trait bound) ...
            const fn assert_pod<T: $crate::__bytemuck::Pod>() {}
            $( assert_pod::<$field_ty>(); )*
            // ... and, with `repr(C)`, fields summing to the struct size means no padding.
            ::core::assert!(
                ::core::mem::size_of::<$name>() == 0 $( + ::core::mem::size_of::<$field_ty>() )*,
                ::core::concat!(
                    "horus message `", ::core::stringify!($name),
                    "` has padding bytes; add explicit `_pad` fields"
                )
            );
            ::core::assert!(
                ::core::mem::size_of::<$name>() <= u32::MAX as usize,
                ::core::concat!("horus message `", ::core::stringify!($name), "` is too large")
            );
        };

        // SAFETY: `Zeroable` requires that the all-zeroes bit pattern is a valid value. The
        // struct is `repr(C)` and every field is `Pod` (asserted above), and `Pod: Zeroable`,
        // so all-zero fields form a valid struct.
        unsafe impl $crate::__bytemuck::Zeroable for $name {}

        // SAFETY: `Pod` requires: `Copy` + `'static` (derived / no lifetimes), `repr(C)`
        // (emitted above), every field `Pod` and no padding (both asserted in the `const _`
        // block above). Those are exactly the conditions `bytemuck`'s own derive checks.
        unsafe impl $crate::__bytemuck::Pod for $name {}

        impl $crate::Message for $name {
            const SCHEMA: $crate::SchemaId = $crate::SchemaId::new(
                $schema_name,
                $version,
                ::core::mem::size_of::<$name>() as u32,
                ::core::mem::align_of::<$name>() as u32,
                $crate::LayoutHasher::new()
                    .str($schema_name)
                    .u32($version)
                    $(
                        .field(
                            ::core::stringify!($field),
                            ::core::stringify!($field_ty),
                            ::core::mem::offset_of!($name, $field),
                            ::core::mem::size_of::<$field_ty>(),
                        )
                    )*
                    .usize(::core::mem::size_of::<$name>())
                    .usize(::core::mem::align_of::<$name>())
                    .bool($crate::message!(@has_tail $($tail)?))
                    .finish(),
            );

            const FIELDS: &'static [$crate::FieldInfo] = &[
                $(
                    $crate::FieldInfo {
                        name: ::core::stringify!($field),
                        ty: ::core::stringify!($field_ty),
                        offset: ::core::mem::offset_of!($name, $field),
                        size: ::core::mem::size_of::<$field_ty>(),
                    },
                )*
            ];

            const HAS_TAIL: bool = $crate::message!(@has_tail $($tail)?);

            fn field_kinds(types: &mut $crate::TypeCollector) -> ::std::vec::Vec<$crate::FieldKind> {
                let _ = &types;
                ::std::vec![$( <$field_ty as $crate::FieldType>::field_kind(types) ),*]
            }
        }

        impl $crate::FieldType for $name {
            fn field_kind(types: &mut $crate::TypeCollector) -> $crate::FieldKind {
                types.add::<$name>();
                $crate::FieldKind::Message(
                    <$name as $crate::Message>::SCHEMA.name().into(),
                )
            }
        }
    };
}
