"""Compiled pieces shared by the controllers of `jointspace.control`.

Every controller enters compiled code once per control step (DESIGN.md §2.4) through one of
the drivers at the end of this file; they take the Model and Data structs and three flat
buffers that the Python objects own:

    ibuf  int64    layout and options (task kinds, ids, row masks, levels, actuator map)
    fbuf  float64  references and gains (targets, kp, kd, posture)
    out   float64  results (τ, commanded qacc, task errors, diagnostics)

Their layouts are the `_*_LAYOUT` offsets below; the Python side writes and reads them
through views, so no argument list grows with the number of tasks.

The state stage is the forward pipeline's position and velocity stages (kinematics,
com_pos, crb, factor_m, transmission, com_vel, passive, rne), so the controllers see the
same M, c(q, q̇) and passive forces as the simulator does at the state in d.
"""

import math

import numpy as np
from numba import njit

from jointspace._numba.dense import chol_solve_spd, damped_inverse
from jointspace.constraint import STATE_CONE, STATE_QUADRATIC, reference
from jointspace.dynamics.factor import solve_ld
from jointspace.dynamics.minv import minv_kernel
from jointspace.forward import fwd_position, fwd_rows, fwd_velocity
from jointspace.integrate import diff_pos_kernel
from jointspace.kinematics import com_pos, jac_dot_qvel, jac_point, kinematics_bodies
from jointspace.passive import quat_to_vel
from jointspace.rotation import mat_to_quat
from jointspace.solver import cone_arrays
from jointspace.solver.cost import constraint_update, mul_jt, mul_m
from jointspace.types import MINVAL

# task kinds (ibuf column 0)
KIND_SITE, KIND_BODY, KIND_COM = 0, 1, 2
# task int record: kind, object id, component mask (bits 0-2: x y z, 3-5: rx ry rz), level,
# number of rows, first row
TI = 6
# task float record: pos_des 3, quat_des 4, vel_des 6, acc_des 6, kp 6, kd 6
TF = 31
F_POS, F_QUAT, F_VEL, F_ACC, F_KP, F_KD = 0, 3, 7, 13, 19, 25
# task output record: error 6 (x_des ⊖ x), error rate 6 (ẋ_des − ẋ)
TO = 12

# output modes
OUT_NONE, OUT_QFRC, OUT_CTRL = 0, 1, 2



# ---------------------------------------------------------------------------------------------
# state


@njit(cache=True)
def _state(m, d):
    """Position and velocity stages of forward at d's (qpos, qvel); returns -1 or a bad pivot."""
    bad = fwd_position(m, d, np.bool_(True))
    fwd_velocity(m, d)
    return bad


@njit(cache=True)
def _rows(m, d):
    """Contacts, constraint rows and reference accelerations at d's state (as forward)."""
    need = fwd_rows(m, d)
    reference(m, d)
    return need


@njit(cache=True)
def _minv_solve(m, d, x):
    """Overwrite each row r of x (k, nv) with M⁻¹ x[r] (sparse LᵀDL of the state stage)."""
    solve_ld(m, d.qLD, d.qLDiagInv, x)


@njit(cache=True)
def _orientation_error(R, qdes, out):
    """out = log(R_des Rᵀ): the world-frame rotation vector that turns R into R_des.

    Computed as the rotation vector of q_des ⊗ q⁻¹ (angle wrapped into (−π, π]).
    """
    q = np.empty(4)
    mat_to_quat(R, q)
    n = math.sqrt(qdes[0] * qdes[0] + qdes[1] * qdes[1] + qdes[2] * qdes[2] + qdes[3] * qdes[3])
    a0 = qdes[0] / n
    a1 = qdes[1] / n
    a2 = qdes[2] / n
    a3 = qdes[3] / n
    # e = q_des ⊗ conj(q)
    b0, b1, b2, b3 = q[0], -q[1], -q[2], -q[3]
    e = np.empty(4)
    e[0] = a0 * b0 - a1 * b1 - a2 * b2 - a3 * b3
    e[1] = a0 * b1 + a1 * b0 + a2 * b3 - a3 * b2
    e[2] = a0 * b2 - a1 * b3 + a2 * b0 + a3 * b1
    e[3] = a0 * b3 + a1 * b2 - a2 * b1 + a3 * b0
    quat_to_vel(out, e)


