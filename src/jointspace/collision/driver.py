"""Collision driver: broadphase, filtering, narrowphase dispatch and the contact record.

`collision(m, d)` fills d.ncon and the contact_* arrays (MuJoCo's mj_collision,
engine_collision_driver.c). Pair table (geom 1 has the lower type; planes collide with all
other types, everything with everything else; height fields are not supported):

=========  ========  =========  ==========  =========  ========  ========
           sphere    capsule    ellipsoid   cylinder   box       mesh
=========  ========  =========  ==========  =========  ========  ========
plane      analytic  analytic   support     analytic   analytic  support
sphere     analytic  analytic   convex      analytic   analytic  convex
capsule              analytic   convex      convex     analytic  convex
ellipsoid                       convex      convex     convex    convex
cylinder                                    convex     convex    convex
box                                                    analytic  convex
mesh                                                             convex
=========  ========  =========  ==========  =========  ========  ========

"analytic": `primitive` and `box`; "convex": GJK/EPA (`convex`); "support": the support
point below the plane (`convex.plane_convex`). Contacts per pair at most: plane-capsule 2,
plane-cylinder 4, plane-box 4, plane-mesh 3, capsule-capsule 2, capsule-box 2, box-box 8,
convex pairs of boxes, meshes, cylinders and capsules 4 (face clipping).

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
and a contact with dist >= includemargin is recorded with exclude = 1 (inactive).
Parameters: an explicit pair's own; otherwise the geom with the higher priority sets
condim, solref, solimp and friction; equal priorities take the larger condim, solref and
solimp mixed by solmix weights (solref elementwise minimum when either is a direct, i.e.
non-positive, reference), and the larger of each friction coefficient.

Capacity: d holds at most m.nconmax contacts (`Model.nconmax`, default max(100, 8 ngeom),
set it with `spec.nconmax` before compiling). Contacts beyond it are dropped and counted
in d.collision_warning[0]; non-finite geom poses give no contacts and are counted in
d.collision_warning[1]; `collision` reports both as a JointspaceWarning.
"""

import math
import warnings

import numpy as np
from numba import njit

from jointspace import _entry
from jointspace.collision import box as B
from jointspace.collision import convex as C
from jointspace.collision import primitive as P
from jointspace.collision._vec import MINVAL, dot, m9, normalize, sub, v3
from jointspace.errors import JointspaceWarning
from jointspace.kinematics import _kinematics
from jointspace.types import (
    GEOM_BOX,
    GEOM_CAPSULE,
    GEOM_CYLINDER,
    GEOM_ELLIPSOID,
    GEOM_MESH,
    GEOM_PLANE,
    GEOM_SPHERE,
)

MAXCONPAIR = 16  # contact buffer rows per geom pair (the most any pair makes is 8)
WARN_CONTACTFULL, WARN_BADGEOM = 0, 1


# ---------------------------------------------------------------------------------------------
# narrowphase dispatch


@njit(cache=True, error_model="numpy")
def _narrow(m, d, g1, g2, margin, buf, ws, boxpoly):
    """Contacts of geoms g1, g2 (type(g1) <= type(g2)) into buf; returns the count."""
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
                                  m.hullpoly_vert, m.hullpoly_normal)
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
    # general convex pair
    va1, nv1, pa1, np1 = _mesh_ranges(m, g1)
    va2, nv2, pa2, np2 = _mesh_ranges(m, g2)
    found, pos, nrm, dist, _ = C.contact(ws, margin, t1, p1, r1, s1, t2, p2, r2, s2,
                                            m.hull_vert, va1, nv1, va2, nv2)
    if not found:
        return 0
    P.put(buf, 0, pos, nrm, dist)
    if t1 == GEOM_SPHERE or t1 == GEOM_ELLIPSOID or t2 == GEOM_ELLIPSOID:
        return 1
    n = C.flat_contacts(buf, 0, ws, margin, nrm, t1, p1, r1, s1, t2, p2, r2, s2, m.hull_vert,
                        va1, va2, pa1, np1, pa2, np2, m.hullpoly_vertadr, m.hullpoly_vertnum,
                        m.hullpoly_vert, m.hullpoly_normal)
    if n > 0:
        return n
    P.put(buf, 0, pos, nrm, dist)
    return 1


