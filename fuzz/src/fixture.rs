//! A real channel per fuzzing process, shared by the inputs: two publisher
//! places (place 0 held by the fixture so that its ring is polled), two
//! subscriber places, rings of depth 4 with 128-byte slots, pools of four
//! 64-byte chunks. Its name is unlinked at once, so nothing is left in
//! `/dev/shm` whatever happens to the process.

use std::sync::{Arc, Mutex, MutexGuard, OnceLock};

use horus_shm::fuzz_api;
use horus_shm::{Channel, ChannelConfig, PublisherPort, Segment, SCHEMA_BYTES};

use crate::ring_input::{CHUNKS, DEPTH};

/// The shared channel and the publisher that keeps ring 0 active.
pub struct Fixture {
    /// The channel.
    pub chan: Arc<Channel>,
    _publisher: PublisherPort,
}

/// The process's fixture, reset (rings, heads, chunk states zeroed).
pub fn fixture() -> MutexGuard<'static, Fixture> {
    static FIXTURE: OnceLock<Mutex<Fixture>> = OnceLock::new();
    let guard = FIXTURE
        .get_or_init(|| Mutex::new(Fixture::new()))
        .lock()
        .unwrap_or_else(|p| p.into_inner());
    fuzz_api::reset_rings_and_pools(&guard.chan);
    guard
}

impl Fixture {
    fn new() -> Fixture {
        let config = ChannelConfig {
            schema: [0; SCHEMA_BYTES],
            depth: DEPTH as u32,
            slot_payload: 16,
            max_publishers: 2,
            max_subscribers: 2,
            chunk_size: 64,
            chunks_per_publisher: CHUNKS as u32,
            qos_code: 0,
        };
        let name = crate::scratch_name("chan");
        Segment::unlink(&name);
        let chan = Channel::open_or_create(&name, &config).expect("fixture channel");
        Segment::unlink(&name);
        let publisher = PublisherPort::join(&chan).expect("fixture publisher");
        assert_eq!(publisher.place(), 0);
        assert_eq!(
            fuzz_api::slot_capacity_words(&chan),
            crate::ring_input::SLOT_WORDS
        );
        Fixture {
            chan,
            _publisher: publisher,
        }
    }
}