@njit(cache=True)
def _task_frame(m, d, kind, oid, jacp, jacr, jdot):
    """Jacobians (3, nv) × 2 and bias acceleration J̇q̇ (6: linear, angular) of one task frame.

    site / body: the frame's origin and orientation; com: the center of mass of body oid's
    subtree, J = Σ m_b J_b(xipos_b) / Σ m_b (angular rows zero). Returns the point (3,) and
    the rotation matrix (9,) (identity for com).
    """
    nv = m.nv
    point = np.empty(3)
    R = np.empty(9)
    if kind == KIND_COM:
        for k in range(9):
            R[k] = 0.0
        R[0] = R[4] = R[8] = 1.0
        for k in range(3):
            point[k] = d.subtree_com[oid, k]
        jacp[:, :] = 0.0
        jacr[:, :] = 0.0
        for k in range(6):
            jdot[k] = 0.0
        jp = np.empty((3, nv))
        jr = np.empty((3, nv))
        jd = np.empty(6)
        total = 0.0
        for b in range(max(oid, 1), m.nbody):
            # is b in the subtree of oid?
            p = b
            while p > oid:
                p = m.body_parentid[p]
            mass = m.body_mass[b]
            if p != oid or mass <= 0.0:
                continue
            total += mass
            jac_point(m, d, b, d.xipos[b], jp, jr)
            jac_dot_qvel(m, d, b, d.xipos[b], jd)
            for r in range(3):
                for c in range(nv):
                    jacp[r, c] += mass * jp[r, c]
                jdot[r] += mass * jd[r]
        if total > 0.0:
            inv = 1.0 / total
            for r in range(3):
                for c in range(nv):
                    jacp[r, c] *= inv
                jdot[r] *= inv
        return point, R
    if kind == KIND_SITE:
        body = m.site_bodyid[oid]
        for k in range(3):
            point[k] = d.site_xpos[oid, k]
        for k in range(9):
            R[k] = d.site_xmat[oid, k]
    else:
        body = oid
        for k in range(3):
            point[k] = d.xpos[oid, k]
        for k in range(9):
            R[k] = d.xmat[oid, k]
    jac_point(m, d, body, point, jacp, jacr)
    jac_dot_qvel(m, d, body, point, jdot)
    return point, R


@njit(cache=True)
def _task_rows(m, d, ibuf, t0, ntask, fbuf, f0, J, b, tout, o0):
    """Rows of J and b = ẍ* − J̇q̇ for every task, and each task's error and error rate.

    ẍ* = ẍ_des + kd (ẋ_des − ẋ) + kp e with e = x_des − x for positions and
    e = log(R_des Rᵀ) (world frame) for orientations; ẋ = J q̇.
    """
    nv = m.nv
    jacp = np.empty((3, nv))
    jacr = np.empty((3, nv))
    jdot = np.empty(6)
    e = np.empty(6)
    erot = np.empty(3)
    for t in range(ntask):
        ib = t0 + t * TI
        fb = f0 + t * TF
        ob = o0 + t * TO
        kind = ibuf[ib]
        oid = ibuf[ib + 1]
        mask = ibuf[ib + 2]
        row = ibuf[ib + 5]
        point, R = _task_frame(m, d, kind, oid, jacp, jacr, jdot)
        for k in range(3):
            e[k] = fbuf[fb + F_POS + k] - point[k]
        if mask & 56:
            _orientation_error(R, fbuf[fb + F_QUAT:fb + F_QUAT + 4], erot)
            for k in range(3):
                e[3 + k] = erot[k]
        else:
            for k in range(3):
                e[3 + k] = 0.0
        for c in range(6):
            jrow = jacp[c] if c < 3 else jacr[c - 3]
            vel = 0.0
            for k in range(nv):
                vel += jrow[k] * d.qvel[k]
            edot = fbuf[fb + F_VEL + c] - vel
            tout[ob + c] = e[c]
            tout[ob + 6 + c] = edot
            if not (mask >> c) & 1:
                continue
            for k in range(nv):
                J[row, k] = jrow[k]
            b[row] = (fbuf[fb + F_ACC + c] + fbuf[fb + F_KD + c] * edot
                      + fbuf[fb + F_KP + c] * e[c] - jdot[c])
            row += 1


