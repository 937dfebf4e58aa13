"""Tendons: lengths, Jacobians and velocities (MuJoCo's mj_tendon, engine_core_smooth.c).

A spatial tendon is a path through sites, straight between consecutive sites; a pulley
(wrap_prm: its divisor) divides the length and Jacobian of the segments after it:

  ten_length = Σ_seg |p1 − p0| / divisor
  ten_J      = Σ_seg u · (jacp(p1) − jacp(p0)) / divisor,   u = (p1 − p0)/|p1 − p0|

and a site, sphere or cylinder, site sequence wraps around the geom (`wrap`: MuJoCo 4.0's
mju_wrap, with the optional side site choosing the side or, inside the geom, the
single-contact path).

A fixed tendon is a linear combination of scalar (hinge or slide) joint positions, its
path elements wrap_* [tendon_adr, tendon_adr + tendon_num) holding the joints (wrap_objid)
and their coefficients (wrap_prm):

  ten_length = Σ_k coef_k qpos[jnt_qposadr[j_k]]
  ten_J      = Σ_k coef_k e_{jnt_dofadr[j_k]}          (constant: no bias term)
  ten_velocity = ten_J qvel

The tendon's forces reach the joints through ten_J: springs and dampers
(`jointspace.passive`), limit and friction-loss rows (`jointspace.constraint.rows`),
`<equality><tendon>` rows, tendon actuators (`jointspace.actuation`) and the armature,
M += armature ten_Jᵀ ten_J (`tendon_armature`, MuJoCo's mj_tendonArmature; the armature of
the tendon's actuators, times gear₀², included: `jointspace.actuator_passive`). Every stage
returns at once when the model has no tendon.
"""

import math

import numpy as np
from numba import njit

from jointspace._numba.scratch import shaped
from jointspace.actuator_passive import tendon_armature as tendon_armature_total
from jointspace.types import (
    MINVAL,
    SMALL_WRAP,
    WRAP_CYLINDER,
    WRAP_JOINT,
    WRAP_PULLEY,
    WRAP_SPHERE,
)

# ---------------------------------------------------------------------------------------------
# wrapping around a sphere or a cylinder (MuJoCo's mju_wrap): the path from x0 to x1 in the
# plane of the circle (the great circle through both points for a sphere; the cross-section
# for a cylinder) runs straight to a tangent point, along the arc, and straight on


@njit(cache=True, inline="always")
def _segments_cross(a0, a1, b0, b1, c0, c1, e0, e1):
    """True when the 2D segments (a, b) and (c, e) intersect, b and e themselves excluded.

    With p = a + s (b − a) = c + t (e − c): 0 ≤ s < 1 and 0 ≤ t < 1, each compared as a
    product with the determinant's sign rather than divided by it (MuJoCo 4.0's test).
    """
    det = (e1 - c1) * (b0 - a0) - (e0 - c0) * (b1 - a1)
    if abs(det) < MINVAL:
        return False
    sg = 1.0 if det > 0.0 else -1.0
    s_num = (e0 - c0) * (a1 - c1) - (e1 - c1) * (a0 - c0)
    t_num = (b0 - a0) * (a1 - c1) - (b1 - a1) * (a0 - c0)
    s_below_1 = sg * ((e0 - c0) * (b1 - e1) - (e1 - c1) * (b0 - e0)) < 0.0
    t_below_1 = sg * ((b0 - a0) * (b1 - e1) - (b1 - a1) * (b0 - e0)) < 0.0
    return s_below_1 and sg * s_num >= 0.0 and sg * t_num >= 0.0 and t_below_1


@njit(cache=True, inline="always")
def _unit2(x, y):
    """(x, y)/|(x, y)|, or (1, 0) below MINVAL."""
    n = math.sqrt(x * x + y * y)
    if n < MINVAL:
        return 1.0, 0.0
    return x / n, y / n


