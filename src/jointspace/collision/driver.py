"""Collision driver: broadphase, filtering, narrowphase dispatch and the contact record.

`collision(m, d)` fills d.ncon and the contact_* arrays (MuJoCo's mj_collision,
engine_collision_driver.c). Pair table (geom 1 has the lower type; planes collide with all
other types but height fields, everything with everything else):

=========  ========  =========  ==========  =========  ========  ========
           sphere    capsule    ellipsoid   cylinder   box       mesh
=========  ========  =========  ==========  =========  ========  ========
plane      analytic  analytic   support     analytic   analytic  support
hfield     prisms    prisms     prisms      prisms     prisms    prisms
sphere     analytic  analytic   convex      analytic   analytic  convex
capsule              analytic   convex      convex     analytic  convex
ellipsoid                       convex      convex     convex    convex
cylinder                                    convex     convex    convex
box                                                    analytic  convex
mesh                                                             convex
=========  ========  =========  ==========  =========  ========  ========

"analytic": `primitive` and `box`; "convex": GJK/EPA (`convex`); "support": the support
point below the plane (`convex.plane_convex`); "prisms": the height field's grid
triangles under the geom, each a prism collided by GJK/EPA (`hfield`, up to 50 contacts).
Contacts per pair at most: plane-capsule 2, plane-cylinder 4, plane-box 4, plane-mesh 4,
capsule-capsule 2, capsule-box 2, box-box 8, convex pairs of boxes, meshes, cylinders and
capsules 4 (face clipping), height fields 50, others 1.

Broadphase: world axis-aligned boxes of the geoms (the intersection of the rotated local
box and the bounding sphere, grown by margin + gap) are swept along the world axis in
which their centres spread most (sweep and prune, O(n log n + pairs)); planes are paired
with every geom and tested against its bounding sphere. Candidate pairs are filtered as
MuJoCo does: contype/conaffinity (collide iff ct1 & ca2 or ct2 & ca1), no pairs within one
weld group (bodies joined without joints), no pairs of two bodies that have no dofs, no
pairs of a body and its parent's weld group unless that is the world, excluded body pairs
(<contact><exclude>), and the bounding-sphere test. Explicit pairs (<contact><pair>) skip
the filters and replace the automatic pair of the same geoms. Contacts come in MuJoCo's
order: by body pair, explicit pairs first, then by geom ids (lower geom type first).

Margins follow MuJoCo 3.3+: a pair's margin and gap are the sums of its geoms' (an explicit
pair has its own); a contact is recorded when dist <= margin + gap; includemargin = margin,
and a contact with dist >= includemargin is recorded with exclude = 1 (inactive), unless it
is adhesive: then it stays active with dim 1 (MuJoCo 4.0's adhesion at a distance).
Parameters: an explicit pair's own; otherwise the geom with the higher priority sets
condim, solref, solimp and friction; equal priorities take the larger condim, solref and
solimp mixed by solmix weights (solref elementwise minimum when either is a direct, i.e.
non-positive, reference), and the larger of each friction coefficient. Adhesion: an
explicit pair's own, else the higher priority geom's, else the sum of the two geoms'.
Surface velocities (when m.flg_surfacevel): contact_surfacevel is geom 2's minus geom 1's
at the contact point, in the contact frame (tangent1, tangent2, spin).

Capacity: d holds at most m.nconmax contacts (`Model.nconmax`, default max(100, 8 ngeom),
set it with `spec.nconmax` before compiling). Contacts beyond it are dropped and counted
in d.collision_warning[0]; non-finite geom poses give no contacts and are counted in
d.collision_warning[1]; `collision` reports both as a JointspaceWarning.

Where jointspace deliberately differs from MuJoCo 4.0 (tests/test_collision_parity.py and
tests/test_ccd_parity.py measure each; tools/ccd_parity.py prints the table):

- Convex pairs (collision.ccd): MuJoCo's GJK and EPA, stopping where MuJoCo's do at the
  model's ccd_iterations and ccd_tolerance, on the shapes themselves with the margin as
  the distance cutoff (MuJoCo 4.0.0's contacts are its mj_geomDistance results: measured;
  its published source inflates the shapes by the margin instead), with MuJoCo 4.0's
  arithmetic where its binary differs from its source (collision.ccd's docstring): equal
  bit for bit through 10 iterations; over longer runs the last digits part, and where a
  stopping test then falls the other way the two stop on different iterations
  (docs/conventions.md has the measured table).
- Flat features (face clipping, as MuJoCo 4.0 chooses them). Plane-mesh: the deepest
  vertex, then the other vertices of its most downward hull face within the margin and
  below the mesh centre (equal to MuJoCo in every measured pose). Pairs of boxes, meshes
  and cylinders: the features at the two witness points (a box's or mesh's faces through
  each: a face, an edge or a vertex; a cylinder's cap there, a 16-gon, and on its curved
  side its side line, tried first as a vertex's edges are), two faces facing each other
  within 5° first, then an edge of geom 1 lying on a face of geom 2 within 5°, then the
  reverse (but no box corner's edge on a cylinder cap), whatever the EPA normal;
  capsule-mesh and capsule-cylinder: the capsule's segment, moved to pass through its
  witness point, on a mesh face through the other witness point or the cylinder cap it
  lies on (clipped half the margin farther out, as MuJoCo's CCD inflates the capsule,
  its ends then brought back half the margin along the face normal; the end towards the
  capsule's −z first, where MuJoCo's order follows a rule not found in about 40% of
  two-point contacts).
  An edge is clipped by a face as MuJoCo's polygonClip does, so an edge cut down to one
  point gives that point twice, as MuJoCo reports it (physically one contact; matched
  anyway). Equal contact counts in 99.35% to 100% of 2,000 seeded poses per pair type
  (tools/ccd_parity.py; docs/conventions.md has the table).
- Among several mesh edges at a vertex the first in hull polygon order is clipped (the
  polygons, their order, loops and normals are MuJoCo 4.0's: `collision.hull`); when
  clipping leaves more than 4 points, the 4 spanning the largest area are kept (MuJoCo: a
  heuristic search for them).
- Height-field pairs: see `collision.hfield` and docs/conventions.md (boxes and meshes
  penetrating a prism: MuJoCo's EPA stops short of the minimum depth; ours reaches it).
- Not supported: SDF geoms, flexes, and MuJoCo's collision option flags
  (filterparent, midphase, override, nativeccd, multiccd).
"""

