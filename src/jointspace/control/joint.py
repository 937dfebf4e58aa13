"""Joint-space controllers for robots in contact: PD/PID and inverse dynamics with contacts.

The controllers of paper 002's experiments (§7), side by side on one robot:

  PD, PID                     error feedback: τ = Kp e + Kd ė (+ Ki ∫e), e = q_ref − q
  InverseDynamics(predictor)  computed torque: q̈_des = q̈_ref + Kp e + Kd ė on the actuated
                              dofs, and τ from the model with the contact forces given by
                              `predictor`:
    SensedContacts()              the simulator's constraint forces of its last step (the
                                  paper's perfect virtual force sensors, one step old)
    RigidContacts(formulation)    forces predicted with the torques (`jointspace.rigid`):
                                  "noslip", "coulomb", "coulomb_enum", "cfree"; the previous
                                  result warm-starts the next call
    SoftContacts()                the soft-contact analytical inverse (Todorov 2014,
                                  `jointspace.inverse`): the model's own soft contacts,
                                  whose forces are a function of the acceleration
    NoContacts()                  plain RNEA, contacts ignored (a baseline)

A predictor is any object with `tau(m, d_model, qacc_des, d_sim) -> (tau, info)`.

References are given per actuated dof, in the order of `rigid.actuated_dofs(m)` (ascending
dof index); each actuated dof belongs to a hinge or slide joint, so its position is one qpos
entry. Outputs are generalized forces on those dofs: apply them as `d.qfrc_applied` with
actuation disabled (as the examples do) or divide by the gear of motor actuators.
"""

import time
from dataclasses import dataclass, field

import numpy as np

from jointspace import rigid
from jointspace._numba import entry
from jointspace.control.kernels import consistency_step
from jointspace.dynamics.crba import crb_stage
from jointspace.dynamics.rnea import rnea
from jointspace.errors import JointspaceError
from jointspace.inverse.core import inverse
from jointspace.passive import passive
from jointspace.types import make_data

_k_passive = entry.Kernel(passive)
_k_crb = entry.Kernel(crb_stage)
_k_newton = entry.Kernel(consistency_step)


@dataclass
class ControlOutput:
    """One control step's output.

    Attributes:
        tau: (nact,) generalized forces on the actuated dofs.
        qfrc: (nv,) tau scattered on the dofs.
        qacc_des: (nact,) desired accelerations (inverse-dynamics controllers; else None).
        seconds: wall time of the step (s).
        info: predictor-specific details (the `RigidIDResult` for rigid predictors).
    """

    tau: np.ndarray
    qfrc: np.ndarray
    qacc_des: np.ndarray = None
    seconds: float = 0.0
    info: dict = field(default_factory=dict)


def _gain(x, n, name):
    g = np.broadcast_to(np.asarray(x, dtype=np.float64), (n,)).copy()
    if not np.all(np.isfinite(g)) or np.any(g < 0):
        raise JointspaceError(f"controller: gain {name} must be finite and ≥ 0, got {x!r}")
    return g


class _Joint:
    """Indexing shared by the controllers: actuated dofs and their qpos addresses."""

    def __init__(self, m):
        self.dofs = rigid.actuated_dofs(m)
        jnt = np.empty(self.dofs.size, dtype=np.int64)
        for i, dof in enumerate(self.dofs):
            jnt[i] = m.dof_jntid[dof]
        self.qadr = m.jnt_qposadr[jnt]
        self.nv = m.nv

    def error(self, d, q_ref, v_ref):
        n = self.dofs.size
        q_ref = np.asarray(q_ref, dtype=np.float64)
        v_ref = np.asarray(v_ref, dtype=np.float64)
        if q_ref.shape != (n,) or v_ref.shape != (n,):
            raise JointspaceError(f"controller: q_ref and v_ref must have shape ({n},) (one "
                                  f"entry per actuated dof), got {q_ref.shape}, {v_ref.shape}")
        return q_ref - d.qpos[self.qadr], v_ref - d.qvel[self.dofs]

    def scatter(self, tau):
        qfrc = np.zeros(self.nv)
        qfrc[self.dofs] = tau
        return qfrc