@njit(cache=True)
def _mesh_ranges(m, g):
    """Hull vertex and polygon ranges of a mesh geom ((0, 0, 0, 0) for other types)."""
    mid = m.geom_dataid[g]
    if m.geom_type[g] != GEOM_MESH or mid < 0:
        return 0, 0, 0, 0
    return (m.mesh_hullvertadr[mid], m.mesh_hullvertnum[mid], m.mesh_hullpolyadr[mid],
            m.mesh_hullpolynum[mid])


# ---------------------------------------------------------------------------------------------
# contact parameters


@njit(cache=True)
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


# ---------------------------------------------------------------------------------------------
# broadphase


@njit(cache=True)
def _body_filter(m, b1, b2):
    """True when MuJoCo never lets bodies b1 and b2 collide (welds, dofs, parent rule)."""
    w1 = m.body_weldid[b1]
    w2 = m.body_weldid[b2]
    if w1 == w2:
        return True
    if m.body_dofnum[w1] == 0 and m.body_dofnum[w2] == 0:
        return True
    pw1 = m.body_weldid[m.body_parentid[w1]]
    pw2 = m.body_weldid[m.body_parentid[w2]]
    if w1 != 0 and w2 != 0 and (w1 == pw2 or w2 == pw1):
        return True
    return False


@njit(cache=True)
def _geom_filter(m, d, g1, g2):
    """True when the automatic pair (g1, g2) is filtered out before the narrowphase."""
    if not ((m.geom_contype[g1] & m.geom_conaffinity[g2])
            or (m.geom_contype[g2] & m.geom_conaffinity[g1])):
        return True
    b1 = m.geom_bodyid[g1]
    b2 = m.geom_bodyid[g2]
    if _body_filter(m, b1, b2):
        return True
    if m.nexclude:
        lo = min(b1, b2)
        hi = max(b1, b2)
        sig = (lo << 16) + hi
        for i in range(m.nexclude):
            if m.exclude_signature[i] == sig:
                return True
    for i in range(m.npair):
        p1 = m.pair_geom1[i]
        p2 = m.pair_geom2[i]
        if (p1 == g1 and p2 == g2) or (p1 == g2 and p2 == g1):
            return True
    bound = m.geom_margin[g1] + m.geom_margin[g2] + m.geom_gap[g1] + m.geom_gap[g2]
    return _sphere_filter(m, d, g1, g2, bound)


@njit(cache=True)
def _sphere_filter(m, d, g1, g2, bound):
    """MuJoCo's bounding-sphere test (planes: the other geom's sphere against the plane)."""
    rb1 = m.geom_rbound[g1]
    rb2 = m.geom_rbound[g2]
    p1 = v3(d.geom_xpos[g1])
    p2 = v3(d.geom_xpos[g2])
    if rb1 > 0 and rb2 > 0:
        dd = sub(p1, p2)
        lim = rb1 + rb2 + bound
        return dot(dd, dd) > lim * lim
    if m.geom_type[g1] == GEOM_PLANE and rb2 > 0:
        nrm = (d.geom_xmat[g1, 2], d.geom_xmat[g1, 5], d.geom_xmat[g1, 8])
        if dot(sub(p2, p1), nrm) > bound + rb2:
            return True
    if m.geom_type[g2] == GEOM_PLANE and rb1 > 0:
        nrm = (d.geom_xmat[g2, 2], d.geom_xmat[g2, 5], d.geom_xmat[g2, 8])
        if dot(sub(p1, p2), nrm) > bound + rb1:
            return True
    return False


@njit(cache=True)
def _order(m, g1, g2):
    """(lower-type geom, other); geoms of equal type keep their order."""
    if m.geom_type[g1] > m.geom_type[g2]:
        return g2, g1
    return g1, g2


