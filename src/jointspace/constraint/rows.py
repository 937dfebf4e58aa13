"""Constraint rows (efc_*): equality constraints, friction loss, joint limits, contacts.

`make_constraint(m, d)` fills rows 0 … nefc−1 of Data's efc_* arrays in MuJoCo's order
(mj_makeConstraint, engine_core_constraint.c; Todorov 2014, 004 §II Phase II):

  equality   connect  3 rows  r = p1 − p2,  J = Jp(b1, p1) − Jp(b2, p2)
             weld     6 rows  r = (p1 − p2, τ vec(q2⁻¹ ⊗ q1 ⊗ q_rel)), rotation rows
                              J_rot = τ/2 vec(q2⁻¹ ⊗ (0, Jr1 − Jr2) ⊗ q1 ⊗ q_rel)
             joint    1 row   r = q1 − q1₀ − poly(q2 − q2₀),  J = e1 − poly'(q2 − q2₀) e2
             tendon   1 row   r = L1 − L1₀ − poly(L2 − L2₀),  J = J1 − poly'(L2 − L2₀) J2
  friction   1 row per dof with frictionloss > 0: J = e_i, force bounded by ±frictionloss;
             then 1 row per tendon with frictionloss > 0: J = ten_J
  limits     hinge/slide: one row per side with dist < margin, J = ±e_i (lower: +1);
             ball: one row when the rotation angle exceeds max(range), J = −axis;
             tendons: one row per side with dist < margin, J = ±ten_J (lower: +1)
  contacts   condim 1: the normal row; pyramidal cone: 2(condim−1) edge rows
             J_n ± μ_k J_k; elliptic cone: condim rows (normal, two tangents, torsion, two
             rolling), the friction cone of 004 eq. 9 with per-dimension μ

Sparsity index. Each row lists its structurally nonzero columns, increasing, in
efc_J_colind[i, :efc_J_rownnz[i]] (MuJoCo's efc_J_colind/efc_J_rownnz of its sparse mode,
kept one row per line of an njmax × nv array): a contact's rows span the dof chains of its
two bodies without their common dofs (whose columns of J2 − J1 vanish), a connect's or
weld's the union of both chains, a joint equality its one or two dofs, a friction-loss or
hinge/slide limit row its dof, a ball limit the joint's three dofs. Rows are written on
those columns only; efc_J stays dense (zero elsewhere) for every reader, and the products
J x, Jᵀ f, J qvel, the Newton Hessian and the dual matrix run over the index.

A constraint whose Jacobian is identically zero adds no rows (MuJoCo's empty guard). Rows
that would exceed the capacity `m.njmax` are dropped whole (a constraint is never split),
counted in d.warning_cnstrfull = (number of overflowing calls, rows requested last time),
and reported by the public functions as a JointspaceWarning.

Softness (efc_R, efc_D, impedance, B and K): `jointspace.constraint.softness`; reference
accelerations (efc_vel, efc_aref): `jointspace.constraint.reference`.
"""

import math
import warnings

import numpy as np
from numba import njit

from jointspace.constraint.softness import diag_exact, equality_bodies, softness
from jointspace.errors import JointspaceWarning
from jointspace.rotation import quat_mul
from jointspace.types import (
    CNSTR_CONTACT_ELLIPTIC,
    CNSTR_CONTACT_FRICTIONLESS,
    CNSTR_CONTACT_PYRAMIDAL,
    CNSTR_EQUALITY,
    CNSTR_FRICTION_DOF,
    CNSTR_FRICTION_TENDON,
    CNSTR_LIMIT_JOINT,
    CNSTR_LIMIT_TENDON,
    DSBL_CONSTRAINT,
    DSBL_CONTACT,
    DSBL_EQUALITY,
    DSBL_FRICTIONLOSS,
    DSBL_LIMIT,
    ENBL_DIAGEXACT,
    EQ_CONNECT,
    EQ_JOINT,
    EQ_TENDON,
    EQ_WELD,
    JNT_BALL,
    JNT_HINGE,
    JNT_SLIDE,
    MINVAL,
    OBJ_SITE,
    SMALL_EQUALITY,
)

