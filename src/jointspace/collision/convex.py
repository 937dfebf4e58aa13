"""General convex narrowphase: support functions, hull searches and multi-contact.

A pair of convex geoms gets its deepest contact from MuJoCo's GJK and EPA
(collision.ccd: the signed distance of the pair within its margin, the normal, the point
midway between the witness points). Where the touching set is not a single point, it is
described by flat features, as MuJoCo 4.0 does, chosen at the two witness points
pos ∓ dist/2 · normal whatever the contact normal. Faces: a box's 6, a mesh's hull
polygons, a cylinder's caps (regular 16-gons, CYL_SIDES); edges: a box's or mesh's at an
edge or vertex witness, a cylinder's side line through the witness point, a capsule's
segment moved to its witness point. At a box or mesh witness, the faces through it (one
inside a face, two on an edge, more at a vertex); at a cylinder's, the cap it lies on and,
on the curved side, the side line (a witness on the side counts as a vertex would: its line
is tried first). Two faces facing each other within ~5° are clipped against each other (at
most 4 points, the largest quadrilateral when more survive); else an edge of geom 1 lying
on a face of geom 2 within ~5°, then the reverse (but not a box corner's edges on a
cylinder cap), is clipped by the face (2 points). A capsule's segment is clipped by a mesh
face through the witness point (one the witness lies inside, where the capsule's witness
is on a cap) or the cylinder cap it lies on, half the margin farther out
(MuJoCo's CCD radius), its ends then brought back half the margin along the face normal.
Each point has its own distance, and points beyond the margin are dropped.

Plane-ellipsoid and plane-mesh use the support point along −(plane normal); a mesh adds the
other vertices of its most downward hull face at that vertex that are within the margin
and below the mesh centre (MuJoCo 4.0).

A mesh of many hull vertices carries its hull graph (collision.hull.hull_graph): support
points are found by climbing it (`hull_index`) and the faces at a vertex or a witness point
by walking it (`_faces_near`), with the same results as a search of every vertex and face.
"""

import math

import numpy as np
from numba import types

from jointspace._numba.scratch import on_stack
from jointspace.collision._vec import (
    BUF,
    F2,
    F3,
    F8,
    I1,
    I8,
    M9,
    V3,
    WS,
    add,
    add_scl,
    col,
    cross,
    dot,
    jit,
    jit_inline,
    jit_sig,
    mat_t_vec,
    mat_vec,
    norm,
    normalize,
    scl,
    sub,
)
from jointspace.collision.primitive import put
from jointspace.types import (
    GEOM_BOX,
    GEOM_CAPSULE,
    GEOM_CYLINDER,
    GEOM_ELLIPSOID,
    GEOM_MESH,
    GEOM_SPHERE,
    MINVAL,
)

# the hull graph's seed grid (collision.hull.hull_graph): a direction component beyond
# ±GRID_CUT picks the ±1 cell on that axis
GRID_CUT = 0.4

# a sphere's centre and a capsule's segment (collision.ccd runs GJK on them first; not geom
# types), and a height field's triangular prism: rows vadr … vadr + 5 of hv, the bottom
# triangle first (collision.hfield)
CORE_POINT, CORE_SEGMENT, CORE_PRISM = 100, 101, 102

FACE_TOL = 0.996  # cos of the angle within which two faces count as facing (MuJoCo)
EDGE_TOL = 0.0888  # sin of the angle within which an edge lies on a face (MuJoCo)
WITNESS_TOL = 1e-6  # a face passes through a witness point within this distance (m)
ALIGN_TOL = 1e-6  # a face whose normal is the contact normal within 1 - cos of this
CYL_SIDES = 16  # a cylinder cap is a regular polygon with this many sides for face clipping


POLY_MAX = 32  # face clipping is skipped for hull polygons with more vertices


# ---------------------------------------------------------------------------------------------
# support functions


# a hill climb whose vertex has a neighbour this close (relative to the vertex's size) may
# stand on a flat face or a fold of nearly coplanar merged triangles: scan instead
CLIMB_TIE = 1e-5
TIE_MAX = 64


@jit_inline
def _scan(hv, vadr, vnum, l0, l1, l2):
    """The hull vertex of largest projection on (l0, l1, l2), the first of equals."""
    best = -1e300
    ib = vadr
    for i in range(vadr, vadr + vnum):
        p = l0 * hv[i, 0] + l1 * hv[i, 1] + l2 * hv[i, 2]
        if p > best:
            best = p
            ib = i
    return ib


@jit_inline
def _climb(hv, vadr, hg, ga, start, l0, l1, l2):
    """Hill climb on the hull graph at ga toward l: (top vertex, its value, best neighbour's).

    The top vertex is relative to vadr; the neighbours' largest value is −inf when it has
    none. From the seed of l's grid cell, or from vertex `start` (relative to vadr; −1: none)
    where that projects farther, to the neighbour that projects farthest, until none
    projects farther: a vertex of largest projection (one of equals, not necessarily the
    first).
    """
    cx = 1 + (1 if l0 > GRID_CUT else 0) - (1 if l0 < -GRID_CUT else 0)
    cy = 1 + (1 if l1 > GRID_CUT else 0) - (1 if l1 < -GRID_CUT else 0)
    cz = 1 + (1 if l2 > GRID_CUT else 0) - (1 if l2 < -GRID_CUT else 0)
    i = np.int64(hg[np.uint64(ga + 9 * cx + 3 * cy + cz)])
    r = vadr + i
    best = l0 * hv[r, 0] + l1 * hv[r, 1] + l2 * hv[r, 2]
    if start >= 0:
        r = vadr + start
        p = l0 * hv[r, 0] + l1 * hv[r, 1] + l2 * hv[r, 2]
        if p > best:
            best = p
            i = start
    prev = -1
    nbr = -math.inf
    while i != prev:
        prev = i
        nbr = -math.inf
        k = ga + np.int64(hg[np.uint64(ga + 27 + prev)])
        j = np.int64(hg[np.uint64(k)])
        while j >= 0:
            r = vadr + j
            p = l0 * hv[r, 0] + l1 * hv[r, 1] + l2 * hv[r, 2]
            if p > nbr:
                nbr = p
            if p > best:
                best = p
                i = j
            k += 1
            j = np.int64(hg[np.uint64(k)])
    return i, best, nbr


