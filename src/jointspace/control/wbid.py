"""Whole-body inverse-dynamics control with contact forces predicted by the soft model.

With soft contacts (Todorov 2014, 004) the constraint force is a function of the
acceleration: f(q̈) = −∂s/∂jar at jar = J q̈ − aref (the map the forward solver's optimum
satisfies, and the paper's analytical inverse). Inverse dynamics is then an evaluation,

    qfrc_inverse(q̈) = M q̈ + c − passive − Jᵀ f(q̈) = ∇Φ(q̈),
    Φ(q̈) = ½ q̈ᵀ M q̈ + (c − passive)ᵀ q̈ + s(J q̈ − aref)   (convex),

and the forward dynamics with a force τ is the minimizer of Φ(q̈) − τᵀ q̈. A controller may
choose q̈ as long as the unactuated dofs u (the floating base) need no force:
r(q̈) = S_u ∇Φ(q̈) = 0. `WholeBodyID` takes the task accelerations q̈_des of
`OperationalSpace`'s prioritized recursion (feet, center of mass, torso, posture), keeps
them on the actuated dofs, and gives the base the acceleration that minimizes Φ over q̈_u —
a convex problem in 6 variables (Newton steps with H_uu = S_u (M + Jᵀ H J) S_uᵀ,
H = ∂²s/∂jar², and Armijo backtracking on Φ), so it always has a solution and the iteration
always converges. With the feet held by the first-level tasks, q̈_des already moves the
base as the feet allow, and the base's correction is what the contact forces need. The
actuated rows of qfrc_inverse are the torques; with a perfect model the simulator then
produces exactly q̈ (the forward problem's optimum is unique). No QP is solved: the
friction cones and unilaterality are in f itself.

The contact model is a plug-in: `predictor(m, d, qacc) -> qfrc_inverse` (the rows built at
d's state are in d; the line search then uses ‖r‖² instead of Φ). The default runs inside
the compiled Newton iteration: Φ, its gradient (the same qfrc_inverse as `jointspace.inverse`
and `soft_inverse`: the soft force is −∂s/∂jar, 004 §IV) and H from the solvers' cost;
`inverse_predictor(jointspace.inverse)` adapts an inverse with MuJoCo's calling convention,
reading d.qacc and writing d.qfrc_inverse.
"""

import numpy as np

from jointspace._numba import entry
from jointspace.constraint import warn_cnstrfull
from jointspace.control import common
from jointspace.control.kernels import (
    consistency_step,
    finish,
    wbid_kernel,
    wbid_prepare,
)
from jointspace.control.osc import TaskController
from jointspace.inverse.core import inverse_at


def soft_inverse(m, d, qacc):
    """The soft-contact inverse dynamics at d's state: the force that produces qacc.

    `jointspace.inverse` (one compiled call: the position and velocity stages, collision
    and the constraint rows at d's (qpos, qvel), then qfrc_inverse = M qacc + c − passive
    − Jᵀ f with the analytical soft constraint force f of 004 §IV; MuJoCo's mj_inverse)
    with d.qacc = qacc, read as a continuous acceleration whatever the model's
    "invdiscrete" flag says. Also writes d.qacc, d.efc_force and the other fields of
    `jointspace.inverse`.

    Args:
        m: the Model.
        d: a Data for m (reads qpos, qvel).
        qacc: (nv,) accelerations.

    Returns:
        (nv,) qfrc_inverse: what actuators and applied forces must supply.
    """
    entry.check_pair(m, d, "soft_inverse")
    d.qacc[:] = common.vec(qacc, m.nv, "qacc", "soft_inverse")
    inverse_at(m, d, 0, "soft_inverse")
    return d.qfrc_inverse.copy()


def inverse_predictor(inverse):
    """Adapt an inverse-dynamics function `inverse(m, d)` to the predictor signature.

    The function is called with d.qacc set to the candidate acceleration and must write
    d.qfrc_inverse (MuJoCo's mj_inverse convention; `jointspace.inverse` once available).
    """
    def predictor(m, d, qacc):
        d.qacc[:] = qacc
        inverse(m, d)
        return np.array(d.qfrc_inverse, dtype=np.float64)

    return predictor


