//! 3-D point clouds: a fixed [`PointCloud`] header followed by a variable-size tail of points.
//!
//! The struct is only the header. The points live in the message's byte *tail*, which the
//! transport places right after it, 8-byte aligned, and hands out as `&[u8]` / `&mut [u8]`
//! (publish with `loan_slice(cloud.tail_len())`). [`PointCloud::points`] and friends turn that
//! tail into typed points after checking its length and alignment: the header may come from a
//! misbehaving peer, so nothing in it is trusted.
//!
//! Point layouts (little-endian `f32`, no padding):
//! * `point_step == 12`: `[x, y, z]` ([`PointCloud::points`]),
//! * `point_step == 16`: [`XyzI`] `{ x, y, z, intensity }` ([`PointCloud::points_xyzi`]).

use core::fmt;

use bytemuck::{Pod, Zeroable};

use crate::fixed_str::{self, FixedStrError};

/// A point with intensity (`point_step == 16`).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct XyzI {
    /// X, m.
    pub x: f32,
    /// Y, m.
    pub y: f32,
    /// Z, m.
    pub z: f32,
    /// Return intensity, sensor-specific units.
    pub intensity: f32,
}

/// Capacity of [`PointCloud::frame_id`], in bytes.
pub const POINT_CLOUD_FRAME_ID_LEN: usize = 32;

crate::message! {
    /// Header of a point cloud; the points follow in the message tail. 56 bytes + tail.
    pub struct PointCloud: "horus/PointCloud", version 1, tail {
        /// Time of acquisition, ns since the UNIX epoch.
        pub stamp_ns: u64,
        /// Sequence number set by the publisher.
        pub seq: u32,
        /// Number of points in the tail.
        pub num_points: u32,
        /// Bytes per point: [`PointCloud::POINT_STEP_XYZ`] or [`PointCloud::POINT_STEP_XYZI`].
        pub point_step: u32,
        /// Bit set of `PointCloud::FLAG_*`.
        pub flags: u32,
        /// Frame of the points, UTF-8, NUL-padded to [`POINT_CLOUD_FRAME_ID_LEN`] bytes.
        pub frame_id: [u8; 32],
    }
}

/// Error interpreting a [`PointCloud`] tail.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PointCloudError {
    /// The header's `point_step` is not the one the requested point type needs.
    WrongPointStep {
        /// `point_step` in the header.
        point_step: u32,
        /// `point_step` of the requested point type.
        expected: u32,
    },
    /// The tail holds fewer bytes than `num_points * point_step`.
    TailTooShort {
        /// Bytes the header says the points occupy.
        needed: usize,
        /// Bytes in the tail.
        actual: usize,
    },
    /// The tail does not start at an address aligned for the point type.
    Misaligned {
        /// Alignment the point type needs, in bytes.
        required: usize,
        /// Tail address modulo `required`.
        offset: usize,
    },
    /// `num_points * point_step` overflows `usize`.
    TooLarge {
        /// `num_points` in the header.
        num_points: u32,
        /// `point_step` in the header.
        point_step: u32,
    },
}

impl fmt::Display for PointCloudError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::WrongPointStep {
                point_step,
                expected,
            } => write!(f, "point_step is {point_step}, expected {expected}"),
            Self::TailTooShort { needed, actual } => {
                write!(f, "point cloud tail is {actual} bytes, needs {needed}")
            }
            Self::Misaligned { required, offset } => write!(
                f,
                "point cloud tail is misaligned: needs {required}-byte alignment, off by {offset}"
            ),
            Self::TooLarge {
                num_points,
                point_step,
            } => write!(
                f,
                "{num_points} points of {point_step} bytes overflow usize"
            ),
        }
    }
}

impl std::error::Error for PointCloudError {}

impl PointCloud {
    /// `point_step` of `[x, y, z]` points.
    pub const POINT_STEP_XYZ: u32 = 12;
    /// `point_step` of [`XyzI`] points.
    pub const POINT_STEP_XYZI: u32 = 16;
    /// Flag: the cloud has no invalid (`NaN`) points.
    pub const FLAG_DENSE: u32 = 1 << 0;
    /// Alignment the transport guarantees for the start of the tail.
    pub const TAIL_ALIGN: usize = 8;

    /// Header for `num_points` points, `[x, y, z]` or, `with_intensity`, [`XyzI`].
    /// Stamp, sequence, flags and frame are zero.
    pub const fn new(num_points: u32, with_intensity: bool) -> Self {
        Self {
            stamp_ns: 0,
            seq: 0,
            num_points,
            point_step: if with_intensity {
                Self::POINT_STEP_XYZI
            } else {
                Self::POINT_STEP_XYZ
            },
            flags: 0,
            frame_id: [0; POINT_CLOUD_FRAME_ID_LEN],
        }
    }

