"""Compiled quaternion, rotation and spatial-vector helpers (inlined into the kernels).

Quaternions are (w, x, y, z). Spatial vectors are (rotation : linear), MuJoCo's order.
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


@njit(cache=True, inline="always")
def cross_motion(out, v, u):
    """out = v ×ₘ u for spatial motion vectors (rot : lin)."""
    out[0] = v[1] * u[2] - v[2] * u[1]
    out[1] = v[2] * u[0] - v[0] * u[2]
    out[2] = v[0] * u[1] - v[1] * u[0]
    out[3] = v[1] * u[5] - v[2] * u[4] + v[4] * u[2] - v[5] * u[1]
    out[4] = v[2] * u[3] - v[0] * u[5] + v[5] * u[0] - v[3] * u[2]
    out[5] = v[0] * u[4] - v[1] * u[3] + v[3] * u[1] - v[4] * u[0]


@njit(cache=True, inline="always")
def cross_force(out, v, f):
    """out = v ×* f for a motion vector v and a force vector f (rot : lin)."""
    out[0] = v[1] * f[2] - v[2] * f[1] + v[4] * f[5] - v[5] * f[4]
    out[1] = v[2] * f[0] - v[0] * f[2] + v[5] * f[3] - v[3] * f[5]
    out[2] = v[0] * f[1] - v[1] * f[0] + v[3] * f[4] - v[4] * f[3]
    out[3] = v[1] * f[5] - v[2] * f[4]
    out[4] = v[2] * f[3] - v[0] * f[5]
    out[5] = v[0] * f[4] - v[1] * f[3]


@njit(cache=True, inline="always")
def mul_inert_vec(out, i, v):
    """out = I v for a com-based inertia in MuJoCo's 10-number layout and a motion v."""
    out[0] = i[0] * v[0] + i[3] * v[1] + i[4] * v[2] - i[8] * v[4] + i[7] * v[5]
    out[1] = i[3] * v[0] + i[1] * v[1] + i[5] * v[2] + i[8] * v[3] - i[6] * v[5]
    out[2] = i[4] * v[0] + i[5] * v[1] + i[2] * v[2] - i[7] * v[3] + i[6] * v[4]
    out[3] = i[8] * v[1] - i[7] * v[2] + i[9] * v[3]
    out[4] = i[6] * v[2] - i[8] * v[0] + i[9] * v[4]
    out[5] = i[7] * v[0] - i[6] * v[1] + i[9] * v[5]


@njit(cache=True, inline="always")
def dot6(a, b):
    """a · b for 6-vectors."""
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2] + a[3] * b[3] + a[4] * b[4] + a[5] * b[5]


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
def row6(a, i):
    """The six entries of row i of an (n, 6) array, as scalars."""
    return a[i, 0], a[i, 1], a[i, 2], a[i, 3], a[i, 4], a[i, 5]


@njit(cache=True, inline="always")
def add_scaled6(v0, v1, v2, v3, v4, v5, a, i, s):
    """(v0, …, v5) + s · a[i, :6], as scalars."""
    return (v0 + a[i, 0] * s, v1 + a[i, 1] * s, v2 + a[i, 2] * s, v3 + a[i, 3] * s,
            v4 + a[i, 4] * s, v5 + a[i, 5] * s)


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
