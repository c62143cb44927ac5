//! What a generated ROS 2 type provides.

use crate::error::{DecodeError, EncodeError};
use crate::reader::CdrReader;
use crate::writer::CdrWriter;
use crate::ENCAPSULATION_CDR_LE;

/// A ROS 2 interface type (message, or the request/response/goal/… structure of a service
/// or action) generated from its `.msg`/`.srv`/`.action` definition by `horus-idl-gen`.
pub trait RosMessage: Sized + Clone + Send + Sync + 'static {
    /// The ROS 2 type name, e.g. `sensor_msgs/msg/Image`.
    const TYPE_NAME: &'static str;
    /// The RIHS01 type hash as ROS 2 computes it: `RIHS01_` and 64 hex digits.
    const TYPE_HASH: &'static str;
    /// The definition in MCAP's `ros2msg` schema form: the type's own `.msg` text, then
    /// each type it uses after a line of 80 `=` and `MSG: pkg/msg/Type`.
    const DEFINITION: &'static str;

    /// The borrowed, zero-copy view of this type (`&str` strings, `&[T]` primitive
    /// sequences, nested views, [`SeqView`](crate::SeqView)s of nested sequences).
    type View<'a>: RosView<'a>;

    /// Writes the CDR body (no header). Bounds and strings are checked here: a message
    /// that breaks them is an [`EncodeError`] and nothing is written past the error.
    fn write_cdr(&self, w: &mut CdrWriter<'_>) -> Result<(), EncodeError>;

    /// Reads a CDR body into an owned message.
    fn read_cdr(r: &mut CdrReader<'_>) -> Result<Self, DecodeError>;

    /// Exact length of the CDR body (no header), with every encoding check made.
    fn cdr_size(&self) -> Result<usize, EncodeError> {
        let mut w = CdrWriter::counting();
        self.write_cdr(&mut w)?;
        Ok(w.finish())
    }
}

/// A borrowed view of a message's CDR bytes.
pub trait RosView<'a>: Sized + Copy {
    /// Reads (and checks) the view from `r`, leaving `r` after it.
    fn read_view(r: &mut CdrReader<'a>) -> Result<Self, DecodeError>;
}

/// The whole message as ROS 2 puts it on the wire: encapsulation header and CDR body.
pub fn encode_message<M: RosMessage>(m: &M) -> Result<Vec<u8>, EncodeError> {
    let size = m.cdr_size()?;
    let mut out = vec![0u8; 4 + size];
    out[..4].copy_from_slice(&ENCAPSULATION_CDR_LE);
    let mut w = CdrWriter::new(&mut out[4..]);
    m.write_cdr(&mut w)?;
    Ok(out)
}

/// Decodes a whole message (encapsulation header and body). Bytes after the message are
/// ignored, as ROS 2 does (rclpy's buffers carry such tails).
pub fn decode_message<M: RosMessage>(bytes: &[u8]) -> Result<M, DecodeError> {
    M::read_cdr(&mut CdrReader::from_message(bytes)?)
}

/// Views a whole message in place. Primitive sequences are viewed as slices, which
/// needs the body (`bytes[4..]`) 8-byte aligned in memory: true in horus's shared
/// memory; elsewhere copy into a [`CdrBuf`](crate::CdrBuf) first.
pub fn view_message<'a, M: RosMessage>(bytes: &'a [u8]) -> Result<M::View<'a>, DecodeError> {
    <M::View<'a> as RosView<'a>>::read_view(&mut CdrReader::from_message(bytes)?)
}