# ---------------------------------------------------------------------------------------------
# prioritized task accelerations (dynamically consistent, M-weighted)


@njit(cache=True)
def _prioritized(m, d, J, b, nrow, lstart, nlevel, eps, a0, use_a0, qacc, qacc_null, diag):
    """Task-priority accelerations with dynamically consistent null-space projections.

    Level k (rows lstart[k] … lstart[k+1]−1 of J, b) gets, with N the projector of the
    levels above (N = I for the first), Ĵ = J N, Λ = (Ĵ M⁻¹ Ĵᵀ)⁻¹ (damped as in
    `damped_inverse`) and J̄ = M⁻¹ Ĵᵀ Λ:

        q̈ += J̄ (b − J q̈),      N ← N − J̄ Ĵ

    so that J q̈ = b exactly for the first level (Khatib's operational-space control:
    M J̄ = Jᵀ Λ) and lower levels act only in the null space of the levels above
    (J_i J̄_k = 0 for i < k). Finally the posture acceleration a0 fills the rest:
    q̈_null = N (a0 − q̈), the M-weighted projection of a0 onto the tasks' null space.
    M⁻¹ comes from the sparse LᵀDL of the state stage (no dense inverse of M).

    Writes qacc (nv), qacc_null (nv) and diag[k, :] = (min eig, max eig, damping δ) of
    J M⁻¹ Jᵀ for each level (of Ĵ M⁻¹ Ĵᵀ for the lower ones). Returns the number of levels
    that were damped.
    """
    nv = m.nv
    Z = np.empty((max(nrow, 1), nv))  # row r: M⁻¹ J[r]ᵀ, then N M⁻¹ J[r]ᵀ
    Jh = np.empty((max(nrow, 1), nv))  # row r: Ĵ[r]
    Jb = np.empty((max(nrow, 1), nv))  # row r: column r of J̄
    for r in range(nrow):
        for k in range(nv):
            Z[r, k] = J[r, k]
    solve_ld(m, d.qLD, d.qLDiagInv, Z[:nrow])
    for k in range(nv):
        qacc[k] = 0.0
    ndamped = 0
    for lev in range(nlevel):
        r0 = lstart[lev]
        r1 = lstart[lev + 1]
        mk = r1 - r0
        for r in range(r0, r1):
            # Z[r] ← N M⁻¹ J[r]ᵀ and Ĵ[r] = J[r] N, projecting out each row above in turn
            for k in range(nv):
                Jh[r, k] = J[r, k]
            for s in range(r0):
                x = 0.0
                y = 0.0
                for k in range(nv):
                    x += Jh[s, k] * Z[r, k]
                    y += Jh[r, k] * Jb[s, k]
                for k in range(nv):
                    Z[r, k] -= Jb[s, k] * x
                    Jh[r, k] -= Jh[s, k] * y
        # A = Ĵ M⁻¹ Ĵᵀ = J N M⁻¹ Jᵀ
        A = np.empty((mk, mk))
        for i in range(mk):
            for j in range(i, mk):
                s = 0.0
                for k in range(nv):
                    s += J[r0 + i, k] * Z[r0 + j, k]
                A[i, j] = s
                A[j, i] = s
        Lam = np.empty((mk, mk))
        wmin, wmax, delta = damped_inverse(A, mk, eps, Lam)
        diag[lev, 0] = wmin
        diag[lev, 1] = wmax
        diag[lev, 2] = delta
        if delta > 0.0 or not wmax > 0.0:
            ndamped += 1
        # J̄ = (N M⁻¹ Jᵀ) Λ
        for j in range(mk):
            for k in range(nv):
                s = 0.0
                for i in range(mk):
                    s += Z[r0 + i, k] * Lam[i, j]
                Jb[r0 + j, k] = s
        # q̈ += J̄ (b − J q̈)
        res = np.empty(mk)
        for i in range(mk):
            s = b[r0 + i]
            for k in range(nv):
                s -= J[r0 + i, k] * qacc[k]
            res[i] = s
        for i in range(mk):
            for k in range(nv):
                qacc[k] += Jb[r0 + i, k] * res[i]
    # q̈_null = N (a0 − q̈)
    for k in range(nv):
        qacc_null[k] = a0[k] - qacc[k] if use_a0 else 0.0
    if use_a0:
        for s in range(nrow):
            x = 0.0
            for k in range(nv):
                x += Jh[s, k] * qacc_null[k]
            for k in range(nv):
                qacc_null[k] -= Jb[s, k] * x
        for k in range(nv):
            qacc[k] += qacc_null[k]
    return ndamped


