"""Time stepping (MuJoCo's mj_step): forward, then an integrator, with the state checks.

step(m, d, nstep), one compiled call for all steps:
  check qpos, qvel → forward → check qacc → (the "fwdinv" enable flag: compare with the
  inverse into d.solver_fwdinv, see `jointspace.inverse`) → integrate with m.opt.integrator:
  Euler (semi-implicit, implicit dof damping), RK4, implicit, implicitfast
  (see `jointspace.integrate`). A NaN, inf or |x| > 1e10 in qpos, qvel or qacc resets the
  state to qpos0 (as mj_checkPos/Vel/Acc do), is counted in d.warning and reported as a
  JointspaceWarning naming the first bad element.
"""

import math

import numpy as np
from numba import njit

from jointspace._numba import entry
from jointspace.diagnostics import (
    WARN_BADQACC,
    WARN_BADQPOS,
    WARN_BADQVEL,
    bad_element,
    check_not_singular,
    division_error,
    warn_bad_state,
)
from jointspace.forward import forward_stages
from jointspace.integrate import (
    advance,
    euler,
    implicit,
    implicitfast,
    integrate_pos_kernel,
)
from jointspace.inverse import compare_fwd_inv_stage
from jointspace.types import (
    ENBL_FWDINV,
    INT_EULER,
    INT_IMPLICIT,
    INT_IMPLICITFAST,
    INT_RK4,
    JNT_BALL,
    JNT_FREE,
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
    i = bad_element(x)
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


@njit(cache=True, inline="always")
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
        integrate_pos_kernel(m, d.qpos, theta, 1.0)
        d.time[0] = t0 + c[i - 1] * h
        forward_stages(m, d)
        _dexp_inv(m, theta, d.qvel, k[i])
        acc[i] = d.qacc
    # X_1 = (q_0 ⊕ h Σ b_i k_i, v_0 + h Σ b_i a_i)
    for j in range(nv):
        theta[j] = h * (k[0, j] + 2.0 * k[1, j] + 2.0 * k[2, j] + k[3, j]) / 6.0
        d.qacc[j] = (acc[0, j] + 2.0 * acc[1, j] + 2.0 * acc[2, j] + acc[3, j]) / 6.0
        d.qvel[j] = v0[j] + h * d.qacc[j]
    d.qpos[:] = q0
    integrate_pos_kernel(m, d.qpos, theta, 1.0)
    d.time[0] = t0 + h


@njit(cache=True, inline="always")
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
        forward_stages(m, d)
        if _check(m, d, d.qacc, WARN_BADQACC):
            bad |= 1 << WARN_BADQACC
            forward_stages(m, d)
        if m.opt_enableflags[0] & ENBL_FWDINV:
            compare_fwd_inv_stage(m, d)
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
    bad |= _check(m, d, d.qpos, WARN_BADQPOS)
    bad |= _check(m, d, d.qvel, WARN_BADQVEL)
    return bad


@njit(cache=True, nogil=True)
def _step_entry(d, nstep):
    """_step with the model carried by d."""
    return _step(d.model, d, nstep)


_k_step = entry.Kernel(_step_entry)
_NSTEP_MAX = 2**63 - 1  # nstep crosses into compiled code as an int64


def _refuse_implicit_fluid(m):
    raise ValueError(f"step: the {m.opt.integrator} integrator needs the velocity derivative "
                     f"of the fluid forces (m.opt.density={m.opt.density}, "
                     f"m.opt.viscosity={m.opt.viscosity}), which jointspace does not compute; "
                     f"use integrator 'Euler' or 'RK4' for this model")


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
        ValueError: nstep is not a positive integer that fits in 64 bits, or the
            integrator is implicit or implicitfast with fluid forces (m.opt.density or
            m.opt.viscosity nonzero), whose velocity derivative jointspace does not compute.
    """
    entry.check_pair(m, d, "step")
    if (isinstance(nstep, bool) or not isinstance(nstep, (int, np.integer))
            or not 1 <= nstep <= _NSTEP_MAX):
        raise ValueError(f"step: argument nstep must be a positive integer at most 2**63 - 1 "
                         f"(a 64-bit count), got {nstep!r}")
    if m.singular_dofs:
        check_not_singular(m, "step")
    if m.opt_integrator[0] >= INT_IMPLICIT and (m.opt_density[0] or m.opt_viscosity[0]):
        _refuse_implicit_fluid(m)
    ep = _k_step.ep
    try:
        mask = ep(d._s, int(nstep))
    except ZeroDivisionError:
        raise division_error("step") from None
    if mask:
        warn_bad_state(m, d, mask, "step")
