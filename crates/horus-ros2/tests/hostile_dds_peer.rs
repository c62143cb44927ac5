//! A DDS peer that sends what no ROS 2 node would: a string whose length claims 4 GiB, a
//! truncated message, big-endian CDR, a message larger than the topic takes, DATA_FRAGs
//! announcing samples of gigabytes, more large samples than a reader may reassemble at
//! once, a sample cut into 1-byte fragments, or fragments that do not fit their sample. The
//! bridge drops each one, counts it (`malformed`, `oversize`, the DDS fragment refusals),
//! keeps running within bounded memory, and carries the valid message that follows. The peer is RustDDS in its own process (this test binary re-executed), in a
//! network namespace with only `lo`; its DATA_FRAGs are raw RTPS datagrams sent in the name
//! of its own (matched) writer.

mod common;
#[path = "common/raw_dds_peer.rs"]
mod raw_dds_peer;
#[path = "common/raw_rtps.rs"]
mod raw_rtps;

use bytes::Bytes;
use common::{World, PATIENCE};
use horus::inspect::{open_or_create_ros_topic, ros_qos};
use horus_ros2::raw::{PassThrough, WireCdr};
use horus_ros2::Direction;
use horus_ros_msgs::std_msgs::msg::String as RosString;
use raw_dds_peer::{Delivery, RawDdsPeer, INT32_TYPE, STRING_TYPE, VALID_STRING};
use rustdds::no_key::SerializerAdapter;
use rustdds::RepresentationIdentifier;

bridge_process_test!();

/// Set in the hostile peer child: the DDS topic it writes.
const HOSTILE_ENV: &str = "HORUS_ROS2_TEST_HOSTILE";

/// Set in the other-type peer child: the DDS topic it writes as `Int32_`.
const OTHER_TYPE_ENV: &str = "HORUS_ROS2_TEST_OTHER_TYPE";

/// Set in the DATA_FRAG peer child: the DDS topic it writes.
const DATA_FRAG_ENV: &str = "HORUS_ROS2_TEST_DATA_FRAG";

/// Writes whatever bytes it is given, declared big-endian CDR.
struct BigEndian;

impl SerializerAdapter<WireCdr> for BigEndian {
    type Error = std::convert::Infallible;
    fn output_encoding() -> RepresentationIdentifier {
        RepresentationIdentifier::CDR_BE
    }
    fn to_bytes(value: &WireCdr) -> Result<Bytes, Self::Error> {
        Ok(value.0.slice(4..))
    }
}

/// The hostile peer: writes the bad payloads, then the valid one, on transient-local
/// writers (so the bridge's reader gets them whenever it matches: RustDDS 0.15 cannot say
/// when a writer matched); runs until stdin closes.
#[test]
fn hostile_peer_process() {
    let Ok(topic_name) = std::env::var(HOSTILE_ENV) else {
        return;
    };
    let peer = RawDdsPeer::new(&topic_name, STRING_TYPE, Delivery::ReliableLatched);
    let le = peer.writer::<PassThrough>();
    let be = peer.writer::<BigEndian>();
    println!("hostile: ready");
    let huge_len = [0, 1, 0, 0, 0xf0, 0xff, 0xff, 0xff, b'x', 0];
    let truncated = [0, 1, 0, 0, 9, 0, 0, 0, b'a', b'b'];
    let mut oversize = vec![0, 1, 0, 0];
    let n: u32 = 64 * 1024;
    oversize.extend_from_slice(&n.to_le_bytes());
    oversize.resize(8 + n as usize, b'z');
    *oversize.last_mut().unwrap() = 0;
    for bad in [&huge_len[..], &truncated[..], &oversize[..]] {
        le.write(WireCdr(Bytes::copy_from_slice(bad)), None)
            .unwrap();
    }
    be.write(WireCdr(Bytes::from_static(&VALID_STRING)), None)
        .unwrap();
    le.write(WireCdr(Bytes::from_static(&VALID_STRING)), None)
        .unwrap();
    println!("hostile: sent");
    let _ = std::io::stdin().lines().count();
}

