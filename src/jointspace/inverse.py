"""Inverse dynamics with contacts and constraints: the analytical inverse of the soft model.

From qpos, qvel and qacc, `inverse(m, d)` computes the generalized force that caused the
motion, d.qfrc_inverse, and every constraint force, d.efc_force, with no factorization of M
and no iterative solve (Todorov 2014, 004 §III; MuJoCo's mj_inverse, engine_inverse.c):

  position      forward's fwd_position (kinematics → com_pos → transmission; crb and
                factor_m only for the discrete inverse) and fwd_rows (collision →
                make_constraint): the same contacts and rows as `forward`
  velocity      forward's fwd_velocity (actuator_velocity → com_vel → passive → rne
                (qfrc_bias)) → reference (efc_vel, aref)
  acceleration  jar = J qacc − aref,   y = −R⁻¹ jar   (004 eq. 15: y = R⁻¹(v* − v⁺))
                efc_force, one closed form per constraint:
                  equality                      f = y                  (Theorem 2, eq. 13)
                  friction loss η               f = max(−η, min(η, y)) (Theorem 4)
                  limit, frictionless contact,  f = max(0, y)          (Theorem 4)
                  pyramidal edge
                  elliptic contact              f = ConeProject(y)     (Algorithm 5)
                qfrc_constraint = Jᵀ f
                qfrc_inverse = RNE(q, v, qacc) − qfrc_passive − qfrc_constraint
where RNE includes armature (M qacc + c(q, v), 004 eq. 12). So qfrc_inverse equals
qfrc_applied + qfrc_actuator + Σ J_bᵀ xfrc_applied_b whenever qacc came from `forward`.
Each projection is the unique minimizer of ½ (f − y)ᵀ R (f − y) over its constraint set,
which by Theorem 3 is the force the forward solver found: the forward and inverse
dynamics of the soft model are exact inverses of each other.

Discrete time. With the "invdiscrete" enable flag (MuJoCo's mjENBL_INVDISCRETE), and always
in `inverse_step` (the paper's (q, v) → v' form), qacc is the acceleration (v' − v)/h that
m.opt.integrator realized over one step; it is first mapped to the continuous acceleration
the forward solve produced (mj_discreteAcc), which needs M and its factor:
  Euler         a = M⁻¹ (M + h B) a_h   (implicit dof damping; a = a_h without damping)
  implicitfast  a = M⁻¹ (M − h D) a_h   (D = ∂(passive + actuator)/∂v, free-body blocks
                                          with their gyroscopic derivative)
  implicit      a = M⁻¹ (M − h D) a_h   (D also has −∂qfrc_bias/∂v)
  RK4           refused: its step is no single linear map of one acceleration.

fwdinv. With the "fwdinv" enable flag, `step` compares forward and inverse after each
forward pass (mj_compareFwdInv) into d.solver_fwdinv; `compare_fwd_inv` does it on any
state. `inverse_trajectory` runs the inverse along arrays of states in one compiled call
and recovers controls, constraint and contact forces. `cone_project` is Algorithm 5 on
batches of vectors.
"""

import math

import numpy as np
from numba import njit

from jointspace._numba import entry
from jointspace.actuation import actuation
from jointspace.actuator_passive import tendon_armature
from jointspace.constraint import (
    CNSTR_CONTACT_ELLIPTIC,
    CNSTR_CONTACT_FRICTIONLESS,
    CNSTR_CONTACT_PYRAMIDAL,
    STATE_CONE,
    STATE_LINEARNEG,
    STATE_LINEARPOS,
    STATE_QUADRATIC,
    STATE_SATISFIED,
    reference,
    warn_cnstrfull,
)
from jointspace.diagnostics import bad_element, division_error, element_name, joint_label
from jointspace.dynamics.crba import crb_stage, dense_from_sparse
from jointspace.dynamics.derivatives import rnea_derivatives_kernel
from jointspace.dynamics.rnea import RNE_ACC, RNE_FEXT, RNE_GRAVITY, RNE_VEL, rne
from jointspace.errors import JointspaceError, SingularMassError
from jointspace.forward import (
    forward_checked,
    fwd_position,
    fwd_rows,
    fwd_rows_of,
    fwd_velocity,
    fwd_velocity_passive,
    warn_forward,
)
from jointspace.integrate import (
    damping,
    euler_damped,
    fluid_active,
    free_block,
    implicit_matrix,
    implicitfast_matrix,
    integrate_pos_kernel,
    is_free_body,
    tendon_damping,
)
from jointspace.kinematics import tendon_bias
from jointspace.sensor import contact_frame_forces, sensor_stage
from jointspace.solver.cost import mul_j, mul_jt, mul_m, solve_m
from jointspace.types import (
    DSBL_ACTUATION,
    DSBL_DAMPER,
    DSBL_GRAVITY,
    ENBL_DIAGEXACT,
    ENBL_INVDISCRETE,
    ENBL_OVERRIDE,
    GAIN_DCMOTOR,
    GAIN_PID,
    GAIN_SO3,
    GEOM_PLANE,
    INT_EULER,
    INT_IMPLICITFAST,
    INT_RK4,
    JNT_FREE,
    SMALL_CONE,
    TRN_BODY,
    WRAP_JOINT,
)

# return codes of the compiled drivers (≥ 1: 1 + 3 · index + kind, a bad qpos/qvel/qacc element)
OK, RK4_DISCRETE = 0, -1  # −2 − dof: M is singular at that dof (discrete inverse only)
ROWS_DROPPED = -(1 << 40)  # the inverse ran, but rows did not fit into njmax (count and rows
#                            requested in d.warning_cnstrfull); no dof index reaches this value


# ---------------------------------------------------------------------------------------------
# Algorithm 5: projection on the elliptic friction cone in the R-weighted metric


@njit(cache=True, inline="always")
def _cone_project(y, mu, n, r0, rF, x):
    """Nearest point x of the friction cone to y in the metric Σ r_k (x_k − y_k)² (Algorithm 5).

    Cone C = {x0 ≥ 0, x0² ≥ Σ_j (x_j/μ_j)²} in R^n (n = d + 1, j = 1 … d). The weights are the
    paper's contact parameters (21): normal weight r0 and mean friction weight rF, with
    r_j = rF μ_j⁻² / ⟨μ⁻²⟩ and μ̂² = rF / (r0 ⟨μ⁻²⟩) (eq. 22), so that μ_j² r_j = μ̂² r0
    (eq. 17) and the cone is circular, μ̂ x̂0 ≥ |x̂_T|, in x̂_k = r_k^½ x_k (eq. 16).
    Reads y[:n], mu[:n − 1]; writes x[:n]. Returns STATE_QUADRATIC (y in C, x = y),
    STATE_SATISFIED (x = 0, the tip) or STATE_CONE (x on the surface).
    """
    # 1) y inside the cone: x = y
    s = 0.0
    for j in range(1, n):
        t = y[j] / mu[j - 1]
        s += t * t
    if y[0] >= 0.0 and y[0] * y[0] >= s:
        for k in range(n):
            x[k] = y[k]
        return STATE_QUADRATIC
    # 2) no tangential component (so y0 < 0): the tip
    if s == 0.0:
        for k in range(n):
            x[k] = 0.0
        return STATE_SATISFIED
    # 3) ⟨μ⁻²⟩, μ̂² = rF / (r0 ⟨μ⁻²⟩), r_j = rF μ_j⁻² / ⟨μ⁻²⟩   (eq. 22)
    minv2 = 0.0
    for j in range(1, n):
        minv2 += 1.0 / (mu[j - 1] * mu[j - 1])
    minv2 /= n - 1
    muh2 = rF / (r0 * minv2)
    muh = math.sqrt(muh2)
    # 4) ŷ0 = r0^½ y0, T = |ŷ_T| = (Σ r_j y_j²)^½   (eq. 16)
    sr0 = math.sqrt(r0)
    yh0 = sr0 * y[0]
    T2 = 0.0
    for j in range(1, n):
        T2 += rF / (mu[j - 1] * mu[j - 1] * minv2) * y[j] * y[j]
    T = math.sqrt(T2)
    c = 1.0 / (1.0 + muh2)
    # x̂_T = a ŷ_T for a scalar a, so x_j = x̂_j / r_j^½ = a y_j
    if yh0 == 0.0:
        # 5) ŷ0 = 0: x̂0 = μ̂ |ŷ_T| / (1 + μ̂²), x̂_T = μ̂² ŷ_T / (1 + μ̂²)   (eq. 20)
        xh0 = muh * T * c
        a = muh2 * c
    else:
        # 6) x̂0 = ŷ0 / (1 + μ̂² λ±), x̂_T = ŷ_T / (1 − λ±), λ± = (1 ∓ β)/(1 ± μ̂² β),
        #    β = |ŷ_T| / (μ̂ |ŷ0|)   (eq. 18–19), evaluated without cancellation as
        #    1 + μ̂² λ± = (1 + μ̂²)/(1 ± μ̂² β),  1 − λ± = ±β (1 + μ̂²)/(1 ± μ̂² β)
        sgn = 1.0 if yh0 > 0.0 else -1.0
        q = muh * abs(yh0) / T  # = 1/β
        xp0 = (yh0 + sgn * muh * T) * c
        ap = (muh2 + q) * c
        xm0 = (yh0 - sgn * muh * T) * c
        am = (muh2 - q) * c
        # 7) among x̂⁺, x̂⁻ with x̂0 ≥ 0 the one nearer ŷ; if neither, the tip
        dp = (xp0 - yh0) * (xp0 - yh0) + (ap - 1.0) * (ap - 1.0) * T2
        dm = (xm0 - yh0) * (xm0 - yh0) + (am - 1.0) * (am - 1.0) * T2
        if xp0 >= 0.0 and (xm0 < 0.0 or dp <= dm):
            xh0 = xp0
            a = ap
        elif xm0 >= 0.0:
            xh0 = xm0
            a = am
        else:
            for k in range(n):
                x[k] = 0.0
            return STATE_SATISFIED
    # 8) back from x̂ (eq. 16)
    x[0] = xh0 / sr0
    for j in range(1, n):
        x[j] = a * y[j]
    if x[0] == 0.0:
        return STATE_SATISFIED
    return STATE_CONE