@njit(cache=True)
def _posture_acc(m, d, fbuf, p0, out):
    """a0 = kp (q* ⊖ q) − kd q̇ with q* at fbuf[p0:p0+nq], kp and kd (nv,) after it."""
    nq = m.nq
    nv = m.nv
    diff_pos_kernel(m, out, 1.0, d.qpos, fbuf[p0:p0 + nq])
    kp = p0 + nq
    kd = kp + nv
    for k in range(nv):
        out[k] = fbuf[kp + k] * out[k] - fbuf[kd + k] * d.qvel[k]


# ---------------------------------------------------------------------------------------------
# torques and their output


@njit(cache=True)
def _inverse_smooth(m, d, qacc, tau, use_passive):
    """tau = M qacc + c(q, q̇) − qfrc_passive: the force that gives qacc without constraints.

    Without use_passive the plant's springs and dampers are left uncompensated (not
    subtracted).
    """
    mul_m(m, d.qM, qacc, tau)
    for k in range(m.nv):
        tau[k] += d.qfrc_bias[k]
        if use_passive:
            tau[k] -= d.qfrc_passive[k]


@njit(cache=True)
def _write_output(m, d, mode, actuated, act_dof, tau):
    """Send tau to the plant; returns the number of controls outside their ctrlrange.

    OUT_QFRC: qfrc_applied = tau on actuated dofs, 0 elsewhere. OUT_CTRL: for actuator a
    driving dof act_dof[a] through a joint transmission (moment = gear₀), the force
    f = tau[dof] / gear₀ and ctrl = (f − bias) / gain with the affine bias at d's state.
    """
    nsat = 0
    if mode == OUT_QFRC:
        for k in range(m.nv):
            d.qfrc_applied[k] = tau[k] if actuated[k] else 0.0
    elif mode == OUT_CTRL:
        for a in range(m.nactuator):
            dof = act_dof[a]
            if dof < 0:
                continue
            o = m.actuator_outadr[a]
            f = tau[dof] / m.actuator_gear[o, 0]
            bp = m.actuator_biasprm[a]
            if m.actuator_biastype[a] == 1:
                f -= bp[0] + bp[1] * d.actuator_length[o] + bp[2] * d.actuator_velocity[o]
            u = f / m.actuator_gainprm[a, 0]
            c = m.actuator_ctrladr[a]
            d.ctrl[c] = u
            if m.actuator_ctrllimited[c] and (u < m.actuator_ctrlrange[c, 0]
                                              or u > m.actuator_ctrlrange[c, 1]):
                nsat += 1
    return nsat


# ---------------------------------------------------------------------------------------------
# computed torque (feedback linearization)

# ibuf: [mode, use_passive, n_actuated, n_unactuated, actuated mask (nv), act_dof (nactuator),
#        unactuated dof list (nv)]
# fbuf: [q_ref (nq), v_ref (nv), a_ref (nv), Kp (nv·nv), Kd (nv·nv)]
# out:  [tau (nv), qacc (nv), qacc_des (nv), error (nv), info (4): bad pivot, infeasibility,
#        saturated controls, 0]


