"""Time integration: positions on the configuration manifold and the velocity updates.

Positions (mj_integratePos, mj_differentiatePos, engine_support.c):
  hinge, slide      q ← q + h v
  ball              q ← q ⊗ exp(h ω / 2)   with ω the angular velocity in the joint's (child) frame
  free              p ← p + h v_world,  then the ball rule for the quaternion
`diff_pos_kernel` is the inverse: the velocity that takes q1 to q2 in time h.

Velocity updates (mj_Euler, mj_implicit, engine_forward.c), all followed by the
semi-implicit position update q ← q ⊕ h v_next (and preceded by the activation update
act ← next_activation(act, act_dot), `jointspace.actuation`):
  Euler         v_next = v + h (M + h B)⁻¹ (qfrc_smooth + qfrc_constraint)
                B = diag(∂(c(v) v)/∂v) of the dof dampers, c(v) = b + p₀ |v| + p₁ v²
                (dof_damping, dof_dampingpoly and the joint's actuators' damping times
                gear₀², `jointspace.actuator_passive`; diag(b) when linear): the
                implicit damping of Todorov (ICRA 2014, §II.B),
                D = armature + B h; without damping (M + hB) = M and the step uses qacc.
  implicitfast  v_next = v + h (M − h D)⁻¹ f,  D = ∂(qfrc_passive + qfrc_actuator)/∂v
                (symmetric: −B plus Σ_actuators ∂force/∂velocity · momentᵀ moment), with the
                Coriolis derivatives left out, except for standalone free bodies, whose 6×6
                block adds the gyroscopic derivative and is solved by LU as MuJoCo does.
  implicit      D also includes −∂qfrc_bias/∂v, so (M − h D) is not symmetric and is solved by
                dense LU. qfrc_bias is exactly quadratic in v, so each column of its
                derivative is obtained without truncation error by polarization:
                ∂bias/∂v · e_k = (bias(v + e_k) − bias(v − e_k)) / 2.
"""

import math

import numpy as np
from numba import njit

from jointspace._numba import entry
from jointspace._numba.scratch import shaped
from jointspace.actuation import actuator_damping, advance_act
from jointspace.actuator_passive import dof_damping
from jointspace.actuator_passive import tendon_damping as tendon_damping_poly
from jointspace.dynamics.factor import factor_ld, solve_ld
from jointspace.dynamics.rnea import RNE_GRAVITY, RNE_VEL, rne
from jointspace.kinematics import com_vel_stage
from jointspace.passive import damping_deriv, fluid, sub_quat
from jointspace.rotation import quat_mul_s, quat_normalize_s
from jointspace.sensor import advance_history
from jointspace.types import DSBL_DAMPER, DSBL_EULERDAMP, DSBL_SPRING, JNT_BALL, JNT_FREE, MINVAL


@njit(cache=True)
def _quat_integrate(quat, vel, scale):
    """Rotate in place: quat ← normalize(quat) ⊗ exp(scale · vel / 2)  (mju_quatIntegrate)."""
    nv = math.sqrt(vel[0] * vel[0] + vel[1] * vel[1] + vel[2] * vel[2])
    angle = scale * nv
    r0, r1, r2, r3 = 1.0, 0.0, 0.0, 0.0
    if angle != 0.0:
        if nv < MINVAL:
            ax0, ax1, ax2 = 1.0, 0.0, 0.0
        else:
            inv = 1.0 / nv
            ax0, ax1, ax2 = vel[0] * inv, vel[1] * inv, vel[2] * inv
        s = math.sin(angle * 0.5)
        r0 = math.cos(angle * 0.5)
        r1 = ax0 * s
        r2 = ax1 * s
        r3 = ax2 * s
    q0, q1, q2, q3 = quat_normalize_s(quat[0], quat[1], quat[2], quat[3])
    quat[0], quat[1], quat[2], quat[3] = quat_mul_s(q0, q1, q2, q3, r0, r1, r2, r3)


