"""Operational-space control (Khatib 1987) with prioritized tasks and a posture task.

The slides (001): project the inertia, stiffness and damping into the "operational space"
of a task x = h(q) with Jacobian J, then control it like a point mass. The task-space inertia
is Λ = (J M⁻¹ Jᵀ)⁻¹ and the dynamically consistent inverse J̄ = M⁻¹ Jᵀ Λ; the law

    τ = Jᵀ Λ (ẍ* − J̇q̇) + Jᵀ J̄ᵀ (c − passive) + (I − Jᵀ J̄ᵀ) τ₀,
    ẍ* = ẍ_des + K_d (ẋ_des − ẋ) + K_p (x_des ⊖ x)

makes the task error obey the commanded spring-damper ë + K_d ė + K_p e = 0, and the
null-space torque (I − Jᵀ J̄ᵀ) τ₀ (here τ₀ = M a₀ with the posture acceleration
a₀ = k_p (q* ⊖ q) − k_d q̇, the slides' preferred posture q*) moves the robot without
disturbing the task: J M⁻¹ (I − Jᵀ J̄ᵀ) = 0. Several tasks are handled in priority order,
each in the null space of those above (`kernels._prioritized` gives the recursion); M⁻¹
is applied through the sparse LᵀDL factor, never formed.

Orientation errors are the world-frame rotation vector log(R_des Rᵀ); for a rotation about
a fixed axis the orientation error then obeys the same linear dynamics as a position.

Near a singular configuration J M⁻¹ Jᵀ loses rank and Λ blows up. Let A = J M⁻¹ Jᵀ,
S = diag(A_ii)^(-1/2) (so rows of different units compare), w the eigenvalues of S A S and
w̄ = ε max(w) with ε = `singular_threshold`. Then Λ = S (S A S + δ I)⁻¹ S with
δ = w̄ (1 − (min(w)/w̄)²) when min(w) < w̄, else δ = 0: continuous in q, exact away from
singularities, and bounded near them. A JointspaceWarning says when a task level enters
that region.
"""

import warnings

import numpy as np

from jointspace._numba import entry
from jointspace.control import common
from jointspace.control.kernels import (
    F_ACC,
    F_KD,
    F_KP,
    F_POS,
    F_QUAT,
    F_VEL,
    KIND_BODY,
    KIND_COM,
    KIND_SITE,
    TF,
    TI,
    TO,
    osc_kernel,
    task_inertia_kernel,
)
from jointspace.diagnostics import element_id
from jointspace.errors import JointspaceError, JointspaceWarning

_AXES = "xyz"


def _axis_bits(axes, name, who):
    if not isinstance(axes, str) or not axes or any(a not in _AXES for a in axes) \
            or len(set(axes)) != len(axes):
        raise ValueError(f"{who}: argument {name} must be a non-empty string of distinct "
                         f"letters from 'xyz', got {axes!r}")
    return sum(1 << _AXES.index(a) for a in axes)


