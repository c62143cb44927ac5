//! A run-time description of a generated message type, for tools and tests that handle
//! types by name (generated crates list theirs in a `REGISTRY`).

use crate::aligned::CdrBuf;
use crate::error::{DecodeError, EncodeError};
use crate::message::{decode_message, encode_message, view_message, RosMessage};

/// Decoding or encoding failed in a round trip.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum RoundTripError {
    /// The bytes did not decode.
    #[error(transparent)]
    Decode(#[from] DecodeError),
    /// The decoded message did not encode.
    #[error(transparent)]
    Encode(#[from] EncodeError),
}

/// One generated message type: its identity, and its codec as plain functions over whole
/// messages (encapsulation header + CDR body).
#[derive(Debug, Clone, Copy)]
pub struct RosTypeInfo {
    /// [`RosMessage::TYPE_NAME`]
    pub type_name: &'static str,
    /// [`RosMessage::TYPE_HASH`]
    pub type_hash: &'static str,
    /// [`RosMessage::DEFINITION`]
    pub definition: &'static str,
    /// Decodes a message into the owned type and encodes it again.
    pub reencode: fn(&[u8]) -> Result<Vec<u8>, RoundTripError>,
    /// Views a message (from an aligned copy), converts the view into the owned type
    /// and encodes that.
    pub view_reencode: fn(&[u8]) -> Result<Vec<u8>, RoundTripError>,
    /// Encodes the type's default value (ROS 2 defaults).
    pub encode_default: fn() -> Result<Vec<u8>, EncodeError>,
}

impl RosTypeInfo {
    /// The entry of `M`.
    pub const fn of<M>() -> Self
    where
        M: RosMessage + Default + for<'a> From<M::View<'a>>,
    {
        RosTypeInfo {
            type_name: M::TYPE_NAME,
            type_hash: M::TYPE_HASH,
            definition: M::DEFINITION,
            reencode: reencode::<M>,
            view_reencode: view_reencode::<M>,
            encode_default: encode_default::<M>,
        }
    }
}

fn reencode<M: RosMessage>(bytes: &[u8]) -> Result<Vec<u8>, RoundTripError> {
    let m: M = decode_message(bytes)?;
    Ok(encode_message(&m)?)
}

fn view_reencode<M>(bytes: &[u8]) -> Result<Vec<u8>, RoundTripError>
where
    M: RosMessage + for<'a> From<M::View<'a>>,
{
    let buf = CdrBuf::new(bytes);
    let m = M::from(view_message::<M>(buf.bytes())?);
    Ok(encode_message(&m)?)
}

fn encode_default<M: RosMessage + Default>() -> Result<Vec<u8>, EncodeError> {
    encode_message(&M::default())
}
