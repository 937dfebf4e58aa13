"""Time stepping (MuJoCo's mj_step): forward, then an integrator, with the state checks.

step(m, d, nstep), one compiled call for all steps:
  check qpos, qvel → forward → check qacc → (the "fwdinv" enable flag: compare with the
  inverse into d.solver_fwdinv, see `jointspace.inverse`) → integrate with m.opt.integrator:
  Euler (semi-implicit, implicit dof damping), RK4, implicit, implicitfast
  (see `jointspace.integrate`). A NaN, inf or |x| > 1e10 in qpos, qvel or qacc resets the
  state to qpos0 (as mj_checkPos/Vel/Acc do), is counted in d.warning and reported as a
  JointspaceWarning naming the first bad element.

transition_derivatives(m, d, eps, centered, nthread, sensors), one compiled call: the
finite-differenced Jacobians A = ∂x'/∂x, B = ∂x'/∂u of one step, x = (qpos in the tangent
space, qvel, act), and with sensors C = ∂s/∂x, D = ∂s/∂u of the sensordata s the step
computes, MuJoCo's mjd_transitionFD (engine_derivative_fd.c).
"""

import copy
import math
import weakref
from concurrent.futures import ThreadPoolExecutor

import numpy as np
from numba import njit

from jointspace._numba import entry
from jointspace._numba.dense import chol_factor, chol_solve
from jointspace._numba.scratch import borrow, keep, shaped
from jointspace.actuation import actuation, advance_act
from jointspace.constraint import reference
from jointspace.diagnostics import (
    WARN_BADQACC,
    WARN_BADQPOS,
    WARN_BADQVEL,
    bad_element,
    check_not_singular,
    division_error,
    warn_bad_state,
)
from jointspace.dynamics.crba import dense_from_sparse
from jointspace.dynamics.energy import energy_vel
from jointspace.forward import (
    forward_dynamics,
    fwd_acceleration,
    fwd_constraint,
    fwd_velocity,
)
from jointspace.history import reset_ctrl, reset_history
from jointspace.integrate import (
    advance,
    diff_pos_kernel,
    euler,
    implicit,
    implicitfast,
    integrate_pos_kernel,
)
from jointspace.inverse.core import compare_fwd_inv_stage
from jointspace.sensor import STAGE_POS, STAGE_VEL, advance_history, sensor_stage
from jointspace.solver import cone_arrays
from jointspace.solver.cost import constraint_update, mul_j, mul_jt
from jointspace.types import (
    DSBL_AUTORESET,
    ENBL_ENERGY,
    ENBL_FWDINV,
    INT_EULER,
    INT_IMPLICIT,
    INT_IMPLICITFAST,
    INT_RK4,
    JNT_BALL,
    JNT_FREE,
    MINVAL,
    SMALL_SOLVE,
    SOLVER_NEWTON,
    STATE_CONE,
    STATE_LINEARNEG,
    STATE_LINEARPOS,
    STATE_QUADRATIC,
)

# ---------------------------------------------------------------------------------------------
# state checks and reset


@njit(cache=True)
def _reset(m, d):
    """Reset the state and inputs to the model's defaults (mj_resetData), keeping d.warning."""
    d.time[0] = 0.0
    d.qpos[:] = m.qpos0
    d.qvel[:] = 0.0
    d.qacc[:] = 0.0
    d.act[:] = 0.0
    d.act_dot[:] = 0.0
    reset_ctrl(m, d)
    d.qfrc_applied[:] = 0.0
    d.xfrc_applied[:, :] = 0.0
    d.energy[:] = 0.0
    for b in range(m.nbody):
        mid = m.body_mocapid[b]
        if mid >= 0:
            d.mocap_pos[mid, :] = m.body_pos[b]
            d.mocap_quat[mid, :] = m.body_quat[b]
    if m.nhistory > 0:
        reset_history(m, d)


@njit(cache=True)
def _check(m, d, x, kind):
    """If x has a bad element: count it in d.warning[kind], reset, return 1 << kind; else 0.

    With the "autoreset" flag disabled the bad state is counted and kept (mj_checkPos etc.).
    """
    i = bad_element(x)
    if i < 0:
        return 0
    if (m.opt_disableflags[0] & DSBL_AUTORESET) == 0:
        _reset(m, d)
    d.warning[kind, 0] += 1
    d.warning[kind, 1] = i
    return 1 << kind


# ---------------------------------------------------------------------------------------------
# integrators and step


