//! [`TensorRef`]: the message that hands a pool's tensor to another process
//! by descriptor (the payload is not copied), and its validation.

use crate::Tensor;

horus::message! {
    /// A tensor in a shared-memory tensor pool, handed over by descriptor.
    ///
    /// The receiver maps the pool named by `pool_id` (in the same namespace),
    /// checks `slot`/`generation`, and takes its own reference; the data is
    /// never copied. The descriptor does not hold a reference by itself: the
    /// sender keeps its handle until the receiver has taken one (a
    /// descriptor whose tensor was freed meanwhile is refused as stale).
    ///
    /// `dtype` and `shape` are the DLPack/NumPy metadata of the data: a
    /// NumPy type string and C-contiguous extents.
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

/// Why a descriptor cannot be made, or its dtype and shape cannot be viewed
/// as a typed array.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum DescriptorError {
    /// `ndim` is larger than `shape` holds.
    #[error("descriptor has {0} dimensions (at most 8)")]
    TooManyDims(usize),
    /// The dtype string is longer than the descriptor holds.
    #[error("dtype {0:?} is longer than the 8 bytes a descriptor holds")]
    DtypeTooLong(String),
    /// The frame id is longer than the descriptor holds.
    #[error("frame id of {0} bytes is longer than the 32 a descriptor holds")]
    FrameIdTooLong(usize),
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

/// What a descriptor says about a tensor besides where it is.
#[derive(Clone, Copy, Debug, Default)]
pub struct Meta<'a> {
    /// [`TensorRef::kind`].
    pub kind: u32,
    /// [`TensorRef::stamp_ns`].
    pub stamp_ns: u64,
    /// [`TensorRef::frame_id`] (at most 32 bytes).
    pub frame_id: &'a str,
}

impl TensorRef {
    /// The descriptor of `tensor` as `shape` of `dtype` (a NumPy type string
    /// such as `<f4`, at most 8 bytes; at most 8 dimensions).
    pub fn describe(
        tensor: &Tensor,
        dtype: &str,
        shape: &[u64],
        meta: Meta<'_>,
    ) -> Result<TensorRef, DescriptorError> {
        let mut r: TensorRef = bytemuck::Zeroable::zeroed();
        if shape.len() > r.shape.len() {
            return Err(DescriptorError::TooManyDims(shape.len()));
        }
        if dtype.len() > r.dtype.len() {
            return Err(DescriptorError::DtypeTooLong(dtype.to_owned()));
        }
        if meta.frame_id.len() > r.frame_id.len() {
            return Err(DescriptorError::FrameIdTooLong(meta.frame_id.len()));
        }
        r.stamp_ns = meta.stamp_ns;
        r.pool_id = tensor.pool().pool_id();
        r.offset = tensor.offset();
        r.nbytes = tensor.nbytes() as u64;
        r.slot = tensor.slot();
        r.generation = tensor.generation();
        r.ndim = shape.len() as u32;
        r.kind = meta.kind;
        r.dtype[..dtype.len()].copy_from_slice(dtype.as_bytes());
        r.shape[..shape.len()].copy_from_slice(shape);
        r.frame_id[..meta.frame_id.len()].copy_from_slice(meta.frame_id.as_bytes());
        Ok(r)
    }

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
        until_nul(&self.dtype)
    }

    /// The frame id's bytes, up to the first NUL.
    pub fn frame_id_bytes(&self) -> &[u8] {
        until_nul(&self.frame_id)
    }
}

fn until_nul(b: &[u8]) -> &[u8] {
    let end = b.iter().position(|&c| c == 0).unwrap_or(b.len());
    &b[..end]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn corrupt_ndim_is_an_error() {
        let mut r: TensorRef = bytemuck::Zeroable::zeroed();
        r.ndim = 9;
        assert_eq!(r.dims(), Err(DescriptorError::TooManyDims(9)));
        r.ndim = u32::MAX;
        assert!(r.dims().is_err());
        r.ndim = 2;
        r.dtype[..3].copy_from_slice(b"<f4");
        assert_eq!((r.dims().unwrap().len(), r.dtype_bytes()), (2, &b"<f4"[..]));
    }
}
