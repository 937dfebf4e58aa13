"""Compiled quaternion and rotation helpers (inlined into the kernels).

Quaternions are (w, x, y, z); 3×3 matrices are row-major. Spatial 6-vectors are in
`jointspace.spatial`.
Functions write into an `out` argument where that avoids temporaries on hot paths.
"""

import math

from numba import njit


@njit(cache=True, inline="always")
def quat_mul(out, a, b):
    """out = a ⊗ b (out may alias neither a nor b)."""
    out[0] = a[0] * b[0] - a[1] * b[1] - a[2] * b[2] - a[3] * b[3]
    out[1] = a[0] * b[1] + a[1] * b[0] + a[2] * b[3] - a[3] * b[2]
    out[2] = a[0] * b[2] - a[1] * b[3] + a[2] * b[0] + a[3] * b[1]
    out[3] = a[0] * b[3] + a[1] * b[2] - a[2] * b[1] + a[3] * b[0]


@njit(cache=True, inline="always")
def quat_normalize(q):
    """Normalize q in place; a zero quaternion becomes the identity."""
    n = math.sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3])
    if n < 1e-15:
        q[0] = 1.0
        q[1] = q[2] = q[3] = 0.0
    else:
        inv = 1.0 / n
        for k in range(4):
            q[k] *= inv


@njit(cache=True, inline="always")
def quat_to_mat(out, q):
    """out (9,) = row-major rotation matrix of unit quaternion q."""
    w, x, y, z = q[0], q[1], q[2], q[3]
    out[0] = 1.0 - 2.0 * (y * y + z * z)
    out[1] = 2.0 * (x * y - w * z)
    out[2] = 2.0 * (x * z + w * y)
    out[3] = 2.0 * (x * y + w * z)
    out[4] = 1.0 - 2.0 * (x * x + z * z)
    out[5] = 2.0 * (y * z - w * x)
    out[6] = 2.0 * (x * z - w * y)
    out[7] = 2.0 * (y * z + w * x)
    out[8] = 1.0 - 2.0 * (x * x + y * y)


@njit(cache=True, inline="always")
def rot_vec_quat(out, v, q):
    """out = R(q) v for unit quaternion q (out may not alias v)."""
    w, x, y, z = q[0], q[1], q[2], q[3]
    # t = 2 (q_vec × v); out = v + w t + q_vec × t
    tx = 2.0 * (y * v[2] - z * v[1])
    ty = 2.0 * (z * v[0] - x * v[2])
    tz = 2.0 * (x * v[1] - y * v[0])
    out[0] = v[0] + w * tx + y * tz - z * ty
    out[1] = v[1] + w * ty + z * tx - x * tz
    out[2] = v[2] + w * tz + x * ty - y * tx


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
    """a ⊗ b, scalar form."""
    return (a0 * b0 - a1 * b1 - a2 * b2 - a3 * b3,
            a0 * b1 + a1 * b0 + a2 * b3 - a3 * b2,
            a0 * b2 - a1 * b3 + a2 * b0 + a3 * b1,
            a0 * b3 + a1 * b2 - a2 * b1 + a3 * b0)


@njit(cache=True, inline="always")
def quat_normalize_s(q0, q1, q2, q3):
    """q / |q|, scalar form; a zero quaternion becomes the identity."""
    n = math.sqrt(q0 * q0 + q1 * q1 + q2 * q2 + q3 * q3)
    if n < 1e-15:
        return 1.0, 0.0, 0.0, 0.0
    inv = 1.0 / n
    return q0 * inv, q1 * inv, q2 * inv, q3 * inv


@njit(cache=True, inline="always")
def quat_renormalize_s(q0, q1, q2, q3):
    """q / |q| for a q that is unit up to rounding (a product of unit quaternions), scalar form.

    One Newton step for 1/sqrt(n2) about n2 = 1, (3 - n2) / 2, replaces the square root and
    the division: for |n2 - 1| ≤ 1e-8 its error is below 1e-16 relative, so the result
    matches quat_normalize_s to the last bit or two, at half the latency (kinematics is a
    chain of these). Farther from unit length, it normalizes exactly.
    """
    n2 = q0 * q0 + q1 * q1 + q2 * q2 + q3 * q3
    if abs(n2 - 1.0) > 1e-8:
        return quat_normalize_s(q0, q1, q2, q3)
    inv = 1.5 - 0.5 * n2
    return q0 * inv, q1 * inv, q2 * inv, q3 * inv


@njit(cache=True, inline="always")
def rot_vec_quat_s(w, x, y, z, v0, v1, v2):
    """R(q) v, scalar form: t = 2 (q_vec × v), R v = v + w t + q_vec × t."""
    tx = 2.0 * (y * v2 - z * v1)
    ty = 2.0 * (z * v0 - x * v2)
    tz = 2.0 * (x * v1 - y * v0)
    return (v0 + w * tx + y * tz - z * ty, v1 + w * ty + z * tx - x * tz,
            v2 + w * tz + x * ty - y * tx)


@njit(cache=True, inline="always")
def quat_to_mat_row(out, i, w, x, y, z):
    """out[i, :9] = row-major rotation matrix of the unit quaternion (w, x, y, z)."""
    out[i, 0] = 1.0 - 2.0 * (y * y + z * z)
    out[i, 1] = 2.0 * (x * y - w * z)
    out[i, 2] = 2.0 * (x * z + w * y)
    out[i, 3] = 2.0 * (x * y + w * z)
    out[i, 4] = 1.0 - 2.0 * (x * x + z * z)
    out[i, 5] = 2.0 * (y * z - w * x)
    out[i, 6] = 2.0 * (x * z - w * y)
    out[i, 7] = 2.0 * (y * z + w * x)
    out[i, 8] = 1.0 - 2.0 * (x * x + y * y)


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