import math
import warnings

import numpy as np
from numba import njit

from jointspace._numba import entry
from jointspace._numba.scratch import keep, shaped
from jointspace.collision import box as B
from jointspace.collision import ccd as K
from jointspace.collision import convex as C
from jointspace.collision import hfield as H
from jointspace.collision import primitive as P
from jointspace.collision._vec import dot, m9, normalize, sub, v3
from jointspace.errors import JointspaceWarning
from jointspace.kinematics import kinematics_stage
from jointspace.types import (
    DSBL_FILTERPARENT,
    ENBL_OVERRIDE,
    GEOM_BOX,
    GEOM_CAPSULE,
    GEOM_CYLINDER,
    GEOM_ELLIPSOID,
    GEOM_HFIELD,
    GEOM_MESH,
    GEOM_PLANE,
    GEOM_SPHERE,
    MINMU,
    MINVAL,
)

MAXCONPAIR = H.MAXCONPAIR_HFIELD  # contact buffer rows per geom pair (height fields: 50)
# the fixed part of Data.scratch_collision_f (types.py): buf, box polygons, contact
# parameters, the convex placeholder
if 10 * MAXCONPAIR + 2 * B._MAXVERT * 3 + 12 + K.PLACEHOLDER_F > 660 or K.PLACEHOLDER_L > 15:
    raise ImportError("collision scratch does not fit Data.scratch_collision_f; grow it in "
                      "jointspace/types.py")
WARN_CONTACTFULL, WARN_BADGEOM = 0, 1


# ---------------------------------------------------------------------------------------------
# narrowphase dispatch


@njit(cache=True, error_model="numpy", inline="always")
def _narrow(m, d, g1, g2, margin, buf, boxpoly):
    """Contacts of an analytic pair g1, g2 (type(g1) <= type(g2)) into buf; returns the count."""
    t1 = m.geom_type[g1]
    t2 = m.geom_type[g2]
    p1 = v3(d.geom_xpos[g1])
    p2 = v3(d.geom_xpos[g2])
    r1 = m9(d.geom_xmat[g1])
    r2 = m9(d.geom_xmat[g2])
    s1 = v3(m.geom_size[g1])
    s2 = v3(m.geom_size[g2])
    if t1 == GEOM_PLANE:
        if t2 == GEOM_SPHERE:
            return P.plane_sphere(buf, 0, margin, p1, r1, p2, s2[0])
        if t2 == GEOM_CAPSULE:
            return P.plane_capsule(buf, 0, margin, p1, r1, p2, r2, s2)
        if t2 == GEOM_CYLINDER:
            return P.plane_cylinder(buf, 0, margin, p1, r1, p2, r2, s2)
        if t2 == GEOM_BOX:
            return P.plane_box(buf, 0, margin, p1, r1, p2, r2, s2)
        if t2 == GEOM_ELLIPSOID or t2 == GEOM_MESH:
            va, nv, pa, np_ = _mesh_ranges(m, g2)
            return C.plane_convex(buf, 0, margin, p1, r1, t2, p2, r2, s2, m.hull_vert, va, nv,
                                  pa, np_, m.hullpoly_vertadr, m.hullpoly_vertnum,
                                  m.hullpoly_vert, m.hullpoly_normal, m.hull_graph,
                                  _mesh_graph(m, g2))
        return 0
    if t1 == GEOM_SPHERE:
        if t2 == GEOM_SPHERE:
            return P.sphere_sphere(buf, 0, margin, p1, r1, s1[0], p2, r2, s2[0])
        if t2 == GEOM_CAPSULE:
            return P.sphere_capsule(buf, 0, margin, p1, r1, s1, p2, r2, s2)
        if t2 == GEOM_CYLINDER:
            return P.sphere_cylinder(buf, 0, margin, p1, r1, s1, p2, r2, s2)
        if t2 == GEOM_BOX:
            return B.sphere_box(buf, 0, margin, p1, s1[0], p2, r2, s2)
    elif t1 == GEOM_CAPSULE:
        if t2 == GEOM_CAPSULE:
            return P.capsule_capsule(buf, 0, margin, p1, r1, s1, p2, r2, s2)
        if t2 == GEOM_BOX:
            return B.capsule_box(buf, 0, margin, p1, r1, s1, p2, r2, s2)
    elif t1 == GEOM_BOX and t2 == GEOM_BOX:
        return B.box_box(buf, 0, margin, p1, r1, s1, p2, r2, s2, boxpoly)
    return 0


@njit(cache=True, error_model="numpy", inline="always")
def _narrow_convex(m, d, g1, g2, margin, buf, ws):
    """Contacts of a general convex pair (GJK/EPA, flat features) into buf; returns the count."""
    t1 = m.geom_type[g1]
    t2 = m.geom_type[g2]
    p1 = v3(d.geom_xpos[g1])
    p2 = v3(d.geom_xpos[g2])
    r1 = m9(d.geom_xmat[g1])
    r2 = m9(d.geom_xmat[g2])
    s1 = v3(m.geom_size[g1])
    s2 = v3(m.geom_size[g2])
    va1, nv1, pa1, np1 = _mesh_ranges(m, g1)
    va2, nv2, pa2, np2 = _mesh_ranges(m, g2)
    found, pos, nrm, dist = K.contact(
        ws, margin, K.obj(t1, p1, r1, s1, va1, nv1, _mesh_graph(m, g1)),
        K.obj(t2, p2, r2, s2, va2, nv2, _mesh_graph(m, g2)), m.hull_vert, m.hull_graph,
        m.opt_ccd_iterations[0], m.opt_ccd_tolerance[0])
    if not found:
        return 0
    P.put(buf, 0, pos, nrm, dist)
    if t1 == GEOM_SPHERE or t1 == GEOM_ELLIPSOID or t2 == GEOM_ELLIPSOID:
        return 1
    n = C.flat_contacts(buf, 0, ws, margin, nrm, pos, dist, t1, p1, r1, s1, t2, p2, r2, s2,
                        m.hull_vert, va1, va2, pa1, np1, pa2, np2, m.hullpoly_vertadr,
                        m.hullpoly_vertnum, m.hullpoly_vert, m.hullpoly_normal, nv1, nv2,
                        m.hull_graph, _mesh_graph(m, g1), _mesh_graph(m, g2))
    if n > 0:
        return n
    P.put(buf, 0, pos, nrm, dist)
    return 1


