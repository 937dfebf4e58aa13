"""MuJoCo's native convex collision detection: its GJK, EPA and their stopping rules.

For a pair of convex shapes this computes what MuJoCo 4.0's `mjc_ccd` computes, step for
step, so that its results stop where MuJoCo's stop at the model's `ccd_iterations` and
`ccd_tolerance` (`Model.opt_ccd_iterations`, `opt_ccd_tolerance`; MuJoCo's defaults 35 and
1e-6). The published engine_collision_gjk.c (3.12.1-dev, August 2026) is the structure;
MuJoCo 4.0.0's binary differs from it in three places, found by matching its
`mj_geomDistance` bit for bit (docs/conventions.md, "Convex collision"), and this follows
the binary:

- GJK continues from the point its distance subalgorithm found (the origin's projection on
  the segment or triangle), not from the simplex's weighted vertex sum;
- a triangle's minors are taken from its edges, and the weights of a point in a triangle
  (GJK's subalgorithm, EPA's witness points) are its projected areas over their sum;
- contacts are the shapes' signed distance with the margin as the distance cutoff, not
  the shapes inflated by the margin.

The rest is the source's:

- each shape is described by its support function, MuJoCo's (sphere, capsule, ellipsoid,
  cylinder, box, a mesh's hull vertices, a height field's prism);
- GJK (Montanari et al., ToG 2017: the signed-volume distance subalgorithm) from the
  difference of the two centres, stopping on the Frank-Wolfe duality gap (½ tolerance²,
  0 for two boxes or meshes), at a distance below the tolerance, or on stagnation; when
  only contact matters (no distance cutoff) a tetrahedron hands over to the
  separating-plane test (gjkIntersect);
- EPA from GJK's simplex: a hexahedron around a segment or triangle, or the tetrahedron,
  expanded toward the face nearest the origin until the depth's upper and lower bounds
  meet within the tolerance (1e-15 for two boxes or meshes, which also stop on a repeated
  support vertex), at most min(ccd_iterations, 1000) times and 6 × ccd_iterations faces;
  the witness points are the nearest face's affine combination of the support points.

`contact` is one pair's deepest contact within the margin: the signed distance, the
point midway between the witness points and the normal from geom 1 to geom 2. `distance`
is mj_geomDistance's. The flat-feature contacts of boxes, meshes and cylinders
(collision.convex.flat_contacts) start from this contact.

The workspace is `make_workspace(ccd_iterations)`: rows 0 … 4 + N of the vertex array
are EPA's polytope, the last 9 rows GJK's simplex and scratch. A vertex row holds the
support point of the difference, the two shapes' support points and, for boxes, meshes
and prisms, the indices of their support vertices.
"""

import math

import numpy as np
from numba import types

from jointspace._numba.scratch import borrow, shaped
from jointspace.collision._vec import (
    F2,
    F8,
    I1,
    I8,
    M9,
    V3,
    WS,
    cross,
    dot,
    jit,
    jit_inline,
    jit_sig,
    sub,
)
from jointspace.collision.convex import (
    CORE_POINT,
    CORE_PRISM,
    CORE_SEGMENT,
    POLY_MAX,
    hull_index_from,
)
from jointspace.types import (
    GEOM_BOX,
    GEOM_CAPSULE,
    GEOM_CYLINDER,
    GEOM_ELLIPSOID,
    GEOM_MESH,
    GEOM_SPHERE,
    MINVAL,
)

MAXLIMIT = 1.7976931348623157e308  # DBL_MAX: MuJoCo's "no distance"
MINVAL2 = MINVAL * MINVAL
MAXVAL2 = 1e10 * 1e10  # mjMAXVAL squared
MINDIST = MINVAL2  # a polytope face nearer the origin (squared) than this: origin on it
MINEPATOL = MINVAL  # EPA's tolerance for two discrete shapes
EPA_MAXITER = 1000  # EPA runs at most min(ccd_iterations, this) iterations
EPA_CAP = 10000  # EPA's face memory is 6 × min(ccd_iterations, this) (MuJoCo: no cap)
NSCR = 9  # GJK rows at the end of the vertex array: simplex, gjkIntersect's copy, scratch
SCR_MIN = 1184  # least rows of the integer scratch arrays (flat_contacts' face lists)
NCOL = 11  # a vertex row: difference (3), support of shape 1 (3), of shape 2 (3), 2 indices

# a shape: (type, pos, rotation, size, first hull row, hull rows, hull graph address)
OBJ = types.Tuple((I8, V3, M9, V3, I8, I8, I8))

# EPA's polytope builders' failures (MuJoCo's mjEPAStatus), 0 on success
P2_NONCONVEX = 2
P3_BAD_NORMAL = 4
P3_INVALID_V4 = 5
P3_INVALID_V5 = 6
P3_ORIGIN_ON_FACE = 8
P4_MISSING_ORIGIN = 9

# the starting polytopes' faces, in MuJoCo's order: vertex rows a, b, c, then the faces
# adjacent across the edges ab, bc, ca
BIPYRAMID_FACES = ((4, 0, 1, 1, 3, 2), (4, 2, 0, 2, 4, 0), (4, 1, 2, 0, 5, 1),
                   (3, 1, 0, 5, 0, 4), (3, 0, 2, 3, 1, 5), (3, 2, 1, 4, 2, 3))
HEXAHEDRON_FACES = ((0, 2, 3, 1, 3, 2), (0, 4, 2, 2, 4, 0), (0, 3, 4, 0, 5, 1),
                    (1, 3, 2, 5, 0, 4), (1, 2, 4, 3, 1, 5), (1, 4, 3, 4, 2, 3))
TETRAHEDRON_FACES = ((0, 1, 2, 1, 3, 2), (0, 3, 1, 2, 3, 0), (0, 2, 3, 0, 3, 1),
                     (3, 2, 1, 2, 0, 1))


@jit_inline
def _cap(niter):
    """Iterations the workspace is sized for: at least 1; beyond EPA_CAP as EPA_CAP."""
    return min(max(niter, 1), EPA_CAP)


