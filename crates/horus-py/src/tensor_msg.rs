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