@njit(cache=True)
def integrate_pos_kernel(m, qpos, qvel, h):
    """Integrate in place: qpos ← qpos ⊕ h qvel on the configuration manifold (mj_integratePos)."""
    for j in range(m.njnt):
        padr = m.jnt_qposadr[j]
        vadr = m.jnt_dofadr[j]
        jt = m.jnt_type[j]
        if jt == JNT_FREE or jt == JNT_BALL:
            if jt == JNT_FREE:
                for k in range(3):
                    qpos[padr + k] += h * qvel[vadr + k]
                padr += 3
                vadr += 3
            _quat_integrate(qpos[padr:padr + 4], qvel[vadr:vadr + 3], h)
        else:
            qpos[padr] += h * qvel[vadr]


@njit(cache=True)
def diff_pos_kernel(m, qvel, h, qpos1, qpos2):
    """Difference qvel = (qpos2 ⊖ qpos1) / h, taking qpos1 to qpos2 (mj_differentiatePos)."""
    for j in range(m.njnt):
        padr = m.jnt_qposadr[j]
        vadr = m.jnt_dofadr[j]
        jt = m.jnt_type[j]
        if jt == JNT_FREE or jt == JNT_BALL:
            if jt == JNT_FREE:
                for k in range(3):
                    qvel[vadr + k] = (qpos2[padr + k] - qpos1[padr + k]) / h
                padr += 3
                vadr += 3
            w = qvel[vadr:vadr + 3]
            sub_quat(w, qpos2[padr:padr + 4], qpos1[padr:padr + 4])
            for k in range(3):
                w[k] /= h
        else:
            qvel[vadr] = (qpos2[padr] - qpos1[padr]) / h


@njit(cache=True)
def advance(m, d, qacc):
    """Semi-implicit Euler update (mj_advance).

    The history buffers take this step's samples (`jointspace.history`), then act ← next
    activation at act_dot, qvel += h qacc, qpos ← qpos ⊕ h qvel, time += h, and the next
    step's warm start qacc_warmstart ← d.qacc (forward's acceleration, whatever qacc the
    integrator passed).
    """
    if m.nhistory > 0:
        advance_history(m, d, np.bool_(True), np.bool_(True))
    h = m.opt_timestep[0]
    if m.na:
        advance_act(m, d, d.act_dot, h)
    for i in range(m.nv):
        d.qvel[i] += h * qacc[i]
    integrate_pos_kernel(m, d.qpos, d.qvel, h)
    d.time[0] += h
    d.qacc_warmstart[:] = d.qacc


@njit(cache=True, inline="always")
def damping(m, d, i):
    """B_ii = ∂(c(v) v)/∂v at v = qvel[i] (b + 2 p₀ |v| + 3 p₁ v²), 0 with damping disabled.

    b, p: the dof's damping and polynomial with its joint's actuators' (`dof_damping`).
    """
    if m.opt_disableflags[0] & DSBL_DAMPER:
        return 0.0
    b, p0, p1 = dof_damping(m, i)
    return damping_deriv(b, p0, p1, d.qvel[i])


@njit(cache=True, inline="always")
def tendon_damping(m, d, t):
    """b_t = ∂(c(v) v)/∂v of tendon t's damper at v = ten_velocity[t], its actuators' included."""
    b, p0, p1 = tendon_damping_poly(m, t)
    return damping_deriv(b, p0, p1, d.ten_velocity[t])


@njit(cache=True)
def euler_damped(m):
    """True when the Euler step integrates dof damping implicitly.

    That is when some dof has damping > 0, a nonzero damping polynomial or a joint with an
    actuator that has damping or armature (jnt_actuatorid ≠ −1, as mj_Euler tests), unless
    implicit damping is disabled (eulerdamp) or damping itself is off (damper).
    """
    if m.opt_disableflags[0] & (DSBL_EULERDAMP | DSBL_DAMPER):
        return False
    for i in range(m.nv):
        if (m.dof_damping[i] > 0.0 or m.dof_dampingpoly[i, 0] != 0.0
                or m.dof_dampingpoly[i, 1] != 0.0 or m.jnt_actuatorid[m.dof_jntid[i]] != -1):
            return True
    return False