@jit
def make_workspace(niter):
    """Scratch of the convex routines for ccd_iterations = niter (allocated once per call).

    Returns (verts, faces, fplane, fmap, hz, poly, fbuf): vertex rows (EPA's polytope,
    then GJK's rows), faces (3 vertices, 3 neighbours across edges v0v1, v1v2, v2v0, map
    slot: −1 none, −2 deleted), face planes (the origin's projection on the face, its
    squared norm), the map of live faces (also flat_contacts' scratch), horizon and
    search stack (columns 0-1: horizon face and edge; 2-4: stack frames), polygon
    buffers for face clipping and a spare contact buffer.
    """
    n = _cap(niter)
    nv = 5 + n + NSCR
    nf = 6 * n
    ns = max(3 * nf + 8, SCR_MIN)
    npoly = 2 * POLY_MAX + 2
    # one float and one integer block cut into views (each allocation costs ~0.1 µs)
    fs = np.empty(NCOL * nv + 4 * nf + 12 * npoly + 40)
    iscr = np.empty(7 * nf + 6 * ns, dtype=np.int64)
    o = NCOL * nv
    verts = fs[0:o].reshape((nv, NCOL))
    fplane = fs[o:o + 4 * nf].reshape((nf, 4))
    o += 4 * nf
    poly = fs[o:o + 12 * npoly].reshape((4, npoly, 3))
    fbuf = fs[o + 12 * npoly:o + 12 * npoly + 40].reshape((4, 10))
    faces = iscr[0:7 * nf].reshape((nf, 7))
    fmap = iscr[7 * nf:7 * nf + ns]
    hz = iscr[7 * nf + ns:7 * nf + 6 * ns].reshape((ns, 5))
    return verts, faces, fplane, fmap, hz, poly, fbuf


@jit_inline
def borrowed(ws):
    """The workspace's arrays without their reference-counting handles (scratch.borrow).

    Every non-inlined call that takes the workspace would otherwise take and drop a
    reference to each array (atomic instructions, per support point in GJK and EPA); the
    caller keeps ws itself alive while the views are used.
    """
    return (borrow(ws[0]), borrow(ws[1]), borrow(ws[2]), borrow(ws[3]), borrow(ws[4]),
            borrow(ws[5]), borrow(ws[6]))


PLACEHOLDER_F = NCOL + 4 + 12 + 40  # floats of the placeholder workspace
PLACEHOLDER_L = 7 + 1 + 5  # its integers


@jit_inline
def workspace_placeholder(fs, iscr):
    """A workspace of one row each (the type of make_workspace's) as views of scratch.

    fs: PLACEHOLDER_F floats, iscr: PLACEHOLDER_L integers. A caller allocates the real
    workspace when the first convex pair comes up (its vertex array has more rows).
    """
    verts = shaped(fs[0:NCOL], (1, NCOL))
    o = NCOL
    fplane = shaped(fs[o:o + 4], (1, 4))
    poly = shaped(fs[o + 4:o + 16], (4, 1, 3))
    fbuf = shaped(fs[o + 16:o + 56], (4, 10))
    faces = shaped(iscr[0:7], (1, 7))
    fmap = iscr[7:8]
    hz = shaped(iscr[8:13], (1, 5))
    return verts, faces, fplane, fmap, hz, poly, fbuf


# ---------------------------------------------------------------------------------------------
# support functions (MuJoCo's mjc_*Support, in its order of operations)


@jit_inline
def _discrete(o1, o2):
    """Both shapes boxes, meshes or prisms (GJK and EPA end in finite steps)."""
    t1 = o1[0]
    t2 = o2[0]
    return ((t1 == GEOM_MESH or t1 == GEOM_BOX or t1 == CORE_PRISM)
            and (t2 == GEOM_MESH or t2 == GEOM_BOX or t2 == CORE_PRISM))


@jit_inline
def _center(o, hv):
    """A shape's centre: its position, a prism's vertex mean."""
    if o[0] == CORE_PRISM:
        va = o[4]
        c0 = c1 = c2 = 0.0
        for i in range(6):
            c0 += hv[va + i, 0]
            c1 += hv[va + i, 1]
            c2 += hv[va + i, 2]
        s = 1.0 / 6.0
        return (c0 * s, c1 * s, c2 * s)
    return o[1]


@jit_inline
def _support_body(o, hv, hg, d, start):
    """Support point of shape o along the unit world direction d.

    Returns (point, vertex index (box corner, hull or prism row; −1 for round shapes),
    the mesh climb's next start).
    """
    t, pos, mat, size, va, nv, ga = o
    idx = -1
    if t == CORE_POINT:
        r = pos
    elif t == CORE_SEGMENT:
        dt = mat[2] * d[0] + mat[5] * d[1] + mat[8] * d[2]
        s = size[1] if dt >= 0 else -size[1]
        r = (mat[2] * s + pos[0], mat[5] * s + pos[1], mat[8] * s + pos[2])
    elif t == GEOM_SPHERE:
        r = (size[0] * d[0] + pos[0], size[0] * d[1] + pos[1], size[0] * d[2] + pos[2])
    elif t == CORE_PRISM:
        i0 = va if d[2] < 0 else va + 3
        ib = i0
        best = hv[i0, 0] * d[0] + hv[i0, 1] * d[1] + hv[i0, 2] * d[2]
        for i in range(i0 + 1, i0 + 3):
            p = hv[i, 0] * d[0] + hv[i, 1] * d[1] + hv[i, 2] * d[2]
            if p > best:
                best = p
                ib = i
        idx = ib
        r = (hv[ib, 0], hv[ib, 1], hv[ib, 2])
    else:
        l0 = mat[0] * d[0] + mat[3] * d[1] + mat[6] * d[2]
        l1 = mat[1] * d[0] + mat[4] * d[1] + mat[7] * d[2]
        l2 = mat[2] * d[0] + mat[5] * d[1] + mat[8] * d[2]
        flat = True
        if t == GEOM_CAPSULE:
            loc = (l0 * size[0], l1 * size[0],
                   l2 * size[0] + (size[1] if l2 >= 0 else -size[1]))
        elif t == GEOM_ELLIPSOID:
            e0 = l0 * size[0]
            e1 = l1 * size[1]
            e2 = l2 * size[2]
            n2 = e0 * e0 + e1 * e1 + e2 * e2
            if n2 < MINVAL2:
                flat = False
                loc = (0.0, 0.0, 0.0)
            else:
                inv = 1.0 / math.sqrt(n2)
                loc = (e0 * (inv * size[0]), e1 * (inv * size[1]), e2 * (inv * size[2]))
        elif t == GEOM_CYLINDER:
            n2 = l0 * l0 + l1 * l1
            s = size[0] / math.sqrt(n2) if n2 >= MINVAL2 else 0.0
            loc = (s * l0, s * l1, size[1] if l2 >= 0 else -size[1])
        elif t == GEOM_BOX:
            loc = (size[0] if l0 >= 0 else -size[0], size[1] if l1 >= 0 else -size[1],
                   size[2] if l2 >= 0 else -size[2])
            idx = ((1 if loc[0] > 0 else 0) | (2 if loc[1] > 0 else 0)
                   | (4 if loc[2] > 0 else 0))
        else:  # mesh: its hull vertex of largest projection
            ib = hull_index_from(hv, va, nv, hg, ga, start, l0, l1, l2)
            idx = ib
            start = ib
            loc = (hv[ib, 0], hv[ib, 1], hv[ib, 2])
        if flat:
            r = (mat[0] * loc[0] + mat[1] * loc[1] + mat[2] * loc[2] + pos[0],
                 mat[3] * loc[0] + mat[4] * loc[1] + mat[5] * loc[2] + pos[1],
                 mat[6] * loc[0] + mat[7] * loc[1] + mat[8] * loc[2] + pos[2])
        else:
            r = (mat[0] * size[0] + pos[0], mat[3] * size[0] + pos[1],
                 mat[6] * size[0] + pos[2])
    return r, idx, start


