"""Frame conversions used when loading and compiling models (plain NumPy, load time only).

Quaternions are (w, x, y, z), unit length, and rotate vectors from the child frame to the
parent frame. The compiled, per-step versions live in `jointspace.rotation`.

Normalization, products and the orientation attributes round as MuJoCo's compiler does
(its mjuu_normvec: the squares summed in order, the vector divided by its norm unless that
norm is within EPS of 1; degrees converted as value / 180 · π), so that compiled frames
equal MuJoCo's bit for bit and kinematics does too (`jointspace.rotation`).
"""

import math

import numpy as np

EPS = 1e-14  # MuJoCo compiler's mjEPS: below it a squared norm counts as zero


def normvec(v):
    """(v / |v|, |v|) as MuJoCo's compiler computes them; (v, 0) when |v|² < EPS."""
    v = [float(x) for x in v]
    n2 = 0.0
    for x in v:
        n2 += x * x
    if n2 < EPS:
        return np.array(v), 0.0
    n = math.sqrt(n2)
    if abs(n - 1.0) > EPS:
        v = [x / n for x in v]
    return np.array(v), n


def deg2rad(x):
    """An angle in degrees in radians, rounded as MuJoCo's compiler converts them."""
    return x / 180.0 * math.pi


def quat_normalize(q):
    """Unit quaternion in the direction of q; identity for a zero quaternion."""
    u, n = normvec(q)
    return np.array([1.0, 0.0, 0.0, 0.0]) if n == 0.0 else u


def quat_mul(a, b):
    """Hamilton product a ⊗ b, normalized (MuJoCo's compiler's mjuu_mulquat)."""
    aw, ax, ay, az = (float(x) for x in a)
    bw, bx, by, bz = (float(x) for x in b)
    return normvec([
        aw * bw - ax * bx - ay * by - az * bz,
        aw * bx + ax * bw + ay * bz - az * by,
        aw * by - ax * bz + ay * bw + az * bx,
        aw * bz + ax * by - ay * bx + az * bw,
    ])[0]


