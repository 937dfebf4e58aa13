"""Constraint rows (efc_*): equality constraints, friction loss, joint limits, contacts.

`make_constraint(m, d)` fills rows 0 … nefc−1 of Data's efc_* arrays in MuJoCo's order
(mj_makeConstraint, engine_core_constraint.c; Todorov 2014, 004 §II Phase II):

  equality   connect  3 rows  r = p1 − p2,  J = Jp(b1, p1) − Jp(b2, p2)
             weld     6 rows  r = (p1 − p2, τ vec(q2⁻¹ ⊗ q1 ⊗ q_rel)), rotation rows
                              J_rot = τ/2 vec(q2⁻¹ ⊗ (0, Jr1 − Jr2) ⊗ q1 ⊗ q_rel)
             joint    1 row   r = q1 − q1₀ − poly(q2 − q2₀),  J = e1 − poly'(q2 − q2₀) e2
  friction   1 row per dof with frictionloss > 0: J = e_i, force bounded by ±frictionloss
  limits     hinge/slide: one row per side with dist < margin, J = ±e_i (lower: +1);
             ball: one row when the rotation angle exceeds max(range), J = −axis
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

Softness (mj_makeImpedance; 004 §V eq. 22–28). For each constraint with solref (τ, ζ) and
solimp (d0, dwidth, width, midpoint, power):
  impedance  d(r) rises from d0 at r = margin to dwidth at |r − margin| ≥ width along a
             two-piece power curve joined at the midpoint
  R          = max(mjMINVAL, (1 − d)/d · diagApprox); friction rows of a contact get
             R_1 = R_0 / impratio and, for elliptic cones, R_j μ_j² = R_1 μ_1² (eq. 22);
             pyramidal edges all get 2 μ² R_0 with μ = μ_1 √(R_1/R_0)
  B, K       standard (τ > 0): B = 2/(dwidth τ), K = 1/(dwidth² τ² ζ²), τ ≥ 2·timestep;
             direct (τ ≤ 0): B = −ζ/dwidth, K = −τ/dwidth²; K = 0 on friction rows
  aref       = −B vel − K d (pos − margin), minus J̇ qvel on connect/weld rows
diagApprox approximates diag(J M⁻¹ Jᵀ) from body_invweight0/dof_invweight0 (computed at
compile time by `set_constants`), never forming A (004 §IV). After R is set, diagApprox is
adjusted so that R = (1 − d)/d · diagApprox holds exactly (MuJoCo ≥ 3 calls this efc_diagA).

The paper's (ε, κ) parameterization maps onto solref/solimp exactly: see
`softness_from_epsilon_kappa`.
"""

import math
import warnings

import numpy as np
from numba import njit

from jointspace._numba import entry
from jointspace.errors import JointspaceWarning
from jointspace.rotation import quat_mul
from jointspace.types import (
    DSBL_CONSTRAINT,
    DSBL_CONTACT,
    DSBL_EQUALITY,
    DSBL_FRICTIONLOSS,
    DSBL_LIMIT,
    DSBL_REFSAFE,
    EQ_CONNECT,
    EQ_JOINT,
    EQ_WELD,
    JNT_BALL,
    JNT_FREE,
    JNT_HINGE,
    JNT_SLIDE,
    MAXIMP,
    MINIMP,
    MINVAL,
)

# constraint row types (MuJoCo's mjtConstraint)
CNSTR_EQUALITY = 0
CNSTR_FRICTION_DOF = 1
CNSTR_FRICTION_TENDON = 2
CNSTR_LIMIT_JOINT = 3
CNSTR_LIMIT_TENDON = 4
CNSTR_CONTACT_FRICTIONLESS = 5
CNSTR_CONTACT_PYRAMIDAL = 6
CNSTR_CONTACT_ELLIPTIC = 7

# row states at the solution (MuJoCo's mjtConstraintState)
STATE_SATISFIED = 0
STATE_QUADRATIC = 1
STATE_LINEARNEG = 2
STATE_LINEARPOS = 3
STATE_CONE = 4