# ---------------------------------------------------------------------------------------------
# small helpers


@njit(cache=True)
def _local_point(out, xpos, xmat, v, a):
    """World point out = xpos + xmat v[a:a+3] of a point given in a body frame."""
    for r in range(3):
        out[r] = (xpos[r] + xmat[3 * r] * v[a] + xmat[3 * r + 1] * v[a + 1]
                  + xmat[3 * r + 2] * v[a + 2])


@njit(cache=True)
def quat_mul_axis(out, q, ax):
    """Quaternion product out = q ⊗ (0, ax)."""
    w = -q[1] * ax[0] - q[2] * ax[1] - q[3] * ax[2]
    x = q[0] * ax[0] + q[2] * ax[2] - q[3] * ax[1]
    y = q[0] * ax[1] + q[3] * ax[0] - q[1] * ax[2]
    z = q[0] * ax[2] + q[1] * ax[1] - q[2] * ax[0]
    out[0] = w
    out[1] = x
    out[2] = y
    out[3] = z


@njit(cache=True)
def _chain_count(m, b1, b2, skipcommon):
    """Number of dofs on the merged dof chains of bodies b1 and b2 (mj_mergeChain).

    With `skipcommon`, the dofs the two chains share (common ancestors) are left out.
    """
    parent = m.dof_parentid
    da1 = _last_dof(m, b1)
    da2 = _last_dof(m, b2)
    n = 0
    while da1 >= 0 or da2 >= 0:
        da = max(da1, da2)
        if skipcommon and da1 == da and da2 == da:
            break
        if da1 == da:
            da1 = parent[da1]
        if da2 == da:
            da2 = parent[da2]
        n += 1
    return n


@njit(cache=True)
def _last_dof(m, b):
    """Last dof of the chain of body b (through its weld root), −1 if none."""
    w = m.body_weldid[b]
    num = m.body_dofnum[w]
    if num == 0:
        return -1
    return m.body_dofadr[w] + num - 1


@njit(cache=True, inline="always")
def _open_rows(m, d, size, need):
    """Reserve rows n … n+size−1 and clear their previous contents; return n or −1.

    efc_J is zero outside each row's index (efc_J_colind[i, :efc_J_rownnz[i]]) between
    calls, so clearing a row costs its old index only. need[0] counts the rows requested
    this call, need[1] the constraints dropped for lack of capacity.
    """
    n = d.nefc[0]
    need[0] += size
    if n + size > m.njmax:
        need[1] += 1
        return -1
    J = d.efc_J
    nnz = d.efc_J_rownnz
    ind = d.efc_J_colind
    for r in range(n, n + size):
        for j in range(nnz[r]):
            J[r, ind[r, j]] = 0.0
        nnz[r] = 0
    return n


@njit(cache=True, inline="always")
def _close_rows(m, d, n, size, nnz, floss, ctype, cid, need):
    """Commit rows n … n+size−1 whose index is efc_J_colind[n, :nnz] and whose J is written.

    Copies the index to the other rows and sets type, id and frictionloss. Non-contact
    constraints whose rows are all zero are withdrawn (MuJoCo's empty guard).
    """
    J = d.efc_J
    ind = d.efc_J_colind
    rownnz = d.efc_J_rownnz
    for r in range(n, n + size):
        rownnz[r] = nnz
        if r > n:
            for j in range(nnz):
                ind[r, j] = ind[n, j]
    if ctype < CNSTR_CONTACT_FRICTIONLESS:
        empty = True
        for r in range(n, n + size):
            for j in range(nnz):
                if J[r, ind[n, j]] != 0.0:
                    empty = False
                    break
            if not empty:
                break
        if empty:
            need[0] -= size
            return
    efc_floss = d.efc_frictionloss
    efc_type = d.efc_type
    efc_id = d.efc_id
    for r in range(n, n + size):
        efc_floss[r] = floss
        efc_type[r] = ctype
        efc_id[r] = cid
    d.nefc[0] = n + size
    if ctype == CNSTR_EQUALITY:
        d.ne[0] += size
    elif ctype == CNSTR_FRICTION_DOF or ctype == CNSTR_FRICTION_TENDON:
        d.nf[0] += size
    elif ctype == CNSTR_LIMIT_JOINT or ctype == CNSTR_LIMIT_TENDON:
        d.nl[0] += size