@jit_sig(I8(F2, I8, I8, I1, I8, F8, F8, F8))
def hull_index(hv, vadr, vnum, hg, ga, l0, l1, l2):
    """Row of hv: the mesh hull's vertex of largest projection on the local direction l.

    `hull_index_from` with no start vertex.
    """
    return hull_index_from(hv, vadr, vnum, hg, ga, -1, l0, l1, l2)


@jit_sig(I8(F2, I8, I8, I1, I8, I8, F8, F8, F8))
def hull_index_from(hv, vadr, vnum, hg, ga, start, l0, l1, l2):
    """Row of hv: the mesh hull's vertex of largest projection on l, climbed from `start`.

    Called, not inlined: GJK and EPA make support points at ten places, each for both
    shapes, and twenty inlined copies of this search made the collision kernels take
    minutes longer to compile (docs/speed.md, "Compile time").

    The same vertex as a scan of all vertices, the first of equals. With a hull graph
    (ga ≥ 0: collision.hull.hull_graph), it climbs (`_climb`) from the grid seed or from
    the row `start` (−1: none; MuJoCo warm-starts its climbs with the previous support
    vertex too), whichever projects farther. Where the top vertex has
    neighbours within CLIMB_TIE of it (a face or edge facing l, or a fold of nearly coplanar
    merged triangles), the vertices within CLIMB_TIE of the top, which are connected on a
    convex hull, are gathered from it, and the first of the largest is taken; a scan where
    they are more than TIE_MAX, or the top has no neighbour (a vertex dropped from the
    polygons as collinear).
    """
    if ga < 0:
        return _scan(hv, vadr, vnum, l0, l1, l2)
    i, best, nbr = _climb(hv, vadr, hg, ga, start - vadr if start >= 0 else -1, l0, l1, l2)
    r = vadr + i
    tie = CLIMB_TIE * (abs(hv[r, 0]) + abs(hv[r, 1]) + abs(hv[r, 2]))
    if hg[np.uint64(ga + np.int64(hg[np.uint64(ga + 27 + i)]))] < 0:
        return _scan(hv, vadr, vnum, l0, l1, l2)
    if not nbr >= best - tie:
        return r
    region = on_stack(TIE_MAX, np.int64)
    region[0] = i
    n = 1
    head = 0
    while head < n:
        k = ga + np.int64(hg[np.uint64(ga + 27 + region[head])])
        head += 1
        j = np.int64(hg[np.uint64(k)])
        while j >= 0:
            q = vadr + j
            if l0 * hv[q, 0] + l1 * hv[q, 1] + l2 * hv[q, 2] >= best - tie:
                seen = False
                for c in range(n):
                    if region[c] == j:
                        seen = True
                        break
                if not seen:
                    if n == TIE_MAX:
                        return _scan(hv, vadr, vnum, l0, l1, l2)
                    region[n] = j
                    n += 1
            k += 1
            j = np.int64(hg[np.uint64(k)])
    top = -1e300
    ib = -1
    for c in range(n):
        q = vadr + region[c]
        p = l0 * hv[q, 0] + l1 * hv[q, 1] + l2 * hv[q, 2]
        if p > top or (p == top and q < ib):
            top = p
            ib = q
    return ib


@jit_sig(V3(I8, V3, M9, V3, F2, I8, I8, I1, I8, V3))
def support(t, pos, mat, size, hv, vadr, vnum, hg, ga, d):
    """Farthest point of the shape along world direction d (unit), in world coordinates.

    A mesh's is its hull vertex of largest projection, the first of equals
    (`hull_index`: hg is hull_graph, ga the mesh's graph address or −1).
    """
    return _support(t, pos, mat, size, hv, vadr, vnum, hg, ga, d, -1)[0]


@jit_inline
def _support(t, pos, mat, size, hv, vadr, vnum, hg, ga, d, start):
    """`support`, and for a mesh its vertex's row of hv (else −1), the climb from `start`.

    start: the row of the previous support vertex of the same mesh, or −1
    (`hull_index_from`); the point is the same whatever the start. Inlined into `_mink`,
    which calls it for every support point of GJK and EPA.
    """
    l0, l1, l2 = mat_t_vec(mat, d)
    if t == CORE_POINT:
        return pos, -1
    if t == CORE_SEGMENT:
        h = size[1] if l2 >= 0 else -size[1]
        return add_scl(pos, col(mat, 2), h), -1
    if t == CORE_PRISM:  # in hv's frame: the best of the top (d_z >= 0) or bottom triangle
        i0 = vadr + 3 if d[2] >= 0 else vadr
        ib = i0
        best = d[0] * hv[i0, 0] + d[1] * hv[i0, 1] + d[2] * hv[i0, 2]
        for i in range(i0 + 1, i0 + 3):
            p = d[0] * hv[i, 0] + d[1] * hv[i, 1] + d[2] * hv[i, 2]
            if p > best:
                best = p
                ib = i
        return (hv[ib, 0], hv[ib, 1], hv[ib, 2]), -1
    ib = -1
    if t == GEOM_SPHERE:
        loc = (l0 * size[0], l1 * size[0], l2 * size[0])
    elif t == GEOM_CAPSULE:
        loc = (l0 * size[0], l1 * size[0], l2 * size[0] + (size[1] if l2 >= 0 else -size[1]))
    elif t == GEOM_ELLIPSOID:
        e = (l0 * size[0], l1 * size[1], l2 * size[2])
        ee = dot(e, e)
        if ee < MINVAL * MINVAL:
            loc = (size[0], 0.0, 0.0)
        else:
            inv = 1.0 / math.sqrt(ee)
            loc = (e[0] * inv * size[0], e[1] * inv * size[1], e[2] * inv * size[2])
    elif t == GEOM_CYLINDER:
        n2 = l0 * l0 + l1 * l1
        s = size[0] / math.sqrt(n2) if n2 >= MINVAL * MINVAL else 0.0
        loc = (l0 * s, l1 * s, size[1] if l2 >= 0 else -size[1])
    elif t == GEOM_BOX:
        loc = (size[0] if l0 >= 0 else -size[0], size[1] if l1 >= 0 else -size[1],
               size[2] if l2 >= 0 else -size[2])
    else:  # mesh: hull vertex with the largest projection (the first of equals)
        ib = hull_index_from(hv, vadr, vnum, hg, ga, start, l0, l1, l2)
        loc = (hv[ib, 0], hv[ib, 1], hv[ib, 2])
    return add(mat_vec(mat, loc), pos), ib


