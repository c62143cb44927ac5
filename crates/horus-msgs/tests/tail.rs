//! Tail helpers of `PointCloud` and `Image`: correct tails accepted, short or misaligned ones
//! rejected with the right error.

use horus_msgs::{Image, ImageError, PointCloud, PointCloudError, XyzI};

/// An 8-byte-aligned zeroed buffer of at least `len` bytes, like the transport's tail.
fn aligned(len: usize) -> Vec<u64> {
    vec![0u64; len.div_ceil(8) + 1]
}

#[test]
fn point_cloud_xyz_round_trip() {
    let cloud = PointCloud::new(3, false);
    assert_eq!(cloud.point_step, 12);
    assert!(!cloud.has_intensity());
    assert_eq!(cloud.tail_len(), 36);
    let mut buf = aligned(36);
    let tail = &mut bytemuck::cast_slice_mut::<u64, u8>(&mut buf)[..36];
    cloud.points_mut(tail).unwrap()[2] = [1.0, 2.0, 3.0];
    let points = cloud.points(tail).unwrap();
    assert_eq!(points.len(), 3);
    assert_eq!(points[2], [1.0, 2.0, 3.0]);
    assert_eq!(&tail[24..28], &1.0f32.to_le_bytes());
}

#[test]
fn point_cloud_xyzi_round_trip_and_longer_tail() {
    let cloud = PointCloud::new(2, true);
    assert_eq!(cloud.tail_len(), 32);
    let mut buf = aligned(40);
    let tail = bytemuck::cast_slice_mut::<u64, u8>(&mut buf);
    let p = XyzI {
        x: 1.0,
        y: 2.0,
        z: 3.0,
        intensity: 0.5,
    };
    cloud.points_xyzi_mut(tail).unwrap()[1] = p;
    // Bytes past tail_len() are ignored, not an error.
    assert_eq!(cloud.points_xyzi(tail).unwrap(), &[XyzI::default(), p]);
}

#[test]
fn point_cloud_rejects_short_tail() {
    let cloud = PointCloud::new(3, false);
    let buf = aligned(36);
    let tail = &bytemuck::cast_slice::<u64, u8>(&buf)[..35];
    assert_eq!(
        cloud.points(tail),
        Err(PointCloudError::TailTooShort {
            needed: 36,
            actual: 35
        })
    );
}

#[test]
fn point_cloud_rejects_misaligned_tail() {
    let cloud = PointCloud::new(1, false);
    let mut buf = aligned(16);
    let bytes = bytemuck::cast_slice_mut::<u64, u8>(&mut buf);
    assert_eq!(
        cloud.points(&bytes[1..13]),
        Err(PointCloudError::Misaligned {
            required: 4,
            offset: 1
        })
    );
    assert_eq!(
        cloud.points_mut(&mut bytes[2..14]).unwrap_err(),
        PointCloudError::Misaligned {
            required: 4,
            offset: 2
        }
    );
}

#[test]
fn point_cloud_rejects_wrong_point_step() {
    let buf = aligned(64);
    let tail = bytemuck::cast_slice::<u64, u8>(&buf);
    let xyzi = PointCloud::new(1, true);
    assert_eq!(
        xyzi.points(tail),
        Err(PointCloudError::WrongPointStep {
            point_step: 16,
            expected: 12
        })
    );
    let corrupt = PointCloud {
        point_step: 13,
        ..PointCloud::new(1, false)
    };
    assert!(matches!(
        corrupt.points_xyzi(tail),
        Err(PointCloudError::WrongPointStep { .. })
    ));
}

#[test]
fn empty_point_cloud_accepts_any_empty_tail() {
    let cloud = PointCloud::new(0, false);
    assert_eq!(cloud.points(&[]), Ok(&[][..]));
    assert_eq!(
        cloud.points_xyzi(&[]),
        Err(PointCloudError::WrongPointStep {
            point_step: 12,
            expected: 16
        })
    );
}

#[test]
fn point_cloud_hostile_count_does_not_panic() {
    let cloud = PointCloud {
        num_points: u32::MAX,
        ..PointCloud::new(0, true)
    };
    let buf = aligned(64);
    let tail = bytemuck::cast_slice::<u64, u8>(&buf);
    assert!(matches!(
        cloud.points_xyzi(tail),
        Err(PointCloudError::TailTooShort { .. })
    ));
}