# option disable bits used here (MuJoCo's mjtDisableBit)

_SOLREF_DEFAULT = (0.02, 1.0)


# ---------------------------------------------------------------------------------------------
# small helpers


@njit(cache=True)
def _local_point(out, xpos, xmat, v, a):
    """World point out = xpos + xmat v[a:a+3] of a point given in a body frame."""
    for r in range(3):
        out[r] = (xpos[r] + xmat[3 * r] * v[a] + xmat[3 * r + 1] * v[a + 1]
                  + xmat[3 * r + 2] * v[a + 2])


@njit(cache=True)
def _quat_mul_axis(out, q, ax):
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
def _quat_deriv(out, q, w):
    """Derivative out = ½ (0, w) ⊗ q of q under the world angular velocity w."""
    out[0] = 0.5 * (-w[0] * q[1] - w[1] * q[2] - w[2] * q[3])
    out[1] = 0.5 * (w[0] * q[0] + w[1] * q[3] - w[2] * q[2])
    out[2] = 0.5 * (-w[0] * q[3] + w[1] * q[0] + w[2] * q[1])
    out[3] = 0.5 * (w[0] * q[2] - w[1] * q[1] + w[2] * q[0])


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


# ---------------------------------------------------------------------------------------------
# rows by type


@njit(cache=True)
def _equality_anchors(m, d, i, p1, p2):
    """World anchors of connect/weld i: p1 on body1, p2 on body2 (mj_equalityAnchors).

    connect: data[0:3] is the anchor in body1's frame, data[3:6] the same point at qpos0 in
    body2's frame. weld: data[0:3] is the anchor in body2's frame, data[3:6] in body1's.
    """
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
    p1 = np.empty(3)
    p2 = np.empty(3)
    q = np.empty(4)
    qn = np.empty(4)
    q2 = np.empty(4)
    q3 = np.empty(4)
    ax = np.empty(3)
    for i in range(m.neq):
        if not d.eq_active[i]:
            continue
        et = m.eq_type[i]
        data = m.eq_data[i]
        if et == EQ_CONNECT or et == EQ_WELD:
            b1 = m.eq_obj1id[i]
            b2 = m.eq_obj2id[i]
            nnz = _chain_count(m, b1, b2, False)
            if nnz == 0:
                continue
            size = 6 if et == EQ_WELD else 3
            n = _open_rows(m, d, size, need)
            if n < 0:
                continue
            _equality_anchors(m, d, i, p1, p2)
            for k in range(3):
                d.efc_pos[n + k] = p1[k] - p2[k]
            if et == EQ_WELD:
                ts = data[10]
                # orientation error: vec(q2⁻¹ ⊗ q1 ⊗ q_rel) τ
                quat_mul(q, d.xquat[b1], data[6:10])
                qn[0] = d.xquat[b2, 0]
                qn[1] = -d.xquat[b2, 1]
                qn[2] = -d.xquat[b2, 2]
                qn[3] = -d.xquat[b2, 3]
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
                    _quat_mul_axis(q2, qn, ax)
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


@njit(cache=True)
def _instantiate_friction(m, d, need):
    """One row per dof with friction loss: J = e_i."""
    for i in range(m.nv):
        if m.dof_frictionloss[i] == 0.0:
            continue
        _one_dof_row(m, d, i, 1.0, 0.0, 0.0, m.dof_frictionloss[i], CNSTR_FRICTION_DOF, i,
                     need)


@njit(cache=True)
def _instantiate_limit(m, d, need):
    """Joint-limit rows: hinge/slide sides with dist < margin, ball cone limits."""
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


# ---------------------------------------------------------------------------------------------
# softness