# ---------------------------------------------------------------------------------------------
# flat features: faces facing each other, an edge lying on a face
#
# Faces: a box's 6, a mesh's hull polygons, a cylinder's caps (regular CYL_SIDES-gons, one
# vertex on the local x axis). Edges: a box's or mesh's edges at its support vertex, a
# cylinder's side line at its support point, a capsule's segment (with the capsule radius).


@jit_inline
def _box_face_index(mat, u):
    """Face of a box (2 axis + (0 if + else 1)) whose outward normal is nearest u (world)."""
    ld = mat_t_vec(mat, u)
    ax = 0
    if abs(ld[1]) > abs(ld[ax]):
        ax = 1
    if abs(ld[2]) > abs(ld[ax]):
        ax = 2
    return 2 * ax + (0 if ld[ax] >= 0 else 1)


@jit_sig(types.Tuple((I8, V3, F8))(F3, I8, I8, V3, M9, V3, F2, I8, I1, I1, I1, F2, I8, I8, V3))
def _face_of(poly, slot, t, pos, mat, size, hv, va, pva, pvn, pv, pn, pa, np_, u):
    """The face of a box or cylinder whose outward normal is nearest the world direction u.

    Writes its vertices (world, counter-clockwise about the normal) into poly[slot] and
    returns (vertex count, outward normal, normal · u); count 0 for other geoms. A
    cylinder's face is a cap, a regular CYL_SIDES-gon with a vertex on the local x axis.
    """
    zero = (0.0, 0.0, 0.0)
    if t == GEOM_BOX:
        f = _box_face_index(mat, u)
        ax = f // 2
        sg = 1.0 if f % 2 == 0 else -1.0
        iu = (ax + 1) % 3
        for q in range(4):
            cu = -1.0 if q == 0 or q == 3 else 1.0
            cv = -1.0 if q < 2 else 1.0
            if sg < 0:  # reverse the winding for the negative face
                cu = -cu
            loc0 = sg * size[0] if ax == 0 else (cu * size[0] if iu == 0 else cv * size[0])
            loc1 = sg * size[1] if ax == 1 else (cu * size[1] if iu == 1 else cv * size[1])
            loc2 = sg * size[2] if ax == 2 else (cu * size[2] if iu == 2 else cv * size[2])
            w = add(mat_vec(mat, (loc0, loc1, loc2)), pos)
            poly[slot, q, 0], poly[slot, q, 1], poly[slot, q, 2] = w
        nl = (sg if ax == 0 else 0.0, sg if ax == 1 else 0.0, sg if ax == 2 else 0.0)
        fn = mat_vec(mat, nl)
        return 4, fn, dot(fn, u)
    if t == GEOM_CYLINDER:
        axis = col(mat, 2)
        sg = 1.0 if dot(axis, u) >= 0 else -1.0
        for q in range(CYL_SIDES):
            ang = 2.0 * math.pi * q / CYL_SIDES
            c = math.cos(ang) * size[0]
            s = math.sin(ang) * size[0] * sg  # reversed winding on the bottom cap
            w = add(mat_vec(mat, (c, s, sg * size[1])), pos)
            poly[slot, q, 0], poly[slot, q, 1], poly[slot, q, 2] = w
        fn = scl(axis, sg)
        return CYL_SIDES, fn, dot(fn, u)
    return 0, zero, 0.0


@jit_inline
def _clip_polygon(poly, src, n, ref, nref, nrm):
    """Clip polygon poly[src] (n vertices) by the prism of the reference face poly[ref].

    Sutherland-Hodgman against the side plane of each reference edge; the result is in
    poly[0] or poly[1]; returns (slot, count).
    """
    cap = poly.shape[1]
    for e in range(nref):
        e0 = (poly[ref, e, 0], poly[ref, e, 1], poly[ref, e, 2])
        e1 = (poly[ref, (e + 1) % nref, 0], poly[ref, (e + 1) % nref, 1],
              poly[ref, (e + 1) % nref, 2])
        side = cross(nrm, sub(e1, e0))  # points into the reference face
        dst = 1 - src
        m = 0
        for q in range(n):
            pq = (poly[src, q, 0], poly[src, q, 1], poly[src, q, 2])
            q1 = (q + 1) % n
            pr = (poly[src, q1, 0], poly[src, q1, 1], poly[src, q1, 2])
            dq = dot(sub(pq, e0), side)
            dr = dot(sub(pr, e0), side)
            if dq >= 0 and m < cap:
                poly[dst, m, 0], poly[dst, m, 1], poly[dst, m, 2] = pq
                m += 1
            if ((dq < 0 < dr) or (dr < 0 < dq)) and m < cap:
                t = dq / (dq - dr)
                poly[dst, m, 0], poly[dst, m, 1], poly[dst, m, 2] = add_scl(pq, sub(pr, pq), t)
                m += 1
        src = dst
        n = m
        if n == 0:
            break
    return src, n


@jit_inline
def _clip_mj(poly, src, n, ref, nref, nrm):
    """Clip poly[src] (n vertices; 2: a segment) by face poly[ref]'s prism as MuJoCo does.

    A segment is clipped as a closed 2-gon, in the order of MuJoCo's polygonClip: each
    polygon edge P → Q emits Q when both are inside a side plane, the crossing point (then
    Q if inside) when they straddle it; a segment's crossing point comes out once per
    direction, so a segment cut down to one point yields it twice, as in MuJoCo. Returns
    (slot, count).
    """
    cap = poly.shape[1]
    for e in range(nref):
        e0 = (poly[ref, e, 0], poly[ref, e, 1], poly[ref, e, 2])
        e1 = (poly[ref, (e + 1) % nref, 0], poly[ref, (e + 1) % nref, 1],
              poly[ref, (e + 1) % nref, 2])
        side, _ = normalize(cross(nrm, sub(e1, e0)))  # points into the reference face
        dst = 1 - src
        m = 0
        for i in range(n):
            pp = (poly[src, i, 0], poly[src, i, 1], poly[src, i, 2])
            i1 = (i + 1) % n
            qq = (poly[src, i1, 0], poly[src, i1, 1], poly[src, i1, 2])
            in1 = dot(sub(pp, e0), side) > -MINVAL
            in2 = dot(sub(qq, e0), side) > -MINVAL
            if not in1 and not in2:
                continue
            if in1 and in2:
                if m < cap:
                    poly[dst, m, 0], poly[dst, m, 1], poly[dst, m, 2] = qq
                    m += 1
                continue
            pq = sub(qq, pp)
            tmp = dot(side, pq)
            if tmp != 0.0:
                t = -dot(sub(pp, e0), side) / tmp
                if 0.0 <= t <= 1.0 and m < cap:
                    poly[dst, m, 0], poly[dst, m, 1], poly[dst, m, 2] = add_scl(pp, pq, t)
                    m += 1
            if in2 and m < cap:
                poly[dst, m, 0], poly[dst, m, 1], poly[dst, m, 2] = qq
                m += 1
        src = dst
        n = m
    return src, n


