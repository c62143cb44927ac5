//! A zero-copy view reads a message in place: making it (every count, bound and string
//! checked) and reading every field of it — strings as `&str`, primitive sequences as
//! slices, sequences of strings and of nested structures through `SeqView` iterators —
//! allocates nothing. Counted by a global allocator, on this test's thread only.

// Tests build messages by changing a field or two of the default.
#![allow(clippy::field_reassign_with_default)]

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::hint::black_box;
use std::sync::atomic::{AtomicUsize, Ordering};

use horus_cdr::{encode_message, view_message, CdrBuf, RosMessage};
use horus_ros_msgs::diagnostic_msgs::msg::{DiagnosticArray, DiagnosticStatus, KeyValue};
use horus_ros_msgs::geometry_msgs::msg::{Point, TransformStamped};
use horus_ros_msgs::sensor_msgs::msg::{JointState, LaserScan, PointCloud2, PointField};
use horus_ros_msgs::std_msgs::msg::Header;
use horus_ros_msgs::tf2_msgs::msg::TFMessage;
use horus_ros_msgs::visualization_msgs::msg::{Marker, MarkerArray};

/// The system allocator, counting the allocations (and reallocations) made by a thread
/// while its `COUNTING` flag is set.
struct Counting;

static ALLOCATIONS: AtomicUsize = AtomicUsize::new(0);

thread_local! {
    static COUNTING: Cell<bool> = const { Cell::new(false) };
}

fn note() {
    // `try_with`: no panic while the thread's locals are being torn down.
    if COUNTING.try_with(Cell::get).unwrap_or(false) {
        // Relaxed: a plain event counter, read after the counted code on the same thread.
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
    }
}