@jit_sig(types.Tuple((V3, I8, I8))(OBJ, F2, I1, V3, I8))
def _support(o, hv, hg, d, start):
    """`_support_body`, called rather than inlined where the polytopes start.

    GJK and EPA make support points at ten places, each for both shapes; inlined at all of
    them they compiled minutes longer (docs/speed.md, "Compile time"). EPA's loop inlines it
    (`_mink_loop`): a call copies both shapes' tuples and the arrays onto the stack, which
    cost EPA more than the support itself (GJK's loops, as fast as MuJoCo's, call it).
    """
    return _support_body(o, hv, hg, d, start)


@jit_inline
def _mink(verts, row, o1, o2, hv, hg, d, dneg, s1, s2):
    """Store the support of shape 1 − shape 2 along d in vertex row `row`; returns it."""
    a, i1, s1 = _support(o1, hv, hg, d, s1)
    b, i2, s2 = _support(o2, hv, hg, dneg, s2)
    return _store(verts, row, a, b, i1, i2), s1, s2


@jit_inline
def _mink_loop(verts, row, o1, o2, hv, hg, d, dneg, s1, s2):
    """`_mink` with the supports inlined, for EPA's loop."""
    a, i1, s1 = _support_body(o1, hv, hg, d, s1)
    b, i2, s2 = _support_body(o2, hv, hg, dneg, s2)
    return _store(verts, row, a, b, i1, i2), s1, s2


@jit_inline
def _store(verts, row, a, b, i1, i2):
    """Vertex row `row` ← a − b, a, b and the vertex indices; returns a − b."""
    w = (a[0] - b[0], a[1] - b[1], a[2] - b[2])
    # indexed in two dimensions: a row view made here costs two atomic reference counts
    verts[row, 0], verts[row, 1], verts[row, 2] = w
    verts[row, 3], verts[row, 4], verts[row, 5] = a
    verts[row, 6], verts[row, 7], verts[row, 8] = b
    verts[row, 9] = i1
    verts[row, 10] = i2
    return w


@jit_inline
def _w(verts, i):
    return (verts[i, 0], verts[i, 1], verts[i, 2])


@jit_inline
def _copy_row(verts, dst, src):
    for c in range(NCOL):
        verts[dst, c] = verts[src, c]


# ---------------------------------------------------------------------------------------------
# GJK's distance subalgorithm (signed volumes)


@jit_inline
def _scl(v, s):
    return (s * v[0], s * v[1], s * v[2])


@jit_inline
def _det3(v1, v2, v3):
    return (v1[0] * (v2[1] * v3[2] - v2[2] * v3[1]) + v1[1] * (v2[2] * v3[0] - v2[0] * v3[2])
            + v1[2] * (v2[0] * v3[1] - v2[1] * v3[0]))


@jit_inline
def _same_sign(a, b):
    """MuJoCo's sameSign2 as a truth value: both positive or both negative."""
    return (a > 0 and b > 0) or (a < 0 and b < 0)


@jit_inline
def _lin3(l0, l1, l2, v1, v2, v3):
    return (l0 * v1[0] + l1 * v2[0] + l2 * v3[0], l0 * v1[1] + l1 * v2[1] + l2 * v3[1],
            l0 * v1[2] + l1 * v2[2] + l2 * v3[2])


@jit
def _project_plane(v1, v2, v3):
    """The origin projected on the plane through v1, v2, v3; (point, 1 when degenerate)."""
    d21 = sub(v2, v1)
    d31 = sub(v3, v1)
    d32 = sub(v3, v2)
    n = cross(d32, d21)
    nv = dot(n, v2)
    nn = dot(n, n)
    if nn == 0:
        return (0.0, 0.0, 0.0), 1
    if nv != 0 and nn > MINVAL:
        return _scl(n, nv / nn), 0
    n = cross(d21, d31)
    nv = dot(n, v1)
    nn = dot(n, n)
    if nn == 0:
        return (0.0, 0.0, 0.0), 1
    if nv != 0 and nn > MINVAL:
        return _scl(n, nv / nn), 0
    n = cross(d31, d32)
    nv = dot(n, v3)
    nn = dot(n, n)
    return _scl(n, nv / nn), 0


@jit
def _s1d(s1, s2):
    """Barycentric weights of the point of segment s1 s2 nearest the origin, and the point.

    The point is the origin's projection on the line where it falls inside, else s2 (MuJoCo
    4.0's GJK continues from these projections, not from the weighted sum of the vertices:
    module docstring).
    """
    diff = sub(s2, s1)
    sc = -(dot(s2, diff) / dot(diff, diff))
    p = (s2[0] + sc * diff[0], s2[1] + sc * diff[1], s2[2] + sc * diff[2])
    mu = s1[0] - s2[0]
    mu_max = mu
    idx = 0
    mu = s1[1] - s2[1]
    if abs(mu) >= abs(mu_max):
        mu_max = mu
        idx = 1
    mu = s1[2] - s2[2]
    if abs(mu) >= abs(mu_max):
        mu_max = mu
        idx = 2
    c1 = p[idx] - s2[idx]
    c2 = s1[idx] - p[idx]
    if _same_sign(mu_max, c1) and _same_sign(mu_max, c2):
        return c1 / mu_max, c2 / mu_max, p
    return 0.0, 1.0, s2


@jit_inline
def _minors(s1, s2, s3):
    """The triangle's largest projected signed area (×2) and the two axes it lies in.

    From the edges s2 − s1 and s3 − s1, as MuJoCo 4.0 computes it.
    """
    e1 = sub(s2, s1)
    e2 = sub(s3, s1)
    m14 = e1[1] * e2[2] - e1[2] * e2[1]
    m24 = e1[0] * e2[2] - e1[2] * e2[0]
    m34 = e1[0] * e2[1] - e1[1] * e2[0]
    a1 = abs(m14)
    a2 = abs(m24)
    a3 = abs(m34)
    if a1 >= a2 and a1 >= a3:
        return m14, 1, 2
    if a2 >= a3:
        return m24, 0, 2
    return m34, 0, 1


@jit_inline
def _area(p, a, b, x, y):
    """Signed area (×2) of the triangle p a b projected on the axes x, y."""
    return (a[x] - p[x]) * (b[y] - p[y]) - (a[y] - p[y]) * (b[x] - p[x])