class PD:
    """Error feedback τ = Kp (q_ref − q) + Kd (v_ref − v) + Ki ∫(q_ref − q) dt (PID if Ki > 0).

    Args:
        m: the Model.
        kp, kd, ki: gains (scalars or one per actuated dof), N m/rad, N m s/rad, N m/(rad s).
        gravity_compensation: add the gravity and bias forces of the actuated dofs.
    """

    def __init__(self, m, kp, kd, ki=0.0, gravity_compensation=False):
        self.j = _Joint(m)
        n = self.j.dofs.size
        self.kp, self.kd, self.ki = _gain(kp, n, "kp"), _gain(kd, n, "kd"), _gain(ki, n, "ki")
        self.integral = np.zeros(n)
        self.gravity_compensation = gravity_compensation
        self._d = make_data(m) if gravity_compensation else None

    def __call__(self, m, d, q_ref, v_ref, a_ref=None, dt=None):
        """One control step at the state of d (dt defaults to m.opt.timestep)."""
        t0 = time.perf_counter()
        e, ed = self.j.error(d, q_ref, v_ref)
        self.integral += e * (m.opt_timestep[0] if dt is None else dt)
        tau = self.kp * e + self.kd * ed + self.ki * self.integral
        if self.gravity_compensation:
            bias = rnea(m, self._d, d.qpos, d.qvel, np.zeros(m.nv))
            tau += bias[self.j.dofs]
        return ControlOutput(tau, self.j.scatter(tau), None, time.perf_counter() - t0)


def _rnea_minus_passive(m, dm, d_sim, qacc):
    """M q̈ + c(q, v) − f_passive(q, v) at the simulator's state (two compiled calls)."""
    full = rnea(m, dm, d_sim.qpos, d_sim.qvel, qacc)
    dm.qvel[:] = d_sim.qvel
    ep = _k_passive.ep
    ep(m._s, dm._s)
    return full - dm.qfrc_passive


class NoContacts:
    """Predictor: RNEA with the desired accelerations, contacts ignored."""

    name = "ID (no contact)"

    def tau(self, m, dm, qacc_des, d_sim):
        """Generalized forces on all dofs and an empty info dict."""
        return _rnea_minus_passive(m, dm, d_sim, qacc_des), {}


class SensedContacts:
    """Predictor: the simulator's last constraint forces (perfect, one-step-old sensors).

    τ = M q̈ + c − f_passive − f_sensed with q̈ = q̈_des (the controller's: desired on
    actuated dofs, its reference on the others); f_sensed = the simulator's
    qfrc_constraint, optionally low-pass filtered: f ← α f_new + (1 − α) f (α = 1: none).

    Args:
        alpha: filter coefficient in (0, 1].
    """

    name = "ID (sensed contact)"

    def __init__(self, alpha=1.0):
        if not 0.0 < alpha <= 1.0:
            raise JointspaceError(f"SensedContacts: alpha must be in (0, 1], got {alpha!r}")
        self.alpha = alpha
        self.filtered = None

    def tau(self, m, dm, qacc_des, d_sim):
        """Generalized forces on all dofs and an empty info dict."""
        f = d_sim.qfrc_constraint
        self.filtered = f.copy() if self.filtered is None else \
            self.alpha * f + (1.0 - self.alpha) * self.filtered
        return _rnea_minus_passive(m, dm, d_sim, qacc_des) - self.filtered, {}