@njit(cache=True)
def euler(m, d):
    """Semi-implicit Euler step with implicit dof damping: (M + h B) qacc = qfrc (mj_Euler)."""
    nv = m.nv
    if not euler_damped(m):
        advance(m, d, d.qacc)
        return
    h = m.opt_timestep[0]
    # qH = M + h diag(B)
    d.qH[:] = d.qM
    for i in range(nv):
        d.qH[m.dof_Madr[i]] += h * damping(m, d, i)
    bad = factor_ld(m, d.qH, d.qHDiagInv)
    qacc = d.scratch_v[2]
    for i in range(nv):
        qacc[i] = d.qfrc_smooth[i] + d.qfrc_constraint[i]
    if bad >= 0:
        qacc[:] = np.nan  # M + hB singular: no acceleration; step's state check resets
    else:
        solve_ld(m, d.qH, d.qHDiagInv, shaped(qacc, (1, nv)))
    advance(m, d, qacc)


@njit(cache=True)
def is_free_body(m, b):
    """True for a body whose only joint is free, with no jointed or massive descendants."""
    if m.body_jntnum[b] != 1 or m.jnt_type[m.body_jntadr[b]] != JNT_FREE:
        return False
    if m.body_subtreemass[b] != m.body_mass[b]:
        return False
    ndof = 0
    for i in range(m.nv):
        if m.body_rootid[m.dof_bodyid[i]] == b:
            ndof += 1
    return ndof == 6


@njit(cache=True)
def _free_bias_vel(m, d, b, vel, out):
    """Gyroscopic derivative out (6×6) = ∂qfrc_bias/∂qvel of a free body (mjd_freeBias_vel).

    With R = xmat, s = xipos − xpos, ω = R vel_rot, I_w the world inertia about the com,
    bias = (m ω×(ω×s), Rᵀ(s × f + ω × I_w ω)); only the rotational columns are non-zero:
    ∂f/∂ω = −m K with K = [ω×s]ₓ + [ω]ₓ[s]ₓ, ∂τ/∂ω = [ω]ₓ I_w − [I_w ω]ₓ.
    """
    out[:, :] = 0.0
    R = shaped(d.xmat[b], (3, 3))
    Xi = shaped(d.ximat[b], (3, 3))
    mass = m.body_mass[b]
    s = d.xipos[b] - d.xpos[b]
    w = R @ vel
    Iw = Xi @ np.diag(m.body_inertia[b]) @ Xi.T
    ws = np.cross(w, s)
    Iww = Iw @ w
    K = np.outer(s, w) - np.dot(w, s) * np.eye(3) + _skew(ws)
    lin = K @ R
    C = -mass * _skew(s) @ K + _skew(w) @ Iw - _skew(Iww)
    rot = R.T @ C @ R
    out[0:3, 3:6] = -mass * lin
    out[3:6, 3:6] = rot


@njit(cache=True, inline="always")
def _skew(a):
    """[a]ₓ, the 3×3 matrix with [a]ₓ b = a × b."""
    out = np.zeros((3, 3))
    out[0, 1] = -a[2]
    out[0, 2] = a[1]
    out[1, 0] = a[2]
    out[1, 2] = -a[0]
    out[2, 0] = -a[1]
    out[2, 1] = a[0]
    return out


