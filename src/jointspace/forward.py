"""Forward dynamics and time stepping: the smooth pipeline, its constraint slot, integrators.

forward(m, d), one compiled call (MuJoCo's mj_forward, engine_forward.c):
  position      kinematics → com_pos → crb (qM) → factor_m (qLD) → transmission → energy_pos
  velocity      actuator_velocity → com_vel → passive → rne (qfrc_bias) → energy_vel
  actuation     actuator_force, qfrc_actuator
  acceleration  qfrc_smooth = qfrc_passive − qfrc_bias + qfrc_applied + qfrc_actuator
                              + Σ_b J_bᵀ xfrc_applied_b
                qacc_smooth = M⁻¹ qfrc_smooth (sparse LᵀDL of the position stage)
  constraint    qacc = qacc_smooth (`_fwd_constraint`: the slot where the constraint issue
                inserts make_constraint and the solver)

step(m, d, nstep), one compiled call for all steps (mj_step):
  check qpos, qvel → forward → check qacc → (the "fwdinv" enable flag: compare with the
  inverse into d.solver_fwdinv, see `jointspace.inverse`) → integrate with m.opt.integrator:
  Euler (semi-implicit, implicit dof damping), RK4, implicit, implicitfast
  (see `jointspace.integrate`). A NaN, inf or |x| > 1e10 in qpos, qvel or qacc resets the
  state to qpos0 (as mj_checkPos/Vel/Acc do), is counted in d.warning and reported as a
  JointspaceWarning naming the first bad element.
"""

import math
import warnings

import numpy as np
from numba import njit

from jointspace import _entry
from jointspace.actuation import _actuation, _actuator_velocity, _transmission
from jointspace.dynamics.crba import _crb
from jointspace.dynamics.energy import _energy_pos, _energy_vel
from jointspace.dynamics.factor import _factor_m, _solve_ld
from jointspace.dynamics.rnea import RNE_GRAVITY, RNE_VEL, _rne
from jointspace.errors import JointspaceWarning
from jointspace.integrate import (
    _advance,
    _euler,
    _implicit,
    _implicitfast,
    _integrate_pos,
)
from jointspace.inverse import _bad_element, _compare_fwd_inv
from jointspace.kinematics import _com_pos, _com_vel, _kinematics
from jointspace.passive import _passive
from jointspace.solver import _constraint_stage
from jointspace.types import (
    DSBL_GRAVITY,
    ENBL_FWDINV,
    INT_EULER,
    INT_IMPLICIT,
    INT_IMPLICITFAST,
    INT_RK4,
    JNT_BALL,
    JNT_FREE,
)

WARN_BADQPOS, WARN_BADQVEL, WARN_BADQACC = 0, 1, 2
_WARN_FIELDS = ("qpos", "qvel", "qacc")


# ---------------------------------------------------------------------------------------------
# the pipeline


@njit(cache=True)
def _fwd_position(m, d):
    """Position-dependent stage: poses, com quantities, M and its factorization, moments.

    Returns -1, or the dof whose LᵀDL pivot is not positive (M singular here).
    """
    _kinematics(m, d)
    _com_pos(m, d)
    _crb(m, d)
    bad_pivot = _factor_m(m, d)
    _transmission(m, d)
    _energy_pos(m, d)
    return bad_pivot


@njit(cache=True)
def _fwd_velocity(m, d):
    """Velocity-dependent stage: actuator velocities, cvel, passive and bias forces."""
    _actuator_velocity(m, d)
    _com_vel(m, d)
    _passive(m, d)
    gravity = RNE_GRAVITY if (m.opt_disableflags[0] & DSBL_GRAVITY) == 0 else 0
    _rne(m, d, RNE_VEL | gravity, d.cfrc_ext, d.qfrc_bias)
    _energy_vel(m, d)