@jit_inline
def _clip_segment(a, b, poly, ref, nref, nrm):
    """Clip segment ab by the prism of the reference face; returns (ok, a', b')."""
    t0 = 0.0
    t1 = 1.0
    ab = sub(b, a)
    for e in range(nref):
        e0 = (poly[ref, e, 0], poly[ref, e, 1], poly[ref, e, 2])
        e1 = (poly[ref, (e + 1) % nref, 0], poly[ref, (e + 1) % nref, 1],
              poly[ref, (e + 1) % nref, 2])
        side = cross(nrm, sub(e1, e0))
        da = dot(sub(a, e0), side)
        dab = dot(ab, side)
        if dab == 0:
            if da < 0:
                return False, a, b
            continue
        t = -da / dab
        if dab > 0:
            t0 = max(t0, t)
        else:
            t1 = min(t1, t)
        if t0 > t1:
            return False, a, b
    return True, add_scl(a, ab, t0), add_scl(a, ab, t1)


@jit
def _quad_area(poly, s, i, j, k, q):
    """Area of the quadrilateral of polygon vertices i, j, k, l (in polygon order)."""
    a = (poly[s, i, 0], poly[s, i, 1], poly[s, i, 2])
    b = (poly[s, j, 0], poly[s, j, 1], poly[s, j, 2])
    c = (poly[s, k, 0], poly[s, k, 1], poly[s, k, 2])
    d = (poly[s, q, 0], poly[s, q, 1], poly[s, q, 2])
    return 0.5 * norm(cross(sub(c, a), sub(d, b)))


@jit_inline
def _quad(poly, s, n):
    """The largest-area quadrilateral of n > 4 polygon vertices, indices packed 8 bits each."""
    best = -1.0
    packed = 0
    for i in range(n):
        for j in range(i + 1, n):
            for k in range(j + 1, n):
                for q in range(k + 1, n):
                    ar = _quad_area(poly, s, i, j, k, q)
                    if ar > best:
                        best = ar
                        packed = i | (j << 8) | (k << 16) | (q << 24)
    return packed


@jit_sig(types.Tuple((I8, V3))(F3, I8, M9, V3, F2, I8, I8, I8, I1, I1, I1, F2, V3, V3))
def _witness_face(poly, slot, mat, pos, hv, va, pa, np_, pva, pvn, pv, pn, x, axis):
    """A mesh face through the witness point x that the direction axis lies on.

    The faces whose planes pass within WITNESS_TOL of x (the face, edge or vertex of the
    hull that x lies on), in polygon order; the first with |axis · normal| < EDGE_TOL is
    written into poly[slot]. Returns (vertex count, 0 when none; its outward normal).
    """
    for f in range(pa, pa + np_):
        fn = mat_vec(mat, (pn[f, 0], pn[f, 1], pn[f, 2]))
        if abs(dot(axis, fn)) >= EDGE_TOL or pvn[f] > POLY_MAX:
            continue
        i0 = va + pv[pva[f]]
        w0 = add(mat_vec(mat, (hv[i0, 0], hv[i0, 1], hv[i0, 2])), pos)
        if abs(dot(sub(x, w0), fn)) >= WITNESS_TOL:
            continue
        for q in range(pvn[f]):
            i = va + pv[pva[f] + q]
            w = add(mat_vec(mat, (hv[i, 0], hv[i, 1], hv[i, 2])), pos)
            poly[slot, q, 0], poly[slot, q, 1], poly[slot, q, 2] = w
        return pvn[f], fn
    return 0, (0.0, 0.0, 0.0)


@jit_inline
def _plane_dist(hv, va, pva, pv, pn, f, lx):
    """Signed distance of the local point lx from the plane of hull polygon f."""
    i0 = va + pv[pva[f]]
    return (pn[f, 0] * (lx[0] - hv[i0, 0]) + pn[f, 1] * (lx[1] - hv[i0, 1])
            + pn[f, 2] * (lx[2] - hv[i0, 2]))


@jit_inline
def _faces_near(hv, va, nv_, pa, pva, pvn, pv, pn, hg, ga, lx, lu, out, scr):
    """The hull faces whose planes pass within WITNESS_TOL of lx, in order, from the graph.

    lx lies on the hull where it faces lu (both local), so the faces through it (inside
    one face, on an edge, at a vertex) share a vertex with one another and one of them has
    a corner at a top vertex along lu. They are gathered from the faces at that vertex
    through the faces that share a vertex with a face found (scr holds them): the same
    faces, in the same order, as a test of every face. Returns their count, or −1 when
    none is at the top vertex (then every face is tested).
    """
    iv, _, _ = _climb(hv, va, hg, ga, -1, lu[0], lu[1], lu[2])
    nl = 0
    kk = ga + np.int64(hg[np.uint64(ga + 27 + nv_ + iv)])
    f = np.int64(hg[np.uint64(kk)])
    while f >= 0:
        if abs(_plane_dist(hv, va, pva, pv, pn, pa + f, lx)) < WITNESS_TOL and \
                nl < scr.shape[0]:
            scr[nl] = f
            nl += 1
        kk += 1
        f = np.int64(hg[np.uint64(kk)])
    if nl == 0:
        return -1
    head = 0
    while head < nl:
        g = pa + scr[head]
        head += 1
        for q in range(pvn[g]):
            v = np.int64(pv[pva[g] + q])
            kk = ga + np.int64(hg[np.uint64(ga + 27 + nv_ + v)])
            f = np.int64(hg[np.uint64(kk)])
            while f >= 0:
                seen = False
                for r in range(nl):
                    if scr[r] == f:
                        seen = True
                        break
                if not seen and abs(_plane_dist(hv, va, pva, pv, pn, pa + f, lx)) < WITNESS_TOL:
                    if nl == scr.shape[0]:
                        return -1
                    scr[nl] = f
                    nl += 1
                kk += 1
                f = np.int64(hg[np.uint64(kk)])
    n = 0
    for r in range(nl):
        if n < out.shape[0]:
            f = pa + scr[r]
            q = n
            while q > 0 and out[q - 1] > f:
                out[q] = out[q - 1]
                q -= 1
            out[q] = f
            n += 1
    return n