@njit(cache=True)
def _key(m, g1, g2, explicit, idx):
    """Sort key in MuJoCo's contact order: body pair, explicit pairs first, geom ids."""
    b1 = m.geom_bodyid[g1]
    b2 = m.geom_bodyid[g2]
    sig = (min(b1, b2) << 16) + max(b1, b2)
    if explicit:
        return (np.int64(sig) << 32) | np.int64(idx)
    a, b = _order(m, g1, g2)
    return (np.int64(sig) << 32) | (np.int64(1) << 31) | np.int64(a * m.ngeom + b)


@njit(["int64[::1](float64[::1], int64)", "int64[::1](int64[::1], int64)"], cache=True)
def _argsort(x, n):
    """Stable order of x[:n] (bottom-up merge sort)."""
    idx = np.arange(n)
    tmp = np.empty(n, dtype=np.int64)
    width = 1
    while width < n:
        for lo in range(0, n, 2 * width):
            mid = min(lo + width, n)
            hi = min(lo + 2 * width, n)
            i, j, k = lo, mid, lo
            while i < mid and j < hi:
                if x[idx[j]] < x[idx[i]]:
                    tmp[k] = idx[j]
                    j += 1
                else:
                    tmp[k] = idx[i]
                    i += 1
                k += 1
            while i < mid:
                tmp[k] = idx[i]
                i += 1
                k += 1
            while j < hi:
                tmp[k] = idx[j]
                j += 1
                k += 1
        idx, tmp = tmp, idx
        width *= 2
    return idx


@njit(cache=True)
def _push(keys, pg, n, key, g1, g2, ip):
    """Append a candidate, growing the buffers when full; returns (keys, pg)."""
    if n == keys.shape[0]:
        k2 = np.empty(2 * n, dtype=np.int64)
        p2 = np.empty((2 * n, 3), dtype=np.int64)
        for i in range(n):
            k2[i] = keys[i]
            for c in range(3):
                p2[i, c] = pg[i, c]
        keys = k2
        pg = p2
    keys[n] = key
    pg[n, 0] = g1
    pg[n, 1] = g2
    pg[n, 2] = ip
    return keys, pg


@njit(cache=True)
def _world_aabb(m, d, box):
    """World AABBs (min, max) of the non-plane geoms, grown by margin + gap.

    Returns the axis along which their centres spread most.
    """
    ngeom = m.ngeom
    mean = np.zeros(3)
    sq = np.zeros(3)
    cnt = 0
    for g in range(ngeom):
        if m.geom_type[g] == GEOM_PLANE:
            continue
        xp = d.geom_xpos[g]
        xm = d.geom_xmat[g]
        a = m.geom_aabb[g]
        rb = m.geom_rbound[g]
        grow = m.geom_margin[g] + m.geom_gap[g]
        for i in range(3):
            c = xp[i] + xm[3 * i] * a[0] + xm[3 * i + 1] * a[1] + xm[3 * i + 2] * a[2]
            h = (abs(xm[3 * i]) * a[3] + abs(xm[3 * i + 1]) * a[4]
                 + abs(xm[3 * i + 2]) * a[5])
            box[g, i] = max(c - h, xp[i] - rb) - grow
            box[g, 3 + i] = min(c + h, xp[i] + rb) + grow
            mid = 0.5 * (box[g, i] + box[g, 3 + i])
            mean[i] += mid
            sq[i] += mid * mid
        cnt += 1
    axis = 0
    best = -1.0
    for i in range(3):
        var = sq[i] - mean[i] * mean[i] / max(cnt, 1)
        if var > best:
            best = var
            axis = i
    return axis


