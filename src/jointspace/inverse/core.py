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
state. `cone_project` is Algorithm 5 on batches of vectors. The trajectory form
(`jointspace.inverse.trajectory`) and the Jacobians (`jointspace.inverse.derivatives`) run
these stages.
"""

import math

import numpy as np
from numba import njit

from jointspace._numba import entry
from jointspace.actuation import actuation
from jointspace.constraint import (
    CNSTR_CONTACT_ELLIPTIC,
    STATE_CONE,
    STATE_LINEARNEG,
    STATE_LINEARPOS,
    STATE_QUADRATIC,
    STATE_SATISFIED,
    reference,
    warn_cnstrfull,
)
from jointspace.diagnostics import bad_element, division_error, element_name, joint_label
from jointspace.dynamics.crba import crb_stage
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
    free_block,
    implicit_matrix,
    implicitfast_matrix,
    is_free_body,
)
from jointspace.kinematics import tendon_bias
from jointspace.sensor import sensor_stage
from jointspace.solver.cost import mul_j, mul_jt, mul_m, solve_m
from jointspace.types import (
    DSBL_GRAVITY,
    ENBL_DIAGEXACT,
    ENBL_INVDISCRETE,
    INT_EULER,
    INT_IMPLICITFAST,
    INT_RK4,
    JNT_FREE,
    SMALL_CONE,
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
def inv_acceleration(m, d, discrete):
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
def discrete_flag(m, discrete):
    """discrete < 0: the model's "invdiscrete" flag; else discrete itself."""
    if discrete < 0:
        return (m.opt_enableflags[0] & ENBL_INVDISCRETE) != 0
    return discrete != 0


@njit(cache=True, inline="always")
def inverse_kernel(m, d, discrete):
    """The whole inverse (mj_inverse). Returns (code, rows requested); see OK, RK4_DISCRETE."""
    code = _check_state(d)
    if code != OK:
        return code, 0
    disc = discrete_flag(m, discrete)
    if disc and m.opt_integrator[0] == INT_RK4:
        return RK4_DISCRETE, 0
    # M for the discrete map and for the exact constraint diagonal ("diagexact") of rows
    bad_pivot = fwd_position(m, d, disc or (m.opt_enableflags[0] & ENBL_DIAGEXACT) != 0)
    need = fwd_rows(m, d)
    if bad_pivot >= 0 and (disc or d.nefc[0] > 0):
        return -2 - bad_pivot, need
    fwd_velocity(m, d)
    reference(m, d)
    inv_acceleration(m, d, disc)
    return OK, need


@njit(cache=True)
def inverse_rest(m, d, bodies):
    """The continuous inverse's qfrc_passive and qfrc_constraint alone (no M, no RNE).

    What the position columns of `_inverse_fd_entry` difference when the rest of f is
    analytical: poses, rows (M and its factor only for "diagexact"), the passive forces,
    the reference and the closed-form constraint forces; qfrc_bias and qfrc_inverse are
    left as they were. The contacts are those of the pairs on the bodies flagged in
    `bodies` (all when it is empty, `collision_of`). Returns (code, rows requested) as
    `inverse_kernel`.
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
    return inverse_kernel(m, d, 1)


@njit(cache=True)
def xfrc_qfrc(m, d, out):
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
    xfrc_qfrc(m, d, qforce)
    for k in range(nv):
        qforce[k] += d.qfrc_applied[k] + d.qfrc_actuator[k]
    save_qfrc = d.qfrc_constraint.copy()
    save_force = d.efc_force[:nefc].copy()
    save_state = d.efc_state[:nefc].copy()
    inv_acceleration(m, d, np.bool_(False))
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
    """inverse_kernel with the model carried by d (one struct crosses into compiled code)."""
    code, need = inverse_kernel(d.model, d, discrete)
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


_k_inverse = entry.Kernel(_inverse_entry)
_k_forward_compare = entry.Kernel(_forward_compare)
_k_inverse_step = entry.Kernel(_inverse_step_entry)
_k_cone = entry.Kernel(_cone_project_batch)


# ---------------------------------------------------------------------------------------------
# public API


def raise_for(m, d, code, fname, stacklevel=3):
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
        raise_for(m, d, code, fname, stacklevel=4)


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
        raise_for(m, d, code, "inverse_step")


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