@njit(cache=True, inline="always")
def _turn(ax, ay, bx, by):
    """The signed angle from direction a to direction b, in (−π, π]."""
    return math.atan2(ax * by - ay * bx, ax * bx + ay * by)


@njit(cache=True)
def _circle_wrap(e, side, has_side, radius, pnt):
    """Tangent points pnt (4) of the 2D path between e[0:2] and e[2:4] around the circle.

    Returns the arc length, or −1 for no wrap: a point inside the circle, the tangent
    lines crossing, or a straight segment that misses the circle (with a side site: and
    the side site's direction lies between the two ends, so that the straight path is
    already on its side).

    MuJoCo 4.0's rules, which differ from the mju_wrap of its published source where a side
    site is given: the side is chosen by the sense in which the sweep end 0 → side → end 1
    turns, not by which tangent pair's midpoint lies nearer the side site, and the arc is
    the angle of that sweep less the two straight legs' angles.
    """
    sq0 = e[0] * e[0] + e[1] * e[1]
    sq1 = e[2] * e[2] + e[3] * e[3]
    r2 = radius * radius
    if sq0 < r2 or sq1 < r2 or radius < MINVAL:
        return -1.0
    dx = e[2] - e[0]
    dy = e[3] - e[1]
    dd = dx * dx + dy * dy
    if dd < MINVAL:
        return -1.0
    # the segment's point nearest the center
    a = min(1.0, max(0.0, -(dx * e[0] + dy * e[1]) / dd))
    nx = e[0] + a * dx
    ny = e[1] + a * dy
    misses = nx * nx + ny * ny > r2
    sweep = 0.0
    best = 0
    if has_side:
        sweep = _turn(e[0], e[1], side[0], side[1]) + _turn(side[0], side[1], e[2], e[3])
        if misses and abs(sweep - _turn(e[0], e[1], e[2], e[3])) < math.pi:
            return -1.0
        best = 1 if sweep > 0.0 else 0
    elif misses:
        return -1.0
    q0 = math.sqrt(sq0 - r2)
    q1 = math.sqrt(sq1 - r2)
    goods = np.empty(2)
    sol = np.empty((2, 4))
    for k in range(2):
        sg = 1.0 if k == 0 else -1.0
        # the tangent points from each end, turning one way (k = 0) or the other
        sol[k, 0] = (e[0] * r2 + sg * radius * e[1] * q0) / sq0
        sol[k, 1] = (e[1] * r2 - sg * radius * e[0] * q0) / sq0
        sol[k, 2] = (e[2] * r2 - sg * radius * e[3] * q1) / sq1
        sol[k, 3] = (e[3] * r2 + sg * radius * e[2] * q1) / sq1
        # without a side site: the shorter chord between the tangent points, unless the
        # two tangent lines cross
        gx = sol[k, 0] - sol[k, 2]
        gy = sol[k, 1] - sol[k, 3]
        goods[k] = -(gx * gx + gy * gy)
        if _segments_cross(e[0], e[1], sol[k, 0], sol[k, 1], e[2], e[3], sol[k, 2], sol[k, 3]):
            goods[k] = -10000.0
    if not has_side:
        best = 0 if goods[0] > goods[1] else 1  # a tie takes the second
    for c in range(4):
        pnt[c] = sol[best, c]
    if _segments_cross(e[0], e[1], pnt[0], pnt[1], e[2], e[3], pnt[2], pnt[3]):
        return -1.0
    if has_side:
        return radius * abs(sweep - _turn(e[0], e[1], pnt[0], pnt[1])
                            - _turn(pnt[2], pnt[3], e[2], e[3]))
    # the angle between the tangent points, the long way round where the chosen
    # solution turns against it
    turn = pnt[1] * pnt[2] - pnt[0] * pnt[3]
    angle = math.atan2(abs(turn), pnt[0] * pnt[2] + pnt[1] * pnt[3])
    if angle > 1e-6 and ((best == 0 and turn < 0.0) or (best == 1 and turn > 0.0)):
        angle = 2.0 * math.pi - angle
    return radius * angle