@njit(cache=True)
def _dexp_inv(m, theta, v, out):
    """Tangent rate: out = the tangent-coordinate rate θ̇ of q0 ⊕ θ moving at velocity v.

    Scalars and free translations: θ̇ = v. Rotations (q0 ⊗ exp(θ), ω in the child frame):
    θ̇ = J_r⁻¹(θ) ω = ω + ½ θ × ω + c(|θ|) θ × (θ × ω), c = 1/|θ|² − (1 + cos|θ|)/(2|θ| sin|θ|)
    (the inverse right Jacobian of SO(3); Munthe-Kaas 1999, as MuJoCo's RK4 uses it).
    """
    out[:] = v
    for j in range(m.njnt):
        jt = m.jnt_type[j]
        if jt != JNT_FREE and jt != JNT_BALL:
            continue
        a = m.jnt_dofadr[j] + (3 if jt == JNT_FREE else 0)
        t0, t1, t2 = theta[a], theta[a + 1], theta[a + 2]
        w0, w1, w2 = v[a], v[a + 1], v[a + 2]
        th2 = t0 * t0 + t1 * t1 + t2 * t2
        if th2 < 1e-8:
            c = 1.0 / 12.0 + th2 / 720.0 + th2 * th2 / 30240.0
        else:
            th = math.sqrt(th2)
            c = 1.0 / th2 - (1.0 + math.cos(th)) / (2.0 * th * math.sin(th))
        # x = θ × ω, y = θ × x
        x0 = t1 * w2 - t2 * w1
        x1 = t2 * w0 - t0 * w2
        x2 = t0 * w1 - t1 * w0
        y0 = t1 * x2 - t2 * x1
        y1 = t2 * x0 - t0 * x2
        y2 = t0 * x1 - t1 * x0
        out[a] = w0 + 0.5 * x0 + c * y0
        out[a + 1] = w1 + 0.5 * x1 + c * y1
        out[a + 2] = w2 + 0.5 * x2 + c * y2


@njit(cache=True, inline="always")
def _rk4(m, d):
    """Classic 4th-order Runge–Kutta on the configuration manifold (mj_RungeKutta).

    Runge–Kutta–Munthe-Kaas form: positions are integrated in tangent coordinates θ at
    X_0, stage i evaluates forward at q_0 ⊕ θ_i, v_0 + h c_i a_{i−1} with θ_i = h c_i k_{i−1},
    k_i = dexp⁻¹(θ_i) v_i; the update is θ = h Σ b_i k_i, v = v_0 + h Σ b_i a_i with
    c = (½, ½, 1), b = (1/6, 1/3, 1/3, 1/6). d.qacc ends as Σ b_i a_i (MuJoCo 4 does the
    same); the next step's warm start is the last stage's acceleration a_3 (MuJoCo 4.0,
    measured), and every stage starts its solver from the warm start the step began with,
    as forward leaves it. Activations as MuJoCo: stage i at act_0 + h c_i act_dot_{i−1}
    (unclamped), the
    update `advance_act` at the rate Σ b_i act_dot_i. History buffers: the sensors' samples
    before the stages (at X_0, from the first forward), the controls' after them, both at
    t_0. Needs forward at X_0 already done (d.qacc = a_0).
    """
    nv = m.nv
    na = m.na
    nq = m.nq
    h = m.opt_timestep[0]
    t0 = d.time[0]
    # one block for the stages' vectors, seen through borrowed views (one allocation a
    # step instead of eight, and no reference counts on the views)
    own = np.empty(nq + 10 * nv + 6 * na)
    buf = borrow(own)
    q0 = buf[0:nq]
    o = nq
    v0 = buf[o:o + nv]
    theta = buf[o + nv:o + 2 * nv]
    k = shaped(buf[o + 2 * nv:o + 6 * nv], (4, nv))
    acc = shaped(buf[o + 6 * nv:o + 10 * nv], (4, nv))
    o += 10 * nv
    a0 = buf[o:o + na]
    rate = buf[o + na:o + 2 * na]
    adot = shaped(buf[o + 2 * na:o + 6 * na], (4, na))
    q0[:] = d.qpos
    v0[:] = d.qvel
    a0[:] = d.act
    k[0] = v0
    acc[0] = d.qacc
    adot[0] = d.act_dot
    c = (0.5, 0.5, 1.0)
    hist = m.nhistory > 0
    if hist:
        # the sensors' samples at X_0, from the first forward (MuJoCo 4.0, measured)
        advance_history(m, d, np.bool_(False), np.bool_(True))
    for i in range(1, 4):
        # X_i = (q_0 ⊕ θ_i, v_0 + h c_i a_{i−1}),  θ_i = h c_i k_{i−1}
        for j in range(nv):
            theta[j] = h * c[i - 1] * k[i - 1, j]
            d.qvel[j] = v0[j] + h * c[i - 1] * acc[i - 1, j]
        for j in range(na):
            d.act[j] = a0[j] + h * c[i - 1] * adot[i - 1, j]
        d.qpos[:] = q0
        integrate_pos_kernel(m, d.qpos, theta, 1.0)
        d.time[0] = t0 + c[i - 1] * h
        forward_dynamics(m, d)
        _dexp_inv(m, theta, d.qvel, k[i])
        acc[i] = d.qacc
        adot[i] = d.act_dot
    if hist:
        # the controls' samples at t_0, after the stages that read the buffers
        d.time[0] = t0
        advance_history(m, d, np.bool_(True), np.bool_(False))
    # X_1 = (q_0 ⊕ h Σ b_i k_i, v_0 + h Σ b_i a_i)
    for j in range(nv):
        theta[j] = h * (k[0, j] + 2.0 * k[1, j] + 2.0 * k[2, j] + k[3, j]) / 6.0
        d.qacc[j] = (acc[0, j] + 2.0 * acc[1, j] + 2.0 * acc[2, j] + acc[3, j]) / 6.0
    d.qacc_warmstart[:] = acc[3]
    d.qpos[:] = q0
    integrate_pos_kernel(m, d.qpos, theta, 1.0)
    if na:
        # at the initial velocity, as mj_advance (a dcmotor's bristle reads it)
        d.qvel[:] = v0
        d.act[:] = a0
        for j in range(na):
            rate[j] = (adot[0, j] + 2.0 * adot[1, j] + 2.0 * adot[2, j] + adot[3, j]) / 6.0
        advance_act(m, d, rate, h)
    for j in range(nv):
        d.qvel[j] = v0[j] + h * d.qacc[j]
    d.time[0] = t0 + h
    keep(own)


