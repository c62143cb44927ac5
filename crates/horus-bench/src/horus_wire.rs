//! How each benchmark payload (the horus messages of the crate `horus-bench-wire`,
//! re-exported here) is written, read and echoed.
//!
//! The sizes 16, 64, 256, 304, 384, 512, 640, 768, 1024, 1480 and 2048 B are fixed-size byte-array
//! messages: up to [`horus::INLINE_MAX`] they travel inside the ring slots
//! (received by a validated copy out of the slot), larger ones in a pool
//! chunk (read in place); other sizes use [`Blob`], a message whose payload
//! is its tail in a pool chunk (received as a zero-copy read guard). Either way the payload is
//! exactly the requested size, written and read with [`crate::payload`].

use horus::{Delivery, Message, Publisher, Sample, SampleMut, SendError};
pub use horus_bench_wire::{
    Blob, Bytes1024, Bytes1480, Bytes16, Bytes2048, Bytes256, Bytes304, Bytes384, Bytes512,
    Bytes64, Bytes640, Bytes768,
};

/// Calls `$f::<T>(args…)` with the inline message type of exactly `$size`
/// bytes, or with [`Blob`] when there is none.
macro_rules! by_size {
    ($size:expr, $f:ident ( $($arg:expr),* )) => {{
        use $crate::horus_wire::*;
        match $size {
            16 => $f::<Bytes16>($($arg),*),
            64 => $f::<Bytes64>($($arg),*),
            256 => $f::<Bytes256>($($arg),*),
            304 => $f::<Bytes304>($($arg),*),
            384 => $f::<Bytes384>($($arg),*),
            512 => $f::<Bytes512>($($arg),*),
            640 => $f::<Bytes640>($($arg),*),
            768 => $f::<Bytes768>($($arg),*),
            1024 => $f::<Bytes1024>($($arg),*),
            1480 => $f::<Bytes1480>($($arg),*),
            2048 => $f::<Bytes2048>($($arg),*),
            _ => $f::<Blob>($($arg),*),
        }
    }};
}
pub(crate) use by_size;

/// How a message type carries a benchmark payload.
pub trait Wire: Message {
    /// The payload of a received message.
    fn payload(sample: &Sample<Self>) -> &[u8];
    /// Loans a message for a `size`-byte payload written in place.
    fn loan(publisher: &mut Publisher<Self>, size: usize) -> anyhow::Result<SampleMut<'_, Self>>;
    /// The writable payload of a loan.
    fn payload_mut<'b>(sample: &'b mut SampleMut<'_, Self>) -> &'b mut [u8];
    /// Publishes a copy of `payload`.
    fn send_copy(
        publisher: &mut Publisher<Self>,
        payload: &[u8],
    ) -> Result<Delivery, SendError<()>>;
    /// Checks what a received message says about itself (e.g. a header's point
    /// count against its tail); the payload is checked by [`crate::payload`].
    fn check(_sample: &Sample<Self>) -> anyhow::Result<()> {
        Ok(())
    }
}

macro_rules! impl_fixed_wire {
    ($($name:ident),*) => {$(
        impl Wire for $name {
            fn payload(sample: &Sample<Self>) -> &[u8] {
                &sample.data
            }
            fn loan(publisher: &mut Publisher<Self>, size: usize) -> anyhow::Result<SampleMut<'_, Self>> {
                anyhow::ensure!(size == std::mem::size_of::<Self>(), "size {size} for {}", Self::SCHEMA);
                Ok(publisher.loan()?)
            }
            fn payload_mut<'b>(sample: &'b mut SampleMut<'_, Self>) -> &'b mut [u8] {
                &mut sample.data
            }
            fn send_copy(publisher: &mut Publisher<Self>, payload: &[u8]) -> Result<Delivery, SendError<()>> {
                publisher.send_ref(bytemuck::from_bytes(payload))
            }
        }
    )*};
}

impl_fixed_wire!(
    Bytes16, Bytes64, Bytes256, Bytes304, Bytes384, Bytes512, Bytes640, Bytes768, Bytes1024,
    Bytes1480, Bytes2048
);

impl Wire for Blob {
    fn payload(sample: &Sample<Self>) -> &[u8] {
        sample.tail()
    }
    fn loan(publisher: &mut Publisher<Self>, size: usize) -> anyhow::Result<SampleMut<'_, Self>> {
        let mut s = publisher.loan_slice(size)?;
        s.len = size as u64;
        Ok(s)
    }
    fn payload_mut<'b>(sample: &'b mut SampleMut<'_, Self>) -> &'b mut [u8] {
        sample.tail_mut()
    }
    fn send_copy(
        publisher: &mut Publisher<Self>,
        payload: &[u8],
    ) -> Result<Delivery, SendError<()>> {
        publisher.send_with_tail(
            &Blob {
                len: payload.len() as u64,
            },
            payload,
        )
    }
}
