//! The pub/sub peers by the name their rows carry (`system` in the JSON).

use horus_bench::harness::Mode;
use horus_bench::pubsub::horus::{HorusTopic, Wait};
use horus_bench::pubsub::uds::UnixSocket;
use horus_bench::pubsub::PubSub;

/// The peer whose rows are named `name`, in its default setting: horus by loan
/// (`horus` busy-polls, `horus:futex` blocks), Zenoh with only A's measuring thread
/// pinned. `None` for an unknown name.
pub fn by_name(name: &str) -> Option<Box<dyn PubSub>> {
    Some(match name {
        "horus" => Box::new(HorusTopic {
            mode: Mode::Loan,
            wait: Wait::Poll,
        }),
        "horus:futex" => Box::new(HorusTopic {
            mode: Mode::Loan,
            wait: Wait::Futex,
        }),
        "uds" => Box::new(UnixSocket),
        "iceoryx2" => Box::new(super::iceoryx2::Iceoryx2PubSub),
        "zenoh" | "zenoh-shm" => {
            use super::zenoh::{Pinning, Transport, ZenohPubSub};
            let transport = if name == "zenoh" {
                Transport::Tcp
            } else {
                Transport::Shm
            };
            Box::new(ZenohPubSub {
                transport,
                pinning: Pinning::Threads,
            })
        }
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_peer_is_found_under_the_name_its_rows_carry() {
        for name in [
            "horus",
            "horus:futex",
            "uds",
            "iceoryx2",
            "zenoh",
            "zenoh-shm",
        ] {
            let peer = by_name(name).unwrap_or_else(|| panic!("{name} not found"));
            assert_eq!(peer.name(), name);
        }
        assert!(by_name("nanomsg").is_none());
    }
}
