//! The pool's API in one process: allocation, references, generations,
//! configuration, leaving, and every way a descriptor can be wrong.

mod common;

use common::{pool_path, small, unique_ns};
use horus_tensor::{
    AllocError, AttachError, DescriptorError, Meta, OpenError, PoolConfig, TensorPool, TensorRef,
};

#[test]
fn alloc_release_and_generations() {
    let pool = TensorPool::open(&unique_ns("gen"), 7, small(2)).unwrap();
    let a = pool.alloc(100).unwrap();
    let b = pool.alloc(100).unwrap();
    assert!(matches!(pool.alloc(1), Err(AllocError::Exhausted { .. })));
    let (slot, gen, off) = (a.slot(), a.generation(), a.offset());
    let a2 = pool.acquire(slot, gen, off, 100).unwrap();
    assert_eq!(a.refcount(), 1, "one process, one bit");
    drop(a);
    assert_eq!(pool.free_slots(), 0, "a2 still holds it");
    drop(a2);
    assert_eq!(pool.free_slots(), 1);
    assert!(matches!(
        pool.acquire(slot, gen, off, 100),
        Err(AttachError::Stale { .. })
    ));
    let c = pool.alloc(10).unwrap();
    assert_ne!(c.generation(), gen);
    drop((b, c));
    assert_eq!(pool.free_slots(), 2);
}

#[test]
fn too_large_and_config_mismatch() {
    let ns = unique_ns("cfg");
    let pool = TensorPool::open(&ns, 8, small(1)).unwrap();
    assert!(matches!(pool.alloc(4097), Err(AllocError::TooLarge { .. })));
    let other = PoolConfig {
        slots: Some(2),
        slot_bytes: None,
    };
    assert!(matches!(
        TensorPool::open(&ns, 8, other),
        Err(OpenError::ConfigMismatch { .. })
    ));
    let adopt = TensorPool::open(&ns, 8, PoolConfig::default()).unwrap();
    assert_eq!(adopt.slots(), 1);
}

#[test]
fn invalid_configs_are_refused() {
    let ns = unique_ns("invalid");
    for slots in [0, horus_tensor::MAX_SLOTS + 1] {
        let cfg = PoolConfig {
            slots: Some(slots),
            slot_bytes: Some(4096),
        };
        assert!(matches!(
            TensorPool::open(&ns, 1, cfg),
            Err(OpenError::InvalidConfig { .. })
        ));
    }
    let huge = PoolConfig {
        slots: Some(1 << 16),
        slot_bytes: Some(u64::MAX / 2),
    };
    assert!(matches!(
        TensorPool::open(&ns, 1, huge),
        Err(OpenError::InvalidConfig { .. })
    ));
    assert!(!pool_path(&ns, 1).exists());
}

#[test]
fn alloc_array_describes_the_tensor_and_attach_finds_it() {
    let pool = TensorPool::open(&unique_ns("array"), 3, small(2)).unwrap();
    let meta = Meta {
        kind: 0,
        stamp_ns: 9,
        frame_id: "cam",
    };
    let (t, r) = pool.alloc_array("<f4", &[2, 3], meta).unwrap();
    assert_eq!((t.nbytes(), r.nbytes, r.stamp_ns), (24, 24, 9));
    assert_eq!(
        (r.dims().unwrap(), r.dtype_bytes()),
        (&[2, 3][..], &b"<f4"[..])
    );
    assert_eq!(r.frame_id_bytes(), b"cam");
    let u = pool.attach(&r).unwrap();
    assert_eq!((u.slot(), u.offset()), (t.slot(), t.offset()));
    assert!(matches!(
        pool.alloc_array("<M8", &[2], Meta::default()),
        Err(AllocError::UnknownDtype(_))
    ));
    assert!(matches!(
        pool.alloc_array("<f4", &[u64::MAX, 2], Meta::default()),
        Err(AllocError::Shape(_))
    ));
    assert!(matches!(
        pool.alloc_array("<f8", &[4096], Meta::default()),
        Err(AllocError::TooLarge { .. })
    ));
    assert!(matches!(
        TensorRef::describe(&t, "<f4", &[1; 9], Meta::default()),
        Err(DescriptorError::TooManyDims(9))
    ));
    assert!(matches!(
        TensorRef::describe(&t, "<f4-too-long", &[1], Meta::default()),
        Err(DescriptorError::DtypeTooLong(_))
    ));
    let long = "x".repeat(33);
    let meta = Meta {
        frame_id: &long,
        ..Meta::default()
    };
    assert!(matches!(
        TensorRef::describe(&t, "<f4", &[1], meta),
        Err(DescriptorError::FrameIdTooLong(33))
    ));
}