@njit(cache=True)
def _add_actuator_deriv(m, d, scale, out_sparse, out_dense, dense):
    """Add scale · Σ_a (∂f_a/∂v_a) Σ_o moment_oᵀ moment_o (a's outputs o) to qH or a matrix.

    On the matrices' sparsity as `_add_tendon_damping`: dense, the dof pairs of one tree.
    """
    for a in range(m.nactuator):
        dfdv = actuator_damping(m, d, a)
        if dfdv == 0.0:
            continue
        c = scale * dfdv
        for o in range(m.actuator_outadr[a], m.actuator_outadr[a] + m.actuator_outnum[a]):
            _add_moment_outer(m, d.actuator_moment[o], c, out_sparse, out_dense, dense)


@njit(cache=True)
def _add_moment_outer(m, mom, c, out_sparse, out_dense, dense):
    """Add c · momᵀ mom (an actuator output's moment row or a tendon's ten_J) to qH or A.

    On the sparsity `_add_tendon_damping` describes.
    """
    for i in range(m.nv):
        if mom[i] == 0.0:
            continue
        if dense:
            # qDeriv's pattern: the dof pairs of one kinematic tree (a tendon actuator
            # across trees loses its cross-tree terms, as in MuJoCo)
            tree = m.body_rootid[m.dof_bodyid[i]]
            for j in range(m.nv):
                if m.body_rootid[m.dof_bodyid[j]] == tree:
                    out_dense[i, j] += c * mom[i] * mom[j]
        else:
            # row i of the lower triangle: i and its ancestors
            adr = m.dof_Madr[i]
            j = i
            while j >= 0:
                out_sparse[adr] += c * mom[i] * mom[j]
                adr += 1
                j = m.dof_parentid[j]


@njit(cache=True)
def _add_tendon_damping(m, d, scale, out_sparse, out_dense, dense):
    """Add scale · Σ_t b_t ten_J_tᵀ ten_J_t (tendon damping, mjd_passive_vel) to qH or A.

    b_t is the damper's velocity derivative at ten_velocity (`tendon_damping`).

    As MuJoCo keeps the term on its matrices' sparsity: dense (implicit), the dof pairs of
    one kinematic tree (qDeriv's pattern); sparse (implicitfast), the (i, ancestor j)
    entries of qH. The blocks of standalone free bodies get theirs in `free_block`.
    """
    if m.opt_disableflags[0] & DSBL_DAMPER:
        return
    for t in range(m.ntendon):
        b = tendon_damping(m, d, t)
        if b != 0.0:
            _add_moment_outer(m, d.ten_J[t], scale * b, out_sparse, out_dense, dense)


@njit(cache=True)
def _lu_solve_dense(A, x):
    """Solve in place x ← A⁻¹ x by Gaussian elimination, partial pivoting (A is overwritten).

    A singular A (a column's largest pivot at or below MINVAL, or NaN) gives x = NaN, which
    step's state check turns into a reset and a warning.
    """
    n = A.shape[0]
    for k in range(n):
        p = k
        big = abs(A[k, k])
        for r in range(k + 1, n):
            if abs(A[r, k]) > big:
                big = abs(A[r, k])
                p = r
        if not big > MINVAL:
            x[:] = np.nan
            return
        if p != k:
            for c in range(n):
                A[k, c], A[p, c] = A[p, c], A[k, c]
            x[k], x[p] = x[p], x[k]
        piv = A[k, k]
        for r in range(k + 1, n):
            f = A[r, k] / piv
            if f != 0.0:
                for c in range(k + 1, n):
                    A[r, c] -= f * A[k, c]
                x[r] -= f * x[k]
    for k in range(n - 1, -1, -1):
        s = x[k]
        for c in range(k + 1, n):
            s -= A[k, c] * x[c]
        x[k] = s / A[k, k]