@jit_inline
def _areas(p, s1, s2, s3, x, y):
    """The projected areas of p s2 s3, p s3 s1, p s1 s2, and their sum."""
    c31 = _area(p, s2, s3, x, y)
    c32 = _area(p, s3, s1, x, y)
    c33 = _area(p, s1, s2, x, y)
    return c31, c32, c33, c31 + c32 + c33


@jit
def _s2d(s1, s2, s3):
    """Barycentric weights of the point of triangle s1 s2 s3 nearest the origin, the point.

    Inside, the weights are the projected areas over their sum and the point is the
    origin's projection on the plane; outside, the nearest edge's (`_s1d`).
    """
    p, bad = _project_plane(s1, s2, s3)
    if bad:
        a, b, q = _s1d(s1, s2)
        return a, b, 0.0, q
    m_max, x, y = _minors(s1, s2, s3)
    c31, c32, c33, tot = _areas(p, s1, s2, s3, x, y)
    k1 = _same_sign(m_max, c31)
    k2 = _same_sign(m_max, c32)
    k3 = _same_sign(m_max, c33)
    if k1 and k2 and k3:
        return c31 / tot, c32 / tot, c33 / tot, p
    lam = (0.0, 0.0, 0.0)
    best = p
    dmin = MAXLIMIT
    if not k1:
        a, b, q = _s1d(s2, s3)
        lam = (0.0, a, b)
        best = q
        dmin = dot(q, q)
    if not k2:
        a, b, q = _s1d(s1, s3)
        dd = dot(q, q)
        if dd < dmin:
            lam = (a, 0.0, b)
            best = q
            dmin = dd
    if not k3:
        a, b, q = _s1d(s1, s2)
        dd = dot(q, q)
        if dd < dmin:
            lam = (a, b, 0.0)
            best = q
    return lam[0], lam[1], lam[2], best


@jit
def _s3d(s1, s2, s3, s4):
    """Barycentric weights of the point of tetrahedron s1 … s4 nearest the origin."""
    c41 = -_det3(s2, s3, s4)
    c42 = _det3(s1, s3, s4)
    c43 = -_det3(s1, s2, s4)
    c44 = _det3(s1, s2, s3)
    m_det = c41 + c42 + c43 + c44
    k1 = _same_sign(m_det, c41)
    k2 = _same_sign(m_det, c42)
    k3 = _same_sign(m_det, c43)
    k4 = _same_sign(m_det, c44)
    if k1 and k2 and k3 and k4:
        l1, l2, l3, l4 = c41 / m_det, c42 / m_det, c43 / m_det, c44 / m_det
        q = _lin3(l1, l2, l3, s1, s2, s3)
        q = (q[0] + l4 * s4[0], q[1] + l4 * s4[1], q[2] + l4 * s4[2])
        return l1, l2, l3, l4, q
    lam = (0.0, 0.0, 0.0, 0.0)
    best = (0.0, 0.0, 0.0)
    dmin = MAXLIMIT
    if not k1:
        a, b, c, q = _s2d(s2, s3, s4)
        lam = (0.0, a, b, c)
        best = q
        dmin = dot(q, q)
    if not k2:
        a, b, c, q = _s2d(s1, s3, s4)
        dd = dot(q, q)
        if dd < dmin:
            lam = (a, 0.0, b, c)
            best = q
            dmin = dd
    if not k3:
        a, b, c, q = _s2d(s1, s2, s4)
        dd = dot(q, q)
        if dd < dmin:
            lam = (a, b, 0.0, c)
            best = q
            dmin = dd
    if not k4:
        a, b, c, q = _s2d(s1, s2, s3)
        dd = dot(q, q)
        if dd < dmin:
            lam = (a, b, c, 0.0)
            best = q
    return lam[0], lam[1], lam[2], lam[3], best


@jit_inline
def _subdistance(verts, s, n):
    """Weights of the simplex rows s … s + n − 1 (row s + 8 gets them, 4 columns).

    Returns the simplex's point nearest the origin, as the subalgorithm found it.
    """
    lam = verts[s + 8]
    lam[0] = lam[1] = lam[2] = lam[3] = 0.0
    if n == 4:
        lam[0], lam[1], lam[2], lam[3], q = _s3d(_w(verts, s), _w(verts, s + 1),
                                                 _w(verts, s + 2), _w(verts, s + 3))
    elif n == 3:
        lam[0], lam[1], lam[2], q = _s2d(_w(verts, s), _w(verts, s + 1), _w(verts, s + 2))
    elif n == 2:
        lam[0], lam[1], q = _s1d(_w(verts, s), _w(verts, s + 1))
    else:
        lam[0] = 1.0
        q = _w(verts, s)
    return q


@jit_inline
def _combine(verts, s, n, c):
    """Σ weight_i · (column c … c + 2 of simplex row s + i) with row s + 8's weights."""
    lam = verts[s + 8]
    r0 = r1 = r2 = 0.0
    if n >= 1:
        r0 = lam[0] * verts[s, c]
        r1 = lam[0] * verts[s, c + 1]
        r2 = lam[0] * verts[s, c + 2]
    for i in range(1, n):
        r0 = r0 + lam[i] * verts[s + i, c]
        r1 = r1 + lam[i] * verts[s + i, c + 1]
        r2 = r2 + lam[i] * verts[s + i, c + 2]
    return (r0, r1, r2)


# ---------------------------------------------------------------------------------------------
# GJK


@jit_inline
def _signed_distance(verts, i1, i2, i3):
    """(distance of the origin's side, unit normal) of the face i1 i2 i3 (MAXLIMIT: none)."""
    v1 = _w(verts, i1)
    n = cross(sub(_w(verts, i3), v1), sub(_w(verts, i2), v1))
    n2 = dot(n, n)
    if n2 > MINVAL2 and n2 < MAXVAL2:
        n = _scl(n, 1.0 / math.sqrt(n2))
        return dot(n, v1), n
    return MAXLIMIT, n