@njit(cache=True, inline="always")
def _integrate(m, d):
    """The update of m.opt.integrator after forward (RK4 runs its own three forwards)."""
    integrator = m.opt_integrator[0]
    if integrator == INT_EULER:
        euler(m, d)
    elif integrator == INT_RK4:
        _rk4(m, d)
    elif integrator == INT_IMPLICITFAST:
        implicitfast(m, d)
    elif integrator == INT_IMPLICIT:
        implicit(m, d)
    else:
        advance(m, d, d.qacc)


@njit(cache=True, inline="always")
def _forward(m, d, sensors):
    """forward_stages, the sensors only when asked (mj_forwardSkip's skipsensor)."""
    forward_dynamics(m, d)
    if sensors:
        sensor_stage(m, d)


@njit(cache=True, inline="always")
def _step(m, d, nstep, sensors):
    """Run nstep steps of check → forward → check → integrate, then check the final state.

    Without sensors, forward leaves d.sensordata as it was (the transition Jacobians' steps
    when C and D are not asked for, as mj_stepSkip's skipsensor). The last check resets a
    state that the final integration made bad, so that the call never hands back NaN
    (MuJoCo would reset at the start of the next step instead; the trajectory is the
    same). Returns a bit mask of the checks that reset the state
    (1 qpos, 2 qvel, 4 qacc).
    """
    bad = 0
    for _ in range(nstep):
        bad |= _check(m, d, d.qpos, WARN_BADQPOS)
        bad |= _check(m, d, d.qvel, WARN_BADQVEL)
        _forward(m, d, sensors)
        if _check(m, d, d.qacc, WARN_BADQACC):
            bad |= 1 << WARN_BADQACC
            if (m.opt_disableflags[0] & DSBL_AUTORESET) == 0:
                _forward(m, d, sensors)
        if m.opt_enableflags[0] & ENBL_FWDINV:
            compare_fwd_inv_stage(m, d)
        _integrate(m, d)
    bad |= _check(m, d, d.qpos, WARN_BADQPOS)
    bad |= _check(m, d, d.qvel, WARN_BADQVEL)
    return bad


@njit(cache=True, nogil=True)
def _step_entry(d, nstep, sensors):
    """_step with the model carried by d.

    Compiled callers pass np.int64 / np.bool_ values, never literals: Numba compiles a
    separate copy of the whole pipeline for each literal argument (`step_entry(d, 1, True)`
    typed as (Literal[int](1), Literal[bool](True))), one more minute of cold compile each.
    """
    return _step(d.model, d, nstep, sensors)


_k_step = entry.Kernel(_step_entry)
# The same compiled function for compiled callers (rollout.py's loop over rollouts and steps)
step_entry = _step_entry
_NSTEP_MAX = 2**63 - 1  # nstep crosses into compiled code as an int64