class Task:
    """A task on a frame of the robot: its position and/or orientation follow a target.

    Rows are the selected world axes of the position (`axes`), then those of the orientation
    (`rot_axes`); the commanded task acceleration is
    ẍ* = ẍ_des + kd (ẋ_des − ẋ) + kp e, with e = x_des − x (position) and
    e = log(R_des Rᵀ) (orientation, world frame). Use `SiteTask`, `BodyTask` or `ComTask`.

    Args:
        kind: "site", "body" or "com".
        name: the site or body (name or id); for "com", the body whose subtree's center of
            mass is controlled (0 or "world": the whole robot).
        kp: stiffness (1/s²), a scalar or one value per row.
        kd: damping (1/s), a scalar or one value per row.
        position: control the position.
        orientation: control the orientation (not for "com").
        axes: world axes of the position rows, e.g. "xz" for a planar arm.
        rot_axes: world axes of the orientation rows.
    """

    def __init__(self, kind, name, *, kp, kd, position=True, orientation=False, axes="xyz",
                 rot_axes="xyz"):
        who = f"{type(self).__name__}({name!r})"
        if kind not in ("site", "body", "com"):
            raise ValueError(f"{who}: kind must be 'site', 'body' or 'com', got {kind!r}")
        if kind == "com" and orientation:
            raise ValueError(f"{who}: a center-of-mass task has no orientation")
        if not (position or orientation):
            raise ValueError(f"{who}: a task needs position=True or orientation=True")
        mask = (_axis_bits(axes, "axes", who) if position else 0)
        if orientation:
            mask |= _axis_bits(rot_axes, "rot_axes", who) << 3
        self.kind = kind
        self.name = name
        self.mask = mask
        self.rows = [c for c in range(6) if (mask >> c) & 1]
        self.nrow = len(self.rows)
        self._kp = common.gain_vector(kp, self.nrow, "kp", who)
        self._kd = common.gain_vector(kd, self.nrow, "kd", who)
        self._f = np.zeros(TF)
        self._f[F_QUAT] = 1.0
        self._o = np.zeros(TO)
        self._who = who
        self._owner = None

    def _bind(self, owner, f, o):
        if self._owner is not None:
            raise JointspaceError(f"{self._who}: this task already belongs to a controller; "
                                  f"create a new Task for each controller")
        f[:] = self._f
        for i, c in enumerate(self.rows):
            f[F_KP + c] = self._kp[i]
            f[F_KD + c] = self._kd[i]
        self._f = f
        self._o = o
        self._owner = owner

    def set_target(self, pos=None, quat=None, vel=None, angvel=None, acc=None, angacc=None):
        """Set the target; arguments not given keep their values (initially zero, identity).

        Args:
            pos: (3,) world position x_des.
            quat: (4,) world orientation (w, x, y, z) of the frame.
            vel: (3,) linear velocity ẋ_des.
            angvel: (3,) angular velocity ω_des (world).
            acc: (3,) linear acceleration ẍ_des (feedforward).
            angacc: (3,) angular acceleration ω̇_des (world).
        """
        f = self._f
        who = self._who + ".set_target"
        for x, off, n, name in ((pos, F_POS, 3, "pos"), (quat, F_QUAT, 4, "quat"),
                                (vel, F_VEL, 3, "vel"), (angvel, F_VEL + 3, 3, "angvel"),
                                (acc, F_ACC, 3, "acc"), (angacc, F_ACC + 3, 3, "angacc")):
            if x is not None:
                f[off:off + n] = common.vec(x, n, name, who)
        if quat is not None:
            nrm = np.linalg.norm(f[F_QUAT:F_QUAT + 4])
            if not nrm > 0:
                raise ValueError(f"{who}: argument quat must be non-zero")
            f[F_QUAT:F_QUAT + 4] /= nrm

    @property
    def target(self):
        """The current target: dict of pos, quat, vel, angvel, acc, angacc (copies)."""
        f = self._f
        return {"pos": f[F_POS:F_POS + 3].copy(), "quat": f[F_QUAT:F_QUAT + 4].copy(),
                "vel": f[F_VEL:F_VEL + 3].copy(), "angvel": f[F_VEL + 3:F_VEL + 6].copy(),
                "acc": f[F_ACC:F_ACC + 3].copy(), "angacc": f[F_ACC + 3:F_ACC + 6].copy()}

    @property
    def error(self):
        """(nrow,) task error e (x_des − x, log(R_des Rᵀ)) at the last control step."""
        return self._o[self.rows].copy()

    @property
    def error_rate(self):
        """(nrow,) ė = ẋ_des − ẋ at the last control step."""
        return self._o[[6 + c for c in self.rows]].copy()

    def _object_id(self, m):
        if self.kind == "site":
            return KIND_SITE, element_id(m, "site", self.name, "site", self._who)
        if self.kind == "body":
            return KIND_BODY, element_id(m, "body", self.name, "body", self._who)
        if self.name is None or (isinstance(self.name, str) and self.name == "world"):
            return KIND_COM, 0
        return KIND_COM, element_id(m, "body", self.name, "body", self._who)

    def _current(self, m, d):
        """Current position (3,) and orientation quaternion of the task frame."""
        kind, oid = self._object_id(m)
        if kind == KIND_SITE:
            pos, mat = d.site_xpos[oid], d.site_xmat[oid]
        elif kind == KIND_BODY:
            pos, mat = d.xpos[oid], d.xmat[oid]
        else:
            return d.subtree_com[oid].copy(), np.array([1.0, 0.0, 0.0, 0.0])
        return pos.copy(), _mat_quat(mat)


