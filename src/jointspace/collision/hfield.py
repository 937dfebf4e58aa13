"""Height field against a convex geom: the grid's triangular prisms, one contact each.

As MuJoCo's mjc_ConvexHField (engine_collision_convex.c) computes it, in the height
field's frame:

1. the other geom's bounding sphere, then its box (from its support points along ±x, ±y,
   ±z), against the field's box [−r_x, r_x] × [−r_y, r_y] × [−base, top]: no overlap, no
   contact;
2. the grid cells under the geom's box (columns cmin … cmax, rows rmin … rmax; each cell
   split into two triangles along its diagonal);
3. for each triangle, the prism from its three surface points (elevation · top) down to
   −base; a prism whose top lies wholly more than the margin below the geom's lowest point
   is skipped; the prism and the geom are tested with the convex narrowphase
   (`ccd.contact`: MuJoCo's GJK, EPA): one contact per prism nearer than the margin, at its
   signed distance, midway between the two surfaces (what MuJoCo 4.0.0 reports: measured;
   its older published source raised the prism tops by the margin instead);
4. at most MAXCONPAIR_HFIELD (MuJoCo's mjMAXCONPAIR, 50) contacts per geom pair, in the
   order the cells are visited (row by row, column by column, lower triangle first).

A prism is the support shape `convex.CORE_PRISM`: six rows of a small vertex array, which
also holds a mesh geom's hull vertices after them (the narrowphase reads one array).
"""

import math

import numpy as np

from jointspace.collision import ccd as K
from jointspace.collision import convex as C
from jointspace.collision._vec import add, jit, mat_t_vec, mat_vec, sub
from jointspace.collision.primitive import put
from jointspace.types import GEOM_MESH

MAXCONPAIR_HFIELD = 50  # contacts per height-field pair at most (MuJoCo's mjMAXCONPAIR)


@jit
def _mat_t_mat(a, b):
    """aᵀ b of two row-major 3×3 tuples (built as a tuple: a list would be a heap object)."""
    return (a[0] * b[0] + a[3] * b[3] + a[6] * b[6], a[0] * b[1] + a[3] * b[4] + a[6] * b[7],
            a[0] * b[2] + a[3] * b[5] + a[6] * b[8], a[1] * b[0] + a[4] * b[3] + a[7] * b[6],
            a[1] * b[1] + a[4] * b[4] + a[7] * b[7], a[1] * b[2] + a[4] * b[5] + a[7] * b[8],
            a[2] * b[0] + a[5] * b[3] + a[8] * b[6], a[2] * b[1] + a[5] * b[4] + a[8] * b[7],
            a[2] * b[2] + a[5] * b[5] + a[8] * b[8])


@jit
def _push(hv, x, y, z):
    """Shift the prism rows by one (the oldest point leaves) and add grid point (x, y, z)."""
    for q in range(2):
        for k in range(3):
            hv[q, k] = hv[q + 1, k]
            hv[3 + q, k] = hv[4 + q, k]
    hv[2, 0] = hv[5, 0] = x
    hv[2, 1] = hv[5, 1] = y
    hv[5, 2] = z