def step(m, d, nstep=1):
    """Advance the simulation by `nstep` time steps of m.opt.timestep, in one compiled call.

    Each step checks qpos and qvel, runs `forward`, checks qacc and integrates with
    m.opt.integrator ("Euler", "RK4", "implicit" or "implicitfast"), as MuJoCo's mj_step.
    A bad value (NaN, inf, |x| > 1e10) resets the state to qpos0, increments
    d.warning[kind, 0] (kind 0, 1, 2 = qpos, qvel, qacc) and raises a JointspaceWarning
    naming the first bad element; the state reached by the last step is checked too, so
    d never holds a bad state after the call. A model whose compiler found dofs that move
    no mass or inertia (m.singular_dofs, warned about at load) has no M⁻¹ and cannot be
    stepped: step raises SingularMassError naming them.

    Args:
        m: the Model.
        d: a Data for m.
        nstep: number of steps, a positive integer (at most 2**63 - 1).

    Raises:
        SingularMassError: m has dofs that move no mass or inertia (and no armature).
        ValueError: nstep is not a positive integer that fits in 64 bits.
    """
    entry.check_pair(m, d, "step")
    if (isinstance(nstep, bool) or not isinstance(nstep, (int, np.integer))
            or not 1 <= nstep <= _NSTEP_MAX):
        raise ValueError(f"step: argument nstep must be a positive integer at most 2**63 - 1 "
                         f"(a 64-bit count), got {nstep!r}")
    if m.singular_dofs:
        check_not_singular(m, "step")
    ep = _k_step.ep
    try:
        mask = ep(d._s, int(nstep), True)
    except ZeroDivisionError:
        raise division_error("step") from None
    if mask:
        warn_bad_state(m, d, mask, "step")


# ---------------------------------------------------------------------------------------------
# finite-differenced transition Jacobians (mjd_transitionFD)


@njit(cache=True)
def _state_diff(m, q1, v1, a1, q2, v2, a2, h, col, out, tmp):
    """out[:, col] = ((q2 ⊖ q1) / h, (v2 − v1) / h, (a2 − a1) / h): MuJoCo's stateDiff."""
    nv = m.nv
    diff_pos_kernel(m, tmp, h, q1, q2)
    for k in range(nv):
        out[k, col] = tmp[k]
    for k in range(nv):
        out[nv + k, col] = (v2[k] - v1[k]) / h
    for k in range(m.na):
        out[2 * nv + k, col] = (a2[k] - a1[k]) / h


@njit(cache=True)
def _sensor_diff(s1, s2, h, col, out):
    """out[:, col] = (s2 − s1) / h: the sensors' column (MuJoCo's diff)."""
    for k in range(s1.shape[0]):
        out[k, col] = (s2[k] - s1[k]) / h


@njit(cache=True)
def _keep_sensors(m, sensordata, nominal, last_stage):
    """sensordata = nominal for the sensors of stages ≤ last_stage (those a skip keeps)."""
    for i in range(m.nsensor):
        if m.sensor_needstage[i] <= last_stage:
            a = m.sensor_adr[i]
            for k in range(a, a + m.sensor_dim[i]):
                sensordata[k] = nominal[k]


# converged: the unperturbed solve's qacc solves its zones' quadratic model this closely
# (relative to max(1, |qacc|)); a looser one would put its residual, over eps, in the columns
FAST_CONVERGED = 1e-12


@njit(cache=True)
def _fast_prepare(m, d, L, state0, force0):
    """Factor the unperturbed solve's Hessian for the skipped columns' constraint stage.

    At the rows, zones and forces d holds after the unperturbed step's Newton solve: H =
    M + Σ_quadratic D_i J_iᵀ J_i into L (its lower Cholesky factor), the zones into state0,
    the forces into force0. Returns whether `_fast_constraint` applies: Newton without
    noslip, rows present, none on an elliptic cone's surface (whose cost is not quadratic),
    H positive definite, and the solve converged (its qacc minimizes the zones' quadratic
    model to FAST_CONVERGED).
    """
    nv = m.nv
    nefc = d.nefc[0]
    if nefc == 0 or m.opt_solver[0] != SOLVER_NEWTON or m.opt_noslip_iterations[0] > 0:
        return False
    dense_from_sparse(m, d.qM, L)
    J = d.efc_J
    for i in range(nefc):
        st = d.efc_state[i]
        if st == STATE_CONE:
            return False
        state0[i] = st
        force0[i] = d.efc_force[i]
        if st != STATE_QUADRATIC:
            continue
        Di = d.efc_D[i]
        for a in range(d.efc_J_rownnz[i]):
            ka = np.uint64(d.efc_J_colind[i, a])
            ja = Di * J[i, ka]
            for b in range(d.efc_J_rownnz[i]):
                kb = np.uint64(d.efc_J_colind[i, b])
                L[ka, kb] += ja * J[i, kb]
    if chol_factor(L, nv, MINVAL) < nv:
        return False
    a = _fast_solution(m, d, L, state0, force0)
    scale = 1.0
    for k in range(nv):
        scale = max(scale, abs(d.qacc[k]))
    for k in range(nv):
        if not abs(a[k] - d.qacc[k]) <= FAST_CONVERGED * scale:
            return False
    return True


