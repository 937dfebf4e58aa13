"""Forward dynamics (MuJoCo's mj_forward, engine_forward.c): the pipeline as a table of contents.

forward(m, d), one compiled call:
  position      kinematics → com_pos → tendon → crb (qM + tendon armature) → factor_m (qLD)
                → transmission                                                    `fwd_position`
                → energy_pos (with the energy flag, as MuJoCo; else energy = 0)
  rows          collision → make_constraint (efc_J, efc_pos, efc_R, …)            `fwd_rows`
                → body_transmission (adhesion moments from the contact rows)
  velocity      ten_velocity → actuator_velocity → com_vel → passive → rne        `fwd_velocity`
                → tendon_bias (tendon armature)
                → energy_vel (with the energy flag)
  actuation     actuator_force, qfrc_actuator                                     `actuation`
  acceleration  qfrc_smooth = qfrc_passive − qfrc_bias + qfrc_applied + qfrc_actuator
                              + Σ_b J_bᵀ xfrc_applied_b
                qacc_smooth = M⁻¹ qfrc_smooth (the position stage's LᵀDL)    `fwd_acceleration`
  constraint    reference accelerations (efc_vel, efc_aref), the solve of
                m.opt.solver (efc_force, qfrc_constraint, qacc), qacc_warmstart    `fwd_constraint`
  sensors       every sensor into sensordata (position, velocity, acceleration)   `sensor_stage`

The stages are shared: `jointspace.inverse` runs fwd_position, fwd_rows and fwd_velocity
before its analytical constraint forces; the controllers and the rigid-contact inverse run
the ones they need. Time stepping (forward, then an integrator) is `jointspace.step`.
"""

import warnings

import numpy as np
from numba import njit

from jointspace._numba import entry
from jointspace._numba.scratch import shaped
from jointspace.actuation import (
    actuation,
    actuator_velocity,
    body_transmission,
    transmission,
)
from jointspace.collision.driver import collision_of
from jointspace.constraint import make_constraint_stage, reference
from jointspace.diagnostics import bad_element, division_error, element_name, joint_label
from jointspace.dynamics.crba import crb_stage
from jointspace.dynamics.energy import energy_pos, energy_vel
from jointspace.dynamics.factor import factor_m_stage, solve_ld
from jointspace.dynamics.rnea import RNE_GRAVITY, RNE_VEL, rne
from jointspace.errors import JointspaceWarning
from jointspace.kinematics import (
    camlight,
    com_pos,
    com_vel_stage,
    kinematics_stage,
    tendon_bias,
)
from jointspace.passive import passive
from jointspace.sensor import sensor_stage
from jointspace.solver import solve_stage
from jointspace.tendon import tendon_velocity
from jointspace.types import DSBL_CONSTRAINT, DSBL_CONTACT, DSBL_GRAVITY, ENBL_ENERGY

# ---------------------------------------------------------------------------------------------
# the stages


@njit(cache=True)
def fwd_position(m, d, mass):
    """Position stage: poses, com quantities, (with mass: M and its LᵀDL), actuator moments.

    Returns -1, or the dof whose LᵀDL pivot is not positive (M singular here).
    """
    kinematics_stage(m, d)
    com_pos(m, d)
    if m.ncam:
        camlight(m, d, False)
    bad_pivot = -1
    if mass:
        crb_stage(m, d)
        bad_pivot = factor_m_stage(m, d)
    transmission(m, d)
    return bad_pivot


@njit(cache=True, inline="always")
def fwd_rows(m, d):
    """Contacts, constraint rows and the moments of body transmissions at the current poses.

    mj_collision, mj_makeConstraint, then the adhesion actuators' moments, which need both
    (`body_transmission`; mj_transmission runs after mj_makeConstraint).

    Collision is skipped, with ncon = 0, when the "constraint" or "contact" flag is
    disabled. Returns the rows requested (negative when some did not fit into njmax).
    """
    return fwd_rows_of(m, d, m.body_parentid[:0])


@njit(cache=True, inline="always")
def fwd_rows_of(m, d, bodies):
    """`fwd_rows` with the contacts of the pairs on the bodies flagged (`collision_of`).

    bodies empty: every pair's, as `fwd_rows`.
    """
    if m.opt_disableflags[0] & (DSBL_CONSTRAINT | DSBL_CONTACT):
        d.ncon[0] = 0
    else:
        collision_of(m, d, bodies)
    nrows = make_constraint_stage(m, d)
    if m.nactuator:
        body_transmission(m, d)
    return nrows


@njit(cache=True, inline="always")
def fwd_velocity_passive(m, d):
    """The velocity stage up to the passive forces: tendon and actuator velocities, cvel."""
    if m.ntendon:
        tendon_velocity(m, d)
    actuator_velocity(m, d)
    com_vel_stage(m, d)
    passive(m, d)