@njit(cache=True, nogil=True)
def computed_torque(m, d, ibuf, fbuf, out):
    """One computed-torque step at d's state (see `jointspace.control.ComputedTorque`).

    a_des = a_ref + Kd (v_ref − q̇) + Kp (q_ref ⊖ q). Fully actuated: q̈ = a_des and
    τ = M q̈ + c − passive. Unactuated dofs u (collocated partial feedback linearization,
    Spong 1994): q̈_a = a_des_a and q̈_u solves row u of M q̈ + c − passive = 0, i.e.
    M_uu q̈_u = −(M_ua q̈_a + c_u − passive_u); τ_u = 0.
    """
    nv = m.nv
    nq = m.nq
    mode = ibuf[0]
    use_passive = ibuf[1]
    nun = ibuf[3]
    act = ibuf[4:4 + nv]
    act_dof = ibuf[4 + nv:4 + nv + m.nactuator]
    unact = ibuf[4 + nv + m.nactuator:4 + nv + m.nactuator + nun]
    tau = out[0:nv]
    qacc = out[nv:2 * nv]
    ades = out[2 * nv:3 * nv]
    err = out[3 * nv:4 * nv]
    info = out[4 * nv:4 * nv + 4]
    bad = _state(m, d)
    info[0] = bad
    if bad >= 0:
        return
    qref = fbuf[0:nq]
    vref = fbuf[nq:nq + nv]
    aref = fbuf[nq + nv:nq + 2 * nv]
    kp0 = nq + 2 * nv
    kd0 = kp0 + nv * nv
    diff_pos_kernel(m, err, 1.0, d.qpos, qref)
    for i in range(nv):
        s = aref[i]
        for k in range(nv):
            s += fbuf[kp0 + i * nv + k] * err[k] + fbuf[kd0 + i * nv + k] * (vref[k] - d.qvel[k])
        ades[i] = s
        qacc[i] = s
    info[1] = 0.0
    if nun > 0:
        # M_uu q̈_u = −(M_ua q̈_a + c_u − passive_u): take q̈_u = 0 first, then correct
        for k in range(nun):
            qacc[unact[k]] = 0.0
        _inverse_smooth(m, d, qacc, tau, use_passive)
        Muu = np.empty((nun, nun))
        ej = np.zeros(nv)
        col = np.empty(nv)
        for j in range(nun):
            ej[unact[j]] = 1.0
            mul_m(m, d.qM, ej, col)
            ej[unact[j]] = 0.0
            for i in range(nun):
                Muu[i, j] = col[unact[i]]
        rhs = np.empty(nun)
        for i in range(nun):
            rhs[i] = -tau[unact[i]]
        if not chol_solve_spd(Muu, nun, rhs, MINVAL):
            info[0] = unact[0]
            return
        dev = 0.0
        for i in range(nun):
            qacc[unact[i]] = rhs[i]
            dev = max(dev, abs(rhs[i] - ades[unact[i]]))
        info[1] = dev
    _inverse_smooth(m, d, qacc, tau, use_passive)
    for i in range(nv):
        if not act[i]:
            tau[i] = 0.0
    info[2] = _write_output(m, d, mode, act, act_dof, tau)


# ---------------------------------------------------------------------------------------------
# operational-space control

# ibuf: [mode, ntask, nrow, nlevel, use_posture, use_passive, actuated (nv), act_dof (nactuator),
#        level starts (nlevel + 1), task records (ntask · TI)]
# fbuf: [eps, posture q* (nq), kp (nv), kd (nv), task records (ntask · TF)]
# out:  [tau (nv), qacc (nv), qacc_null (nv), tau_null (nv), info (4): bad pivot, damped
#        levels, saturated controls, 0, level diagnostics (nlevel · 3), task outputs
#        (ntask · TO)]


@njit(cache=True)
def _osc_layout(m, ibuf):
    nv = m.nv
    ntask = ibuf[1]
    nlevel = ibuf[3]
    ls0 = 6 + nv + m.nactuator
    t0 = ls0 + nlevel + 1
    return ntask, ibuf[2], nlevel, ls0, t0


@njit(cache=True)
def _osc_accel(m, d, ibuf, fbuf, out):
    """Task rows, prioritized q̈ and τ = M q̈ + c − passive (state stage done)."""
    nv = m.nv
    nq = m.nq
    ntask, nrow, nlevel, ls0, t0 = _osc_layout(m, ibuf)
    tau = out[0:nv]
    qacc = out[nv:2 * nv]
    qnull = out[2 * nv:3 * nv]
    taunull = out[3 * nv:4 * nv]
    info = out[4 * nv:4 * nv + 4]
    dg0 = 4 * nv + 4
    diag = out[dg0:dg0 + 3 * nlevel].reshape((nlevel, 3))
    to0 = dg0 + 3 * nlevel
    f0 = 1 + nq + 2 * nv
    J = np.empty((max(nrow, 1), nv))
    b = np.empty(max(nrow, 1))
    _task_rows(m, d, ibuf, t0, ntask, fbuf, f0, J, b, out, to0)
    a0 = np.zeros(nv)
    use_posture = ibuf[4] != 0
    if use_posture:
        _posture_acc(m, d, fbuf, 1, a0)
    info[1] = _prioritized(m, d, J, b, nrow, ibuf[ls0:ls0 + nlevel + 1], nlevel, fbuf[0], a0,
                           use_posture, qacc, qnull, diag)
    mul_m(m, d.qM, qnull, taunull)
    _inverse_smooth(m, d, qacc, tau, ibuf[5] != 0)