@njit(cache=True, inline="always")
def _impedance(d0, dw, width, mid, power, pos, margin):
    """(d, ∂d/∂pos) of the solimp impedance curve at pos − margin (MuJoCo getimpedance).

    The default power 2 is evaluated by products (no pow calls; equal to pow's result to
    the last bit or so).
    """
    if d0 == dw or width <= MINVAL:
        return 0.5 * (d0 + dw), 0.0
    x = (pos - margin) / width
    sgn = 1.0
    if x < 0:
        x = -x
        sgn = -1.0
    if x >= 1.0 or x <= 0.0:
        return (dw if x >= 1.0 else d0), 0.0
    if power == 1.0:
        y = x
        yp = 1.0
    elif x <= mid:
        # y = a x^p on [0, midpoint]
        if power == 2.0:
            a = 1.0 / mid
            xp = x
        else:
            a = 1.0 / mid ** (power - 1.0)
            xp = x ** (power - 1.0)
        y = a * xp * x
        yp = power * a * xp
    else:
        # y = 1 − b (1 − x)^p on [midpoint, 1]
        if power == 2.0:
            b = 1.0 / (1.0 - mid)
            xp = 1.0 - x
        else:
            b = 1.0 / (1.0 - mid) ** (power - 1.0)
            xp = (1.0 - x) ** (power - 1.0)
        y = 1.0 - b * xp * (1.0 - x)
        yp = power * b * xp
    return d0 + y * (dw - d0), yp * sgn * (dw - d0) / width


@njit(cache=True, inline="always")
def _solparams(m, d, i):
    """Row i's solref (2), solreffriction (2), solimp (5): nine scalars, sanitized (getsolparam).

    Scalars are read straight from the Model/Data fields in each branch: an array variable
    chosen by branch would cost Numba a reference-count pair per constraint.
    """
    cid = d.efc_id[i]
    t = d.efc_type[i]
    fref0 = 0.0
    fref1 = 0.0
    if t == CNSTR_EQUALITY:
        ref0 = m.eq_solref[cid, 0]
        ref1 = m.eq_solref[cid, 1]
        i0 = m.eq_solimp[cid, 0]
        i1 = m.eq_solimp[cid, 1]
        i2 = m.eq_solimp[cid, 2]
        i3 = m.eq_solimp[cid, 3]
        i4 = m.eq_solimp[cid, 4]
    elif t == CNSTR_LIMIT_JOINT:
        ref0 = m.jnt_solref[cid, 0]
        ref1 = m.jnt_solref[cid, 1]
        i0 = m.jnt_solimp[cid, 0]
        i1 = m.jnt_solimp[cid, 1]
        i2 = m.jnt_solimp[cid, 2]
        i3 = m.jnt_solimp[cid, 3]
        i4 = m.jnt_solimp[cid, 4]
    elif t == CNSTR_FRICTION_DOF:
        ref0 = m.dof_solref[cid, 0]
        ref1 = m.dof_solref[cid, 1]
        i0 = m.dof_solimp[cid, 0]
        i1 = m.dof_solimp[cid, 1]
        i2 = m.dof_solimp[cid, 2]
        i3 = m.dof_solimp[cid, 3]
        i4 = m.dof_solimp[cid, 4]
    else:
        ref0 = d.contact_solref[cid, 0]
        ref1 = d.contact_solref[cid, 1]
        i0 = d.contact_solimp[cid, 0]
        i1 = d.contact_solimp[cid, 1]
        i2 = d.contact_solimp[cid, 2]
        i3 = d.contact_solimp[cid, 3]
        i4 = d.contact_solimp[cid, 4]
        fref0 = d.contact_solreffriction[cid, 0]
        fref1 = d.contact_solreffriction[cid, 1]
    # standard (both > 0) or direct (both ≤ 0), not mixed
    if (ref0 > 0) != (ref1 > 0):
        ref0 = _SOLREF_DEFAULT[0]
        ref1 = _SOLREF_DEFAULT[1]
    refsafe = (m.opt_disableflags[0] & DSBL_REFSAFE) == 0
    h2 = 2.0 * m.opt_timestep[0]
    if refsafe and ref0 > 0:
        ref0 = max(ref0, h2)
    if (fref0 > 0) != (fref1 > 0):
        fref0 = 0.0
        fref1 = 0.0
    if refsafe and fref0 > 0:
        fref0 = max(fref0, h2)
    return (ref0, ref1, fref0, fref1,
            min(MAXIMP, max(MINIMP, i0)), min(MAXIMP, max(MINIMP, i1)),
            max(0.0, i2), min(MAXIMP, max(MINIMP, i3)), max(1.0, i4))