@jit
def _gjk_intersect(verts, s, o1, o2, hv, hg, k, kmax, st1, st2):
    """MuJoCo's gjkIntersect from the tetrahedron in simplex rows s … s + 3.

    Returns (1 in contact: the tetrahedron enclosing the origin back in rows s …; 0
    separated; −1 inconclusive, the iteration count, climb starts).
    """
    q = s + 4
    for i in range(4):
        _copy_row(verts, q + i, s + i)
    while k < kmax:
        d0, n0 = _signed_distance(verts, q + 2, q + 1, q + 3)
        d1, n1 = _signed_distance(verts, q + 0, q + 2, q + 3)
        d2, n2 = _signed_distance(verts, q + 1, q + 0, q + 3)
        d3, n3 = _signed_distance(verts, q + 0, q + 1, q + 2)
        if d3 == 0 or d2 == 0 or d1 == 0 or d0 == 0:
            return -1, k, st1, st2
        i = 0 if d0 < d1 else 1
        di = d0 if i == 0 else d1
        j = 2 if d2 < d3 else 3
        dj = d2 if j == 2 else d3
        index = i if di < dj else j
        dmin = di if di < dj else dj
        if dmin > 0:
            for r in range(4):
                _copy_row(verts, s + r, q + r)
            return 1, k, st1, st2
        if index == 0:
            nr = n0
        elif index == 1:
            nr = n1
        elif index == 2:
            nr = n2
        else:
            nr = n3
        w, st1, st2 = _mink(verts, q + index, o1, o2, hv, hg, nr,
                            (-nr[0], -nr[1], -nr[2]), st1, st2)
        if dot(nr, w) < 0:
            return 0, k, st1, st2
        # swap two other rows to keep the orientation
        a = q + ((index + 1) & 3)
        b = q + ((index + 2) & 3)
        for c in range(NCOL):
            t = verts[a, c]
            verts[a, c] = verts[b, c]
            verts[b, c] = t
        k += 1
    return -1, k, st1, st2


@jit
def _gjk(verts, s, o1, o2, hv, hg, kmax, tol, cutoff, x1, x2, st1, st2):
    """MuJoCo's gjk from the approximation x1 − x2 (simplex in rows s … s + 3).

    Returns (separated, distance (MAXLIMIT when separated early), witness points x1, x2,
    simplex size, number of witness points, climb starts).
    """
    get_dist = cutoff > 0
    backup = not get_dist
    disc = _discrete(o1, o2)
    eps = 0.0 if disc else 0.5 * (tol * tol)
    min_norm = MINVAL if disc else tol
    xk = sub(x1, x2)
    xn = math.sqrt(dot(xk, xk))
    xnp = 0.0
    n = 0
    k = 0
    while k < kmax:
        if xn < min_norm or abs(xnp - xn) < MINVAL:
            break
        inv = 1.0 / xn
        dneg = _scl(xk, inv)
        dr = (-dneg[0], -dneg[1], -dneg[2])
        sk, st1, st2 = _mink(verts, s + n, o1, o2, hv, hg, dr, dneg, st1, st2)
        if dot(xk, sub(xk, sk)) < eps:
            break
        lower = dot(xk, sk)
        if not get_dist:
            if lower > 0:
                return True, MAXLIMIT, x1, x2, 0, 0, st1, st2
        elif cutoff < MAXLIMIT:
            if lower > 0 and lower >= cutoff * xn:
                return True, MAXLIMIT, x1, x2, 0, 0, st1, st2
        if n == 3 and backup:
            ret, k, st1, st2 = _gjk_intersect(verts, s, o1, o2, hv, hg, k, kmax, st1, st2)
            if ret != -1:
                if ret > 0:
                    return False, 0.0, x1, x2, 4, 0, st1, st2
                return True, MAXLIMIT, x1, x2, 0, 0, st1, st2
            backup = False
        xk = _subdistance(verts, s, n + 1)
        lam = verts[s + 8]
        m = 0
        for i in range(4):
            if lam[i] == 0:
                continue
            if m != i:
                _copy_row(verts, s + m, s + i)
            lam[m] = lam[i]
            m += 1
        if m < 1:
            return True, MAXLIMIT, x1, x2, 0, 0, st1, st2
        n = m
        xnp = xn
        xn = math.sqrt(dot(xk, xk))
        if n == 4:
            break
        k += 1
    if n > 0:
        x1 = _combine(verts, s, n, 3)
        x2 = _combine(verts, s, n, 6)
    # GJK stopped early: a last separation check
    inv = 1.0 / xn
    dneg = _scl(xk, inv)
    dr = (-dneg[0], -dneg[1], -dneg[2])
    tw, st1, st2 = _mink(verts, s + 4, o1, o2, hv, hg, dr, dneg, st1, st2)
    sep = dot(xk, tw) > 0
    dist = 0.0 if (n == 4 and not sep) else xn
    return sep, dist, x1, x2, n, 1, st1, st2


# ---------------------------------------------------------------------------------------------
# EPA: faces (3 vertices, 3 neighbours, map slot), planes (origin's projection, its norm²)


@jit_inline
def _attach(verts, faces, fplane, nf, center, v1, v2, v3, a1, a2, a3):
    """Append face nf (v1, v2, v3; neighbours a1, a2, a3); returns its squared distance."""
    faces[nf, 0], faces[nf, 1], faces[nf, 2] = v1, v2, v3
    faces[nf, 3], faces[nf, 4], faces[nf, 5] = a1, a2, a3
    faces[nf, 6] = -1
    p, bad = _project_plane(_w(verts, v3), _w(verts, v2), _w(verts, v1))
    if bad:
        fplane[nf, 0] = fplane[nf, 1] = fplane[nf, 2] = fplane[nf, 3] = 0.0
        return 0.0
    if dot(p, sub(_w(verts, v1), center)) < 0:
        p = (-p[0], -p[1], -p[2])
    d2 = dot(p, p)
    fplane[nf, 0], fplane[nf, 1], fplane[nf, 2] = p
    fplane[nf, 3] = d2
    return d2


@jit_inline
def _same_side(p0, p1, p2, p3):
    n = cross(sub(p1, p0), sub(p2, p0))
    d1 = dot(n, sub(p3, p0))
    d2 = dot(n, (-p0[0], -p0[1], -p0[2]))
    return (d1 > 0 and d2 > 0) or (d1 < 0 and d2 < 0)


@jit
def _test_tetra(p0, p1, p2, p3):
    """The origin inside the tetrahedron p0 … p3."""
    return (_same_side(p0, p1, p2, p3) and _same_side(p1, p2, p3, p0)
            and _same_side(p2, p3, p0, p1) and _same_side(p3, p0, p1, p2))


@jit_inline
def _tri_affine(v1, v2, v3, p):
    """Affine coordinates of p on the triangle v1 v2 v3 (projected areas over their sum)."""
    _, x, y = _minors(v1, v2, v3)
    c31, c32, c33, tot = _areas(p, v1, v2, v3, x, y)
    return c31 / tot, c32 / tot, c33 / tot


@jit
def _tri_point(v1, v2, v3, p):
    """Point p lies on triangle v1 v2 v3."""
    a, b, c = _tri_affine(v1, v2, v3, p)
    if a < 0 or b < 0 or c < 0:
        return False
    pr = (v1[0] * a + v2[0] * b + v3[0] * c, v1[1] * a + v2[1] * b + v3[1] * c,
          v1[2] * a + v2[2] * b + v3[2] * c)
    df = sub(pr, p)
    return math.sqrt(dot(df, df)) < MINVAL