@njit(cache=True)
def fwd_velocity(m, d):
    """Velocity stage: tendon and actuator velocities, cvel, passive forces, bias c(q, v).

    qfrc_bias is RNE's c(q, v) plus the tendon armature's bias (`tendon_bias`), as MuJoCo's
    mj_fwdVelocity.
    """
    fwd_velocity_passive(m, d)
    gravity = RNE_GRAVITY if (m.opt_disableflags[0] & DSBL_GRAVITY) == 0 else 0
    rne(m, d, RNE_VEL | gravity, d.cfrc_ext, d.qfrc_bias)
    if m.ntendon:
        tendon_bias(m, d, d.qfrc_bias)


@njit(cache=True)
def xfrc_accumulate(m, d, qfrc):
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
def fwd_acceleration(m, d):
    """qfrc_smooth (every force but constraints) and qacc_smooth = M⁻¹ qfrc_smooth."""
    for i in range(m.nv):
        d.qfrc_smooth[i] = (d.qfrc_passive[i] - d.qfrc_bias[i] + d.qfrc_applied[i]
                            + d.qfrc_actuator[i])
    xfrc_accumulate(m, d, d.qfrc_smooth)
    d.qacc_smooth[:] = d.qfrc_smooth
    solve_ld(m, d.qLD, d.qLDiagInv, shaped(d.qacc_smooth, (1, m.nv)))


@njit(cache=True, inline="always")
def fwd_constraint(m, d):
    """Constraint stage on the rows of fwd_rows: efc_vel, efc_aref, the solve, the warm start.

    See `jointspace.constraint` and `jointspace.solver`. As mj_forward, it leaves
    qacc_warmstart as it is: the step saves it (`integrate.advance`), so repeated forward
    calls, and RK4's stages, all start from the last step's acceleration.
    """
    reference(m, d)
    solve_stage(m, d, int(m.opt_solver[0]), int(m.opt_iterations[0]))


@njit(cache=True, inline="always")
def forward_stages(m, d):
    """The whole forward pipeline (mj_forward), sensors last.

    Returns -1 or the dof of a singular pivot (see forward_dynamics).
    """
    bad_pivot = forward_dynamics(m, d)
    sensor_stage(m, d)
    return bad_pivot


@njit(cache=True, inline="always")
def forward_dynamics(m, d):
    """forward without the sensors (mj_forwardSkip with skipsensor, as RK4's inner stages).

    Returns -1 or the dof of a singular pivot. A singular M makes qacc[dof] NaN there, as
    MuJoCo's division by the zero pivot would, so that the checks of `step` reset the state.
    """
    bad_pivot = fwd_position(m, d, np.bool_(True))
    # energies only with the energy flag, else zeros (mj_forwardSkip; an energy sensor
    # computes its own)
    energy = m.opt_enableflags[0] & ENBL_ENERGY
    if energy:
        energy_pos(m, d)
    else:
        d.energy[0] = 0.0
        d.energy[1] = 0.0
    fwd_rows(m, d)
    fwd_velocity(m, d)
    if energy:
        energy_vel(m, d)
    actuation(m, d)
    fwd_acceleration(m, d)
    if bad_pivot >= 0:
        d.qacc_smooth[bad_pivot] = np.nan
    fwd_constraint(m, d)
    return bad_pivot


@njit(cache=True, inline="always")
def forward_checked(m, d):
    """forward_stages; returns -1, the first bad qacc element i ≥ 0, or −2 − dof (singular M)."""
    bad_pivot = forward_stages(m, d)
    if bad_pivot >= 0:
        return -2 - bad_pivot
    return bad_element(d.qacc)


@njit(cache=True, nogil=True)
def _forward_entry(d):
    """forward_checked with the model carried by d (one struct crosses into compiled code)."""
    return forward_checked(d.model, d)


_k_forward = entry.Kernel(_forward_entry)


def warn_forward(m, bad, fname="forward"):
    """The warning for forward_checked's return code bad (nothing for -1)."""
    if bad <= -2:
        warnings.warn(
            f"{fname}: the joint-space inertia M is singular at this configuration (the LᵀDL "
            f"pivot of dof {-2 - bad} ({joint_label(m, int(m.dof_jntid[-2 - bad]))}) is not "
            f"positive), so qacc is NaN there; give the bodies this dof moves mass and "
            f"inertia, or add armature",
            JointspaceWarning, stacklevel=3)
    elif bad >= 0:
        warnings.warn(
            f"{fname}: {element_name(m, 2, bad)} is NaN, inf or larger than 1e10; check "
            f"qpos, qvel, ctrl, qfrc_applied and xfrc_applied for bad values",
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
    entry.check_pair(m, d, "forward")
    ep = _k_forward.ep
    try:
        bad = ep(d._s)
    except ZeroDivisionError:
        raise division_error("forward") from None
    if bad != -1:
        warn_forward(m, bad)