@njit(cache=True)
def _inside_wrap(e, radius, pnt):
    """One contact point pnt (4, twice the same) for a side site inside the circle.

    The path from e[0:2] to e[2:4] touches the circle once, at the angle t where
    asin(A sin t) + asin(B sin t) − 2t + G = 0 (A = r/|e0|, B = r/|e1|, G the angle
    between the ends), found by Newton's method in t from π/2 (MuJoCo 4.0's iteration;
    its published source iterates in z = sin t). Returns 0, or −1 for no wrap.
    """
    l0 = math.sqrt(e[0] * e[0] + e[1] * e[1])
    l1 = math.sqrt(e[2] * e[2] + e[3] * e[3])
    dx = e[2] - e[0]
    dy = e[3] - e[1]
    dd = dx * dx + dy * dy
    if l0 <= radius or l1 <= radius or radius < MINVAL or l0 < MINVAL or l1 < MINVAL:
        return -1.0
    if dd > MINVAL:
        a = -(dx * e[0] + dy * e[1]) / dd
        if 0.0 < a < 1.0:
            nx = e[0] + a * dx
            ny = e[1] + a * dy
            if math.sqrt(nx * nx + ny * ny) <= radius:
                return -1.0
    # fallback: the mean direction of the two ends
    ux, uy = _unit2(0.5 * (e[0] + e[2]), 0.5 * (e[1] + e[3]))
    pnt[0] = pnt[2] = radius * ux
    pnt[1] = pnt[3] = radius * uy
    A = radius / l0
    B = radius / l1
    cosg = (l0 * l0 + l1 * l1 - dd) / (2.0 * l0 * l1)
    if cosg < -1.0 + MINVAL:
        return -1.0
    if cosg > 1.0 - MINVAL:
        return 0.0
    G = math.acos(cosg)
    t = 0.5 * math.pi
    z = 1.0
    f = math.asin(A) + math.asin(B) - math.pi + G
    if f > 0.0:
        return 0.0
    it = 0
    while it < 20 and abs(f) > 1e-6:
        df = math.cos(t) * (A / max(MINVAL, math.sqrt(1.0 - A * A * z * z))
                            + B / max(MINVAL, math.sqrt(1.0 - B * B * z * z))) - 2.0
        if df > -MINVAL:
            return 0.0
        t1 = t - f / df
        if t1 > t:
            return 0.0
        t = t1
        z = math.sin(t)
        f = math.asin(A * z) + math.asin(B * z) - 2.0 * t + G
        if f > 1e-6:
            return 0.0
        it += 1
    if it >= 20:
        return 0.0
    # rotate the end that turns counter-clockwise into the other by the contact angle
    if e[0] * e[3] - e[1] * e[2] > 0.0:
        vx, vy = _unit2(e[0], e[1])
        ang = t - math.asin(A * z)
    else:
        vx, vy = _unit2(e[2], e[3])
        ang = t - math.asin(B * z)
    c = math.cos(ang)
    s = math.sin(ang)
    pnt[0] = pnt[2] = radius * (c * vx - s * vy)
    pnt[1] = pnt[3] = radius * (s * vx + c * vy)
    return 0.0


