//! The benchmark payloads as horus messages.
//!
//! The sizes 16, 64, 256, 304, 384, 512, 640, 768, 1024, 1480 and 2048 B are fixed-size byte-array
//! messages: up to [`horus::INLINE_MAX`] they travel inside the ring slots
//! (received by a validated copy out of the slot), larger ones in a pool
//! chunk (read in place); other sizes use [`Blob`], a message whose payload
//! is its tail in a pool chunk (received as a zero-copy read guard).
//!
//! A crate of its own (the message types and nothing else) so that every benchmark
//! that sends them names the same types: `horus-bench`, where `horus_wire` says how
//! each is written, read and echoed, and `horus-bench-multi-host` (the bridge's
//! [`Blob`]s), which needs nothing else of `horus-bench`.
#![warn(missing_docs)]

horus::message! {
    /// A payload that lives in the message tail (sizes above the inline limit).
    pub struct Blob: "horus-bench/Blob", version 1, tail {
        /// Payload length in bytes (the tail).
        pub len: u64,
    }
}

macro_rules! fixed_sizes {
    ($($name:ident = $n:literal as $schema:literal),* $(,)?) => {
        $(
            horus::message! {
                #[doc = concat!("A fixed-size ", stringify!($n), "-byte payload (inline in the ring up to `horus::INLINE_MAX`, else in a chunk).")]
                pub struct $name: $schema, version 1 {
                    /// The payload.
                    pub data: [u8; $n],
                }
            }
        )*
    };
}

fixed_sizes!(
    Bytes16 = 16 as "horus-bench/Bytes16",
    Bytes64 = 64 as "horus-bench/Bytes64",
    Bytes256 = 256 as "horus-bench/Bytes256",
    Bytes304 = 304 as "horus-bench/Bytes304",
    Bytes384 = 384 as "horus-bench/Bytes384",
    Bytes512 = 512 as "horus-bench/Bytes512",
    Bytes640 = 640 as "horus-bench/Bytes640",
    Bytes768 = 768 as "horus-bench/Bytes768",
    Bytes1024 = 1024 as "horus-bench/Bytes1024",
    Bytes1480 = 1480 as "horus-bench/Bytes1480",
    Bytes2048 = 2048 as "horus-bench/Bytes2048",
);