def _mat_quat(mat):
    from jointspace.rotation import mat_to_quat

    q = np.empty(4)
    mat_to_quat.py_func(np.asarray(mat, dtype=np.float64), q)
    return q


class SiteTask(Task):
    """Position and/or orientation of a site (see `Task`)."""

    def __init__(self, site, **kw):
        super().__init__("site", site, **kw)


class BodyTask(Task):
    """Position and/or orientation of a body's frame (see `Task`)."""

    def __init__(self, body, **kw):
        super().__init__("body", body, **kw)


class ComTask(Task):
    """Center of mass of a body's subtree, the whole robot by default (see `Task`)."""

    def __init__(self, body="world", *, kp, kd, axes="xyz"):
        super().__init__("com", body, kp=kp, kd=kd, axes=axes)


class Posture:
    """The preferred posture q*: a₀ = kp (q* ⊖ q) − kd q̇, acting in the tasks' null space.

    Args:
        q_star: (nq,) preferred positions.
        kp: stiffness (1/s²), scalar or (nv,).
        kd: damping (1/s), scalar or (nv,).
    """

    def __init__(self, q_star, kp, kd):
        self.q_star = np.array(q_star, dtype=np.float64)
        self.kp = kp
        self.kd = kd


def _levels(tasks, who):
    """Flatten tasks (an entry may be a tuple/list of tasks sharing a level) with levels."""
    flat = []
    for lev, item in enumerate(tasks):
        group = item if isinstance(item, (list, tuple)) else (item,)
        if not group:
            raise ValueError(f"{who}: task level {lev} is empty")
        for t in group:
            if not isinstance(t, Task):
                raise TypeError(f"{who}: tasks must be Task objects (SiteTask, BodyTask, "
                                f"ComTask), got {type(t).__name__}")
            flat.append((lev, t))
    return flat


