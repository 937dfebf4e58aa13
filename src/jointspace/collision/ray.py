"""Ray casting against the geoms (MuJoCo's mj_ray and its per-type functions, engine_ray.c).

A ray p + x v, x ≥ 0, meets a geom's surface at the smallest non-negative x; `ray` returns
that x over all geoms (−1 if none) and the geom hit (−1). As mj_ray does, it skips the geoms
of the body `bodyexclude`, invisible geoms (alpha 0: the alpha of the geom's material when it
has one, else of its rgba, as mj_ray reads it), the geoms of bodies welded to the
world when `include_static` is false, and geoms whose group (clamped to 0…5) is off in
`geomgroup`. Planes are hit from their front side only, within their rendered rectangle
(a non-positive size is infinite); meshes are hit on their triangles (all of them, after
MuJoCo's bounding-box test on geom_size), not on their convex hulls; height fields on their
grid triangles, base box and sides (mj_rayHfield). SDF geoms are not modelled by jointspace.
Like mj_ray it tests each geom in turn (O(ngeom) per ray, no broadphase).

The rangefinder sensor casts from its site along the site's +z axis, excluding the site's
own body (jointspace.sensor); `js.ray` is the public form.
"""

import math

import numpy as np
from numba import njit

from jointspace._numba import entry
from jointspace.types import (
    GEOM_BOX,
    GEOM_CAPSULE,
    GEOM_CYLINDER,
    GEOM_ELLIPSOID,
    GEOM_HFIELD,
    GEOM_MESH,
    GEOM_PLANE,
    GEOM_SPHERE,
    MINVAL,
)


@njit(cache=True, inline="always")
def _local(pos, mat, pnt, vec):
    """The ray in the geom frame: (matᵀ (pnt − pos), matᵀ vec) as six scalars."""
    d0, d1, d2 = pnt[0] - pos[0], pnt[1] - pos[1], pnt[2] - pos[2]
    return (mat[0] * d0 + mat[3] * d1 + mat[6] * d2,
            mat[1] * d0 + mat[4] * d1 + mat[7] * d2,
            mat[2] * d0 + mat[5] * d1 + mat[8] * d2,
            mat[0] * vec[0] + mat[3] * vec[1] + mat[6] * vec[2],
            mat[1] * vec[0] + mat[4] * vec[1] + mat[7] * vec[2],
            mat[2] * vec[0] + mat[5] * vec[1] + mat[8] * vec[2])


@njit(cache=True, inline="always")
def _quad(a, b, c):
    """Roots x0 ≤ x1 of a x² + 2 b x + c = 0 and the smallest non-negative one (−1: none)."""
    det = b * b - a * c
    if det < 0.0 or a < MINVAL:
        return -1.0, -1.0, -1.0
    det = math.sqrt(det)
    x0 = (-b - det) / a
    x1 = (-b + det) / a
    if x0 >= 0.0:
        return x0, x0, x1
    if x1 >= 0.0:
        return x1, x0, x1
    return -1.0, x0, x1


@njit(cache=True, inline="always")
def _sphere(pos, r2, pnt, vec):
    d0, d1, d2 = pnt[0] - pos[0], pnt[1] - pos[1], pnt[2] - pos[2]
    a = vec[0] * vec[0] + vec[1] * vec[1] + vec[2] * vec[2]
    b = vec[0] * d0 + vec[1] * d1 + vec[2] * d2
    c = d0 * d0 + d1 * d1 + d2 * d2 - r2
    return _quad(a, b, c)[0]


@njit(cache=True)
def _plane(pos, mat, size, pnt, vec):
    p0, p1, p2, v0, v1, v2 = _local(pos, mat, pnt, vec)
    if v2 > -MINVAL:  # not towards the front face
        return -1.0
    x = -p2 / v2
    if x < 0.0:
        return -1.0
    q0 = p0 + x * v0
    q1 = p1 + x * v1
    if (size[0] <= 0.0 or abs(q0) <= size[0]) and (size[1] <= 0.0 or abs(q1) <= size[1]):
        return x
    return -1.0


