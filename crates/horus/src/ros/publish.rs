//! Publishing a ROS 2 message: size it, loan a chunk of that size, write the CDR body in
//! place, send.

use horus_cdr::{CdrWriter, EncodeError, RosMessage};

use super::{Ros, RosSendError};
use crate::{Delivery, Publisher};

impl<M: RosMessage> Publisher<Ros<M>> {
    /// Publishes `msg` as ROS 2's CDR bytes, written once, in place, in a loaned chunk:
    /// its exact size is computed first (which makes every encoding check), so a message
    /// that breaks its type's rules ([`RosSendError::Encode`]) or is larger than the
    /// topic's `max_tail_bytes` ([`RosSendError::TooLarge`]) loans and sends nothing. Every
    /// error means nothing was sent.
    pub fn publish(&mut self, msg: &M) -> Result<Delivery, RosSendError> {
        let size = msg.cdr_size().map_err(RosSendError::Encode)?;
        self.publish_with(size, |w| msg.write_cdr(w))
    }

    /// Publishes a CDR body of exactly `len` bytes written by `write` into the loaned chunk
    /// (for bodies written by hand or copied from elsewhere; positions and alignment in the
    /// writer count from the body's first byte, which is 8-byte aligned). An error from
    /// `write`, or a length other than `len` ([`RosSendError::LengthMismatch`]), sends
    /// nothing and returns the chunk.
    pub fn publish_with(
        &mut self,
        len: usize,
        write: impl FnOnce(&mut CdrWriter<'_>) -> Result<(), EncodeError>,
    ) -> Result<Delivery, RosSendError> {
        let mut sample = self.loan_slice(len)?;
        *sample = Ros::new();
        let mut w = CdrWriter::new(sample.tail_mut());
        // On any error the sample is dropped unsent: its chunk goes back to the pool.
        write(&mut w).map_err(RosSendError::Encode)?;
        let written = w.finish();
        if written != len {
            return Err(RosSendError::LengthMismatch {
                declared: len,
                written,
            });
        }
        sample.send().map_err(|e| RosSendError::from_send(e, len))
    }
}