@njit(cache=True, nogil=True)
def _cone_project_batch(y, mu, r0, rF, x, state):
    """_cone_project on each row of y (N, n), mu (N, n − 1), r0 (N,), rF (N,)."""
    n = y.shape[1]
    for p in range(y.shape[0]):
        state[p] = _cone_project(y[p], mu[p], n, r0[p], rF[p], x[p])


# ---------------------------------------------------------------------------------------------
# Theorems 2 and 4: constraint forces from jar = J qacc − aref


@njit(cache=True)
def _constraint_forces(d, jar, force, state):
    """efc_force and efc_state at jar by the analytical inverse (004 Theorems 2, 4, Alg. 5).

    y = −D jar; each constraint's force is the R-weighted projection of its y on the
    constraint's force set (the whole space for equality rows).
    """
    ne = d.ne[0]
    nf = d.nf[0]
    nefc = d.nefc[0]
    D = d.efc_D
    R = d.efc_R
    efc_type = d.efc_type
    floss = d.efc_frictionloss
    buf = d.scratch_small
    yb = buf[SMALL_CONE:SMALL_CONE + 6]
    xb = buf[SMALL_CONE + 6:SMALL_CONE + 12]
    mub = buf[SMALL_CONE + 12:SMALL_CONE + 17]
    i = 0
    while i < nefc:
        y = -D[i] * jar[i]
        if i < ne:
            # f_E = R_E⁻¹ (v*_E − J_E v')
            force[i] = y
            state[i] = STATE_QUADRATIC
            i += 1
            continue
        if i < ne + nf:
            eta = floss[i]
            if y >= eta:
                force[i] = eta
                state[i] = STATE_LINEARNEG
            elif y <= -eta:
                force[i] = -eta
                state[i] = STATE_LINEARPOS
            else:
                force[i] = y
                state[i] = STATE_QUADRATIC
            i += 1
            continue
        if efc_type[i] != CNSTR_CONTACT_ELLIPTIC:
            if y > 0.0:
                force[i] = y
                state[i] = STATE_QUADRATIC
            else:
                force[i] = 0.0
                state[i] = STATE_SATISFIED
            i += 1
            continue
        c = d.efc_id[i]
        dim = d.contact_dim[c]
        rF = 0.0
        for k in range(dim):
            yb[k] = -D[i + k] * jar[i + k]
            if k > 0:
                mub[k - 1] = d.contact_friction[c, k - 1]
                rF += R[i + k]
        st = _cone_project(yb, mub, dim, R[i], rF / (dim - 1), xb)
        for k in range(dim):
            force[i + k] = xb[k]
            state[i + k] = st
        i += dim


# ---------------------------------------------------------------------------------------------
# the pipeline


@njit(cache=True)
def _check_state(d):
    """0, or 1 + 3 · index + kind for the first bad qpos (0), qvel (1), qacc (2) element."""
    i = bad_element(d.qpos)
    if i >= 0:
        return 1 + 3 * i
    i = bad_element(d.qvel)
    if i >= 0:
        return 2 + 3 * i
    i = bad_element(d.qacc)
    if i >= 0:
        return 3 + 3 * i
    return OK


@njit(cache=True)
def _discrete_acc(m, d, qacc):
    """In place: the step's acceleration a_h → the continuous a of the forward solve.

    Needs qM and its factor. Returns False (qacc untouched) for RK4.
    """
    nv = m.nv
    integrator = m.opt_integrator[0]
    if integrator == INT_RK4:
        return False
    qfrc = np.empty(nv)
    if integrator == INT_EULER:
        if not euler_damped(m):
            return True
        # qfrc = (M + h B) a_h
        h = m.opt_timestep[0]
        mul_m(m, d.qM, qacc, qfrc)
        for i in range(nv):
            qfrc[i] += h * damping(m, d, i) * qacc[i]
    elif integrator == INT_IMPLICITFAST:
        # qfrc = (M − h D) a_h, standalone free bodies by their unsymmetric 6×6 block
        actuation(m, d)
        nfree = implicitfast_matrix(m, d)
        mul_m(m, d.qH, qacc, qfrc)
        if nfree > 0:
            A = np.empty((6, 6))
            B = np.empty((6, 6))
            for j in range(m.njnt):
                if m.jnt_type[j] != JNT_FREE or not is_free_body(m, m.jnt_bodyid[j]):
                    continue
                free_block(m, d, j, A, B)
                a = m.jnt_dofadr[j]
                for r in range(6):
                    s = 0.0
                    for k in range(6):
                        s += A[r, k] * qacc[a + k]
                    qfrc[a + r] = s
    else:
        # qfrc = (M − h D) a_h with the full D (dense)
        actuation(m, d)
        A = d.scratch_vv
        implicit_matrix(m, d, A)
        for i in range(nv):
            s = 0.0
            for k in range(nv):
                s += A[i, k] * qacc[k]
            qfrc[i] = s
    # a = M⁻¹ qfrc
    for i in range(nv):
        qacc[i] = qfrc[i]
    solve_m(m, d, qacc)
    return True


@njit(cache=True, inline="always")
def _inv_constraint(m, d):
    """efc_force, efc_state and qfrc_constraint = Jᵀ f at d.qacc (mj_invConstraint)."""
    nefc = d.nefc[0]
    if nefc == 0:
        for k in range(m.nv):
            d.qfrc_constraint[k] = 0.0
        return
    # jar = J qacc − aref
    jar = d.scratch_efc[:nefc]
    mul_j(d, d.qacc, jar)
    for i in range(nefc):
        jar[i] -= d.efc_aref[i]
    _constraint_forces(d, jar, d.efc_force, d.efc_state)
    mul_jt(d, d.efc_force, d.qfrc_constraint)


@njit(cache=True)
def _inv_acceleration(m, d, discrete):
    """efc_force, qfrc_constraint and qfrc_inverse at d.qacc (mj_invConstraint and the rest).

    With `discrete`, d.qacc is first mapped to the continuous acceleration (and restored
    afterwards).
    """
    nv = m.nv
    saved = d.qacc.copy() if discrete else d.qacc
    if discrete:
        _discrete_acc(m, d, d.qacc)
    _inv_constraint(m, d)
    # qfrc_inverse = M qacc + c(q, v) (+ tendon armature bias) − qfrc_passive − qfrc_constraint
    gravity = RNE_GRAVITY if (m.opt_disableflags[0] & DSBL_GRAVITY) == 0 else 0
    rne(m, d, RNE_VEL | RNE_ACC | gravity, d.cfrc_ext, d.qfrc_inverse)
    if m.ntendon:
        tendon_bias(m, d, d.qfrc_inverse)
    for k in range(nv):
        d.qfrc_inverse[k] -= d.qfrc_passive[k] + d.qfrc_constraint[k]
    if discrete:
        for k in range(nv):
            d.qacc[k] = saved[k]


@njit(cache=True)
def _discrete_flag(m, discrete):
    """discrete < 0: the model's "invdiscrete" flag; else discrete itself."""
    if discrete < 0:
        return (m.opt_enableflags[0] & ENBL_INVDISCRETE) != 0
    return discrete != 0


