//! Tests of the description region and the bytes-sent counter.

use crate::layout::{ChannelConfig, Layout, MAX_DESCRIPTION, SCHEMA_BYTES};
use crate::{Channel, OpenError, PublisherPort, Segment};

fn config() -> ChannelConfig {
    ChannelConfig {
        schema: [3; SCHEMA_BYTES],
        depth: 8,
        slot_payload: 16,
        max_publishers: 2,
        max_subscribers: 4,
        chunk_size: 256,
        chunks_per_publisher: 8,
        qos_code: 0,
    }
}

fn name(tag: &str) -> String {
    format!("/horus.unit.desc.{}.{}", std::process::id(), tag)
}

#[test]
fn creator_description_is_read_back_by_every_opener() {
    let n = name("roundtrip");
    let text = b"{\"root\":\"demo/Msg\",\"odd length\":1}";
    let a = Channel::open_or_create_described(&n, &config(), text).unwrap();
    // A second opener asking for another description keeps the creator's.
    let b = Channel::open_or_create_described(&n, &config(), b"other").unwrap();
    let c = Channel::open_existing(&n, None).unwrap();
    Segment::unlink(&n);
    for chan in [&a, &b, &c] {
        assert_eq!(chan.description(), text);
    }
    assert!(a.layout().rings >= a.layout().description + text.len());
}

#[test]
fn a_channel_without_description_reads_empty() {
    let n = name("empty");
    let a = Channel::open_or_create(&n, &config()).unwrap();
    Segment::unlink(&n);
    assert!(a.description().is_empty());
}

#[test]
fn oversized_descriptions_are_refused() {
    assert!(Layout::described(config(), MAX_DESCRIPTION + 1).is_err());
    let n = name("oversized");
    let err = Channel::open_or_create_described(&n, &config(), &vec![b'x'; MAX_DESCRIPTION + 1])
        .unwrap_err();
    assert!(matches!(err, OpenError::Config(_)), "{err}");
}

#[test]
fn bytes_sent_counts_inline_and_chunk_payloads() {
    let n = name("bytes");
    let chan = Channel::open_or_create(&n, &config()).unwrap();
    Segment::unlink(&n);
    let mut port = PublisherPort::join(&chan).unwrap();
    port.send_inline(&[1u8; 12]).unwrap();
    let loan = port.loan_chunk().expect("a free chunk");
    port.send_chunk(loan, 200).unwrap();
    let snap = chan.snapshot();
    assert_eq!(snap.publishers.len(), 1);
    assert_eq!(snap.publishers[0].sent, 2);
    assert_eq!(snap.publishers[0].bytes_sent, 212);
}