@njit(cache=True)
def implicitfast_matrix(m, d):
    """qH = M − h D of the implicitfast step, standalone free bodies' blocks left at M.

    D = −B − Σ_t b_t ten_Jᵀ ten_J + Σ (∂f/∂v) momentᵀ moment + sym(∂qfrc_fluid/∂v).
    Returns the number of standalone free bodies, whose blocks are then given by
    `free_block` (which leaves d.scratch_vv, the fluid derivative, as it is).
    """
    nv = m.nv
    h = m.opt_timestep[0]
    d.qH[:] = d.qM
    for i in range(nv):
        d.qH[m.dof_Madr[i]] += h * damping(m, d, i)
    _add_actuator_deriv(m, d, -h, d.qH, d.scratch_vv, False)
    if m.ntendon:
        _add_tendon_damping(m, d, h, d.qH, d.scratch_vv, False)
    if fluid_active(m):
        # − h (D + Dᵀ)/2 (MuJoCo symmetrizes each body's block; the free bodies' are redone)
        D = d.scratch_vv
        fluid_vel_deriv(m, d, D)
        for i in range(nv):
            adr = m.dof_Madr[i]
            j = i
            while j >= 0:
                d.qH[adr] -= 0.5 * h * (D[i, j] + D[j, i])
                adr += 1
                j = m.dof_parentid[j]
    nfree = 0
    for j in range(m.njnt):
        if m.jnt_type[j] == JNT_FREE and is_free_body(m, m.jnt_bodyid[j]):
            nfree += 1
            a = m.jnt_dofadr[j]
            for i in range(a, a + 6):
                adr = m.dof_Madr[i]
                for k in range(i - a + 1):
                    d.qH[adr + k] = d.qM[adr + k]
    return nfree


@njit(cache=True)
def free_block(m, d, j, A, B):
    """A = M_block − h (D_block − ∂bias/∂v) of the standalone free joint j (6×6, unsymmetric).

    B is 6×6 scratch. With fluid forces, D_block has their derivative, unsymmetrized,
    from d.scratch_vv (`implicitfast_matrix` puts it there).
    """
    h = m.opt_timestep[0]
    a = m.jnt_dofadr[j]
    for r in range(6):
        adr = m.dof_Madr[a + r]
        for k in range(r + 1):
            A[r, r - k] = d.qM[adr + k]
            A[r - k, r] = d.qM[adr + k]
        A[r, r] += h * damping(m, d, a + r)
    for u in range(m.nactuator):
        dfdv = actuator_damping(m, d, u)
        if dfdv != 0.0:
            for o in range(m.actuator_outadr[u], m.actuator_outadr[u] + m.actuator_outnum[u]):
                mom = d.actuator_moment[o, a:a + 6]
                for r in range(6):
                    for c in range(6):
                        A[r, c] -= h * dfdv * mom[r] * mom[c]
    if m.ntendon and not m.opt_disableflags[0] & DSBL_DAMPER:
        # + h Σ_t b_t ten_J_tᵀ ten_J_t on the block
        for t in range(m.ntendon):
            bt = tendon_damping(m, d, t)
            if bt != 0.0:
                Jt = d.ten_J[t, a:a + 6]
                for r in range(6):
                    for c in range(6):
                        A[r, c] += h * bt * Jt[r] * Jt[c]
    _free_bias_vel(m, d, m.jnt_bodyid[j], d.qvel[a + 3:a + 6], B)
    for r in range(6):
        for c in range(6):
            A[r, c] += h * B[r, c]
    if fluid_active(m):
        # the fluid derivative's block as it is (d.scratch_vv, from implicitfast_matrix)
        for r in range(6):
            for c in range(6):
                A[r, c] -= h * d.scratch_vv[a + r, a + c]


