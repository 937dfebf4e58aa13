"""The log-barrier contact model of the slides and its inverse (004 Theorem 3, general case).

Slides 000 ("Interior-point minimization", "Inverse dynamics"; Todorov, ICRA 2011): the
inequality constraints s_j(f) ≥ 0 on the constraint forces (004 eq. 9: friction loss
|f| < η, limits and contacts f ≥ 0, elliptic cones f0² ≥ Σ (f_j/μ_j)²) are not imposed but
smoothed by the barrier φ(f) = −Σ_j log s_j(f) with a fixed weight κ, and the contact
velocities by ψ(v) = −Σ_{i ∈ N} log(v_i − v_min) with weight κ_v (N: the rows with a normal
meaning: limits, frictionless contacts, pyramidal edges, the first row of elliptic
contacts). In the constraint space of d's current rows (A = J M⁻¹ Jᵀ, R, b = J qacc_smooth −
aref, so that jar = A f + b is the constraint-space acceleration; 004 eq. 8):

  forward   f = argmin ½ fᵀ (A + R) f + fᵀ b + κ φ(f) + κ_v ψ(A f + b)
  inverse   f = argmin ½ fᵀ R f + κ φ(f) + fᵀ (jar + κ_v A ∇ψ(jar))

Theorem 3 with r(f) = ½ fᵀ R f + κ φ(f) and s = κ_v ψ: both have the same stationarity
condition R f + κ ∇φ(f) + jar + κ_v A ∇ψ(jar) = 0 when jar = A f + b, so the inverse returns
the forward's force from the observed jar alone. Neither regularizer is quadratic, so there
is no closed form: both are solved by damped Newton steps that stay strictly inside the
barriers' domains, with Armijo backtracking. The inverse's Hessian R + κ ∇²φ is block
diagonal (one block per constraint), and without the velocity barrier it needs neither M nor
A; with it, A ∇ψ(jar) uses M's factor once.
"""

import math

import numpy as np
from numba import njit

from jointspace._numba import entry
from jointspace._numba.dense import chol_factor, chol_solve
from jointspace.errors import JointspaceError
from jointspace.solver import cone_arrays
from jointspace.solver.cost import make_ar, mul_j
from jointspace.solver.ipm import feasible, log_barrier

INFEASIBLE = -1


@njit(cache=True)
def _normal_rows(d, cdim):
    """1 on the rows the velocity barrier acts on, else 0."""
    nefc = d.nefc[0]
    mask = np.zeros(max(nefc, 1), dtype=np.int32)
    i = d.ne[0] + d.nf[0]
    while i < nefc:
        mask[i] = 1
        i += cdim[i] if cdim[i] > 0 else 1
    return mask


@njit(cache=True)
def _psi(jar, mask, vmin, g1, g2):
    """ψ(jar) = −Σ_N log(jar_i − v_min); g1 = ∇ψ, g2 = diag ∇²ψ. inf outside the domain."""
    s = 0.0
    for i in range(jar.shape[0]):
        g1[i] = 0.0
        g2[i] = 0.0
        if mask[i]:
            z = jar[i] - vmin
            if not z > 0.0:
                return np.inf
            s -= math.log(z)
            g1[i] = -1.0 / z
            g2[i] = 1.0 / (z * z)
    return s


@njit(cache=True)
def _start(d, lin, diag, cdim, f):
    """A strictly feasible force at the natural scale |lin_i| / diag_i (as the IPM's)."""
    ne = d.ne[0]
    nf = d.nf[0]
    nefc = d.nefc[0]
    big = 0.0
    for i in range(nefc):
        big = max(big, abs(lin[i]))
        f[i] = 0.0
    i = ne + nf
    while i < nefc:
        f[i] = (abs(lin[i]) + 1e-6 * big + 1e-300) / diag[i]
        i += cdim[i] if cdim[i] > 0 else 1


@njit(cache=True)
def _quadratic(H0, lin, x, n):
    """½ xᵀ H0 x + xᵀ lin."""
    s = 0.0
    for r in range(n):
        t = 0.0
        for k in range(n):
            t += H0[r, k] * x[k]
        s += x[r] * (0.5 * t + lin[r])
    return s


@njit(cache=True)
def _objective(d, H0, lin, kappa, A, kappa_v, vmin, mask, cdim, cfr, x, jar, p1, p2, gphi,
               Hphi, want):
    """½ xᵀH0x + xᵀlin + κ φ(x) [+ κ_v ψ(A x + lin)]; inf outside the domains.

    With `want`: gphi, Hphi = ∇φ, ∇²φ and p1, p2 = ∇ψ, diag ∇²ψ at jar = A x + lin.
    """
    n = d.nefc[0]
    if not feasible(d, x, cdim, cfr):
        return np.inf
    if want:
        for r in range(n):
            gphi[r] = 0.0
            for k in range(n):
                Hphi[r, k] = 0.0
    F = _quadratic(H0, lin, x, n) + kappa * log_barrier(d, x, cdim, cfr, gphi, Hphi, want)
    if A.shape[0] == n and kappa_v > 0.0:
        for r in range(n):
            s = lin[r]
            for k in range(n):
                s += A[r, k] * x[k]
            jar[r] = s
        F += kappa_v * _psi(jar, mask, vmin, p1, p2)
    return F


