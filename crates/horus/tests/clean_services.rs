//! `horus::clean::clean_stale` on services: the table, request channel and
//! response channels of a service whose server and client processes were
//! killed are removed; a service with a live server or client is kept, and
//! the read-only snapshot (`horus::list_services`) shows who is alive.

mod common;

use std::path::{Path, PathBuf};
use std::time::Duration;

use common::{enter_peer, peer_ns, report, unique_ns, Peer};
use horus::clean::{clean_stale, SegmentFate};
use horus::Service;

horus::message! {
    /// Two numbers to add.
    pub struct Add: "horus-test/CleanAdd", version 1 {
        /// First term.
        pub a: i64,
        /// Second term.
        pub b: i64,
    }
}

horus::message! {
    /// Their sum.
    pub struct Sum: "horus-test/CleanSum", version 1 {
        /// a + b.
        pub sum: i64,
    }
}

fn open(ns: &str, name: &str) -> Service<Add, Sum> {
    Service::builder(name).namespace(ns).open().unwrap()
}

/// Every file of the namespace in `/dev/shm`.
fn files_of(ns: &str) -> Vec<PathBuf> {
    let prefix = format!("horus.{ns}.");
    let mut v: Vec<PathBuf> = std::fs::read_dir("/dev/shm")
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().starts_with(&prefix))
        .map(|e| e.path())
        .collect();
    v.sort();
    v
}

fn table_path(ns: &str, name: &str) -> PathBuf {
    let shm = horus_shm::name::segment_name(ns, "sv", name).unwrap();
    PathBuf::from(format!("/dev/shm{shm}"))
}

/// Dispatches peer roles; does nothing in a normal test run.
#[test]
fn peer() {
    let Some((role, _args)) = enter_peer() else {
        return;
    };
    assert_eq!(role, "service");
    // A server and a client that has made one call, then wait to be killed.
    let service = open(&peer_ns(), "orphan/add");
    let mut server = service.server().unwrap();
    let mut client = service.client().unwrap();
    let pending = client.call_async(&Add { a: 1, b: 2 }).unwrap();
    let request = server.recv();
    let sum = request.a + request.b;
    request.reply(&Sum { sum }).unwrap();
    assert_eq!(pending.wait(Duration::from_secs(60)).unwrap().sum, 3);
    report("ready");
    common::command();
}