@njit(cache=True, error_model="numpy", inline="always")
def _narrow_hfield(m, d, g1, g2, margin, buf, ws):
    """Contacts of a height field g1 and a convex geom g2 (collision.hfield) into buf."""
    t2 = m.geom_type[g2]
    if t2 == GEOM_PLANE or t2 == GEOM_HFIELD:
        return 0
    hid = m.geom_dataid[g1]
    va2, nv2, _, _ = _mesh_ranges(m, g2)
    return H.hfield_convex(buf, ws, margin, v3(d.geom_xpos[g1]), m9(d.geom_xmat[g1]),
                           m.hfield_size[hid], m.hfield_nrow[hid], m.hfield_ncol[hid],
                           m.hfield_data, m.hfield_adr[hid], t2, v3(d.geom_xpos[g2]),
                           m9(d.geom_xmat[g2]), v3(m.geom_size[g2]), m.geom_rbound[g2],
                           m.hull_vert, va2, nv2, m.hull_graph, _mesh_graph(m, g2),
                           m.opt_ccd_iterations[0], m.opt_ccd_tolerance[0])


@njit(cache=True, inline="always")
def _needs_workspace(t1, t2):
    """True for the pairs handled by the general convex routines (type(t1) <= type(t2))."""
    if t1 == GEOM_PLANE:
        return False
    if t1 == GEOM_SPHERE:
        return t2 == GEOM_ELLIPSOID or t2 == GEOM_MESH
    if t1 == GEOM_CAPSULE:
        return t2 != GEOM_CAPSULE and t2 != GEOM_BOX
    return not (t1 == GEOM_BOX and t2 == GEOM_BOX)


@njit(cache=True)
def _mesh_ranges(m, g):
    """Hull vertex and polygon ranges of a mesh geom ((0, 0, 0, 0) for other types)."""
    mid = m.geom_dataid[g]
    if m.geom_type[g] != GEOM_MESH or mid < 0:
        return 0, 0, 0, 0
    return (m.mesh_hullvertadr[mid], m.mesh_hullvertnum[mid], m.mesh_hullpolyadr[mid],
            m.mesh_hullpolynum[mid])


@njit(cache=True)
def _mesh_graph(m, g):
    """Address of a mesh geom's hull graph in m.hull_graph (−1: none, or not a mesh)."""
    mid = m.geom_dataid[g]
    if m.geom_type[g] != GEOM_MESH or mid < 0:
        return -1
    return m.mesh_hullgraphadr[mid]


# ---------------------------------------------------------------------------------------------
# contact parameters


@njit(cache=True, inline="always")
def _mix(m, g1, g2, out_ref, out_imp, out_fric):
    """Contact parameters of an automatic pair (mj_contactParam); returns condim."""
    pr1 = m.geom_priority[g1]
    pr2 = m.geom_priority[g2]
    if pr1 != pr2:
        g = g1 if pr1 > pr2 else g2
        for i in range(2):
            out_ref[i] = m.geom_solref[g, i]
        for i in range(5):
            out_imp[i] = m.geom_solimp[g, i]
        s0 = m.geom_friction[g, 0]
        s1 = m.geom_friction[g, 1]
        s2 = m.geom_friction[g, 2]
        condim = m.geom_condim[g]
    else:
        condim = max(m.geom_condim[g1], m.geom_condim[g2])
        w1 = m.geom_solmix[g1]
        w2 = m.geom_solmix[g2]
        if w1 >= MINVAL and w2 >= MINVAL:
            mix = w1 / (w1 + w2)
        elif w1 < MINVAL and w2 < MINVAL:
            mix = 0.5
        elif w1 < MINVAL:
            mix = 0.0
        else:
            mix = 1.0
        a = m.geom_solref[g1]
        b = m.geom_solref[g2]
        for i in range(2):
            if a[0] > 0 and b[0] > 0:
                out_ref[i] = mix * a[i] + (1 - mix) * b[i]
            else:
                out_ref[i] = min(a[i], b[i])
        for i in range(5):
            out_imp[i] = mix * m.geom_solimp[g1, i] + (1 - mix) * m.geom_solimp[g2, i]
        s0 = max(m.geom_friction[g1, 0], m.geom_friction[g2, 0])
        s1 = max(m.geom_friction[g1, 1], m.geom_friction[g2, 1])
        s2 = max(m.geom_friction[g1, 2], m.geom_friction[g2, 2])
    out_fric[0] = s0
    out_fric[1] = s0
    out_fric[2] = s1
    out_fric[3] = s2
    out_fric[4] = s2
    return condim


@njit(cache=True, inline="always")
def _adhesion(m, g1, g2):
    """Adhesion of an automatic pair's contacts: the higher priority geom's, else the sum."""
    pr1 = m.geom_priority[g1]
    pr2 = m.geom_priority[g2]
    if pr1 > pr2:
        return m.geom_adhesion[g1]
    if pr1 < pr2:
        return m.geom_adhesion[g2]
    return m.geom_adhesion[g1] + m.geom_adhesion[g2]


