"""Frame conversions used when loading and compiling models (plain NumPy, load time only).

Quaternions are (w, x, y, z), unit length, and rotate vectors from the child frame to the
parent frame. The compiled, per-step versions live in `jointspace.rotation`.
"""

import numpy as np


def quat_normalize(q):
    """Unit quaternion in the direction of q; identity for a zero quaternion."""
    q = np.asarray(q, dtype=np.float64)
    n = np.linalg.norm(q)
    return np.array([1.0, 0.0, 0.0, 0.0]) if n < 1e-15 else q / n


def quat_mul(a, b):
    """Hamilton product a ⊗ b."""
    aw, ax, ay, az = a
    bw, bx, by, bz = b
    return np.array([
        aw * bw - ax * bx - ay * by - az * bz,
        aw * bx + ax * bw + ay * bz - az * by,
        aw * by - ax * bz + ay * bw + az * bx,
        aw * bz + ax * by - ay * bx + az * bw,
    ])


def quat_to_mat(q):
    """3x3 rotation matrix of unit quaternion q."""
    w, x, y, z = q
    return np.array([
        [1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
        [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
        [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)],
    ])


def mat_to_quat(R):
    """Unit quaternion (w ≥ 0) of rotation matrix R (Shepperd's method)."""
    R = np.asarray(R, dtype=np.float64)
    tr = R[0, 0] + R[1, 1] + R[2, 2]
    if tr > 0:
        s = 2.0 * np.sqrt(1.0 + tr)
        q = [0.25 * s, (R[2, 1] - R[1, 2]) / s, (R[0, 2] - R[2, 0]) / s, (R[1, 0] - R[0, 1]) / s]
    elif R[0, 0] > R[1, 1] and R[0, 0] > R[2, 2]:
        s = 2.0 * np.sqrt(1.0 + R[0, 0] - R[1, 1] - R[2, 2])
        q = [(R[2, 1] - R[1, 2]) / s, 0.25 * s, (R[0, 1] + R[1, 0]) / s, (R[0, 2] + R[2, 0]) / s]
    elif R[1, 1] > R[2, 2]:
        s = 2.0 * np.sqrt(1.0 + R[1, 1] - R[0, 0] - R[2, 2])
        q = [(R[0, 2] - R[2, 0]) / s, (R[0, 1] + R[1, 0]) / s, 0.25 * s, (R[1, 2] + R[2, 1]) / s]
    else:
        s = 2.0 * np.sqrt(1.0 + R[2, 2] - R[0, 0] - R[1, 1])
        q = [(R[1, 0] - R[0, 1]) / s, (R[0, 2] + R[2, 0]) / s, (R[1, 2] + R[2, 1]) / s, 0.25 * s]
    q = quat_normalize(q)
    return -q if q[0] < 0 else q


def rotate(q, v):
    """Rotate vector v by unit quaternion q."""
    return quat_to_mat(q) @ np.asarray(v, dtype=np.float64)


def axisangle_to_quat(axis, angle):
    """Quaternion of a rotation by `angle` (rad) about `axis` (normalized here)."""
    axis = np.asarray(axis, dtype=np.float64)
    n = np.linalg.norm(axis)
    if n < 1e-15:
        raise ValueError("rotation axis has zero length")
    axis = axis / n
    return np.r_[np.cos(angle / 2), np.sin(angle / 2) * axis]


def euler_to_quat(angles, seq="xyz"):
    """Quaternion of Euler angles (rad) in MuJoCo's `eulerseq` convention.

    Lower-case letters are intrinsic (rotating) axes, upper-case extrinsic (fixed) axes;
    the composition follows MuJoCo: intrinsic rotations post-multiply, extrinsic pre-multiply.
    """
    if len(seq) != 3 or any(c not in "xyzXYZ" for c in seq):
        raise ValueError(f"eulerseq must be three of x, y, z, X, Y, Z; got {seq!r}")
    q = np.array([1.0, 0.0, 0.0, 0.0])
    for c, a in zip(seq, angles):
        axis = {"x": [1, 0, 0], "y": [0, 1, 0], "z": [0, 0, 1]}[c.lower()]
        r = axisangle_to_quat(axis, a)
        q = quat_mul(q, r) if c.islower() else quat_mul(r, q)
    return quat_normalize(q)


def rpy_to_quat(rpy):
    """Quaternion of URDF roll-pitch-yaw: R = Rz(yaw) Ry(pitch) Rx(roll)."""
    return euler_to_quat(rpy, "XYZ")


def xyaxes_to_quat(xyaxes):
    """Quaternion of a frame given by its x axis and (a vector in the plane of) its y axis."""
    a = np.asarray(xyaxes, dtype=np.float64)
    x = a[:3] / np.linalg.norm(a[:3])
    y = a[3:] - x * np.dot(x, a[3:])
    y = y / np.linalg.norm(y)
    z = np.cross(x, y)
    return mat_to_quat(np.column_stack([x, y, z]))


def zaxis_to_quat(zaxis):
    """Minimal rotation taking +z to `zaxis`; a rotation by π about x when it points along -z.

    This is MuJoCo's convention for `zaxis` and `fromto` frames, so quaternions compare.
    """
    v = np.asarray(zaxis, dtype=np.float64)
    v = v / np.linalg.norm(v)
    axis = np.array([-v[1], v[0], 0.0])  # z × v
    s = np.linalg.norm(axis)
    axis = np.array([1.0, 0.0, 0.0]) if s < 1e-10 else axis / s
    angle = np.arctan2(s, v[2])
    return np.r_[np.cos(angle / 2), np.sin(angle / 2) * axis]


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
    half = 0.5 * np.linalg.norm(d)
    quat = zaxis_to_quat(d) if half > 0 else np.array([1.0, 0.0, 0.0, 0.0])
    return 0.5 * (f[:3] + f[3:]), quat, half