@njit(cache=True, inline="always")
def _inverse(m, d, discrete):
    """The whole inverse (mj_inverse). Returns (code, rows requested); see OK, RK4_DISCRETE."""
    code = _check_state(d)
    if code != OK:
        return code, 0
    disc = _discrete_flag(m, discrete)
    if disc and m.opt_integrator[0] == INT_RK4:
        return RK4_DISCRETE, 0
    # M for the discrete map and for the exact constraint diagonal ("diagexact") of rows
    bad_pivot = fwd_position(m, d, disc or (m.opt_enableflags[0] & ENBL_DIAGEXACT) != 0)
    need = fwd_rows(m, d)
    if bad_pivot >= 0 and (disc or d.nefc[0] > 0):
        return -2 - bad_pivot, need
    fwd_velocity(m, d)
    reference(m, d)
    _inv_acceleration(m, d, disc)
    return OK, need


@njit(cache=True)
def _inverse_rest(m, d, bodies):
    """The continuous inverse's qfrc_passive and qfrc_constraint alone (no M, no RNE).

    What the position columns of `_inverse_fd_entry` difference when the rest of f is
    analytical: poses, rows (M and its factor only for "diagexact"), the passive forces,
    the reference and the closed-form constraint forces; qfrc_bias and qfrc_inverse are
    left as they were. The contacts are those of the pairs on the bodies flagged in
    `bodies` (all when it is empty, `collision_of`). Returns (code, rows requested) as
    `_inverse`.
    """
    code = _check_state(d)
    if code != OK:
        return code, 0
    bad_pivot = fwd_position(m, d, (m.opt_enableflags[0] & ENBL_DIAGEXACT) != 0)
    need = fwd_rows_of(m, d, bodies)
    if bad_pivot >= 0 and d.nefc[0] > 0:
        return -2 - bad_pivot, need
    fwd_velocity_passive(m, d)
    reference(m, d)
    _inv_constraint(m, d)
    return OK, need


@njit(cache=True, inline="always")
def _inverse_step(m, d, qvel_next):
    """qacc = (qvel_next − qvel)/h, then the discrete inverse (d untouched for RK4)."""
    if m.opt_integrator[0] == INT_RK4:
        return RK4_DISCRETE, 0
    h = m.opt_timestep[0]
    for k in range(m.nv):
        d.qacc[k] = (qvel_next[k] - d.qvel[k]) / h
    return _inverse(m, d, 1)


@njit(cache=True)
def _xfrc_qfrc(m, d, out):
    """out = Σ_b J_bᵀ xfrc_applied_b (overwrites cacc, cfrc_int, cfrc_ext)."""
    nonzero = False
    for b in range(m.nbody):
        for k in range(6):
            if d.xfrc_applied[b, k] != 0.0:
                nonzero = True
    if not nonzero:
        for k in range(m.nv):
            out[k] = 0.0
        return
    # RNE with only the external forces gives −Jᵀ xfrc
    rne(m, d, np.int64(RNE_FEXT), d.xfrc_applied, out)
    for k in range(m.nv):
        out[k] = -out[k]


@njit(cache=True)
def compare_fwd_inv_stage(m, d):
    """d.solver_fwdinv after a forward pass, leaving forward's results (mj_compareFwdInv).

    fwdinv[0] = |qfrc_constraint(forward) − qfrc_constraint(inverse)|,
    fwdinv[1] = |qfrc_applied + qfrc_actuator + Jᵀ xfrc_applied − qfrc_inverse|;
    both 0 without constraint rows. The inverse runs from its acceleration stage on the
    rows forward built, at forward's (continuous) qacc whatever the "invdiscrete" flag
    says: MuJoCo would map that qacc as a step's acceleration, which compares the solver
    with a different motion when joints are damped (and errs for RK4).
    """
    nv = m.nv
    nefc = d.nefc[0]
    d.solver_fwdinv[0] = 0.0
    d.solver_fwdinv[1] = 0.0
    if nefc == 0:
        return
    qforce = np.empty(nv)
    _xfrc_qfrc(m, d, qforce)
    for k in range(nv):
        qforce[k] += d.qfrc_applied[k] + d.qfrc_actuator[k]
    save_qfrc = d.qfrc_constraint.copy()
    save_force = d.efc_force[:nefc].copy()
    save_state = d.efc_state[:nefc].copy()
    _inv_acceleration(m, d, np.bool_(False))
    s0 = 0.0
    s1 = 0.0
    for k in range(nv):
        e0 = save_qfrc[k] - d.qfrc_constraint[k]
        e1 = qforce[k] - d.qfrc_inverse[k]
        s0 += e0 * e0
        s1 += e1 * e1
    d.solver_fwdinv[0] = math.sqrt(s0)
    d.solver_fwdinv[1] = math.sqrt(s1)
    for k in range(nv):
        d.qfrc_constraint[k] = save_qfrc[k]
    for i in range(nefc):
        d.efc_force[i] = save_force[i]
        d.efc_state[i] = save_state[i]


# ---------------------------------------------------------------------------------------------
# trajectories: controls and contact forces along arrays of states


@njit(cache=True)
def _actuator_ctrl(m, d, target, ctrl, resid):
    """Least-squares controls: momentᵀ (gain ctrl + bias) ≈ target; resid = the rest.

    Fixed gains and affine biases (as `actuation`; a pid's gains per input and its integral
    term at the current act), at the current actuator length and velocity; ctrlrange and
    forcerange are not applied (the controls the motion needs).
    Minimum-norm ctrl where actuators are redundant.
    """
    nv = m.nv
    nu = m.nu
    rhs = target.copy()
    if nu == 0 or (m.opt_disableflags[0] & DSBL_ACTUATION) != 0:
        for u in range(nu):
            ctrl[u] = 0.0
        for k in range(nv):
            resid[k] = rhs[k]
        return
    B = np.zeros((nv, nu))
    for a in range(m.nactuator):
        o = m.actuator_outadr[a]
        bias = 0.0
        if m.actuator_biastype[a] != 0:
            bp = m.actuator_biasprm[a]
            bias = bp[0] + bp[1] * d.actuator_length[o] + bp[2] * d.actuator_velocity[o]
        u = m.actuator_ctrladr[a]
        if m.actuator_gaintype[a] == GAIN_PID:
            # force = −biasprm₁ u_pos − biasprm₂ u_vel + u_ff + ki act + bias
            spec = m.actuator_ctrlspec[a]
            gains = (-m.actuator_biasprm[a, 1], -m.actuator_biasprm[a, 2], 1.0)
            adr = m.actuator_actadr[a]
            if adr >= 0 and m.actuator_gainprm[a, 0] > 0.0:
                bias += m.actuator_gainprm[a, 0] * d.act[adr + m.actuator_actnum[a] - 1]
            j = 0
            for slot in range(3):
                if spec & (1 << slot):
                    for k in range(nv):
                        B[k, u + j] = d.actuator_moment[o, k] * gains[slot]
                    j += 1
        else:
            g = m.actuator_gainprm[a, 0]
            for k in range(nv):
                B[k, u] = d.actuator_moment[o, k] * g
        for k in range(nv):
            rhs[k] -= d.actuator_moment[o, k] * bias
    sol = np.linalg.lstsq(B, rhs, -1.0)[0]
    for u in range(nu):
        ctrl[u] = sol[u]
    for k in range(nv):
        s = rhs[k]
        for u in range(nu):
            s -= B[k, u] * sol[u]
        resid[k] = s


@njit(cache=True, nogil=True)
def _inverse_trajectory(m, d, qpos, qvel, qacc, discrete, qfrc_inverse, qfrc_constraint,
                        ctrl, ctrl_residual, efc_force, nefc, contact):
    """The inverse at each time of the arrays, with controls and contact forces.

    Returns (−1, OK, 0), or (t, code, need) at the first time t whose inverse failed or
    whose rows overflowed njmax. contact[t, c] = (geom1, geom2, pos (3), force in the
    contact frame (6)).
    """
    T = qpos.shape[0]
    nv = m.nv
    target = np.empty(nv)
    xq = np.empty(nv)
    cf = np.empty((max(d.contact_dim.shape[0], 1), 6))
    for t in range(T):
        for k in range(m.nq):
            d.qpos[k] = qpos[t, k]
        for k in range(nv):
            d.qvel[k] = qvel[t, k]
            d.qacc[k] = qacc[t, k]
        code, need = _inverse(m, d, discrete)
        if code != OK or need < 0:
            return t, code, need
        n = d.nefc[0]
        nefc[t] = n
        for i in range(n):
            efc_force[t, i] = d.efc_force[i]
        for k in range(nv):
            qfrc_inverse[t, k] = d.qfrc_inverse[k]
            qfrc_constraint[t, k] = d.qfrc_constraint[k]
        contact_frame_forces(m, d, cf)
        for c in range(d.ncon[0]):
            contact[t, c, 0] = d.contact_geom[c, 0]
            contact[t, c, 1] = d.contact_geom[c, 1]
            for k in range(3):
                contact[t, c, 2 + k] = d.contact_pos[c, k]
            for k in range(6):
                contact[t, c, 5 + k] = cf[c, k]
        # actuators must supply qfrc_inverse − qfrc_applied − Jᵀ xfrc_applied
        _xfrc_qfrc(m, d, xq)
        for k in range(nv):
            target[k] = d.qfrc_inverse[k] - d.qfrc_applied[k] - xq[k]
        _actuator_ctrl(m, d, target, ctrl[t], ctrl_residual[t])
    return -1, OK, 0