@njit(cache=True)
def wrap(x0, x1, xpos, xmat, radius, wtype, side, has_side, out):
    """Wrap the segment x0 → x1 around a sphere or cylinder (center xpos, axes xmat).

    Returns the length on the surface (−1: the straight segment misses) and writes the two
    tangent points, in world coordinates, to out (2, 3).
    """
    R = xmat.reshape((3, 3))
    p0 = R.T @ (x0 - xpos)
    p1 = R.T @ (x1 - xpos)
    if np.linalg.norm(p0) < MINVAL or np.linalg.norm(p1) < MINVAL:
        return -1.0
    a0 = np.zeros(3)
    a1 = np.zeros(3)
    if wtype == WRAP_SPHERE:
        # the plane through the center and both points: a0 along p0, a1 in the plane
        a0[:] = p0 / np.linalg.norm(p0)
        n = np.cross(p0, p1)
        nn = np.linalg.norm(n)
        if nn < MINVAL:
            i = 0
            if abs(a0[1]) > abs(a0[0]) and abs(a0[1]) > abs(a0[2]):
                i = 1
            if abs(a0[2]) > abs(a0[0]) and abs(a0[2]) > abs(a0[1]):
                i = 2
            a1[:] = 1.0
            a1[i] = 0.0
            n = np.cross(a0, a1)
            nn = np.linalg.norm(n)
            n = n / nn if nn >= MINVAL else np.array([1.0, 0.0, 0.0])
        else:
            n = n / nn
        a1 = np.cross(n, a0)
        n1 = np.linalg.norm(a1)
        a1 = a1 / n1 if n1 >= MINVAL else np.array([1.0, 0.0, 0.0])
    else:
        a0[0] = 1.0
        a1[1] = 1.0
    e = np.array([p0 @ a0, p0 @ a1, p1 @ a0, p1 @ a1])
    sd = np.zeros(2)
    inside = False
    if has_side:
        s = R.T @ (side - xpos)
        ux, uy = _unit2(s @ a0, s @ a1)
        sd[0] = radius * ux
        sd[1] = radius * uy
        inside = np.linalg.norm(s) < radius
    pnt = np.empty(4)
    if inside:
        wlen = _inside_wrap(e, radius, pnt)
    else:
        wlen = _circle_wrap(e, sd, has_side, radius, pnt)
    if wlen < 0.0:
        return -1.0
    r0 = a0 * pnt[0] + a1 * pnt[1]
    r1 = a0 * pnt[2] + a1 * pnt[3]
    if wtype == WRAP_CYLINDER:
        # heights by the share of the path before each tangent point; a helix on the surface
        L0 = math.sqrt((p0[0] - r0[0]) ** 2 + (p0[1] - r0[1]) ** 2)
        L1 = math.sqrt((p1[0] - r1[0]) ** 2 + (p1[1] - r1[1]) ** 2)
        total = L0 + wlen + L1
        r0[2] = p0[2] + (p1[2] - p0[2]) * L0 / total
        r1[2] = p0[2] + (p1[2] - p0[2]) * (L0 + wlen) / total
        h = abs(r1[2] - r0[2])
        wlen = math.sqrt(wlen * wlen + h * h)
    out[0] = R @ r0 + xpos
    out[1] = R @ r1 + xpos
    return wlen


@njit(cache=True)
def _add_point_jac(m, d, b, p, u0, u1, u2, scale, row):
    """row += scale · uᵀ jacp(b, p): the translation Jacobian of point p fixed to body b.

    Column k of jacp on b's dof chain is cdof_lin[k] + cdof_rot[k] × (p − subtree_com[root]).
    """
    w = m.body_weldid[b]
    num = m.body_dofnum[w]
    if num == 0:
        return
    r = m.body_rootid[b]
    o0 = p[0] - d.subtree_com[r, 0]
    o1 = p[1] - d.subtree_com[r, 1]
    o2 = p[2] - d.subtree_com[r, 2]
    k = m.body_dofadr[w] + num - 1
    while k >= 0:
        c = d.cdof[k]
        jp0 = c[3] + c[1] * o2 - c[2] * o1
        jp1 = c[4] + c[2] * o0 - c[0] * o2
        jp2 = c[5] + c[0] * o1 - c[1] * o0
        row[k] += scale * (u0 * jp0 + u1 * jp1 + u2 * jp2)
        k = m.dof_parentid[k]