@jit_inline
def _faces_at(t, pos, mat, size, hv, va, nv_, pa, np_, pva, pvn, pv, pn, hg, ga, x, u, out,
              scr):
    """Faces of a box or mesh at the witness point x, in order; the count.

    The faces whose planes pass within WITNESS_TOL of x: one when x lies inside a face, two
    on their common edge, more on a vertex; but a face among them whose outward normal is
    the contact direction u (within ALIGN_TOL) alone, as MuJoCo's EPA then ends on that
    face. A box's faces are numbered 2 axis + (0 for the + side, 1 for the − side). A mesh
    with a hull graph (ga ≥ 0) tests the faces near x (`_faces_near`), else every face.
    """
    n = 0
    if t == GEOM_BOX:
        lx = mat_t_vec(mat, sub(x, pos))
        for ax in range(3):
            for sgi in range(2):
                sg = 1.0 if sgi == 0 else -1.0
                if abs(lx[ax] - sg * size[ax]) < WITNESS_TOL:
                    out[n] = 2 * ax + sgi
                    n += 1
    else:
        lx = mat_t_vec(mat, sub(x, pos))  # the plane test in mesh coordinates
        n = -1
        if ga >= 0:
            n = _faces_near(hv, va, nv_, pa, pva, pvn, pv, pn, hg, ga, lx, mat_t_vec(mat, u),
                            out, scr)
        if n < 0:
            n = 0
            for f in range(pa, pa + np_):
                if abs(_plane_dist(hv, va, pva, pv, pn, f, lx)) < WITNESS_TOL and \
                        n < out.shape[0]:
                    out[n] = f
                    n += 1
    if n > 1:
        for q in range(n):
            if dot(_face_normal(t, mat, pn, out[q]), u) > 1.0 - ALIGN_TOL:
                out[0] = out[q]
                return 1
    return n