@njit(cache=True, inline="always")
def _entry_code(code, need):
    """The driver's code, or ROWS_DROPPED when it succeeded with rows dropped (need < 0)."""
    if code == OK and need < 0:
        return ROWS_DROPPED
    return code


@njit(cache=True)
def _inverse_sensors(m, d, code):
    """The sensors after a successful inverse, as mj_inverse fills them.

    The fwdinv check and the trajectory drivers skip them, as MuJoCo's do. e_kinetic
    reads M, which the continuous inverse does not compute: it is computed here.
    """
    if code == OK and m.nsensor:
        crb_stage(m, d)
        sensor_stage(m, d)


@njit(cache=True, nogil=True)
def _inverse_entry(d, discrete):
    """_inverse with the model carried by d (one struct crosses into compiled code)."""
    code, need = _inverse(d.model, d, discrete)
    _inverse_sensors(d.model, d, code)
    return _entry_code(code, need)


@njit(cache=True, nogil=True)
def _inverse_step_entry(d, qvel_next):
    """_inverse_step with the model carried by d."""
    code, need = _inverse_step(d.model, d, qvel_next)
    _inverse_sensors(d.model, d, code)
    return _entry_code(code, need)


@njit(cache=True, nogil=True)
def _forward_compare(m, d):
    """forward_checked, then the fwdinv comparison (`compare_fwd_inv`)."""
    bad = forward_checked(m, d)
    compare_fwd_inv_stage(m, d)
    return bad


@njit(cache=True)
def _cone_jacobian(x, y, mu, n, r0, rF):
    """∂x/∂y (n, n) of `_cone_project` at a point x on the cone's surface (STATE_CONE).

    x minimizes ½ Σ r_k (x_k − y_k)² subject to g(x) = √(Σ_j (x_j/μ_j)²) − x0 = 0 with
    multiplier λ = r0 (x0 − y0) (the first KKT row, ∂g/∂x0 = −1). Differentiating the KKT
    conditions W (x − y) + λ ∇g = 0, g = 0:
        [[W + λ ∇²g, ∇g], [∇gᵀ, 0]] [dx; dλ] = [W dy; 0],
    ∇g_j = x_j / (μ_j² T), ∇²g_jl = δ_jl / (μ_j² T) − x_j x_l / (μ_j² μ_l² T³) (j, l ≥ 1),
    T = √(Σ_j (x_j/μ_j)²), W = diag(r0, r_j) with Algorithm 5's r_j = rF μ_j⁻² / ⟨μ⁻²⟩.
    """
    minv2 = 0.0
    for j in range(1, n):
        minv2 += 1.0 / (mu[j - 1] * mu[j - 1])
    minv2 /= n - 1
    w = np.empty(n)
    w[0] = r0
    t2 = 0.0
    for j in range(1, n):
        w[j] = rF / (mu[j - 1] * mu[j - 1] * minv2)
        t2 += (x[j] / mu[j - 1]) ** 2
    T = math.sqrt(t2)
    lam = r0 * (x[0] - y[0])
    K = np.zeros((n + 1, n + 1))
    rhs = np.zeros((n + 1, n))
    for k in range(n):
        K[k, k] = w[k]
        rhs[k, k] = w[k]
    K[0, n] = K[n, 0] = -1.0
    for j in range(1, n):
        mj2 = mu[j - 1] * mu[j - 1]
        K[j, n] = K[n, j] = x[j] / (mj2 * T)
        K[j, j] += lam / (mj2 * T)
        for k in range(1, n):
            K[j, k] -= lam * x[j] * x[k] / (mj2 * mu[k - 1] * mu[k - 1] * T * T * T)
    return np.linalg.solve(K, rhs)[:n]


@njit(cache=True)
def _inverse_jacobians(m, d, out, outv, outq, with_v):
    """∂f/∂qacc = M + Jᵀ H J into out, ∂f/∂qvel into outv, ∂(M qacc + c)/∂qpos into outq.

    All analytical; outv with with_v only, outq the smooth part of ∂f/∂qpos (tangent,
    `rnea_derivatives_kernel`). f = qfrc_inverse = M qacc + c(q, qvel) − qfrc_passive − Jᵀ
    φ(jar), jar = J qacc − aref, so ∂f/∂qacc = M − Jᵀ (∂φ/∂jar) J, and −∂φ/∂jar = H is block
    diagonal by constraint (Theorems 2–4 differentiated at the states of the last
    `_constraint_forces`): D_i on a row in its quadratic zone (equality rows always), 0 on a
    linear or satisfied one; on an elliptic contact on the cone's surface, H = (∂x/∂y) diag(D)
    by `_cone_jacobian` (y = −D jar). At a zone boundary this is the derivative of the zone the
    row is in. Without equality rows aref = −B J qvel − K I (pos − margin) (B = efc_KBIP[:, 1]),
    so ∂f/∂qvel = ∂c/∂qvel (`rnea_derivatives_kernel`) + diag(∂(c(v) v)/∂v of the dof
    dampers, `damping`) + Σ_t b_t ten_J_tᵀ ten_J_t (the tendon dampers' derivative,
    `tendon_damping`) + Jᵀ H B J. Needs the inverse's stages at d (rne at qacc included);
    without with_v, outv holds ∂c/∂qvel alone (the caller's differences overwrite it).
    """
    nv = m.nv
    mass = np.empty((nv, nv))
    rnea_derivatives_kernel(m, d, np.bool_(False), entry.input_view(d.cfrc_ext), outq, outv,
                            mass)
    if with_v:
        if (m.opt_disableflags[0] & DSBL_DAMPER) == 0:
            for k in range(nv):
                outv[k, k] += damping(m, d, k)
            # + b_t ten_J_tᵀ ten_J_t, b_t the tendon damper's derivative at ten_velocity
            for t in range(m.ntendon):
                bt = tendon_damping(m, d, t)
                if bt != 0.0:
                    Jt = d.ten_J[t]
                    for r in range(nv):
                        if Jt[r] != 0.0:
                            for c in range(nv):
                                outv[r, c] += bt * Jt[r] * Jt[c]
    crb_stage(m, d)
    dense_from_sparse(m, d.qM, out)
    kb = d.efc_KBIP
    nefc = d.nefc[0]
    J = d.efc_J
    D = d.efc_D
    R = d.efc_R
    state = d.efc_state
    jar = d.scratch_efc
    i = 0
    while i < nefc:
        n = 1
        if d.efc_type[i] == CNSTR_CONTACT_ELLIPTIC:
            n = d.contact_dim[d.efc_id[i]]
        H = np.zeros((n, n))
        if n > 1 and state[i] == STATE_CONE:
            c = d.efc_id[i]
            y = np.empty(n)
            x = np.empty(n)
            mu = np.empty(n - 1)
            rF = 0.0
            for k in range(n):
                y[k] = -D[i + k] * jar[i + k]
                x[k] = d.efc_force[i + k]
                if k > 0:
                    mu[k - 1] = d.contact_friction[c, k - 1]
                    rF += R[i + k]
            P = _cone_jacobian(x, y, mu, n, R[i], rF / (n - 1))
            for k in range(n):
                for t in range(n):
                    H[k, t] = P[k, t] * D[i + t]
        elif state[i] == STATE_QUADRATIC:
            for k in range(n):
                H[k, k] = D[i + k]
        # out += Σ_k,t J_kᵀ H_kt J_t
        for k in range(n):
            for t in range(n):
                h = H[k, t]
                if h == 0.0:
                    continue
                bt = kb[i + t, 1]
                for a in range(nv):
                    ja = h * J[i + k, a]
                    if ja != 0.0:
                        for b in range(nv):
                            out[a, b] += ja * J[i + t, b]
                            if with_v:
                                outv[a, b] += ja * bt * J[i + t, b]
        i += n