#[test]
fn clean_removes_the_segments_of_a_killed_service_and_keeps_a_live_one() {
    let ns = unique_ns("cleansvc");
    let mut peer = Peer::spawn(&ns, "service", &[]);
    peer.expect("ready");
    let live = open(&ns, "live/add");
    let _live_server = live.server().unwrap();

    // While the peer lives, its service is listed with live endpoints and
    // clean keeps everything.
    let listed = horus::list_services(&ns).unwrap();
    let names: Vec<&str> = listed.iter().map(|l| l.name.as_str()).collect();
    assert_eq!(names, ["live/add", "orphan/add"]);
    let orphan = listed[1].snapshot.as_ref().unwrap();
    assert_eq!(orphan.request_type, "horus-test/CleanAdd v1");
    assert_eq!(orphan.response_type, "horus-test/CleanSum v1");
    assert_eq!((orphan.clients.len(), orphan.servers.len()), (1, 1));
    assert!(orphan.clients[0].alive && orphan.servers[0].alive);
    assert_eq!(orphan.clients[0].stats.calls, 1);
    assert_eq!(orphan.servers[0].stats.replied, 1);
    let before = files_of(&ns);
    let report = clean_stale(&ns).unwrap();
    assert_eq!(report.removed(), 0, "{report:?}");
    assert_eq!(files_of(&ns), before);

    // Killed: the table, request channel and response channel stay behind,
    // and the snapshot shows the endpoints dead (without reclaiming them).
    let pid = peer.pid();
    peer.kill9();
    let orphan_files: Vec<PathBuf> = files_of(&ns)
        .into_iter()
        .filter(|p| p.to_string_lossy().contains("orphan~add"))
        .collect();
    assert_eq!(orphan_files.len(), 3, "sv, sq and one sr: {orphan_files:?}");
    for _ in 0..2 {
        let listed = horus::list_services(&ns).unwrap();
        let orphan = listed[1].snapshot.as_ref().unwrap();
        assert_eq!(orphan.servers[0].pid, pid);
        assert!(!orphan.servers[0].alive && !orphan.clients[0].alive);
    }

    // Clean removes all three; the live service is kept.
    let report = clean_stale(&ns).unwrap();
    let fate = |path: &Path| {
        report
            .services
            .iter()
            .find(|r| r.path == path)
            .map(|r| r.fate.clone())
    };
    assert_eq!(
        fate(&table_path(&ns, "orphan/add")),
        Some(SegmentFate::Removed)
    );
    assert_eq!(
        fate(&table_path(&ns, "live/add")),
        Some(SegmentFate::Live {
            publishers: 0,
            subscribers: 1
        })
    );
    for f in &orphan_files {
        assert!(!f.exists(), "{} left behind", f.display());
    }
    assert!(table_path(&ns, "live/add").exists());
    // Table, request channel and the dead client's response channel.
    assert_eq!(report.removed(), 3, "{report:?}");

    // A fresh service of the same name works afterwards.
    let again = open(&ns, "orphan/add");
    let mut server = again.server().unwrap();
    let mut client = again.client().unwrap();
    let pending = client.call_async(&Add { a: 2, b: 2 }).unwrap();
    let request = server.recv();
    let sum = request.a + request.b;
    request.reply(&Sum { sum }).unwrap();
    assert_eq!(pending.wait(Duration::from_secs(60)).unwrap().sum, 4);
    drop((client, server, again, _live_server, live));
    assert_eq!(files_of(&ns), Vec::<PathBuf>::new());
}

#[test]
fn clean_reports_a_garbage_service_table_without_removing_it() {
    let ns = unique_ns("cleansvcjunk");
    let path = table_path(&ns, "junk");
    std::fs::write(&path, vec![0xa5u8; 8192]).unwrap();
    let report = clean_stale(&ns).unwrap();
    let listed = horus::list_services(&ns).unwrap();
    std::fs::remove_file(&path).unwrap();
    assert_eq!(report.services.len(), 1);
    assert!(matches!(
        report.services[0].fate,
        SegmentFate::Unreadable(_)
    ));
    assert_eq!(listed.len(), 1);
    assert!(listed[0].snapshot.is_err());
}

/// Regression guard: a client creates its response channel before it subscribes to it and
/// does not retry if the channel is closed in between, so clean must not remove a young empty
/// response channel (its client may be joining); an old empty one is a dead client's.
#[test]
fn a_young_empty_response_channel_is_kept_and_an_old_one_removed() {
    let ns = unique_ns("cleansvcresp");
    let shm = horus_shm::name::segment_name(&ns, "sr", "math/add/00000000000000ff").unwrap();
    let path = PathBuf::from(format!("/dev/shm{shm}"));
    let config = horus_shm::ChannelConfig {
        schema: [7; horus_shm::SCHEMA_BYTES],
        depth: 4,
        slot_payload: 64,
        max_publishers: 2,
        max_subscribers: 1,
        chunk_size: 0,
        chunks_per_publisher: 0,
        qos_code: 0,
    };
    let chan = horus_shm::Channel::open_or_create(&shm, &config).unwrap();
    drop(chan);
    let report = clean_stale(&ns).unwrap();
    assert_eq!(report.services.len(), 1, "{report:?}");
    assert_eq!(report.services[0].fate, SegmentFate::Initialising);
    assert!(path.exists());

    let f = std::fs::File::options().write(true).open(&path).unwrap();
    f.set_modified(std::time::SystemTime::now() - Duration::from_secs(3600))
        .unwrap();
    let report = clean_stale(&ns).unwrap();
    assert_eq!(report.services[0].fate, SegmentFate::Removed, "{report:?}");
    assert!(!path.exists());
}