@jit_inline
def _face_normal(t, mat, pn, f):
    """World outward normal of face f of a box, mesh (numbered as in _faces_at) or cylinder.

    A cylinder's faces are its caps: 0 the top (+z), 1 the bottom.
    """
    if t == GEOM_BOX:
        return scl(col(mat, f // 2), 1.0 if f % 2 == 0 else -1.0)
    if t == GEOM_CYLINDER:
        return scl(col(mat, 2), 1.0 if f == 0 else -1.0)
    return mat_vec(mat, (pn[f, 0], pn[f, 1], pn[f, 2]))


@jit_inline
def _cyl_at(pos, mat, size, x, u):
    """Features of a cylinder at the witness point x (u: the outward contact direction).

    Returns (cap, side): cap 0 (the top, +z) or 1 (the bottom) when x lies on that cap's
    plane within WITNESS_TOL, else −1; side when x lies on the curved side within
    WITNESS_TOL (on the rim, both). A cap whose normal is u within ALIGN_TOL stands alone
    (side False), as a face of a box or mesh does in _faces_at.
    """
    lx = mat_t_vec(mat, sub(x, pos))
    cap = -1
    if abs(lx[2] - size[1]) < WITNESS_TOL:
        cap = 0
    elif abs(lx[2] + size[1]) < WITNESS_TOL:
        cap = 1
    side = abs(math.sqrt(lx[0] * lx[0] + lx[1] * lx[1]) - size[0]) < WITNESS_TOL
    if cap >= 0 and side and dot(col(mat, 2), u) * (1.0 if cap == 0 else -1.0) > 1.0 - ALIGN_TOL:
        side = False
    return cap, side


@jit_inline
def _cyl_side(pos, mat, size, x):
    """The cylinder's side line through the witness point x: (a, b), a at x's end."""
    lx = mat_t_vec(mat, sub(x, pos))
    rad, ln = normalize((lx[0], lx[1], 0.0))
    if ln < MINVAL:
        rad = (1.0, 0.0, 0.0)
    h = size[1] if lx[2] >= 0 else -size[1]
    a = add(mat_vec(mat, (rad[0] * size[0], rad[1] * size[0], h)), pos)
    b = add(mat_vec(mat, (rad[0] * size[0], rad[1] * size[0], -h)), pos)
    return a, b


@jit_inline
def _load_face(poly, slot, t, pos, mat, size, hv, va, pva, pvn, pv, pn, f):
    """Write face f of a box, mesh or cylinder into poly[slot] (counter-clockwise); its count."""
    if t == GEOM_BOX or t == GEOM_CYLINDER:
        nq, _, _ = _face_of(poly, slot, t, pos, mat, size, hv, va, pva, pvn, pv, pn, 0, 0,
                            _face_normal(t, mat, pn, f))
        return nq
    if pvn[f] > POLY_MAX:
        return 0
    for q in range(pvn[f]):
        i = va + pv[pva[f] + q]
        w = add(mat_vec(mat, (hv[i, 0], hv[i, 1], hv[i, 2])), pos)
        poly[slot, q, 0], poly[slot, q, 1], poly[slot, q, 2] = w
    return pvn[f]


@jit_inline
def _edge_at(t, pos, mat, size, hv, va, pva, pvn, pv, x, fs, nf, e):
    """Edge e at the witness feature (faces fs[:nf]) of a box or mesh: (ok, a, b).

    On an edge (nf = 2) the one edge; on a vertex (nf > 2) the vertex's edges: a box's along
    x, y, z, a mesh's to the previous vertex of each face at the vertex.
    """
    zero = (0.0, 0.0, 0.0)
    if t == GEOM_BOX:
        c0 = 0.0
        c1 = 0.0
        c2 = 0.0
        free = -1
        lx = mat_t_vec(mat, sub(x, pos))
        for ax in range(3):
            on = False
            for q in range(nf):
                if fs[q] // 2 == ax:
                    on = True
            if not on and nf == 2:
                free = ax
        if nf == 2:
            if e > 0:
                return False, zero, zero
            free_ax = free
        else:
            if e > 2:
                return False, zero, zero
            free_ax = e
        c0 = size[0] if lx[0] >= 0 else -size[0]
        c1 = size[1] if lx[1] >= 0 else -size[1]
        c2 = size[2] if lx[2] >= 0 else -size[2]
        a = add(mat_vec(mat, (c0, c1, c2)), pos)
        b = add(mat_vec(mat, (-c0 if free_ax == 0 else c0, -c1 if free_ax == 1 else c1,
                              -c2 if free_ax == 2 else c2)), pos)
        return True, a, b
    if nf == 2:
        if e > 0:
            return False, zero, zero
        fa = fs[0]
        fb = fs[1]
        cnt = 0
        ia = -1
        ib = -1
        for q in range(pvn[fa]):
            v = pv[pva[fa] + q]
            for r in range(pvn[fb]):
                if pv[pva[fb] + r] == v:
                    if cnt == 0:
                        ia = v
                    else:
                        ib = v
                    cnt += 1
        if cnt != 2:
            return False, zero, zero
        a = add(mat_vec(mat, (hv[va + ia, 0], hv[va + ia, 1], hv[va + ia, 2])), pos)
        b = add(mat_vec(mat, (hv[va + ib, 0], hv[va + ib, 1], hv[va + ib, 2])), pos)
        return True, a, b
    if e >= nf:
        return False, zero, zero
    # the vertex: face fs[0]'s vertex nearest x; the edge to its predecessor in face fs[e]
    f0 = fs[0]
    best = 1e300
    iv = -1
    for q in range(pvn[f0]):
        i = va + pv[pva[f0] + q]
        w = add(mat_vec(mat, (hv[i, 0], hv[i, 1], hv[i, 2])), pos)
        dd = dot(sub(w, x), sub(w, x))
        if dd < best:
            best = dd
            iv = pv[pva[f0] + q]
    f = fs[e]
    nq = pvn[f]
    for q in range(nq):
        if pv[pva[f] + q] == iv:
            j = va + pv[pva[f] + (q + nq - 1) % nq]
            a = add(mat_vec(mat, (hv[va + iv, 0], hv[va + iv, 1], hv[va + iv, 2])), pos)
            b = add(mat_vec(mat, (hv[j, 0], hv[j, 1], hv[j, 2])), pos)
            return True, a, b
    return False, zero, zero


@jit_sig(I8(BUF, I8, WS, F8, V3, V3, F8, I8, V3, M9, V3, I8, V3, M9, V3, F2, I8, I8, I8, I8, I8,
            I8, I1, I1, I1, F2, I8, I8, I1, I8, I8))
def flat_contacts(buf, k, ws, margin, nrm, pos, dist, t1, p1, m1, s1, t2, p2, m2, s2, hv, va1,
                  va2, pa1, np1, pa2, np2, pva, pvn, pv, pn, nv1, nv2, hg, ga1, ga2):
    """Contacts between flat features of two geoms in contact along nrm (geom 1 to geom 2).

    pos, dist: the contact (midway point, distance), whose witness points pos ∓ dist/2 nrm
    choose the features (module docstring), as MuJoCo 4.0 does. Faces facing each other
    within FACE_TOL: the face of geom 2 clipped by the prism of the face of geom 1, its
    vertices within the margin kept (the 4 spanning the largest area when more), each
    midway between the faces with normal −(face 2 normal). An edge lying on a face (within
    EDGE_TOL): the edge clipped by the face's prism (2 points). Returns the count, 0 when
    no such features meet.
    """
    poly = ws[5]
    flat1 = t1 == GEOM_BOX or t1 == GEOM_MESH or t1 == GEOM_CYLINDER
    flat2 = t2 == GEOM_BOX or t2 == GEOM_MESH or t2 == GEOM_CYLINDER
    witness = flat1 and flat2
    zero = (0.0, 0.0, 0.0)
    n1, f1 = 0, zero
    n2, f2 = 0, zero
    mode = 0  # 1: faces facing; 2: edge of geom 1 on face of geom 2; 3: the reverse
    ea = (0.0, 0.0, 0.0)
    eb = ea
    if witness:
        # MuJoCo 4.0: the features at the witness points, whatever the contact normal
        fs1 = ws[4][:, 0]
        fs2 = ws[4][:, 1]
        x1 = add_scl(pos, nrm, -0.5 * dist)
        x2 = add_scl(pos, nrm, 0.5 * dist)
        scr = ws[3]
        # a cylinder: its cap at the witness point (a face), its side line there (an edge)
        side1 = False
        side2 = False
        if t1 == GEOM_CYLINDER:
            cap, side1 = _cyl_at(p1, m1, s1, x1, nrm)
            fs1[0] = cap
            nf1 = 1 if cap >= 0 else 0
            dim1 = 1 if side1 else 3
            if nf1 == 0 and not side1:
                return 0
        else:
            nf1 = _faces_at(t1, p1, m1, s1, hv, va1, nv1, pa1, np1, pva, pvn, pv, pn, hg, ga1,
                            x1, nrm, fs1, scr)
            if nf1 == 0:
                return 0
            dim1 = 3 if nf1 == 1 else (2 if nf1 == 2 else 1)
        if t2 == GEOM_CYLINDER:
            cap, side2 = _cyl_at(p2, m2, s2, x2, scl(nrm, -1.0))
            fs2[0] = cap
            nf2 = 1 if cap >= 0 else 0
            dim2 = 1 if side2 else 3
            if nf2 == 0 and not side2:
                return 0
        else:
            nf2 = _faces_at(t2, p2, m2, s2, hv, va2, nv2, pa2, np2, pva, pvn, pv, pn, hg, ga2,
                            x2, scl(nrm, -1.0), fs2, scr)
            if nf2 == 0:
                return 0
            dim2 = 3 if nf2 == 1 else (2 if nf2 == 2 else 1)
        for i in range(nf1):
            if mode:
                break
            g1n = _face_normal(t1, m1, pn, fs1[i])
            for j in range(nf2):
                g2n = _face_normal(t2, m2, pn, fs2[j])
                if dot(g1n, g2n) < -FACE_TOL:
                    n1 = _load_face(poly, 2, t1, p1, m1, s1, hv, va1, pva, pvn, pv, pn, fs1[i])
                    n2 = _load_face(poly, 3, t2, p2, m2, s2, hv, va2, pva, pvn, pv, pn, fs2[j])
                    f1 = g1n
                    f2 = g2n
                    mode = 1
                    break
        if mode == 0 and dim1 < 3 and dim1 <= dim2:
            for i in range(nf2):
                if mode:
                    break
                g2n = _face_normal(t2, m2, pn, fs2[i])
                for e in range(nf1 if nf1 > 3 else 3):
                    if t1 == GEOM_CYLINDER:
                        ok = e == 0 and side1
                        a, b = _cyl_side(p1, m1, s1, x1)
                    else:
                        ok, a, b = _edge_at(t1, p1, m1, s1, hv, va1, pva, pvn, pv, x1, fs1, nf1,
                                            e)
                    if not ok:
                        break
                    u, _ = normalize(sub(b, a))
                    if abs(dot(u, g2n)) < EDGE_TOL:
                        n2 = _load_face(poly, 3, t2, p2, m2, s2, hv, va2, pva, pvn, pv, pn,
                                        fs2[i])
                        f2 = g2n
                        ea = a
                        eb = b
                        mode = 2
                        break
        # MuJoCo 4.0 clips no edge of a box corner on a cylinder cap at the witness point
        # (measured: a single contact in all 49 such poses of 2000)
        corner_on_cap = t1 == GEOM_CYLINDER and t2 == GEOM_BOX and dim1 == 3 and dim2 == 1
        if mode == 0 and dim2 < 3 and not corner_on_cap:
            for i in range(nf1):
                if mode:
                    break
                g1n = _face_normal(t1, m1, pn, fs1[i])
                for e in range(nf2 if nf2 > 3 else 3):
                    if t2 == GEOM_CYLINDER:
                        ok = e == 0 and side2
                        a, b = _cyl_side(p2, m2, s2, x2)
                    else:
                        ok, a, b = _edge_at(t2, p2, m2, s2, hv, va2, pva, pvn, pv, x2, fs2, nf2,
                                            e)
                    if not ok:
                        break
                    u, _ = normalize(sub(b, a))
                    if abs(dot(u, g1n)) < EDGE_TOL:
                        n1 = _load_face(poly, 2, t1, p1, m1, s1, hv, va1, pva, pvn, pv, pn,
                                        fs1[i])
                        f1 = g1n
                        ea = a
                        eb = b
                        mode = 3
                        break
        if mode == 0:
            return 0
    if mode == 1:
        if n1 == 0 or n2 == 0:
            return 0
        for q in range(n2):
            for c in range(3):
                poly[0, q, c] = poly[3, q, c]
        src, m = _clip_polygon(poly, 0, n2, 2, n1, f1)
        o = (poly[2, 0, 0], poly[2, 0, 1], poly[2, 0, 2])
        cnt = 0
        for q in range(m):
            v = (poly[src, q, 0], poly[src, q, 1], poly[src, q, 2])
            if dot(sub(v, o), f1) <= margin:
                for c in range(3):
                    poly[src, cnt, c] = poly[src, q, c]
                cnt += 1
        if cnt == 0:
            return 0
        keep = _quad(poly, src, cnt) if cnt > 4 else 0
        out = 0
        for q in range(cnt):
            if cnt > 4 and not (keep & 255 == q or (keep >> 8) & 255 == q
                                or (keep >> 16) & 255 == q or (keep >> 24) & 255 == q):
                continue
            v = (poly[src, q, 0], poly[src, q, 1], poly[src, q, 2])
            d = dot(sub(v, o), f1)
            put(buf, k + out, add_scl(v, f2, 0.5 * d), scl(f2, -1.0), d)
            out += 1
        return out
    if mode == 2 or mode == 3:
        # the edge clipped as MuJoCo does: its points within the margin in clipping order,
        # the two farthest apart when more than two
        if mode == 2:
            fn, ref, nref = f2, 3, n2
        else:
            fn, ref, nref = f1, 2, n1
        if nref == 0:
            return 0
        poly[0, 0, 0], poly[0, 0, 1], poly[0, 0, 2] = ea
        poly[0, 1, 0], poly[0, 1, 1], poly[0, 1, 2] = eb
        src, m = _clip_mj(poly, 0, 2, ref, nref, fn)
        o = (poly[ref, 0, 0], poly[ref, 0, 1], poly[ref, 0, 2])
        cnt = 0
        for q in range(m):
            v = (poly[src, q, 0], poly[src, q, 1], poly[src, q, 2])
            if dot(sub(v, o), fn) <= margin:
                for c in range(3):
                    poly[src, cnt, c] = poly[src, q, c]
                cnt += 1
        if cnt == 0:
            return 0
        i0 = 0
        i1 = 1 if cnt > 1 else 0
        if cnt > 2:
            far = 0.0
            for i in range(cnt):
                for j in range(i + 1, cnt):
                    dd = 0.0
                    for c in range(3):
                        dd += (poly[src, j, c] - poly[src, i, c]) ** 2
                    if dd > far:
                        far = dd
                        i0 = i
                        i1 = j
        out = 0
        for q in range(2 if cnt > 1 else 1):
            iq = i0 if q == 0 else i1
            v = (poly[src, iq, 0], poly[src, iq, 1], poly[src, iq, 2])
            d = dot(sub(v, o), fn)
            put(buf, k + out, add_scl(v, fn, -0.5 * d), scl(fn, -1.0) if mode == 2 else fn, d)
            out += 1
        return out
    if t1 != GEOM_CAPSULE:
        return 0
    # a capsule (geom 1): its segment on the face of geom 2 at the witness point x2, even
    # one that does not face the contact normal (MuJoCo 4.0): a mesh face through x2 (its
    # edge or vertex when the capsule's witness x1 lies on the side; where x1 lies on a
    # cap, the face x2 lies inside, or the one there whose normal is the contact normal:
    # MuJoCo 4.0 gave one contact in 27 of the 29 poses of 2,000 with x2 on an edge or
    # vertex and x1 on a cap), the cylinder's cap that x2 lies on
    x1 = add_scl(pos, nrm, -0.5 * dist)
    x2 = add_scl(pos, nrm, 0.5 * dist)
    axis = col(m1, 2)
    if t2 == GEOM_MESH:
        if abs(dot(sub(x1, p1), axis)) > s1[1] + WITNESS_TOL:
            fs2 = ws[4][:, 1]
            nf2 = _faces_at(t2, p2, m2, s2, hv, va2, nv2, pa2, np2, pva, pvn, pv, pn, hg, ga2,
                            x2, scl(nrm, -1.0), fs2, ws[3])
            if nf2 == 1:
                g2n = _face_normal(t2, m2, pn, fs2[0])
                if abs(dot(axis, g2n)) < EDGE_TOL:
                    n2 = _load_face(poly, 3, t2, p2, m2, s2, hv, va2, pva, pvn, pv, pn,
                                    fs2[0])
                    f2 = g2n
        else:
            n2, f2 = _witness_face(poly, 3, m2, p2, hv, va2, pa2, np2, pva, pvn, pv, pn, x2,
                                   axis)
    elif t2 == GEOM_CYLINDER:
        cap, _ = _cyl_at(p2, m2, s2, x2, scl(nrm, -1.0))
        if cap >= 0:
            f2 = _face_normal(t2, m2, pn, cap)
            if abs(dot(axis, f2)) < EDGE_TOL:
                n2 = _load_face(poly, 3, t2, p2, m2, s2, hv, va2, pva, pvn, pv, pn, cap)
    if n2 == 0:
        return 0
    # the segment moved across its axis to pass through the capsule's witness point x1
    # (MuJoCo 4.0), clipped by the face's prism where it lies half the margin farther out
    # (MuJoCo's capsule radius in its CCD, r + margin / 2); each end within the margin,
    # midway between the segment's end and the face
    sx = max(-s1[1], min(s1[1], dot(sub(x1, p1), axis)))
    off = sub(x1, add_scl(p1, axis, sx))
    out_, ln = normalize(off)
    grow = scl(out_, 0.5 * margin) if ln > MINVAL else zero
    a = add(add_scl(p1, axis, -s1[1]), add(off, grow))
    b = add(add_scl(p1, axis, s1[1]), add(off, grow))
    ok, a, b = _clip_segment(a, b, poly, 3, n2, f2)
    if not ok:
        return 0
    # the clipped ends come back half the margin along the face normal, not across the
    # axis (MuJoCo 4.0, measured: its points lie r + margin / 2 out along the witness
    # direction less margin / 2 along the normal); the end towards -z first (MuJoCo's
    # order agrees in about 60% of two-point contacts; its rule is not found)
    a = add_scl(a, f2, 0.5 * margin)
    b = add_scl(b, f2, 0.5 * margin)
    o = (poly[3, 0, 0], poly[3, 0, 1], poly[3, 0, 2])
    out = 0
    for sp in (a, b):
        d = dot(sub(sp, o), f2)  # height of the segment point above the face
        if d > margin or (out == 1 and sp == a):
            continue
        put(buf, k + out, add_scl(sp, f2, -0.5 * d), scl(f2, -1.0), d)
        out += 1
    return out


# ---------------------------------------------------------------------------------------------
# plane against ellipsoid or mesh


@jit_inline
def _quad_rows(buf, k, n):
    """Keep (in rows k..k+3) the 4 of n contacts in polygon order spanning the largest area."""
    best = -1.0
    bi = (0, 1, 2, 3)
    for i in range(n):
        for j in range(i + 1, n):
            for q in range(j + 1, n):
                for r in range(q + 1, n):
                    d1 = sub((buf[k + q, 0], buf[k + q, 1], buf[k + q, 2]),
                             (buf[k + i, 0], buf[k + i, 1], buf[k + i, 2]))
                    d2 = sub((buf[k + r, 0], buf[k + r, 1], buf[k + r, 2]),
                             (buf[k + j, 0], buf[k + j, 1], buf[k + j, 2]))
                    ar = norm(cross(d1, d2))
                    if ar > best:
                        best = ar
                        bi = (i, j, q, r)
    for c in range(4):
        src = k + bi[c]
        for col_ in range(10):
            buf[k + c, col_] = buf[src, col_]
    return 4


@jit_sig(I8(BUF, I8, F8, V3, M9, I8, V3, M9, V3, F2, I8, I8, I8, I8, I1, I1, I1, F2, I1, I8))
def plane_convex(buf, k, margin, p1, m1, t2, p2, m2, s2, hv, va, nv_, pa, np_, pva, pvn, pv,
                 pn, hg, ga):
    """Plane and ellipsoid or mesh: the support point below the plane, and a mesh face's.

    As MuJoCo 4.0 does: the deepest vertex is the first contact; for a mesh, the hull face
    at that vertex whose normal points down the most adds its other vertices, walked
    counter-clockwise from the deepest one, that are within the margin and below the geom
    centre (their offset from the centre points into the plane). More than 4 are reduced to
    the 4 spanning the largest area (MuJoCo: a heuristic search for them). The faces at the
    vertex come from the hull graph's polygon list where there is one (ga ≥ 0).
    """
    n = col(m1, 2)
    down = scl(n, -1.0)
    if t2 != GEOM_MESH:
        v = support(t2, p2, m2, s2, hv, va, nv_, hg, ga, down)
    else:
        ld = mat_t_vec(m2, down)
        iv = hull_index(hv, va, nv_, hg, ga, ld[0], ld[1], ld[2])
        v = add(mat_vec(m2, (hv[iv, 0], hv[iv, 1], hv[iv, 2])), p2)
    dist = dot(n, sub(v, p1))
    if dist > margin:
        return 0
    put(buf, k, add_scl(v, n, -0.5 * dist), n, dist)
    if t2 != GEOM_MESH or np_ == 0:
        return 1
    best = -2.0
    g = -1
    at = 0
    if ga >= 0:
        kk = ga + np.int64(hg[np.uint64(ga + 27 + nv_ + iv - va)])
        f = np.int64(hg[np.uint64(kk)])
        while f >= 0:
            gf = pa + f
            c = ld[0] * pn[gf, 0] + ld[1] * pn[gf, 1] + ld[2] * pn[gf, 2]
            if c > best:
                best = c
                g = gf
            kk += 1
            f = np.int64(hg[np.uint64(kk)])
        if g >= 0:
            for q in range(pvn[g]):
                if va + pv[pva[g] + q] == iv:
                    at = q
    else:
        for f in range(pa, pa + np_):
            pos_iv = -1
            for q in range(pvn[f]):
                if va + pv[pva[f] + q] == iv:
                    pos_iv = q
            c = ld[0] * pn[f, 0] + ld[1] * pn[f, 1] + ld[2] * pn[f, 2]
            if pos_iv >= 0 and c > best:
                best = c
                g = f
                at = pos_iv
    if g < 0:
        return 1
    cnt = 1
    nq = pvn[g]
    for q in range(1, nq):
        j = va + pv[pva[g] + (at + q) % nq]
        w = add(mat_vec(m2, (hv[j, 0], hv[j, 1], hv[j, 2])), p2)
        dj = dot(n, sub(w, p1))
        if dj <= margin and dot(n, sub(w, p2)) < 0.0 and k + cnt < buf.shape[0]:
            put(buf, k + cnt, add_scl(w, n, -0.5 * dj), n, dj)
            cnt += 1
    if cnt > 4:
        cnt = _quad_rows(buf, k, cnt)
    return cnt
