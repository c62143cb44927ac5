//! `horus play` and `horus bag info` on crafted MCAP files: a clean exit with status 1 and a
//! message naming the file, the chunk's offset and what is wrong — never a signal. (Truncated
//! files: `damaged_recordings_are_errors_naming_the_file_and_offset` in `record.rs`.)

#[path = "../../horus-record/tests/support/hostile_mcap.rs"]
mod hostile_mcap;

use std::os::unix::process::ExitStatusExt;
use std::path::PathBuf;
use std::process::Command;

fn ns(tag: &str) -> String {
    format!("cli-hostile-{}-{tag}", std::process::id())
}

fn file(tag: &str, bytes: &[u8]) -> PathBuf {
    // Scratch in cargo's CARGO_TARGET_TMPDIR (the build directory), not /tmp.
    let d = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("horus-cli-hostile-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    let p = d.join(format!("{tag}.mcap"));
    std::fs::write(&p, bytes).unwrap();
    p
}

/// Runs `play` and `bag info` on `path`: both exit 1 (no signal) with `expect` on stderr.
fn both_verbs_fail_cleanly(tag: &str, path: &PathBuf, expect: &str) {
    let ns = ns(tag);
    for args in [vec!["bag", "info"], vec!["play", "--no-keys"]] {
        let out = Command::new(env!("CARGO_BIN_EXE_horus"))
            .env("HORUS_NAMESPACE", &ns)
            .args(&args)
            .arg(path)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(
            out.status.signal(),
            None,
            "{args:?} died of a signal: {err}"
        );
        assert_eq!(out.status.code(), Some(1), "{args:?}: {err}");
        assert!(
            err.contains(&format!("{tag}.mcap: chunk at offset 8: ")) && err.contains(expect),
            "{args:?}: {err}"
        );
    }
    let left: Vec<String> = std::fs::read_dir("/dev/shm")
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| n.contains(&ns))
        .collect();
    assert!(left.is_empty(), "{left:?}");
}

#[test]
fn chunk_record_claiming_2_pow_40_bytes_exits_cleanly_from_play_and_bag_info() {
    // Both verbs died of SIGABRT: the chunk reader reserved the 2^40 bytes.
    let p = file(
        "claims",
        &hostile_mcap::chunk_with_message_claiming(1 << 40),
    );
    both_verbs_fail_cleanly("claims", &p, "claims 1099511627776 bytes");
}

#[test]
fn decompression_bomb_header_exits_cleanly_from_play_and_bag_info() {
    let p = file(
        "bomb",
        &hostile_mcap::chunk_declaring_uncompressed(128 << 20),
    );
    both_verbs_fail_cleanly("bomb", &p, "decompression bomb");
    let p = file("huge", &hostile_mcap::chunk_declaring_uncompressed(1 << 40));
    both_verbs_fail_cleanly("huge", &p, "more than the limit");
}