@njit(cache=True)
def _fast_solution(m, d, L, state0, force0):
    """The minimizer of the zones' quadratic model at d's qfrc_smooth and efc_aref.

    H a = qfrc_smooth + Σ_quadratic J_iᵀ D_i aref_i + Σ_linear J_iᵀ f_i (the friction rows'
    constant forces), H = L Lᵀ.
    """
    a = d.qfrc_smooth.copy()
    J = d.efc_J
    for i in range(d.nefc[0]):
        st = state0[i]
        if st == STATE_QUADRATIC:
            c = d.efc_D[i] * d.efc_aref[i]
        elif st == STATE_LINEARNEG or st == STATE_LINEARPOS:
            c = force0[i]
        else:
            continue
        for t in range(d.efc_J_rownnz[i]):
            k = np.uint64(d.efc_J_colind[i, t])
            a[k] += J[i, k] * c
    chol_solve(L, m.nv, a)
    return a


@njit(cache=True)
def _fast_constraint(m, d, L, state0, force0, cdim, cmu, cfr):
    """The constraint stage of a skipped column by one solve with the unperturbed H.

    The rows and their zones' quadratic model are the unperturbed step's (`_fast_prepare`);
    only qfrc_smooth and efc_aref moved. Its minimizer is the Newton solve's answer when
    every row stays in its zone, which is checked: then qacc, efc_force, efc_state,
    qfrc_constraint are set as the solve would and True is returned;
    else False (the caller solves).
    """
    reference(m, d)
    a = _fast_solution(m, d, L, state0, force0)
    nefc = d.nefc[0]
    jar = d.scratch_efc[:nefc]
    mul_j(d, a, jar)
    for i in range(nefc):
        jar[i] -= d.efc_aref[i]
    hc = shaped(d.scratch_small[SMALL_SOLVE:SMALL_SOLVE + 1], (1, 1))
    constraint_update(d, jar, cdim, cmu, cfr, d.efc_force, d.efc_state, hc, False)
    for i in range(nefc):
        if d.efc_state[i] != state0[i]:
            return False
    for k in range(m.nv):
        d.qacc[k] = a[k]
    mul_jt(d, d.efc_force, d.qfrc_constraint)
    return True


@njit(cache=True)
def _step_from_velocity(m, d, warmstart, sensors, fast, L, state0, force0, cdim, cmu, cfr):
    """One step that reuses d's position stage (qpos unchanged since it ran): mj_stepSkip.

    MuJoCo's mjSTAGE_POS skip: velocity, actuation, acceleration and constraint stages,
    (with sensors) the sensors, the qacc check, the integrator, the final checks. Every
    stage it skips depends on qpos alone, so the step equals `_step`'s (the sensors of the
    skipped stages are the caller's to set: `_keep_sensors`). With fast, the constraint
    stage is one solve with the unperturbed step's Hessian where the rows keep their zones
    (`_fast_constraint`), else the solver's. A bad qvel or qacc (whose check resets the
    state) falls back to the full step, from the same inputs (the warm start put back).
    Not for RK4.
    """
    if bad_element(d.qvel) >= 0:
        return _step_entry(d, np.int64(1), sensors)
    fwd_velocity(m, d)
    if m.opt_enableflags[0] & ENBL_ENERGY:
        energy_vel(m, d)
    actuation(m, d)
    fwd_acceleration(m, d)
    if not (fast and _fast_constraint(m, d, L, state0, force0, cdim, cmu, cfr)):
        fwd_constraint(m, d)
    if bad_element(d.qacc) >= 0:
        d.qacc_warmstart[:] = warmstart
        return _step_entry(d, np.int64(1), sensors)
    if sensors:
        sensor_stage(m, d)
    if m.opt_enableflags[0] & ENBL_FWDINV:
        compare_fwd_inv_stage(m, d)
    _integrate(m, d)
    return _check(m, d, d.qpos, WARN_BADQPOS) | _check(m, d, d.qvel, WARN_BADQVEL)