class TaskController:
    """Layout of the buffers shared by OperationalSpace and WholeBodyID (see _kernels)."""

    def _setup(self, m, tasks, posture, singular_threshold, output, compensate_passive,
               actuated, extra_i, extra_f, extra_o, who):
        common.check_model(m, who)
        nv, nq = m.nv, m.nq
        flat = _levels(tasks, who)
        eps = float(singular_threshold)
        if not 0.0 < eps < 1.0:
            raise ValueError(f"{who}: singular_threshold must be in (0, 1), got {eps!r}")
        mask = common.actuated_mask(m, actuated, who)
        mode, act_dof = common.output_mode(m, output, mask, who)
        ntask = len(flat)
        nlevel = flat[-1][0] + 1 if flat else 0
        nrow = sum(t.nrow for _, t in flat)
        ls0 = 6 + nv + m.nactuator
        t0 = ls0 + nlevel + 1
        self.ibuf = np.zeros(t0 + ntask * TI + extra_i, dtype=np.int64)
        ib = self.ibuf
        ib[0:6] = (mode, ntask, nrow, nlevel, posture is not None, compensate_passive)
        ib[6:6 + nv] = mask
        ib[6 + nv:6 + nv + m.nactuator] = act_dof
        f0 = 1 + nq + 2 * nv
        self.fbuf = np.zeros(f0 + ntask * TF + extra_f)
        self.fbuf[0] = eps
        if posture is not None:
            if not isinstance(posture, Posture):
                raise TypeError(f"{who}: posture must be a Posture, got "
                                f"{type(posture).__name__}")
            self.fbuf[1:1 + nq] = common.vec(posture.q_star, nq, "posture.q_star", who)
            self.fbuf[1 + nq:1 + nq + nv] = common.gain_vector(posture.kp, nv,
                                                                "posture.kp", who)
            self.fbuf[1 + nq + nv:f0] = common.gain_vector(posture.kd, nv, "posture.kd", who)
        dg0 = 4 * nv + 4
        to0 = dg0 + 3 * nlevel
        self.out = np.zeros(to0 + ntask * TO + extra_o)
        row = 0
        for i, (lev, t) in enumerate(flat):
            kind, oid = t._object_id(m)
            if lev > 0 and flat[i - 1][0] != lev:
                ib[ls0 + lev] = row
            ib[t0 + i * TI:t0 + (i + 1) * TI] = (kind, oid, t.mask, lev, t.nrow, row)
            row += t.nrow
            t._bind(self, self.fbuf[f0 + i * TF:f0 + (i + 1) * TF],
                    self.out[to0 + i * TO:to0 + (i + 1) * TO])
        ib[ls0 + nlevel] = nrow
        self.m = m
        self.tasks = [t for _, t in flat]
        self.actuated = mask.astype(bool)
        self.tau = self.out[0:nv]
        self.qacc = self.out[nv:2 * nv]
        self.qacc_null = self.out[2 * nv:3 * nv]
        self.tau_null = self.out[3 * nv:4 * nv]
        self.level_eig = self.out[dg0:to0].reshape(nlevel, 3)
        self.singular = np.zeros(nlevel, dtype=bool)
        self._any_singular = False
        self.saturated = 0
        self._who = who
        self._nlevel = nlevel
        self._ntask = ntask

    def hold(self, d):
        """Set every task's target to its frame's current pose in d, at rest.

        Computes the kinematics of d first; velocities and accelerations are set to zero.
        """
        from jointspace.kinematics import kinematics

        kinematics(self.m, d)
        for t in self.tasks:
            pos, quat = t._current(self.m, d)
            t.set_target(pos=pos, quat=quat, vel=np.zeros(3), angvel=np.zeros(3),
                         acc=np.zeros(3), angacc=np.zeros(3))

    def _after(self, info):
        """Raise on a singular M, count saturations, warn when a level turns singular."""
        bad, damped, saturated = info[:3].tolist()
        if bad >= 0:
            common.check_pivot(self.m, bad, self._who)
        self.saturated = int(saturated)
        # (plain Python flags: ndarray.any() costs microseconds here)
        if damped > 0 or self._any_singular:
            eig = self.level_eig
            now = (eig[:, 2] > 0) | ~(eig[:, 1] > 0)
            for lev in np.flatnonzero(now & ~self.singular):
                warnings.warn(
                    f"{self._who}: task level {lev} is at or near a singular configuration "
                    f"(eigenvalues of the scaled J M⁻¹ Jᵀ from {eig[lev, 0]:.3g} to "
                    f"{eig[lev, 1]:.3g}); "
                    f"its task-space inertia is damped with δ = {eig[lev, 2]:.3g} "
                    f"(singular_threshold = {self.fbuf[0]:g}), so that level is tracked "
                    f"only approximately", JointspaceWarning, stacklevel=3)
            self.singular = now
            self._any_singular = damped > 0