def quat_to_mat(q):
    """3x3 rotation matrix of unit quaternion q."""
    w, x, y, z = q
    return np.array([
        [1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
        [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
        [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)],
    ])


def mat_to_quat(R):
    """Unit quaternion (w ≥ 0) of rotation matrix R (Shepperd's method, mjuu_frame2quat)."""
    R = np.asarray(R, dtype=np.float64)
    tr = R[0, 0] + R[1, 1] + R[2, 2]
    if tr > 0:
        w = 0.5 * math.sqrt(1 + R[0, 0] + R[1, 1] + R[2, 2])
        q = [w, 0.25 * (R[2, 1] - R[1, 2]) / w, 0.25 * (R[0, 2] - R[2, 0]) / w,
             0.25 * (R[1, 0] - R[0, 1]) / w]
    elif R[0, 0] > R[1, 1] and R[0, 0] > R[2, 2]:
        x = 0.5 * math.sqrt(1 + R[0, 0] - R[1, 1] - R[2, 2])
        q = [0.25 * (R[2, 1] - R[1, 2]) / x, x, 0.25 * (R[0, 1] + R[1, 0]) / x,
             0.25 * (R[0, 2] + R[2, 0]) / x]
    elif R[1, 1] > R[2, 2]:
        y = 0.5 * math.sqrt(1 - R[0, 0] + R[1, 1] - R[2, 2])
        q = [0.25 * (R[0, 2] - R[2, 0]) / y, 0.25 * (R[0, 1] + R[1, 0]) / y, y,
             0.25 * (R[1, 2] + R[2, 1]) / y]
    else:
        z = 0.5 * math.sqrt(1 - R[0, 0] - R[1, 1] + R[2, 2])
        q = [0.25 * (R[1, 0] - R[0, 1]) / z, 0.25 * (R[0, 2] + R[2, 0]) / z,
             0.25 * (R[1, 2] + R[2, 1]) / z, z]
    q = quat_normalize(q)
    return -q if q[0] < 0 else q


def rotate(q, v):
    """Rotate vector v by unit quaternion q."""
    return quat_to_mat(q) @ np.asarray(v, dtype=np.float64)


def axisangle_to_quat(axis, angle):
    """Quaternion of a rotation by `angle` (rad) about `axis` (normalized here)."""
    axis, n = normvec(axis)
    if n == 0.0:
        raise ValueError("rotation axis has zero length")
    half = angle / 2
    return np.array([math.cos(half), math.sin(half) * axis[0], math.sin(half) * axis[1],
                     math.sin(half) * axis[2]])


def euler_to_quat(angles, seq="xyz"):
    """Quaternion of Euler angles (rad) in MuJoCo's `eulerseq` convention.

    Lower-case letters are intrinsic (rotating) axes, upper-case extrinsic (fixed) axes;
    the composition follows MuJoCo: intrinsic rotations post-multiply, extrinsic pre-multiply.
    """
    if len(seq) != 3 or any(c not in "xyzXYZ" for c in seq):
        raise ValueError(f"eulerseq must be three of x, y, z, X, Y, Z; got {seq!r}")
    q = np.array([1.0, 0.0, 0.0, 0.0])
    for c, a in zip(seq, angles):
        r = [math.cos(a / 2), 0.0, 0.0, 0.0]
        r["xyz".index(c.lower()) + 1] = math.sin(a / 2)
        q = quat_mul(q, r) if c.islower() else quat_mul(r, q)
    return quat_normalize(q)


def rpy_to_quat(rpy):
    """Quaternion of URDF roll-pitch-yaw: R = Rz(yaw) Ry(pitch) Rx(roll)."""
    return euler_to_quat(rpy, "XYZ")


def xyaxes_to_quat(xyaxes):
    """Quaternion of a frame given by its x axis and (a vector in the plane of) its y axis."""
    a = np.asarray(xyaxes, dtype=np.float64)
    x = normvec(a[:3])[0]
    d = x[0] * a[3] + x[1] * a[4] + x[2] * a[5]
    y = normvec(a[3:] - x * d)[0]
    z = normvec([x[1] * y[2] - x[2] * y[1], x[2] * y[0] - x[0] * y[2],
                 x[0] * y[1] - x[1] * y[0]])[0]
    return mat_to_quat(np.column_stack([x, y, z]))


def zaxis_to_quat(zaxis):
    """Minimal rotation taking +z to `zaxis`; a rotation by π about x when it points along -z.

    This is MuJoCo's convention for `zaxis` and `fromto` frames (mjuu_z2quat), so
    quaternions compare.
    """
    v = normvec(zaxis)[0]
    axis, s = normvec([-v[1], v[0], 0.0])  # z × v
    if s < 1e-10:
        axis = np.array([1.0, 0.0, 0.0])
    angle = math.atan2(s, v[2])
    return np.array([math.cos(angle / 2), axis[0] * math.sin(angle / 2),
                     axis[1] * math.sin(angle / 2), axis[2] * math.sin(angle / 2)])


def quat_between(a, b):
    """Minimal rotation taking unit vector a to unit vector b."""
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    c = np.dot(a, b)
    if c < -1 + 1e-14:
        # antiparallel: rotate by pi about any axis perpendicular to a
        perp = np.cross(a, [1.0, 0.0, 0.0])
        if np.linalg.norm(perp) < 1e-6:
            perp = np.cross(a, [0.0, 1.0, 0.0])
        return axisangle_to_quat(perp, np.pi)
    axis = np.cross(a, b)
    s = np.linalg.norm(axis)
    if s < 1e-15:
        return np.array([1.0, 0.0, 0.0, 0.0])
    return axisangle_to_quat(axis, np.arctan2(s, c))


def fromto_frame(fromto):
    """Position, orientation and half-length of a geom given by MJCF `fromto`.

    The center is the midpoint; as in MuJoCo's compiler the z axis is built from the vector
    `from - to`, so geom_quat matches MuJoCo's exactly (the geom is symmetric either way).
    A zero-length segment gives the identity orientation and half-length 0.
    """
    f = np.asarray(fromto, dtype=np.float64)
    d = f[:3] - f[3:]
    half = normvec(d)[1] / 2
    quat = zaxis_to_quat(d) if half > 0 else np.array([1.0, 0.0, 0.0, 0.0])
    return (f[:3] + f[3:]) / 2, quat, half