@jit
def hfield_convex(buf, ws, margin, p1, m1, hsize, nrow, ncol, hdata, hadr, t2, p2, m2, s2,
                  rbound2, hull, va2, nv2, hg, ga2, niter, tol):
    """Contacts of a height field (geom 1) with a convex geom (geom 2) into buf.

    Args:
        buf: (MAXCONPAIR_HFIELD, 10) contact rows (pos, normal from geom 1 to geom 2, tangent
            hint, dist), world frame.
        ws: a convex workspace (`ccd.make_workspace(niter)`).
        margin: the pair's margin + gap.
        p1: the height field's world position.
        m1: its world rotation (row-major tuple).
        hsize: its hfield_size row (radius x, radius y, elevation z, base z).
        nrow: its grid rows.
        ncol: its grid columns.
        hdata: hfield_data (elevations in [0, 1]).
        hadr: the field's first address in hdata.
        t2: the other geom's type.
        p2: its world position.
        m2: its world rotation.
        s2: its geom_size.
        rbound2: its bounding radius.
        hull: hull_vert.
        va2: a mesh geom's first hull vertex (unused for other types).
        nv2: a mesh geom's hull vertex count.
        hg: hull_graph.
        ga2: a mesh geom's hull graph address (−1: none).
        niter: ccd_iterations (GJK and EPA).
        tol: ccd_tolerance.

    Returns:
        The number of contacts written.
    """
    size0, size1, size2, size3 = hsize[0], hsize[1], hsize[2], hsize[3]
    # the geom in the height field's frame
    lp = mat_t_vec(m1, sub(p2, p1))
    rad = rbound2 + margin
    if (size0 < lp[0] - rad or -size0 > lp[0] + rad or size1 < lp[1] - rad
            or -size1 > lp[1] + rad or size2 < lp[2] - rad or -size3 > lp[2] + rad):
        return 0
    lm = _mat_t_mat(m1, m2)
    # one vertex array: the prism (rows 0..5), then a mesh's hull vertices
    nh = nv2 if t2 == GEOM_MESH else 0
    hv = np.empty((6 + nh, 3))
    for i in range(nh):
        for k in range(3):
            hv[6 + i, k] = hull[va2 + i, k]
    # the geom's box from its support points (no margin)
    xmax = C.support(t2, lp, lm, s2, hv, 6, nh, hg, ga2, (1.0, 0.0, 0.0))[0]
    xmin = C.support(t2, lp, lm, s2, hv, 6, nh, hg, ga2, (-1.0, 0.0, 0.0))[0]
    ymax = C.support(t2, lp, lm, s2, hv, 6, nh, hg, ga2, (0.0, 1.0, 0.0))[1]
    ymin = C.support(t2, lp, lm, s2, hv, 6, nh, hg, ga2, (0.0, -1.0, 0.0))[1]
    zmax = C.support(t2, lp, lm, s2, hv, 6, nh, hg, ga2, (0.0, 0.0, 1.0))[2]
    zmin = C.support(t2, lp, lm, s2, hv, 6, nh, hg, ga2, (0.0, 0.0, -1.0))[2]
    if (xmin - margin > size0 or xmax + margin < -size0 or ymin - margin > size1
            or ymax + margin < -size1 or zmin - margin > size2 or zmax + margin < -size3):
        return 0
    # the cells under the box
    cmin = max(0, int(math.floor((xmin + size0) / (2.0 * size0) * (ncol - 1))))
    cmax = min(ncol - 1, int(math.ceil((xmax + size0) / (2.0 * size0) * (ncol - 1))))
    rmin = max(0, int(math.floor((ymin + size1) / (2.0 * size1) * (nrow - 1))))
    rmax = min(nrow - 1, int(math.ceil((ymax + size1) / (2.0 * size1) * (nrow - 1))))
    dx = (2.0 * size0) / (ncol - 1)
    dy = (2.0 * size1) / (nrow - 1)
    for q in range(3):
        hv[q, 2] = -size3
    # a contact per prism within the margin: its signed distance, midway between the two
    # surfaces (MuJoCo 4.0.0 reports these; its source raises the prism tops by the margin)
    eye = (1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0)
    zero = (0.0, 0.0, 0.0)
    ncon = 0
    for r in range(rmin, rmax):
        for i in range(2):
            rr = r + 1 - i
            _push(hv, dx * cmin - size0, dy * rr - size1, hdata[hadr + rr * ncol + cmin] * size2)
        for c in range(cmin + 1, cmax + 1):
            for i in range(2):
                rr = r + 1 - i
                _push(hv, dx * c - size0, dy * rr - size1, hdata[hadr + rr * ncol + c] * size2)
                if hv[3, 2] + margin < zmin and hv[4, 2] + margin < zmin and \
                        hv[5, 2] + margin < zmin:
                    continue
                found, pos, nrm, dist = K.contact(
                    ws, margin, K.obj(C.CORE_PRISM, zero, eye, zero, 0, 6, -1),
                    K.obj(t2, lp, lm, s2, 6, nh, ga2), hv, hg, niter, tol)
                if not found or not dist < margin:
                    continue
                put(buf, ncon, add(mat_vec(m1, pos), p1), mat_vec(m1, nrm), dist)
                ncon += 1
                if ncon >= MAXCONPAIR_HFIELD:
                    return ncon
    return ncon
