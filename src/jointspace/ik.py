"""Inverse kinematics toward a preferred posture (slides 000, "Inverse kinematics").

Of all configurations q that put the targets where asked, h(q) = x, find the one closest to a
preferred posture q*:

    minimize ½ ‖q ⊖ q*‖²_W   subject to   h(q) = x,   lo ≤ q ≤ hi (limited joints).

Solved by sequential quadratic programming (Nocedal & Wright, ch. 18): at the current q, with
the target residual e, the stacked Jacobian J, p = q ⊖ q* and the multipliers ν, the step Δ
(in the tangent space, nv) solves

    minimize ½ ΔᵀHΔ + (W p)ᵀΔ   subject to   J Δ = e,   box limits on Δ,

with H = W + Σ ν_i ∇²h_i the Hessian of the Lagrangian (its curvature part by finite
differences of Jᵀν, so convergence is quadratic near the optimum). Limits are handled by an
active set: dofs that would cross a bound are pinned to it and the step is re-solved over the
others. A backtracking line search on the ℓ1 merit function ½‖q ⊖ q*‖²_W + ρ‖h(q) − x‖₁
makes the iteration converge from far away. At convergence h(q) = x and W(q ⊖ q*) lies in the
row space of J (the first-order optimality condition), so the result is the constrained
optimum, not merely a solution of h(q) = x. When the targets cannot be reached the iteration
becomes a damped least-squares fit and reports `converged=False` with the best effort.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from jointspace._numba import entry
from jointspace.diagnostics import element_id
from jointspace.io.frames import mat_to_quat, quat_mul
from jointspace.kinematics import jacobian, kinematics
from jointspace.types import JNT_BALL, JNT_FREE, Model, make_data


@dataclass
class Target:
    """A target for a site or body: a world position and/or orientation.

    Attributes:
        site: site name or id (give exactly one of site or body).
        body: body name or id; the point is the body frame's origin.
        pos: (3,) world position, or None to leave position free.
        quat: (4,) world orientation (w, x, y, z), or None to leave orientation free.
        weight: scales this target's rows (position in m, orientation in rad).
    """

    site: object = None
    body: object = None
    pos: object = None
    quat: object = None
    weight: float = 1.0


@dataclass
class IKResult:
    """Outcome of `ik`.

    Attributes:
        qpos: (nq,) the solution (or best effort).
        converged: True when every target is met to `tol` and the optimality condition holds.
        iterations: iterations used.
        error: final target residual norm (m and rad combined).
        optimality: norm of the projected posture gradient (0 at the constrained optimum).
        at_limit: ids of dofs pinned at a joint limit.
    """

    qpos: np.ndarray
    converged: bool
    iterations: int
    error: float
    optimality: float
    at_limit: list = field(default_factory=list)


def quat_error(q_target, R):
    """World-frame rotation vector ω with exp(ω) R = R(q_target) (the orientation residual)."""
    q = mat_to_quat(R)
    qe = quat_mul(q_target, np.array([q[0], -q[1], -q[2], -q[3]]))
    if qe[0] < 0:
        qe = -qe
    s = np.linalg.norm(qe[1:])
    if s < 1e-15:
        return 2.0 * qe[1:]
    return 2.0 * np.arctan2(s, qe[0]) * qe[1:] / s


def _finite_vec(x, n, name):
    """x as a float64 vector of length n, refusing complex and non-finite values by name."""
    if np.iscomplexobj(x):
        raise TypeError(f"ik: argument {name} is complex; pass real numbers (the imaginary "
                        "part would be dropped)")
    v = entry.vec(x, n, name, "ik")
    if not np.all(np.isfinite(v)):
        i = int(np.flatnonzero(~np.isfinite(v))[0])
        raise ValueError(f"ik: argument {name} has a non-finite value ({name}[{i}] = {v[i]}); "
                         "pass finite numbers")
    return v


def _positive(x, name):
    """x as a positive finite float, or an error naming it."""
    if isinstance(x, (complex, np.complexfloating)) or np.iscomplexobj(x):
        raise TypeError(f"ik: {name} is complex; pass a positive real number")
    try:
        w = float(x)
    except (TypeError, ValueError):
        raise TypeError(f"ik: {name} must be a positive number, got {x!r}") from None
    if not (w > 0 and np.isfinite(w)):
        raise ValueError(f"ik: {name} must be positive and finite, got {x!r}")
    return w


def _targets(m, targets):
    out = []
    for k, t in enumerate(targets):
        if not isinstance(t, Target):
            raise TypeError(f"ik: targets[{k}] must be a jointspace.ik.Target, got "
                            f"{type(t).__name__}")
        if (t.site is None) == (t.body is None):
            raise ValueError(f"ik: targets[{k}] must name exactly one of site or body")
        if t.pos is None and t.quat is None:
            raise ValueError(f"ik: targets[{k}] has neither pos nor quat")
        sid = -1 if t.site is None else element_id(m, "site", t.site, f"targets[{k}].site", "ik")
        bid = -1 if t.body is None else element_id(m, "body", t.body, f"targets[{k}].body", "ik")
        pos = None if t.pos is None else _finite_vec(t.pos, 3, f"targets[{k}].pos")
        quat = None
        if t.quat is not None:
            quat = _finite_vec(t.quat, 4, f"targets[{k}].quat")
            n = np.linalg.norm(quat)
            if not n > 0:
                raise ValueError(f"ik: targets[{k}].quat has zero length")
            quat = quat / n
        weight = _positive(t.weight, f"targets[{k}].weight")
        out.append((sid, bid, pos, quat, weight))
    return out


def _residual_and_jacobian(m, d, tgts):
    rows_e, rows_J = [], []
    for sid, bid, pos, quat, w in tgts:
        if sid >= 0:
            b = int(m.site_bodyid[sid])
            p, R = d.site_xpos[sid], d.site_xmat[sid].reshape(3, 3)
        else:
            b = bid
            p, R = d.xpos[bid], d.xmat[bid].reshape(3, 3)
        jacp, jacr = jacobian(m, d, b, p)
        if pos is not None:
            rows_e.append(w * (pos - p))
            rows_J.append(w * jacp)
        if quat is not None:
            rows_e.append(w * quat_error(quat, R))
            rows_J.append(w * jacr)
    return np.concatenate(rows_e), np.vstack(rows_J)


def _dof_limits(m):
    """Per-dof (lo, hi) for limited hinge/slide joints, ±inf elsewhere."""
    lo = np.full(m.nv, -np.inf)
    hi = np.full(m.nv, np.inf)
    for j in range(m.njnt):
        if m.jnt_limited[j] and m.jnt_type[j] not in (JNT_FREE, JNT_BALL):
            lo[m.jnt_dofadr[j]], hi[m.jnt_dofadr[j]] = m.jnt_range[j]
    return lo, hi


def _scalar_q(m):
    """Map from dof to qpos address for scalar (hinge/slide) dofs, -1 elsewhere."""
    qa = np.full(m.nv, -1)
    for j in range(m.njnt):
        if m.jnt_type[j] not in (JNT_FREE, JNT_BALL):
            qa[m.jnt_dofadr[j]] = m.jnt_qposadr[j]
    return qa


def _residual_vec(m, d, tgts, q):
    kinematics(m, d, q)
    return _residual_and_jacobian(m, d, tgts)[0]


def _curvature(m, d, tgts, q, J, nu, eps=1e-6):
    """Σ ν_i ∇²(-e_i) by central differences of Jᵀν along each tangent direction, symmetrized.

    e = x - h(q), so the constraint h(q) - x = -e has Jacobian J and Hessians ∇²h_i.
    """
    from jointspace.integrate import integrate_pos

    nv = J.shape[1]
    C = np.empty((nv, nv))
    dv = np.zeros(nv)
    for k in range(nv):
        dv[k] = eps
        kinematics(m, d, integrate_pos(m, q, dv, 1.0))
        gp = _residual_and_jacobian(m, d, tgts)[1].T @ nu
        kinematics(m, d, integrate_pos(m, q, dv, -1.0))
        gm = _residual_and_jacobian(m, d, tgts)[1].T @ nu
        C[:, k] = (gp - gm) / (2 * eps)
        dv[k] = 0.0
    return 0.5 * (C + C.T)


def _qp_step(H, J, g, e, dlo, dhi, lam):
    """Solve min ½ΔᵀHΔ + gᵀΔ s.t. JΔ = e (λ-regularized), dlo ≤ Δ ≤ dhi by an active set.

    Returns the step, the multipliers ν (H Δ + g + Jᵀν = 0) and the pinned dofs.
    """
    nv = J.shape[1]
    ne = len(e)
    pinned = np.zeros(nv, dtype=bool)
    delta = np.zeros(nv)
    nu = np.zeros(ne)
    for _ in range(nv + 1):
        free = ~pinned
        nf = int(free.sum())
        delta[:] = 0.0
        delta[pinned] = np.where(np.abs(dlo[pinned]) < np.abs(dhi[pinned]), dlo[pinned],
                                 dhi[pinned])
        Hf = H[np.ix_(free, free)]
        Jf = J[:, free]
        K = np.zeros((nf + ne, nf + ne))
        K[:nf, :nf] = Hf
        K[:nf, nf:] = Jf.T
        K[nf:, :nf] = Jf
        K[nf:, nf:] = -lam * np.eye(ne)
        rhs = np.r_[-g[free] - H[np.ix_(free, pinned)] @ delta[pinned],
                    e - J[:, pinned] @ delta[pinned]]
        sol = np.linalg.lstsq(K, rhs, rcond=None)[0]
        delta[free] = sol[:nf]
        nu = sol[nf:]
        over = free & ((delta < dlo - 1e-12) | (delta > dhi + 1e-12))
        if not over.any():
            break
        pinned |= over
    return delta, nu, pinned


def _convexify(H, J, wmin):
    """Shift H so that its restriction to the null space of J is positive definite."""
    _, sv, Vt = np.linalg.svd(J)
    rank = int(np.sum(sv > 1e-12 * max(sv.max(initial=0.0), 1.0)))
    Z = Vt[rank:].T
    if Z.size:
        lo = np.linalg.eigvalsh(Z.T @ H @ Z).min()
        if lo < 0.1 * wmin:
            H = H + (0.1 * wmin - lo) * np.eye(len(H))
    return H


def _optimality(J, g, pinned):
    """Norm of the posture gradient g left after projecting out the constraint rows (KKT)."""
    free = ~pinned
    Jf, gf = J[:, free], g[free]
    if gf.size == 0:
        return 0.0
    mult, *_ = np.linalg.lstsq(Jf.T, gf, rcond=None)
    return float(np.linalg.norm(gf - Jf.T @ mult))


def ik(m: Model, targets, q_pref=None, q_init=None, weights=None, *, tol=1e-10,
       max_iter=200, damping=1e-12, respect_limits=True) -> IKResult:
    """Solve inverse kinematics toward a preferred posture.

    Args:
        m: the model.
        targets: a `Target` or a list of them.
        q_pref: (nq,) preferred posture q*; default qpos0.
        q_init: (nq,) starting configuration; default q_pref.
        weights: (nv,) positive posture weights W (diagonal); default ones.
        tol: convergence tolerance on the target residual and on the optimality condition.
        max_iter: iteration limit.
        damping: Levenberg–Marquardt damping λ of the constraint system (regularizes
            singular and unreachable cases; tiny by default so reachable targets are hit
            exactly).
        respect_limits: keep limited hinge and slide joints inside their ranges.

    Returns:
        An `IKResult`.

    Raises:
        TypeError: a complex array or number, or a target that is not a `Target`.
        ValueError: a wrong shape, a NaN or inf in q_pref, q_init, weights or a target's
            pos/quat, or a weight that is not positive.
    """
    from jointspace.integrate import diff_pos, integrate_pos

    if not isinstance(m, Model):
        raise TypeError(f"ik: first argument must be a jointspace Model, got {type(m).__name__}")
    if isinstance(targets, Target):
        targets = [targets]
    tgts = _targets(m, list(targets))
    q_pref = m.qpos0.copy() if q_pref is None else _finite_vec(q_pref, m.nq, "q_pref")
    q = q_pref.copy() if q_init is None else _finite_vec(q_init, m.nq, "q_init").copy()
    w = np.ones(m.nv) if weights is None else _finite_vec(weights, m.nv, "weights")
    if np.any(w <= 0):
        raise ValueError("ik: weights must be positive and finite")
    tol = _positive(tol, "tol")
    damping = 0.0 if damping == 0 else _positive(damping, "damping (0 or more)")
    if isinstance(max_iter, bool) or not isinstance(max_iter, (int, np.integer)) or max_iter < 1:
        raise ValueError(f"ik: max_iter must be a positive integer, got {max_iter!r}")
    lo, hi = _dof_limits(m) if respect_limits else (np.full(m.nv, -np.inf),) * 2
    if not respect_limits:
        hi = np.full(m.nv, np.inf)
    qadr = _scalar_q(m)
    d = make_data(m)

    err = opt = np.inf
    it = 0
    pinned = np.zeros(m.nv, dtype=bool)
    nu = None
    rho = 1.0
    W = np.diag(w)
    lam_dls = 1e-6
    for it in range(1, max_iter + 1):
        kinematics(m, d, q)
        e, J = _residual_and_jacobian(m, d, tgts)
        err = float(np.linalg.norm(e))
        p = diff_pos(m, q_pref, q)  # q ⊖ q*
        g = w * p
        qs = np.where(qadr >= 0, q[np.maximum(qadr, 0)], 0.0)
        H = W if nu is None else _convexify(W + _curvature(m, d, tgts, q, J, nu), J, w.min())
        delta, nu, pinned = _qp_step(H, J, g, e, lo - qs, hi - qs, damping)
        opt = _optimality(J, g, pinned)
        if err < tol and opt < tol:
            return IKResult(q, True, it, err, opt, list(np.flatnonzero(pinned)))
        # backtracking on the merit ½‖q ⊖ q*‖²_W + ρ‖e‖₁, ρ above the multipliers' size
        rho = max(rho, 2.0 * float(np.abs(nu).max(initial=0.0)) + 1e-3)
        phi0 = 0.5 * g @ p + rho * np.abs(e).sum()
        slope = g @ delta - rho * np.abs(e).sum()
        alpha = 1.0
        while alpha > 1e-6:
            q_new = integrate_pos(m, q, delta, alpha)
            e_new = _residual_vec(m, d, tgts, q_new)
            p_new = diff_pos(m, q_pref, q_new)
            phi = 0.5 * (w * p_new) @ p_new + rho * np.abs(e_new).sum()
            if phi <= phi0 + 1e-4 * alpha * min(slope, 0.0):
                break
            alpha *= 0.5
        else:
            if err <= tol:
                break  # feasible and no further progress: round-off limits the optimality
            # no merit decrease (unreachable or singular targets): damped least squares on the
            # residual alone until a step reduces it
            nu = None
            while lam_dls < 1e6:
                step, _, _ = _qp_step(W, J, np.zeros(m.nv), e, lo - qs, hi - qs, lam_dls)
                q_new = integrate_pos(m, q, step, 1.0)
                if np.linalg.norm(_residual_vec(m, d, tgts, q_new)) < err:
                    lam_dls = max(lam_dls / 10, 1e-9)
                    break
                lam_dls *= 10
            else:
                break  # no descent direction left: a local minimum of the residual
        q = q_new
    kinematics(m, d, q)
    return IKResult(q, False, it, err, opt, list(np.flatnonzero(pinned)))