/// Every field of a descriptor a peer can corrupt gives a typed error and
/// takes no reference.
#[test]
fn corrupt_descriptors_are_typed_errors() {
    let pool = TensorPool::open(&unique_ns("desc"), 4, small(2)).unwrap();
    let (t, good) = pool.alloc_array("|u1", &[100], Meta::default()).unwrap();
    let check = |r: TensorRef| pool.attach(&r).unwrap_err();
    assert!(matches!(
        check(TensorRef { pool_id: 5, ..good }),
        AttachError::ForeignPool { named: 5, .. }
    ));
    for slot in [2, u32::MAX] {
        assert!(matches!(
            check(TensorRef { slot, ..good }),
            AttachError::OutOfBounds { .. }
        ));
    }
    for offset in [0, good.offset + 1, u64::MAX] {
        assert!(matches!(
            check(TensorRef { offset, ..good }),
            AttachError::OutOfBounds { .. }
        ));
    }
    assert!(matches!(
        check(TensorRef {
            nbytes: 4097,
            ..good
        }),
        AttachError::OutOfBounds { .. }
    ));
    assert!(matches!(
        check(TensorRef {
            generation: good.generation + 1,
            ..good
        }),
        AttachError::Stale { .. }
    ));
    assert!(matches!(
        check(TensorRef { ndim: 9, ..good }),
        AttachError::Descriptor(DescriptorError::TooManyDims(9))
    ));
    // The free slot (1): nothing to reference at any generation.
    let other = 1 - good.slot;
    let free = TensorRef {
        slot: other,
        offset: pool.offset_of(other),
        ..good
    };
    assert!(matches!(check(free), AttachError::Stale { .. }));
    assert_eq!(t.refcount(), 1, "no failed attach took a reference");
    drop(t);
    assert_eq!(pool.free_slots(), 2);
}

/// Regression (issue 22): a process whose tensors outlive it (Python views
/// the interpreter never frees at exit) left the pool in /dev/shm.
#[test]
fn departing_with_live_tensors_unlinks_and_keeps_them_readable() {
    let ns = unique_ns("depart");
    let pool = TensorPool::open(&ns, 10, small(2)).unwrap();
    let t = pool.alloc(100).unwrap();
    let t2 = t.try_clone().unwrap();
    // SAFETY: 100 bytes of our slot, nobody else uses the pool.
    unsafe { t.as_ptr().write_bytes(7, 100) };
    pool.depart();
    assert!(!pool_path(&ns, 10).exists());
    assert_eq!(t2.bytes()[99], 7, "a live view still reads its memory");
    assert!(matches!(pool.alloc(1), Err(AllocError::Departed(10))));
    assert!(matches!(t.try_clone(), Err(AttachError::Departed(10))));
    pool.depart();
    drop((t, t2, pool));
    assert!(!pool_path(&ns, 10).exists());
}

#[test]
fn last_one_out_unlinks() {
    let ns = unique_ns("unlink");
    let pool = TensorPool::open(&ns, 9, PoolConfig::default()).unwrap();
    assert!(pool_path(&ns, 9).exists());
    drop(pool);
    assert!(!pool_path(&ns, 9).exists());
}