@njit(cache=True)
def _surface_velocity(m, d, c):
    """contact_surfacevel[c]: surface velocity of geom 2 minus geom 1 in the contact frame.

    A geom's surface moves at R (v + ω × (p − x_g)) at the contact point p (R, x_g its
    world pose; v, ω its geom_surfacevel); the relative velocity is rotated into the
    contact frame and its tangent1, tangent2 and spin (normal angular) parts kept.
    """
    p = d.contact_pos[c]
    lin0 = 0.0
    lin1 = 0.0
    lin2 = 0.0
    ang0 = 0.0
    ang1 = 0.0
    ang2 = 0.0
    for side in range(2):
        g = d.contact_geom[c, side]
        sv = m.geom_surfacevel[g]
        if (sv[0] == 0.0 and sv[1] == 0.0 and sv[2] == 0.0 and sv[3] == 0.0 and sv[4] == 0.0
                and sv[5] == 0.0):
            continue
        R = d.geom_xmat[g]
        x = d.geom_xpos[g]
        v0 = R[0] * sv[0] + R[1] * sv[1] + R[2] * sv[2]
        v1 = R[3] * sv[0] + R[4] * sv[1] + R[5] * sv[2]
        v2 = R[6] * sv[0] + R[7] * sv[1] + R[8] * sv[2]
        w0 = R[0] * sv[3] + R[1] * sv[4] + R[2] * sv[5]
        w1 = R[3] * sv[3] + R[4] * sv[4] + R[5] * sv[5]
        w2 = R[6] * sv[3] + R[7] * sv[4] + R[8] * sv[5]
        r0 = p[0] - x[0]
        r1 = p[1] - x[1]
        r2 = p[2] - x[2]
        v0 += w1 * r2 - w2 * r1
        v1 += w2 * r0 - w0 * r2
        v2 += w0 * r1 - w1 * r0
        sgn = 1.0 if side == 1 else -1.0
        lin0 += sgn * v0
        lin1 += sgn * v1
        lin2 += sgn * v2
        ang0 += sgn * w0
        ang1 += sgn * w1
        ang2 += sgn * w2
    f = d.contact_frame[c]
    out = d.contact_surfacevel[c]
    out[0] = f[3] * lin0 + f[4] * lin1 + f[5] * lin2
    out[1] = f[6] * lin0 + f[7] * lin1 + f[8] * lin2
    out[2] = f[0] * ang0 + f[1] * ang1 + f[2] * ang2


# ---------------------------------------------------------------------------------------------
# broadphase


@njit(cache=True, inline="always")
def _sphere_filter(g1, g2, bound, gtype, rbound, xpos, xmat):
    """MuJoCo's bounding-sphere test (planes: the other geom's sphere against the plane)."""
    rb1 = rbound[g1]
    rb2 = rbound[g2]
    p1 = v3(xpos[g1])
    p2 = v3(xpos[g2])
    if rb1 > 0 and rb2 > 0:
        dd = sub(p1, p2)
        lim = rb1 + rb2 + bound
        return dot(dd, dd) > lim * lim
    if gtype[g1] == GEOM_PLANE and rb2 > 0:
        nrm = (xmat[g1, 2], xmat[g1, 5], xmat[g1, 8])
        if dot(sub(p2, p1), nrm) > bound + rb2:
            return True
    if gtype[g2] == GEOM_PLANE and rb1 > 0:
        nrm = (xmat[g2, 2], xmat[g2, 5], xmat[g2, 8])
        if dot(sub(p1, p2), nrm) > bound + rb1:
            return True
    return False


@njit(cache=True)
def _order(gtype, g1, g2):
    """(lower-type geom, other); geoms of equal type keep their order."""
    if gtype[g1] > gtype[g2]:
        return g2, g1
    return g1, g2


@njit(cache=True, inline="always")
def _sort_pairs(bucket, sub, n, nbucket, start, fill, order):
    """Order of n items by (bucket, sub) into order[:n] (start, fill: scratch integers).

    A counting sort on buckets, then each bucket by sub. Buckets are the lower body ids of
    the pairs: MuJoCo's contact order in O(n + nbody) plus small per-body sorts.
    """
    for b in range(nbucket + 1):
        start[b] = 0
    for i in range(n):
        start[bucket[i] + 1] += 1
    for b in range(nbucket):
        start[b + 1] += start[b]
        fill[b] = start[b]
    for i in range(n):
        order[fill[bucket[i]]] = i
        fill[bucket[i]] += 1
    for b in range(nbucket):
        lo = start[b]
        hi = start[b + 1]
        if hi - lo <= 32:  # insertion sort
            for i in range(lo + 1, hi):
                v = order[i]
                j = i - 1
                while j >= lo and sub[order[j]] > sub[v]:
                    order[j + 1] = order[j]
                    j -= 1
                order[j + 1] = v
        else:
            keys = np.empty(hi - lo, dtype=np.int64)
            for i in range(lo, hi):
                keys[i - lo] = sub[order[i]]
            srt = np.argsort(keys)
            seg = order[lo:hi].copy()
            for i in range(hi - lo):
                order[lo + i] = seg[srt[i]]


@njit(cache=True, inline="always")
def _argsort_small(keys, n, out):
    """out[:n] = the order of keys[:n], by insertion for n <= 32, else argsort."""
    if n > 32:
        srt = np.argsort(keys[:n])
        for i in range(n):
            out[i] = srt[i]
        return
    for i in range(n):
        v = i
        j = i - 1
        while j >= 0 and keys[out[j]] > keys[v]:
            out[j + 1] = out[j]
            j -= 1
        out[j + 1] = v


@njit(cache=True)
def _grow(pg):
    """The pair table with twice the rows (the first rows copied)."""
    n = pg.shape[0]
    out = np.empty((2 * n, pg.shape[1]), dtype=np.int64)
    for i in range(n):
        for c in range(pg.shape[1]):
            out[i, c] = pg[i, c]
    return out