@jit_inline
def _epa_support(verts, nv, o1, o2, hv, hg, d, dn, st1, st2):
    """Support along d / dn into vertex row nv (along x when dn is tiny)."""
    dr = _epa_dir(d, dn)
    dneg = (-dr[0], -dr[1], -dr[2])
    _, st1, st2 = _mink(verts, nv, o1, o2, hv, hg, dr, dneg, st1, st2)
    return st1, st2


@jit_inline
def _epa_dir(d, dn):
    """d / dn, or x when dn is tiny (EPA's support directions)."""
    if dn > MINVAL:
        return (d[0] / dn, d[1] / dn, d[2] / dn)
    return (1.0, 0.0, 0.0)


@jit
def _polytope3(verts, faces, fplane, fmap, s, o1, o2, hv, hg, st1, st2):
    """EPA's hexahedron around the triangle in simplex rows s … s + 2.

    Returns (status, vertex count, face count, map size, centre, climb starts).
    """
    v1, v2, v3 = _w(verts, s), _w(verts, s + 1), _w(verts, s + 2)
    c = ((v1[0] + v2[0]) + v3[0], (v1[1] + v2[1]) + v3[1], (v1[2] + v2[2]) + v3[2])
    center = _scl(c, 1.0 / 3.0)
    n = cross(sub(v2, v1), sub(v3, v1))
    nn = math.sqrt(dot(n, n))
    if nn < MINVAL:
        return P3_BAD_NORMAL, 0, 0, 0, center, st1, st2
    nneg = _scl(n, -1.0)
    for i in range(3):
        _copy_row(verts, i, s + i)
    st1, st2 = _epa_support(verts, 3, o1, o2, hv, hg, nneg, nn, st1, st2)  # v5
    st1, st2 = _epa_support(verts, 4, o1, o2, hv, hg, n, nn, st1, st2)  # v4
    if _tri_point(v1, v2, v3, _w(verts, 4)):
        return P3_INVALID_V4, 5, 0, 0, center, st1, st2
    if _tri_point(v1, v2, v3, _w(verts, 3)):
        return P3_INVALID_V5, 5, 0, 0, center, st1, st2
    for f in range(6):
        a, b, c, n1, n2, n3 = BIPYRAMID_FACES[f]
        if _attach(verts, faces, fplane, f, center, a, b, c, n1, n2, n3) < MINDIST:
            return P3_ORIGIN_ON_FACE, 5, f + 1, 0, center, st1, st2
    _map_all(faces, fmap, 6)
    return 0, 5, 6, 6, center, st1, st2


@jit_inline
def _map_all(faces, fmap, nf):
    """Every face of a starting polytope in the map (face i at map entry i)."""
    for i in range(nf):
        fmap[i] = i
        faces[i, 6] = i


@jit_inline
def _replace3(verts, s, a, b, c):
    """GJK's simplex becomes the polytope's triangle a b c (rows s … s + 2)."""
    _copy_row(verts, s, a)
    _copy_row(verts, s + 1, b)
    _copy_row(verts, s + 2, c)


@jit
def _rotmat(axis):
    """Rotation by 120° about axis (MuJoCo's rotmat, its rounded sine)."""
    n = math.sqrt(dot(axis, axis))
    u1 = axis[0] / n
    u2 = axis[1] / n
    u3 = axis[2] / n
    sn = 0.86602540378
    cs = -0.5
    return (cs + u1 * u1 * (1 - cs), u1 * u2 * (1 - cs) - u3 * sn, u1 * u3 * (1 - cs) + u2 * sn,
            u2 * u1 * (1 - cs) + u3 * sn, cs + u2 * u2 * (1 - cs), u2 * u3 * (1 - cs) - u1 * sn,
            u1 * u3 * (1 - cs) - u2 * sn, u2 * u3 * (1 - cs) + u1 * sn, cs + u3 * u3 * (1 - cs))


@jit_inline
def _mulmv(r, v):
    return (r[0] * v[0] + r[1] * v[1] + r[2] * v[2], r[3] * v[0] + r[4] * v[1] + r[5] * v[2],
            r[6] * v[0] + r[7] * v[1] + r[8] * v[2])


@jit_inline
def _ray_triangle(v1, v2, v3, v4, v5):
    d12 = sub(v2, v1)
    d13 = sub(v3, v1)
    d14 = sub(v4, v1)
    d15 = sub(v5, v1)
    a = _det3(d13, d14, d12)
    b = _det3(d14, d15, d12)
    c = _det3(d15, d13, d12)
    return (a >= 0 and b >= 0 and c >= 0) or (a <= 0 and b <= 0 and c <= 0)


@jit
def _polytope2(verts, faces, fplane, fmap, s, o1, o2, hv, hg, st1, st2):
    """EPA's hexahedron around the segment in simplex rows s, s + 1 (as _polytope3)."""
    v1, v2 = _w(verts, s), _w(verts, s + 1)
    center = ((v1[0] + v2[0]) * 0.5, (v1[1] + v2[1]) * 0.5, (v1[2] + v2[2]) * 0.5)
    diff = sub(v2, v1)
    value = MAXLIMIT
    index = 0
    for i in range(3):
        if abs(diff[i]) < value:
            value = abs(diff[i])
            index = i
    e = (1.0 if index == 0 else 0.0, 1.0 if index == 1 else 0.0, 1.0 if index == 2 else 0.0)
    d1 = cross(e, diff)
    rot = _rotmat(diff)
    d2 = _mulmv(rot, d1)
    d3 = _mulmv(rot, d2)
    _copy_row(verts, 0, s)
    _copy_row(verts, 1, s + 1)
    st1, st2 = _epa_support(verts, 2, o1, o2, hv, hg, d1, math.sqrt(dot(d1, d1)), st1, st2)
    st1, st2 = _epa_support(verts, 3, o1, o2, hv, hg, d2, math.sqrt(dot(d2, d2)), st1, st2)
    st1, st2 = _epa_support(verts, 4, o1, o2, hv, hg, d3, math.sqrt(dot(d3, d3)), st1, st2)
    # the hexahedron's faces; one through the origin: the EPA starts from that triangle
    for f in range(6):
        a, b, c, n1, n2, n3 = HEXAHEDRON_FACES[f]
        if _attach(verts, faces, fplane, f, center, a, b, c, n1, n2, n3) < MINDIST:
            _replace3(verts, s, a, b, c)
            return _polytope3(verts, faces, fplane, fmap, s, o1, o2, hv, hg, st1, st2)
    if not _ray_triangle(v1, v2, _w(verts, 2), _w(verts, 3), _w(verts, 4)):
        return P2_NONCONVEX, 5, 6, 0, center, st1, st2
    _map_all(faces, fmap, 6)
    return 0, 5, 6, 6, center, st1, st2