@njit(cache=True, nogil=True)
def _transition_entry(d, eps, centered, skip, reuse_hessian, sensors, c0, c1, A, B, C, D):
    """Columns [c0, c1) of (B | A) (and (D | C)) by finite differences; returns the mask.

    The mask is the bits of the state checks that reset a step.

    As mjd_stepFD: the unperturbed step, then each control (one-sided at a ctrlrange
    limit), velocity, tangent position and activation perturbed in turn (forward, and
    backward when centered), every step started from the saved time, qpos, qvel, act, ctrl
    and qacc_warmstart (and qfrc_applied, xfrc_applied, mocap, which only a reset changes).
    With skip, control, activation and velocity perturbations reuse the position stage of
    the unperturbed step (`_step_from_velocity`, as MuJoCo skips it) when that step was
    clean; skip=False runs every step in full (the reference its test compares with, bit for
    bit). The sensor rows difference d.sensordata as each step computes it (in its forward,
    at the state the step starts from), with MuJoCo's skips: in the control, activation and
    velocity columns the position-stage sensors keep the unperturbed step's values, and in
    the control and activation columns the velocity-stage ones too (mj_stepSkip computes no
    sensor of a stage it skips, with or without skip here); without sensors no step
    computes them and C, D are not touched. Columns are numbered controls (nu), velocities (nv),
    positions (nv), activations (na): threads take disjoint ranges, each on its own Data
    (each also runs the unperturbed step).
    """
    m = d.model
    nq = m.nq
    nv = m.nv
    nu = m.nu
    na = m.na
    t0 = d.time[0]
    q0 = d.qpos.copy()
    v0 = d.qvel.copy()
    a0 = d.act.copy()
    u0 = d.ctrl.copy()
    w0 = d.qacc_warmstart.copy()
    f0 = d.qfrc_applied.copy()
    x0 = d.xfrc_applied.copy()
    mp0 = d.mocap_pos.copy()
    mq0 = d.mocap_quat.copy()
    qn = np.empty(nq)
    vn = np.empty(nv)
    an = np.empty(na)
    qp = np.empty(nq)
    vp = np.empty(nv)
    ap = np.empty(na)
    qm = np.empty(nq)
    vm = np.empty(nv)
    am = np.empty(na)
    ns = m.nsensordata if sensors else 0
    sn = np.empty(ns)
    sp = np.empty(ns)
    sm = np.empty(ns)
    tmp = np.empty(nv)
    dpos = np.zeros(nv)
    bad = 0
    # the skipped columns' constraint stage by one solve (`_fast_prepare`), set after the
    # unperturbed step
    fast = False
    L = np.zeros((nv, nv))
    state0 = np.zeros(0, np.int32)
    force0 = np.zeros(0)
    cdim, cmu, cfr = cone_arrays(m, d)
    for stage in (0, 1, 4, 2, 3):
        # stage 0: unperturbed; 1: controls; 4: activations; 2: velocities (these three
        # reuse the unperturbed position stage); 3: positions, last
        count = 1 if stage == 0 else (nu if stage == 1 else na if stage == 4 else nv)
        first = (0 if stage < 2 else nu if stage == 2 else nu + nv if stage == 3
                 else nu + 2 * nv)
        for i in range(count):
            if stage > 0 and not c0 <= first + i < c1:
                continue
            fwd = True
            back = centered
            if stage == 1 and m.actuator_ctrllimited[i]:
                lo = m.actuator_ctrlrange[i, 0]
                hi = m.actuator_ctrlrange[i, 1]
                c = u0[i]
                fwd = lo <= c <= hi and lo <= c + eps <= hi
                back = (centered or not fwd) and lo <= c - eps <= hi and lo <= c <= hi
            for sign in (1.0, -1.0):
                if (sign > 0 and not fwd) or (sign < 0 and not back) or (
                        stage == 0 and sign < 0):
                    continue
                if stage == 1:
                    d.ctrl[i] += sign * eps
                elif stage == 2:
                    d.qvel[i] += sign * eps
                elif stage == 3:
                    dpos[i] = 1.0
                    integrate_pos_kernel(m, d.qpos, dpos, sign * eps)
                    dpos[i] = 0.0
                elif stage == 4:
                    d.act[i] += sign * eps
                if stage == 0:
                    bad |= _step_entry(d, np.int64(1), sensors)
                    skip = skip and bad == 0
                    if skip and reuse_hessian:
                        state0 = np.empty(d.nefc[0], np.int32)
                        force0 = np.empty(d.nefc[0])
                        fast = _fast_prepare(m, d, L, state0, force0)
                        cdim, cmu, cfr = cone_arrays(m, d)
                elif stage != 3 and skip:
                    bad |= _step_from_velocity(m, d, w0, sensors, fast, L, state0, force0,
                                               cdim, cmu, cfr)
                else:
                    bad |= _step_entry(d, np.int64(1), sensors)
                if ns and (stage == 1 or stage == 4):
                    _keep_sensors(m, d.sensordata, sn, STAGE_VEL)
                elif ns and stage == 2:
                    _keep_sensors(m, d.sensordata, sn, STAGE_POS)
                if stage == 0:
                    qn[:] = d.qpos
                    vn[:] = d.qvel
                    an[:] = d.act
                    sn[:] = d.sensordata[:ns]
                elif sign > 0:
                    qp[:] = d.qpos
                    vp[:] = d.qvel
                    ap[:] = d.act
                    sp[:] = d.sensordata[:ns]
                else:
                    qm[:] = d.qpos
                    vm[:] = d.qvel
                    am[:] = d.act
                    sm[:] = d.sensordata[:ns]
                # restore
                d.time[0] = t0
                d.qpos[:] = q0
                d.qvel[:] = v0
                d.act[:] = a0
                d.ctrl[:] = u0
                d.qacc_warmstart[:] = w0
                d.qfrc_applied[:] = f0
                d.xfrc_applied[:, :] = x0
                d.mocap_pos[:, :] = mp0
                d.mocap_quat[:, :] = mq0
            if stage == 0:
                continue
            out = B if stage == 1 else A
            sout = D if stage == 1 else C
            col = i if stage != 2 and stage != 4 else (nv + i if stage == 2 else 2 * nv + i)
            if fwd and back:
                _state_diff(m, qm, vm, am, qp, vp, ap, 2.0 * eps, col, out, tmp)
                _sensor_diff(sm, sp, 2.0 * eps, col, sout)
            elif fwd:
                _state_diff(m, qn, vn, an, qp, vp, ap, eps, col, out, tmp)
                _sensor_diff(sn, sp, eps, col, sout)
            elif back:
                _state_diff(m, qm, vm, am, qn, vn, an, eps, col, out, tmp)
                _sensor_diff(sm, sn, eps, col, sout)
            else:
                for k in range(2 * nv + na):
                    out[k, col] = 0.0
                for k in range(ns):
                    sout[k, col] = 0.0
    return bad