@njit(cache=True)
def _newton(d, H0, lin, kappa, A, kappa_v, vmin, mask, cdim, cfr, f, maxiter, tol):
    """Minimize ½ fᵀ H0 f + fᵀ lin + κ φ(f) [+ κ_v ψ(A f + lin)] from a feasible f.

    The velocity term is used when A is nefc × nefc and kappa_v > 0 (the forward model,
    lin = b). Damped Newton: H = H0 + κ ∇²φ [+ κ_v A diag(ψ'') A], the step halved until
    strictly feasible with Armijo decrease. Returns the iterations.
    """
    n = d.nefc[0]
    vel = A.shape[0] == n and kappa_v > 0.0
    g = np.empty(n)
    H = np.empty((n, n))
    gphi = np.empty(n)
    Hphi = np.empty((n, n))
    step = np.empty(n)
    trial = np.empty(n)
    jar = np.empty(n)
    p1 = np.empty(n)
    p2 = np.empty(n)
    it = 0
    while it < maxiter:
        F = _objective(d, H0, lin, kappa, A, kappa_v, vmin, mask, cdim, cfr, f, jar, p1, p2,
                       gphi, Hphi, True)
        for r in range(n):
            s = lin[r] + kappa * gphi[r]
            for k in range(n):
                s += H0[r, k] * f[k]
                H[r, k] = H0[r, k] + kappa * Hphi[r, k]
            g[r] = s
        if vel:
            for r in range(n):
                s = 0.0
                for k in range(n):
                    s += A[r, k] * p1[k]
                g[r] += kappa_v * s
                for c in range(r + 1):
                    h = 0.0
                    for k in range(n):
                        h += A[r, k] * p2[k] * A[k, c]
                    H[r, c] += kappa_v * h
                    if c != r:
                        H[c, r] += kappa_v * h
        chol_factor(H, n, 1e-300)
        for r in range(n):
            step[r] = -g[r]
        chol_solve(H, n, step)
        dec = 0.0
        for r in range(n):
            dec -= g[r] * step[r]
        it += 1
        if not dec > tol * tol * (1.0 + abs(F)):
            break
        a = 1.0
        found = False
        for _ in range(60):
            for r in range(n):
                trial[r] = f[r] + a * step[r]
            Ft = _objective(d, H0, lin, kappa, A, kappa_v, vmin, mask, cdim, cfr, trial, jar,
                            p1, p2, gphi, Hphi, False)
            if Ft <= F - 0.25 * a * dec:
                found = True
                break
            a *= 0.5
        if not found:
            break
        for r in range(n):
            f[r] = trial[r]
    return it


@njit(cache=True, nogil=True)
def _barrier_forward(m, d, kappa, kappa_v, vmin, maxiter, tol, f, jar):
    """Forward barrier model on d's rows (needs forward's qLD, qacc_smooth, efc rows)."""
    n = d.nefc[0]
    cdim, _, cfr = cone_arrays(m, d)
    AR = np.empty((n, n))
    make_ar(m, d, AR)
    b = np.empty(n)
    mul_j(d, d.qacc_smooth, b)
    for i in range(n):
        b[i] -= d.efc_aref[i]
    A = AR.copy()
    for i in range(n):
        A[i, i] -= d.efc_R[i]
    diag = np.empty(n)
    for i in range(n):
        diag[i] = AR[i, i]
    _start(d, b, diag, cdim, f)
    mask = _normal_rows(d, cdim)
    if kappa_v > 0.0:
        # the start must give A f + b inside ψ's domain
        for r in range(n):
            s = b[r]
            for k in range(n):
                s += A[r, k] * f[k]
            jar[r] = s
        if not np.isfinite(_psi(jar, mask, vmin, np.empty(n), np.empty(n))):
            return INFEASIBLE
    it = _newton(d, AR, b, kappa, A if kappa_v > 0.0 else np.empty((0, 0)), kappa_v, vmin,
                 mask, cdim, cfr, f, maxiter, tol)
    for r in range(n):
        s = b[r]
        for k in range(n):
            s += A[r, k] * f[k]
        jar[r] = s
    return it