@njit(cache=True, inline="always")
def _one_dof_row(m, d, dof, value, pos, margin, floss, ctype, cid, need):
    """Add a one-row constraint J = value · e_dof."""
    n = _open_rows(m, d, 1, need)
    if n < 0:
        return
    d.efc_J[n, dof] = value
    d.efc_J_colind[n, 0] = dof
    d.efc_pos[n] = pos
    d.efc_margin[n] = margin
    _close_rows(m, d, n, 1, 1, floss, ctype, cid, need)


@njit(cache=True)
def _tendon_row(m, d, t, scale, t2, scale2, pos, margin, floss, ctype, cid, need):
    """Add a one-row constraint J = scale ten_J[t] (+ scale2 ten_J[t2] when t2 ≥ 0)."""
    n = _open_rows(m, d, 1, need)
    if n < 0:
        return
    J = d.efc_J
    ind = d.efc_J_colind
    nnz = 0
    for c in range(m.nv):
        v = scale * d.ten_J[t, c]
        if t2 >= 0:
            v += scale2 * d.ten_J[t2, c]
        if v != 0.0:
            J[n, c] = v
            ind[n, nnz] = c
            nnz += 1
    d.efc_pos[n] = pos
    d.efc_margin[n] = margin
    _close_rows(m, d, n, 1, nnz, floss, ctype, cid, need)


# ---------------------------------------------------------------------------------------------
# rows by type


@njit(cache=True)
def equality_frames(m, d, i, q, qn):
    """Weld i's frame rotations: q = q1 ⊗ q_rel and qn = q2⁻¹ (mj_instantiateEquality).

    Body semantics: q1, q2 the bodies' xquat and q_rel = data[6:10]; site semantics: q1, q2
    the sites' world rotations (body xquat ⊗ site_quat) and no q_rel.
    """
    b1, b2 = equality_bodies(m, i)
    if m.eq_objtype[i] == OBJ_SITE:
        quat_mul(q, d.xquat[b1], m.site_quat[m.eq_obj1id[i]])
        quat_mul(qn, d.xquat[b2], m.site_quat[m.eq_obj2id[i]])
    else:
        quat_mul(q, d.xquat[b1], m.eq_data[i, 6:10])
        for k in range(4):
            qn[k] = d.xquat[b2, k]
    qn[1] = -qn[1]
    qn[2] = -qn[2]
    qn[3] = -qn[3]


@njit(cache=True)
def equality_anchors(m, d, i, p1, p2):
    """World anchors of connect/weld i: p1 on body1, p2 on body2 (mj_equalityAnchors).

    connect: data[0:3] is the anchor in body1's frame, data[3:6] the same point at qpos0 in
    body2's frame. weld: data[0:3] is the anchor in body2's frame, data[3:6] in body1's.
    Site semantics: the two sites' positions.
    """
    if m.eq_objtype[i] == OBJ_SITE:
        for k in range(3):
            p1[k] = d.site_xpos[m.eq_obj1id[i], k]
            p2[k] = d.site_xpos[m.eq_obj2id[i], k]
        return
    b1 = m.eq_obj1id[i]
    b2 = m.eq_obj2id[i]
    data = m.eq_data[i]
    if m.eq_type[i] == EQ_CONNECT:
        _local_point(p1, d.xpos[b1], d.xmat[b1], data, 0)
        _local_point(p2, d.xpos[b2], d.xmat[b2], data, 3)
    else:
        _local_point(p1, d.xpos[b1], d.xmat[b1], data, 3)
        _local_point(p2, d.xpos[b2], d.xmat[b2], data, 0)


