"""Reference accelerations of the constraint rows (mj_referenceConstraint) and cone data.

efc_vel = J qvel; aref = −B efc_vel − K imp (efc_pos − margin), minus J̇ qvel on connect and
weld rows (`jdotv_equality`); B, K and imp come from `jointspace.constraint.softness`.

Moving surfaces and adhesion (MuJoCo 4.0's mj_addSurfaceVel and mj_adhesionRef), each
skipped when its model flag is 0: a contact's efc_vel rows are measured relative to the
moving surfaces, i.e. contact_surfacevel (tangent1, tangent2, spin) is added to the
frictional rows (pyramidal edges: ± μ_k times it), before aref; then an adhesive contact's
aref gains R δ on its normal row (pyramidal: R δ / (2 (dim − 1)) on each edge), which with
the passive pull −δ along the normal (`jointspace.passive`) translates the friction cone
down by δ.
`cone_info` gives the solvers each elliptic contact's dimension and regularized μ.
"""

import math

import numpy as np
from numba import njit

from jointspace.constraint.rows import (
    equality_anchors,
    equality_bodies,
    equality_frames,
    quat_mul_axis,
)
from jointspace.rotation import quat_mul
from jointspace.types import (
    CNSTR_CONTACT_ELLIPTIC,
    CNSTR_CONTACT_FRICTIONLESS,
    CNSTR_CONTACT_PYRAMIDAL,
    EQ_CONNECT,
    EQ_WELD,
    JNT_BALL,
    JNT_FREE,
    OBJ_SITE,
    SMALL_JDOTV,
)


@njit(cache=True)
def _quat_deriv(out, q, w):
    """Derivative out = ½ (0, w) ⊗ q of q under the world angular velocity w."""
    out[0] = 0.5 * (-w[0] * q[1] - w[1] * q[2] - w[2] * q[3])
    out[1] = 0.5 * (w[0] * q[0] + w[1] * q[3] - w[2] * q[2])
    out[2] = 0.5 * (-w[0] * q[3] + w[1] * q[0] + w[2] * q[1])
    out[3] = 0.5 * (w[0] * q[2] - w[1] * q[1] + w[2] * q[0])


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
    if ne == 0:
        return
    w = d.scratch_small[SMALL_JDOTV:SMALL_JDOTV + 60]
    p1 = w[0:3]
    p2 = w[3:6]
    jp1 = w[6:9]
    jr1 = w[9:12]
    jp2 = w[12:15]
    jr2 = w[15:18]
    q0r = w[18:22]
    nq1 = w[22:26]
    qd0 = w[26:30]
    qd0r = w[30:34]
    nqd1 = w[34:38]
    dw = w[38:41]
    djr = w[41:44]
    ta = w[44:48]
    t1 = w[48:52]
    t2 = w[52:56]
    t3 = w[56:60]
    row = 0
    while row < ne:
        eid = d.efc_id[row]
        et = m.eq_type[eid]
        if et != EQ_CONNECT and et != EQ_WELD:
            while row < ne and d.efc_id[row] == eid:
                row += 1
            continue
        b1, b2 = equality_bodies(m, eid)
        equality_anchors(m, d, eid, p1, p2)
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
            equality_frames(m, d, eid, q0r, nq1)
            w1 = d.cvel[b1, 0:3]
            w2 = d.cvel[b2, 0:3]
            for k in range(3):
                dw[k] = w1[k] - w2[k]
                djr[k] = jr1[k] - jr2[k]
            if m.eq_objtype[eid] == OBJ_SITE:
                # site semantics: the derivatives of the sites' world rotations
                quat_mul(qd0, d.xquat[b1], m.site_quat[m.eq_obj1id[eid]])
                _quat_deriv(qd0r, qd0, w1)
                quat_mul(qd0, d.xquat[b2], m.site_quat[m.eq_obj2id[eid]])
                _quat_deriv(nqd1, qd0, w2)
            else:
                _quat_deriv(qd0, d.xquat[b1], w1)
                quat_mul(qd0r, qd0, data[6:10])
                _quat_deriv(nqd1, d.xquat[b2], w2)
            nqd1[1] = -nqd1[1]
            nqd1[2] = -nqd1[2]
            nqd1[3] = -nqd1[3]
            quat_mul_axis(ta, nqd1, dw)
            quat_mul(t1, ta, q0r)
            quat_mul_axis(ta, nq1, djr)
            quat_mul(t2, ta, q0r)
            quat_mul_axis(ta, nq1, dw)
            quat_mul(t3, ta, qd0r)
            for k in range(3):
                d.efc_aref[row + k] -= 0.5 * (t1[k + 1] + t2[k + 1] + t3[k + 1]) * ts
            row += 3