class RigidContacts:
    """Predictor: `jointspace.rigid.inverse_dynamics` with one formulation, warm-started.

    Args:
        formulation: "noslip", "coulomb", "coulomb_enum" or "cfree".
        **kwargs: passed to `rigid.inverse_dynamics` (mu, edges, gap_gain, h, …).
    """

    def __init__(self, formulation="cfree", **kwargs):
        if formulation not in rigid.FORMULATIONS:
            raise JointspaceError(f"RigidContacts: formulation must be one of "
                                  f"{tuple(rigid.FORMULATIONS)}, got {formulation!r}")
        self.formulation = formulation
        self.kwargs = kwargs
        self.previous = None
        self.name = f"ID (rigid, {formulation})"

    @property
    def tau_target(self):
        """(nact,) torques the anti-chatter stage aims at (NaN: the previous τ), or None.

        Set it to pick, among the rigid model's equally valid solutions, e.g. a requested
        grip force on a gripper's fingers (see `rigid.inverse_dynamics`).
        """
        return self.kwargs.get("tau_target")

    @tau_target.setter
    def tau_target(self, value):
        self.kwargs["tau_target"] = value

    def tau(self, m, dm, qacc_des, d_sim):
        """Generalized forces (zero on unactuated dofs) and {"result": RigidIDResult}."""
        dm.qpos[:] = d_sim.qpos
        dm.qvel[:] = d_sim.qvel
        dm.qfrc_applied[:] = 0.0
        dm.xfrc_applied[:] = d_sim.xfrc_applied
        res = rigid.inverse_dynamics(m, dm, qacc_des, self.formulation, previous=self.previous,
                                     **self.kwargs)
        if res.status == "solved":
            self.previous = res
        return res.qfrc_actuator, {"result": res}


class SoftContacts:
    """Predictor: the soft-contact analytical inverse (Todorov 2014, `jointspace.inverse`).

    Under the model's own soft contacts the constraint force is a function of the
    acceleration, so the inverse dynamics is an evaluation: d_model gets the simulator's
    (qpos, qvel), qacc = q̈, and `jointspace.inverse` returns qfrc_inverse = M q̈ + c −
    passive − Jᵀ f(q̈) with the contact forces f(q̈) in efc_force. No LCP, no QP, and no
    indeterminacy: one q̈, one force.

    The actuated dofs take the desired accelerations. The unactuated ones (floating base,
    free objects) cannot be pushed, and the way they are treated is the `base` argument:

      "consistent"  (default) their accelerations are solved so that the unactuated rows
                    of qfrc_inverse vanish — the acceleration the soft model gives the base
                    under these contact forces: Newton steps on the convex function whose
                    gradient is qfrc_inverse (`control.WholeBodyID`'s step, Hessian
                    S_u (M + Jᵀ H J) S_uᵀ) with backtracking on the residual. Forward
                    dynamics at the returned τ then reproduces q̈ exactly (the desired
                    accelerations on the actuated dofs, the solved ones on the others).
      "lstsq"       their accelerations are the reference passed in (zero by default)
                    and τ is the least-squares solution of Sᵀτ = qfrc_inverse:
                    its actuated rows. The unactuated rows — force the base would need and
                    does not get — are dropped and reported as the residual.

    Applied forces of the simulator (qfrc_applied, xfrc_applied) are not subtracted, as for
    the other predictors. The model's "invdiscrete" flag must be off (q̈ is continuous).

    Args:
        base: "consistent" or "lstsq".
        maxiter: Newton iterations at most ("consistent").
        tol: tolerance on the unactuated rows of qfrc_inverse (N, N m).

    info: {"qacc": the accelerations used (nv,), "efc_force": the predicted constraint
    forces, "residual": max |qfrc_inverse| on unactuated dofs, "iterations"}.
    """

    name = "ID (soft inverse)"

    def __init__(self, base="consistent", maxiter=20, tol=1e-8):
        if base not in ("consistent", "lstsq"):
            raise JointspaceError(f"SoftContacts: base must be 'consistent' or 'lstsq', got "
                                  f"{base!r}")
        if isinstance(maxiter, bool) or int(maxiter) != maxiter or maxiter < 0:
            raise JointspaceError(f"SoftContacts: maxiter must be a non-negative integer, "
                                  f"got {maxiter!r}")
        if not tol > 0.0:
            raise JointspaceError(f"SoftContacts: tol must be positive, got {tol!r}")
        self.base = base
        self.maxiter = int(maxiter)
        self.tol = float(tol)
        self._unact = None

    def _qfrc(self, m, dm, qacc):
        dm.qacc[:] = qacc
        inverse(m, dm)
        qfrc = dm.qfrc_inverse.copy()
        r = np.ascontiguousarray(qfrc[self._unact])
        return qfrc, r, (float(np.abs(r).max()) if r.size else 0.0), float(r @ r)

    def tau(self, m, dm, qacc_des, d_sim):
        """Generalized forces on all dofs (zero on unactuated ones) and the info dict."""
        if self._unact is None:
            mask = np.ones(m.nv, dtype=bool)
            mask[rigid.actuated_dofs(m)] = False
            self._unact = np.flatnonzero(mask)
        dm.qpos[:] = d_sim.qpos
        dm.qvel[:] = d_sim.qvel
        qacc = np.array(qacc_des, dtype=np.float64)
        qfrc, r, rn, r2 = self._qfrc(m, dm, qacc)
        it = 0
        if self.base == "consistent" and rn > self.tol:
            ep = _k_crb.ep
            ep(m._s, dm._s)
            while rn > self.tol and it < self.maxiter:
                start = qacc.copy()
                ep = _k_newton.ep  # each time: before the first call it is the compiling `first`
                if ep(m._s, dm._s, qacc, self._unact, r) > 0:
                    break
                it += 1
                alpha = 1.0
                for ls in range(30):
                    qfrc, r_try, rn, r2_try = self._qfrc(m, dm, qacc)
                    if r2_try <= (1.0 - 1e-4 * alpha) * r2 or ls == 29:
                        break
                    alpha *= 0.5
                    qacc = 0.5 * (start + qacc)
                r, r2 = r_try, r2_try
        out = qfrc.copy()
        out[self._unact] = 0.0
        return out, {"qacc": qacc, "efc_force": dm.efc_force[:dm.nefc[0]].copy(),
                     "residual": rn, "iterations": it}