@njit(cache=True, inline="always")
def _inv_force(m, d, use_actuation, smooth, out):
    """out = qfrc_inverse, less qfrc_actuator with use_actuation (mjd_inverseFD's force).

    Without smooth, less M qacc + c too: out = −qfrc_passive − qfrc_constraint (− ...), the
    part of the force whose position derivative is differenced.
    """
    if use_actuation:
        actuation(m, d)
    for k in range(m.nv):
        f = d.qfrc_inverse[k] if smooth else -(d.qfrc_passive[k] + d.qfrc_constraint[k])
        out[k] = f - (d.qfrc_actuator[k] if use_actuation else 0.0)


@njit(cache=True)
def _forces_by_contact(d, out):
    """out[c] = −J_cᵀ f_c, contact c's part of −qfrc_constraint (its rows' efc_J, efc_force)."""
    J = d.efc_J
    nnz = d.efc_J_rownnz
    ind = d.efc_J_colind
    for r in range(d.nefc[0]):
        t = d.efc_type[r]
        if t != CNSTR_CONTACT_FRICTIONLESS and t != CNSTR_CONTACT_PYRAMIDAL and \
                t != CNSTR_CONTACT_ELLIPTIC:
            continue
        c = d.efc_id[r]
        f = d.efc_force[r]
        for j in range(nnz[r]):
            k = np.uint32(ind[r, j])
            out[c, k] -= J[r, k] * f


@njit(cache=True)
def _joint_local(m, d, use_actuation):
    """Whether the rest's part off the contacts moves, at dof k, with k's joint alone.

    Joint springs and limits, dof friction and dampers: then columns of dofs in different
    subtrees can share a perturbation (`_position_columns`). Not with tendons, active
    equalities, gravity compensation, fluid forces, the exact constraint diagonal (M⁻¹)
    or actuation.
    """
    if use_actuation or m.ntendon > 0 or fluid_active(m):
        return False
    if m.opt_enableflags[0] & ENBL_DIAGEXACT:
        return False
    for b in range(m.nbody):
        if m.body_gravcomp[b] != 0.0:
            return False
    for e in range(m.neq):
        if d.eq_active[e] != 0:
            return False
    return True


@njit(cache=True)
def _near_subtrees(m, d, eps):
    """near[i, j]: a geom in dof i's subtree and one in dof j's could touch when perturbed.

    A perturbation by eps moves a point by at most eps · max(1, R), R bounding the distance
    from any joint to any geom; two geoms on moving bodies are near when their world boxes
    (as the broadphase's, within the bounding sphere), grown by the model's largest margin
    and gap and by that motion, overlap (a plane on a moving body is near everything).
    Symmetric; a dof is near its ancestors' and descendants' dofs as well, harmlessly
    (they never share a group).
    """
    nv = m.nv
    ngeom = m.ngeom
    near = np.zeros((nv, nv), np.bool_)
    reach = 0.0
    for g in range(ngeom):
        reach = max(reach, m.geom_margin[g] + m.geom_gap[g])
    for p in range(m.npair):
        reach = max(reach, 0.5 * (m.pair_margin[p] + m.pair_gap[p]))
    if m.opt_enableflags[0] & ENBL_OVERRIDE:
        reach = max(reach, 0.5 * m.opt_o_margin[0])
    far = 0.0
    for b in range(m.nbody):
        far = max(far, math.sqrt(d.xpos[b, 0] ** 2 + d.xpos[b, 1] ** 2 + d.xpos[b, 2] ** 2))
    ext = 0.0
    for g in range(ngeom):
        x = d.geom_xpos[g]
        ext = max(ext, math.sqrt(x[0] ** 2 + x[1] ** 2 + x[2] ** 2) + m.geom_rbound[g])
    grow = reach + eps * max(1.0, far + ext)
    box = np.empty((ngeom, 6))
    for g in range(ngeom):
        xp = d.geom_xpos[g]
        xm = d.geom_xmat[g]
        a = m.geom_aabb[g]
        rb = m.geom_rbound[g]
        for k in range(3):
            c = xp[k] + xm[3 * k] * a[0] + xm[3 * k + 1] * a[1] + xm[3 * k + 2] * a[2]
            h = abs(xm[3 * k]) * a[3] + abs(xm[3 * k + 1]) * a[4] + abs(xm[3 * k + 2]) * a[5]
            box[g, k] = max(c - h, xp[k] - rb) - grow
            box[g, 3 + k] = min(c + h, xp[k] + rb) + grow
    for g in range(ngeom):
        bg = m.geom_bodyid[g]
        if _static(m, bg):
            continue
        for h in range(ngeom):
            bh = m.geom_bodyid[h]
            if bh == bg or _static(m, bh):
                continue
            if m.geom_type[g] != GEOM_PLANE and m.geom_type[h] != GEOM_PLANE:
                apart = False
                for k in range(3):
                    if box[g, k] > box[h, 3 + k] or box[h, k] > box[g, 3 + k]:
                        apart = True
                if apart:
                    continue
            _mark_near(m, bg, bh, near)
    return near


@njit(cache=True)
def _static(m, b):
    """Whether body b moves with no dof (it and its ancestors have none)."""
    while b > 0:
        if m.body_dofnum[b] > 0:
            return False
        b = m.body_parentid[b]
    return True


@njit(cache=True)
def _mark_near(m, bg, bh, near):
    """near[i, j] = near[j, i] = True for i moving body bg and j moving body bh."""
    a = bg
    while a > 0:
        for i in range(m.body_dofadr[a], m.body_dofadr[a] + m.body_dofnum[a]):
            c = bh
            while c > 0:
                for j in range(m.body_dofadr[c], m.body_dofadr[c] + m.body_dofnum[c]):
                    near[i, j] = True
                    near[j, i] = True
                c = m.body_parentid[c]
        a = m.body_parentid[a]


@njit(cache=True)
def _dof_ancestor(m, j, i):
    """Whether dof j is dof i's ancestor (or i itself)."""
    while i >= 0:
        if i == j:
            return True
        i = m.dof_parentid[i]
    return False