@njit(cache=True)
def _capsule(pos, mat, size, pnt, vec):
    r, h = size[0], size[1]
    if _sphere(pos, (r + h) * (r + h), pnt, vec) < 0.0:
        return -1.0
    p0, p1, p2, v0, v1, v2 = _local(pos, mat, pnt, vec)
    x = -1.0
    sol = _quad(v0 * v0 + v1 * v1, v0 * p0 + v1 * p1, p0 * p0 + p1 * p1 - r * r)[0]
    if sol >= 0.0 and abs(p2 + sol * v2) <= h:
        x = sol
    a = v0 * v0 + v1 * v1 + v2 * v2
    for side in (1.0, -1.0):  # the caps: the top half of the top sphere, and so on
        z = p2 - side * h
        _, x0, x1 = _quad(a, v0 * p0 + v1 * p1 + v2 * z, p0 * p0 + p1 * p1 + z * z - r * r)
        for xi in (x0, x1):
            if xi >= 0.0 and side * (p2 + xi * v2) >= h and (x < 0.0 or xi < x):
                x = xi
    return x


@njit(cache=True)
def _ellipsoid(pos, mat, size, pnt, vec):
    p0, p1, p2, v0, v1, v2 = _local(pos, mat, pnt, vec)
    s0 = 1.0 / (size[0] * size[0])
    s1 = 1.0 / (size[1] * size[1])
    s2 = 1.0 / (size[2] * size[2])
    a = s0 * v0 * v0 + s1 * v1 * v1 + s2 * v2 * v2
    b = s0 * v0 * p0 + s1 * v1 * p1 + s2 * v2 * p2
    c = s0 * p0 * p0 + s1 * p1 * p1 + s2 * p2 * p2 - 1.0
    return _quad(a, b, c)[0]


@njit(cache=True)
def _cylinder(pos, mat, size, pnt, vec):
    r, h = size[0], size[1]
    if _sphere(pos, r * r + h * h, pnt, vec) < 0.0:
        return -1.0
    p0, p1, p2, v0, v1, v2 = _local(pos, mat, pnt, vec)
    x = -1.0
    if abs(v2) > MINVAL:
        for side in (-1.0, 1.0):
            sol = (side * h - p2) / v2
            if sol >= 0.0:
                q0 = p0 + sol * v0
                q1 = p1 + sol * v1
                if q0 * q0 + q1 * q1 <= r * r and (x < 0.0 or sol < x):
                    x = sol
    sol = _quad(v0 * v0 + v1 * v1, v0 * p0 + v1 * p1, p0 * p0 + p1 * p1 - r * r)[0]
    if sol >= 0.0 and abs(p2 + sol * v2) <= h and (x < 0.0 or sol < x):
        x = sol
    return x


@njit(cache=True)
def _box(pos, mat, size, pnt, vec):
    if _sphere(pos, size[0] * size[0] + size[1] * size[1] + size[2] * size[2], pnt,
               vec) < 0.0:
        return -1.0
    p0, p1, p2, v0, v1, v2 = _local(pos, mat, pnt, vec)
    lp = (p0, p1, p2)
    lv = (v0, v1, v2)
    x = -1.0
    for i in range(3):
        if abs(lv[i]) <= MINVAL:
            continue
        j = 1 if i == 0 else 0
        k = 1 if i == 2 else 2
        for side in (-1.0, 1.0):
            sol = (side * size[i] - lp[i]) / lv[i]
            if sol >= 0.0 and abs(lp[j] + sol * lv[j]) <= size[j] \
                    and abs(lp[k] + sol * lv[k]) <= size[k] and (x < 0.0 or sol < x):
                x = sol
    return x


@njit(cache=True)
def _box_sides(pos, mat, size, pnt, vec, out):
    """_box, and the distance to each face the ray meets inside its rectangle.

    out[2 i + (side + 1)/2]: face (axis i, side ±1), −1 when missed (MuJoCo's ray_box `all`).
    """
    out[:] = -1.0
    if _sphere(pos, size[0] * size[0] + size[1] * size[1] + size[2] * size[2], pnt,
               vec) < 0.0:
        return -1.0
    p0, p1, p2, v0, v1, v2 = _local(pos, mat, pnt, vec)
    lp = (p0, p1, p2)
    lv = (v0, v1, v2)
    x = -1.0
    for i in range(3):
        if abs(lv[i]) <= MINVAL:
            continue
        j = 1 if i == 0 else 0
        k = 1 if i == 2 else 2
        for q in range(2):
            side = 2.0 * q - 1.0
            sol = (side * size[i] - lp[i]) / lv[i]
            if sol >= 0.0 and abs(lp[j] + sol * lv[j]) <= size[j] \
                    and abs(lp[k] + sol * lv[k]) <= size[k]:
                if x < 0.0 or sol < x:
                    x = sol
                out[2 * i + q] = sol
    return x