@njit(cache=True, nogil=True)
def osc_kernel(m, d, ibuf, fbuf, out):
    """One operational-space control step at d's state (`OperationalSpace`)."""
    nv = m.nv
    info = out[4 * nv:4 * nv + 4]
    bad = _state(m, d)
    info[0] = bad
    if bad >= 0:
        return
    _osc_accel(m, d, ibuf, fbuf, out)
    info[2] = _write_output(m, d, ibuf[0], ibuf[6:6 + nv], ibuf[6 + nv:6 + nv + m.nactuator],
                            out[0:nv])


@njit(cache=True, nogil=True)
def task_inertia_kernel(m, d, q, jac, eps, use_minv, lam, diag):
    """Λ = (J M⁻¹ Jᵀ)⁻¹ (damped as `damped_inverse`) at q, from LᵀDL solves or from M⁻¹.

    Returns -1 or the dof of a non-positive pivot.
    """
    nv = m.nv
    k = jac.shape[0]
    for i in range(m.nq):
        d.qpos[i] = q[i]
    X = np.empty((k, nv))
    if use_minv:
        kinematics_bodies(m, d)
        com_pos(m, d)
        Minv = np.empty((nv, nv))
        bad = minv_kernel(m, d, Minv)
        if bad >= 0:
            return bad
        # X = J M⁻¹ (rows)
        for r in range(k):
            for c in range(nv):
                s = 0.0
                for i in range(nv):
                    s += jac[r, i] * Minv[i, c]
                X[r, c] = s
    else:
        bad = fwd_position(m, d, np.bool_(True))
        if bad >= 0:
            return bad
        for r in range(k):
            for c in range(nv):
                X[r, c] = jac[r, c]
        solve_ld(m, d.qLD, d.qLDiagInv, X)
    A = np.empty((k, k))
    for i in range(k):
        for j in range(i, k):
            s = 0.0
            for c in range(nv):
                s += jac[i, c] * X[j, c]
            A[i, j] = s
            A[j, i] = s
    wmin, wmax, delta = damped_inverse(A, k, eps, lam)
    diag[0] = wmin
    diag[1] = wmax
    diag[2] = delta
    return -1


# ---------------------------------------------------------------------------------------------
# whole-body inverse-dynamics control with predicted soft contacts

# ibuf: the OSC layout, then [maxiter, n_unactuated, unactuated dofs (n_unactuated)] at
#       position wb0 = t0 + ntask · TI
# fbuf: the OSC layout, then [tol] at position f0 + ntask · TF
# out:  the OSC layout, then [qacc_des (nv), residual, iterations, rows requested, Φ,
#       unactuated residual (nv)]


@njit(cache=True)
def _soft_force(m, d, qacc, force, H, cdim, cmu, cfr, want):
    """Soft constraint force at qacc, f = −∂s/∂jar with jar = J qacc − aref; returns s.

    With want, H (nefc, nefc) receives ∂²s/∂jar² (block diagonal: D on quadratic rows, the
    cone Hessian on elliptic contacts in the middle zone, 0 on satisfied or saturated rows),
    so that ∂f/∂qacc = −H J.
    """
    nefc = d.nefc[0]
    n = max(nefc, 1)
    jar = np.empty(n)
    state = np.empty(n, dtype=np.int32)
    hcone = np.zeros((n, 36)) if want else np.empty((1, 1))
    J = d.efc_J
    for i in range(nefc):
        s = -d.efc_aref[i]
        for k in range(m.nv):
            s += J[i, k] * qacc[k]
        jar[i] = s
    cost = constraint_update(d, jar, cdim, cmu, cfr, force, state, hcone, want)
    if not want:
        return cost
    for i in range(nefc):
        for j in range(nefc):
            H[i, j] = 0.0
    i = 0
    while i < nefc:
        dim = cdim[i] if cdim[i] > 0 else 1
        if state[i] == STATE_CONE:
            for a in range(dim):
                for c in range(dim):
                    H[i + a, i + c] = hcone[i, a * dim + c]
        elif state[i] == STATE_QUADRATIC:
            for a in range(dim):
                H[i + a, i + a] = d.efc_D[i + a]
        i += dim
    return cost