@njit(cache=True, inline="always")
def _contact_rows(d, i):
    """(contact id, rows, pyramidal) of the contact whose rows start at row i, or rows 0."""
    t = d.efc_type[i]
    if t == CNSTR_CONTACT_FRICTIONLESS:
        return d.efc_id[i], 1, False
    if t == CNSTR_CONTACT_PYRAMIDAL:
        c = d.efc_id[i]
        return c, 2 * (d.contact_dim[c] - 1), True
    if t == CNSTR_CONTACT_ELLIPTIC:
        c = d.efc_id[i]
        return c, d.contact_dim[c], False
    return -1, 0, False


@njit(cache=True)
def _add_surface_velocity(d):
    """efc_vel of contact rows += the contact's relative surface velocity (mj_addSurfaceVel).

    Frictional rows only (no normal push, no rolling drive): elliptic tangent rows and the
    spin row get contact_surfacevel; pyramidal edges 2(k−1), 2(k−1)+1 get ± μ_k times it.
    """
    nefc = d.nefc[0]
    vel = d.efc_vel
    i = d.ne[0] + d.nf[0]
    while i < nefc:
        c, size, pyramidal = _contact_rows(d, i)
        if size == 0:
            i += 1
            continue
        if size > 1:
            sv = d.contact_surfacevel[c]
            dim = d.contact_dim[c]
            for k in range(1, min(dim, 4)):
                s = sv[k - 1]
                if pyramidal:
                    mu = d.contact_friction[c, k - 1]
                    vel[i + 2 * (k - 1)] += mu * s
                    vel[i + 2 * (k - 1) + 1] -= mu * s
                else:
                    vel[i + k] += s
        i += size


@njit(cache=True)
def _adhesion_reference(d):
    """aref of adhesive contact rows += R δ, split over pyramidal edges (mj_adhesionRef)."""
    nefc = d.nefc[0]
    aref = d.efc_aref
    R = d.efc_R
    i = d.ne[0] + d.nf[0]
    while i < nefc:
        c, size, pyramidal = _contact_rows(d, i)
        if size == 0:
            i += 1
            continue
        delta = d.contact_adhesion[c]
        if delta != 0.0:
            if pyramidal:
                edge = delta / size
                for r in range(size):
                    aref[i + r] += R[i + r] * edge
            else:
                aref[i] += R[i] * delta
        i += size


@njit(cache=True)
def reference(m, d):
    """efc_vel = J qvel, efc_aref = −B vel − K I (pos − margin) − J̇ qvel (mj_referenceConstraint).

    With the surface velocities added to efc_vel and the adhesion bias to aref (see the
    module doc). Needs the velocity stage (cvel, cdof_dot).
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
    if m.flg_surfacevel[0]:
        _add_surface_velocity(d)
    pos = d.efc_pos
    margin = d.efc_margin
    aref = d.efc_aref
    for i in range(nefc):
        aref[i] = -kb[i, 1] * vel[i] - kb[i, 0] * kb[i, 2] * (pos[i] - margin[i])
    if m.flg_adhesion[0]:
        _adhesion_reference(d)
    if d.ne[0] > 0:
        _jdotv_equality(m, d)


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
