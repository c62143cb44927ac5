//! Hand-written ROS 2 types for the tests (what horus-idl-gen generates, written out):
//! `demo_msgs/msg/Blob` with a string, a `float32[]`, a nested `Point[]` and a bounded
//! `uint8[<=4]`, and `demo_msgs/msg/Other`, a different type.
#![allow(dead_code, unreachable_pub)]

use std::marker::PhantomData;

use horus::cdr::{
    CdrReader, CdrWriter, DecodeError, EncodeError, RosMessage, RosService, RosView, SeqView,
};

/// `demo_msgs/msg/Point`: two `float64`.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Point {
    pub x: f64,
    pub y: f64,
}

/// A view of a [`Point`].
#[derive(Clone, Copy, Debug)]
pub struct PointView<'a> {
    pub x: f64,
    pub y: f64,
    _a: PhantomData<&'a ()>,
}

impl<'a> RosView<'a> for PointView<'a> {
    fn read_view(r: &mut CdrReader<'a>) -> Result<Self, DecodeError> {
        r.enter()?;
        let x = r.read()?;
        let y = r.read()?;
        r.leave();
        Ok(PointView {
            x,
            y,
            _a: PhantomData,
        })
    }
}

impl RosMessage for Point {
    const TYPE_NAME: &'static str = "demo_msgs/msg/Point";
    const TYPE_HASH: &'static str =
        "RIHS01_00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff";
    const DEFINITION: &'static str = "float64 x\nfloat64 y\n";
    type View<'a> = PointView<'a>;

    fn write_cdr(&self, w: &mut CdrWriter<'_>) -> Result<(), EncodeError> {
        w.write(self.x)?;
        w.write(self.y)
    }

    fn read_cdr(r: &mut CdrReader<'_>) -> Result<Self, DecodeError> {
        let v = PointView::read_view(r)?;
        Ok(Point { x: v.x, y: v.y })
    }
}

/// `demo_msgs/msg/Blob`.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Blob {
    pub name: String,
    pub values: Vec<f32>,
    pub points: Vec<Point>,
    /// `uint8[<=4]`.
    pub small: Vec<u8>,
}

pub const BLOB_DEFINITION: &str =
    "string name\nfloat32[] values\nPoint[] points\nuint8[<=4] small\n\
================================================================================\n\
MSG: demo_msgs/msg/Point\nfloat64 x\nfloat64 y\n";

/// A view of a [`Blob`]: everything in place.
#[derive(Clone, Copy, Debug)]
pub struct BlobView<'a> {
    pub name: &'a str,
    pub values: &'a [f32],
    pub points: SeqView<'a, PointView<'a>>,
    pub small: &'a [u8],
}

impl<'a> RosView<'a> for BlobView<'a> {
    fn read_view(r: &mut CdrReader<'a>) -> Result<Self, DecodeError> {
        r.enter()?;
        let name = r.read_str(None)?;
        let n = r.read_count(4, None)?;
        let values = r.read_slice::<f32>(n)?;
        let n = r.read_count(16, None)?;
        let points = SeqView::read(r, n)?;
        let n = r.read_count(1, Some(4))?;
        let small = r.read_slice::<u8>(n)?;
        r.leave();
        Ok(BlobView {
            name,
            values,
            points,
            small,
        })
    }
}

impl RosMessage for Blob {
    const TYPE_NAME: &'static str = "demo_msgs/msg/Blob";
    const TYPE_HASH: &'static str =
        "RIHS01_b10b000000000001aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
    const DEFINITION: &'static str = BLOB_DEFINITION;
    type View<'a> = BlobView<'a>;

    fn write_cdr(&self, w: &mut CdrWriter<'_>) -> Result<(), EncodeError> {
        w.write_string("name", &self.name, None)?;
        w.write_count("values", self.values.len(), None)?;
        w.write_slice(&self.values)?;
        w.write_count("points", self.points.len(), None)?;
        for p in &self.points {
            p.write_cdr(w)?;
        }
        w.write_count("small", self.small.len(), Some(4))?;
        w.write_slice(&self.small)
    }

    fn read_cdr(r: &mut CdrReader<'_>) -> Result<Self, DecodeError> {
        let v = BlobView::read_view(r)?;
        Ok(Blob {
            name: v.name.to_owned(),
            values: v.values.to_vec(),
            points: v.points.iter().map(|p| Point { x: p.x, y: p.y }).collect(),
            small: v.small.to_vec(),
        })
    }
}