@njit(cache=True)
def _softness(m, d):
    """efc_diagApprox, efc_R, efc_D, efc_KBIP, one constraint at a time (mj_makeImpedance).

    Per constraint: the diagApprox of its rows (diag(J M⁻¹ Jᵀ) approximated from the qpos0
    inverse weights), one impedance (connect/weld at |pos| over their rows), R = (1 − d)/d ·
    diagApprox and the reference coefficients of each row, the contacts' friction-dimension
    R (004 eq. 22), then D = 1/R and diagApprox = R d/(1 − d).
    """
    nefc = d.nefc[0]
    R = d.efc_R
    D = d.efc_D
    KBIP = d.efc_KBIP
    efc_type = d.efc_type
    efc_id = d.efc_id
    efc_pos = d.efc_pos
    efc_margin = d.efc_margin
    dA = d.efc_diagApprox
    biw = m.body_invweight0
    diw = m.dof_invweight0
    i = 0
    while i < nefc:
        sref0, sref1, fref0, fref1, d0, dw, width, mid, power = _solparams(m, d, i)
        t = efc_type[i]
        cid = efc_id[i]
        dim = 1
        pos = efc_pos[i]
        if t == CNSTR_EQUALITY:
            et = m.eq_type[cid]
            b1 = m.eq_obj1id[cid]
            b2 = m.eq_obj2id[cid]
            if et == EQ_WELD or et == EQ_CONNECT:
                # rows 0-2 translation, 3-5 (weld) rotation
                dim = 6 if et == EQ_WELD else 3
                tran = biw[b1, 0] + biw[b2, 0]
                rot = biw[b1, 1] + biw[b2, 1]
                s = 0.0
                for j in range(dim):
                    s += efc_pos[i + j] * efc_pos[i + j]
                    dA[i + j] = tran if j < 3 else rot
                pos = math.sqrt(s)
            else:
                dA[i] = diw[m.jnt_dofadr[b1]]
                if b2 >= 0:
                    dA[i] += diw[m.jnt_dofadr[b2]]
        elif t == CNSTR_FRICTION_DOF:
            dA[i] = diw[cid]
        elif t == CNSTR_LIMIT_JOINT:
            dA[i] = diw[m.jnt_dofadr[cid]]
        else:
            dim = _diag_approx_contact(m, d, i)
        imp, impP = _impedance(d0, dw, width, mid, power, pos, efc_margin[i])
        dwidth2 = dw * dw
        for j in range(dim):
            r = i + j
            # R = (1 − d)/d · diagApprox
            R[r] = max(MINVAL, (1.0 - imp) * dA[r] / imp)
            tr = efc_type[r]
            ell_fric = tr == CNSTR_CONTACT_ELLIPTIC and j > 0
            if ell_fric and (fref0 != 0.0 or fref1 != 0.0):
                ref0 = fref0
                ref1 = fref1
            else:
                ref0 = sref0
                ref1 = sref1
            if tr == CNSTR_FRICTION_DOF or tr == CNSTR_FRICTION_TENDON or ell_fric:
                KBIP[r, 0] = 0.0
            elif ref0 > 0:
                # K = 1 / (dwidth² τ² ζ²)
                KBIP[r, 0] = 1.0 / max(MINVAL, dwidth2 * ref0 * ref0 * ref1 * ref1)
            else:
                KBIP[r, 0] = -ref0 / max(MINVAL, dwidth2)
            if ref1 > 0:
                # B = 2 / (dwidth τ)
                KBIP[r, 1] = 2.0 / max(MINVAL, dw * ref0)
            else:
                KBIP[r, 1] = -ref1 / max(MINVAL, dw)
            KBIP[r, 2] = imp
            KBIP[r, 3] = impP
        # frictional contacts: impratio and the cone's friction-dimension R (004 eq. 22)
        if t == CNSTR_CONTACT_PYRAMIDAL or t == CNSTR_CONTACT_ELLIPTIC:
            _contact_friction_r(m, d, i)
        for r in range(i, i + dim):
            D[r] = 1.0 / R[r]
            dA[r] = R[r] * imp / (1.0 - imp)
        i += dim


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