@njit(cache=True)
def _broadphase(m, d, box):
    """Candidate pairs (g1, g2, explicit pair id or -1) in MuJoCo's order; returns (pg, n).

    Also returns the number of automatic candidate pairs that passed the box overlap test
    (before filtering), for diagnostics.
    """
    ngeom = m.ngeom
    cap = max(64, 4 * ngeom + m.npair)
    keys = np.empty(cap, dtype=np.int64)
    pg = np.empty((cap, 3), dtype=np.int64)
    n = 0
    noverlap = 0
    # explicit pairs: bounding-sphere test only
    for i in range(m.npair):
        g1 = m.pair_geom1[i]
        g2 = m.pair_geom2[i]
        if m.geom_bodyid[g1] > m.geom_bodyid[g2]:
            g1, g2 = g2, g1
        if _sphere_filter(m, d, g1, g2, m.pair_margin[i] + m.pair_gap[i]):
            continue
        keys, pg = _push(keys, pg, n, _key(m, g1, g2, True, i), g1, g2, i)
        n += 1
    # collidable geoms: planes apart, the rest swept along the axis of largest spread
    order = np.empty(ngeom, dtype=np.int64)
    planes = np.empty(ngeom, dtype=np.int64)
    nsw = 0
    npl = 0
    for g in range(ngeom):
        if m.geom_contype[g] == 0 and m.geom_conaffinity[g] == 0:
            continue
        if m.geom_type[g] == GEOM_PLANE:
            planes[npl] = g
            npl += 1
        else:
            order[nsw] = g
            nsw += 1
    axis = _world_aabb(m, d, box)
    lo = np.empty(nsw)
    for i in range(nsw):
        lo[i] = box[order[i], axis]
    srt = _argsort(lo, nsw)
    for ii in range(nsw):
        ga = order[srt[ii]]
        hi = box[ga, 3 + axis]
        for jj in range(ii + 1, nsw):
            gb = order[srt[jj]]
            if box[gb, axis] > hi:
                break
            overlap = True
            for c in range(3):
                if box[gb, c] > box[ga, 3 + c] or box[ga, c] > box[gb, 3 + c]:
                    overlap = False
            if not overlap:
                continue
            noverlap += 1
            g1 = min(ga, gb)
            g2 = max(ga, gb)
            if _geom_filter(m, d, g1, g2):
                continue
            keys, pg = _push(keys, pg, n, _key(m, g1, g2, False, 0), g1, g2, -1)
            n += 1
    for ip in range(npl):
        gp = planes[ip]
        for jj in range(nsw):
            g = order[jj]
            g1 = min(gp, g)
            g2 = max(gp, g)
            noverlap += 1
            if _geom_filter(m, d, g1, g2):
                continue
            keys, pg = _push(keys, pg, n, _key(m, g1, g2, False, 0), g1, g2, -1)
            n += 1
    srt = _argsort(keys, n)
    out = np.empty((n, 3), dtype=np.int64)
    for i in range(n):
        for c in range(3):
            out[i, c] = pg[srt[i], c]
    return out, n, noverlap


# ---------------------------------------------------------------------------------------------
# the stage


@njit(cache=True)
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