@njit(cache=True)
def _xfrc_accumulate(m, d, qfrc):
    """Add applied Cartesian forces: qfrc += Σ_b J_bᵀ xfrc_applied_b (mj_xfrcAccumulate).

    J_b is the Jacobian of body b's com.

    A world force f and torque t at xipos act on dof i as cdof_i · (t + r × f, f) with
    r = xipos − subtree_com[root] (the spatial force in the c-frame).
    """
    for b in range(1, m.nbody):
        x = d.xfrc_applied[b]
        if (x[0] == 0.0 and x[1] == 0.0 and x[2] == 0.0 and x[3] == 0.0 and x[4] == 0.0
                and x[5] == 0.0):
            continue
        root = m.body_rootid[b]
        r0 = d.xipos[b, 0] - d.subtree_com[root, 0]
        r1 = d.xipos[b, 1] - d.subtree_com[root, 1]
        r2 = d.xipos[b, 2] - d.subtree_com[root, 2]
        t0 = x[3] + r1 * x[2] - r2 * x[1]
        t1 = x[4] + r2 * x[0] - r0 * x[2]
        t2 = x[5] + r0 * x[1] - r1 * x[0]
        w = m.body_weldid[b]
        if m.body_dofnum[w] == 0:
            continue
        i = m.body_dofadr[w] + m.body_dofnum[w] - 1
        while i >= 0:
            c = d.cdof[i]
            qfrc[i] += c[0] * t0 + c[1] * t1 + c[2] * t2 + c[3] * x[0] + c[4] * x[1] + c[5] * x[2]
            i = m.dof_parentid[i]


@njit(cache=True)
def _fwd_acceleration(m, d):
    """qfrc_smooth (every force but constraints) and qacc_smooth = M⁻¹ qfrc_smooth."""
    for i in range(m.nv):
        d.qfrc_smooth[i] = (d.qfrc_passive[i] - d.qfrc_bias[i] + d.qfrc_applied[i]
                            + d.qfrc_actuator[i])
    _xfrc_accumulate(m, d, d.qfrc_smooth)
    d.qacc_smooth[:] = d.qfrc_smooth
    _solve_ld(m, d.qLD, d.qLDiagInv, d.qacc_smooth.reshape((1, m.nv)))


@njit(cache=True)
def _fwd_constraint(m, d):
    """Constraint stage: efc rows, the solver (m.opt.solver), qacc and qfrc_constraint.

    See `jointspace.constraint` and `jointspace.solver`; also saves qacc_warmstart.
    """
    _constraint_stage(m, d)


@njit(cache=True)
def _forward(m, d):
    """The whole forward pipeline (mj_forward); returns -1 or the dof of a singular pivot.

    A singular M makes qacc[dof] NaN there, as MuJoCo's division by the zero pivot would,
    so that the checks of `step` reset the state.
    """
    bad_pivot = _fwd_position(m, d)
    _fwd_velocity(m, d)
    _actuation(m, d)
    _fwd_acceleration(m, d)
    if bad_pivot >= 0:
        d.qacc_smooth[bad_pivot] = np.nan
    _fwd_constraint(m, d)
    return bad_pivot


# ---------------------------------------------------------------------------------------------
# state checks and reset


@njit(cache=True)
def _reset(m, d):
    """Reset the state and inputs to the model's defaults (mj_resetData), keeping d.warning."""
    d.time[0] = 0.0
    d.qpos[:] = m.qpos0
    d.qvel[:] = 0.0
    d.qacc[:] = 0.0
    d.ctrl[:] = 0.0
    d.qfrc_applied[:] = 0.0
    d.xfrc_applied[:, :] = 0.0
    d.energy[:] = 0.0
    for b in range(m.nbody):
        mid = m.body_mocapid[b]
        if mid >= 0:
            d.mocap_pos[mid, :] = m.body_pos[b]
            d.mocap_quat[mid, :] = m.body_quat[b]


@njit(cache=True)
def _check(m, d, x, kind):
    """If x has a bad element: count it in d.warning[kind], reset, return 1 << kind; else 0."""
    i = _bad_element(x)
    if i < 0:
        return 0
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