@jit
def _polytope4(verts, faces, fplane, fmap, s, o1, o2, hv, hg, st1, st2):
    """EPA's tetrahedron from the simplex rows s … s + 3 (as _polytope3)."""
    for i in range(4):
        _copy_row(verts, i, s + i)
    v1, v2, v3, v4 = _w(verts, 0), _w(verts, 1), _w(verts, 2), _w(verts, 3)
    c = (((v1[0] + v2[0]) + v3[0]) + v4[0], ((v1[1] + v2[1]) + v3[1]) + v4[1],
         ((v1[2] + v2[2]) + v3[2]) + v4[2])
    center = _scl(c, 0.25)
    for f in range(4):
        a, b, cc, n1, n2, n3 = TETRAHEDRON_FACES[f]
        if _attach(verts, faces, fplane, f, center, a, b, cc, n1, n2, n3) < MINDIST:
            _replace3(verts, s, a, b, cc)
            return _polytope3(verts, faces, fplane, fmap, s, o1, o2, hv, hg, st1, st2)
    if not _test_tetra(v1, v2, v3, v4):
        return P4_MISSING_ORIGIN, 4, 4, 0, center, st1, st2
    _map_all(faces, fmap, 4)
    return 0, 4, 4, 4, center, st1, st2


@jit_inline
def _delete(faces, fmap, nmap, f):
    """Remove face f from the map (and from the polytope); returns the map size."""
    i = faces[f, 6]
    if i >= 0:
        nmap -= 1
        fmap[i] = fmap[nmap]
        faces[fmap[i], 6] = i
    faces[f, 6] = -2
    return nmap


@jit_inline
def _edge_of(faces, f, v):
    if faces[f, 0] == v:
        return 0
    if faces[f, 1] == v:
        return 1
    return 2


@jit_inline
def _visible(fplane, f, w):
    return fplane[f, 0] * w[0] + fplane[f, 1] * w[1] + fplane[f, 2] * w[2] - fplane[f, 3] > MINVAL


@jit_inline
def _horizon_from(faces, fplane, fmap, nmap, hz, nh, f0, e0, w):
    """MuJoCo's horizonRec(f0, e0) without recursion (frames in hz columns 2-4).

    Inlined into EPA's loop, its one caller: a call passed its four arrays on the stack
    and counted their references, which cost more than the walk.

    Deletes the faces visible from w reachable from f0 and appends the horizon's (face,
    edge) pairs in MuJoCo's order. Returns (f0 visible, horizon length, map size).
    """
    if not _visible(fplane, f0, w):
        return False, nh, nmap
    nmap = _delete(faces, fmap, nmap, f0)
    top = 0
    hz[0, 2], hz[0, 3], hz[0, 4] = f0, e0, 1
    while top >= 0:
        f = hz[top, 2]
        e = hz[top, 3]
        k = hz[top, 4]
        if k > 2:
            top -= 1
            if top >= 0:
                hz[top, 4] += 1
            continue
        i = (e + k) % 3
        g = faces[f, 3 + i]
        if faces[g, 6] > -2:
            ge = _edge_of(faces, g, faces[f, (i + 1) % 3])
            if _visible(fplane, g, w):
                nmap = _delete(faces, fmap, nmap, g)
                top += 1
                hz[top, 2], hz[top, 3], hz[top, 4] = g, ge, 1
                continue
            hz[nh, 0] = g
            hz[nh, 1] = ge
            nh += 1
        hz[top, 4] = k + 1
    return True, nh, nmap


@jit
def _epa(verts, faces, fplane, fmap, hz, nv, nf, nmap, center, o1, o2, hv, hg, niter, tol,
         st1, st2):
    """MuJoCo's epa on the polytope built by _polytope*: (found, depth, x1, x2)."""
    upper = MAXLIMIT
    upper2 = MAXLIMIT
    face = -1
    disc = _discrete(o1, o2)
    tolerance = MINEPATOL if disc else tol
    kmax = niter if niter < EPA_MAXITER else EPA_MAXITER
    maxfaces = 6 * _cap(niter)
    k = 0
    while k < kmax:
        pface = face
        lower2 = MAXLIMIT
        for i in range(nmap):
            if fplane[fmap[i], 3] < lower2:
                face = fmap[i]
                lower2 = fplane[face, 3]
        if lower2 > upper2 or face < 0:
            face = pface
            break
        if lower2 <= 0:  # the origin on a face's plane (MuJoCo warns)
            break
        lower = math.sqrt(lower2)
        fv = (fplane[face, 0], fplane[face, 1], fplane[face, 2])
        wi = nv
        dr = _epa_dir(fv, lower)
        _, st1, st2 = _mink_loop(verts, wi, o1, o2, hv, hg, dr, (-dr[0], -dr[1], -dr[2]), st1,
                                 st2)
        nv += 1
        w = _w(verts, wi)
        upper_k = dot(fv, w) / lower
        if upper_k < upper:
            upper = upper_k
            upper2 = upper * upper
        if upper - lower < tolerance:
            if k == 0 and upper < lower - 1e-10:
                face = -1
            break
        if disc:
            rep = False
            for i in range(nv - 1):
                if verts[wi, 9] == verts[i, 9] and verts[wi, 10] == verts[i, 10]:
                    rep = True
                    break
            if rep:
                break
        # the faces w sees go; the horizon's edges get faces to w
        # (the first neighbour is live: only the horizon walks delete, and none has run)
        nmap = _delete(faces, fmap, nmap, face)
        nh = np.int64(0)
        for q in range(3):
            g = faces[face, 3 + q]
            ge = _edge_of(faces, g, faces[face, (q + 1) % 3])
            if faces[g, 6] > -2:
                vis, nh, nmap = _horizon_from(faces, fplane, fmap, nmap, hz, nh, g, ge, w)
                if not vis:
                    hz[nh, 0] = g
                    hz[nh, 1] = ge
                    nh += 1
        if nh < 3:
            face = -1
            break
        nf0 = nf
        if nh > maxfaces - nf:  # out of face memory (MuJoCo warns)
            break
        for i in range(nh):
            hi = hz[i, 0]
            he = hz[i, 1]
            v1 = faces[hi, he]
            v2 = faces[hi, (he + 1) % 3]
            faces[hi, 3 + he] = nf0 + i
            prev = nf0 + nh - 1 if i == 0 else nf0 + i - 1
            d2 = _attach(verts, faces, fplane, nf, center, wi, v2, v1, prev, hi,
                         nf0 + (i + 1) % nh)
            nf += 1
            if d2 == 0:
                face = -1
                break
            if d2 >= lower2 and d2 <= upper2:
                fmap[nmap] = nf - 1
                faces[nf - 1, 6] = nmap
                nmap += 1
        if nmap == 0 or face < 0:
            break
        k += 1
    if face < 0:
        z = (0.0, 0.0, 0.0)
        return False, 0.0, z, z
    i0, i1, i2 = faces[face, 0], faces[face, 1], faces[face, 2]
    fv = (fplane[face, 0], fplane[face, 1], fplane[face, 2])
    a, b, c = _tri_affine(_w(verts, i0), _w(verts, i1), _w(verts, i2), fv)
    x1 = _lin3(a, b, c, (verts[i0, 3], verts[i0, 4], verts[i0, 5]),
               (verts[i1, 3], verts[i1, 4], verts[i1, 5]),
               (verts[i2, 3], verts[i2, 4], verts[i2, 5]))
    x2 = _lin3(a, b, c, (verts[i0, 6], verts[i0, 7], verts[i0, 8]),
               (verts[i1, 6], verts[i1, 7], verts[i1, 8]),
               (verts[i2, 6], verts[i2, 7], verts[i2, 8]))
    return True, -math.sqrt(fplane[face, 3]), x1, x2


