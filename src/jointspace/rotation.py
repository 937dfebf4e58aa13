"""Compiled quaternion and rotation helpers (inlined into the kernels).

Quaternions are (w, x, y, z); 3×3 matrices are row-major. Spatial 6-vectors are in
`jointspace.spatial`.
Functions write into an `out` argument where that avoids temporaries on hot paths.

The products, the rotation matrix and the normalization round as MuJoCo 4.0's binary does,
so that kinematics equals mj_kinematics bit for bit (docs/conventions.md, "Kinematics bit
for bit"): four-term sums are taken in pairs, (t0 ± t1) + (t2 ± t3) in the quaternion
product and the squared norm, and the diagonal of R(q) as (q00 − q22) + (q11 − q33),
(q00 + q22) − (q11 + q33), (q00 − q22) + (q33 − q11); a norm within MINVAL of 1 leaves the
quaternion as it is, another scales it by the reciprocal. A left-to-right sum differs in
the last bit in about half of all cases, and a body resting exactly on a plane is in
contact in one engine and not in the other.
"""

import math

from numba import njit

from jointspace.types import MINVAL


@njit(cache=True, inline="always")
def quat_mul(out, a, b):
    """out = a ⊗ b (out may alias neither a nor b)."""
    out[0], out[1], out[2], out[3] = quat_mul_s(a[0], a[1], a[2], a[3], b[0], b[1], b[2], b[3])


@njit(cache=True, inline="always")
def quat_normalize(q):
    """Normalize q in place (mju_normalize4); a zero quaternion becomes the identity."""
    q[0], q[1], q[2], q[3] = quat_normalize_s(q[0], q[1], q[2], q[3])


@njit(cache=True, inline="always")
def quat_to_mat(out, q):
    """out (9,) = row-major rotation matrix of unit quaternion q."""
    (out[0], out[1], out[2], out[3], out[4], out[5], out[6], out[7],
     out[8]) = quat_to_mat_s(q[0], q[1], q[2], q[3])


@njit(cache=True, inline="always")
def rot_vec_quat(out, v, q):
    """out = R(q) v for unit quaternion q (out may not alias v)."""
    out[0], out[1], out[2] = rot_vec_quat_s(q[0], q[1], q[2], q[3], v[0], v[1], v[2])


@njit(cache=True, inline="always")
def axis_angle_quat(out, axis, angle):
    """out = quaternion of a rotation by angle about unit axis."""
    s = math.sin(0.5 * angle)
    out[0] = math.cos(0.5 * angle)
    out[1] = axis[0] * s
    out[2] = axis[1] * s
    out[3] = axis[2] * s


@njit(cache=True, inline="always")
def mat_vec(out, mat, v):
    """out = mat v for a row-major 3x3 mat (9,)."""
    out[0] = mat[0] * v[0] + mat[1] * v[1] + mat[2] * v[2]
    out[1] = mat[3] * v[0] + mat[4] * v[1] + mat[5] * v[2]
    out[2] = mat[6] * v[0] + mat[7] * v[1] + mat[8] * v[2]


# Scalar forms: quaternions and vectors as separate float arguments and tuple results, so hot
# loops keep them in registers instead of creating array views or temporaries.


@njit(cache=True, inline="always")
def quat_mul_s(a0, a1, a2, a3, b0, b1, b2, b3):
    """a ⊗ b, scalar form, each component's four products summed in pairs (mju_mulQuat)."""
    return ((a0 * b0 - a1 * b1) - (a2 * b2 + a3 * b3),
            (a0 * b1 + a1 * b0) + (a2 * b3 - a3 * b2),
            (a0 * b2 - a1 * b3) + (a2 * b0 + a3 * b1),
            (a0 * b3 + a1 * b2) + (a3 * b0 - a2 * b1))


