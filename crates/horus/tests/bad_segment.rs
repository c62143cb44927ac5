//! Bad input from another process (this test binary re-run as a peer, see
//! `common::Peer`): a topic of another type, a segment file filled with
//! garbage, truncated, or created and never initialised, and a message too
//! large for the topic. Each is a typed error — no crash, no hang.

mod common;

use std::io::{Read, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

use common::{command, enter_peer, peer_ns, report, segment_path, unique_ns, within, Peer};
use horus::prelude::*;
use horus::LoanError;
use horus_shm::layout::{LAYOUT_VERSION, MAGIC};
use horus_shm::{OpenError, SegmentError};

/// Bound on any single open: the library waits a couple of seconds for a
/// creator to finish initialising; anything near this bound is a hang.
const OPEN_PATIENCE_S: u64 = 60;

/// Opens `name` as `T` in `ns` on another thread, failing if it hangs.
fn open<T: Message>(ns: &str, name: &str) -> Result<Topic<T>, TopicError> {
    let (ns, name) = (ns.to_owned(), name.to_owned());
    within(OPEN_PATIENCE_S, move || {
        Topic::<T>::builder(&name).namespace(&ns).open()
    })
}

/// The `OpenError` inside a `TopicError::Segment`, or a failure.
fn segment_error<T>(r: Result<Topic<T>, TopicError>) -> OpenError {
    match r {
        Err(TopicError::Segment { source, .. }) => source,
        Err(other) => panic!("expected TopicError::Segment, got {other:?}"),
        Ok(_) => panic!("a bad segment was accepted"),
    }
}

// ---------------------------------------------------------------- peers

/// Dispatches peer roles; does nothing in a normal test run.
#[test]
fn peer() {
    let Some((role, args)) = enter_peer() else {
        return;
    };
    let a: Vec<&str> = args.iter().map(String::as_str).collect();
    match (role.as_str(), a.as_slice()) {
        ("hold_cmdvel", [topic]) => hold_cmdvel(topic),
        ("hold_cloud", [topic]) => hold_cloud(topic),
        ("scribble", [path, mode, len]) => scribble(path, mode, len.parse().unwrap()),
        _ => panic!("unknown peer role {role} {args:?}"),
    }
}

/// Creates a `CmdVel` topic with a publisher and keeps it until told.
fn hold_cmdvel(topic: &str) {
    let t = Topic::<CmdVel>::builder(topic)
        .namespace(&peer_ns())
        .open()
        .unwrap();
    let p = t.publisher().unwrap();
    report("ready");
    command();
    drop(p);
}

/// Creates a `PointCloud` topic allowing 1 KiB tails, subscribes, and on
/// `recv` reports the next cloud's point count, tail length and byte sum.
fn hold_cloud(topic: &str) {
    let t = Topic::<PointCloud>::builder(topic)
        .namespace(&peer_ns())
        .max_tail_bytes(1024)
        .open()
        .unwrap();
    let mut s = t.subscriber().unwrap();
    report("ready");
    while command() == "recv" {
        let m = s.recv_timeout(common::PEER_PATIENCE).expect("cloud");
        let sum: u64 = m.tail().iter().map(|&b| u64::from(b)).sum();
        report(format!("cloud {} {} {sum}", m.num_points, m.tail().len()));
    }
}

fn random_bytes(n: usize) -> Vec<u8> {
    let mut buf = vec![0u8; n];
    std::fs::File::open("/dev/urandom")
        .unwrap()
        .read_exact(&mut buf)
        .unwrap();
    buf
}

/// Damages the file at `path` as another process might:
/// * `random` / `magic` / `magic-v1` — creates it with `len` random bytes,
///   the latter two behind a horus magic (and layout version);
/// * `zeros` — creates it with `len` zero bytes (a creator that died before
///   initialising it); `empty` — creates it with no bytes at all;
/// * `overwrite` — writes random bytes over all of an existing file;
/// * `truncate` — cuts an existing file to `len` bytes.
fn scribble(path: &str, mode: &str, len: u64) {
    let create = || {
        std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(path)
            .unwrap()
    };
    match mode {
        "random" | "magic" | "magic-v1" => {
            let mut bytes = random_bytes(len as usize);
            if mode != "random" {
                bytes[..8].copy_from_slice(&MAGIC.to_le_bytes());
            }
            if mode == "magic-v1" {
                bytes[8..12].copy_from_slice(&LAYOUT_VERSION.to_le_bytes());
            }
            create().write_all(&bytes).unwrap();
        }
        "zeros" => create().set_len(len).unwrap(),
        "empty" => drop(create()),
        "overwrite" => {
            let mut f = std::fs::OpenOptions::new().write(true).open(path).unwrap();
            let size = f.metadata().unwrap().len();
            f.write_all(&random_bytes(size as usize)).unwrap();
        }
        "truncate" => std::fs::OpenOptions::new()
            .write(true)
            .open(path)
            .unwrap()
            .set_len(len)
            .unwrap(),
        _ => panic!("unknown mode {mode}"),
    }
    report("done");
}

/// Runs `scribble` in a peer process and waits for it.
fn scribble_in_peer(ns: &str, path: &str, mode: &str, len: u64) {
    let mut p = Peer::spawn(ns, "scribble", &[path, mode, &len.to_string()]);
    p.expect("done");
    p.finish();
}

/// Removes a test's damaged file.
fn remove(path: &str) {
    let _ = std::fs::remove_file(path);
}

// ---------------------------------------------------------------- schema

#[test]
fn schema_mismatch_between_processes_names_both_types() {
    let ns = unique_ns("schema");
    let mut holder = Peer::spawn(&ns, "hold_cmdvel", &["mix"]);
    holder.expect("ready");
    match open::<Imu>(&ns, "mix") {
        Err(TopicError::SchemaMismatch {
            topic,
            expected,
            found,
        }) => {
            assert_eq!(topic, "mix");
            assert!(expected.contains("horus/Imu"), "{expected}");
            assert!(found.contains("horus/CmdVel"), "{found}");
        }
        Err(other) => panic!("expected SchemaMismatch, got {other:?}"),
        Ok(_) => panic!("opened a CmdVel topic as Imu"),
    }
    // The right type still works across the same processes.
    let t = open::<CmdVel>(&ns, "mix").unwrap();
    let s = t.subscriber().unwrap();
    assert_eq!(s.publishers(), 1);
    drop((s, t));
    holder.tell("exit");
    holder.finish();
    assert!(!Path::new(&segment_path(&ns, "mix")).exists());
}

// ---------------------------------------------------------------- garbage

#[test]
fn garbage_file_is_rejected_as_not_a_horus_segment() {
    let ns = unique_ns("garbage");
    let path = segment_path(&ns, "junk");
    scribble_in_peer(&ns, &path, "random", 64 * 1024);
    let err = segment_error(open::<CmdVel>(&ns, "junk"));
    assert!(matches!(err, OpenError::BadMagic { .. }), "{err:?}");
    // Asking again gives the same answer (nothing was half-repaired).
    let err = segment_error(open::<PointCloud>(&ns, "junk"));
    assert!(matches!(err, OpenError::BadMagic { .. }), "{err:?}");
    remove(&path);
}

#[test]
fn garbage_behind_a_valid_magic_is_rejected_as_corrupt_or_other_version() {
    let ns = unique_ns("garbagemagic");
    let path = segment_path(&ns, "junk");
    scribble_in_peer(&ns, &path, "magic", 64 * 1024);
    let err = segment_error(open::<CmdVel>(&ns, "junk"));
    assert!(
        matches!(err, OpenError::Version { found, .. } if found != LAYOUT_VERSION),
        "{err:?}"
    );
    remove(&path);

    scribble_in_peer(&ns, &path, "magic-v1", 64 * 1024);
    let err = segment_error(open::<CmdVel>(&ns, "junk"));
    assert!(matches!(err, OpenError::Corrupt { .. }), "{err:?}");
    remove(&path);
}

#[test]
fn garbage_written_over_a_live_segment_is_rejected_by_new_openers() {
    let ns = unique_ns("overwrite");
    let path = segment_path(&ns, "live");
    let mut holder = Peer::spawn(&ns, "hold_cmdvel", &["live"]);
    holder.expect("ready");
    scribble_in_peer(&ns, &path, "overwrite", 0);
    let err = segment_error(open::<CmdVel>(&ns, "live"));
    assert!(matches!(err, OpenError::BadMagic { .. }), "{err:?}");
    // The holder's mapping now holds garbage too; it is killed rather than
    // left to act on it (what a live endpoint does with a scribbled-over
    // segment is not this test's subject).
    holder.kill9();
    remove(&path);
}

// ---------------------------------------------------------------- truncated

/// Creates a valid `CmdVel` topic in one process, truncates its file to
/// `len` bytes from another, and opens it here. The holder never touches
/// its mapping again (access past the new end would be SIGBUS) and is
/// killed.
fn open_truncated(len: u64) -> OpenError {
    let ns = unique_ns(&format!("trunc{len}"));
    let path = segment_path(&ns, "cut");
    let mut holder = Peer::spawn(&ns, "hold_cmdvel", &["cut"]);
    holder.expect("ready");
    let full = std::fs::metadata(&path).unwrap().len();
    assert!(full > len, "segment of {full} bytes");
    scribble_in_peer(&ns, &path, "truncate", len);
    assert_eq!(std::fs::metadata(&path).unwrap().len(), len);
    let err = segment_error(open::<CmdVel>(&ns, "cut"));
    holder.kill9();
    remove(&path);
    err
}

#[test]
fn segment_truncated_past_its_header_is_corrupt() {
    let err = open_truncated(4096);
    match err {
        OpenError::Corrupt { reason, .. } => assert!(reason.contains("4096"), "{reason}"),
        other => panic!("expected Corrupt, got {other:?}"),
    }
}

#[test]
fn segment_truncated_into_its_header_is_truncated() {
    for len in [200, 0] {
        let err = open_truncated(len);
        assert!(
            matches!(err, OpenError::Segment(SegmentError::Truncated { actual, .. }) if actual == len),
            "{len}: {err:?}"
        );
    }
}

// ---------------------------------------------------------------- never initialised

#[test]
fn empty_file_left_by_another_process_is_a_typed_error_not_a_hang() {
    let ns = unique_ns("empty");
    let path = segment_path(&ns, "void");
    scribble_in_peer(&ns, &path, "empty", 0);
    let err = segment_error(open::<CmdVel>(&ns, "void"));
    assert!(
        matches!(
            err,
            OpenError::Segment(SegmentError::Truncated { actual: 0, .. })
        ),
        "{err:?}"
    );
    remove(&path);
}

#[test]
fn zeroed_file_never_initialised_is_a_typed_error_not_a_hang() {
    let ns = unique_ns("zeros");
    let path = segment_path(&ns, "void");
    scribble_in_peer(&ns, &path, "zeros", 64 * 1024);
    let err = segment_error(open::<CmdVel>(&ns, "void"));
    assert!(matches!(err, OpenError::NotInitialized(_)), "{err:?}");
    remove(&path);
}

// ---------------------------------------------------------------- oversized

#[test]
fn message_larger_than_the_topic_allows_is_refused_and_one_that_fits_arrives() {
    let ns = unique_ns("oversized");
    let mut reader = Peer::spawn(&ns, "hold_cloud", &["cloud"]);
    reader.expect("ready");
    // Opened with defaults, the topic adopts the creator's 1 KiB limit.
    let t = open::<PointCloud>(&ns, "cloud").unwrap();
    let mut p = t.publisher().unwrap();
    assert_eq!(p.max_tail(), 1024);
    assert_eq!(
        p.loan_slice(1025).err(),
        Some(LoanError::TooLarge {
            requested: 1025,
            max: 1024
        })
    );
    // Asking for a larger limit explicitly is a QoS mismatch, not a resize.
    let err = Topic::<PointCloud>::builder("cloud")
        .namespace(&ns)
        .max_tail_bytes(2048)
        .open()
        .err();
    assert!(
        matches!(err, Some(TopicError::QosMismatch { .. })),
        "{err:?}"
    );
    // The largest message that fits crosses intact.
    let header = PointCloud::new(64, true);
    assert_eq!(header.tail_len(), 1024);
    let mut m = p.loan_slice(1024).unwrap();
    *m = header;
    m.tail_mut().fill(3);
    assert_eq!(m.send().unwrap().subscribers, 1);
    reader.tell("recv");
    assert_eq!(reader.expect("cloud"), "64 1024 3072");
    reader.tell("exit");
    reader.finish();
    drop((p, t));
    assert!(!Path::new(&segment_path(&ns, "cloud")).exists());
}
