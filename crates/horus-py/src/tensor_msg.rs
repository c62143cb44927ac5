//! [`TensorRef`]: the message that hands a [`TensorPool`](crate::tensor_pool)
//! tensor to another process by descriptor (the payload is not copied).

horus::message! {
    /// A tensor in a shared-memory tensor pool, handed over by descriptor.
    ///
    /// The receiver maps the pool named by `pool_id` (in the same namespace),
    /// checks `slot`/`generation`, and takes its own reference; the data is
    /// never copied. The descriptor does not hold a reference by itself: the
    /// sender keeps its handle until the receiver has taken one (a
    /// descriptor whose tensor was freed meanwhile is refused as stale).
    pub struct TensorRef: "horus/TensorRef", version 1 {
        /// Time the tensor was produced, ns since the UNIX epoch.
        pub stamp_ns: u64,
        /// Pool id (the `pool_id` of `TensorPool(pool_id)`).
        pub pool_id: u64,
        /// Byte offset of the data from the start of the pool segment.
        pub offset: u64,
        /// Bytes of data (C-contiguous).
        pub nbytes: u64,
        /// Slot index in the pool.
        pub slot: u32,
        /// Generation of the slot when the tensor was allocated.
        pub generation: u32,
        /// Number of dimensions used in `shape` (at most 8).
        pub ndim: u32,
        /// What the tensor is: 0 plain tensor, otherwise an `Image` encoding
        /// code (shape `[height, width, channels]`), or `TensorRef::POINTS`.
        pub kind: u32,
        /// Element type as a NumPy type string (`<f4`, `|u1` …), NUL-padded.
        pub dtype: [u8; 8],
        /// Extent of each dimension; entries past `ndim` are 0.
        pub shape: [u64; 8],
        /// Frame of the data, UTF-8, NUL-padded.
        pub frame_id: [u8; 32],
    }
}

impl TensorRef {
    /// `kind` of a point cloud: shape `[n, 3]` (xyz) or `[n, 4]` (xyzi) `f32`.
    pub const POINTS: u32 = 0x100;
}

/// Why a descriptor's dtype and shape cannot be viewed as a typed array.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum DescriptorError {
    /// `ndim` is larger than `shape` holds.
    #[error("descriptor has {0} dimensions")]
    TooManyDims(usize),
    /// The shape needs more bytes than the tensor has (or than memory can).
    #[error("shape {dims:?} of {itemsize}-byte items exceeds the tensor's {nbytes} bytes")]
    ShapeTooLarge {
        /// The dimensions.
        dims: Vec<u64>,
        /// Bytes per element.
        itemsize: usize,
        /// Bytes of the tensor.
        nbytes: u64,
    },
}

impl TensorRef {
    /// The dimensions in use (`shape[..ndim]`); an error if `ndim` exceeds
    /// the 8 the descriptor holds (a corrupt or hostile sender).
    pub fn dims(&self) -> Result<&[u64], DescriptorError> {
        let ndim = self.ndim as usize;
        self.shape
            .get(..ndim)
            .ok_or(DescriptorError::TooManyDims(ndim))
    }

    /// The dtype string's bytes, up to the first NUL.
    pub fn dtype_bytes(&self) -> &[u8] {
        let end = self
            .dtype
            .iter()
            .position(|&c| c == 0)
            .unwrap_or(self.dtype.len());
        &self.dtype[..end]
    }
}

/// How a tensor is viewed as a typed array through the buffer protocol:
/// format (PEP 3118), item size, bytes viewed, shape and C-order strides.
/// Pure Rust, so that the validation can be tested and fuzzed without Python.
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
        let too_big = || DescriptorError::ShapeTooLarge {
            dims: dims.to_vec(),
            itemsize,
            nbytes,
        };
        // Zero-sized dimensions taken as 1: bounds every stride too.
        dims.iter()
            .try_fold(itemsize as u64, |n, &d| n.checked_mul(d.max(1)))
            .filter(|&n| n <= isize::MAX as u64)
            .ok_or_else(too_big)?;
        let len = dims.iter().product::<u64>() * itemsize as u64;
        if len > nbytes {
            return Err(too_big());
        }
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

/// The buffer-protocol format (PEP 3118) and item size of a NumPy type
/// string such as `<f4`, for the plain numeric types; `None` for others
/// (structured, datetime …), which take the generic path.
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

    #[test]
    fn corrupt_ndim_is_an_error() {
        let mut r: TensorRef = bytemuck::Zeroable::zeroed();
        r.ndim = 9;
        assert_eq!(r.dims(), Err(DescriptorError::TooManyDims(9)));
        r.ndim = 2;
        r.dtype[..3].copy_from_slice(b"<f4");
        assert_eq!((r.dims().unwrap().len(), r.dtype_bytes()), (2, &b"<f4"[..]));
    }
}