class OperationalSpace(TaskController):
    """Operational-space control with prioritized tasks and a posture (one compiled call).

    τ = M q̈ + c − passive with q̈ from the task-priority recursion of the module docstring:
    the first level's error follows its spring-damper exactly (away from singularities),
    each lower level acts in the null space of the levels above, and the posture task moves
    the robot in what remains. For robots whose every dof is actuated; for a floating base
    standing on contacts use `WholeBodyID`.

    Args:
        m: the Model.
        tasks: Task objects in priority order; an entry that is a tuple or list of tasks puts
            them at the same level (stacked).
        posture: a `Posture`, or None (no null-space motion is commanded).
        singular_threshold: ε of the damping rule in the module docstring.
        output: "qfrc_applied", "ctrl" or None (see `ComputedTorque`).
        compensate_passive: subtract the plant's spring and damper forces.
        actuated: dofs the controller may push on (default as `ComputedTorque`); all must be.

    After a call: `tau`, `qacc` (commanded q̈), `qacc_null` (the posture's contribution),
    `tau_null` (= M qacc_null, the null-space torque), `level_eig` (per level: min and max
    eigenvalue of the scaled J M⁻¹ Jᵀ, damping δ), `singular` (per level), each task's
    `error`.
    """

    def __init__(self, m, tasks, posture=None, *, singular_threshold=1e-3,
                 output="qfrc_applied", compensate_passive=True, actuated=None):
        self._setup(m, tasks, posture, singular_threshold, output, compensate_passive,
                    actuated, 0, 0, 0, "OperationalSpace")
        if not self.actuated.all():
            k = int(np.flatnonzero(~self.actuated)[0])
            raise JointspaceError(
                f"OperationalSpace: dof {k} is not actuated (a free joint, or no actuator "
                f"drives it), so the task-space law cannot be applied; use WholeBodyID for a "
                f"floating base on contacts, ComputedTorque for partial feedback "
                f"linearization, or pass actuated= to push on it through qfrc_applied")

    def __call__(self, d):
        """τ for the state in d (sensed qpos, qvel); also written to the chosen output.

        Returns:
            (nv,) generalized force τ.
        """
        entry.check_pair(self.m, d, "OperationalSpace")
        ep = _k_osc.ep
        ep(self.m._s, d._s, self.ibuf, self.fbuf, self.out)
        self._after(self.out[4 * self.m.nv:4 * self.m.nv + 4])
        return self.tau.copy()


def task_inertia(m, d, q, jac, *, method="factor", singular_threshold=1e-3):
    """Task-space inertia Λ = (J M(q)⁻¹ Jᵀ)⁻¹ without a dense inverse of M.

    J M⁻¹ Jᵀ comes from sparse LᵀDL solves (method="factor", O(k nM)) or from Carpentier's
    analytical M⁻¹ (method="minv"); it is inverted through its eigen-decomposition with the
    damping of the module docstring, and a JointspaceWarning says when that damping acts.

    Args:
        m: the Model.
        d: a Data for m (q is copied into d.qpos; kinematics and M are recomputed).
        q: (nq,) positions.
        jac: (k, nv) task Jacobian (e.g. np.vstack(jointspace.jacobian_site(m, d, s))).
        method: "factor" or "minv".
        singular_threshold: ε of the damping rule.

    Returns:
        (k, k) Λ.
    """
    who = "task_inertia"
    entry.check_pair(m, d, who)
    q = common.vec(q, m.nq, "q", who)
    jac = np.atleast_2d(np.ascontiguousarray(jac, dtype=np.float64))
    if jac.ndim != 2 or jac.shape[1] != m.nv:
        raise ValueError(f"{who}: argument jac must have shape (k, {m.nv}), got {jac.shape}")
    if method not in ("factor", "minv"):
        raise ValueError(f"{who}: argument method must be 'factor' or 'minv', got {method!r}")
    from jointspace.diagnostics import check_not_singular

    check_not_singular(m, who)
    k = jac.shape[0]
    lam = np.empty((k, k))
    diag = np.empty(3)
    ep = _k_ti.ep
    bad = ep(m._s, d._s, q, jac, float(singular_threshold), method == "minv", lam, diag)
    common.check_pivot(m, bad, who)
    if diag[2] > 0 or not diag[1] > 0:
        warnings.warn(
            f"{who}: J M⁻¹ Jᵀ is singular or nearly so (eigenvalues of its unit-diagonal "
            f"scaling from {diag[0]:.3g} to {diag[1]:.3g}); Λ is damped with "
            f"δ = {diag[2]:.3g} (singular_threshold = {singular_threshold:g})",
            JointspaceWarning, stacklevel=2)
    return lam


_k_osc = entry.Kernel(osc_kernel)
_k_ti = entry.Kernel(task_inertia_kernel)
