"""Spatial (6-D) algebra in the com-based frame, inlined into the kernels.

Motion and force cross products, inertia products, packed symmetric 6×6 articulated
inertias. Spatial vectors are (rotation : linear).

Two forms. Scalar forms take array rows by (array, index) and 6-vectors as tuples of six
scalars, and return tuples, so that hot loops create no array views or temporaries (each
view costs a reference-count update in Numba; a tuple lives in registers). Array forms
(`cross_motion`, `cross_force`, `mul_inert_vec`) write into 6-vectors. Each helper keeps its
equation's order of floating-point operations (a + b + c is (a + b) + c), so a kernel that
calls them computes bit for bit what the same equations written out by hand compute.
Quaternions and 3×3 rotations are in `jointspace.rotation`.

Articulated inertias are symmetric 6x6 matrices stored packed as their lower triangle,
row by row: entry (r, c) with r >= c at r (r + 1) / 2 + c, 21 numbers.
"""

from numba import njit

ZERO6 = (0.0, 0.0, 0.0, 0.0, 0.0, 0.0)  # the zero 6-vector as a tuple (a compile-time constant)


@njit(cache=True, inline="always")
def inert_mul(c, i, v0, v1, v2, v3, v4, v5):
    """I v for the com-based inertia c[i] (MuJoCo's 10-number layout) and a motion v.

    Layout: (Ixx, Iyy, Izz, Ixy, Ixz, Iyz, m cx, m cy, m cz, m); the 6x6 matrix is
    [[I, [h]×], [[h]×ᵀ, m E]] with h = m c.
    """
    i0 = c[i, 0]
    i1 = c[i, 1]
    i2 = c[i, 2]
    i3 = c[i, 3]
    i4 = c[i, 4]
    i5 = c[i, 5]
    h0 = c[i, 6]
    h1 = c[i, 7]
    h2 = c[i, 8]
    mass = c[i, 9]
    return (i0 * v0 + i3 * v1 + i4 * v2 - h2 * v4 + h1 * v5,
            i3 * v0 + i1 * v1 + i5 * v2 + h2 * v3 - h0 * v5,
            i4 * v0 + i5 * v1 + i2 * v2 - h1 * v3 + h0 * v4,
            h2 * v1 - h1 * v2 + mass * v3,
            h0 * v2 - h2 * v0 + mass * v4,
            h1 * v0 - h0 * v1 + mass * v5)


@njit(cache=True, inline="always")
def inert_mul6(c, i, v):
    """I v for the com-based inertia c[i] and a motion v given as a 6-tuple (see inert_mul)."""
    return inert_mul(c, i, v[0], v[1], v[2], v[3], v[4], v[5])


@njit(cache=True, inline="always")
def cross_force6(v, f):
    """Spatial cross product v ×* f of a motion v and a force f, both 6-tuples."""
    v0, v1, v2, v3, v4, v5 = v
    f0, f1, f2, f3, f4, f5 = f
    return (v1 * f2 - v2 * f1 + v4 * f5 - v5 * f4,
            v2 * f0 - v0 * f2 + v5 * f3 - v3 * f5,
            v0 * f1 - v1 * f0 + v3 * f4 - v4 * f3,
            v1 * f5 - v2 * f4,
            v2 * f3 - v0 * f5,
            v0 * f4 - v1 * f3)


@njit(cache=True, inline="always")
def world_wrench_to_com(f, i, px, py, pz, cx, cy, cz):
    """Com-based spatial force (torque : force) of f[i] = (force, torque) applied at p.

    The torque about the c-frame origin c is t + (p - c) × force.
    """
    r0 = px - cx
    r1 = py - cy
    r2 = pz - cz
    fx = f[i, 0]
    fy = f[i, 1]
    fz = f[i, 2]
    return (f[i, 3] + r1 * fz - r2 * fy,
            f[i, 4] + r2 * fx - r0 * fz,
            f[i, 5] + r0 * fy - r1 * fx,
            fx, fy, fz)


@njit(cache=True, inline="always")
def sym_from_cinert(P, i, c, k):
    """P[i, 0:21] = the packed 6x6 matrix of com-based inertia c[k]."""
    h0 = c[k, 6]
    h1 = c[k, 7]
    h2 = c[k, 8]
    mass = c[k, 9]
    # rotational block
    P[i, 0] = c[k, 0]
    P[i, 1] = c[k, 3]
    P[i, 2] = c[k, 1]
    P[i, 3] = c[k, 4]
    P[i, 4] = c[k, 5]
    P[i, 5] = c[k, 2]
    # lower-left block [h]×ᵀ = -[h]×:  rows (lin), columns (rot)
    P[i, 6] = 0.0
    P[i, 7] = h2
    P[i, 8] = -h1
    P[i, 9] = mass
    P[i, 10] = -h2
    P[i, 11] = 0.0
    P[i, 12] = h0
    P[i, 13] = 0.0
    P[i, 14] = mass
    P[i, 15] = h1
    P[i, 16] = -h0
    P[i, 17] = 0.0
    P[i, 18] = 0.0
    P[i, 19] = 0.0
    P[i, 20] = mass