@njit(cache=True)
def _hfield(m, d, g, pnt, vec):
    """(distance, local normal) of the ray and height field g (mj_rayHfield); (−1, 0) missed.

    The solid below the surface down to −base (a box), the grid triangles within the part of
    the ray inside the top box [−r_x, r_x] × [−r_y, r_y] × [0, top] (one cell of padding),
    and the top box's four sides below the surface's edge.
    """
    hid = m.geom_dataid[g]
    nrow, ncol = m.hfield_nrow[hid], m.hfield_ncol[hid]
    size = m.hfield_size[hid]
    adr = m.hfield_adr[hid]
    data = m.hfield_data
    pos, mat = d.geom_xpos[g], d.geom_xmat[g]
    # the small vectors below share one buffer: an allocation each cost more than the
    # test of a cell (20 rangefinders over a height field: 288 allocations a step)
    buf = np.empty(45)
    side, top = buf[0:6], buf[6:12]
    bsize, bpos, tsize, tpos = buf[12:15], buf[15:18], buf[18:21], buf[21:24]
    lp, lv, b0, b1 = buf[24:27], buf[27:30], buf[30:33], buf[33:36]
    va, vb, vc = buf[36:39], buf[39:42], buf[42:45]
    bsize[0], bsize[1], bsize[2] = size[0], size[1], 0.5 * size[3]
    bpos[0] = pos[0] - mat[2] * 0.5 * size[3]
    bpos[1] = pos[1] - mat[5] * 0.5 * size[3]
    bpos[2] = pos[2] - mat[8] * 0.5 * size[3]
    x = _box_sides(bpos, mat, bsize, pnt, vec, side)
    n0, n1, n2 = 0.0, 0.0, 0.0
    if x >= 0.0:  # the base box's face that was hit, in the local frame
        for i in range(6):
            if side[i] == x:
                if i // 2 == 0:
                    n0 = 2.0 * (i % 2) - 1.0
                elif i // 2 == 1:
                    n1 = 2.0 * (i % 2) - 1.0
                else:
                    n2 = 2.0 * (i % 2) - 1.0
                break
    tsize[0], tsize[1], tsize[2] = size[0], size[1], 0.5 * size[2]
    tpos[0] = pos[0] + mat[2] * 0.5 * size[2]
    tpos[1] = pos[1] + mat[5] * 0.5 * size[2]
    tpos[2] = pos[2] + mat[8] * 0.5 * size[2]
    tx = _box_sides(tpos, mat, tsize, pnt, vec, top)
    if tx < 0.0:
        return x, n0, n1, n2
    p0, p1, p2, v0, v1, v2 = _local(pos, mat, pnt, vec)
    lp[0], lp[1], lp[2] = p0, p1, p2
    lv[0], lv[1], lv[2] = v0, v1, v2
    _ray_basis(lv, b0, b1)
    # the ray's part inside the top box, projected on the grid, one cell of padding
    s0, s1 = 0.0, tx
    for i in range(6):
        if top[i] > s1:
            s0, s1 = tx, top[i]
    dx = 2.0 * size[0] / (ncol - 1)
    dy = 2.0 * size[1] / (nrow - 1)
    sx0, sx1 = (p0 + s0 * v0 + size[0]) / dx, (p0 + s1 * v0 + size[0]) / dx
    sy0, sy1 = (p1 + s0 * v1 + size[1]) / dy, (p1 + s1 * v1 + size[1]) / dy
    cmin = max(0, int(math.floor(min(sx0, sx1))) - 1)
    cmax = min(ncol - 1, int(math.ceil(max(sx0, sx1))) + 1)
    rmin = max(0, int(math.floor(min(sy0, sy1))) - 1)
    rmax = min(nrow - 1, int(math.ceil(max(sy0, sy1))) + 1)
    # the grid vertices of rows r and r + 1 projected on the plane normal to the ray, each
    # once (a vertex belongs to six triangles): proj[row % 2, 0 or 1, column − cmin]
    proj = np.empty((2, 2, max(cmax - cmin + 1, 1)))
    for r in range(rmin, rmax + 1 if rmax > rmin else rmin):
        for c in range(cmin, cmax + 1):
            va[0], va[1] = dx * c - size[0], dy * r - size[1]
            va[2] = data[adr + r * ncol + c] * size[2]
            proj[r % 2, 0, c - cmin], proj[r % 2, 1, c - cmin] = _project(va, lp, b0, b1)
        if r == rmin:
            continue
        q = r - 1  # the cells of row q, between vertex rows q and r
        lo, hi = q % 2, r % 2
        for c in range(cmin, cmax):
            i = c - cmin
            # the cell's two triangles, counter-clockwise seen from above
            for t in range(2):
                yb, xc = (lo, i + 1) if t == 0 else (hi, i)
                if not _inside(proj[lo, 0, i], proj[lo, 1, i], proj[yb, 0, i + 1],
                               proj[yb, 1, i + 1], proj[hi, 0, xc], proj[hi, 1, xc]):
                    continue
                va[0], va[1] = dx * c - size[0], dy * q - size[1]
                va[2] = data[adr + q * ncol + c] * size[2]
                vb[0], vb[1] = dx * (c + 1) - size[0], dy * (q + t) - size[1]
                vb[2] = data[adr + (q + t) * ncol + c + 1] * size[2]
                vc[0], vc[1] = dx * (c + 1 - t) - size[0], dy * (q + 1) - size[1]
                vc[2] = data[adr + (q + 1) * ncol + c + 1 - t] * size[2]
                sol = _distance(va, vb, vc, lp, lv)
                if sol >= 0.0 and (x < 0.0 or sol < x):
                    x = sol
                    u0, u1, u2 = va[0] - vc[0], va[1] - vc[1], va[2] - vc[2]
                    w0, w1, w2 = vb[0] - vc[0], vb[1] - vc[1], vb[2] - vc[2]
                    n0, n1, n2 = _unit(u1 * w2 - u2 * w1, u2 * w0 - u0 * w2,
                                       u0 * w1 - u1 * w0)
    # the top box's sides, where the ray passes below the surface's edge
    for i in range(4):
        if top[i] >= 0.0 and (top[i] < x or x < 0.0):
            z = (p2 + top[i] * v2) / size[2]
            if i < 2:
                y = (p1 + top[i] * v1 + size[1]) / dy
                y0 = max(0.0, min(nrow - 2.0, math.floor(y)))
                col = ncol - 1 if i == 1 else 0
                z0 = data[adr + int(round(y0)) * ncol + col]
                z1 = data[adr + int(round(y0 + 1)) * ncol + col]
            else:
                y = (p0 + top[i] * v0 + size[0]) / dx
                y0 = max(0.0, min(ncol - 2.0, math.floor(y)))
                row = (nrow - 1) * ncol if i == 3 else 0
                z0 = data[adr + int(round(y0)) + row]
                z1 = data[adr + int(round(y0 + 1)) + row]
            if z < z0 * (y0 + 1 - y) + z1 * (y - y0):
                x = top[i]
                n0, n1, n2 = 0.0, 0.0, 0.0
                if i < 2:
                    n0 = 2.0 * i - 1.0
                else:
                    n1 = 2.0 * (i - 2) - 1.0
    return x, n0, n1, n2