@njit(cache=True)
def _rk4(m, d):
    """Classic 4th-order Runge–Kutta on the configuration manifold (mj_RungeKutta).

    Runge–Kutta–Munthe-Kaas form: positions are integrated in tangent coordinates θ at
    X_0, stage i evaluates forward at q_0 ⊕ θ_i, v_0 + h c_i a_{i−1} with θ_i = h c_i k_{i−1},
    k_i = dexp⁻¹(θ_i) v_i; the update is θ = h Σ b_i k_i, v = v_0 + h Σ b_i a_i with
    c = (½, ½, 1), b = (1/6, 1/3, 1/3, 1/6). d.qacc ends as Σ b_i a_i (MuJoCo 4 does the
    same). Needs forward at X_0 already done (d.qacc = a_0).
    """
    nv = m.nv
    h = m.opt_timestep[0]
    t0 = d.time[0]
    q0 = d.qpos.copy()
    v0 = d.qvel.copy()
    k = np.empty((4, nv))
    acc = np.empty((4, nv))
    k[0] = v0
    acc[0] = d.qacc
    theta = np.empty(nv)
    c = (0.5, 0.5, 1.0)
    for i in range(1, 4):
        # X_i = (q_0 ⊕ θ_i, v_0 + h c_i a_{i−1}),  θ_i = h c_i k_{i−1}
        for j in range(nv):
            theta[j] = h * c[i - 1] * k[i - 1, j]
            d.qvel[j] = v0[j] + h * c[i - 1] * acc[i - 1, j]
        d.qpos[:] = q0
        _integrate_pos(m, d.qpos, theta, 1.0)
        d.time[0] = t0 + c[i - 1] * h
        _forward(m, d)
        _dexp_inv(m, theta, d.qvel, k[i])
        acc[i] = d.qacc
    # X_1 = (q_0 ⊕ h Σ b_i k_i, v_0 + h Σ b_i a_i)
    for j in range(nv):
        theta[j] = h * (k[0, j] + 2.0 * k[1, j] + 2.0 * k[2, j] + k[3, j]) / 6.0
        d.qacc[j] = (acc[0, j] + 2.0 * acc[1, j] + 2.0 * acc[2, j] + acc[3, j]) / 6.0
        d.qvel[j] = v0[j] + h * d.qacc[j]
    d.qpos[:] = q0
    _integrate_pos(m, d.qpos, theta, 1.0)
    d.time[0] = t0 + h


@njit(cache=True)
def _step(m, d, nstep):
    """Run nstep steps of check → forward → check → integrate, then check the final state.

    The last check resets a state that the final integration made bad, so that the call
    never hands back NaN (MuJoCo would reset at the start of the next step instead; the
    trajectory is the same). Returns a bit mask of the checks that reset the state
    (1 qpos, 2 qvel, 4 qacc).
    """
    bad = 0
    for _ in range(nstep):
        bad |= _check(m, d, d.qpos, WARN_BADQPOS)
        bad |= _check(m, d, d.qvel, WARN_BADQVEL)
        _forward(m, d)
        if _check(m, d, d.qacc, WARN_BADQACC):
            bad |= 1 << WARN_BADQACC
            _forward(m, d)
        if m.opt_enableflags[0] & ENBL_FWDINV:
            _compare_fwd_inv(m, d)
        integrator = m.opt_integrator[0]
        if integrator == INT_EULER:
            _euler(m, d)
        elif integrator == INT_RK4:
            _rk4(m, d)
        elif integrator == INT_IMPLICITFAST:
            _implicitfast(m, d)
        elif integrator == INT_IMPLICIT:
            _implicit(m, d)
        else:
            _advance(m, d, d.qacc)
    bad |= _check(m, d, d.qpos, WARN_BADQPOS)
    bad |= _check(m, d, d.qvel, WARN_BADQVEL)
    return bad


@njit(cache=True)
def _forward_checked(m, d):
    """Run _forward; return -1, the first bad qacc element i ≥ 0, or −2 − dof for singular M."""
    bad_pivot = _forward(m, d)
    if bad_pivot >= 0:
        return -2 - bad_pivot
    return _bad_element(d.qacc)


@njit(cache=True)
def _forward_compare(m, d):
    """_forward_checked, then the fwdinv comparison (jointspace.inverse.compare_fwd_inv)."""
    bad = _forward_checked(m, d)
    _compare_fwd_inv(m, d)
    return bad


@njit(cache=True)
def _forward_entry(d):
    """_forward_checked with the model carried by d (one struct crosses into compiled code)."""
    return _forward_checked(d.model, d)