@njit(cache=True)
def _instantiate_equality(m, d, need):
    """Rows of the active connect, weld and joint equality constraints.

    connect/weld rows span the merged dof chains of both bodies, common dofs included.
    """
    if m.neq == 0:
        return
    J = d.efc_J
    ind = d.efc_J_colind
    w = d.scratch_small[SMALL_EQUALITY:SMALL_EQUALITY + 25]
    p1 = w[0:3]
    p2 = w[3:6]
    q = w[6:10]
    qn = w[10:14]
    q2 = w[14:18]
    q3 = w[18:22]
    ax = w[22:25]
    for i in range(m.neq):
        if not d.eq_active[i]:
            continue
        et = m.eq_type[i]
        data = m.eq_data[i]
        if et == EQ_CONNECT or et == EQ_WELD:
            b1, b2 = equality_bodies(m, i)
            nnz = _chain_count(m, b1, b2, False)
            if nnz == 0:
                continue
            size = 6 if et == EQ_WELD else 3
            n = _open_rows(m, d, size, need)
            if n < 0:
                continue
            equality_anchors(m, d, i, p1, p2)
            for k in range(3):
                d.efc_pos[n + k] = p1[k] - p2[k]
            if et == EQ_WELD:
                ts = data[10]
                # orientation error: vec(q2⁻¹ ⊗ q1 ⊗ q_rel) τ
                equality_frames(m, d, i, q, qn)
                quat_mul(q2, qn, q)
                for k in range(3):
                    d.efc_pos[n + 3 + k] = q2[k + 1] * ts
            for k in range(size):
                d.efc_margin[n + k] = 0.0
            r1 = m.body_rootid[b1]
            r2 = m.body_rootid[b2]
            o10 = p1[0] - d.subtree_com[r1, 0]
            o11 = p1[1] - d.subtree_com[r1, 1]
            o12 = p1[2] - d.subtree_com[r1, 2]
            o20 = p2[0] - d.subtree_com[r2, 0]
            o21 = p2[1] - d.subtree_com[r2, 1]
            o22 = p2[2] - d.subtree_com[r2, 2]
            # J = J(b1, p1) − J(b2, p2), column by column along the merged chain
            da1 = _last_dof(m, b1)
            da2 = _last_dof(m, b2)
            t = nnz - 1
            while da1 >= 0 or da2 >= 0:
                k = max(da1, da2)
                c = d.cdof[k]
                jp0 = jp1 = jp2 = 0.0
                ax[0] = ax[1] = ax[2] = 0.0
                if da1 == k:
                    jp0 = c[3] + c[1] * o12 - c[2] * o11
                    jp1 = c[4] + c[2] * o10 - c[0] * o12
                    jp2 = c[5] + c[0] * o11 - c[1] * o10
                    ax[0] = c[0]
                    ax[1] = c[1]
                    ax[2] = c[2]
                    da1 = m.dof_parentid[da1]
                if da2 == k:
                    jp0 -= c[3] + c[1] * o22 - c[2] * o21
                    jp1 -= c[4] + c[2] * o20 - c[0] * o22
                    jp2 -= c[5] + c[0] * o21 - c[1] * o20
                    ax[0] -= c[0]
                    ax[1] -= c[1]
                    ax[2] -= c[2]
                    da2 = m.dof_parentid[da2]
                ind[n, t] = k
                t -= 1
                J[n, k] = jp0
                J[n + 1, k] = jp1
                J[n + 2, k] = jp2
                if et == EQ_WELD:
                    # rotation rows: ½ τ vec(q2⁻¹ ⊗ (0, Jr1 − Jr2)_col ⊗ q1 ⊗ q_rel)
                    quat_mul_axis(q2, qn, ax)
                    quat_mul(q3, q2, q)
                    J[n + 3, k] = 0.5 * q3[1] * ts
                    J[n + 4, k] = 0.5 * q3[2] * ts
                    J[n + 5, k] = 0.5 * q3[3] * ts
            _close_rows(m, d, n, size, nnz, 0.0, CNSTR_EQUALITY, i, need)
        elif et == EQ_JOINT:
            j1 = m.eq_obj1id[i]
            j2 = m.eq_obj2id[i]
            dof1 = m.jnt_dofadr[j1]
            a1 = m.jnt_qposadr[j1]
            n = _open_rows(m, d, 1, need)
            if n < 0:
                continue
            J[n, dof1] = 1.0
            nnz = 1
            ind[n, 0] = dof1
            if j2 >= 0:
                a2 = m.jnt_qposadr[j2]
                dof2 = m.jnt_dofadr[j2]
                dif = d.qpos[a2] - m.qpos0[a2]
                # r = q1 − q1₀ − (c0 + c1 x + c2 x² + c3 x³ + c4 x⁴), x = q2 − q2₀
                d.efc_pos[n] = (d.qpos[a1] - m.qpos0[a1] - data[0]
                                - (data[1] * dif + data[2] * dif * dif
                                   + data[3] * dif * dif * dif
                                   + data[4] * dif * dif * dif * dif))
                deriv = (data[1] + 2.0 * data[2] * dif + 3.0 * data[3] * dif * dif
                         + 4.0 * data[4] * dif * dif * dif)
                J[n, dof2] -= deriv
                if dof2 != dof1:
                    nnz = 2
                    ind[n, 0] = min(dof1, dof2)
                    ind[n, 1] = max(dof1, dof2)
            else:
                d.efc_pos[n] = d.qpos[a1] - m.qpos0[a1] - data[0]
            d.efc_margin[n] = 0.0
            _close_rows(m, d, n, 1, nnz, 0.0, CNSTR_EQUALITY, i, need)
        elif et == EQ_TENDON:
            t1 = m.eq_obj1id[i]
            t2 = m.eq_obj2id[i]
            pos = d.ten_length[t1] - m.tendon_length0[t1] - data[0]
            deriv = 0.0
            if t2 >= 0:
                # r = L1 − L1₀ − (c0 + c1 x + … + c4 x⁴), x = L2 − L2₀; J = J1 − poly'(x) J2
                dif = d.ten_length[t2] - m.tendon_length0[t2]
                pos -= (data[1] * dif + data[2] * dif * dif + data[3] * dif * dif * dif
                        + data[4] * dif * dif * dif * dif)
                deriv = (data[1] + 2.0 * data[2] * dif + 3.0 * data[3] * dif * dif
                         + 4.0 * data[4] * dif * dif * dif)
            _tendon_row(m, d, np.int64(t1), 1.0, np.int64(t2), -deriv, pos, 0.0, 0.0,
                        np.int64(CNSTR_EQUALITY), i, need)