@njit(cache=True)
def _collision(m, d):
    """All contacts of the current poses into d.ncon, d.contact_* (mj_collision).

    Returns the number of automatic pairs whose boxes overlapped (broadphase candidates).
    """
    d.ncon[0] = 0
    for g in range(m.ngeom):
        bad = False
        for i in range(3):
            if not math.isfinite(d.geom_xpos[g, i]):
                bad = True
        for i in range(9):
            if not math.isfinite(d.geom_xmat[g, i]):
                bad = True
        if bad:
            d.collision_warning[WARN_BADGEOM, 0] += 1
            d.collision_warning[WARN_BADGEOM, 1] = g
            return 0
    box = np.empty((m.ngeom, 6))
    pg, npair, noverlap = _broadphase(m, d, box)
    buf = np.zeros((MAXCONPAIR, 10))
    boxpoly = np.zeros((2, B._MAXVERT, 3))
    ws = C.make_workspace()
    ref = np.empty(2)
    imp = np.empty(5)
    fric = np.empty(5)
    ncon = 0
    dropped = 0
    for i in range(npair):
        ip = pg[i, 2]
        g1, g2 = _order(m, pg[i, 0], pg[i, 1])
        if ip >= 0:
            margin = m.pair_margin[ip]
            gap = m.pair_gap[ip]
        else:
            margin = m.geom_margin[g1] + m.geom_margin[g2]
            gap = m.geom_gap[g1] + m.geom_gap[g2]
        n = _narrow(m, d, g1, g2, margin + gap, buf, ws, boxpoly)
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
        else:
            condim = _mix(m, g1, g2, ref, imp, fric)
            rf0 = 0.0
            rf1 = 0.0
        for j in range(n):
            if ncon >= m.nconmax:
                dropped += 1
                continue
            r = buf[j]
            dist = r[9]
            d.contact_dist[ncon] = dist
            d.contact_pos[ncon, 0] = r[0]
            d.contact_pos[ncon, 1] = r[1]
            d.contact_pos[ncon, 2] = r[2]
            _contact_frame(d.contact_frame[ncon], (r[3], r[4], r[5]), (r[6], r[7], r[8]))
            d.contact_geom[ncon, 0] = g1
            d.contact_geom[ncon, 1] = g2
            d.contact_dim[ncon] = condim
            for q in range(5):
                d.contact_friction[ncon, q] = fric[q]
                d.contact_solimp[ncon, q] = imp[q]
            d.contact_solref[ncon, 0] = ref[0]
            d.contact_solref[ncon, 1] = ref[1]
            d.contact_solreffriction[ncon, 0] = rf0
            d.contact_solreffriction[ncon, 1] = rf1
            d.contact_includemargin[ncon] = margin
            d.contact_gap[ncon] = gap
            d.contact_exclude[ncon] = 1 if dist >= margin else 0
            ncon += 1
    d.ncon[0] = ncon
    if dropped:
        d.collision_warning[WARN_CONTACTFULL, 0] += 1
        d.collision_warning[WARN_CONTACTFULL, 1] = dropped
    return noverlap


@njit(cache=True)
def _collision_top(m, d, run_kinematics):
    """Entry point: optionally forward kinematics, then the collision stage."""
    if run_kinematics:
        _kinematics(m, d)
    return _collision(m, d)


_k_collision = _entry.Kernel(_collision_top)


def collision(m, d, kinematics=True):
    """Detect contacts between the geoms of `m` at the poses in `d` (mj_collision).

    Fills d.ncon and the first d.ncon rows of the contact_* arrays; read them through
    `d.contact`. One compiled call.

    Args:
        m: the Model.
        d: a Data made for m.
        kinematics: run forward kinematics first (geom poses from d.qpos); pass False when
            d.geom_xpos / d.geom_xmat are already current (MuJoCo's mj_collision assumes
            this).

    Returns:
        The number of contacts, d.ncon[0].

    Warns:
        JointspaceWarning: a geom pose is not finite (then there are no contacts), or the
            contacts did not fit in m.nconmax (the rest were dropped).
    """
    _entry.check_pair(m, d, "collision")
    w0 = d.collision_warning[:, 0].copy()
    _k_collision(m._s, d._s, bool(kinematics))
    if d.collision_warning[WARN_BADGEOM, 0] != w0[WARN_BADGEOM]:
        g = int(d.collision_warning[WARN_BADGEOM, 1])
        name = m.names["geom"][g] or f"#{g}"
        warnings.warn(f"collision: geom {name!r} has a non-finite pose (check d.qpos for NaN or "
                      "inf); no contacts were computed", JointspaceWarning, stacklevel=2)
    if d.collision_warning[WARN_CONTACTFULL, 0] != w0[WARN_CONTACTFULL]:
        warnings.warn(f"collision: {int(d.collision_warning[WARN_CONTACTFULL, 1])} contacts did "
                      f"not fit in nconmax = {m.nconmax} and were dropped; compile the model "
                      "with a larger spec.nconmax", JointspaceWarning, stacklevel=2)
    return int(d.ncon[0])


def broadphase_count(m, d):
    """Number of geom pairs whose bounding boxes overlap (before the filters), current poses.

    A diagnostic of the sweep-and-prune broadphase (see the module docstring); runs the whole
    collision stage.
    """
    _entry.check_pair(m, d, "broadphase_count")
    return int(_k_collision(m._s, d._s, False))