/// `demo_msgs/msg/Other`: one `int32`.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Other {
    pub n: i32,
}

impl RosMessage for Other {
    const TYPE_NAME: &'static str = "demo_msgs/msg/Other";
    const TYPE_HASH: &'static str =
        "RIHS01_0747e20000000000000000000000000000000000000000000000000000000001";
    const DEFINITION: &'static str = "int32 n\n";
    type View<'a> = OtherView;

    fn write_cdr(&self, w: &mut CdrWriter<'_>) -> Result<(), EncodeError> {
        w.write(self.n)
    }

    fn read_cdr(r: &mut CdrReader<'_>) -> Result<Self, DecodeError> {
        Ok(Other { n: r.read()? })
    }
}

/// A view of an [`Other`].
#[derive(Clone, Copy, Debug)]
pub struct OtherView(pub i32);

impl<'a> RosView<'a> for OtherView {
    fn read_view(r: &mut CdrReader<'a>) -> Result<Self, DecodeError> {
        Ok(OtherView(r.read()?))
    }
}

/// A view of a [`BlobV2`].
#[derive(Clone, Copy, Debug)]
pub struct NameView<'a>(pub &'a str);

impl<'a> RosView<'a> for NameView<'a> {
    fn read_view(r: &mut CdrReader<'a>) -> Result<Self, DecodeError> {
        Ok(NameView(r.read_str(None)?))
    }
}

/// `demo_msgs/msg/Blob` as another build defines it: same name, another definition (hash).
#[derive(Clone, Debug, PartialEq, Default)]
pub struct BlobV2 {
    pub name: String,
}

impl RosMessage for BlobV2 {
    const TYPE_NAME: &'static str = "demo_msgs/msg/Blob";
    const TYPE_HASH: &'static str =
        "RIHS01_b10b000000000002aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
    const DEFINITION: &'static str = "string name\n";
    type View<'a> = NameView<'a>;

    fn write_cdr(&self, w: &mut CdrWriter<'_>) -> Result<(), EncodeError> {
        w.write_string("name", &self.name, None)
    }

    fn read_cdr(r: &mut CdrReader<'_>) -> Result<Self, DecodeError> {
        Ok(BlobV2 {
            name: r.read_str(None)?.to_owned(),
        })
    }
}

/// A blob with `n` values and `n / 4` points.
pub fn blob(i: u32, n: usize) -> Blob {
    Blob {
        name: format!("blob-{i}"),
        values: (0..n).map(|k| k as f32 + i as f32).collect(),
        points: (0..n / 4)
            .map(|k| Point {
                x: k as f64,
                y: i as f64,
            })
            .collect(),
        small: vec![i as u8; (i % 5) as usize],
    }
}

/// 70,000 bytes: more than a segment's 64 KiB description area holds.
// A const (not a static) so that a const `DEFINITION` can borrow it.
#[allow(clippy::large_const_arrays)]
const HUGE_BYTES: [u8; 70_000] = [b'#'; 70_000];

/// `demo_msgs/msg/Huge`: a definition too large for a segment's description.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Huge;

impl RosMessage for Huge {
    const TYPE_NAME: &'static str = "demo_msgs/msg/Huge";
    const TYPE_HASH: &'static str =
        "RIHS01_4e9e000000000000000000000000000000000000000000000000000000000001";
    const DEFINITION: &'static str = match std::str::from_utf8(&HUGE_BYTES) {
        Ok(s) => s,
        Err(_) => panic!("ASCII"),
    };
    type View<'a> = OtherView;

    fn write_cdr(&self, w: &mut CdrWriter<'_>) -> Result<(), EncodeError> {
        w.write(0i32)
    }

    fn read_cdr(r: &mut CdrReader<'_>) -> Result<Self, DecodeError> {
        r.read::<i32>()?;
        Ok(Huge)
    }
}

/// `demo_msgs/srv/Count`: a [`Blob`] request answered by an [`Other`] (a generated service
/// marker, written out).
pub struct Count;

impl RosService for Count {
    const SERVICE_NAME: &'static str = "demo_msgs/srv/Count";
    const TYPE_HASH: &'static str =
        "RIHS01_c0c0000000000000000000000000000000000000000000000000000000000001";
    type Request = Blob;
    type Response = Other;
    type Event = Other;
}