@njit(cache=True, inline="always")
def _world_aabb(m, d, box):
    """World AABBs (min, max) of the non-plane geoms, grown by margin + gap.

    Returns the axis along which their centres spread most.
    """
    ngeom = m.ngeom
    gtype = m.geom_type
    gaabb = m.geom_aabb
    rbound = m.geom_rbound
    gmargin = m.geom_margin
    ggap = m.geom_gap
    gxpos = d.geom_xpos
    gxmat = d.geom_xmat
    # the override flag grows every box by half of o_margin (no gap), as MuJoCo's makeAAMM;
    # an o_margin of 0 leaves the geoms' own margin + gap (its test is the value's truth)
    omargin = 0.0
    if m.opt_enableflags[0] & ENBL_OVERRIDE:
        omargin = 0.5 * m.opt_o_margin[0]
    # per axis: sum and sum of squares of the box centres (scalars: no scratch array)
    m0 = m1 = m2 = 0.0
    s0 = s1 = s2 = 0.0
    cnt = 0
    for g in range(ngeom):
        if gtype[g] == GEOM_PLANE:
            continue
        # indexed in two dimensions: row views made in a loop cost atomic reference counts
        rb = rbound[g]
        grow = omargin if omargin != 0.0 else gmargin[g] + ggap[g]
        for i in range(3):
            c = (gxpos[g, i] + gxmat[g, 3 * i] * gaabb[g, 0] + gxmat[g, 3 * i + 1] * gaabb[g, 1]
                 + gxmat[g, 3 * i + 2] * gaabb[g, 2])
            h = (abs(gxmat[g, 3 * i]) * gaabb[g, 3] + abs(gxmat[g, 3 * i + 1]) * gaabb[g, 4]
                 + abs(gxmat[g, 3 * i + 2]) * gaabb[g, 5])
            box[g, i] = max(c - h, gxpos[g, i] - rb) - grow
            box[g, 3 + i] = min(c + h, gxpos[g, i] + rb) + grow
        mid = 0.5 * (box[g, 0] + box[g, 3])
        m0 += mid
        s0 += mid * mid
        mid = 0.5 * (box[g, 1] + box[g, 4])
        m1 += mid
        s1 += mid * mid
        mid = 0.5 * (box[g, 2] + box[g, 5])
        m2 += mid
        s2 += mid * mid
        cnt += 1
    # the axis of largest spread (the first of equals)
    n = max(cnt, 1)
    v0 = s0 - m0 * m0 / n
    v1 = s1 - m1 * m1 / n
    v2 = s2 - m2 * m2 / n
    axis = 0
    best = v0 if v0 > -1.0 else -1.0
    if v1 > best:
        best = v1
        axis = 1
    if v2 > best:
        axis = 2
    return axis