_k_transition = entry.Kernel(_transition_entry)
_POOL = [None]  # a ThreadPoolExecutor shared by the calls with nthread > 1, grown on demand
_COPIES = weakref.WeakKeyDictionary()  # Data → the Data copies its threads step
# the inputs of a step (MuJoCo's full physics state, controls, applied forces, warm start)
_INPUTS = ("qpos", "qvel", "act", "ctrl", "qacc_warmstart", "qfrc_applied", "xfrc_applied",
           "mocap_pos", "mocap_quat", "eq_active")


def _thread_data(m, d, n):
    """n − 1 Data copies of d (kept between calls) holding d's inputs, for n threads."""
    copies = _COPIES.get(d)
    if copies is None or len(copies) < n - 1:
        copies = [copy.deepcopy(d) for _ in range(n - 1)]
        _COPIES[d] = copies
    for dc in copies[:n - 1]:
        entry.check_pair(m, dc, "transition_derivatives")
        dc.time = d.time
        for name in _INPUTS:
            getattr(dc, name)[...] = getattr(d, name)
    return [d, *copies[:n - 1]]


# a position column's cost over a skipped one's (which reuses the position stage, and with
# reuse_hessian the constraint Hessian): measured ~3 and ~1.5 on the humanoid
_POSITION_WEIGHT = {True: 3.0, False: 1.5}


def _split_columns(m, n, reuse):
    """Column bounds for n threads with about equal work: position columns weigh more."""
    w = np.ones(m.nu + 2 * m.nv + m.na)
    w[m.nu + m.nv:m.nu + 2 * m.nv] = _POSITION_WEIGHT[reuse]
    cum = np.concatenate(([0.0], np.cumsum(w)))
    bounds = [0]
    for k in range(1, n):
        bounds.append(max(bounds[-1], int(np.searchsorted(cum, cum[-1] * k / n))))
    bounds.append(len(w))
    return bounds