@njit(cache=True, inline="always")
def _diag_approx_contact(m, d, i):
    """Fill diagApprox of the contact starting at row i; returns its number of rows.

    tran, rot = Σ over both bodies of body_invweight0; pyramidal edges get
    tran + μ_k² (tran or rot).
    """
    c = d.efc_id[i]
    dim = d.contact_dim[c]
    b1 = m.geom_bodyid[d.contact_geom[c, 0]]
    b2 = m.geom_bodyid[d.contact_geom[c, 1]]
    tran = m.body_invweight0[b1, 0] + m.body_invweight0[b2, 0]
    rot = m.body_invweight0[b1, 1] + m.body_invweight0[b2, 1]
    dA = d.efc_diagApprox
    t = d.efc_type[i]
    if t == CNSTR_CONTACT_FRICTIONLESS:
        dA[i] = tran
        return 1
    if t == CNSTR_CONTACT_ELLIPTIC:
        for j in range(dim):
            dA[i + j] = tran if j < 3 else rot
        return dim
    for j in range(dim - 1):
        fr = d.contact_friction[c, j]
        v = tran + fr * fr * (tran if j < 2 else rot)
        dA[i + 2 * j] = v
        dA[i + 2 * j + 1] = v
    return 2 * (dim - 1)


@njit(cache=True, inline="always")
def _contact_friction_r(m, d, i):
    """Friction-dimension R of the contact starting at row i; returns its number of rows.

    R_1 = R_0 / impratio, μ = μ_1 √(R_1/R_0). Elliptic: R_j μ_j² = R_1 μ_1² (004 eq. 22).
    Pyramidal: every edge gets 2 μ² R_0, which matches the elliptic cone's normal and
    friction impedance.
    """
    c = d.efc_id[i]
    dim = d.contact_dim[c]
    fr = d.contact_friction
    R = d.efc_R
    R[i + 1] = R[i] / max(MINVAL, m.opt_impratio[0])
    mu = fr[c, 0] * math.sqrt(R[i + 1] / R[i])
    if d.efc_type[i] == CNSTR_CONTACT_ELLIPTIC:
        for j in range(1, dim - 1):
            R[i + j + 1] = R[i + 1] * fr[c, 0] * fr[c, 0] / (fr[c, j] * fr[c, j])
        return dim
    rpy = 2.0 * mu * mu * R[i]
    n = 2 * (dim - 1)
    for j in range(n):
        R[i + j] = rpy
    return n


# ---------------------------------------------------------------------------------------------
# reference acceleration