@njit(cache=True, inline="always")
def _broadphase(m, d, box, fs, iscr, bodies):
    """Candidate pairs (g1, g2, explicit pair id or -1) in MuJoCo's order.

    Only pairs with a geom on a body flagged in `bodies` when it is not empty
    (`collision_of`); the count of overlapping boxes is the whole model's either way.

    box: (ngeom, 6) floats, fs: 7 ngeom floats and iscr: 2 max(64, 4 ngeom) + 4 ngeom
    integers of scratch; the pair table lives in d.scratch_pairs when it fits.
    Returns (pairs, count, number of automatic pairs whose boxes overlapped, before the
    filters; a diagnostic). The filters are MuJoCo's: contype/conaffinity, one weld group,
    two dof-less bodies, a body and its parent's weld group (unless that is the world),
    excluded body pairs, explicit pairs (which replace the automatic pair of their geoms),
    and the bounding spheres. (Written out in the loop: Numba calls with many array
    arguments cost more than the tests.)
    """
    ngeom = m.ngeom
    gtype = m.geom_type
    bodyid = m.geom_bodyid
    contype = m.geom_contype
    conaff = m.geom_conaffinity
    weldid = m.body_weldid
    dofnum = m.body_dofnum
    parent = m.body_parentid
    excl = m.exclude_signature
    pg1 = m.pair_geom1
    pg2 = m.pair_geom2
    gmargin = m.geom_margin
    ggap = m.geom_gap
    rbound = m.geom_rbound
    gxpos = d.geom_xpos
    gxmat = d.geom_xmat
    override = (m.opt_enableflags[0] & ENBL_OVERRIDE) != 0
    omargin = m.opt_o_margin[0]
    filterparent = (m.opt_disableflags[0] & DSBL_FILTERPARENT) == 0
    # 1. candidates: box overlaps along the sweep axis, every plane with every other geom
    ncmax = max(64, 4 * ngeom)
    cand = shaped(iscr[:2 * ncmax], (ncmax, 2))
    ncand = 0
    order = iscr[2 * ncmax:2 * ncmax + ngeom]
    planes = iscr[2 * ncmax + ngeom:2 * ncmax + 2 * ngeom]
    sid = iscr[2 * ncmax + 2 * ngeom:2 * ncmax + 3 * ngeom]
    srt = iscr[2 * ncmax + 3 * ngeom:2 * ncmax + 4 * ngeom]
    nsw = 0
    npl = 0
    for g in range(ngeom):
        if contype[g] == 0 and conaff[g] == 0:
            continue
        if gtype[g] == GEOM_PLANE:
            planes[npl] = g
            npl += 1
        else:
            order[nsw] = g
            nsw += 1
    axis = _world_aabb(m, d, box)
    lo = fs[:ngeom]
    for i in range(nsw):
        lo[i] = box[order[i], axis]
    _argsort_small(lo, nsw, srt)
    # boxes in sweep order, the sweep axis first, for a sequential inner loop
    sb = shaped(fs[ngeom:7 * ngeom], (ngeom, 6))
    ax1 = (axis + 1) % 3
    ax2 = (axis + 2) % 3
    for ii in range(nsw):
        g = order[srt[ii]]
        sid[ii] = g
        sb[ii, 0] = box[g, axis]
        sb[ii, 1] = box[g, 3 + axis]
        sb[ii, 2] = box[g, ax1]
        sb[ii, 3] = box[g, 3 + ax1]
        sb[ii, 4] = box[g, ax2]
        sb[ii, 5] = box[g, 3 + ax2]
    for ii in range(nsw):
        hi = sb[ii, 1]
        lo1 = sb[ii, 2]
        hi1 = sb[ii, 3]
        lo2 = sb[ii, 4]
        hi2 = sb[ii, 5]
        for jj in range(ii + 1, nsw):
            if sb[jj, 0] > hi:
                break
            if sb[jj, 2] > hi1 or lo1 > sb[jj, 3] or sb[jj, 4] > hi2 or lo2 > sb[jj, 5]:
                continue
            if ncand == cand.shape[0]:
                cand = _grow(cand)
            ga = sid[ii]
            gb = sid[jj]
            cand[ncand, 0] = min(ga, gb)
            cand[ncand, 1] = max(ga, gb)
            ncand += 1
    for ip in range(npl):
        for jj in range(nsw):
            if ncand == cand.shape[0]:
                cand = _grow(cand)
            cand[ncand, 0] = min(planes[ip], order[jj])
            cand[ncand, 1] = max(planes[ip], order[jj])
            ncand += 1
    # 2. filters, and sort keys in MuJoCo's order: body pair, explicit pairs, geom ids
    nmax = ncand + m.npair
    nbody = m.nbody
    need = 9 * nmax + 2 * nbody + 1
    ps = d.scratch_pairs[:need] if need <= d.scratch_pairs.shape[0] else np.empty(
        need, dtype=np.int64)
    pg = shaped(ps[:3 * nmax], (nmax, 3))
    bucket = ps[3 * nmax:4 * nmax]  # lower body id
    sub = ps[4 * nmax:5 * nmax]  # higher body, explicit first, geom ids
    n = 0
    masked = bodies.shape[0] > 0
    for i in range(m.npair):
        g1 = pg1[i]
        g2 = pg2[i]
        if masked and bodies[bodyid[g1]] == 0 and bodies[bodyid[g2]] == 0:
            continue
        if bodyid[g1] > bodyid[g2]:  # geom 1 on the lower body
            g1, g2 = g2, g1
        pmargin = omargin if override else m.pair_margin[i]
        if _sphere_filter(g1, g2, pmargin + m.pair_gap[i], gtype, rbound, gxpos, gxmat):
            continue
        bucket[n] = min(bodyid[g1], bodyid[g2])
        sub[n] = (np.int64(max(bodyid[g1], bodyid[g2])) << 40) | np.int64(i)
        pg[n, 0] = g1
        pg[n, 1] = g2
        pg[n, 2] = i
        n += 1
    for c in range(ncand):
        g1 = cand[c, 0]
        g2 = cand[c, 1]
        b1 = bodyid[g1]
        b2 = bodyid[g2]
        if masked and bodies[b1] == 0 and bodies[b2] == 0:
            continue
        if not ((contype[g1] & conaff[g2]) or (contype[g2] & conaff[g1])):
            continue
        w1 = weldid[b1]
        w2 = weldid[b2]
        if w1 == w2 or (dofnum[w1] == 0 and dofnum[w2] == 0):
            continue
        if (filterparent and w1 != 0 and w2 != 0
                and (w1 == weldid[parent[w2]] or w2 == weldid[parent[w1]])):
            continue
        sig = np.int64((min(b1, b2) << 16) + max(b1, b2))
        skip = False
        for i in range(excl.shape[0]):
            if excl[i] == sig:
                skip = True
        for i in range(pg1.shape[0]):
            if (pg1[i] == g1 and pg2[i] == g2) or (pg1[i] == g2 and pg2[i] == g1):
                skip = True
        if skip:
            continue
        # bounding spheres grown by margin + gap (planes: the other sphere vs the plane)
        bound = ((omargin if override else gmargin[g1] + gmargin[g2])
                 + ggap[g1] + ggap[g2])
        rb1 = rbound[g1]
        rb2 = rbound[g2]
        dx = gxpos[g2, 0] - gxpos[g1, 0]
        dy = gxpos[g2, 1] - gxpos[g1, 1]
        dz = gxpos[g2, 2] - gxpos[g1, 2]
        if rb1 > 0 and rb2 > 0:
            lim = rb1 + rb2 + bound
            if dx * dx + dy * dy + dz * dz > lim * lim:
                continue
        elif gtype[g1] == GEOM_PLANE and rb2 > 0:
            if dx * gxmat[g1, 2] + dy * gxmat[g1, 5] + dz * gxmat[g1, 8] > bound + rb2:
                continue
        elif gtype[g2] == GEOM_PLANE and rb1 > 0:
            if -(dx * gxmat[g2, 2] + dy * gxmat[g2, 5] + dz * gxmat[g2, 8]) > bound + rb1:
                continue
        if gtype[g1] > gtype[g2]:
            ga, gb = g2, g1
        else:
            ga, gb = g1, g2
        bucket[n] = min(b1, b2)
        sub[n] = (np.int64(max(b1, b2)) << 40) | (np.int64(1) << 39) | np.int64(ga * ngeom + gb)
        pg[n, 0] = g1
        pg[n, 1] = g2
        pg[n, 2] = -1
        n += 1
    srt = ps[5 * nmax:6 * nmax]
    _sort_pairs(bucket, sub, n, nbody, ps[9 * nmax:9 * nmax + nbody + 1],
                ps[9 * nmax + nbody + 1:9 * nmax + 2 * nbody + 1], srt)
    out = shaped(ps[6 * nmax:9 * nmax], (nmax, 3))
    for i in range(n):
        for c in range(3):
            out[i, c] = pg[srt[i], c]
    return out, n, ncand


# ---------------------------------------------------------------------------------------------
# the stage


@njit(cache=True, inline="always")
def _contact_frame(frame, nrm, tan):
    """Contact frame rows: normal, tangent (the hint if given, else MuJoCo's default), n × t."""
    n, _ = normalize(nrm)
    t = tan
    if dot(t, t) < 0.25:
        t = (0.0, 1.0, 0.0) if -0.5 < n[1] < 0.5 else (0.0, 0.0, 1.0)
    t, _ = normalize((t[0] - n[0] * dot(n, t), t[1] - n[1] * dot(n, t), t[2] - n[2] * dot(n, t)))
    b = (n[1] * t[2] - n[2] * t[1], n[2] * t[0] - n[0] * t[2], n[0] * t[1] - n[1] * t[0])
    frame[0], frame[1], frame[2] = n
    frame[3], frame[4], frame[5] = t
    frame[6], frame[7], frame[8] = b


@njit(cache=True, nogil=True)
def collision_stage(m, d):
    """All contacts of the current poses into d.ncon, d.contact_* (mj_collision).

    The compiled stage; geom poses must be current (forward kinematics). Returns
    4 · (automatic pairs whose boxes overlapped) + warning bits (1 << WARN_*).
    """
    return collision_of(m, d, m.body_parentid[:0])