@njit(cache=True)
def _step_entry(d, nstep):
    """_step with the model carried by d."""
    return _step(d.model, d, nstep)


_k_forward = _entry.Kernel(_forward_entry, globals())
_k_forward_compare = _entry.Kernel(_forward_compare, globals())
_k_step = _entry.Kernel(_step_entry, globals())


def _joint_label(m, j):
    name = m.names["joint"][j] if 0 <= j < len(m.names["joint"]) else ""
    return f"joint {name!r}" if name else f"joint {j}"


def _element_name(m, kind, i):
    """'qvel[7] (joint 'knee')' for a qpos (kind 0) or dof (kinds 1, 2) index."""
    if kind == WARN_BADQPOS:
        j = int(np.searchsorted(m.jnt_qposadr, i, side="right") - 1)
    else:
        j = int(m.dof_jntid[i])
    return f"{_WARN_FIELDS[kind]}[{i}] ({_joint_label(m, j)})"


def _warn_bad_state(m, d, mask, fname):
    for kind in range(3):
        if mask & (1 << kind):
            what = _element_name(m, kind, int(d.warning[kind, 1]))
            warnings.warn(
                f"{fname}: {what} became NaN, inf or larger than 1e10; the state was reset "
                f"to qpos0 (d.warning[{kind}, 0] = {int(d.warning[kind, 0])} such resets so "
                f"far). Reduce the time step, add damping, or check qpos, qvel, ctrl, "
                f"qfrc_applied and xfrc_applied (a singular M also gives a NaN qacc).",
                JointspaceWarning, stacklevel=3)


def forward(m, d):
    """Forward dynamics at the state in d: fills every stage's fields and d.qacc.

    Runs kinematics, com_pos, crba, factor_m, collision, the constraint rows,
    transmission, com_vel, passive forces, bias forces (RNEA), actuation,
    qfrc_smooth/qacc_smooth, the constraint solve of m.opt.solver (efc_force,
    qfrc_constraint, qacc) and the energies, in one compiled call, as MuJoCo's mj_forward.

    Args:
        m: the Model.
        d: a Data for m (reads qpos, qvel, ctrl, qfrc_applied, xfrc_applied).
    """
    _entry.check_pair(m, d, "forward")
    bad = _k_forward(d._s)
    if bad <= -2:
        warnings.warn(
            f"forward: the joint-space inertia M is singular at this configuration (the LᵀDL "
            f"pivot of dof {-2 - bad} ({_joint_label(m, int(m.dof_jntid[-2 - bad]))}) is not "
            f"positive), so qacc is NaN there; give the bodies this dof moves mass and "
            f"inertia, or add armature",
            JointspaceWarning, stacklevel=2)
    elif bad >= 0:
        warnings.warn(
            f"forward: {_element_name(m, 2, bad)} is NaN, inf or larger than 1e10; check "
            f"qpos, qvel, ctrl, qfrc_applied and xfrc_applied for bad values",
            JointspaceWarning, stacklevel=2)


def step(m, d, nstep=1):
    """Advance the simulation by `nstep` time steps of m.opt.timestep, in one compiled call.

    Each step checks qpos and qvel, runs `forward`, checks qacc and integrates with
    m.opt.integrator ("Euler", "RK4", "implicit" or "implicitfast"), as MuJoCo's mj_step.
    A bad value (NaN, inf, |x| > 1e10) resets the state to qpos0, increments
    d.warning[kind, 0] (kind 0, 1, 2 = qpos, qvel, qacc) and raises a JointspaceWarning
    naming the first bad element; the state reached by the last step is checked too, so
    d never holds a bad state after the call.

    Args:
        m: the Model.
        d: a Data for m.
        nstep: number of steps, a positive integer.
    """
    _entry.check_pair(m, d, "step")
    if isinstance(nstep, bool) or not isinstance(nstep, (int, np.integer)) or nstep < 1:
        raise ValueError(f"step: argument nstep must be a positive integer, got {nstep!r}")
    mask = _k_step(d._s, int(nstep))
    if mask:
        _warn_bad_state(m, d, mask, "step")