@njit(cache=True)
def _soft_inverse(m, d, qacc, force, qfrc, use_passive):
    """qfrc = M qacc + c − passive − Jᵀ f(qacc) (MuJoCo's mj_inverse); returns Φ(qacc).

    Φ(a) = ½ aᵀ M a + (c − passive)ᵀ a + s(J a − aref) is convex and qfrc is its gradient,
    so the forward dynamics with force τ minimizes Φ(a) − τᵀ a. Uses the rows in d (built
    by `_rows` at d's state).
    """
    nv = m.nv
    cdim, cmu, cfr = cone_arrays(m, d)
    cost = _soft_force(m, d, qacc, force, np.empty((1, 1)), cdim, cmu, cfr, False)
    _inverse_smooth(m, d, qacc, qfrc, use_passive)
    fq = np.empty(nv)
    mul_jt(d, force, fq)
    # Φ = ½ aᵀ (M a) + (c − p)ᵀ a + s, with M a = qfrc − (c − p)
    for k in range(nv):
        cp = 0.5 * (qfrc[k] + d.qfrc_bias[k] - (d.qfrc_passive[k] if use_passive else 0.0))
        cost += qacc[k] * cp
        qfrc[k] -= fq[k]
    return cost


@njit(cache=True)
def _base_newton(m, d, qacc, unact, nun, r):
    """Newton step on the unactuated accelerations: qacc_u −= H_uu⁻¹ r.

    H_uu = S_u (M + Jᵀ H J) S_uᵀ = ∂²Φ/∂a_u², positive definite. Returns the directional
    derivative rᵀ δ (negative), or 1.0 if H_uu is not positive definite.
    """
    nv = m.nv
    nefc = d.nefc[0]
    n = max(nefc, 1)
    cdim, cmu, cfr = cone_arrays(m, d)
    H = np.empty((n, n))
    force = np.empty(n)
    _soft_force(m, d, qacc, force, H, cdim, cmu, cfr, True)
    J = d.efc_J
    ej = np.zeros(nv)
    col = np.empty(nv)
    HJ = np.empty(n)
    Huu = np.empty((nun, nun))
    for b in range(nun):
        u = unact[b]
        # column u of M + Jᵀ H J
        ej[u] = 1.0
        mul_m(m, d.qM, ej, col)
        ej[u] = 0.0
        for i in range(nefc):
            s = 0.0
            for j in range(nefc):
                s += H[i, j] * J[j, u]
            HJ[i] = s
        for a in range(nun):
            s = col[unact[a]]
            for i in range(nefc):
                s += J[i, unact[a]] * HJ[i]
            Huu[a, b] = s
    for a in range(nun):
        for b in range(a):
            Huu[a, b] = 0.5 * (Huu[a, b] + Huu[b, a])
            Huu[b, a] = Huu[a, b]
    delta = np.empty(nun)
    for a in range(nun):
        delta[a] = -r[a]
    if not chol_solve_spd(Huu, nun, delta, MINVAL):
        return 1.0
    slope = 0.0
    for a in range(nun):
        qacc[unact[a]] += delta[a]
        slope += r[a] * delta[a]
    return slope


@njit(cache=True)
def _unact_residual(qfrc, unact, nun, r):
    """r = qfrc on the unactuated dofs; returns (max |r|, Σ r²)."""
    rn = 0.0
    r2 = 0.0
    for a in range(nun):
        x = qfrc[unact[a]]
        r[a] = x
        rn = max(rn, abs(x))
        r2 += x * x
    return rn, r2