#[test]
fn image_new_and_sizes() {
    let img = Image::new(4, 3, Image::RGB8);
    assert_eq!((img.width, img.height, img.step), (4, 3, 12));
    assert_eq!(img.bytes_per_pixel(), Some(3));
    assert_eq!(img.tail_len(), 36);
    assert_eq!(Image::new(5, 2, Image::MONO16).tail_len(), 20);
    assert_eq!(Image::encoding_name(Image::BGR8), Some("bgr8"));
    assert_eq!(
        Image::try_new(1, 1, 999),
        Err(ImageError::UnknownEncoding { encoding: 999 })
    );
    assert_eq!(
        Image::try_new(u32::MAX, 1, Image::RGBA8),
        Err(ImageError::TooLarge)
    );
}

#[test]
#[should_panic(expected = "unknown image encoding")]
fn image_new_panics_on_unknown_encoding() {
    let _ = Image::new(1, 1, 0);
}

#[test]
fn image_rows_with_padding() {
    // 3 RGB8 pixels per row = 9 bytes, padded to a step of 12.
    let img = Image {
        step: 12,
        ..Image::new(3, 2, Image::RGB8)
    };
    let mut tail = vec![0u8; img.tail_len()];
    img.row_mut(&mut tail, 1)
        .unwrap()
        .copy_from_slice(&[1, 2, 3, 4, 5, 6, 7, 8, 9]);
    assert_eq!(img.row(&tail, 1).unwrap(), &[1, 2, 3, 4, 5, 6, 7, 8, 9]);
    assert_eq!(&tail[12..21], &[1, 2, 3, 4, 5, 6, 7, 8, 9]);
    assert_eq!(img.row_as::<[u8; 3]>(&tail, 1).unwrap()[2], [7, 8, 9]);
    assert_eq!(img.data(&tail).unwrap().len(), 24);
}

#[test]
fn image_rejects_short_tail_and_bad_rows() {
    let img = Image::new(4, 3, Image::MONO8);
    let tail = vec![0u8; 11];
    assert_eq!(
        img.row(&tail, 0),
        Err(ImageError::TailTooShort {
            needed: 12,
            actual: 11
        })
    );
    assert_eq!(
        img.data(&tail),
        Err(ImageError::TailTooShort {
            needed: 12,
            actual: 11
        })
    );
    let tail = vec![0u8; 12];
    assert_eq!(
        img.row(&tail, 3),
        Err(ImageError::RowOutOfBounds { row: 3, height: 3 })
    );
    let bad_step = Image { step: 3, ..img };
    assert_eq!(
        bad_step.row(&tail, 0),
        Err(ImageError::StepTooSmall {
            step: 3,
            min_step: 4
        })
    );
    let bad_encoding = Image {
        encoding: 77,
        ..img
    };
    assert_eq!(
        bad_encoding.row(&tail, 0),
        Err(ImageError::UnknownEncoding { encoding: 77 })
    );
}

#[test]
fn image_typed_rows_reject_misalignment() {
    let img = Image::new(2, 2, Image::MONO16);
    let mut buf = aligned(16);
    let bytes = bytemuck::cast_slice_mut::<u64, u8>(&mut buf);
    img.row_as_mut::<u16>(&mut bytes[..8], 1)
        .unwrap()
        .copy_from_slice(&[7, 9]);
    assert_eq!(img.row_as::<u16>(&bytes[..8], 1).unwrap(), &[7, 9]);
    assert_eq!(
        img.row_as::<u16>(&bytes[1..9], 0),
        Err(ImageError::Misaligned {
            required: 2,
            offset: 1
        })
    );
    // An odd step misaligns every odd row even when the tail itself is aligned.
    let odd = Image { step: 5, ..img };
    assert!(odd.row_as::<u16>(&bytes[..10], 0).is_ok());
    assert_eq!(
        odd.row_as::<u16>(&bytes[..10], 1),
        Err(ImageError::Misaligned {
            required: 2,
            offset: 1
        })
    );
    assert_eq!(
        img.row_as::<[u8; 3]>(&bytes[..8], 0),
        Err(ImageError::ElementSizeMismatch {
            row_bytes: 4,
            elem_size: 3
        })
    );
}