@njit(cache=True)
def _position_columns(m, d, eps, centered, use_actuation, grouped, q0, r0, Gc, cbody, out):
    """The differenced rest of ∂f/∂qpos, column by column or in groups of columns.

    A dof's perturbation moves its subtree's bodies alone, so a contact between two geoms
    outside it keeps its rows and its forces (the 2014 inverse's forces are contact by
    contact): a column collides only the pairs with a geom in its subtree (`collision_of`)
    and differences their contacts' forces against the given state's contacts on the same
    bodies (Gc, by contact, on bodies cbody). With `grouped` (`_joint_local`), dofs that are
    not each other's ancestors, share no contact of the given state and have no geoms that
    could meet within the perturbation (`_near_subtrees`) are perturbed together; each
    contact's forces go to the dof whose subtree holds it, the rest's other part at dof k to
    the dof of k's joint, and a group in which a perturbed contact touches two of its
    subtrees is redone column by column. The rest is −qfrc_passive − qfrc_constraint
    (− qfrc_actuator with use_actuation), as r0. Adds to out (which holds the smooth part);
    d.qpos ends at q0. Returns OK or the inverse's failure code.
    """
    nv = m.nv
    nbody = m.nbody
    ncon0 = Gc.shape[0]
    # touch[c, i]: the given state's contact c has a geom in dof i's subtree (i moves a
    # body at or above one of its geoms)
    touch = np.zeros((ncon0, nv), np.bool_)
    for c in range(ncon0):
        for s in range(2):
            b = cbody[c, s]
            while b > 0:
                for i in range(m.body_dofadr[b], m.body_dofadr[b] + m.body_dofnum[b]):
                    touch[c, i] = True
                b = m.body_parentid[b]
    near = _near_subtrees(m, d, eps) if grouped else np.zeros((0, 0), np.bool_)
    # greedy groups (each dof alone without `grouped`)
    color = np.empty(nv, np.int64)
    ngroup = 0
    for i in range(nv):
        g = 0 if grouped else ngroup
        while g < ngroup:
            fits = True
            for j in range(i):
                if color[j] != g:
                    continue
                if _dof_ancestor(m, j, i) or near[i, j]:
                    fits = False
                    break
                for c in range(ncon0):
                    if touch[c, i] and touch[c, j]:
                        fits = False
                        break
                if not fits:
                    break
            if fits:
                break
            g += 1
        color[i] = g
        if g == ngroup:
            ngroup += 1
    # the given state's rest off the contacts
    rnc0 = r0.copy()
    for c in range(ncon0):
        for k in range(nv):
            rnc0[k] -= Gc[c, k]
    members = np.empty(nv, np.int64)
    owner = np.empty(nbody, np.int64)
    bodies = np.zeros(nbody, np.int32)
    dpos = np.zeros(nv)
    res = np.zeros((2, nv, nv))
    rnc = np.zeros((2, nv))
    pending = np.zeros(nv, np.bool_)
    g = 0
    single = -1
    while g < ngroup or single >= 0:
        # the next group, or the next dof of a group being redone alone
        nmem = 0
        if single >= 0:
            members[0] = single
            nmem = 1
            pending[single] = False
        else:
            for i in range(nv):
                if color[i] == g:
                    members[nmem] = i
                    nmem += 1
            g += 1
        for b in range(nbody):
            owner[b] = -1
        for a in range(nmem):
            root = m.dof_bodyid[members[a]]
            for b in range(root, nbody):
                if b == root or owner[m.body_parentid[b]] == a:
                    owner[b] = a
        for b in range(nbody):
            bodies[b] = 1 if owner[b] >= 0 else 0
        conflict = False
        for side in range(2 if centered else 1):
            for a in range(nmem):
                dpos[members[a]] = 1.0
            integrate_pos_kernel(m, d.qpos, dpos, eps if side == 0 else -eps)
            for a in range(nmem):
                dpos[members[a]] = 0.0
            code, need = _inverse_rest(m, d, bodies)
            d.qpos[:] = q0
            if code != OK:
                return code
            # the rest split: each contact's to its subtree's member, the others' apart
            for a in range(nmem):
                for k in range(nv):
                    res[side, a, k] = 0.0
            if use_actuation:
                actuation(m, d)
            for k in range(nv):
                rnc[side, k] = -d.qfrc_passive[k] - (d.qfrc_actuator[k] if use_actuation else 0.0)
            for c in range(d.ncon[0]):
                o1 = owner[m.geom_bodyid[d.contact_geom[c, 0]]]
                o2 = owner[m.geom_bodyid[d.contact_geom[c, 1]]]
                if o1 >= 0 and o2 >= 0 and o1 != o2:
                    conflict = True
            if conflict:
                break
            J = d.efc_J
            for r in range(d.nefc[0]):
                t = d.efc_type[r]
                f = d.efc_force[r]
                if t == CNSTR_CONTACT_FRICTIONLESS or t == CNSTR_CONTACT_PYRAMIDAL or \
                        t == CNSTR_CONTACT_ELLIPTIC:
                    c = d.efc_id[r]
                    a = owner[m.geom_bodyid[d.contact_geom[c, 0]]]
                    if a < 0:
                        a = owner[m.geom_bodyid[d.contact_geom[c, 1]]]
                    for j in range(d.efc_J_rownnz[r]):
                        k = np.uint32(d.efc_J_colind[r, j])
                        res[side, a, k] -= J[r, k] * f
                else:
                    for j in range(d.efc_J_rownnz[r]):
                        k = np.uint32(d.efc_J_colind[r, j])
                        rnc[side, k] -= J[r, k] * f
        if conflict:
            # a contact between two of the group's subtrees: its columns one by one
            for a in range(nmem):
                pending[members[a]] = True
        else:
            for a in range(nmem):
                i = members[a]
                for k in range(nv):
                    mine = not grouped or m.dof_jntid[k] == m.dof_jntid[i]
                    if centered:
                        v = res[0, a, k] - res[1, a, k]
                        if mine:
                            v += rnc[0, k] - rnc[1, k]
                        out[k, i] += v / (2.0 * eps)
                    else:
                        v = res[0, a, k]
                        if mine:
                            v += rnc[0, k] - rnc0[k]
                        for c in range(ncon0):
                            if touch[c, i]:
                                v -= Gc[c, k]
                        out[k, i] += v / eps
        single = -1
        for i in range(nv):
            if pending[i]:
                single = i
                break
    return OK


@njit(cache=True)
def _spatial_armature(m):
    """True when a spatial tendon has armature (its own or its actuators', `tendon_armature`).

    Its part of M (armature ten_Jᵀ ten_J) and its bias depend on qpos and qvel through
    ten_J, which `_inverse_jacobians` does not differentiate: `_inverse_fd_entry` then
    differences all of f over qvel and qpos.
    """
    for t in range(m.ntendon):
        if m.wrap_type[m.tendon_adr[t]] != WRAP_JOINT and tendon_armature(m, t) != 0.0:
            return True
    return False


@njit(cache=True, nogil=True)
def _inverse_fd_entry(d, eps, use_actuation, centered, DfDq, DfDv, DfDa):
    """∂f/∂qacc and ∂f/∂qvel analytical, ∂f/∂qpos (tangent) analytical in its smooth part.

    mjd_inverseFD: the inverse at (qpos, qvel, qacc); ∂f/∂qacc and ∂f/∂qvel by
    `_inverse_jacobians` where it applies (else by differences: the acceleration stage
    alone, the velocity stage onward); then each tangent position perturbed in turn,
    forward (and backward when centered); out[:, i] = ∂f/∂x_i. For the continuous inverse
    ∂f/∂qpos = ∂(M qacc + c)/∂qpos (analytical, `_inverse_jacobians`) plus the differences
    of the rest, −qfrc_passive − qfrc_constraint (− qfrc_actuator); the discrete inverse
    differences all of f, and so do the velocity and position columns with a spatial tendon
    that has armature (`_spatial_armature`). The position columns of the rest run
    `_inverse_rest` (no M, no RNE) on the contacts of the pairs in the perturbed dof's
    subtree; d ends with the inverse at the given state. Returns the inverse's code (OK, or
    the first failure).
    """
    m = d.model
    nv = m.nv
    code, need = _inverse(m, d, -1)
    if code != OK:
        return code
    disc = _discrete_flag(m, -1)
    # the position columns: differences of all of f (else of its non-smooth part only)
    whole = disc or _spatial_armature(m)
    q0 = d.qpos.copy()
    f0 = np.empty(nv)
    fp = np.empty(nv)
    fm = np.empty(nv)
    dpos = np.zeros(nv)
    _inv_force(m, d, use_actuation, True, f0)
    # the position columns of the rest by subtree (`_position_columns`), unless an adhesion
    # actuator's moment or the contacts' adhesion pull reads every contact
    local = not whole and not np.any(m.actuator_trntype == TRN_BODY) and m.flg_adhesion[0] == 0
    ncon0 = d.ncon[0] if local else 0
    Gc = np.zeros((ncon0, nv))
    cbody = np.empty((ncon0, 2), np.int64)
    for c in range(ncon0):
        cbody[c, 0] = m.geom_bodyid[d.contact_geom[c, 0]]
        cbody[c, 1] = m.geom_bodyid[d.contact_geom[c, 1]]
    if local:
        _forces_by_contact(d, Gc)
    # analytical: ∂/∂qacc of the continuous inverse and the smooth part of ∂/∂qpos;
    # ∂/∂qvel too without equality rows (their aref has J̇ qvel) and actuation (its
    # velocity terms), nor a spatial tendon's armature
    with_v = not whole and not use_actuation and d.ne[0] == 0
    if not disc:
        _inverse_jacobians(m, d, DfDa, DfDv, DfDq, with_v)
    r0 = np.empty(nv)
    _inv_force(m, d, use_actuation, whole, r0)
    for stage in range(3):
        # 0: accelerations; 1: velocities; 2: positions, by differences where not analytical
        if (stage == 0 and not disc) or (stage == 1 and with_v):
            continue
        if stage == 2 and local:
            code = _position_columns(m, d, eps, centered, use_actuation,
                                     _joint_local(m, d, use_actuation), q0, r0, Gc, cbody, DfDq)
            if code != OK:
                return code
            continue
        out = DfDa if stage == 0 else (DfDv if stage == 1 else DfDq)
        for i in range(nv):
            for sign in (1.0, -1.0):
                if sign < 0 and not centered:
                    continue
                if stage == 0:
                    x = d.qacc[i]
                    d.qacc[i] = x + sign * eps
                    _inv_acceleration(m, d, disc)
                    d.qacc[i] = x
                elif stage == 1:
                    x = d.qvel[i]
                    d.qvel[i] = x + sign * eps
                    fwd_velocity(m, d)
                    reference(m, d)
                    _inv_acceleration(m, d, disc)
                    d.qvel[i] = x
                else:
                    dpos[i] = 1.0
                    integrate_pos_kernel(m, d.qpos, dpos, sign * eps)
                    dpos[i] = 0.0
                    if whole:
                        code, need = _inverse(m, d, -1)
                    else:
                        code, need = _inverse_rest(m, d, m.body_parentid[:0])
                    d.qpos[:] = q0
                    if code != OK:
                        return code
                _inv_force(m, d, use_actuation, stage < 2 or whole, fp if sign > 0 else fm)
            smooth = 0.0
            for k in range(nv):
                if stage == 2 and not whole:
                    smooth = out[k, i]
                if centered:
                    out[k, i] = smooth + (fp[k] - fm[k]) / (2.0 * eps)
                else:
                    out[k, i] = smooth + (fp[k] - (f0[k] if stage < 2 or whole else r0[k])) / eps
    # d back at the inverse of the given state
    code, need = _inverse(m, d, -1)
    return code