@njit(cache=True)
def _jac_dot_qvel_pair(m, d, body, point, outp, outr):
    """outp, outr += J̇p qvel, J̇r qvel of a point fixed to `body` (mj_jacDot times qvel).

    Along the dof chain: J̇r_i = ċdof_i,rot;  J̇p_i = ċdof_i,lin + ċdof_i,rot × o
    + cdof_i,rot × v_p, with o = point − subtree_com[root] and v_p the point's velocity;
    for quaternion dofs ċdof_i = cvel[body(i)] ×ₘ cdof_i.
    """
    root = m.body_rootid[body]
    o0 = point[0] - d.subtree_com[root, 0]
    o1 = point[1] - d.subtree_com[root, 1]
    o2 = point[2] - d.subtree_com[root, 2]
    v = d.cvel[body]
    # point velocity: v_lin + ω × o
    pv0 = v[3] + v[1] * o2 - v[2] * o1
    pv1 = v[4] + v[2] * o0 - v[0] * o2
    pv2 = v[5] + v[0] * o1 - v[1] * o0
    b = m.body_weldid[body]
    if m.body_dofnum[b] == 0:
        return
    i = m.body_dofadr[b] + m.body_dofnum[b] - 1
    while i >= 0:
        c = d.cdof[i]
        jnt = m.dof_jntid[i]
        jt = m.jnt_type[jnt]
        if jt == JNT_BALL or (jt == JNT_FREE and i >= m.jnt_dofadr[jnt] + 3):
            w = d.cvel[m.dof_bodyid[i]]
            cd0 = w[1] * c[2] - w[2] * c[1]
            cd1 = w[2] * c[0] - w[0] * c[2]
            cd2 = w[0] * c[1] - w[1] * c[0]
            cd3 = w[1] * c[5] - w[2] * c[4] + w[4] * c[2] - w[5] * c[1]
            cd4 = w[2] * c[3] - w[0] * c[5] + w[5] * c[0] - w[3] * c[2]
            cd5 = w[0] * c[4] - w[1] * c[3] + w[3] * c[1] - w[4] * c[0]
        else:
            cd = d.cdof_dot[i]
            cd0, cd1, cd2, cd3, cd4, cd5 = cd[0], cd[1], cd[2], cd[3], cd[4], cd[5]
        qv = d.qvel[i]
        outr[0] += cd0 * qv
        outr[1] += cd1 * qv
        outr[2] += cd2 * qv
        outp[0] += (cd3 + cd1 * o2 - cd2 * o1 + c[1] * pv2 - c[2] * pv1) * qv
        outp[1] += (cd4 + cd2 * o0 - cd0 * o2 + c[2] * pv0 - c[0] * pv2) * qv
        outp[2] += (cd5 + cd0 * o1 - cd1 * o0 + c[0] * pv1 - c[1] * pv0) * qv
        i = m.dof_parentid[i]


@njit(cache=True)
def _jdotv_equality(m, d):
    """Subtract J̇ qvel from aref on connect and weld rows (MuJoCo ≥ 3.3's mj_Jdotv)."""
    ne = d.ne[0]
    p1 = np.empty(3)
    p2 = np.empty(3)
    jp1 = np.empty(3)
    jr1 = np.empty(3)
    jp2 = np.empty(3)
    jr2 = np.empty(3)
    q0r = np.empty(4)
    nq1 = np.empty(4)
    qd0 = np.empty(4)
    qd0r = np.empty(4)
    nqd1 = np.empty(4)
    dw = np.empty(3)
    djr = np.empty(3)
    ta = np.empty(4)
    t1 = np.empty(4)
    t2 = np.empty(4)
    t3 = np.empty(4)
    row = 0
    while row < ne:
        eid = d.efc_id[row]
        et = m.eq_type[eid]
        if et != EQ_CONNECT and et != EQ_WELD:
            while row < ne and d.efc_id[row] == eid:
                row += 1
            continue
        b1 = m.eq_obj1id[eid]
        b2 = m.eq_obj2id[eid]
        _equality_anchors(m, d, eid, p1, p2)
        jp1[:] = 0.0
        jr1[:] = 0.0
        jp2[:] = 0.0
        jr2[:] = 0.0
        _jac_dot_qvel_pair(m, d, b1, p1, jp1, jr1)
        _jac_dot_qvel_pair(m, d, b2, p2, jp2, jr2)
        for k in range(3):
            d.efc_aref[row + k] -= jp1[k] - jp2[k]
        row += 3
        if et == EQ_WELD:
            data = m.eq_data[eid]
            ts = data[10]
            # d/dt of ½ vec(q2⁻¹ ⊗ (0, (Jr1 − Jr2) v) ⊗ q1 ⊗ q_rel): three product-rule terms
            quat_mul(q0r, d.xquat[b1], data[6:10])
            nq1[0] = d.xquat[b2, 0]
            nq1[1] = -d.xquat[b2, 1]
            nq1[2] = -d.xquat[b2, 2]
            nq1[3] = -d.xquat[b2, 3]
            w1 = d.cvel[b1, 0:3]
            w2 = d.cvel[b2, 0:3]
            for k in range(3):
                dw[k] = w1[k] - w2[k]
                djr[k] = jr1[k] - jr2[k]
            _quat_deriv(qd0, d.xquat[b1], w1)
            quat_mul(qd0r, qd0, data[6:10])
            _quat_deriv(nqd1, d.xquat[b2], w2)
            nqd1[1] = -nqd1[1]
            nqd1[2] = -nqd1[2]
            nqd1[3] = -nqd1[3]
            _quat_mul_axis(ta, nqd1, dw)
            quat_mul(t1, ta, q0r)
            _quat_mul_axis(ta, nq1, djr)
            quat_mul(t2, ta, q0r)
            _quat_mul_axis(ta, nq1, dw)
            quat_mul(t3, ta, qd0r)
            for k in range(3):
                d.efc_aref[row + k] -= 0.5 * (t1[k + 1] + t2[k + 1] + t3[k + 1]) * ts
            row += 3