// SAFETY: every call is forwarded unchanged to `System`, which upholds `GlobalAlloc`'s
// contract; counting touches only an atomic and a const-initialised thread local (neither
// allocates, so no recursion into the allocator).
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        note();
        // SAFETY: the caller's `layout` is passed on as `GlobalAlloc::alloc` requires.
        unsafe { System.alloc(layout) }
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        note();
        // SAFETY: as `alloc`.
        unsafe { System.alloc_zeroed(layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        note();
        // SAFETY: `ptr` was allocated by this allocator (that is, by `System`) with `layout`.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` was allocated by `System` with `layout`.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// Allocations `f` makes on this thread.
fn allocations_in(f: impl FnOnce()) -> usize {
    let before = ALLOCATIONS.load(Ordering::Relaxed);
    COUNTING.with(|c| c.set(true));
    f();
    COUNTING.with(|c| c.set(false));
    ALLOCATIONS.load(Ordering::Relaxed) - before
}

/// The message's wire bytes (encapsulation header first) in an 8-aligned buffer, as a
/// subscriber finds them in a chunk.
fn wire<M: RosMessage>(m: &M) -> CdrBuf {
    CdrBuf::new(&encode_message(m).expect("encodes"))
}

fn header(frame: &str) -> Header {
    let mut h = Header::default();
    h.frame_id = frame.into();
    h.stamp.sec = 7;
    h
}

#[test]
fn the_counter_sees_an_allocation() {
    // The check below would pass vacuously if the allocator were not counting.
    let n = allocations_in(|| {
        black_box(vec![1u8; 100]);
    });
    assert!(n >= 1, "{n}");
}

#[test]
fn viewing_a_laser_scan_and_a_point_cloud_allocates_nothing() {
    let scan = LaserScan {
        header: header("laser"),
        ranges: (0..1080).map(|i| i as f32 * 0.01).collect(),
        intensities: vec![1.0; 1080],
        ..Default::default()
    };
    let cloud = PointCloud2 {
        header: header("lidar_top"),
        height: 1,
        width: 10_000,
        fields: ["x", "y", "z", "intensity"]
            .iter()
            .enumerate()
            .map(|(k, name)| PointField {
                name: (*name).into(),
                offset: 4 * k as u32,
                datatype: PointField::FLOAT32,
                count: 1,
            })
            .collect(),
        point_step: 16,
        row_step: 160_000,
        data: (0..160_000u32).map(|i| i as u8).collect(),
        is_dense: true,
        ..Default::default()
    };
    let (scan_bytes, cloud_bytes) = (wire(&scan), wire(&cloud));
    let mut sums = (0.0f32, 0u64, 0usize);
    let n = allocations_in(|| {
        let v = view_message::<LaserScan>(scan_bytes.bytes()).unwrap();
        let ranges: &[f32] = v.ranges();
        sums.0 = ranges.iter().sum::<f32>() + v.intensities().iter().sum::<f32>();
        sums.2 += v.header().frame_id().len() + v.header().stamp().sec() as usize;
        let c = view_message::<PointCloud2>(cloud_bytes.bytes()).unwrap();
        let data: &[u8] = c.data();
        sums.1 = data.iter().map(|&b| u64::from(b)).sum();
        for f in c.fields() {
            sums.2 += f.name().len() + f.offset() as usize;
        }
    });
    black_box(sums);
    assert_eq!(n, 0, "allocations while viewing LaserScan and PointCloud2");
    assert_eq!(sums.2, "laser".len() + 7 + "xyzintensity".len() + 24);
}

#[test]
fn viewing_nested_sequences_of_structures_and_strings_allocates_nothing() {
    let joints = JointState {
        header: header("base"),
        name: (0..30).map(|i| format!("joint_{i}_ü")).collect(),
        position: vec![0.5; 30],
        velocity: vec![0.25; 30],
        effort: vec![1.0; 30],
    };
    let tf = TFMessage {
        transforms: (0..50)
            .map(|i| {
                let mut t = TransformStamped::default();
                t.header = header("map");
                t.child_frame_id = format!("link_{i}");
                t.transform.translation.x = i as f64;
                t.transform.rotation.w = 1.0;
                t
            })
            .collect(),
    };
    let markers = MarkerArray {
        markers: (0..5)
            .map(|i| Marker {
                header: header("map"),
                ns: "obstacles".into(),
                id: i,
                text: "漢字 text".into(),
                points: (0..20)
                    .map(|k| Point {
                        x: k as f64,
                        y: 1.0,
                        z: 2.0,
                    })
                    .collect(),
                ..Default::default()
            })
            .collect(),
    };
    let diagnostics = DiagnosticArray {
        header: header("robot"),
        status: (0..4)
            .map(|i| DiagnosticStatus {
                name: format!("motor {i}"),
                message: "ok".into(),
                hardware_id: "m".into(),
                values: (0..6)
                    .map(|k| KeyValue {
                        key: format!("k{k}"),
                        value: format!("{}", k * i),
                    })
                    .collect(),
                ..Default::default()
            })
            .collect(),
    };
    let (jb, tb, mb, db) = (wire(&joints), wire(&tf), wire(&markers), wire(&diagnostics));
    let mut chars = 0usize;
    let mut sum = 0.0f64;
    let n = allocations_in(|| {
        let j = view_message::<JointState>(jb.bytes()).unwrap();
        for name in j.name() {
            chars += name.chars().count();
        }
        sum += j
            .position()
            .iter()
            .chain(j.velocity())
            .chain(j.effort())
            .sum::<f64>();
        let t = view_message::<TFMessage>(tb.bytes()).unwrap();
        for ts in t.transforms() {
            chars += ts.child_frame_id().len() + ts.header().frame_id().len();
            sum += ts.transform().translation().x() + ts.transform().rotation().w();
        }
        let m = view_message::<MarkerArray>(mb.bytes()).unwrap();
        for marker in m.markers() {
            chars += marker.ns().len() + marker.text().chars().count();
            for p in marker.points() {
                sum += p.x() + p.y() + p.z();
            }
        }
        let d = view_message::<DiagnosticArray>(db.bytes()).unwrap();
        for status in d.status() {
            chars += status.name().len() + status.message().len();
            for kv in status.values() {
                chars += kv.key().len() + kv.value().len();
            }
        }
    });
    black_box((chars, sum));
    assert_eq!(
        n, 0,
        "allocations while viewing JointState, TFMessage, MarkerArray, DiagnosticArray"
    );
    // Everything was read: 30 names of 9-10 characters, 50 child frames, 5 markers' texts.
    assert!(chars > 30 * 9 + 50 * 6 + 5 * 7, "{chars}");
    assert!(sum > 0.0);
}
