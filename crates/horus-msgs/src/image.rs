//! Camera images: a fixed [`Image`] header followed by a variable-size tail of pixel bytes.
//!
//! The struct is only the header. The pixels live in the message's byte *tail* (publish with
//! `loan_slice(image.tail_len())`): `height` rows of `step` bytes, each row starting with
//! `width * bytes_per_pixel` bytes of pixels followed by optional row padding. Multi-byte
//! samples (`MONO16`, `DEPTH32F`) are little-endian. Every accessor validates the header
//! against the tail first: the header may come from a misbehaving peer.

use core::fmt;

use bytemuck::Pod;

use crate::fixed_str::{self, FixedStrError};

/// Capacity of [`Image::frame_id`], in bytes.
pub const IMAGE_FRAME_ID_LEN: usize = 32;

crate::message! {
    /// Header of an image; the pixel rows follow in the message tail. 64 bytes + tail.
    pub struct Image: "horus/Image", version 1, tail {
        /// Time of exposure, ns since the UNIX epoch.
        pub stamp_ns: u64,
        /// Width, pixels.
        pub width: u32,
        /// Height, pixels (number of rows).
        pub height: u32,
        /// Bytes per row, including any row padding; at least `width * bytes_per_pixel`.
        pub step: u32,
        /// Pixel format: one of the encoding constants such as [`Image::RGB8`].
        pub encoding: u32,
        /// Sequence number set by the publisher.
        pub seq: u32,
        /// Reserved; keeps `frame_id` 8-byte aligned. Write zero.
        pub _pad: u32,
        /// Camera frame, UTF-8, NUL-padded to [`IMAGE_FRAME_ID_LEN`] bytes.
        pub frame_id: [u8; 32],
    }
}

/// Error building an [`Image`] header or interpreting its tail.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ImageError {
    /// `encoding` is not one of the known encoding constants.
    UnknownEncoding {
        /// The unknown code.
        encoding: u32,
    },
    /// `step` is smaller than one row of pixels.
    StepTooSmall {
        /// `step` in the header.
        step: u32,
        /// `width * bytes_per_pixel`.
        min_step: usize,
    },
    /// The image size in bytes overflows (`u32` for `step`, `usize` for the whole image).
    TooLarge,
    /// The tail holds fewer bytes than `step * height`.
    TailTooShort {
        /// Bytes the header says the image occupies.
        needed: usize,
        /// Bytes in the tail.
        actual: usize,
    },
    /// The requested row is not below `height`.
    RowOutOfBounds {
        /// Requested row.
        row: u32,
        /// `height` in the header.
        height: u32,
    },
    /// A row does not start at an address aligned for the requested element type.
    Misaligned {
        /// Alignment the element type needs, in bytes.
        required: usize,
        /// Row address modulo `required`.
        offset: usize,
    },
    /// A row's pixel bytes are not a whole number of the requested element type.
    ElementSizeMismatch {
        /// Pixel bytes in a row.
        row_bytes: usize,
        /// Size of the requested element type.
        elem_size: usize,
    },
}

impl fmt::Display for ImageError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::UnknownEncoding { encoding } => write!(f, "unknown image encoding {encoding}"),
            Self::StepTooSmall { step, min_step } => {
                write!(
                    f,
                    "image step {step} is smaller than a row of pixels ({min_step})"
                )
            }
            Self::TooLarge => write!(f, "image dimensions overflow"),
            Self::TailTooShort { needed, actual } => {
                write!(f, "image tail is {actual} bytes, needs {needed}")
            }
            Self::RowOutOfBounds { row, height } => {
                write!(f, "row {row} is out of bounds for height {height}")
            }
            Self::Misaligned { required, offset } => write!(
                f,
                "image row is misaligned: needs {required}-byte alignment, off by {offset}"
            ),
            Self::ElementSizeMismatch {
                row_bytes,
                elem_size,
            } => write!(
                f,
                "row of {row_bytes} bytes is not a whole number of {elem_size}-byte elements"
            ),
        }
    }
}

impl std::error::Error for ImageError {}

impl Image {
    /// 8-bit grey, 1 byte per pixel.
    pub const MONO8: u32 = 1;
    /// 16-bit grey (little-endian), 2 bytes per pixel.
    pub const MONO16: u32 = 2;
    /// 8-bit red, green, blue; 3 bytes per pixel.
    pub const RGB8: u32 = 3;
    /// 8-bit blue, green, red; 3 bytes per pixel.
    pub const BGR8: u32 = 4;
    /// 8-bit red, green, blue, alpha; 4 bytes per pixel.
    pub const RGBA8: u32 = 5;
    /// 8-bit blue, green, red, alpha; 4 bytes per pixel.
    pub const BGRA8: u32 = 6;
    /// YUV 4:2:2 packed as `Y0 U Y1 V` (2 bytes per pixel; `width` should be even).
    pub const YUYV: u32 = 7;
    /// Depth in metres as little-endian `f32`, 4 bytes per pixel.
    pub const DEPTH32F: u32 = 8;