@njit(cache=True)
def implicitfast(m, d):
    """Implicit-in-velocity step without Coriolis derivatives (mj_implicit, implicitfast)."""
    nv = m.nv
    nfree = implicitfast_matrix(m, d)
    qfrc = np.empty(nv)
    for i in range(nv):
        qfrc[i] = d.qfrc_smooth[i] + d.qfrc_constraint[i]
    bad = factor_ld(m, d.qH, d.qHDiagInv)
    qacc = qfrc.copy()
    if bad >= 0:
        qacc[:] = np.nan  # qH singular: no acceleration; step's state check resets
    else:
        solve_ld(m, d.qH, d.qHDiagInv, shaped(qacc, (1, nv)))
    if nfree > 0:
        A = np.empty((6, 6))
        B = np.empty((6, 6))
        x = np.empty(6)
        for j in range(m.njnt):
            if m.jnt_type[j] != JNT_FREE or not is_free_body(m, m.jnt_bodyid[j]):
                continue
            a = m.jnt_dofadr[j]
            free_block(m, d, j, A, B)
            x[:] = qfrc[a:a + 6]
            _lu_solve_dense(A, x)
            qacc[a:a + 6] = x
    advance(m, d, qacc)


@njit(cache=True)
def _bias_vel_deriv(m, d, out):
    """Bias derivative out (nv×nv) = ∂qfrc_bias/∂qvel at d.qvel, by exact polarization.

    Leaves d.qvel, cvel and cdof_dot as they were (cacc and cfrc_int are overwritten).
    """
    nv = m.nv
    v0 = d.qvel.copy()
    plus = np.empty(nv)
    minus = np.empty(nv)
    for k in range(nv):
        d.qvel[k] = v0[k] + 1.0
        com_vel_stage(m, d)
        rne(m, d, RNE_VEL | RNE_GRAVITY, d.cfrc_ext, plus)
        d.qvel[k] = v0[k] - 1.0
        com_vel_stage(m, d)
        rne(m, d, RNE_VEL | RNE_GRAVITY, d.cfrc_ext, minus)
        d.qvel[k] = v0[k]
        for i in range(nv):
            out[i, k] = 0.5 * (plus[i] - minus[i])
    com_vel_stage(m, d)


# relative step of the central differences of the fluid forces in qvel: truncation
# O(eps²) and rounding O(1e-16 / eps) both near 1e-11 of the derivative
FLUID_FD_EPS = 1e-6


@njit(cache=True)
def fluid_active(m):
    """True when the fluid forces act and have a velocity derivative (mjd_passive_vel)."""
    if m.opt_density[0] == 0.0 and m.opt_viscosity[0] == 0.0:
        return False
    return (m.opt_disableflags[0] & DSBL_SPRING) == 0 or (m.opt_disableflags[0]
                                                          & DSBL_DAMPER) == 0


@njit(cache=True)
def fluid_vel_deriv(m, d, out):
    """out (nv×nv) = ∂qfrc_fluid/∂qvel at d.qvel, by central differences.

    MuJoCo differentiates its two fluid models analytically (mjd_inertiaBoxFluid,
    mjd_ellipsoidFluid: per body, B = ∂f_local/∂v_local and Jᵀ B J); the forces are
    smooth in the velocity, so differences with step FLUID_FD_EPS · max(1, |qvel_k|)
    give the same matrix to about 1e-11 of its size (measured on both models, with wind).
    Leaves d.qvel, cvel, cdof_dot and qfrc_fluid as they were.
    """
    nv = m.nv
    v0 = d.qvel.copy()
    saved = d.qfrc_fluid.copy()
    for k in range(nv):
        eps = FLUID_FD_EPS * max(1.0, abs(v0[k]))
        d.qvel[k] = v0[k] + eps
        com_vel_stage(m, d)
        d.qfrc_fluid[:] = 0.0
        fluid(m, d)
        for i in range(nv):
            out[i, k] = d.qfrc_fluid[i]
        d.qvel[k] = v0[k] - eps
        com_vel_stage(m, d)
        d.qfrc_fluid[:] = 0.0
        fluid(m, d)
        for i in range(nv):
            out[i, k] = (out[i, k] - d.qfrc_fluid[i]) / (2.0 * eps)
        d.qvel[k] = v0[k]
    com_vel_stage(m, d)
    d.qfrc_fluid[:] = saved


