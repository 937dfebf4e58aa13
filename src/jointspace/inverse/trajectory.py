"""The inverse along a trajectory: controls, constraint and contact forces per time point.

`inverse_trajectory` runs the inverse (`jointspace.inverse.core`) at each state of arrays
of positions, velocities and accelerations in one compiled call and recovers the
least-squares controls (004 §VI).
"""

import numpy as np
from numba import njit

from jointspace._numba import entry
from jointspace.errors import JointspaceError
from jointspace.inverse.core import OK, ROWS_DROPPED, inverse_kernel, raise_for, xfrc_qfrc
from jointspace.sensor import contact_frame_forces
from jointspace.types import DSBL_ACTUATION, GAIN_DCMOTOR, GAIN_PID, GAIN_SO3

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
        code, need = inverse_kernel(m, d, discrete)
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
        xfrc_qfrc(m, d, xq)
        for k in range(nv):
            target[k] = d.qfrc_inverse[k] - d.qfrc_applied[k] - xq[k]
        _actuator_ctrl(m, d, target, ctrl[t], ctrl_residual[t])
    return -1, OK, 0


_k_trajectory = entry.Kernel(_inverse_trajectory)


# ---------------------------------------------------------------------------------------------
# public API


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
        raise_for(m, d, ROWS_DROPPED if code == OK and need < 0 else code,
                   f"{fname} (time index {t})")
    for k in range(T):
        ncon[k] = np.count_nonzero(contact[k, :, 0] >= 0)
    E = int(nefc.max(initial=0))
    C = int(ncon.max(initial=0))
    return InverseTrajectory(
        **out, efc_force=efc[:, :E].copy(), nefc=nefc, ncon=ncon,
        contact_geom=contact[:, :C, :2].astype(np.int64), contact_pos=contact[:, :C, 2:5].copy(),
        contact_force=contact[:, :C, 5:11].copy())