@njit(cache=True)
def _ray_basis(lv, b0, b1):
    """An orthonormal basis (b0, b1) of the plane normal to the ray direction lv, as MuJoCo's.

    b0 starts as the ones with lv's largest component zeroed; b1 is that less its part
    along lv, normalized; b0 = b1 × lv, normalized.
    """
    v0, v1, v2 = lv[0], lv[1], lv[2]
    b0[0], b0[1], b0[2] = 1.0, 1.0, 1.0
    if abs(v0) >= abs(v1) and abs(v0) >= abs(v2):
        b0[0] = 0.0
    elif abs(v1) >= abs(v2):
        b0[1] = 0.0
    else:
        b0[2] = 0.0
    s = (v0 * b0[0] + v1 * b0[1] + v2 * b0[2]) / (v0 * v0 + v1 * v1 + v2 * v2)
    for k in range(3):
        b1[k] = b0[k] - s * lv[k]
    n = math.sqrt(b1[0] * b1[0] + b1[1] * b1[1] + b1[2] * b1[2])
    for k in range(3):
        b1[k] /= n
    b0[0] = b1[1] * v2 - b1[2] * v1
    b0[1] = b1[2] * v0 - b1[0] * v2
    b0[2] = b1[0] * v1 - b1[1] * v0
    n = math.sqrt(b0[0] * b0[0] + b0[1] * b0[1] + b0[2] * b0[2])
    for k in range(3):
        b0[k] /= n