class WholeBodyID(TaskController):
    """Whole-body inverse-dynamics control for a floating base on soft contacts.

    Tasks and posture as in `OperationalSpace` (typically: feet poses at the first level,
    center of mass and torso orientation at the second, a posture); the torques come from
    the consistent acceleration of the module docstring. Without contacts the same law is a
    floating-base inverse dynamics that respects the base's unactuated dynamics.

    Args:
        m: the Model.
        tasks: Task objects in priority order (tuples share a level).
        posture: a `Posture`, or None.
        predictor: None (compiled soft-contact inverse) or a callable
            predictor(m, d, qacc) -> (nv,) qfrc_inverse.
        singular_threshold: as in `OperationalSpace`.
        output: "ctrl", "qfrc_applied" or None.
        compensate_passive: subtract the plant's spring and damper forces.
        actuated: dofs the controller may push on (default: those the actuators drive).
        maxiter: Newton iterations at most.
        tol: tolerance (N or N m) on the unactuated rows of qfrc_inverse.
        on_infeasible: what to do when the rows cannot be zeroed ("warn", "raise",
            "ignore").

    After a call: `tau`, `qacc` (the consistent q̈), `qacc_des` (the tasks' q̈), `residual`
    (largest |qfrc_inverse| on unactuated dofs), `iterations`, `saturated`, and
    d.efc_force holds the predicted constraint forces (compiled predictor). A residual above
    `tol` after `maxiter` iterations (only possible with an external predictor that is not
    a gradient of a convex function, or a singular M) is reported by `on_infeasible`.
    """

    def __init__(self, m, tasks, posture=None, *, predictor=None, singular_threshold=1e-3,
                 output="qfrc_applied", compensate_passive=True, actuated=None, maxiter=20,
                 tol=1e-8, on_infeasible="warn"):
        who = "WholeBodyID"
        common.check_policy(on_infeasible, who)
        common.check_model(m, who)
        nun = int(np.sum(common.actuated_mask(m, actuated, who) == 0))
        nv = m.nv
        self._setup(m, tasks, posture, singular_threshold, output, compensate_passive,
                    actuated, 2 + nun, 1, 2 * nv + 4, who)
        if predictor is not None and not callable(predictor):
            raise TypeError(f"{who}: predictor must be callable as predictor(m, d, qacc)")
        unact = np.flatnonzero(~self.actuated)
        wb0 = self.ibuf.size - 2 - nun
        self._wb0 = wb0
        self.maxiter = maxiter
        self.ibuf[wb0 + 1] = nun
        self.ibuf[wb0 + 2:] = unact
        self.fbuf[-1] = float(tol)
        o = self.out.size - 2 * nv - 4
        self.qacc_des = self.out[o:o + nv]
        self._o = o
        self._unact = unact
        self.predictor = predictor
        self._wb0 = wb0
        self.tol = float(tol)
        self.on_infeasible = on_infeasible
        self.residual = 0.0
        self.iterations = 0
        self._was_feasible = True

    @property
    def maxiter(self):
        """Newton iterations at most."""
        return int(self.ibuf[self._wb0])

    @maxiter.setter
    def maxiter(self, value):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 0:
            raise ValueError(f"WholeBodyID: maxiter must be a non-negative integer, got "
                             f"{value!r}")
        self.ibuf[self._wb0] = int(value)

    def __call__(self, d):
        """τ for the state in d (sensed qpos, qvel); also written to the chosen output.

        Returns:
            (nv,) generalized force τ (zero on unactuated dofs).
        """
        m = self.m
        nv = m.nv
        entry.check_pair(m, d, "WholeBodyID")
        o = self._o
        if self.predictor is None:
            ep = _k_wbid.ep
            ep(m._s, d._s, self.ibuf, self.fbuf, self.out)
            self._after(self.out[4 * nv:4 * nv + 4])
            self.residual, self.iterations, need = self.out[o + nv:o + nv + 3].tolist()
            self.iterations = int(self.iterations)
            if need < 0:
                warn_cnstrfull(m, d, int(need), "WholeBodyID")
        else:
            self._predicted(d)
        feasible = self.residual <= self.tol
        if not feasible and self._was_feasible:
            common.infeasible(
                self.on_infeasible,
                f"WholeBodyID: the base acceleration did not converge: the unactuated dofs "
                f"still need {self.residual:.3g} after {self.iterations} Newton iterations "
                f"(tol = {self.tol:g}), so the torques will not produce the commanded "
                f"acceleration. Raise maxiter or tol, or check that the predictor's "
                f"qfrc_inverse is consistent with the model")
        self._was_feasible = feasible
        return self.tau.copy()

    def _predicted(self, d):
        m = self.m
        nv = m.nv
        ep = _k_prepare.ep
        bad = ep(m._s, d._s, self.ibuf, self.fbuf, self.out)
        self._after(self.out[4 * nv:4 * nv + 4])
        common.check_pivot(m, bad, "WholeBodyID")
        if self.out[self._o + nv + 2] < 0:
            warn_cnstrfull(m, d, int(self.out[self._o + nv + 2]), "WholeBodyID", stacklevel=4)
        qacc = self.qacc
        unact = self._unact

        def residual():
            qfrc = np.asarray(self.predictor(m, d, qacc.copy()), dtype=np.float64)
            if qfrc.shape != (nv,) or not np.all(np.isfinite(qfrc)):
                raise ValueError(f"WholeBodyID: the predictor must return a finite ({nv},) "
                                 f"array, got shape {qfrc.shape}")
            r = np.ascontiguousarray(qfrc[unact])
            return qfrc, r, float(np.abs(r).max()) if r.size else 0.0, float(r @ r)

        qfrc, r, rn, r2 = residual()
        it = 0
        while rn > self.tol and it < self.maxiter and r.size:
            start = qacc.copy()
            ep = _k_step.ep  # each time: before the first call it is the compiling `first`
            if ep(m._s, d._s, qacc, unact, r) > 0:
                break
            it += 1
            alpha = 1.0
            for ls in range(30):
                qfrc, r, rn, r2_try = residual()
                if r2_try <= (1.0 - 1e-4 * alpha) * r2 or ls == 29:
                    break
                alpha *= 0.5
                qacc[:] = 0.5 * (start + qacc)
            r2 = r2_try
        self.residual = rn
        self.iterations = it
        self.tau[:] = qfrc
        ep = _k_finish.ep
        self.saturated = int(ep(m._s, d._s, self.ibuf, self.tau))


_k_wbid = entry.Kernel(wbid_kernel)
_k_prepare = entry.Kernel(wbid_prepare)
_k_step = entry.Kernel(consistency_step)
_k_finish = entry.Kernel(finish)