    /// Whether points carry an intensity (`point_step == 16`).
    pub const fn has_intensity(&self) -> bool {
        self.point_step == Self::POINT_STEP_XYZI
    }

    /// Bytes of point data the tail must hold: `num_points * point_step` (saturating).
    pub const fn tail_len(&self) -> usize {
        (self.num_points as usize).saturating_mul(self.point_step as usize)
    }

    /// Frame name.
    ///
    /// # Errors
    /// [`FixedStrError::InvalidUtf8`] if the stored bytes are not UTF-8.
    pub fn frame_id_str(&self) -> Result<&str, FixedStrError> {
        fixed_str::read(&self.frame_id)
    }

    /// Store the frame name. On error the header is unchanged.
    ///
    /// # Errors
    /// [`FixedStrError::TooLong`] beyond [`POINT_CLOUD_FRAME_ID_LEN`] bytes,
    /// [`FixedStrError::InteriorNul`] if the name contains a NUL byte.
    pub fn set_frame_id(&mut self, frame_id: &str) -> Result<(), FixedStrError> {
        fixed_str::write(&mut self.frame_id, frame_id)
    }

    /// The `[x, y, z]` points in `tail`. Bytes past `tail_len()` are ignored.
    ///
    /// # Errors
    /// [`PointCloudError::WrongPointStep`] unless `point_step == 12`;
    /// [`PointCloudError::TailTooShort`], [`PointCloudError::Misaligned`] (needs 4-byte
    /// alignment), [`PointCloudError::TooLarge`] as their names say.
    pub fn points<'a>(&self, tail: &'a [u8]) -> Result<&'a [[f32; 3]], PointCloudError> {
        self.view(tail)
    }

    /// Mutable `[x, y, z]` points in `tail`; see [`PointCloud::points`].
    ///
    /// # Errors
    /// As [`PointCloud::points`].
    pub fn points_mut<'a>(
        &self,
        tail: &'a mut [u8],
    ) -> Result<&'a mut [[f32; 3]], PointCloudError> {
        self.view_mut(tail)
    }

    /// The [`XyzI`] points in `tail`. Bytes past `tail_len()` are ignored.
    ///
    /// # Errors
    /// As [`PointCloud::points`], but `point_step` must be 16.
    pub fn points_xyzi<'a>(&self, tail: &'a [u8]) -> Result<&'a [XyzI], PointCloudError> {
        self.view(tail)
    }

    /// Mutable [`XyzI`] points in `tail`; see [`PointCloud::points_xyzi`].
    ///
    /// # Errors
    /// As [`PointCloud::points_xyzi`].
    pub fn points_xyzi_mut<'a>(
        &self,
        tail: &'a mut [u8],
    ) -> Result<&'a mut [XyzI], PointCloudError> {
        self.view_mut(tail)
    }

    fn view<'a, P: Pod>(&self, tail: &'a [u8]) -> Result<&'a [P], PointCloudError> {
        match self.checked_len::<P>(tail)? {
            0 => Ok(&[]),
            n => Ok(bytemuck::cast_slice(&tail[..n])),
        }
    }

    fn view_mut<'a, P: Pod>(&self, tail: &'a mut [u8]) -> Result<&'a mut [P], PointCloudError> {
        match self.checked_len::<P>(tail)? {
            0 => Ok(&mut []),
            n => Ok(bytemuck::cast_slice_mut(&mut tail[..n])),
        }
    }

    /// Validate `tail` for points of type `P` (whose size is the expected `point_step`) and
    /// return the number of bytes the points occupy.
    ///
    /// After `Ok(n)` with `n > 0`, `tail[..n]` casts to `[P]` without panicking: `n` is a
    /// multiple of `size_of::<P>()` and the start is aligned for `P`. An empty slice may have a
    /// dangling, unaligned address, so alignment is only checked when there are points; the
    /// callers return a fresh empty slice for `n == 0`.
    fn checked_len<P: Pod>(&self, tail: &[u8]) -> Result<usize, PointCloudError> {
        let step = size_of::<P>() as u32;
        if self.point_step != step {
            return Err(PointCloudError::WrongPointStep {
                point_step: self.point_step,
                expected: step,
            });
        }
        let needed = (self.num_points as usize)
            .checked_mul(step as usize)
            .ok_or(PointCloudError::TooLarge {
                num_points: self.num_points,
                point_step: self.point_step,
            })?;
        if tail.len() < needed {
            return Err(PointCloudError::TailTooShort {
                needed,
                actual: tail.len(),
            });
        }
        let required = align_of::<P>();
        let offset = tail.as_ptr() as usize % required;
        if needed > 0 && offset != 0 {
            return Err(PointCloudError::Misaligned { required, offset });
        }
        Ok(needed)
    }
}