@njit(cache=True)
def _project(v, lp, b0, b1):
    """(b0 · (v − lp), b1 · (v − lp)): a vertex in the plane normal to the ray."""
    e0, e1, e2 = v[0] - lp[0], v[1] - lp[1], v[2] - lp[2]
    return b0[0] * e0 + b0[1] * e1 + b0[2] * e2, b1[0] * e0 + b1[1] * e1 + b1[2] * e2


@njit(cache=True)
def _triangle(a, b, c, lp, lv, b0, b1):
    """The ray (geom frame) against triangle abc, as MuJoCo's ray_triangle; −1: missed.

    The vertices are projected on the plane normal to the ray (basis b0, b1) into scalars:
    a scratch array here cost an allocation per triangle, 5× the test itself on a height
    field's cells.
    """
    x0, y0 = _project(a, lp, b0, b1)
    x1, y1 = _project(b, lp, b0, b1)
    x2, y2 = _project(c, lp, b0, b1)
    if not _inside(x0, y0, x1, y1, x2, y2):
        return -1.0
    return _distance(a, b, c, lp, lv)


@njit(cache=True)
def _inside(x0, y0, x1, y1, x2, y2):
    """Whether the ray passes through the triangle whose projected vertices are (x_i, y_i)."""
    if (x0 > 0 and x1 > 0 and x2 > 0) or (x0 < 0 and x1 < 0 and x2 < 0):
        return False
    if (y0 > 0 and y1 > 0 and y2 > 0) or (y0 < 0 and y1 < 0 and y2 < 0):
        return False
    A0, A1 = x0 - x2, x1 - x2
    A2, A3 = y0 - y2, y1 - y2
    r0, r1 = -x2, -y2
    det = A0 * A3 - A1 * A2
    if abs(det) < MINVAL:
        return False
    t0 = (A3 * r0 - A1 * r1) / det
    t1 = (-A2 * r0 + A0 * r1) / det
    return not (t0 < 0 or t1 < 0 or t0 + t1 > 1)


@njit(cache=True)
def _distance(a, b, c, lp, lv):
    """Distance along the ray to the plane of triangle abc (−1 when parallel to it)."""
    u0, u1, u2 = a[0] - c[0], a[1] - c[1], a[2] - c[2]
    w0, w1, w2 = b[0] - c[0], b[1] - c[1], b[2] - c[2]
    n0, n1, n2 = u1 * w2 - u2 * w1, u2 * w0 - u0 * w2, u0 * w1 - u1 * w0
    denom = lv[0] * n0 + lv[1] * n1 + lv[2] * n2
    if abs(denom) < MINVAL:
        return -1.0
    return -((lp[0] - c[0]) * n0 + (lp[1] - c[1]) * n1 + (lp[2] - c[2]) * n2) / denom


@njit(cache=True)
def _mesh(m, d, g, pnt, vec):
    """The ray against a mesh geom's triangles, after the bounding-box test (mj_rayMesh)."""
    return _mesh_hit(m, d, g, pnt, vec)[0]