@njit(cache=True)
def reference(m, d):
    """efc_vel = J qvel, efc_aref = −B vel − K I (pos − margin) − J̇ qvel (mj_referenceConstraint).

    Needs the velocity stage (cvel, cdof_dot).
    """
    nefc = d.nefc[0]
    J = d.efc_J
    nnz = d.efc_J_rownnz
    ind = d.efc_J_colind
    qvel = d.qvel
    vel = d.efc_vel
    kb = d.efc_KBIP
    for i in range(nefc):
        s = 0.0
        for j in range(nnz[i]):
            k = np.uint32(ind[i, j])  # unsigned: no negative-index wraparound
            s += J[i, k] * qvel[k]
        vel[i] = s
    pos = d.efc_pos
    margin = d.efc_margin
    aref = d.efc_aref
    for i in range(nefc):
        aref[i] = -kb[i, 1] * vel[i] - kb[i, 0] * kb[i, 2] * (pos[i] - margin[i])
    if d.ne[0] > 0:
        _jdotv_equality(m, d)


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
        _softness(m, d)
    if need[1] > 0:
        d.warning_cnstrfull[0] += 1
        d.warning_cnstrfull[1] = need[0]
        return -need[0]
    return need[0]


@njit(cache=True)
def _make_constraint_reference(m, d):
    """make_constraint_stage, then reference (efc_vel, efc_aref)."""
    need = make_constraint_stage(m, d)
    reference(m, d)
    return need


_k_make = entry.Kernel(_make_constraint_reference)


def warn_cnstrfull(m, d, need, fname, stacklevel=3):
    """Warn that the constraint rows did not fit into m.njmax (need = −rows requested)."""
    warnings.warn(
        f"{fname}: the constraints need {-need} rows but the model has room for "
        f"njmax = {m.njmax}; the constraints that did not fit were dropped "
        f"(d.warning_cnstrfull[0] = {int(d.warning_cnstrfull[0])} such calls so far). "
        f"Compile the model with a larger njmax.", JointspaceWarning, stacklevel=stacklevel)