@njit(cache=True, nogil=True)
def collision_of(m, d, bodies):
    """`collision_stage` for the pairs with a geom on a body flagged in `bodies`.

    bodies: (nbody,) nonzero for the bodies whose pairs are collided, or empty for every
    pair (`collision_stage`). The position columns of `inverse_derivatives` collide only the
    pairs their perturbation moves. The boxes' sweep and its count are the whole model's.
    """
    d.ncon[0] = 0
    gxpos = d.geom_xpos
    gxmat = d.geom_xmat
    for g in range(m.ngeom):
        bad = False
        for i in range(3):
            if not math.isfinite(gxpos[g, i]):
                bad = True
        for i in range(9):
            if not math.isfinite(gxmat[g, i]):
                bad = True
        if bad:
            d.collision_warning[WARN_BADGEOM, 0] += 1
            d.collision_warning[WARN_BADGEOM, 1] = g
            return 1 << WARN_BADGEOM
    # scratch in Data's two blocks (views of them cost no reference counting): box,
    # broadphase floats, buf, boxpoly, ref/imp/fric, and the placeholder convex workspace
    # (allocated for real only when a convex pair comes up)
    ngeom = m.ngeom
    nbp = 2 * B._MAXVERT * 3
    fs = d.scratch_collision_f
    iscr = d.scratch_collision_l
    box = shaped(fs[:6 * ngeom], (ngeom, 6))
    pg, npair, noverlap = _broadphase(m, d, box, fs[6 * ngeom:13 * ngeom], iscr, bodies)
    o = 13 * ngeom
    buf = shaped(fs[o:o + 10 * MAXCONPAIR], (MAXCONPAIR, 10))
    o += 10 * MAXCONPAIR
    boxpoly = shaped(fs[o:o + nbp], (2, B._MAXVERT, 3))
    o += nbp
    ref = fs[o:o + 2]
    imp = fs[o + 2:o + 7]
    fric = fs[o + 7:o + 12]
    ws = K.workspace_placeholder(fs[o + 12:o + 12 + K.PLACEHOLDER_F],
                                 iscr[iscr.shape[0] - K.PLACEHOLDER_L:])
    own = ws  # the workspace's owner once allocated; ws then holds its borrowed views
    gtype = m.geom_type
    gmargin = m.geom_margin
    ggap = m.geom_gap
    c_dist = d.contact_dist
    c_pos = d.contact_pos
    c_frame = d.contact_frame
    c_geom = d.contact_geom
    c_dim = d.contact_dim
    c_fric = d.contact_friction
    c_ref = d.contact_solref
    c_reff = d.contact_solreffriction
    c_imp = d.contact_solimp
    c_imargin = d.contact_includemargin
    c_gap = d.contact_gap
    c_excl = d.contact_exclude
    c_adh = d.contact_adhesion
    c_sv = d.contact_surfacevel
    surfacevel = m.flg_surfacevel[0] != 0
    nconmax = m.nconmax
    ncon = 0
    dropped = 0
    # the override flag: o_margin for every pair's margin (not its gap), and o_solref,
    # o_solimp, o_friction for every contact's parameters (MuJoCo's mj_assign*)
    override = (m.opt_enableflags[0] & ENBL_OVERRIDE) != 0
    for i in range(npair):
        ip = pg[i, 2]
        g1, g2 = _order(gtype, pg[i, 0], pg[i, 1])
        if ip >= 0:
            margin = m.pair_margin[ip]
            gap = m.pair_gap[ip]
        else:
            margin = gmargin[g1] + gmargin[g2]
            gap = ggap[g1] + ggap[g2]
        if override:
            margin = m.opt_o_margin[0]
        if gtype[g1] == GEOM_HFIELD:
            if ws[0].shape[0] == 1:
                own = K.make_workspace(m.opt_ccd_iterations[0])
                ws = K.borrowed(own)
            n = _narrow_hfield(m, d, g1, g2, margin + gap, buf, ws)
        elif _needs_workspace(gtype[g1], gtype[g2]):
            if ws[0].shape[0] == 1:
                own = K.make_workspace(m.opt_ccd_iterations[0])
                ws = K.borrowed(own)
            n = _narrow_convex(m, d, g1, g2, margin + gap, buf, ws)
        else:
            n = _narrow(m, d, g1, g2, margin + gap, buf, boxpoly)
        if n == 0:
            continue
        if ip >= 0:
            condim = m.pair_dim[ip]
            for q in range(5):
                imp[q] = m.pair_solimp[ip, q]
                fric[q] = m.pair_friction[ip, q]
            ref[0] = m.pair_solref[ip, 0]
            ref[1] = m.pair_solref[ip, 1]
            rf0 = m.pair_solreffriction[ip, 0]
            rf1 = m.pair_solreffriction[ip, 1]
            adhesion = m.pair_adhesion[ip]
        else:
            condim = _mix(m, g1, g2, ref, imp, fric)
            rf0 = 0.0
            rf1 = 0.0
            adhesion = _adhesion(m, g1, g2)
        if override:
            for q in range(5):
                imp[q] = m.opt_o_solimp[q]
                fric[q] = m.opt_o_friction[q]
            ref[0] = rf0 = m.opt_o_solref[0]
            ref[1] = rf1 = m.opt_o_solref[1]
        for j in range(n):
            if ncon >= nconmax:
                dropped += 1
                continue
            r = buf[j]
            dist = r[9]
            c_dist[ncon] = dist
            c_pos[ncon, 0] = r[0]
            c_pos[ncon, 1] = r[1]
            c_pos[ncon, 2] = r[2]
            _contact_frame(c_frame[ncon], (r[3], r[4], r[5]), (r[6], r[7], r[8]))
            c_geom[ncon, 0] = g1
            c_geom[ncon, 1] = g2
            c_dim[ncon] = condim
            for q in range(5):
                c_fric[ncon, q] = max(fric[q], MINMU)
                c_imp[ncon, q] = imp[q]
            c_ref[ncon, 0] = ref[0]
            c_ref[ncon, 1] = ref[1]
            c_reff[ncon, 0] = rf0
            c_reff[ncon, 1] = rf1
            c_imargin[ncon] = margin
            c_gap[ncon] = gap
            c_adh[ncon] = adhesion
            # an adhesive contact stays active in the gap, there normal-only (no friction
            # without touching) and pulling through its reference (mj_setContact)
            if dist >= margin:
                if adhesion != 0.0:
                    c_excl[ncon] = 0
                    c_dim[ncon] = 1
                else:
                    c_excl[ncon] = 1
            else:
                c_excl[ncon] = 0
            if surfacevel:
                _surface_velocity(m, d, ncon)
            else:
                c_sv[ncon, 0] = 0.0
                c_sv[ncon, 1] = 0.0
                c_sv[ncon, 2] = 0.0
            ncon += 1
    d.ncon[0] = ncon
    keep(own[0])
    flags = 0
    if dropped:
        d.collision_warning[WARN_CONTACTFULL, 0] += 1
        d.collision_warning[WARN_CONTACTFULL, 1] = dropped
        flags = 1 << WARN_CONTACTFULL
    return 4 * noverlap + flags