@njit(cache=True)
def _piece(m, d, b0, p0, b1, p1, divisor, row):
    """Add the straight piece p0 (on body b0) → p1 (on b1): returns |p1 − p0| / divisor.

    ten_J += u · (jacp(p1) − jacp(p0)) / divisor, u = (p1 − p0)/|p1 − p0| (MuJoCo's
    mju_normalize3: (1, 0, 0) below MINVAL); nothing when both points are on one body.
    """
    u0 = p1[0] - p0[0]
    u1 = p1[1] - p0[1]
    u2 = p1[2] - p0[2]
    dist = math.sqrt(u0 * u0 + u1 * u1 + u2 * u2)
    if b0 != b1:
        if dist < MINVAL:
            u0, u1, u2 = 1.0, 0.0, 0.0
        else:
            u0, u1, u2 = u0 / dist, u1 / dist, u2 / dist
        _add_point_jac(m, d, b1, p1, u0, u1, u2, 1.0 / divisor, row)
        _add_point_jac(m, d, b0, p0, u0, u1, u2, -1.0 / divisor, row)
    return dist / divisor


@njit(cache=True)
def _spatial(m, d, i, wrapcount):
    """Length, Jacobian and path points of spatial tendon i (sites, wrap geoms, pulleys).

    A site-to-site segment is straight; a site, a sphere or cylinder, a site segment wraps
    around the geom when the straight one would cross it (`wrap`): straight to the first
    tangent point, along the surface (on the geom's body: no Jacobian term), straight on.
    A pulley sets the divisor of the segments after it. Path points as mj_tendon records
    them: sites (wrap_obj −1), tangent points (the geom id), pulleys (−2, at the origin).
    Returns the new wrap count.
    """
    adr = m.tendon_adr[i]
    num = m.tendon_num[i]
    row = d.ten_J[i]
    tangent = shaped(d.scratch_small[SMALL_WRAP:SMALL_WRAP + 6], (2, 3))
    divisor = 1.0
    length = 0.0
    j = 0
    while j < num - 1:
        t0 = m.wrap_type[adr + j]
        t1 = m.wrap_type[adr + j + 1]
        if t0 == WRAP_PULLEY or t1 == WRAP_PULLEY:
            if t0 == WRAP_PULLEY:
                divisor = m.wrap_prm[adr + j]
                d.wrap_xpos[wrapcount, 0] = 0.0
                d.wrap_xpos[wrapcount, 1] = 0.0
                d.wrap_xpos[wrapcount, 2] = 0.0
                d.wrap_obj[wrapcount] = -2
                d.ten_wrapnum[i] += 1
                wrapcount += 1
            j += 1
            continue
        s0 = m.wrap_objid[adr + j]
        p0 = d.site_xpos[s0]
        b0 = m.site_bodyid[s0]
        wlen = -1.0
        g = -1
        if t1 == WRAP_SPHERE or t1 == WRAP_CYLINDER:
            g = m.wrap_objid[adr + j + 1]
            side = int(m.wrap_prm[adr + j + 1])
            s1 = m.wrap_objid[adr + j + 2]
            p1 = d.site_xpos[s1]
            wlen = wrap(p0, p1, d.geom_xpos[g], d.geom_xmat[g], m.geom_size[g, 0], t1,
                        d.site_xpos[max(side, 0)], side >= 0, tangent)
        else:
            s1 = m.wrap_objid[adr + j + 1]
            p1 = d.site_xpos[s1]
        b1 = m.site_bodyid[s1]
        d.wrap_xpos[wrapcount] = p0
        d.wrap_obj[wrapcount] = -1
        if wlen < 0.0:
            length += _piece(m, d, b0, p0, b1, p1, divisor, row)
            d.ten_wrapnum[i] += 1
            wrapcount += 1
        else:
            bg = m.geom_bodyid[g]
            length += _piece(m, d, b0, p0, bg, tangent[0], divisor, row)
            length += wlen / divisor
            length += _piece(m, d, bg, tangent[1], b1, p1, divisor, row)
            for k in range(2):
                d.wrap_xpos[wrapcount + 1 + k] = tangent[k]
                d.wrap_obj[wrapcount + 1 + k] = g
            d.ten_wrapnum[i] += 3
            wrapcount += 3
        j += 2 if g >= 0 else 1
        # the last site before a pulley or the end of the path
        if j == num - 1 or m.wrap_type[adr + j + 1] == WRAP_PULLEY:
            d.wrap_xpos[wrapcount] = p1
            d.wrap_obj[wrapcount] = -1
            d.ten_wrapnum[i] += 1
            wrapcount += 1
    d.ten_length[i] = length
    return wrapcount


