//! The numeric primitives that CDR writes as their little-endian bytes.

/// A numeric primitive of ROS 2 (`byte`/`char`/`uint8` … `float64`; not `bool`): plain
/// little-endian bytes on the wire, its size as its CDR alignment.
pub trait CdrPrimitive: bytemuck::Pod + Default + PartialEq + core::fmt::Debug {
    /// Size and CDR alignment, bytes.
    const SIZE: usize;
    /// The value from its little-endian bytes (`b.len() == SIZE`).
    fn from_le(b: &[u8]) -> Self;
    /// Writes its little-endian bytes into `out` (`out.len() == SIZE`).
    fn to_le(self, out: &mut [u8]);
}

macro_rules! primitive {
    ($($t:ty),*) => {$(
        impl CdrPrimitive for $t {
            const SIZE: usize = core::mem::size_of::<$t>();
            #[inline]
            fn from_le(b: &[u8]) -> Self {
                let mut a = [0u8; core::mem::size_of::<$t>()];
                a.copy_from_slice(b);
                <$t>::from_le_bytes(a)
            }
            #[inline]
            fn to_le(self, out: &mut [u8]) {
                out.copy_from_slice(&self.to_le_bytes());
            }
        }
    )*};
}

primitive!(u8, i8, u16, i16, u32, i32, u64, i64, f32, f64);