@njit(cache=True)
def _mesh_hit(m, d, g, pnt, vec):
    """(distance, face index) of the nearest triangle of mesh geom g the ray meets, (−1, −1)."""
    pos, mat = d.geom_xpos[g], d.geom_xmat[g]
    if _box(pos, mat, m.geom_size[g], pnt, vec) < 0.0:
        return -1.0, -1
    p0, p1, p2, v0, v1, v2 = _local(pos, mat, pnt, vec)
    buf = np.empty(12)  # one allocation for the four vectors
    lp, lv, b0, b1 = buf[0:3], buf[3:6], buf[6:9], buf[9:12]
    lp[0], lp[1], lp[2] = p0, p1, p2
    lv[0], lv[1], lv[2] = v0, v1, v2
    _ray_basis(lv, b0, b1)
    mid = m.geom_dataid[g]
    va = m.mesh_vertadr[mid]
    fa = m.mesh_faceadr[mid]
    x, hit = -1.0, -1
    for f in range(fa, fa + m.mesh_facenum[mid]):
        fc = m.mesh_face[f]
        sol = _triangle(m.mesh_vert[va + fc[0]], m.mesh_vert[va + fc[1]],
                        m.mesh_vert[va + fc[2]], lp, lv, b0, b1)
        if sol >= 0.0 and (x < 0.0 or sol < x):
            x, hit = sol, f
    return x, hit


@njit(cache=True)
def ray_normal(m, d, g, pnt, vec, x):
    """Unit surface normal (world frame) where the ray meets geom g at distance x ≥ 0.

    As mj_ray's normal output: a plane's z axis; the gradient of the surface at the local hit
    point l = matᵀ(pnt + x vec − pos) for spheres (l), capsules (l less the nearer cap
    center when beyond the cylinder part), ellipsoids (l / size²) and cylinders (the round
    side (l_x, l_y, 0) or the cap ±z, whichever surface l lies on); a box's face ±e_i (the
    face l lies on); a mesh triangle's normal (v0 − v2) × (v1 − v2), rotated to the world.
    """
    pos, mat, size = d.geom_xpos[g], d.geom_xmat[g], m.geom_size[g]
    t = m.geom_type[g]
    if t == GEOM_PLANE:
        return mat[2], mat[5], mat[8]
    if t == GEOM_SPHERE:
        return _unit(pnt[0] + x * vec[0] - pos[0], pnt[1] + x * vec[1] - pos[1],
                     pnt[2] + x * vec[2] - pos[2])
    p0, p1, p2, v0, v1, v2 = _local(pos, mat, pnt, vec)
    l0, l1, l2 = p0 + v0 * x, p1 + v1 * x, p2 + v2 * x
    if t == GEOM_CAPSULE:
        cap = 0.0 if abs(l2) <= size[1] else (1.0 if l2 > 0 else -1.0)
        n0, n1, n2 = _unit(l0, l1, 0.0 if cap == 0.0 else l2 - size[1] * cap)
    elif t == GEOM_ELLIPSOID:
        n0, n1, n2 = _unit(l0 / (size[0] * size[0]), l1 / (size[1] * size[1]),
                           l2 / (size[2] * size[2]))
    elif t == GEOM_CYLINDER:
        side = abs(math.sqrt(l0 * l0 + l1 * l1) - size[0]) / size[0]
        if abs(abs(l2) - size[1]) / size[1] < side:
            n0, n1, n2 = 0.0, 0.0, (1.0 if l2 > 0 else -1.0)
        else:
            n0, n1, n2 = _unit(l0, l1, 0.0)
    elif t == GEOM_BOX:
        r = (abs(abs(l0) - size[0]) / size[0], abs(abs(l1) - size[1]) / size[1],
             abs(abs(l2) - size[2]) / size[2])
        n0, n1, n2 = 0.0, 0.0, 0.0
        if r[0] <= r[1] and r[0] <= r[2]:
            n0 = 1.0 if l0 > 0 else -1.0
        elif r[1] <= r[2]:
            n1 = 1.0 if l1 > 0 else -1.0
        else:
            n2 = 1.0 if l2 > 0 else -1.0
    elif t == GEOM_HFIELD:
        _, n0, n1, n2 = _hfield(m, d, g, pnt, vec)
    elif t == GEOM_MESH:
        f = _mesh_hit(m, d, g, pnt, vec)[1]
        if f < 0:
            return 0.0, 0.0, 0.0
        va = m.mesh_vertadr[m.geom_dataid[g]]
        a = m.mesh_vert[va + m.mesh_face[f, 0]]
        b = m.mesh_vert[va + m.mesh_face[f, 1]]
        c = m.mesh_vert[va + m.mesh_face[f, 2]]
        u0, u1, u2 = a[0] - c[0], a[1] - c[1], a[2] - c[2]
        w0, w1, w2 = b[0] - c[0], b[1] - c[1], b[2] - c[2]
        n0, n1, n2 = _unit(u1 * w2 - u2 * w1, u2 * w0 - u0 * w2, u0 * w1 - u1 * w0)
    else:
        return 0.0, 0.0, 0.0
    return (mat[0] * n0 + mat[1] * n1 + mat[2] * n2, mat[3] * n0 + mat[4] * n1 + mat[5] * n2,
            mat[6] * n0 + mat[7] * n1 + mat[8] * n2)


