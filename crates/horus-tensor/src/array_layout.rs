//! How a tensor is viewed as a typed N-dimensional array (the buffer
//! protocol's and DLPack's metadata): element format, item size, shape and
//! C-order strides, bounded by the tensor's bytes. Pure Rust, so that the
//! validation of a peer's dtype and shape is tested and fuzzed without
//! Python.

use crate::DescriptorError;

/// How a tensor is viewed as a typed array through the buffer protocol:
/// format (PEP 3118), item size, bytes viewed, shape and C-order strides.
#[derive(Debug)]
pub struct TensorLayout {
    /// Buffer-protocol format of one element.
    pub format: &'static std::ffi::CStr,
    /// Bytes per element.
    pub itemsize: usize,
    /// Bytes viewed: the product of `shape` times `itemsize`.
    pub len: usize,
    /// Extent of each dimension.
    pub shape: Box<[isize]>,
    /// Bytes between consecutive elements of each dimension (C order).
    pub strides: Box<[isize]>,
}

impl TensorLayout {
    /// The layout of `dims` of NumPy type `dtype` over `nbytes` bytes;
    /// `None` when the dtype has no buffer format, an error when the shape
    /// does not fit.
    pub fn new(
        dtype: &[u8],
        dims: &[u64],
        nbytes: u64,
    ) -> Result<Option<TensorLayout>, DescriptorError> {
        let Some((format, itemsize)) = buffer_format(dtype) else {
            return Ok(None);
        };
        let len = array_bytes(itemsize, dims, nbytes)?;
        let shape: Box<[isize]> = dims.iter().map(|&d| d as isize).collect();
        let ndim = shape.len();
        let mut strides = vec![itemsize as isize; ndim].into_boxed_slice();
        for i in (0..ndim.saturating_sub(1)).rev() {
            strides[i] = strides[i + 1] * shape[i + 1];
        }
        Ok(Some(TensorLayout {
            format,
            itemsize,
            len: len as usize,
            shape,
            strides,
        }))
    }
}

/// Bytes of a C-contiguous array of `dims` items of `itemsize` bytes, if at
/// most `limit` (and every stride fits an `isize`).
pub fn array_bytes(itemsize: usize, dims: &[u64], limit: u64) -> Result<u64, DescriptorError> {
    let too_big = || DescriptorError::ShapeTooLarge {
        dims: dims.to_vec(),
        itemsize,
        nbytes: limit,
    };
    // Zero-sized dimensions taken as 1: bounds every stride too.
    dims.iter()
        .try_fold(itemsize as u64, |n, &d| n.checked_mul(d.max(1)))
        .filter(|&n| n <= isize::MAX as u64)
        .ok_or_else(too_big)?;
    let len = dims.iter().product::<u64>() * itemsize as u64;
    if len > limit {
        return Err(too_big());
    }
    Ok(len)
}

/// The buffer-protocol format (PEP 3118) and item size of a NumPy type
/// string such as `<f4`, for the plain numeric types in native byte order;
/// `None` for others (structured, datetime …), which take the generic path.
pub fn buffer_format(dtype: &[u8]) -> Option<(&'static std::ffi::CStr, usize)> {
    let (order, rest) = dtype.split_first()?;
    let little = match order {
        b'<' | b'|' | b'=' => cfg!(target_endian = "little") || *order == b'|',
        b'>' => cfg!(target_endian = "big"),
        _ => return None,
    };
    if !little {
        // Non-native byte order: not worth a fast path.
        return None;
    }
    Some(match rest {
        b"f2" => (c"=e", 2),
        b"f4" => (c"=f", 4),
        b"f8" => (c"=d", 8),
        b"i1" => (c"=b", 1),
        b"i2" => (c"=h", 2),
        b"i4" => (c"=i", 4),
        b"i8" => (c"=q", 8),
        b"u1" => (c"=B", 1),
        b"u2" => (c"=H", 2),
        b"u4" => (c"=I", 4),
        b"u8" => (c"=Q", 8),
        b"b1" => (c"=?", 1),
        b"c8" => (c"=Zf", 8),
        b"c16" => (c"=Zd", 16),
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layouts_are_bounded_by_the_tensor() {
        let l = TensorLayout::new(b"<f4", &[2, 3], 24).unwrap().unwrap();
        assert_eq!((l.itemsize, l.len), (4, 24));
        assert_eq!((&*l.shape, &*l.strides), (&[2, 3][..], &[12, 4][..]));
        assert!(TensorLayout::new(b"<f4", &[2, 3], 23).is_err());
        assert!(TensorLayout::new(b"<f4", &[u64::MAX, 2], u64::MAX).is_err());
        assert!(TensorLayout::new(b"<M8", &[2], 16).unwrap().is_none());
    }
}
