"""Feedback linearization (computed torque) in joint space.

The slides (001, "Using the dynamics for control"): with the dynamics M(q) q̈ + c(q, q̇) = τ
known and every dof actuated, the control law

    τ = c(q, q̇) − M(q) (B q̇ + K (q − q_ref))

cancels the non-linear part and leaves the linear closed loop q̈ + B q̇ + K (q − q_ref) = 0.
The tracking form adds a reference velocity and feedforward acceleration:

    q̈_des = q̈_ref + B (q̇_ref − q̇) + K (q_ref ⊖ q),    τ = M q̈_des + c − passive,

so that the error e = q_ref ⊖ q obeys ë + B ė + K e = 0. Here c = d.qfrc_bias (Coriolis,
centrifugal, gravity) and passive = d.qfrc_passive (joint springs and dampers of the model),
both as the simulator computes them; ⊖ is `jointspace.diff_pos` (quaternion joints are
differenced on the manifold).
"""

import numpy as np

from jointspace._numba import entry
from jointspace.control import common
from jointspace.control.kernels import computed_torque


class ComputedTorque:
    """Feedback linearization: τ that makes the closed loop q̈ = q̈_des (one compiled call).

    With unactuated dofs u (a free joint, or dofs no actuator drives) the law is the
    collocated partial feedback linearization (Spong 1994): the actuated dofs get q̈_des and
    q̈_u follows from the unactuated rows of the dynamics, M_uu q̈_u = −(M_ua q̈_a + c_u −
    passive_u), with τ_u = 0. Unactuated dofs listed in `track` are part of the task: when
    the dynamics do not give them their q̈_des (to `infeasible_tol`), the command is
    infeasible, which `on_infeasible` reports; `infeasibility` holds the largest deviation.

    Args:
        m: the Model.
        kp: K, stiffness gain (1/s²): scalar, (nv,) diagonal or (nv, nv) matrix.
        kd: B, damping gain (1/s): same shapes.
        q_ref: (nq,) initial reference positions (default m.qpos0).
        actuated: dofs the controller may push on (indices or joint names); default: the
            dofs the model's actuators drive, or, without actuators, every dof but those of
            free joints.
        track: dofs whose acceleration is the task ("all", "actuated" or a list); default
            "all".
        output: "qfrc_applied" (τ into d.qfrc_applied, 0 on unactuated dofs), "ctrl"
            (d.ctrl from τ through joint actuators' gear, gain and bias) or None.
        compensate_passive: subtract the plant's spring and damper forces (True for a
            perfect-model closed loop).
        on_infeasible: "warn" (JointspaceWarning), "raise" (JointspaceError) or "ignore".
        infeasible_tol: tolerance on |q̈ − q̈_des| of tracked unactuated dofs, relative to
            1 + max |q̈_des|.

    After a call: `qacc` (commanded q̈), `qacc_des`, `error` (q_ref ⊖ q), `infeasibility`,
    `saturated` (controls outside ctrlrange with output="ctrl").
    """

    def __init__(self, m, kp, kd, q_ref=None, *, actuated=None, track="all",
                 output="qfrc_applied", compensate_passive=True, on_infeasible="warn",
                 infeasible_tol=1e-6):
        who = "ComputedTorque"
        common.check_model(m, who)
        common.check_policy(on_infeasible, who)
        nv, nq = m.nv, m.nq
        self.m = m
        mask = common.actuated_mask(m, actuated, who)
        mode, act_dof = common.output_mode(m, output, mask, who)
        unact = np.flatnonzero(mask == 0)
        if track == "all":
            tracked = np.ones(nv, dtype=bool)
        elif track == "actuated":
            tracked = mask.astype(bool)
        else:
            tracked = np.zeros(nv, dtype=bool)
            tracked[common.dof_list(m, track, "track", who)] = True
        self._check = unact[tracked[unact]]
        self.ibuf = np.zeros(4 + nv + m.nactuator + nv, dtype=np.int64)
        self.ibuf[0] = mode
        self.ibuf[1] = 1 if compensate_passive else 0
        self.ibuf[2] = int(mask.sum())
        self.ibuf[3] = unact.size
        self.ibuf[4:4 + nv] = mask
        self.ibuf[4 + nv:4 + nv + m.nactuator] = act_dof
        self.ibuf[4 + nv + m.nactuator:4 + nv + m.nactuator + unact.size] = unact
        self.fbuf = np.zeros(nq + 2 * nv + 2 * nv * nv)
        self._q_ref = self.fbuf[0:nq]
        self._v_ref = self.fbuf[nq:nq + nv]
        self._a_ref = self.fbuf[nq + nv:nq + 2 * nv]
        self._q_ref[:] = m.qpos0 if q_ref is None else common.vec(q_ref, nq, "q_ref", who)
        kp0 = nq + 2 * nv
        self.fbuf[kp0:kp0 + nv * nv] = common.gain_matrix(kp, nv, "kp", who).ravel()
        self.fbuf[kp0 + nv * nv:] = common.gain_matrix(kd, nv, "kd", who).ravel()
        self.out = np.zeros(4 * nv + 4)
        self.qacc = self.out[nv:2 * nv]
        self.qacc_des = self.out[2 * nv:3 * nv]
        self.error = self.out[3 * nv:4 * nv]
        self.actuated = mask.astype(bool)
        self.on_infeasible = on_infeasible
        self.infeasible_tol = float(infeasible_tol)
        self.infeasibility = 0.0
        self.saturated = 0
        self._was_feasible = True

    def __call__(self, d, q_ref=None, v_ref=None, a_ref=None):
        """τ for the state in d.

        References not given keep their last values (initially q_ref = m.qpos0 or the
        constructor's, v_ref = a_ref = 0).

        Args:
            d: a Data for the controller's model, holding the sensed qpos, qvel.
            q_ref: (nq,) reference positions.
            v_ref: (nv,) reference velocities.
            a_ref: (nv,) feedforward accelerations.

        Returns:
            (nv,) generalized force τ (also written to the output chosen at construction).
        """
        m = self.m
        entry.check_pair(m, d, "ComputedTorque")
        if q_ref is not None:
            self._q_ref[:] = common.vec(q_ref, m.nq, "q_ref", "ComputedTorque")
        if v_ref is not None:
            self._v_ref[:] = common.vec(v_ref, m.nv, "v_ref", "ComputedTorque")
        if a_ref is not None:
            self._a_ref[:] = common.vec(a_ref, m.nv, "a_ref", "ComputedTorque")
        ep = _k_ct.ep
        ep(m._s, d._s, self.ibuf, self.fbuf, self.out)
        nv = m.nv
        info = self.out[4 * nv:]
        common.check_pivot(m, info[0], "ComputedTorque")
        self.saturated = int(info[2])
        if self._check.size:
            dev = np.abs(self.qacc[self._check] - self.qacc_des[self._check])
            self.infeasibility = float(dev.max())
            scale = 1.0 + float(np.abs(self.qacc_des).max())
            feasible = self.infeasibility <= self.infeasible_tol * scale
            if not feasible and self._was_feasible:
                k = int(self._check[np.argmax(dev)])
                common.infeasible(
                    self.on_infeasible,
                    f"ComputedTorque: the command is infeasible: dof {k} is not actuated and "
                    f"the dynamics give it q̈ = {self.qacc[k]:.6g} instead of the commanded "
                    f"{self.qacc_des[k]:.6g} (largest deviation {self.infeasibility:.3g}). "
                    f"Track only actuated dofs (track='actuated'), give the unactuated dofs a "
                    f"consistent reference, or use WholeBodyID when contacts carry the base")
            self._was_feasible = feasible
        return self.out[0:nv].copy()


_k_ct = entry.Kernel(computed_torque)