@njit(cache=True)
def tendon_stage(m, d):
    """ten_length, ten_J (dense, ntendon × nv), ten_wrapadr, ten_wrapnum, wrap_obj, wrap_xpos.

    mj_tendon: fixed tendons record no path points; spatial ones their sites and pulleys.
    """
    if m.ntendon == 0:
        return
    J = d.ten_J
    wrapcount = np.int64(0)
    for i in range(m.ntendon):
        for c in range(m.nv):
            J[i, c] = 0.0
        d.ten_wrapadr[i] = wrapcount
        d.ten_wrapnum[i] = 0
        adr = m.tendon_adr[i]
        if m.wrap_type[adr] != WRAP_JOINT:
            wrapcount = _spatial(m, d, i, wrapcount)
            continue
        length = 0.0
        for k in range(adr, adr + m.tendon_num[i]):
            j = m.wrap_objid[k]
            coef = m.wrap_prm[k]
            # L += coef q_j;  J[dof_j] += coef
            length += coef * d.qpos[m.jnt_qposadr[j]]
            J[i, m.jnt_dofadr[j]] += coef
        d.ten_length[i] = length


@njit(cache=True)
def tendon_velocity(m, d):
    """ten_velocity = ten_J qvel."""
    for i in range(m.ntendon):
        s = 0.0
        for c in range(m.nv):
            s += d.ten_J[i, c] * d.qvel[c]
        d.ten_velocity[i] = s


@njit(cache=True)
def tendon_armature(m, d):
    """qM += Σ_t armature_t ten_J_tᵀ ten_J_t on M's sparsity (mj_tendonArmature).

    Only the entries on M's sparsity are added, (i, j) for j = i and its ancestors, as
    MuJoCo does: a tendon whose dofs lie on several branches of the tree (a fixed tendon
    coupling two legs, a spatial tendon between two limbs) loses its cross-branch products,
    in MuJoCo's qM and in ours alike.
    """
    for t in range(m.ntendon):
        a = tendon_armature_total(m, t)
        if a == 0.0:
            continue
        J = d.ten_J[t]
        for i in range(m.nv):
            if J[i] == 0.0:
                continue
            # row i of the lower triangle: M[i, j] for j = i and its ancestors
            adr = m.dof_Madr[i]
            j = i
            while j >= 0:
                d.qM[adr] += a * J[i] * J[j]
                adr += 1
                j = m.dof_parentid[j]


@njit(cache=True)
def tendon_armature_force(m, d, qacc, tau):
    """tau += the tendon armature's share of M qacc, on M's sparsity as `tendon_armature`.

    tau_i += a J_i J_j qacc_j and tau_j += a J_i J_j qacc_i for each j an ancestor of i
    (the second only for j ≠ i); with all of a tendon's dofs on one branch this is
    a ten_Jᵀ (ten_J qacc).
    """
    for t in range(m.ntendon):
        a = tendon_armature_total(m, t)
        if a == 0.0:
            continue
        J = d.ten_J[t]
        for i in range(m.nv):
            if J[i] == 0.0:
                continue
            tau[i] += a * J[i] * J[i] * qacc[i]
            j = m.dof_parentid[i]
            while j >= 0:
                aij = a * J[i] * J[j]
                tau[i] += aij * qacc[j]
                tau[j] += aij * qacc[i]
                j = m.dof_parentid[j]