#[test]
fn malformed_and_oversize_payloads_are_dropped_counted_and_the_bridge_keeps_running() {
    if let Some(why) = common::skip_reason() {
        eprintln!("SKIPPED: {why}");
        return;
    }
    let w = World::new("hostile");
    let ty = common::ros2_type::<RosString>();
    // Room for 16 KiB messages: the 64 KiB one is oversize.
    let v = open_or_create_ros_topic(&w.namespace, "demo/h", &ty, &ros_qos(16 * 1024)).unwrap();
    let mut r = v.ros_subscriber(true).unwrap();
    let bridge = w.bridge();
    let peer = w.spawn_self("hostile_peer_process", HOSTILE_ENV, "rt/demo/h");
    peer.expect_line("hostile: sent");
    let s = r
        .recv_timeout(PATIENCE)
        .expect("the valid message after the bad ones");
    assert_eq!(s.cdr(), &VALID_STRING[..]);
    drop(s);
    let st = common::wait_status(&w.namespace, "the bad payloads counted", |s| {
        s.topics.iter().any(|t| {
            let c = &t.counters;
            t.direction == Direction::FromRos
                && c.malformed >= 3
                && c.oversize >= 1
                && c.messages >= 1
        })
    });
    let t = st
        .topics
        .iter()
        .find(|t| t.direction == Direction::FromRos)
        .unwrap();
    assert_eq!(t.counters.malformed, 3, "{t:?}"); // huge length, truncated, big-endian
    assert_eq!(t.counters.oversize, 1, "{t:?}");
    assert_eq!(t.counters.messages, 1, "{t:?}");
    assert!(r.try_recv().is_none(), "only the valid message crossed");
    peer.stop();
    bridge.stop();
    drop(r);
    v.unlink_if_unused();
    assert_eq!(w.leftovers(), Vec::<String>::new());
}