@njit(cache=True, inline="always")
def _unit(a, b, c):
    """(a, b, c) normalized as mju_normalize3 does ((1, 0, 0) below MINVAL)."""
    n = math.sqrt(a * a + b * b + c * c)
    if n < MINVAL:
        return 1.0, 0.0, 0.0
    inv = 1.0 / n
    return a * inv, b * inv, c * inv


@njit(cache=True, inline="always")
def ray_geom(m, d, g, pnt, vec):
    """Distance along the ray to geom g's surface, −1 if it misses (no filtering)."""
    t = m.geom_type[g]
    pos, mat, size = d.geom_xpos[g], d.geom_xmat[g], m.geom_size[g]
    if t == GEOM_PLANE:
        return _plane(pos, mat, size, pnt, vec)
    if t == GEOM_SPHERE:
        return _sphere(pos, size[0] * size[0], pnt, vec)
    if t == GEOM_CAPSULE:
        return _capsule(pos, mat, size, pnt, vec)
    if t == GEOM_ELLIPSOID:
        return _ellipsoid(pos, mat, size, pnt, vec)
    if t == GEOM_CYLINDER:
        return _cylinder(pos, mat, size, pnt, vec)
    if t == GEOM_BOX:
        return _box(pos, mat, size, pnt, vec)
    if t == GEOM_MESH:
        return _mesh(m, d, g, pnt, vec)
    if t == GEOM_HFIELD:
        return _hfield(m, d, g, pnt, vec)[0]
    return -1.0


@njit(cache=True, nogil=True)
def ray_kernel(m, d, pnt, vec, geomgroup, include_static, bodyexclude):
    """(distance, geom id) of the nearest geom the ray meets, (−1, −1) if none (mj_ray).

    geomgroup: 6 flags, or an empty array for every group.
    """
    best, hit = -1.0, -1
    for g in range(m.ngeom):
        b = m.geom_bodyid[g]
        if b == bodyexclude:
            continue
        mat = m.geom_matid[g]  # invisible: alpha 0, the material's when the geom has one
        if (m.mat_rgba[mat, 3] if mat >= 0 else m.geom_rgba[g, 3]) == 0.0:
            continue
        if not include_static and m.body_weldid[b] == 0:
            continue
        if geomgroup.shape[0] and geomgroup[min(5, max(0, m.geom_group[g]))] == 0:
            continue
        x = ray_geom(m, d, g, pnt, vec)
        if x >= 0.0 and (x < best or best < 0.0):
            best, hit = x, g
    return best, hit


_k_ray = entry.Kernel(ray_kernel)


def ray(m, d, pnt, vec, geomgroup=None, include_static=True, bodyexclude=-1):
    """Cast a ray from pnt along vec (mj_ray): (distance in units of |vec|, geom id).

    Reads the geom poses of the last `forward`/`kinematics`; returns (−1.0, −1) when no geom
    is hit. geomgroup: six flags (geom groups 0–5 to include), None for all;
    include_static=False skips geoms of bodies welded to the world; bodyexclude: a body id
    whose geoms are skipped (−1: none).
    """
    entry.check_pair(m, d, "ray")
    p = np.ascontiguousarray(pnt, dtype=np.float64).reshape(3)
    v = np.ascontiguousarray(vec, dtype=np.float64).reshape(3)
    if not np.linalg.norm(v) >= MINVAL:
        raise ValueError(f"ray: the direction vec={v.tolist()} has (nearly) zero length")
    groups = (np.zeros(0, dtype=np.uint8) if geomgroup is None
              else np.ascontiguousarray(geomgroup, dtype=np.uint8).reshape(6))
    ep = _k_ray.ep
    dist, g = ep(m._s, d._s, p, v, groups, bool(include_static), int(bodyexclude))
    return float(dist), int(g)
