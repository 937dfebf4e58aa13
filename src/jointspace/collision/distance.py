"""Signed distance between two geoms, with the segment between them (mj_geomDistance).

As MuJoCo 4.0 computes it: the pair's collision function run with the cutoff as margin,
the contact of smallest distance kept, and the segment from geom 1's surface to geom 2's
(the contact point ∓ dist/2 along the normal); for the pairs MuJoCo gives to its convex
solver (every pair with an ellipsoid, a cylinder (but with a plane or a sphere), a mesh,
and box-box) the GJK distance or EPA depth with its witness points. Beyond the cutoff
(or for a pair of planes) the distance is the cutoff and the segment zeros.

jointspace's GJK/EPA run to convergence where MuJoCo's stop at ccd_tolerance (see
collision/driver.py): for penetrating round convex shapes the depths can differ by that.
"""

import numpy as np
from numba import njit

from jointspace.collision import convex as C
from jointspace.collision._vec import m9, v3
from jointspace.collision.box import _MAXVERT
from jointspace.collision.driver import (
    MAXCONPAIR,
    _mesh_ranges,
    _narrow,
    _needs_workspace,
)
from jointspace.types import GEOM_BOX, GEOM_PLANE


@njit(cache=True)
def geom_distance(m, d, geom1, geom2, cutoff, fromto, ws):
    """Distance between geom1 and geom2 up to cutoff; fromto (6) gets the segment or zeros.

    ws: a convex workspace (collision.convex.make_workspace(True)).
    """
    fromto[:] = 0.0
    t1, t2 = m.geom_type[geom1], m.geom_type[geom2]
    if t1 == GEOM_PLANE and t2 == GEOM_PLANE:
        return cutoff
    flip = t1 > t2
    g1, g2 = (geom2, geom1) if flip else (geom1, geom2)
    ta, tb = m.geom_type[g1], m.geom_type[g2]
    if _needs_workspace(ta, tb) or (ta == GEOM_BOX and tb == GEOM_BOX):
        va1, nv1, _, _ = _mesh_ranges(m, geom1)
        va2, nv2, _, _ = _mesh_ranges(m, geom2)
        found, pos, nrm, dist, _ = C.contact(
            ws, cutoff, m.geom_type[geom1], v3(d.geom_xpos[geom1]), m9(d.geom_xmat[geom1]),
            v3(m.geom_size[geom1]), m.geom_type[geom2], v3(d.geom_xpos[geom2]),
            m9(d.geom_xmat[geom2]), v3(m.geom_size[geom2]), m.hull_vert, va1, nv1, va2, nv2)
        if not found or dist >= cutoff:
            return cutoff
        for k in range(3):
            fromto[k] = pos[k] - 0.5 * dist * nrm[k]
            fromto[3 + k] = pos[k] + 0.5 * dist * nrm[k]
        return dist
    buf = np.empty((MAXCONPAIR, 10))
    boxpoly = np.empty((2, _MAXVERT, 3))
    n = _narrow(m, d, g1, g2, cutoff, buf, boxpoly)
    best = -1
    dist = cutoff
    for i in range(n):
        if buf[i, 9] < dist:
            dist = buf[i, 9]
            best = i
    if best >= 0:
        s = -0.5 * dist if flip else 0.5 * dist
        for k in range(3):
            fromto[k] = buf[best, k] - s * buf[best, 3 + k]
            fromto[3 + k] = buf[best, k] + s * buf[best, 3 + k]
    return dist