_k_collision = entry.Kernel(collision_stage)
_k_kinematics = entry.Kernel(kinematics_stage)


def collision(m, d, kinematics=True, stacklevel=2):
    """Detect contacts between the geoms of `m` at the poses in `d` (mj_collision).

    Fills d.ncon and the first d.ncon rows of the contact_* arrays; read them through
    `d.contact`. One compiled call.

    Args:
        m: the Model.
        d: a Data made for m.
        kinematics: run forward kinematics first (geom poses from d.qpos); pass False when
            d.geom_xpos / d.geom_xmat are already current (MuJoCo's mj_collision assumes
            this).
        stacklevel: where warnings point (2: the caller of this function).

    Returns:
        The number of contacts, d.ncon[0].

    Warns:
        JointspaceWarning: a geom pose is not finite (then there are no contacts), or the
            contacts did not fit in m.nconmax (the rest were dropped).
    """
    entry.check_pair(m, d, "collision")
    if kinematics:
        ep = _k_kinematics.ep
        ep(m._s, d._s)
    ep = _k_collision.ep
    flags = ep(m._s, d._s) & 3
    if flags:
        _warn(m, d, flags, stacklevel)
    return int(d.ncon[0])


def _warn(m, d, flags, stacklevel):
    if flags & (1 << WARN_BADGEOM):
        g = int(d.collision_warning[WARN_BADGEOM, 1])
        name = m.names["geom"][g] or f"#{g}"
        warnings.warn(f"collision: geom {name!r} has a non-finite pose (check d.qpos for NaN or "
                      "inf); no contacts were computed", JointspaceWarning,
                      stacklevel=stacklevel + 1)
    if flags & (1 << WARN_CONTACTFULL):
        warnings.warn(f"collision: {int(d.collision_warning[WARN_CONTACTFULL, 1])} contacts did "
                      f"not fit in nconmax = {m.nconmax} and were dropped; compile the model "
                      "with a larger spec.nconmax", JointspaceWarning, stacklevel=stacklevel + 1)


def broadphase_count(m, d):
    """Number of geom pairs whose bounding boxes overlap (before the filters), current poses.

    A diagnostic of the sweep-and-prune broadphase (see the module docstring); runs the whole
    collision stage.
    """
    entry.check_pair(m, d, "broadphase_count")
    ep = _k_collision.ep
    return int(ep(m._s, d._s)) >> 2


# ---------------------------------------------------------------------------------------------
# the distance between two geoms, for the geom distance sensors (mj_geomDistance)
#
# As MuJoCo 4.0 computes it: the pair's collision function run with the cutoff as margin,
# the contact of smallest distance kept, and the segment from geom 1's surface to geom 2's
# (the contact point ∓ dist/2 along the normal); for the pairs MuJoCo gives to its convex
# solver (every pair with an ellipsoid, a cylinder (but with a plane or a sphere), a mesh,
# and box-box) MuJoCo's GJK distance or EPA depth (collision.ccd) with its witness points,
# written whenever GJK has them. Beyond the cutoff (or for a pair of planes) the distance is
# the cutoff.


@njit(cache=True)
def geom_distance(m, d, geom1, geom2, cutoff, fromto, ws):
    """Distance between geom1 and geom2 up to cutoff; fromto (6) gets the segment or zeros.

    ws: a convex workspace (collision.ccd.make_workspace(m.opt_ccd_iterations[0])).
    """
    fromto[:] = 0.0
    t1, t2 = m.geom_type[geom1], m.geom_type[geom2]
    if t1 == GEOM_PLANE and t2 == GEOM_PLANE:
        return cutoff
    flip = t1 > t2
    g1, g2 = (geom2, geom1) if flip else (geom1, geom2)
    ta, tb = m.geom_type[g1], m.geom_type[g2]
    if ta == GEOM_HFIELD:  # distance sensors refuse height fields when compiled (as MuJoCo)
        return cutoff
    if _needs_workspace(ta, tb) or (ta == GEOM_BOX and tb == GEOM_BOX):
        va1, nv1, _, _ = _mesh_ranges(m, geom1)
        va2, nv2, _, _ = _mesh_ranges(m, geom2)
        dist, x1, x2, nx = K.distance(
            ws, K.obj(m.geom_type[geom1], v3(d.geom_xpos[geom1]), m9(d.geom_xmat[geom1]),
                      v3(m.geom_size[geom1]), va1, nv1, _mesh_graph(m, geom1)),
            K.obj(m.geom_type[geom2], v3(d.geom_xpos[geom2]), m9(d.geom_xmat[geom2]),
                  v3(m.geom_size[geom2]), va2, nv2, _mesh_graph(m, geom2)),
            m.hull_vert, m.hull_graph, m.opt_ccd_iterations[0], m.opt_ccd_tolerance[0], cutoff)
        if nx > 0:  # MuJoCo writes the witness points whenever it has them
            for k in range(3):
                fromto[k] = x1[k]
                fromto[3 + k] = x2[k]
        return dist
    buf = np.empty((MAXCONPAIR, 10))
    boxpoly = np.empty((2, B._MAXVERT, 3))
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
