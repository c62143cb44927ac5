//! Rigid transforms: translation plus unit quaternion (x, y, z, w), composed,
//! inverted and interpolated as tf2 does (linear translation, shortest-path slerp).

/// A rigid transform: `translation` in metres and `rotation` as a unit
/// quaternion `[x, y, z, w]`. As in ROS, the transform of frame `child` in
/// frame `parent` maps coordinates in `child` to coordinates in `parent`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Transform {
    /// Translation `[x, y, z]`.
    pub translation: [f64; 3],
    /// Rotation as a quaternion `[x, y, z, w]`.
    pub rotation: [f64; 4],
}

/// A transform with the time it holds at (nanoseconds since the epoch of the
/// stamps it was computed from, ROS time).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct StampedTransform {
    /// The transform.
    pub transform: Transform,
    /// The time the transform holds at: the requested time, or for a
    /// "latest" lookup the latest time every transform of the chain has.
    pub stamp_ns: i64,
}

impl Default for Transform {
    fn default() -> Self {
        Transform::IDENTITY
    }
}

impl Transform {
    /// The identity.
    pub const IDENTITY: Transform = Transform {
        translation: [0.0; 3],
        rotation: [0.0, 0.0, 0.0, 1.0],
    };

    /// `self ∘ other`: the transform that applies `other`, then `self`
    /// (`T_a_c = T_a_b.compose(&T_b_c)`).
    #[inline]
    pub fn compose(&self, other: &Transform) -> Transform {
        let t = rotate(&self.rotation, &other.translation);
        Transform {
            translation: [
                self.translation[0] + t[0],
                self.translation[1] + t[1],
                self.translation[2] + t[2],
            ],
            rotation: quat_mul(&self.rotation, &other.rotation),
        }
    }

    /// The inverse transform (`T_b_a` from `T_a_b`).
    #[inline]
    pub fn inverse(&self) -> Transform {
        let q = self.rotation;
        let conj = [-q[0], -q[1], -q[2], q[3]];
        let t = rotate(&conj, &self.translation);
        Transform {
            translation: [-t[0], -t[1], -t[2]],
            rotation: conj,
        }
    }

    /// Maps a point given in the transform's child frame to its parent frame.
    #[inline]
    pub fn transform_point(&self, p: &[f64; 3]) -> [f64; 3] {
        let r = rotate(&self.rotation, p);
        [
            r[0] + self.translation[0],
            r[1] + self.translation[1],
            r[2] + self.translation[2],
        ]
    }

    /// tf2's interpolation between two samples: translation linearly, rotation
    /// by spherical linear interpolation along the shorter arc. `ratio` 0 gives
    /// `a`, 1 gives `b`.
    #[inline]
    pub fn interpolate(a: &Transform, b: &Transform, ratio: f64) -> Transform {
        let mut translation = [0.0; 3];
        for (i, t) in translation.iter_mut().enumerate() {
            *t = a.translation[i] + (b.translation[i] - a.translation[i]) * ratio;
        }
        Transform {
            translation,
            rotation: slerp(&a.rotation, &b.rotation, ratio),
        }
    }
}

/// Hamilton product `a · b` of quaternions `[x, y, z, w]`.
#[inline]
pub(crate) fn quat_mul(a: &[f64; 4], b: &[f64; 4]) -> [f64; 4] {
    let [ax, ay, az, aw] = *a;
    let [bx, by, bz, bw] = *b;
    [
        aw * bx + ax * bw + ay * bz - az * by,
        aw * by - ax * bz + ay * bw + az * bx,
        aw * bz + ax * by - ay * bx + az * bw,
        aw * bw - ax * bx - ay * by - az * bz,
    ]
}

/// Rotates `v` by the unit quaternion `q` (`q v q*`, in the two-cross-product form).
#[inline]
pub(crate) fn rotate(q: &[f64; 4], v: &[f64; 3]) -> [f64; 3] {
    let u = [q[0], q[1], q[2]];
    let c = cross(&u, v);
    let t = [2.0 * c[0], 2.0 * c[1], 2.0 * c[2]];
    let c2 = cross(&u, &t);
    [
        v[0] + q[3] * t[0] + c2[0],
        v[1] + q[3] * t[1] + c2[1],
        v[2] + q[3] * t[2] + c2[2],
    ]
}