class InverseDynamics:
    """Computed-torque control with a contact-force predictor.

    q̈_des = q̈_ref + Kp (q_ref − q) + Kd (v_ref − v) on the actuated dofs (the others take
    `qacc_unactuated` of the call, zero by default, as their reference); τ =
    predictor(q̈_des).

    The unactuated reference is not the simulator's last acceleration: fed back one step
    late through M_au q̈_u, that made the loop unstable (on the standing quadruped the
    one-step map has an eigenvalue of −2.5; examples/rigid_sensed_loop.py measures it).
    For a floating base, pass a task's base acceleration (e.g. torso attitude and height
    feedback), as the paper's controller does.

    Args:
        m: the Model.
        kp, kd: feedback gains on accelerations (1/s², 1/s), scalars or per actuated dof.
        predictor: `SensedContacts()`, `RigidContacts(...)`, `SoftContacts()`,
            `NoContacts()` or any object with the same `tau` method.
    """

    def __init__(self, m, kp, kd, predictor):
        self.j = _Joint(m)
        n = self.j.dofs.size
        self.kp, self.kd = _gain(kp, n, "kp"), _gain(kd, n, "kd")
        self.predictor = predictor
        self._d = make_data(m)
        self.name = getattr(predictor, "name", type(predictor).__name__)

    def __call__(self, m, d, q_ref, v_ref, a_ref, dt=None, qacc_unactuated=None):
        """One control step at the state of d; a_ref (nact,) reference accelerations.

        qacc_unactuated: (nv,) desired accelerations whose unactuated entries (floating
        base, free objects) are the reference there, e.g. a torso task's; None: zero.
        """
        t0 = time.perf_counter()
        e, ed = self.j.error(d, q_ref, v_ref)
        a_ref = np.asarray(a_ref, dtype=np.float64)
        if a_ref.shape != e.shape:
            raise JointspaceError(f"controller: a_ref must have shape {e.shape}, got "
                                  f"{a_ref.shape}")
        a_des = a_ref + self.kp * e + self.kd * ed
        if qacc_unactuated is None:
            qacc = np.zeros(m.nv)
        else:
            qacc = np.array(qacc_unactuated, dtype=np.float64)
            if qacc.shape != (m.nv,) or not np.isfinite(qacc).all():
                raise JointspaceError(f"controller: qacc_unactuated must be a finite "
                                      f"({m.nv},) array, got shape {qacc.shape}")
        qacc[self.j.dofs] = a_des
        full, info = self.predictor.tau(m, self._d, qacc, d)
        tau = full[self.j.dofs]
        return ControlOutput(tau, self.j.scatter(tau), a_des, time.perf_counter() - t0, info)