# ---------------------------------------------------------------------------------------------
# one pair


@jit_inline
def _normalize3(v):
    """MuJoCo's mju_normalize3: (1, 0, 0) below MINVAL, else v times 1 / |v|."""
    n = math.sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2])
    if n < MINVAL:
        return (1.0, 0.0, 0.0)
    inv = 1 / n
    return (v[0] * inv, v[1] * inv, v[2] * inv)


@jit_sig(types.Tuple((F8, V3, V3, I8))(WS, OBJ, OBJ, F2, I1, I8, F8, F8))
def ccd(ws, o1, o2, hv, hg, niter, tol, cutoff):
    """MuJoCo's mjc_ccd for one contact: (distance, witness x1, x2, witness count).

    o1, o2: the shapes (OBJ); cutoff: 0 for contacts only (a negative distance:
    penetration), else the largest distance wanted (MAXLIMIT beyond it).
    """
    verts, faces, fplane, fmap, hz = ws[0], ws[1], ws[2], ws[3], ws[4]
    s = verts.shape[0] - NSCR
    x1 = _center(o1, hv)
    x2 = _center(o2, hv)
    st1 = -1
    st2 = -1
    t1 = o1[0]
    t2 = o2[0]
    if t1 == GEOM_SPHERE or t2 == GEOM_SPHERE or t1 == GEOM_CAPSULE or t2 == GEOM_CAPSULE:
        # a sphere as its centre, a capsule as its segment, inflated afterwards
        c1, fm1 = _core(o1)
        c2, fm2 = _core(o2)
        sep, dist, x1, x2, ns, nx, st1, st2 = _gjk(verts, s, c1, c2, hv, hg, niter, tol,
                                                  cutoff + fm1 + fm2, x1, x2, st1, st2)
        if dist > tol:
            n = _normalize3(sub(x2, x1))
            if fm1 != 0:
                x1 = (x1[0] + fm1 * n[0], x1[1] + fm1 * n[1], x1[2] + fm1 * n[2])
            if fm2 != 0:
                x2 = (x2[0] - fm2 * n[0], x2[1] - fm2 * n[1], x2[2] - fm2 * n[2])
            dist -= fm1 + fm2
            if dist > cutoff:
                dist = MAXLIMIT
            return dist, x1, x2, nx
        x1 = _center(o1, hv)
        x2 = _center(o2, hv)
    sep, dist, x1, x2, ns, nx, st1, st2 = _gjk(verts, s, o1, o2, hv, hg, niter, tol, cutoff,
                                              x1, x2, st1, st2)
    if dist <= tol and ns > 1 and not sep:
        dist = 0.0
        if ns == 2:
            ret, nv, nf, nmap, center, st1, st2 = _polytope2(verts, faces, fplane, fmap, s, o1,
                                                             o2, hv, hg, st1, st2)
        elif ns == 3:
            ret, nv, nf, nmap, center, st1, st2 = _polytope3(verts, faces, fplane, fmap, s, o1,
                                                             o2, hv, hg, st1, st2)
        else:
            ret, nv, nf, nmap, center, st1, st2 = _polytope4(verts, faces, fplane, fmap, s, o1,
                                                             o2, hv, hg, st1, st2)
        if ret == 0:
            found, depth, y1, y2 = _epa(verts, faces, fplane, fmap, hz, nv, nf, nmap, center,
                                        o1, o2, hv, hg, niter, tol, st1, st2)
            if found:
                return depth, y1, y2, 1
            return 0.0, x1, x2, 0
    return dist, x1, x2, nx


@jit_inline
def _core(o):
    """(a sphere's centre or a capsule's segment, its radius), or (o, 0) for other shapes."""
    t = o[0]
    if t == GEOM_SPHERE or t == GEOM_CAPSULE:
        return ((CORE_POINT if t == GEOM_SPHERE else CORE_SEGMENT, o[1], o[2], o[3], o[4], o[5],
                 o[6]), o[3][0])
    return o, 0.0


@jit_inline
def obj(t, pos, mat, size, va, nv, ga):
    """A shape for `ccd`: geom type (or CORE_PRISM), pose, size, hull range and graph."""
    return (t, pos, mat, size, va, nv, ga)


@jit_sig(types.Tuple((types.boolean, V3, V3, F8))(WS, F8, OBJ, OBJ, F2, I1, I8, F8))
def contact(ws, margin, o1, o2, hv, hg, niter, tol):
    """One pair's deepest contact within `margin`, as MuJoCo 4.0's convex collision reports it.

    The signed distance of the shapes themselves, with the margin as the distance cutoff
    (MuJoCo 4.0.0, measured: its contacts equal mj_geomDistance's distance and witness
    points; the published source inflates the shapes by the margin instead, which stops
    GJK and EPA elsewhere). Returns (found, pos, normal from geom 1 to geom 2, dist).
    """
    dist, x1, x2, nx = ccd(ws, o1, o2, hv, hg, niter, tol, margin)
    z = (0.0, 0.0, 0.0)
    if not dist < margin or nx < 1:
        return False, z, z, 0.0
    pos = ((x1[0] + x2[0]) * 0.5, (x1[1] + x2[1]) * 0.5, (x1[2] + x2[2]) * 0.5)
    nrm = _normalize3(sub(x2, x1) if dist > 0 else sub(x1, x2))
    return True, pos, nrm, dist


@jit_sig(types.Tuple((F8, V3, V3, I8))(WS, OBJ, OBJ, F2, I1, I8, F8, F8))
def distance(ws, o1, o2, hv, hg, niter, tol, distmax):
    """mj_geomDistance's convex case: (distance up to distmax, x1, x2, witness count)."""
    dist, x1, x2, nx = ccd(ws, o1, o2, hv, hg, niter, tol, distmax)
    return (dist if dist < distmax else distmax), x1, x2, nx