def make_constraint(m, d):
    """Build the constraint rows efc_* (0 … d.nefc−1) at the current state, in one compiled call.

    Reads the position and velocity stages of `d` (run `jointspace.forward` first, or
    `kinematics(m, d, qpos, qvel)` with the collision stage): writes d.ne, d.nf, d.nl,
    d.nefc and efc_type, efc_id, efc_J, efc_pos, efc_margin, efc_frictionloss,
    efc_diagApprox, efc_R, efc_D, efc_KBIP, efc_vel, efc_aref. See the module docstring for
    the rows and their softness.

    Args:
        m: the Model.
        d: a Data for m.

    Returns:
        The number of rows, d.nefc[0].
    """
    entry.check_pair(m, d, "make_constraint")
    ep = _k_make.ep
    need = ep(m._s, d._s)
    if need < 0:
        warn_cnstrfull(m, d, need, "make_constraint")
    return int(d.nefc[0])


# ---------------------------------------------------------------------------------------------
# softness in the paper's parameters


def softness_from_epsilon_kappa(epsilon, kappa):
    """MuJoCo solref/solimp equivalent to the paper's softness (ε, κ) (004 §V eq. 27–28).

    The paper sets R_ii = max(ε A_ii, r_min), B_ii = 2(1 + ε)/κ, K_ii = (1 + ε)/κ² and
    aref = −B vel − K pos. MuJoCo sets R = (1 − d)/d · A_ii, B = 2/(d τ), and applies
    K' = 1/(d² τ² ζ²) scaled by the impedance d. With a constant impedance d = 1/(1 + ε),
    time constant τ = κ and damping ratio ζ = 1 these coincide: (1 − d)/d = ε,
    2/(d κ) = 2(1 + ε)/κ and d · 1/(d² κ²) = (1 + ε)/κ². r_min is MuJoCo's 1e-15; A_ii is
    diagApprox (the paper's diagonal approximation). MuJoCo's safety clamp τ ≥ 2·timestep
    still applies unless the "refsafe" flag is disabled.

    Args:
        epsilon: impulse-regularization scale ε > 0 (dimensionless).
        kappa: error-reduction time constant κ > 0 (s).

    Returns:
        (solref, solimp): tuples (κ, 1.0) and (d, d, 0.001, 0.5, 2.0), d = 1/(1 + ε).
    """
    epsilon = float(epsilon)
    kappa = float(kappa)
    if not (epsilon > 0 and np.isfinite(epsilon)):
        raise ValueError(f"softness_from_epsilon_kappa: epsilon must be positive and finite, "
                         f"got {epsilon!r}")
    if not (kappa > 0 and np.isfinite(kappa)):
        raise ValueError(f"softness_from_epsilon_kappa: kappa must be positive and finite, "
                         f"got {kappa!r}")
    dimp = 1.0 / (1.0 + epsilon)
    if not MINIMP <= dimp <= MAXIMP:
        raise ValueError(f"softness_from_epsilon_kappa: epsilon = {epsilon} gives impedance "
                         f"{dimp}, outside MuJoCo's [{MINIMP}, {MAXIMP}]; use "
                         f"{1 / MAXIMP - 1:.2e} ≤ epsilon ≤ {1 / MINIMP - 1:.0f}")
    return (kappa, 1.0), (dimp, dimp, 0.001, 0.5, 2.0)


@njit(cache=True)
def cone_info(m, d, cdim, cmu, cfr):
    """Elliptic-cone data per row for the solvers (see jointspace.solver.cost).

    cdim[i] = condim at the first row of an elliptic contact, else 0; cmu[i] = the
    regularized cone's μ = μ_1 √(R_1/R_0); cfr[i, :condim−1] = the contact's friction.
    """
    nefc = d.nefc[0]
    for i in range(nefc):
        cdim[i] = 0
        cmu[i] = 0.0
    i = d.ne[0] + d.nf[0]
    while i < nefc:
        if d.efc_type[i] != CNSTR_CONTACT_ELLIPTIC:
            i += 1
            continue
        c = d.efc_id[i]
        dim = d.contact_dim[c]
        cdim[i] = dim
        cmu[i] = d.contact_friction[c, 0] * math.sqrt(d.efc_R[i + 1] / d.efc_R[i])
        for j in range(dim - 1):
            cfr[i, j] = d.contact_friction[c, j]
        i += dim
