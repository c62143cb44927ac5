//! Publishing a ROS 2 message: loan a chunk, encode the CDR body into it in one pass,
//! send.

use horus_cdr::{CdrWriter, EncodeError, RosMessage};

use super::{Ros, RosSendError};
use crate::{Delivery, Publisher, SampleMut};

impl<M: RosMessage> Publisher<Ros<M>> {
    /// Publishes `msg` as ROS 2's CDR bytes, encoded once, in place, into a loaned chunk
    /// (see [`loan_encoded`](Self::loan_encoded)). A message that breaks its type's rules
    /// ([`RosSendError::Encode`]) or is larger than the topic's `max_tail_bytes`
    /// ([`RosSendError::TooLarge`]) sends nothing, and its chunk goes back to the pool.
    /// Every error means nothing was sent.
    pub fn publish(&mut self, msg: &M) -> Result<Delivery, RosSendError> {
        let (sample, len) = self.encode_in_loan(msg)?;
        sample.send().map_err(|e| RosSendError::from_send(e, len))
    }

    /// `msg` encoded into a loaned chunk, not sent yet: [`send`](SampleMut::send) publishes
    /// it, dropping it gives the chunk back. One pass: the chunk is loaned first and the
    /// CDR writer encodes straight into it, making every encoding check on the way (bounds,
    /// NULs, 32-bit counts), so nothing is walked twice; the body's length is what was
    /// written. A message that breaks its type's rules is [`RosSendError::Encode`], one
    /// larger than the topic's `max_tail_bytes` is [`RosSendError::TooLarge`] with its
    /// exact size (counted only then); either way the chunk went back to the pool. The
    /// chunk is loaned before anything is checked: with none free the answer is
    /// [`RosSendError::PoolExhausted`] (counted), whatever the message.
    pub fn loan_encoded(&mut self, msg: &M) -> Result<SampleMut<'_, Ros<M>>, RosSendError> {
        self.encode_in_loan(msg).map(|(sample, _)| sample)
    }

    #[inline]
    fn encode_in_loan(&mut self, msg: &M) -> Result<(SampleMut<'_, Ros<M>>, usize), RosSendError> {
        let max = self.max_tail();
        let mut sample = self.loan_slice(max)?;
        *sample = Ros::new();
        let mut w = CdrWriter::new(sample.tail_mut());
        match msg.write_cdr(&mut w) {
            Ok(()) => {}
            // Past the largest body: the message's whole size, for the error (an encoding
            // error further on is reported instead, as a sizing pass would have).
            Err(EncodeError::BufferTooSmall { .. }) => {
                return Err(match msg.cdr_size() {
                    Ok(size) => RosSendError::TooLarge { size, max },
                    Err(e) => RosSendError::Encode(e),
                });
            }
            // The sample is dropped unsent: its chunk goes back to the pool.
            Err(e) => return Err(RosSendError::Encode(e)),
        }
        let len = w.finish();
        sample.shrink_tail(len);
        Ok((sample, len))
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