@njit(cache=True, inline="always")
def quat_normalize_s(q0, q1, q2, q3):
    """q / |q|, scalar form (mju_normalize4).

    A zero quaternion (norm below MINVAL) becomes the identity; one whose norm is within
    MINVAL of 1 is returned as it is; another is scaled by the reciprocal of its norm.
    """
    n = math.sqrt((q0 * q0 + q1 * q1) + (q2 * q2 + q3 * q3))
    if n < MINVAL:
        return 1.0, 0.0, 0.0, 0.0
    if abs(n - 1.0) <= MINVAL:
        return q0, q1, q2, q3
    inv = 1.0 / n
    return q0 * inv, q1 * inv, q2 * inv, q3 * inv


@njit(cache=True, inline="always")
def rot_vec_quat_s(w, x, y, z, v0, v1, v2):
    """R(q) v, scalar form (mju_rotVecQuat): t = w v + q_vec × v, R v = v + 2 q_vec × t.

    The identity quaternion returns v itself.
    """
    if w == 1.0 and x == 0.0 and y == 0.0 and z == 0.0:
        return v0, v1, v2
    t0 = w * v0 + y * v2 - z * v1
    t1 = w * v1 + z * v0 - x * v2
    t2 = w * v2 + x * v1 - y * v0
    return (v0 + 2.0 * (y * t2 - z * t1), v1 + 2.0 * (z * t0 - x * t2),
            v2 + 2.0 * (x * t1 - y * t0))


@njit(cache=True, inline="always")
def quat_to_mat_s(w, x, y, z):
    """Row-major R(q) of a unit quaternion, scalar form (mju_quat2Mat, MuJoCo 4.0's rounding)."""
    q00 = w * w
    q11 = x * x
    q22 = y * y
    q33 = z * z
    q01 = w * x
    q02 = w * y
    q03 = w * z
    q12 = x * y
    q13 = x * z
    q23 = y * z
    return ((q00 - q22) + (q11 - q33), 2.0 * (q12 - q03), 2.0 * (q13 + q02),
            2.0 * (q12 + q03), (q00 + q22) - (q11 + q33), 2.0 * (q23 - q01),
            2.0 * (q13 - q02), 2.0 * (q23 + q01), (q00 - q22) + (q33 - q11))


@njit(cache=True, inline="always")
def quat_to_mat_row(out, i, w, x, y, z):
    """out[i, :9] = row-major rotation matrix of the unit quaternion (w, x, y, z)."""
    (out[i, 0], out[i, 1], out[i, 2], out[i, 3], out[i, 4], out[i, 5], out[i, 6], out[i, 7],
     out[i, 8]) = quat_to_mat_s(w, x, y, z)


@njit(cache=True, inline="always")
def mat_to_quat(R, out):
    """Unit quaternion (w, x, y, z) of the row-major rotation matrix R (9,), Shepperd's method."""
    tr = R[0] + R[4] + R[8]
    if tr > 0.0:
        s = 2.0 * math.sqrt(1.0 + tr)
        out[0] = 0.25 * s
        out[1] = (R[7] - R[5]) / s
        out[2] = (R[2] - R[6]) / s
        out[3] = (R[3] - R[1]) / s
    elif R[0] > R[4] and R[0] > R[8]:
        s = 2.0 * math.sqrt(1.0 + R[0] - R[4] - R[8])
        out[0] = (R[7] - R[5]) / s
        out[1] = 0.25 * s
        out[2] = (R[1] + R[3]) / s
        out[3] = (R[2] + R[6]) / s
    elif R[4] > R[8]:
        s = 2.0 * math.sqrt(1.0 + R[4] - R[0] - R[8])
        out[0] = (R[2] - R[6]) / s
        out[1] = (R[1] + R[3]) / s
        out[2] = 0.25 * s
        out[3] = (R[5] + R[7]) / s
    else:
        s = 2.0 * math.sqrt(1.0 + R[8] - R[0] - R[4])
        out[0] = (R[3] - R[1]) / s
        out[1] = (R[2] + R[6]) / s
        out[2] = (R[5] + R[7]) / s
        out[3] = 0.25 * s