@njit(cache=True)
def _instantiate_friction(m, d, need):
    """One row per dof with friction loss, J = e_i; then per tendon, J = ten_J."""
    for i in range(m.nv):
        if m.dof_frictionloss[i] == 0.0:
            continue
        _one_dof_row(m, d, i, 1.0, 0.0, 0.0, m.dof_frictionloss[i], CNSTR_FRICTION_DOF, i,
                     need)
    for t in range(m.ntendon):
        if m.tendon_frictionloss[t] > 0.0:
            _tendon_row(m, d, t, 1.0, np.int64(-1), 0.0, 0.0, 0.0, m.tendon_frictionloss[t],
                        np.int64(CNSTR_FRICTION_TENDON), t, need)


@njit(cache=True)
def _instantiate_limit(m, d, need):
    """Limit rows: hinge/slide sides with dist < margin, ball cone limits, tendon sides."""
    for i in range(m.njnt):
        if not m.jnt_limited[i]:
            continue
        jt = m.jnt_type[i]
        margin = m.jnt_margin[i]
        if jt == JNT_SLIDE or jt == JNT_HINGE:
            value = d.qpos[m.jnt_qposadr[i]]
            for side in (-1, 1):
                # dist = side (range[side] − q), negative when violated
                dist = side * (m.jnt_range[i, (side + 1) // 2] - value)
                if dist < margin:
                    _one_dof_row(m, d, m.jnt_dofadr[i], -float(side), dist, margin, 0.0,
                                 CNSTR_LIMIT_JOINT, i, need)
        elif jt == JNT_BALL:
            a = m.jnt_qposadr[i]
            w, x, y, z = d.qpos[a], d.qpos[a + 1], d.qpos[a + 2], d.qpos[a + 3]
            nrm = math.sqrt(w * w + x * x + y * y + z * z)
            if nrm < MINVAL:
                w, x, y, z = 1.0, 0.0, 0.0, 0.0
            elif abs(nrm - 1.0) > MINVAL:
                w, x, y, z = w / nrm, x / nrm, y / nrm, z / nrm
            # rotation vector of the joint quaternion, angle wrapped to (−π, π]
            s = math.sqrt(x * x + y * y + z * z)
            if s < MINVAL:
                ux, uy, uz = 1.0, 0.0, 0.0
            else:
                ux, uy, uz = x / s, y / s, z / s
            angle = 2.0 * math.atan2(s, w)
            if angle > math.pi:
                angle -= 2.0 * math.pi
            vx, vy, vz = ux * angle, uy * angle, uz * angle
            value = math.sqrt(vx * vx + vy * vy + vz * vz)
            if value < MINVAL:
                vx, vy, vz = 1.0, 0.0, 0.0
            else:
                vx, vy, vz = vx / value, vy / value, vz / value
            dist = max(m.jnt_range[i, 0], m.jnt_range[i, 1]) - value
            if dist < margin:
                n = _open_rows(m, d, 1, need)
                if n < 0:
                    continue
                dof = m.jnt_dofadr[i]
                d.efc_J[n, dof] = -vx
                d.efc_J[n, dof + 1] = -vy
                d.efc_J[n, dof + 2] = -vz
                for k in range(3):
                    d.efc_J_colind[n, k] = dof + k
                d.efc_pos[n] = dist
                d.efc_margin[n] = margin
                _close_rows(m, d, n, 1, 3, 0.0, CNSTR_LIMIT_JOINT, i, need)
    for t in range(m.ntendon):
        if not m.tendon_limited[t]:
            continue
        value = d.ten_length[t]
        margin = m.tendon_margin[t]
        for side in (-1, 1):
            # dist = side (range[side] − L), J = −side ten_J
            dist = side * (m.tendon_range[t, (side + 1) // 2] - value)
            if dist < margin:
                _tendon_row(m, d, t, -float(side), np.int64(-1), 0.0, dist, margin, 0.0,
                            np.int64(CNSTR_LIMIT_TENDON), t, need)


# ---------------------------------------------------------------------------------------------
# contacts (rows come from d.contact_*, written by the collision stage)


@njit(cache=True)
def _instantiate_contact(m, d, need):
    """Rows of each active contact, from J(body2) − J(body1) rotated into the contact frame.

    Frame rows: normal, tangent 1, tangent 2 (translation), then for condim 4 and 6 the
    rotations about the normal and, for 6, the tangents. Pyramidal: edges J_0 ± μ_k J_k.
    The rows span the two bodies' dof chains without their common dofs, whose columns of
    J(body2) − J(body1) vanish (mj_jacDifPair with skipcommon).
    """
    J = d.efc_J
    ind = d.efc_J_colind
    efc_pos = d.efc_pos
    efc_margin = d.efc_margin
    fr = d.contact_frame
    cpos = d.contact_pos
    cdim = d.contact_dim
    cgeom = d.contact_geom
    cfric = d.contact_friction
    cexcl = d.contact_exclude
    cdist = d.contact_dist
    cmargin = d.contact_includemargin
    com = d.subtree_com
    cdof = d.cdof
    geom_bodyid = m.geom_bodyid
    rootid = m.body_rootid
    parent = m.dof_parentid
    pyramidal = m.opt_cone[0] == 0
    for c in range(d.ncon[0]):
        if cexcl[c]:
            continue
        dim = cdim[c]
        if dim == 1:
            size = 1
            ctype = CNSTR_CONTACT_FRICTIONLESS
        elif pyramidal:
            # all 2(dim − 1) edges are added together (a contact is never split)
            size = 2 * (dim - 1)
            ctype = CNSTR_CONTACT_PYRAMIDAL
        else:
            size = dim
            ctype = CNSTR_CONTACT_ELLIPTIC
        n = _open_rows(m, d, size, need)
        if n < 0:
            continue
        dist = cdist[c]
        imargin = cmargin[c]
        for r in range(size):
            efc_pos[n + r] = dist
            efc_margin[n + r] = imargin
        if ctype == CNSTR_CONTACT_ELLIPTIC:
            for r in range(1, size):
                efc_pos[n + r] = 0.0
                efc_margin[n + r] = 0.0
        b1 = geom_bodyid[cgeom[c, 0]]
        b2 = geom_bodyid[cgeom[c, 1]]
        r1 = rootid[b1]
        r2 = rootid[b2]
        o10 = cpos[c, 0] - com[r1, 0]
        o11 = cpos[c, 1] - com[r1, 1]
        o12 = cpos[c, 2] - com[r1, 2]
        o20 = cpos[c, 0] - com[r2, 0]
        o21 = cpos[c, 1] - com[r2, 1]
        o22 = cpos[c, 2] - com[r2, 2]
        f0 = fr[c, 0]
        f1 = fr[c, 1]
        f2 = fr[c, 2]
        f3 = fr[c, 3]
        f4 = fr[c, 4]
        f5 = fr[c, 5]
        f6 = fr[c, 6]
        f7 = fr[c, 7]
        f8 = fr[c, 8]
        mu1 = cfric[c, 0]
        mu2 = cfric[c, 1]
        mu3 = cfric[c, 2]
        mu4 = cfric[c, 3]
        mu5 = cfric[c, 4]
        da1 = _last_dof(m, b1)
        da2 = _last_dof(m, b2)
        # merged chains from the leaves down, common dofs left out (mj_mergeChain)
        nnz = 0
        while da1 != da2:
            k = max(da1, da2)
            c0 = cdof[k, 0]
            c1 = cdof[k, 1]
            c2 = cdof[k, 2]
            c3 = cdof[k, 3]
            c4 = cdof[k, 4]
            c5 = cdof[k, 5]
            # column k of J(body2) − J(body1): translation jp, rotation jr
            if da2 == k:
                jp0 = c3 + c1 * o22 - c2 * o21
                jp1 = c4 + c2 * o20 - c0 * o22
                jp2 = c5 + c0 * o21 - c1 * o20
                jr0 = c0
                jr1 = c1
                jr2 = c2
                da2 = parent[da2]
            else:
                jp0 = -(c3 + c1 * o12 - c2 * o11)
                jp1 = -(c4 + c2 * o10 - c0 * o12)
                jp2 = -(c5 + c0 * o11 - c1 * o10)
                jr0 = -c0
                jr1 = -c1
                jr2 = -c2
                da1 = parent[da1]
            ind[n, nnz] = k
            nnz += 1
            # frame rows: v = frame (J2 − J1) column k; pyramidal edges v0 ± μ_j v_j
            v0 = f0 * jp0 + f1 * jp1 + f2 * jp2
            if dim == 1:
                J[n, k] = v0
                continue
            v1 = f3 * jp0 + f4 * jp1 + f5 * jp2
            v2 = f6 * jp0 + f7 * jp1 + f8 * jp2
            if pyramidal:
                J[n, k] = v0 + mu1 * v1
                J[n + 1, k] = v0 - mu1 * v1
                J[n + 2, k] = v0 + mu2 * v2
                J[n + 3, k] = v0 - mu2 * v2
            else:
                J[n, k] = v0
                J[n + 1, k] = v1
                J[n + 2, k] = v2
            if dim > 3:
                v3 = f0 * jr0 + f1 * jr1 + f2 * jr2
                if pyramidal:
                    J[n + 4, k] = v0 + mu3 * v3
                    J[n + 5, k] = v0 - mu3 * v3
                else:
                    J[n + 3, k] = v3
                if dim > 4:
                    v4 = f3 * jr0 + f4 * jr1 + f5 * jr2
                    v5 = f6 * jr0 + f7 * jr1 + f8 * jr2
                    if pyramidal:
                        J[n + 6, k] = v0 + mu4 * v4
                        J[n + 7, k] = v0 - mu4 * v4
                        J[n + 8, k] = v0 + mu5 * v5
                        J[n + 9, k] = v0 - mu5 * v5
                    else:
                        J[n + 4, k] = v4
                        J[n + 5, k] = v5
        # the index increasing
        for j in range(nnz // 2):
            tmp = ind[n, j]
            ind[n, j] = ind[n, nnz - 1 - j]
            ind[n, nnz - 1 - j] = tmp
        _close_rows(m, d, n, size, nnz, 0.0, ctype, c, need)


# ---------------------------------------------------------------------------------------------
# the stage


@njit(cache=True)
def make_constraint_stage(m, d):
    """All rows, diagApprox and impedance (mj_makeConstraint); returns rows requested.

    A negative return −n means n rows were requested but some constraints did not fit into
    njmax; d.warning_cnstrfull is updated then.
    """
    d.ne[0] = 0
    d.nf[0] = 0
    d.nl[0] = 0
    d.nefc[0] = 0
    flags = m.opt_disableflags[0]
    if flags & DSBL_CONSTRAINT:
        return 0
    need = d.scratch_small_l[0:2]  # rows requested, rows that did not fit
    need[0] = 0
    need[1] = 0
    if not flags & DSBL_EQUALITY:
        _instantiate_equality(m, d, need)
    if not flags & DSBL_FRICTIONLOSS:
        _instantiate_friction(m, d, need)
    if not flags & DSBL_LIMIT:
        _instantiate_limit(m, d, need)
    if not flags & DSBL_CONTACT and m.nv > 0:
        _instantiate_contact(m, d, need)
    if d.nefc[0] > 0:
        softness(m, d, np.bool_(False))
        if m.opt_enableflags[0] & ENBL_DIAGEXACT:
            # the exact diagonal (needs the current M's factor), impedance from it
            diag_exact(m, d)
            softness(m, d, np.bool_(True))
    if need[1] > 0:
        d.warning_cnstrfull[0] += 1
        d.warning_cnstrfull[1] = need[0]
        return -need[0]
    return need[0]


def warn_cnstrfull(m, d, need, fname, stacklevel=3):
    """Warn that the constraint rows did not fit into m.njmax (need = −rows requested)."""
    warnings.warn(
        f"{fname}: the constraints need {-need} rows but the model has room for "
        f"njmax = {m.njmax}; the constraints that did not fit were dropped "
        f"(d.warning_cnstrfull[0] = {int(d.warning_cnstrfull[0])} such calls so far). "
        f"Compile the model with a larger njmax.", JointspaceWarning, stacklevel=stacklevel)
