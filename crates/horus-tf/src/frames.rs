//! The frames listing (`horus tf frames`): each frame's parent, kind, span,
//! rate and last writer, read without the lease.

use horus_shm::sync::Ordering;
use horus_shm::ProcessId;

use crate::buffer::FrameInfo;
use crate::history::{self, Kind};
use crate::mem::Mem;
use crate::names::{frame_count, Names};

pub(crate) fn list(mem: &Mem, names: &Names) -> Vec<FrameInfo> {
    names.refresh(mem);
    let frames = frame_count(mem);
    (0..frames).map(|f| one(mem, names, f, frames)).collect()
}

fn one(mem: &Mem, names: &Names, f: u32, frames: u32) -> FrameInfo {
    let mut info = FrameInfo {
        name: names.name_of(mem, f),
        parent: None,
        is_static: false,
        latest_stamp_ns: None,
        earliest_stamp_ns: None,
        samples: 0,
        rate_hz: None,
        writer_pid: None,
        problem: None,
    };
    let kind = match history::kind(mem, f) {
        Ok(k) => k,
        Err(e) => {
            info.problem = Some(e.to_string());
            return info;
        }
    };
    info.is_static = kind == Kind::Static;
    // Relaxed: informational; the pid of whoever wrote last.
    let token = mem.writer(f).load(Ordering::Relaxed);
    if token != 0 {
        info.writer_pid = Some(ProcessId::from_token(token).pid);
    }
    match history::newest(mem, f, frames) {
        Ok(Some(s)) => {
            info.parent = Some(names.name_of(mem, s.parent));
            info.latest_stamp_ns = Some(s.stamp);
        }
        Ok(None) => return info,
        Err(e) => {
            info.problem = Some(e.to_string());
            return info;
        }
    }
    if info.is_static {
        info.samples = 1;
        return info;
    }
    match history::span(mem, f, frames) {
        Ok(Some((earliest, latest, n))) => {
            info.earliest_stamp_ns = Some(earliest);
            info.samples = n;
            if n >= 2 && latest > earliest {
                let secs = (i128::from(latest) - i128::from(earliest)) as f64 / 1e9;
                info.rate_hz = Some((n - 1) as f64 / secs);
            }
        }
        Ok(None) => {}
        Err(e) => info.problem = Some(e.to_string()),
    }
    info
}