#[inline]
fn cross(a: &[f64; 3], b: &[f64; 3]) -> [f64; 3] {
    [
        a[1] * b[2] - a[2] * b[1],
        a[2] * b[0] - a[0] * b[2],
        a[0] * b[1] - a[1] * b[0],
    ]
}

/// Shortest-path slerp of unit quaternions (tf2's `Quaternion::slerp`): when
/// the dot product is negative, `b` is negated first. Nearly equal rotations
/// (angle below ~1e-6 rad) fall back to a normalised lerp, which is equal to
/// slerp there to within rounding.
#[inline]
pub(crate) fn slerp(a: &[f64; 4], b: &[f64; 4], ratio: f64) -> [f64; 4] {
    let mut d = a[0] * b[0] + a[1] * b[1] + a[2] * b[2] + a[3] * b[3];
    let sign = if d < 0.0 {
        d = -d;
        -1.0
    } else {
        1.0
    };
    let (s0, s1) = if d > 1.0 - 1e-12 {
        (1.0 - ratio, ratio)
    } else {
        // sin((1 − r)θ) = sin θ cos rθ − cos θ sin rθ, with cos θ = d and
        // sin θ = √(1 − d²): one acos and one sin_cos instead of four calls.
        let theta = d.acos();
        let sin_theta = (1.0 - d * d).sqrt();
        let (sin_rt, cos_rt) = (ratio * theta).sin_cos();
        let inv_sin = 1.0 / sin_theta;
        (
            (sin_theta * cos_rt - d * sin_rt) * inv_sin,
            sin_rt * inv_sin,
        )
    };
    let s1 = s1 * sign;
    let q = [
        a[0] * s0 + b[0] * s1,
        a[1] * s0 + b[1] * s1,
        a[2] * s0 + b[2] * s1,
        a[3] * s0 + b[3] * s1,
    ];
    normalize(&q)
}

/// `q / |q|` (a zero quaternion stays zero: callers refuse those first).
#[inline]
pub(crate) fn normalize(q: &[f64; 4]) -> [f64; 4] {
    let n = (q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]).sqrt();
    if n == 0.0 {
        return *q;
    }
    [q[0] / n, q[1] / n, q[2] / n, q[3] / n]
}

/// `|q|² − 1`: how far a quaternion is from unit length (tf2 compares the
/// squared norm with its tolerance).
#[inline]
pub(crate) fn norm2_error(q: &[f64; 4]) -> f64 {
    (q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]) - 1.0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn yaw(angle: f64) -> [f64; 4] {
        [0.0, 0.0, (angle / 2.0).sin(), (angle / 2.0).cos()]
    }

    fn close(a: &[f64], b: &[f64]) -> bool {
        a.iter().zip(b).all(|(x, y)| (x - y).abs() < 1e-12)
    }

    #[test]
    fn compose_then_inverse_is_identity() {
        let t = Transform {
            translation: [1.0, -2.0, 0.5],
            rotation: normalize(&[0.1, 0.2, 0.3, 0.9]),
        };
        let id = t.compose(&t.inverse());
        assert!(close(&id.translation, &[0.0; 3]), "{id:?}");
        assert!(close(&id.rotation, &[0.0, 0.0, 0.0, 1.0]), "{id:?}");
    }

    #[test]
    fn rotation_about_z_by_a_quarter_turn_maps_x_to_y() {
        let t = Transform {
            translation: [0.0; 3],
            rotation: yaw(std::f64::consts::FRAC_PI_2),
        };
        assert!(close(
            &t.transform_point(&[1.0, 0.0, 0.0]),
            &[0.0, 1.0, 0.0]
        ));
    }

    #[test]
    fn slerp_midpoint_of_two_yaws_is_the_mean_yaw_and_takes_the_short_arc() {
        let mid = slerp(&yaw(0.0), &yaw(1.0), 0.5);
        assert!(close(&mid, &yaw(0.5)), "{mid:?}");
        // -q is the same rotation: the midpoint must still be yaw 0.5.
        let neg: [f64; 4] = yaw(1.0).map(|c| -c);
        let mid = slerp(&yaw(0.0), &neg, 0.5);
        assert!(close(&mid, &yaw(0.5)), "{mid:?}");
    }
}