/// The other-type peer: writes a valid `std_msgs/String` "ok" declared as
/// `std_msgs::msg::dds_::Int32_` every 20 ms (a volatile reader gets only what follows its
/// match) until stdin closes.
#[test]
fn other_type_peer_process() {
    let Ok(topic_name) = std::env::var(OTHER_TYPE_ENV) else {
        return;
    };
    let peer = RawDdsPeer::new(&topic_name, INT32_TYPE, Delivery::Reliable);
    let w = peer.writer::<PassThrough>();
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let s2 = stop.clone();
    std::thread::spawn(move || {
        let _ = std::io::stdin().lines().count();
        s2.store(true, std::sync::atomic::Ordering::Relaxed);
    });
    println!("other: ready");
    while !stop.load(std::sync::atomic::Ordering::Relaxed) {
        let _ = w.write(WireCdr(Bytes::from_static(&VALID_STRING)), None);
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

/// DDS matches a reader with every writer of the topic's name, whatever its type: beside a
/// good writer (rclpy, String), a writer declaring Int32 on the same topic had its samples
/// (valid String bytes) carried into the String topic although the status said refused.
#[test]
fn other_type_writer_beside_a_good_one_is_dropped_and_counted_refused() {
    if let Some(why) = common::skip_reason() {
        eprintln!("SKIPPED: {why}");
        return;
    }
    let w = World::new("othertype");
    let ty = common::ros2_type::<RosString>();
    let v = open_or_create_ros_topic(&w.namespace, "demo/o", &ty, &ros_qos(4096)).unwrap();
    let mut r = v.ros_subscriber(true).unwrap();
    let bridge = w.bridge();
    let peer = w.spawn_self("other_type_peer_process", OTHER_TYPE_ENV, "rt/demo/o");
    let good = w.rclpy("pub", &["/demo/o:std_msgs/msg/String"]);
    let (_, sent) = common::line_bytes(&good.next_line("sent "));
    let s = r
        .recv_timeout(PATIENCE)
        .expect("nothing from the String writer");
    assert!(
        s.cdr() == &sent[..],
        "the first message is not the String writer's"
    );
    drop(s);
    // The Int32 writer's samples reached the bridge's reader: dropped, counted refused. The
    // status file is written now and then: one from before the String was counted may
    // already show 3 refused (seen under a parallel test run: messages 0, refused 19).
    let st = common::wait_status(&w.namespace, "the other type's samples refused", |s| {
        s.topics.iter().any(|t| {
            t.direction == Direction::FromRos && t.counters.refused >= 3 && t.counters.messages >= 1
        })
    });
    let t = st
        .topics
        .iter()
        .find(|t| t.direction == Direction::FromRos)
        .unwrap();
    assert_eq!(t.counters.messages, 1, "{t:?}");
    assert!(r.try_recv().is_none(), "the other type's sample crossed");
    good.stop();
    peer.stop();
    bridge.stop();
    drop(r);
    v.unlink_if_unused();
    assert_eq!(w.leftovers(), Vec::<String>::new());
}

/// The DATA_FRAG peer: a reliable, transient-local writer of `std_msgs/String` that first
/// writes "ok" (so that the test sees the bridge's reader matched it), then obeys its stdin:
/// `frags SAMPLE_SIZE COUNT FIRST_SN FRAGMENT_SIZE` sends COUNT raw DATA_FRAG datagrams in
/// its writer's name, each the first fragment (FRAGMENT_SIZE bytes) of a sample announcing
/// SAMPLE_SIZE bytes, sequence numbers from FIRST_SN on; `misfits COUNT FIRST_SN` sends, for
/// COUNT sequence numbers from FIRST_SN on, the first fragment of a 4096-byte sample in
/// 1024-byte fragments, then [`MISFITS_PER_SAMPLE`] second fragments that do not fit it; `write
/// BYTES` writes a valid string of BYTES characters.
#[test]
fn data_frag_peer_process() {
    let Ok(topic_name) = std::env::var(DATA_FRAG_ENV) else {
        return;
    };
    let peer = RawDdsPeer::new(&topic_name, STRING_TYPE, Delivery::ReliableLatched);
    let w = peer.writer::<PassThrough>();
    w.write(WireCdr(Bytes::from_static(&VALID_STRING)), None)
        .unwrap();
    let domain: u16 = std::env::var("ROS_DOMAIN_ID").unwrap().parse().unwrap();
    let guid = rustdds::RTPSEntity::guid(&w).to_bytes();
    let socket = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    println!("frags: ready");
    for line in std::io::stdin().lines() {
        let line = line.unwrap();
        let words: Vec<&str> = line.split(' ').collect();
        match words[..] {
            ["frags", size, count, first, fragment] => {
                let (size, count, first): (u32, u32, u32) = (
                    size.parse().unwrap(),
                    count.parse().unwrap(),
                    first.parse().unwrap(),
                );
                let fragment: u16 = fragment.parse().unwrap();
                for sn in first..first + count {
                    let datagram = data_frag_datagram(&guid, sn, size, fragment);
                    // Every participant's user unicast port in the domain (RTPS 9.6.1.3:
                    // 7400 + 250 d + 11 + 2 p): the bridge is one of the first few.
                    for p in 0..8u16 {
                        let port = 7400 + 250 * domain + 11 + 2 * p;
                        let _ = socket.send_to(&datagram, ("127.0.0.1", port));
                    }
                }
                println!("frags: sent");
            }
            ["misfits", count, first] => {
                let (count, first): (u32, u32) = (count.parse().unwrap(), first.parse().unwrap());
                for sn in first..first + count {
                    let mut datagrams = vec![data_frag_datagram(&guid, sn, 4096, 1024)];
                    // Fragment 2 announcing another fragment size, another sample size, and
                    // with 100 of its 1024 bytes.
                    for (size, fragment, payload) in
                        [(4096, 512, 512), (8192, 1024, 1024), (4096, 1024, 100)]
                    {
                        datagrams
                            .push(data_frag_datagram_at(&guid, sn, 2, size, fragment, payload));
                    }
                    for datagram in datagrams {
                        for p in 0..8u16 {
                            let port = 7400 + 250 * domain + 11 + 2 * p;
                            let _ = socket.send_to(&datagram, ("127.0.0.1", port));
                        }
                    }
                }
                println!("frags: sent");
            }
            ["bfrags", size, count, first, fragment] => {
                // DATA_FRAGs from a participant nobody discovered, in its SEDP publications
                // writer's name, to the SEDP publications reader of every participant.
                let (size, count, first): (u32, u32, u32) = (
                    size.parse().unwrap(),
                    count.parse().unwrap(),
                    first.parse().unwrap(),
                );
                let fragment: u16 = fragment.parse().unwrap();
                for sn in first..first + count {
                    let datagram = stranger_discovery_data_frag(sn, size, fragment);
                    for p in 0..8u16 {
                        // Metatraffic (7400 + 250 d + 10 + 2 p) and user unicast ports.
                        for offset in [10, 11] {
                            let port = 7400 + 250 * domain + offset + 2 * p;
                            let _ = socket.send_to(&datagram, ("127.0.0.1", port));
                        }
                    }
                }
                println!("frags: sent");
            }
            ["write", bytes] => {
                let n: usize = bytes.parse().unwrap();
                w.write(WireCdr(Bytes::from(valid_string_of(n))), None)
                    .unwrap();
                println!("frags: wrote");
            }
            _ => panic!("data_frag_peer_process: {line:?}"),
        }
    }
}

/// A valid `std_msgs/String` of `n` `a`s (CDR little-endian, encapsulation header first).
fn valid_string_of(n: usize) -> Vec<u8> {
    let mut m = vec![0, 1, 0, 0];
    m.extend_from_slice(&u32::try_from(n + 1).unwrap().to_le_bytes());
    m.resize(8 + n, b'a');
    m.push(0);
    m
}

/// One RTPS datagram from the writer `guid` (its 12-byte prefix, then its entity id) with
/// one DATA_FRAG (RTPS 9.4.5.4): to every reader matching that writer (readerId unknown),
/// sequence number `sn`, fragment 1 of a sample of `sample_size` bytes in fragments of
/// `fragment` bytes, carrying that fragment's bytes (an encapsulation header, then zeros).
fn data_frag_datagram(guid: &[u8; 16], sn: u32, sample_size: u32, fragment: u16) -> Vec<u8> {
    data_frag_datagram_at(guid, sn, 1, sample_size, fragment, usize::from(fragment))
}

/// As [`data_frag_datagram`], from a participant nobody discovered (GUID prefix 0x42…), in
/// the name of its SEDP publications writer (entity 0x000003c2), addressed to the SEDP
/// publications reader (0x000003c7): built-in readers take DATA_FRAGs from anyone.
fn stranger_discovery_data_frag(sn: u32, sample_size: u32, fragment: u16) -> Vec<u8> {
    let mut stranger = [0x42u8; 16];
    stranger[12..].copy_from_slice(&[0, 0, 3, 0xc2]);
    let mut datagram = data_frag_datagram(&stranger, sn, sample_size, fragment);
    // readerId: after the RTPS header (20), the submessage header (4), extraFlags (2) and
    // octetsToInlineQos (2).
    datagram[28..32].copy_from_slice(&[0, 0, 3, 0xc7]);
    datagram
}

/// Second fragments of a sample [`data_frag_peer_process`]'s `misfits` sends for each
/// sequence number, none fitting it.
const MISFITS_PER_SAMPLE: u32 = 3;

/// As [`data_frag_datagram`], for fragment number `start`, carrying `payload` bytes (an
/// encapsulation header when `start` is 1, then zeros) whatever `fragment` says.
fn data_frag_datagram_at(
    guid: &[u8; 16],
    sn: u32,
    start: u32,
    sample_size: u32,
    fragment: u16,
    payload: usize,
) -> Vec<u8> {
    let mut d = raw_rtps::header(&guid[..12]);
    let mut body = Vec::new();
    body.extend_from_slice(&0u16.to_le_bytes()); // extraFlags
    body.extend_from_slice(&28u16.to_le_bytes()); // octetsToInlineQos: none follows
    body.extend_from_slice(&[0, 0, 0, 0]); // readerId: ENTITYID_UNKNOWN
    body.extend_from_slice(&guid[12..]); // writerId
    body.extend_from_slice(&0i32.to_le_bytes()); // writerSN high
    body.extend_from_slice(&sn.to_le_bytes()); // writerSN low
    body.extend_from_slice(&start.to_le_bytes()); // fragmentStartingNum
    body.extend_from_slice(&1u16.to_le_bytes()); // fragmentsInSubmessage
    body.extend_from_slice(&fragment.to_le_bytes()); // fragmentSize
    body.extend_from_slice(&sample_size.to_le_bytes()); // sampleSize
    let payload_at = body.len();
    body.resize(payload_at + payload, 0);
    if start == 1 {
        if let Some(b) = body.get_mut(payload_at + 1) {
            *b = 1; // CDR_LE
        }
    }
    raw_rtps::push_submessage(&mut d, 0x16, 0x01, &body); // DATA_FRAG, little-endian
    d
}

/// What one run of the DATA_FRAG peer against a bridge saw.
struct FragRun {
    /// The bridge's peak resident memory grew by this much while the fragments arrived.
    peak_growth: u64,
    /// The bridge's status once the refusals were counted.
    refused: horus_ros2::DdsFragmentRefusals,
    /// The CPU time (clock ticks) the bridge used from the DATA_FRAGs until the valid
    /// messages after them had crossed (reported, not asserted).
    cpu_ticks: u64,
}

/// Starts a bridge and the DATA_FRAG peer on `topic`, waits for the peer's "ok" to cross,
/// has it send `count` DATA_FRAGs announcing `sample_size` bytes each in fragments of
/// `fragment` bytes, waits until the
/// bridge counts `expect(refusals)` as done, then has the peer write a valid 200 KiB message
/// (fragmented) and a small one, and checks that both cross and the bridge stops cleanly.
fn run_frags(
    tag: &str,
    sample_size: u32,
    fragment: u16,
    count: u32,
    done: impl Fn(&horus_ros2::DdsFragmentRefusals) -> bool,
) -> FragRun {
    let command = format!("frags {sample_size} {count} 1000 {fragment}");
    run_peer_command(tag, &command, done)
}

/// As [`run_frags`], the peer sending what `command` (a line of its stdin) says.
fn run_peer_command(
    tag: &str,
    command: &str,
    done: impl Fn(&horus_ros2::DdsFragmentRefusals) -> bool,
) -> FragRun {
    let w = World::new(tag);
    let ty = common::ros2_type::<RosString>();
    let horus_topic = format!("demo/{tag}");
    let v =
        open_or_create_ros_topic(&w.namespace, &horus_topic, &ty, &ros_qos(512 * 1024)).unwrap();
    let mut r = v.ros_subscriber(true).unwrap();
    let bridge = w.bridge();
    let mut peer = w.spawn_self(
        "data_frag_peer_process",
        DATA_FRAG_ENV,
        &format!("rt/{horus_topic}"),
    );
    let s = r.recv_timeout(PATIENCE).expect("the peer's first message");
    assert_eq!(s.cdr(), &VALID_STRING[..]);
    drop(s);
    let pid = common::wait_status(&w.namespace, "the bridge's status", |_| true).pid;
    let before = raw_rtps::peak_rss(pid);
    let cpu_before = raw_rtps::cpu_ticks(pid);
    peer.send(command);
    peer.expect_line("frags: sent");
    let st = common::wait_status(&w.namespace, "the DATA_FRAGs refused", |s| {
        done(&s.dds_fragments_refused)
    });
    let after = raw_rtps::peak_rss(pid);
    valid_messages_still_cross(&mut peer, &mut r);
    assert!(std::path::Path::new(&format!("/proc/{pid}")).exists());
    let cpu_ticks = raw_rtps::cpu_ticks(pid) - cpu_before;
    peer.stop();
    bridge.stop();
    drop(r);
    v.unlink_if_unused();
    assert_eq!(w.leftovers(), Vec::<String>::new());
    FragRun {
        peak_growth: after.saturating_sub(before),
        refused: st.dds_fragments_refused,
        cpu_ticks,
    }
}

/// Legitimate traffic still crosses from the DATA_FRAG `peer` to its horus subscriber `r`:
/// a fragmented sample (200 KiB) and an unfragmented one.
fn valid_messages_still_cross(peer: &mut common::Proc, r: &mut horus::inspect::RawRosReader) {
    for n in [200 * 1024, 2] {
        peer.send(&format!("write {n}"));
        peer.expect_line("frags: wrote");
        let s = r
            .recv_timeout(PATIENCE)
            .expect("a valid message after the DATA_FRAGs");
        assert_eq!(s.cdr(), &valid_string_of(n)[..], "message of {n} bytes");
    }
}

/// RustDDS allocated (and zero-filled) the whole sample a DATA_FRAG announces as soon as its
/// first fragment arrived, up to 4 GiB per datagram, for up to 128 sequence numbers per
/// writer: 200 datagrams announcing 3 GiB each would take hundreds of GiB. Now a sample over
/// the reassembly limit (64 MiB) is refused, each fragment counted `oversize`.
#[test]
fn a_data_frag_announcing_a_huge_sample_does_not_allocate_it() {
    if let Some(why) = common::skip_reason() {
        eprintln!("SKIPPED: {why}");
        return;
    }
    let count = 200;
    let run = run_frags("hugefrag", 3 << 30, 1024, count, |f| {
        f.oversize >= u64::from(count)
    });
    eprintln!(
        "bridge peak RSS grew {} KiB; refused {:?}",
        run.peak_growth / 1024,
        run.refused
    );
    assert_eq!(run.refused.oversize, u64::from(count), "{:?}", run.refused);
    assert!(
        run.peak_growth < 64 << 20,
        "the bridge's peak RSS grew {} MiB",
        run.peak_growth >> 20
    );
}

/// Samples under the limit, many at once: 32 sequence numbers announcing 48 MiB each made
/// RustDDS hold 32 zero-filled 48 MiB buffers (1.5 GiB; up to 128 × 4 GiB per writer). Now
/// one reader's samples in reassembly stay within its budget (4 × 64 MiB): five fit, the
/// other 27 are refused and counted `over_budget`, and a valid fragmented sample of the same
/// writer still gets room (a reliable reader gives up the writer's later samples for it).
#[test]
fn data_frags_opening_many_large_samples_stay_within_the_readers_reassembly_budget() {
    if let Some(why) = common::skip_reason() {
        eprintln!("SKIPPED: {why}");
        return;
    }
    let budget = (rustdds::horus_reassembly::BUDGET_IN_MAX_SAMPLES
        * rustdds::horus_reassembly::DEFAULT_MAX_SAMPLE_SIZE) as u64;
    let run = run_frags("budgetfrag", 48 << 20, 1024, 32, |f| f.over_budget >= 27);
    eprintln!(
        "bridge peak RSS grew {} KiB; refused {:?}",
        run.peak_growth / 1024,
        run.refused
    );
    assert_eq!(run.refused.over_budget, 27, "{:?}", run.refused);
    assert_eq!(run.refused.oversize, 0, "{:?}", run.refused);
    assert!(
        run.peak_growth < budget + (32 << 20),
        "the bridge's peak RSS grew {} MiB, its reader's budget is {} MiB",
        run.peak_growth >> 20,
        budget >> 20
    );
}

/// A sample under the size limit cut into 1-byte fragments: RustDDS opened its reassembly,
/// a 64 MiB buffer and a bitmap of 64 M fragments, and listed the missing ones (a 64 M-step
/// scan, each collected into the NACK_FRAG's set) at each HEARTBEAT of the writer, for every
/// such sample the reader's budget held; the writer's assembler also took the tiny fragment
/// size for the writer's later samples while one stayed open. Now a sample in more than one
/// fragment under 256 bytes (RustDDS's own writer uses 256, Cyclone DDS 1344, Fast DDS about
/// 64000) is refused before anything is allocated and counted `too_many_fragments`, and the
/// writer's valid fragmented sample still crosses after.
#[test]
fn a_data_frag_in_one_byte_fragments_opens_no_reassembly_of_64_m_fragments() {
    if let Some(why) = common::skip_reason() {
        eprintln!("SKIPPED: {why}");
        return;
    }
    let count = 50;
    let run = run_frags("tinyfrag", 64 << 20, 1, count, |f| {
        f.too_many_fragments >= u64::from(count)
    });
    eprintln!(
        "bridge peak RSS grew {} KiB, used {} CPU ticks; refused {:?}",
        run.peak_growth / 1024,
        run.cpu_ticks,
        run.refused
    );
    assert_eq!(
        run.refused.too_many_fragments,
        u64::from(count),
        "{:?}",
        run.refused
    );
    assert_eq!(run.refused.over_budget, 0, "{:?}", run.refused);
    assert!(
        run.peak_growth < 64 << 20,
        "the bridge's peak RSS grew {} MiB",
        run.peak_growth >> 20
    );
}

/// What broke: a DATA_FRAG that does not fit its sample (another fragment size or sample
/// size than the sample's first fragment announced, or a payload shorter than the fragment
/// it claims) was refused but only logged: no counter showed a peer sending them. Now each
/// is counted `malformed` in `dds_fragments_refused`, and the writer's valid messages still
/// cross after.
#[test]
fn data_frags_not_fitting_their_sample_are_counted_malformed() {
    if let Some(why) = common::skip_reason() {
        eprintln!("SKIPPED: {why}");
        return;
    }
    let count = 20;
    let want = u64::from(count * MISFITS_PER_SAMPLE);
    let run = run_peer_command("misfitfrag", &format!("misfits {count} 1000"), |f| {
        f.malformed >= want
    });
    eprintln!("refused {:?}", run.refused);
    assert_eq!(run.refused.malformed, want, "{:?}", run.refused);
    let others = horus_ros2::DdsFragmentRefusals {
        malformed: 0,
        expired: 0,
        ..run.refused
    };
    assert!(!others.any(), "{:?}", run.refused);
}

/// What broke: a sample completed from its DATA_FRAGs whose serialized payload is shorter
/// than its 4-byte encapsulation header (one fragment of 1 to 3 bytes) failed to parse and
/// was dropped with only a log line: no counter showed it. Now each is counted `malformed`
/// in `dds_fragments_refused`, nothing else is, and the writer's valid messages cross after.
#[test]
fn a_fragmented_sample_without_an_encapsulation_header_is_counted_malformed() {
    if let Some(why) = common::skip_reason() {
        eprintln!("SKIPPED: {why}");
        return;
    }
    let count = 20;
    let run = run_frags("shortfrag", 3, 3, count, |f| {
        f.malformed >= u64::from(count)
    });
    eprintln!("refused {:?}", run.refused);
    assert_eq!(run.refused.malformed, u64::from(count), "{:?}", run.refused);
    let others = horus_ros2::DdsFragmentRefusals {
        malformed: 0,
        expired: 0,
        ..run.refused
    };
    assert!(!others.any(), "{:?}", run.refused);
}

/// Readers (one topic and one DATA_FRAG peer each) in the process reassembly budget test.
const READERS: u32 = 4;

/// What broke: the reassembly budget was per reader only (256 MiB), so a peer matching many
/// readers (one writer per topic) could make the bridge hold that much in each. Now all the
/// process's readers together hold at most its budget (1 GiB by default; 128 MiB here):
/// four peers, each the matched writer of its own topic, open four 24 MiB samples each
/// (96 MiB per reader, within its budget): five fit the process's 128 MiB, the other eleven
/// are refused and counted `over_process_budget` (none `over_budget`), the bridge's peak RSS
/// grows by less than the process budget (+ slack), and each topic's valid messages cross
/// after.
#[test]
fn data_frags_opening_samples_on_many_readers_stay_within_the_process_reassembly_budget() {
    if let Some(why) = common::skip_reason() {
        eprintln!("SKIPPED: {why}");
        return;
    }
    let budget: u64 = 128 << 20;
    let (sample, per_reader) = (24u32 << 20, 4u32);
    let cost = rustdds::horus_reassembly::BUFFER_OVERHEAD as u64
        + u64::from(sample)
        + u64::from(sample / 1024).div_ceil(8);
    let fit = budget / cost;
    let refused = u64::from(READERS * per_reader) - fit;
    assert_eq!((fit, refused), (5, 11));

    let w = World::new("procbudget");
    let ty = common::ros2_type::<RosString>();
    let mut topics = Vec::new();
    for i in 0..READERS {
        let name = format!("demo/procbudget{i}");
        let v = open_or_create_ros_topic(&w.namespace, &name, &ty, &ros_qos(512 * 1024)).unwrap();
        let r = v.ros_subscriber(true).unwrap();
        topics.push((name, v, r));
    }
    let budget_env = budget.to_string();
    let bridge = w.bridge_with_env(&[(common::MAX_REASSEMBLY_ENV, &budget_env)]);
    let mut peers = Vec::new();
    for (name, _, r) in &mut topics {
        let peer = w.spawn_self(
            "data_frag_peer_process",
            DATA_FRAG_ENV,
            &format!("rt/{name}"),
        );
        let s = r.recv_timeout(PATIENCE).expect("the peer's first message");
        assert_eq!(s.cdr(), &VALID_STRING[..]);
        drop(s);
        peers.push(peer);
    }
    let pid = common::wait_status(&w.namespace, "the bridge's status", |_| true).pid;
    let before = raw_rtps::peak_rss(pid);
    for peer in &mut peers {
        peer.send(&format!("frags {sample} {per_reader} 1000 1024"));
        peer.expect_line("frags: sent");
    }
    let st = common::wait_status(&w.namespace, "the DATA_FRAGs refused", |s| {
        s.dds_fragments_refused.over_process_budget >= refused
    });
    let growth = raw_rtps::peak_rss(pid).saturating_sub(before);
    let f = st.dds_fragments_refused;
    eprintln!("bridge peak RSS grew {} KiB; refused {f:?}", growth / 1024);
    assert_eq!(f.over_process_budget, refused, "{f:?}");
    assert_eq!(f.over_budget, 0, "{f:?}");
    // `unmatched_writer` counts too: RustDDS hands a DATA_FRAG addressed to no reader in
    // particular to every reader that matched a writer of the same entity id, and the four
    // peers' writers share theirs; each other reader refuses it as not its writer's.
    assert!(
        growth < budget + (32 << 20),
        "the bridge's peak RSS grew {} MiB, the process budget is {} MiB",
        growth >> 20,
        budget >> 20
    );
    for (peer, (_, _, r)) in peers.iter_mut().zip(&mut topics) {
        valid_messages_still_cross(peer, r);
    }
    for peer in peers {
        peer.stop();
    }
    bridge.stop();
    for (_, v, r) in topics {
        drop(r);
        v.unlink_if_unused();
    }
    assert_eq!(w.leftovers(), Vec::<String>::new());
}

/// Samples announced in the budget-starvation tests: five of these fit a 128 MiB process
/// budget (5 × (26 830 000 + its fragment bitmap + 256) = 134 167 660 <= 134 217 728 bytes),
/// leaving no room for a 200 KiB sample.
const STARVING_SAMPLE: u32 = 26_830_000;

/// What broke: discovery's built-in readers took DATA_FRAGs from any participant, even one
/// nobody discovered, with the user readers' 64 MiB sample limit, and kept a sample whose
/// fragments stopped coming until that reader's next fragment. Five DATA_FRAGs announcing
/// 26.8 MB samples, from an undiscovered GUID prefix to the bridge's SEDP publications
/// reader, held the whole (128 MiB) process reassembly budget: a matched writer's 200 KiB
/// message never crossed (every fragment of it counted `over_process_budget`). Now built-in
/// readers reassemble at most 64 KiB per sample (`BUILTIN_MAX_SAMPLE_SIZE`): the stranger's
/// fragments are counted `oversize`, nothing is held, and the message crosses without a
/// refusal of its fragments.
#[test]
fn data_frags_to_a_discovery_reader_from_a_stranger_do_not_starve_other_topics() {
    if let Some(why) = common::skip_reason() {
        eprintln!("SKIPPED: {why}");
        return;
    }
    let w = World::new("builtinfrags");
    let ty = common::ros2_type::<RosString>();
    let name = "demo/builtinfrags";
    let v = open_or_create_ros_topic(&w.namespace, name, &ty, &ros_qos(512 * 1024)).unwrap();
    let mut r = v.ros_subscriber(true).unwrap();
    let budget_env = (128u64 << 20).to_string();
    let bridge = w.bridge_with_env(&[(common::MAX_REASSEMBLY_ENV, &budget_env)]);
    let mut peer = w.spawn_self(
        "data_frag_peer_process",
        DATA_FRAG_ENV,
        &format!("rt/{name}"),
    );
    let s = r.recv_timeout(PATIENCE).expect("the peer's first message");
    assert_eq!(s.cdr(), &VALID_STRING[..]);
    drop(s);
    peer.send(&format!("bfrags {STARVING_SAMPLE} 5 1000 1024"));
    peer.expect_line("frags: sent");
    common::wait_status(
        &w.namespace,
        "the stranger's DATA_FRAGs refused oversize",
        |s| s.dds_fragments_refused.oversize >= 5,
    );
    valid_messages_still_cross(&mut peer, &mut r);
    let f = common::wait_status(&w.namespace, "status", |_| true).dds_fragments_refused;
    eprintln!("refused {f:?}");
    assert_eq!(f.over_process_budget, 0, "{f:?}");
    assert_eq!(f.over_budget, 0, "{f:?}");
    peer.stop();
    bridge.stop();
    drop(r);
    v.unlink_if_unused();
    assert_eq!(w.leftovers(), Vec::<String>::new());
}

/// What broke: a sample in reassembly whose fragments stopped coming was given up only when
/// its own reader received another DATA_FRAG (10 s after the sample's last), so a reader
/// that got no more fragments kept its samples, and their share of the process reassembly
/// budget, for ever. Here a matched writer opens five 26.8 MB samples on one topic's reader
/// (the whole 128 MiB budget; a sixth is refused `over_process_budget`) and sends nothing
/// more there; another topic's writer then sends a 200 KiB message, refused while the budget
/// is held. Now every reader gives up its stale samples on a timer: the five are counted
/// `expired`, their budget is given back, and the 200 KiB message (resent by its reliable
/// writer) crosses.
#[test]
fn samples_whose_fragments_stopped_coming_give_the_process_budget_back() {
    if let Some(why) = common::skip_reason() {
        eprintln!("SKIPPED: {why}");
        return;
    }
    let w = World::new("stalefrags");
    let ty = common::ros2_type::<RosString>();
    let mut topics = Vec::new();
    for i in 0..2 {
        let name = format!("demo/stalefrags{i}");
        let v = open_or_create_ros_topic(&w.namespace, &name, &ty, &ros_qos(512 * 1024)).unwrap();
        let r = v.ros_subscriber(true).unwrap();
        topics.push((name, v, r));
    }
    let budget_env = (128u64 << 20).to_string();
    let bridge = w.bridge_with_env(&[(common::MAX_REASSEMBLY_ENV, &budget_env)]);
    let mut peers = Vec::new();
    for (name, _, r) in &mut topics {
        let peer = w.spawn_self(
            "data_frag_peer_process",
            DATA_FRAG_ENV,
            &format!("rt/{name}"),
        );
        let s = r.recv_timeout(PATIENCE).expect("the peer's first message");
        assert_eq!(s.cdr(), &VALID_STRING[..]);
        drop(s);
        peers.push(peer);
    }
    peers[0].send(&format!("frags {STARVING_SAMPLE} 6 1000 1024"));
    peers[0].expect_line("frags: sent");
    let f = common::wait_status(&w.namespace, "the sixth sample refused", |s| {
        s.dds_fragments_refused.over_process_budget >= 1
    })
    .dds_fragments_refused;
    eprintln!("after the six samples: {f:?}");
    let t0 = std::time::Instant::now();
    let n = 200 * 1024;
    peers[1].send(&format!("write {n}"));
    peers[1].expect_line("frags: wrote");
    let s = topics[1]
        .2
        .recv_timeout(PATIENCE)
        .expect("the 200 KiB message once the stale samples expired");
    assert_eq!(s.cdr(), &valid_string_of(n)[..]);
    drop(s);
    let f = common::wait_status(&w.namespace, "the five samples expired", |s| {
        s.dds_fragments_refused.expired >= 5
    })
    .dds_fragments_refused;
    eprintln!("crossed after {:?}; refused {f:?}", t0.elapsed());
    assert!(f.expired >= 5, "{f:?}");
    assert!(
        f.over_process_budget >= 2,
        "the 200 KiB message was refused first: {f:?}"
    );
    for peer in peers {
        peer.stop();
    }
    bridge.stop();
    for (_, v, r) in topics {
        drop(r);
        v.unlink_if_unused();
    }
    assert_eq!(w.leftovers(), Vec::<String>::new());
}