    /// Bytes per pixel of `encoding`, or `None` if it is not a known encoding.
    pub const fn encoding_bytes_per_pixel(encoding: u32) -> Option<usize> {
        match encoding {
            Self::MONO8 => Some(1),
            Self::MONO16 | Self::YUYV => Some(2),
            Self::RGB8 | Self::BGR8 => Some(3),
            Self::RGBA8 | Self::BGRA8 | Self::DEPTH32F => Some(4),
            _ => None,
        }
    }

    /// Conventional lower-case name of `encoding` (`"rgb8"`, `"mono16"` …), for tools.
    pub const fn encoding_name(encoding: u32) -> Option<&'static str> {
        match encoding {
            Self::MONO8 => Some("mono8"),
            Self::MONO16 => Some("mono16"),
            Self::RGB8 => Some("rgb8"),
            Self::BGR8 => Some("bgr8"),
            Self::RGBA8 => Some("rgba8"),
            Self::BGRA8 => Some("bgra8"),
            Self::YUYV => Some("yuyv"),
            Self::DEPTH32F => Some("32FC1"),
            _ => None,
        }
    }

    /// Header for a `width` × `height` image of `encoding` with tightly packed rows
    /// (`step = width * bytes_per_pixel`). Stamp, sequence and frame are zero.
    ///
    /// # Errors
    /// [`ImageError::UnknownEncoding`], or [`ImageError::TooLarge`] if `step` does not fit a
    /// `u32` or the image does not fit a `usize`.
    pub fn try_new(width: u32, height: u32, encoding: u32) -> Result<Self, ImageError> {
        let bpp = Self::encoding_bytes_per_pixel(encoding)
            .ok_or(ImageError::UnknownEncoding { encoding })?;
        let step = (width as usize)
            .checked_mul(bpp)
            .and_then(|s| u32::try_from(s).ok())
            .ok_or(ImageError::TooLarge)?;
        (step as usize)
            .checked_mul(height as usize)
            .ok_or(ImageError::TooLarge)?;
        Ok(Self {
            stamp_ns: 0,
            width,
            height,
            step,
            encoding,
            seq: 0,
            _pad: 0,
            frame_id: [0; IMAGE_FRAME_ID_LEN],
        })
    }

    /// As [`Image::try_new`], for the usual case of a known encoding constant.
    ///
    /// # Panics
    /// If [`Image::try_new`] fails: unknown `encoding` or an image too large to address.
    pub fn new(width: u32, height: u32, encoding: u32) -> Self {
        match Self::try_new(width, height, encoding) {
            Ok(image) => image,
            Err(e) => panic!("Image::new({width}, {height}, {encoding}): {e}"),
        }
    }

    /// Bytes per pixel of this image's encoding, or `None` if the encoding is unknown.
    pub const fn bytes_per_pixel(&self) -> Option<usize> {
        Self::encoding_bytes_per_pixel(self.encoding)
    }

    /// Bytes of pixel data the tail must hold: `step * height` (saturating).
    pub const fn tail_len(&self) -> usize {
        (self.step as usize).saturating_mul(self.height as usize)
    }

    /// Camera frame name.
    ///
    /// # Errors
    /// [`FixedStrError::InvalidUtf8`] if the stored bytes are not UTF-8.
    pub fn frame_id_str(&self) -> Result<&str, FixedStrError> {
        fixed_str::read(&self.frame_id)
    }

    /// Store the camera frame name. On error the header is unchanged.
    ///
    /// # Errors
    /// [`FixedStrError::TooLong`] beyond [`IMAGE_FRAME_ID_LEN`] bytes,
    /// [`FixedStrError::InteriorNul`] if the name contains a NUL byte.
    pub fn set_frame_id(&mut self, frame_id: &str) -> Result<(), FixedStrError> {
        fixed_str::write(&mut self.frame_id, frame_id)
    }

    /// Check the header against a tail of `tail_len` bytes; return the pixel bytes per row.
    fn validate(&self, tail_len: usize) -> Result<usize, ImageError> {
        let bpp = self.bytes_per_pixel().ok_or(ImageError::UnknownEncoding {
            encoding: self.encoding,
        })?;
        let row_bytes = (self.width as usize)
            .checked_mul(bpp)
            .ok_or(ImageError::TooLarge)?;
        if (self.step as usize) < row_bytes {
            return Err(ImageError::StepTooSmall {
                step: self.step,
                min_step: row_bytes,
            });
        }
        let needed = (self.step as usize)
            .checked_mul(self.height as usize)
            .ok_or(ImageError::TooLarge)?;
        if tail_len < needed {
            return Err(ImageError::TailTooShort {
                needed,
                actual: tail_len,
            });
        }
        Ok(row_bytes)
    }

    /// Byte range of row `y`'s pixels within the tail.
    fn row_range(&self, tail_len: usize, y: u32) -> Result<core::ops::Range<usize>, ImageError> {
        let row_bytes = self.validate(tail_len)?;
        if y >= self.height {
            return Err(ImageError::RowOutOfBounds {
                row: y,
                height: self.height,
            });
        }
        // Cannot overflow: y < height and step * height was checked in `validate`.
        let start = y as usize * self.step as usize;
        Ok(start..start + row_bytes)
    }

    /// The whole image, `step * height` bytes of `tail` (row padding included), after
    /// validating the header. Bytes past `tail_len()` are not included.
    ///
    /// # Errors
    /// [`ImageError::UnknownEncoding`], [`ImageError::StepTooSmall`],
    /// [`ImageError::TooLarge`], [`ImageError::TailTooShort`].
    pub fn data<'a>(&self, tail: &'a [u8]) -> Result<&'a [u8], ImageError> {
        self.validate(tail.len())?;
        Ok(&tail[..self.tail_len()])
    }

    /// The `width * bytes_per_pixel` pixel bytes of row `y` (row padding excluded).
    ///
    /// # Errors
    /// As [`Image::data`], plus [`ImageError::RowOutOfBounds`] if `y >= height`.
    pub fn row<'a>(&self, tail: &'a [u8], y: u32) -> Result<&'a [u8], ImageError> {
        let range = self.row_range(tail.len(), y)?;
        Ok(&tail[range])
    }

    /// Mutable pixel bytes of row `y`; see [`Image::row`].
    ///
    /// # Errors
    /// As [`Image::row`].
    pub fn row_mut<'a>(&self, tail: &'a mut [u8], y: u32) -> Result<&'a mut [u8], ImageError> {
        let range = self.row_range(tail.len(), y)?;
        Ok(&mut tail[range])
    }

    /// Row `y` as typed elements, e.g. `u16` for [`Image::MONO16`], `f32` for
    /// [`Image::DEPTH32F`], `[u8; 3]` for [`Image::RGB8`].
    ///
    /// # Errors
    /// As [`Image::row`], plus [`ImageError::Misaligned`] if the row does not start at an
    /// address aligned for `T` (the tail start or `step` is not a multiple of `align_of::<T>()`)
    /// and [`ImageError::ElementSizeMismatch`] if the row is not a whole number of `T`.
    pub fn row_as<'a, T: Pod>(&self, tail: &'a [u8], y: u32) -> Result<&'a [T], ImageError> {
        let row = self.row(tail, y)?;
        check_cast::<T>(row)?;
        if row.is_empty() {
            // An empty slice may sit at an unaligned address; don't hand it to bytemuck.
            return Ok(&[]);
        }
        Ok(bytemuck::cast_slice(row))
    }

    /// Mutable typed row `y`; see [`Image::row_as`].
    ///
    /// # Errors
    /// As [`Image::row_as`].
    pub fn row_as_mut<'a, T: Pod>(
        &self,
        tail: &'a mut [u8],
        y: u32,
    ) -> Result<&'a mut [T], ImageError> {
        let row = self.row_mut(tail, y)?;
        check_cast::<T>(row)?;
        if row.is_empty() {
            return Ok(&mut []);
        }
        Ok(bytemuck::cast_slice_mut(row))
    }
}

/// Check that `bytes` casts to `[T]` without panicking: aligned start and a whole number of
/// elements (an empty row is always fine). Zero-sized `T` is rejected as a size mismatch.
fn check_cast<T: Pod>(bytes: &[u8]) -> Result<(), ImageError> {
    let elem_size = size_of::<T>();
    if elem_size == 0 || !bytes.len().is_multiple_of(elem_size) {
        return Err(ImageError::ElementSizeMismatch {
            row_bytes: bytes.len(),
            elem_size,
        });
    }
    let required = align_of::<T>();
    let offset = bytes.as_ptr() as usize % required;
    if !bytes.is_empty() && offset != 0 {
        return Err(ImageError::Misaligned { required, offset });
    }
    Ok(())
}
