//! Tensor descriptors (`horus_tensor::TensorRef`) as a Python or Rust peer
//! receives them, against a real tensor pool (`horus_tensor::TensorPool`).
//!
//! The input is the descriptor's bytes. Its dimensions and dtype must
//! either give a typed array layout that fits the tensor's bytes, or an
//! error; taking a reference (`TensorPool::attach`, what Python's `attach`
//! and `attach_view` do) must fail as stale/foreign unless the descriptor names
//! exactly a live slot of the pool at its generation, and then the tensor
//! must lie inside that slot. The pool (2 slots of 4 KiB, slot 0 allocated
//! at generation 1) lives in a per-process namespace and is unlinked at once.
#![no_main]

use std::sync::{Arc, OnceLock};

use horus_tensor::{
    AttachError, DescriptorError, PoolConfig, Tensor, TensorLayout, TensorPool, TensorRef,
};
use libfuzzer_sys::fuzz_target;

/// Pool id of the fixture pool.
const POOL_ID: u64 = 1;

struct Pool {
    pool: Arc<TensorPool>,
    _held: Tensor,
}

fn pool() -> &'static Pool {
    static POOL: OnceLock<Pool> = OnceLock::new();
    POOL.get_or_init(|| {
        let ns = format!("fuzz-{}", std::process::id());
        let cfg = PoolConfig {
            slots: Some(2),
            slot_bytes: Some(4096),
        };
        let pool = TensorPool::open(&ns, POOL_ID, cfg).expect("fixture pool");
        let name =
            horus_shm::name::segment_name(&ns, "tp", &POOL_ID.to_string()).expect("valid name");
        horus_shm::Segment::unlink(&name);
        let held = pool.alloc(4096).expect("a free slot");
        assert_eq!((held.slot(), held.generation()), (0, 1));
        Pool { pool, _held: held }
    })
}

fuzz_target!(|data: &[u8]| {
    let mut bytes = [0u8; std::mem::size_of::<TensorRef>()];
    let n = data.len().min(bytes.len());
    bytes[..n].copy_from_slice(&data[..n]);
    let r: TensorRef = bytemuck::pod_read_unaligned(&bytes);

    let layout = match r.dims() {
        Err(DescriptorError::TooManyDims(n)) => {
            assert!(n > 8);
            None
        }
        Err(e) => panic!("dims: unexpected {e}"),
        Ok(dims) => match TensorLayout::new(r.dtype_bytes(), dims, r.nbytes) {
            Ok(Some(l)) => {
                check_layout(&l, dims, r.nbytes);
                Some(l)
            }
            Ok(None) | Err(DescriptorError::ShapeTooLarge { .. }) => None,
            Err(e) => panic!("layout: unexpected {e}"),
        },
    };

    let p = &pool().pool;
    match p.attach(&r) {
        Ok(t) => {
            assert!(
                r.slot < p.slots(),
                "slot {} of a {}-slot pool",
                r.slot,
                p.slots()
            );
            assert_eq!(r.offset, p.offset_of(r.slot));
            assert!(r.nbytes <= p.slot_bytes());
            assert_eq!(
                (t.slot(), t.generation(), t.nbytes() as u64),
                (r.slot, r.generation, r.nbytes)
            );
            assert!(t.refcount() >= 1);
            if let Some(l) = &layout {
                assert!(l.len <= t.nbytes(), "view longer than the tensor");
            }
            let b = t.bytes();
            if let (Some(first), Some(last)) = (b.first(), b.last()) {
                // SAFETY: references into the tensor's slice.
                let _ = unsafe {
                    (
                        std::ptr::read_volatile(first),
                        std::ptr::read_volatile(last),
                    )
                };
            }
            let again = t.try_clone().expect("a held tensor can be cloned");
            drop((t, again));
        }
        Err(AttachError::ForeignPool { named, .. }) => assert_ne!(named, POOL_ID),
        Err(AttachError::Descriptor(DescriptorError::TooManyDims(n))) => assert!(n > 8),
        Err(AttachError::OutOfBounds { .. } | AttachError::Stale { .. }) => {}
        Err(e) => panic!("acquire: unexpected {e}"),
    }
});

/// A layout is C-contiguous and lies within `nbytes`.
fn check_layout(l: &TensorLayout, dims: &[u64], nbytes: u64) {
    assert_eq!(l.shape.len(), dims.len());
    assert_eq!(l.strides.len(), dims.len());
    assert!(
        l.len as u64 <= nbytes,
        "view of {} bytes over {nbytes}",
        l.len
    );
    if dims.contains(&0) {
        assert_eq!(l.len, 0);
        return;
    }
    // The last element's offset plus one item is exactly the length.
    let mut end = l.itemsize as i128;
    for (&d, &s) in l.shape.iter().zip(l.strides.iter()) {
        assert!(d > 0 && s > 0);
        end += (d as i128 - 1) * s as i128;
    }
    assert_eq!(end, l.len as i128, "strides do not tile the view");
}