@njit(cache=True)
def implicit_matrix(m, d, A):
    """A (nv×nv, dense) = M − h D, D = ∂(qfrc_passive + qfrc_actuator − qfrc_bias)/∂v.

    qfrc_passive's part: dof and tendon damping, and the fluid forces (`fluid_vel_deriv`).
    """
    nv = m.nv
    h = m.opt_timestep[0]
    # A = h ∂bias/∂v, then A += M + h B − h Σ (∂f/∂v) momentᵀ moment
    _bias_vel_deriv(m, d, A)
    for i in range(nv):
        for j in range(nv):
            A[i, j] *= h
    for i in range(nv):
        adr = m.dof_Madr[i]
        j = i
        while j >= 0:
            A[i, j] += d.qM[adr]
            if j != i:
                A[j, i] += d.qM[adr]
            adr += 1
            j = m.dof_parentid[j]
        A[i, i] += h * damping(m, d, i)
    _add_actuator_deriv(m, d, -h, d.qH, A, True)
    if m.ntendon:
        _add_tendon_damping(m, d, h, d.qH, A, True)
    if fluid_active(m):
        D = np.empty((nv, nv))
        fluid_vel_deriv(m, d, D)
        for i in range(nv):
            for j in range(nv):
                A[i, j] -= h * D[i, j]


@njit(cache=True)
def implicit(m, d):
    """Implicit-in-velocity step with the full D = ∂(passive + actuator − bias)/∂v (mj_implicit)."""
    nv = m.nv
    A = d.scratch_vv
    implicit_matrix(m, d, A)
    qacc = np.empty(nv)
    for i in range(nv):
        qacc[i] = d.qfrc_smooth[i] + d.qfrc_constraint[i]
    _lu_solve_dense(A, qacc)
    advance(m, d, qacc)


_k_integrate_pos = entry.Kernel(integrate_pos_kernel)
_k_diff_pos = entry.Kernel(diff_pos_kernel)


def _check_model(m, fname):
    from jointspace.types import Model

    if type(m) is not Model:
        raise TypeError(f"{fname}: first argument must be a jointspace Model, "
                        f"got {type(m).__name__}")


def integrate_pos(m, qpos, qvel, dt):
    """Positions reached from `qpos` moving at velocity `qvel` for time `dt`, on the manifold.

    Hinge and slide coordinates add dt·qvel; ball and free quaternions are multiplied on the
    right by exp(dt·ω/2) with ω the angular velocity in the joint's local frame; free joint
    positions move by dt·v in world axes. The quaternion of `qpos` is normalized first.

    Args:
        m: the Model.
        qpos: (nq,) positions.
        qvel: (nv,) velocity (tangent vector).
        dt: time (may be negative).

    Returns:
        (nq,) new positions (qpos itself is not modified).
    """
    _check_model(m, "integrate_pos")
    q = entry.vec(qpos, m.nq, "qpos", "integrate_pos").copy()
    v = entry.vec(qvel, m.nv, "qvel", "integrate_pos")
    ep = _k_integrate_pos.ep
    ep(m._s, q, v, float(dt))
    return q


def diff_pos(m, q1, q2, dt=1.0):
    """Velocity that takes `q1` to `q2` in time `dt`: the inverse of `integrate_pos`.

    integrate_pos(m, q1, diff_pos(m, q1, q2, dt), dt) == q2 (for rotations below π).

    Args:
        m: the Model.
        q1: (nq,) start positions.
        q2: (nq,) end positions.
        dt: time, non-zero.

    Returns:
        (nv,) velocity in the tangent space at q1 (local angular velocity for ball/free).
    """
    _check_model(m, "diff_pos")
    a = entry.vec(q1, m.nq, "q1", "diff_pos")
    b = entry.vec(q2, m.nq, "q2", "diff_pos")
    dt = float(dt)
    if dt == 0.0:
        raise ValueError("diff_pos: argument dt must be non-zero")
    v = np.empty(m.nv)
    ep = _k_diff_pos.ep
    ep(m._s, v, dt, a, b)
    return v
