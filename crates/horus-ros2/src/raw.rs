//! The payload type the bridge hands RustDDS: ROS 2 wire bytes passed through untouched.
//!
//! RustDDS splits a serialized payload into its representation identifier (the first two
//! bytes of the encapsulation header), two option bytes (which it drops on receive and
//! writes as zero) and the body. The bridge's unit is horus's `cdr()` bytes: header + body.

use bytes::Bytes;
use rustdds::no_key::{Decode, DefaultDecoder, DeserializerAdapter, SerializerAdapter};
use rustdds::RepresentationIdentifier;

/// One message as ROS 2 puts it on the wire: the 4-byte encapsulation header (little-endian
/// plain CDR, `00 01 00 00`) then the CDR body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WireCdr(pub Bytes);

/// The only encapsulation horus carries: little-endian plain CDR (XCDR1), as rmw_fastrtps.
const CDR_LE: [u8; 2] = [0x00, 0x01];

/// Why a DDS payload is not one horus can carry.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WireError {
    /// The payload is not little-endian plain CDR.
    #[error("payload encapsulation {0:?} is not little-endian CDR (00 01)")]
    Encapsulation([u8; 2]),
    /// A horus message shorter than its own encapsulation header.
    #[error("message of {0} bytes has no encapsulation header")]
    NoHeader(usize),
}

/// RustDDS adapter that moves [`WireCdr`] bytes in and out without decoding them.
pub struct PassThrough;

impl SerializerAdapter<WireCdr> for PassThrough {
    type Error = WireError;

    fn output_encoding() -> RepresentationIdentifier {
        RepresentationIdentifier::CDR_LE
    }

    fn to_bytes(value: &WireCdr) -> Result<Bytes, WireError> {
        let b = &value.0;
        if b.len() < 4 {
            return Err(WireError::NoHeader(b.len()));
        }
        if b[..2] != CDR_LE {
            return Err(WireError::Encapsulation([b[0], b[1]]));
        }
        Ok(b.slice(4..))
    }
}

impl DeserializerAdapter<WireCdr> for PassThrough {
    type Error = WireError;
    type Decoded = WireCdr;

    fn supported_encodings() -> &'static [RepresentationIdentifier] {
        &[RepresentationIdentifier::CDR_LE]
    }

    fn transform_decoded(decoded: WireCdr) -> WireCdr {
        decoded
    }
}

/// The decoder of [`PassThrough`]: prepends the header RustDDS stripped.
#[derive(Clone, Copy)]
pub struct PrependHeader;

impl<'de> Decode<'de, WireCdr> for PrependHeader {
    type Error = WireError;

    fn decode_bytes(
        self,
        input_bytes: &'de [u8],
        _encoding: RepresentationIdentifier,
    ) -> Result<WireCdr, WireError> {
        let mut v = Vec::with_capacity(4 + input_bytes.len());
        v.extend_from_slice(&[0x00, 0x01, 0x00, 0x00]);
        v.extend_from_slice(input_bytes);
        Ok(WireCdr(Bytes::from(v)))
    }
}

impl DefaultDecoder<WireCdr> for PassThrough {
    type Decoder = PrependHeader;
    const DECODER: PrependHeader = PrependHeader;
}