def transition_derivatives(m, d, eps=1e-6, centered=False, nthread=1, sensors=False,
                           reuse_hessian=True):
    """Finite-differenced Jacobians of one step, A, B (and C, D): MuJoCo's mjd_transitionFD.

    A = ∂x'/∂x and B = ∂x'/∂u of the next state x'; with `sensors=True` also C = ∂s/∂x and
    D = ∂s/∂u of the sensor data s.

    x = (qpos in the tangent space, qvel, act) with x' the state after `step(m, d)` from x
    at the controls u = d.ctrl, so A is (2nv + na, 2nv + na) and B (2nv + na, nu). Columns
    as MuJoCo's `mjd_transitionFD`: position perturbations through
    `integrate_pos(q, ±eps e_j)` and differences through `diff_pos`;
    forward differences, or centered ones with `centered=True`; a control at its ctrlrange
    limit (ctrllimited) is differenced one-sided, inward. Every perturbed step starts from
    the saved time, qpos, qvel, act, ctrl and the solver's warm start d.qacc_warmstart (with
    contacts, the result depends on it as MuJoCo's does); control, activation and velocity
    columns reuse the unperturbed step's position stage, as MuJoCo's mj_stepSkip (bit for
    bit the full step's result). With `reuse_hessian` (and Newton, no noslip) they also
    reuse its constraint Hessian: their rows and zones are the unperturbed solve's, so
    where every row keeps its zone the solve is one linear solve of that zones' quadratic
    model, H a = qfrc_smooth + Jᵀ (D aref) (+ the friction rows' saturated forces), which
    is the converged Newton solve's answer to round-off (checked: the unperturbed solve
    must meet it to 1e-12, and a column whose rows change zone, or any elliptic contact on
    its cone's surface, runs the solver). One compiled call, 1 + (nu + 2nv + na)·(2 if
    centered else 1) steps;
    with nthread > 1 the columns are split among threads, each stepping its own copy of d
    (made once per d and kept), the GIL released. With contacts, converge the state first
    and use few solver iterations with tolerance 0 for smooth Jacobians (MuJoCo's advice).

    s is d.sensordata as the step computes it: in its forward, at the state x it starts
    from and the controls u (the acceleration-stage sensors after the constraint solve), so
    C is (nsensordata, 2nv + na) and D (nsensordata, nu), the same columns, as MuJoCo's C and
    D. As MuJoCo's mj_stepSkip, the control, activation and velocity columns keep the
    position-stage sensors at their unperturbed values (so e_kinetic, a position-stage
    sensor in MuJoCo, has zero velocity columns), the control and activation columns the
    velocity-stage ones too. Without `sensors` the steps compute no sensor (as MuJoCo's
    when C and D are None), and the call returns A and B only.

    Args:
        m: the Model; m.opt.integrator must not be RK4 (as in MuJoCo, no definition here).
        d: a Data for m; its state is restored after the call (the other fields, sensordata
            among them, hold the last perturbed step's intermediates).
        eps: the perturbation, a positive finite float.
        centered: centered differences (twice the steps) instead of forward ones.
        nthread: threads to spread the columns over (results identical for any count).
        sensors: also return the sensor Jacobians C and D (True or False).
        reuse_hessian: solve the constraints of the control, activation and velocity
            columns with the unperturbed step's Newton Hessian (above); False runs the
            solver in every column, as MuJoCo does.

    Returns:
        (A, B): (2nv + na, 2nv + na) and (2nv + na, nu) arrays; with sensors, (A, B, C, D)
        with C (nsensordata, 2nv + na) and D (nsensordata, nu).

    Raises:
        ValueError: eps is not a positive finite number, nthread not a positive integer,
            the integrator is RK4, or the model has history buffers (delays).
        TypeError: sensors or reuse_hessian is not a bool.
        SingularMassError: m has dofs that move no mass or inertia (and no armature).
    """
    entry.check_pair(m, d, "transition_derivatives")
    if (isinstance(eps, bool) or not isinstance(eps, (int, float, np.integer, np.floating))
            or not math.isfinite(eps) or eps <= 0):
        raise ValueError(f"transition_derivatives: argument eps must be a positive finite "
                         f"number, got {eps!r}")
    if isinstance(nthread, bool) or not isinstance(nthread, (int, np.integer)) or nthread < 1:
        raise ValueError(f"transition_derivatives: argument nthread must be a positive "
                         f"integer, got {nthread!r}")
    for name, flag in (("sensors", sensors), ("reuse_hessian", reuse_hessian)):
        if not isinstance(flag, (bool, np.bool_)):
            raise TypeError(f"transition_derivatives: argument {name} must be True or False, "
                            f"got {flag!r}")
    if m.opt_integrator[0] == INT_RK4:
        raise ValueError("transition_derivatives: the RK4 integrator is not supported (as in "
                         "MuJoCo's mjd_transitionFD: its intermediate stages make no "
                         "one-step transition to perturb); use Euler, implicit or "
                         "implicitfast")
    if m.nhistory:
        raise ValueError("transition_derivatives: the model has history buffers (actuator or "
                         "sensor nsample > 0), which MuJoCo's mjd_transitionFD refuses too: "
                         "a step also advances the buffers, so the state is not (qpos, qvel, "
                         "act) alone")
    if m.singular_dofs:
        check_not_singular(m, "transition_derivatives")
    sensors = bool(sensors)
    reuse = bool(reuse_hessian)
    nx = 2 * m.nv + m.na
    ns = m.nsensordata if sensors else 0
    A = np.empty((nx, nx))
    B = np.empty((nx, m.nu))
    C = np.empty((ns, nx))
    D = np.empty((ns, m.nu))
    ncol = m.nu + nx
    n = int(min(nthread, max(ncol, 1)))
    ep = _k_transition.ep
    try:
        if n == 1:
            mask = ep(d._s, float(eps), bool(centered), True, reuse, sensors, 0, ncol, A, B,
                      C, D)
        else:
            datas = _thread_data(m, d, n)
            if _POOL[0] is None or _POOL[0]._max_workers < n:
                _POOL[0] = ThreadPoolExecutor(max_workers=n)
            if getattr(ep, "__self__", None) is _k_transition:  # compile before the threads
                ep(datas[0]._s, float(eps), bool(centered), True, reuse, sensors, 0, 0, A, B,
                   C, D)
                ep = _k_transition.ep
            bounds = _split_columns(m, n, reuse)
            futures = [_POOL[0].submit(ep, dk._s, float(eps), bool(centered), True, reuse,
                                       sensors, bounds[k], bounds[k + 1], A, B, C, D)
                       for k, dk in enumerate(datas)]
            mask = 0
            for f in futures:
                mask |= f.result()
    except ZeroDivisionError:
        raise division_error("transition_derivatives") from None
    if mask:
        warn_bad_state(m, d, mask, "transition_derivatives")
    if sensors:
        return A, B, C, D
    return A, B