@njit(cache=True, inline="always")
def sym_mul6(P, i, s):
    """P[i] s for a packed symmetric 6x6 P[i] and a 6-tuple s."""
    s0, s1, s2, s3, s4, s5 = s
    return (P[i, 0] * s0 + P[i, 1] * s1 + P[i, 3] * s2
            + P[i, 6] * s3 + P[i, 10] * s4 + P[i, 15] * s5,
            P[i, 1] * s0 + P[i, 2] * s1 + P[i, 4] * s2
            + P[i, 7] * s3 + P[i, 11] * s4 + P[i, 16] * s5,
            P[i, 3] * s0 + P[i, 4] * s1 + P[i, 5] * s2
            + P[i, 8] * s3 + P[i, 12] * s4 + P[i, 17] * s5,
            P[i, 6] * s0 + P[i, 7] * s1 + P[i, 8] * s2
            + P[i, 9] * s3 + P[i, 13] * s4 + P[i, 18] * s5,
            P[i, 10] * s0 + P[i, 11] * s1 + P[i, 12] * s2
            + P[i, 13] * s3 + P[i, 14] * s4 + P[i, 19] * s5,
            P[i, 15] * s0 + P[i, 16] * s1 + P[i, 17] * s2
            + P[i, 18] * s3 + P[i, 19] * s4 + P[i, 20] * s5)


@njit(cache=True, inline="always")
def sym_rank1_sub(P, i, u, scale):
    """P[i] -= scale u uᵀ (packed lower triangle) for a 6-tuple u."""
    u0, u1, u2, u3, u4, u5 = u
    w0 = scale * u0
    w1 = scale * u1
    w2 = scale * u2
    w3 = scale * u3
    w4 = scale * u4
    w5 = scale * u5
    P[i, 0] -= w0 * u0
    P[i, 1] -= w1 * u0
    P[i, 2] -= w1 * u1
    P[i, 3] -= w2 * u0
    P[i, 4] -= w2 * u1
    P[i, 5] -= w2 * u2
    P[i, 6] -= w3 * u0
    P[i, 7] -= w3 * u1
    P[i, 8] -= w3 * u2
    P[i, 9] -= w3 * u3
    P[i, 10] -= w4 * u0
    P[i, 11] -= w4 * u1
    P[i, 12] -= w4 * u2
    P[i, 13] -= w4 * u3
    P[i, 14] -= w4 * u4
    P[i, 15] -= w5 * u0
    P[i, 16] -= w5 * u1
    P[i, 17] -= w5 * u2
    P[i, 18] -= w5 * u3
    P[i, 19] -= w5 * u4
    P[i, 20] -= w5 * u5


@njit(cache=True, inline="always")
def sym_add(P, i, j):
    """P[i] += P[j] (packed)."""
    for t in range(21):
        P[i, t] += P[j, t]


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
    """a · b for 6-vectors (arrays or 6-tuples)."""
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2] + a[3] * b[3] + a[4] * b[4] + a[5] * b[5]


@njit(cache=True, inline="always")
def row6(a, i):
    """The six entries of row i of an (n, 6) array, as scalars."""
    return a[i, 0], a[i, 1], a[i, 2], a[i, 3], a[i, 4], a[i, 5]


@njit(cache=True, inline="always")
def row6_at(a, i, c):
    """a[i, c:c + 6] as scalars (a 6-vector stored at column c; a view would cost time)."""
    return a[i, c], a[i, c + 1], a[i, c + 2], a[i, c + 3], a[i, c + 4], a[i, c + 5]


@njit(cache=True, inline="always")
def add_scaled6(v0, v1, v2, v3, v4, v5, a, i, s):
    """(v0, …, v5) + s · a[i, :6], as scalars."""
    return (v0 + a[i, 0] * s, v1 + a[i, 1] * s, v2 + a[i, 2] * s, v3 + a[i, 3] * s,
            v4 + a[i, 4] * s, v5 + a[i, 5] * s)


@njit(cache=True, inline="always")
def set_row6(a, i, v):
    """a[i, :6] = v for a 6-tuple v."""
    a[i, 0], a[i, 1], a[i, 2], a[i, 3], a[i, 4], a[i, 5] = v


@njit(cache=True, inline="always")
def set_row6_at(a, i, c, v):
    """a[i, c:c + 6] = v for a 6-tuple v."""
    a[i, c], a[i, c + 1], a[i, c + 2], a[i, c + 3], a[i, c + 4], a[i, c + 5] = v


@njit(cache=True, inline="always")
def col6(a, j):
    """The six entries of column j of a (6, n) array, as scalars."""
    return a[0, j], a[1, j], a[2, j], a[3, j], a[4, j], a[5, j]


@njit(cache=True, inline="always")
def set_col6(a, j, v):
    """a[:6, j] = v for a 6-tuple v."""
    a[0, j], a[1, j], a[2, j], a[3, j], a[4, j], a[5, j] = v


@njit(cache=True, inline="always")
def add6(u, v):
    """u + v for 6-tuples."""
    return u[0] + v[0], u[1] + v[1], u[2] + v[2], u[3] + v[3], u[4] + v[4], u[5] + v[5]


@njit(cache=True, inline="always")
def sub6(u, v):
    """u - v for 6-tuples."""
    return u[0] - v[0], u[1] - v[1], u[2] - v[2], u[3] - v[3], u[4] - v[4], u[5] - v[5]


@njit(cache=True, inline="always")
def scale6(v, s):
    """v s for a 6-tuple v and a scalar s."""
    return v[0] * s, v[1] * s, v[2] * s, v[3] * s, v[4] * s, v[5] * s


@njit(cache=True, inline="always")
def add_scl6(v, u, s):
    """v + u s for 6-tuples u, v and a scalar s (MuJoCo's mju_addToScl)."""
    return (v[0] + u[0] * s, v[1] + u[1] * s, v[2] + u[2] * s, v[3] + u[3] * s,
            v[4] + u[4] * s, v[5] + u[5] * s)