_k_inverse = entry.Kernel(_inverse_entry)
_k_forward_compare = entry.Kernel(_forward_compare)
_k_inverse_step = entry.Kernel(_inverse_step_entry)
_k_trajectory = entry.Kernel(_inverse_trajectory)
_k_cone = entry.Kernel(_cone_project_batch)
_k_inverse_fd = entry.Kernel(_inverse_fd_entry)


# ---------------------------------------------------------------------------------------------
# public API


def _raise_for(m, d, code, fname, stacklevel=3):
    """Turn a driver's return code into a clear exception, or the njmax warning."""
    if code == ROWS_DROPPED:
        warn_cnstrfull(m, d, -int(d.warning_cnstrfull[1]), fname, stacklevel=stacklevel + 1)
        return
    if code == RK4_DISCRETE:
        raise JointspaceError(
            f"{fname}: the discrete-time inverse is not defined for the RK4 integrator (its step "
            f"is no single linear map of one acceleration). Use m.opt.integrator = 'Euler', "
            f"'implicit' or 'implicitfast', or the continuous inverse (clear the "
            f"'invdiscrete' enable flag) with the acceleration d.qacc from forward")
    if code <= -2:
        dof = -2 - code
        raise SingularMassError(
            f"{fname}: the discrete-time inverse and the exact constraint diagonal (the "
            f"'diagexact' flag) need M⁻¹, but M is singular at dof {dof} "
            f"({joint_label(m, int(m.dof_jntid[dof]))}); give the bodies this dof moves "
            f"mass and inertia, or add armature (the continuous inverse without 'diagexact' "
            f"needs no M⁻¹)")
    kind = (code - 1) % 3
    index = (code - 1) // 3
    raise JointspaceError(
        f"{fname}: {element_name(m, kind, index)} is NaN, inf or larger than 1e10; the "
        f"inverse needs a finite state (qpos, qvel) and acceleration (qacc)")


def inverse(m, d):
    """Inverse dynamics with contacts and constraints at (qpos, qvel, qacc), in one compiled call.

    Writes d.qfrc_inverse, the force that produces qacc (it equals qfrc_applied +
    qfrc_actuator + Σ J_bᵀ xfrc_applied_b for the qacc of `forward`), d.efc_force,
    d.efc_state and d.qfrc_constraint (the constraint forces, analytical: no factorization
    of M, no iterative solve; see the module docstring), and the position and velocity
    stages (poses, contacts, efc rows, qfrc_bias, qfrc_passive) as MuJoCo's mj_inverse.
    With the "invdiscrete" enable flag (`m.opt_enableflags`), qacc is read as the step's
    acceleration (qvel_next − qvel)/h of m.opt.integrator (RK4 is refused).

    Args:
        m: the Model.
        d: a Data for m (reads qpos, qvel, qacc, and eq_active, mocap_pos, mocap_quat).

    Raises:
        JointspaceError: a NaN, inf or |x| > 1e10 in qpos, qvel or qacc (named), or the
            discrete inverse with RK4.
    """
    entry.check_pair(m, d, "inverse")
    inverse_at(m, d, -1, "inverse")


def inverse_at(m, d, discrete, fname):
    """The inverse's compiled call and its errors, for a checked (m, d) pair.

    discrete: 0 reads d.qacc as continuous, 1 as the step's acceleration, -1 as the
    model's "invdiscrete" flag says. Errors name `fname`.
    """
    ep = _k_inverse.ep
    try:
        code = ep(d._s, discrete)
    except ZeroDivisionError:
        raise division_error("inverse") from None
    if code:
        _raise_for(m, d, code, fname, stacklevel=4)


def inverse_step(m, d, qvel_next):
    """The force that took d.qvel to qvel_next in one step of m.opt.integrator (004 §III.A).

    The paper's inverse from (q, v, v'): qacc = (qvel_next − qvel)/h is the step's
    acceleration, mapped to the continuous acceleration of the forward solve as the
    "invdiscrete" flag does (see the module docstring), whatever that flag's value. Writes
    what `inverse` writes; d.qacc holds (qvel_next − qvel)/h. The impulses of the paper are
    h · d.efc_force and h · d.qfrc_inverse.

    Args:
        m: the Model.
        d: a Data for m at the state (qpos, qvel) the step started from.
        qvel_next: (nv,) the velocity after the step.

    Raises:
        JointspaceError: RK4 (no discrete inverse) or a bad state.
        SingularMassError: M is singular (the discrete inverse needs M⁻¹).
    """
    entry.check_pair(m, d, "inverse_step")
    qvel_next = entry.vec(qvel_next, m.nv, "qvel_next", "inverse_step")
    ep = _k_inverse_step.ep
    try:
        code = ep(d._s, qvel_next)
    except ZeroDivisionError:
        raise division_error("inverse_step") from None
    if code:
        _raise_for(m, d, code, "inverse_step")


def compare_fwd_inv(m, d):
    """Run forward at d's state, then the inverse at its qacc: how far apart they are.

    MuJoCo's fwdinv diagnostic (mj_compareFwdInv) on any state: writes d.solver_fwdinv =
    (|qfrc_constraint(forward) − qfrc_constraint(inverse)|,
    |qfrc_applied + qfrc_actuator + Jᵀ xfrc_applied − qfrc_inverse|), both 0 when there are
    no constraint rows; d keeps forward's results (qacc, efc_force, qfrc_constraint) and
    holds the inverse's qfrc_inverse. The gap measures how far the forward solver is from
    convergence (the soft model's inverse is exact). `step` records the same after each
    forward pass when the "fwdinv" enable flag is set.

    Args:
        m: the Model.
        d: a Data for m.

    Returns:
        (float, float): d.solver_fwdinv.
    """
    entry.check_pair(m, d, "compare_fwd_inv")
    ep = _k_forward_compare.ep
    bad = ep(m._s, d._s)
    if bad != -1:
        warn_forward(m, bad, "compare_fwd_inv")
    return float(d.solver_fwdinv[0]), float(d.solver_fwdinv[1])


class InverseTrajectory:
    """Inverse dynamics along a trajectory (the result of `inverse_trajectory`).

    Attributes (T = number of time points, C = most contacts at any time, E = most rows):
        qfrc_inverse: (T, nv) generalized force that produced each acceleration.
        qfrc_constraint: (T, nv) constraint force Jᵀ f.
        ctrl: (T, nu) least-squares controls that make the actuators produce
            qfrc_inverse − qfrc_applied − Jᵀ xfrc_applied (unclamped; minimum norm if the
            actuators are redundant).
        ctrl_residual: (T, nv) what those controls cannot produce, e.g. the force on an
            unactuated floating base ("residual forces").
        efc_force: (T, E) constraint forces, rows beyond nefc[t] are zero.
        nefc: (T,) number of constraint rows at each time.
        ncon: (T,) number of contacts at each time.
        contact_geom: (T, C, 2) geom ids of each contact (−1 beyond ncon[t]).
        contact_pos: (T, C, 3) contact points.
        contact_force: (T, C, 6) force of each contact in its frame (normal first), as
            MuJoCo's mj_contactForce; pyramidal cones are decoded.
    """

    __slots__ = ("qfrc_inverse", "qfrc_constraint", "ctrl", "ctrl_residual", "efc_force",
                 "nefc", "ncon", "contact_geom", "contact_pos", "contact_force")

    def __init__(self, **fields):
        """Hold the arrays given by name."""
        for k, v in fields.items():
            setattr(self, k, v)

    def __repr__(self):
        """Short description with the sizes."""
        return (f"InverseTrajectory(T={self.qfrc_inverse.shape[0]}, "
                f"max contacts={self.contact_force.shape[1]}, max rows={self.efc_force.shape[1]})")