@njit(cache=True, nogil=True)
def wbid_prepare(m, d, ibuf, fbuf, out):
    """State, rows and the task accelerations (into qacc_des); returns -1 or a bad pivot."""
    nv = m.nv
    ntask, nrow, nlevel, ls0, t0 = _osc_layout(m, ibuf)
    o = 4 * nv + 4 + 3 * nlevel + ntask * TO
    bad = _state(m, d)
    out[4 * nv] = bad
    if bad >= 0:
        return bad
    out[o + nv + 2] = _rows(m, d)
    _osc_accel(m, d, ibuf, fbuf, out)
    for k in range(nv):
        out[o + k] = out[nv + k]
    return -1


@njit(cache=True, nogil=True)
def wbid_kernel(m, d, ibuf, fbuf, out):
    """One whole-body inverse-dynamics step with the compiled soft-contact predictor.

    q̈_des from the prioritized tasks (`_prioritized`); the actuated dofs keep it and the
    unactuated ones u minimize the convex Φ(q̈) of `_soft_inverse` (Newton with Armijo
    backtracking), i.e. satisfy r = S_u (M q̈ + c − passive − Jᵀ f(q̈)) = 0: the floating
    base accelerates as the dynamics and the predicted soft contact forces f dictate.
    τ = M q̈ + c − passive − Jᵀ f(q̈) on the actuated dofs.
    """
    nv = m.nv
    ntask, nrow, nlevel, ls0, t0 = _osc_layout(m, ibuf)
    o = 4 * nv + 4 + 3 * nlevel + ntask * TO
    wb0 = t0 + ntask * TI
    maxiter = ibuf[wb0]
    nun = ibuf[wb0 + 1]
    unact = ibuf[wb0 + 2:wb0 + 2 + nun]
    tol = fbuf[1 + m.nq + 2 * nv + ntask * TF]
    use_passive = ibuf[5] != 0
    if wbid_prepare(m, d, ibuf, fbuf, out) >= 0:
        return
    tau = out[0:nv]
    qacc = out[nv:2 * nv]
    resid = out[o + nv + 4:o + 2 * nv + 4]
    nefc = max(d.nefc[0], 1)
    force = np.empty(nefc)
    r = np.empty(max(nun, 1))
    start = np.empty(nv)
    phi = _soft_inverse(m, d, qacc, force, tau, use_passive)
    rn, r2 = _unact_residual(tau, unact, nun, r)
    it = 0
    while rn > tol and it < maxiter and nun > 0:
        for k in range(nv):
            start[k] = qacc[k]
        slope = _base_newton(m, d, qacc, unact, nun, r)
        if slope > 0.0:
            break
        it += 1
        # Armijo backtracking on Φ along the Newton step
        alpha = 1.0
        for ls in range(40):
            phi_try = _soft_inverse(m, d, qacc, force, tau, use_passive)
            if phi_try <= phi + 1e-4 * alpha * slope or ls == 39:
                break
            alpha *= 0.5
            for k in range(nv):
                qacc[k] = 0.5 * (start[k] + qacc[k])
        phi = phi_try
        rn, r2 = _unact_residual(tau, unact, nun, r)
    for k in range(nv):
        resid[k] = 0.0
    for a in range(nun):
        resid[unact[a]] = r[a]
    for i in range(d.nefc[0]):
        d.efc_force[i] = force[i]
    out[o + nv] = rn
    out[o + nv + 1] = it
    out[o + nv + 3] = phi
    act = ibuf[6:6 + nv]
    for k in range(nv):
        if not act[k]:
            tau[k] = 0.0
    out[4 * nv + 2] = _write_output(m, d, ibuf[0], act, ibuf[6 + nv:6 + nv + m.nactuator], tau)


@njit(cache=True, nogil=True)
def consistency_step(m, d, qacc, unact, r):
    """The Newton step of `wbid_kernel` for the residual r of an external predictor (in place)."""
    return _base_newton(m, d, qacc, unact, unact.shape[0], r)


@njit(cache=True, nogil=True)
def finish(m, d, ibuf, tau):
    """Zero tau on the unactuated dofs and send it to the plant (OSC/WBID ibuf layout)."""
    nv = m.nv
    act = ibuf[6:6 + nv]
    for k in range(nv):
        if not act[k]:
            tau[k] = 0.0
    return _write_output(m, d, ibuf[0], act, ibuf[6 + nv:6 + nv + m.nactuator], tau)
