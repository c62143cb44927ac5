//! `horus clean` removes the network bridge's status file when the bridge that wrote it is
//! dead, and keeps a live bridge's.

use std::path::Path;

fn dead_pid() -> u32 {
    let mut c = std::process::Command::new("true").spawn().unwrap();
    let pid = c.id();
    c.wait().unwrap();
    pid
}

#[test]
fn dead_bridges_status_is_removed_live_ones_kept() {
    let ns = format!("clean-bridge-{}", std::process::id());
    let path = format!("/dev/shm/horus.{ns}.bridge");
    let tmp = format!("/dev/shm/horus.{ns}.bridge.{}.tmp", dead_pid());

    std::fs::write(&path, format!("{{\"pid\": {}}}", std::process::id())).unwrap();
    let report = horus::clean::clean_stale(&ns).unwrap();
    assert!(
        report.bridge_status.is_empty(),
        "a live bridge's file is kept"
    );
    assert!(Path::new(&path).exists());

    std::fs::write(&path, format!("{{\"pid\": {}}}", dead_pid())).unwrap();
    std::fs::write(&tmp, "{").unwrap();
    let report = horus::clean::clean_stale(&ns).unwrap();
    assert_eq!(report.bridge_status.len(), 2, "{report:?}");
    assert_eq!(report.removed(), 2);
    assert!(!Path::new(&path).exists() && !Path::new(&tmp).exists());
}
