//! The MCAP read path of `horus play` and `horus bag info` on arbitrary file bytes.
//!
//! The bytes are a whole recording (an anonymous memfd opened through `/proc/self/fd`, so
//! nothing is left behind). `RecordingInfo::read` (the summary, or a scan) and a
//! `RecordingReader` reading every message and decoding it back to horus bytes must return
//! values or a typed `ReadError`: no panic, no abort (a chunk record claiming 2^40 bytes
//! used to make the `mcap` crate reserve them), no hang, and no allocation beyond the
//! limits of `horus_record::chunk` (libFuzzer's -rss_limit_mb catches those). A ROS-typed
//! channel's type is rebuilt from the file's definition as `horus play` does
//! (`Ros2Channel::ros2_type`: horus_idl parses and resolves it, the hash is checked).
#![no_main]

use horus_fuzz::file_input::with_file;
use horus_record::{RecordingInfo, RecordingReader};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    with_file(data, |path| {
        match RecordingInfo::read(path) {
            Ok(info) => {
                let _ = format!("{info:?}");
            }
            Err(e) => {
                let _ = e.to_string();
            }
        }
        let Ok(mut r) = RecordingReader::open(path) else {
            return;
        };
        let mut bytes = Vec::new();
        loop {
            match r.next_message() {
                Ok(Some(m)) => {
                    // Every message comes from bytes of the file.
                    assert!(m.cdr.len() <= data.len() * 65536 + 64);
                    if let Some(Ok(())) = r.horus_bytes(&m, &mut bytes) {
                        let _ = bytes.len();
                    }
                }
                Ok(None) => break,
                Err(e) => {
                    let _ = e.to_string();
                    break;
                }
            }
        }
        // ROS-typed channels: the type `horus play` would publish (the file's definition read
        // and resolved by horus_idl, its RIHS01 hash checked against the stated one).
        for c in r.channels() {
            if let Some(Ok(ros)) = &c.ros2 {
                match ros.ros2_type() {
                    Ok(ty) => assert_eq!(ty.type_name, ros.name),
                    Err(e) => {
                        let _ = e.to_string();
                    }
                }
            }
        }
    });
});