@njit(cache=True, nogil=True)
def _barrier_inverse(m, d, jar, kappa, kappa_v, vmin, maxiter, tol, f):
    """Inverse barrier model: f from jar (needs qLD only when kappa_v > 0)."""
    n = d.nefc[0]
    cdim, _, cfr = cone_arrays(m, d)
    lin = jar[:n].copy()
    if kappa_v > 0.0:
        # lin = jar + κ_v A ∇ψ(jar)
        mask = _normal_rows(d, cdim)
        p1 = np.empty(n)
        if not np.isfinite(_psi(lin, mask, vmin, p1, np.empty(n))):
            return INFEASIBLE
        AR = np.empty((n, n))
        make_ar(m, d, AR)
        for r in range(n):
            s = -d.efc_R[r] * p1[r]
            for k in range(n):
                s += AR[r, k] * p1[k]
            lin[r] += kappa_v * s
    H0 = np.zeros((n, n))
    for i in range(n):
        H0[i, i] = d.efc_R[i]
    _start(d, lin, d.efc_R, cdim, f)
    return _newton(d, H0, lin, kappa, np.empty((0, 0)), 0.0, vmin, np.zeros(1, np.int32),
                   cdim, cfr, f, maxiter, tol)


_k_forward = entry.Kernel(_barrier_forward)
_k_inverse = entry.Kernel(_barrier_inverse)


def _check_args(kappa, kappa_v, vmin, fname):
    kappa = float(kappa)
    kappa_v = float(kappa_v)
    vmin = float(vmin)
    if not (kappa > 0 and math.isfinite(kappa)):
        raise ValueError(f"{fname}: argument kappa must be positive and finite, got {kappa!r}")
    if not (kappa_v >= 0 and math.isfinite(kappa_v)):
        raise ValueError(f"{fname}: argument kappa_v must be non-negative and finite, "
                         f"got {kappa_v!r}")
    if not math.isfinite(vmin):
        raise ValueError(f"{fname}: argument vmin must be finite, got {vmin!r}")
    return kappa, kappa_v, vmin


def _infeasible(fname):
    return JointspaceError(
        f"{fname}: the contact accelerations are outside the velocity barrier's domain "
        f"(jar_i ≤ vmin on a normal row); lower vmin, or use kappa_v = 0")


def barrier_forward(m, d, kappa, kappa_v=0.0, vmin=-1e3, iterations=100, tolerance=1e-12):
    """Forces of the log-barrier contact model on d's current rows (slides 000).

    f = argmin ½ fᵀ(A + R) f + fᵀ b + κ φ(f) + κ_v ψ(A f + b), see the module docstring.
    Run `jointspace.forward` first (rows, M's factor, qacc_smooth); d is not modified.

    Args:
        m: the Model.
        d: a Data for m after forward.
        kappa: force-barrier weight κ > 0 (force × acceleration units: N·m/s² per row).
        kappa_v: velocity-barrier weight κ_v ≥ 0.
        vmin: the velocity barrier's bound on the normal rows' jar (acceleration units).
        iterations: Newton iteration limit.
        tolerance: stop when the Newton decrement is below tolerance² (1 + |cost|).

    Returns:
        (f, jar): (nefc,) forces and the constraint-space accelerations A f + b.
    """
    entry.check_pair(m, d, "barrier_forward")
    kappa, kappa_v, vmin = _check_args(kappa, kappa_v, vmin, "barrier_forward")
    n = int(d.nefc[0])
    f = np.zeros(max(n, 1))
    jar = np.zeros(max(n, 1))
    ep = _k_forward.ep
    if ep(m._s, d._s, kappa, kappa_v, vmin, int(iterations), float(tolerance), f,
                  jar) == INFEASIBLE:
        raise _infeasible("barrier_forward")
    return f[:n], jar[:n]


def barrier_inverse(m, d, jar, kappa, kappa_v=0.0, vmin=-1e3, iterations=100,
                    tolerance=1e-12):
    """Forces of the log-barrier model that produced jar (Theorem 3): the slides' inverse.

    f = argmin ½ fᵀ R f + κ φ(f) + fᵀ (jar + κ_v A ∇ψ(jar)). Needs d's rows (and M's factor
    when kappa_v > 0); d is not modified.

    Args:
        m: the Model.
        d: a Data for m with its constraint rows.
        jar: (nefc,) constraint-space accelerations J qacc − aref.
        kappa: force-barrier weight κ > 0, as in `barrier_forward`.
        kappa_v: velocity-barrier weight κ_v ≥ 0.
        vmin: the velocity barrier's bound on the normal rows' jar.
        iterations: Newton iteration limit.
        tolerance: stop when the Newton decrement is below tolerance² (1 + |cost|).

    Returns:
        (nefc,) forces.
    """
    entry.check_pair(m, d, "barrier_inverse")
    kappa, kappa_v, vmin = _check_args(kappa, kappa_v, vmin, "barrier_inverse")
    n = int(d.nefc[0])
    jar = entry.vec(jar, n, "jar", "barrier_inverse")
    f = np.zeros(max(n, 1))
    ep = _k_inverse.ep
    if ep(m._s, d._s, jar, kappa, kappa_v, vmin, int(iterations), float(tolerance),
                  f) == INFEASIBLE:
        raise _infeasible("barrier_inverse")
    return f[:n]