def inverse_derivatives(m, d, eps=1e-6, actuation=False, centered=False):
    """Jacobians of the inverse with contacts, ∂f/∂qpos, ∂f/∂qvel, ∂f/∂qacc (mjd_inverseFD).

    f = d.qfrc_inverse of `inverse` at d's (qpos, qvel, qacc), less d.qfrc_actuator with
    `actuation` (MuJoCo's flg_actuation), in one compiled call; column i of each is
    ∂f/∂x_i (MuJoCo's outputs are these matrices transposed). ∂f/∂qacc is analytical:
    M + Jᵀ H J, H the derivative of the 2014 paper's closed-form constraint forces (D on
    rows in their quadratic zone, 0 in the others, and on elliptic contacts on the cone's
    surface the derivative of Algorithm 5's projection). ∂f/∂qvel is analytical too,
    ∂c/∂qvel (`rnea_derivatives`) + the dof and tendon dampers' derivatives + Jᵀ H B J
    (B the rows' reference damping), unless the model has active equality rows (whose aref
    holds J̇ qvel) or `actuation` is set, or a spatial tendon has armature (its own or its
    actuators'): then it is finite-differenced, rerunning the velocity stage onward.
    ∂f/∂qpos (tangent space, `integrate_pos(qpos, ±eps e_i)`) is ∂(M qacc + c)/∂qpos
    (analytical, `rnea_derivatives`) plus finite differences of the rest, −qfrc_passive
    − qfrc_constraint (− qfrc_actuator), forward (MuJoCo's definition) or centered; a
    column collides only the pairs with a geom in its dof's subtree (the others' contacts
    do not move), unless an adhesion actuator reads every contact. With
    the "invdiscrete" flag all three are differences of all of f; with a spatial tendon
    that has armature the position columns are (its M and bias terms vary with ten_J).
    Afterwards d holds `inverse`'s results at its (unchanged) qpos, qvel and qacc.

    Args:
        m: the Model.
        d: a Data for m (reads qpos, qvel, qacc, ctrl).
        eps: the perturbation, a positive finite float.
        actuation: subtract qfrc_actuator from qfrc_inverse.
        centered: centered differences (twice the evaluations) instead of forward ones.

    Returns:
        (DfDq, DfDv, DfDa), each (nv, nv).

    Raises:
        ValueError: eps is not a positive finite number.
        JointspaceError: as `inverse` (a bad state, the discrete inverse with RK4).
    """
    entry.check_pair(m, d, "inverse_derivatives")
    if (isinstance(eps, bool) or not isinstance(eps, (int, float, np.integer, np.floating))
            or not math.isfinite(eps) or eps <= 0):
        raise ValueError(f"inverse_derivatives: argument eps must be a positive finite number, "
                         f"got {eps!r}")
    nv = m.nv
    out = [np.empty((nv, nv)) for _ in range(3)]
    ep = _k_inverse_fd.ep
    try:
        code = ep(d._s, float(eps), bool(actuation), bool(centered), *out)
    except ZeroDivisionError:
        raise division_error("inverse_derivatives") from None
    if code != OK:
        _raise_for(m, d, code, "inverse_derivatives")
    return out[0], out[1], out[2]


def inverse_trajectory(m, d, qpos, qvel, qacc, discrete=None):
    """Controls, constraint and contact forces along a trajectory, in one compiled call.

    Runs `inverse` at each (qpos[t], qvel[t], qacc[t]) and recovers the controls that
    produce the motion: the estimation and optimal-control use of 004 §VI. qfrc_applied,
    xfrc_applied, eq_active and the mocap poses are taken from d and held fixed; d ends at
    the last time point. To invert a simulated or measured sequence of positions, take
    qvel[t] = diff_pos(qpos[t − 1], qpos[t], h) and qacc[t] = (qvel[t + 1] − qvel[t]) / h
    with discrete=True.

    Args:
        m: the Model.
        d: a Data for m, used as workspace.
        qpos: (T, nq) positions.
        qvel: (T, nv) velocities.
        qacc: (T, nv) accelerations (continuous, or per step when discrete).
        discrete: True reads qacc as each step's (qvel_next − qvel)/h of m.opt.integrator
            (as `inverse_step`), False as continuous accelerations; None follows the
            "invdiscrete" enable flag.

    Returns:
        InverseTrajectory.

    Raises:
        JointspaceError: a bad value (named with its time index), RK4 with discrete, or an
            actuator whose force is not affine in its controls: an orientation (so3) servo,
            or a dcmotor (its controls enter through the motor's voltage, current and
            controller states).
    """
    fname = "inverse_trajectory"
    entry.check_pair(m, d, fname)
    gaintype = np.asarray(m.actuator_gaintype)
    for gain, what in ((GAIN_SO3, "an orientation (so3) actuator"),
                       (GAIN_DCMOTOR, "a dcmotor actuator (controls through its voltage, "
                                      "current and controller states)")):
        if np.any(gaintype == gain):
            raise JointspaceError(f"{fname}: the model has {what}, whose force is not affine "
                                  f"in its controls; the least-squares controls are not "
                                  f"computed for it")
    qpos = np.ascontiguousarray(qpos, dtype=np.float64)
    if qpos.ndim != 2 or qpos.shape[1] != m.nq:
        raise ValueError(f"{fname}: argument qpos must have shape (T, {m.nq}), "
                         f"got {qpos.shape}")
    T = qpos.shape[0]
    qvel = entry.mat(qvel, (T, m.nv), "qvel", fname)
    qacc = entry.mat(qacc, (T, m.nv), "qacc", fname)
    flag = -1 if discrete is None else int(bool(discrete))
    nv, nu = m.nv, m.nu
    out = dict(qfrc_inverse=np.zeros((T, nv)), qfrc_constraint=np.zeros((T, nv)),
               ctrl=np.zeros((T, nu)), ctrl_residual=np.zeros((T, nv)))
    efc = np.zeros((T, max(m.njmax, 1)))
    nefc = np.zeros(T, dtype=np.int64)
    contact = np.zeros((T, max(m.nconmax, 1), 11))
    contact[:, :, :2] = -1.0
    ncon = np.zeros(T, dtype=np.int64)
    ep = _k_trajectory.ep
    t, code, need = ep(m._s, d._s, qpos, qvel, qacc, flag, out["qfrc_inverse"],
                                  out["qfrc_constraint"], out["ctrl"], out["ctrl_residual"],
                                  efc, nefc, contact)
    if t >= 0:
        _raise_for(m, d, ROWS_DROPPED if code == OK and need < 0 else code,
                   f"{fname} (time index {t})")
    for k in range(T):
        ncon[k] = np.count_nonzero(contact[k, :, 0] >= 0)
    E = int(nefc.max(initial=0))
    C = int(ncon.max(initial=0))
    return InverseTrajectory(
        **out, efc_force=efc[:, :E].copy(), nefc=nefc, ncon=ncon,
        contact_geom=contact[:, :C, :2].astype(np.int64), contact_pos=contact[:, :C, 2:5].copy(),
        contact_force=contact[:, :C, 5:11].copy())


def cone_project(y, mu, r0, r_f):
    """Algorithm 5 (004 §III.E): nearest point of the elliptic friction cone in the R metric.

    Minimizes Σ_k r_k (x_k − y_k)² over x0 ≥ 0, x0² ≥ Σ_j (x_j/μ_j)², with the weights of
    the paper's contact parameters (21): r_j = r_f μ_j⁻² / ⟨μ⁻²⟩ and normal weight r0, for
    which the cone is circular in r^½-scaled coordinates (eq. 17, 22). Closed form; the
    inverse applies it to each elliptic contact with y = −R⁻¹ jar.

    Args:
        y: (..., d + 1) vectors to project (normal first), d = 1 … 5.
        mu: (..., d) friction coefficients μ_j > 0.
        r0: (...) positive normal weights.
        r_f: (...) positive mean friction weights ⟨r_j⟩.

    Returns:
        (x, state): x like y; state (...) is 1 where y was inside the cone (x = y), 0 where
        x is the tip 0, 4 where x is on the surface (jointspace.constraint.STATE_*).
    """
    y = np.asarray(y, dtype=np.float64)
    if y.ndim < 1 or not 2 <= y.shape[-1] <= 6:
        raise ValueError(f"cone_project: argument y must have shape (..., d + 1) with "
                         f"d = 1 … 5, got {y.shape}")
    lead = y.shape[:-1]
    n = y.shape[-1]
    try:
        mu = np.broadcast_to(np.asarray(mu, dtype=np.float64), lead + (n - 1,))
        r0 = np.broadcast_to(np.asarray(r0, dtype=np.float64), lead)
        r_f = np.broadcast_to(np.asarray(r_f, dtype=np.float64), lead)
    except ValueError:
        raise ValueError(f"cone_project: mu must broadcast to {lead + (n - 1,)} and r0, r_f "
                         f"to {lead}") from None
    for name, a in (("mu", mu), ("r0", r0), ("r_f", r_f)):
        if not np.all(a > 0) or not np.all(np.isfinite(a)):
            raise ValueError(f"cone_project: argument {name} must be positive and finite")
    if not np.all(np.isfinite(y)):
        raise ValueError("cone_project: argument y must be finite")
    N = int(np.prod(lead, dtype=np.int64))
    yf = np.ascontiguousarray(y.reshape(N, n))
    x = np.empty_like(yf)
    state = np.empty(N, dtype=np.int64)
    ep = _k_cone.ep
    ep(yf, np.ascontiguousarray(mu.reshape(N, n - 1)), np.ascontiguousarray(r0.reshape(N)),
            np.ascontiguousarray(r_f.reshape(N)), x, state)
    return x.reshape(y.shape), state.reshape(lead)

