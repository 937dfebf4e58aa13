"""Interior-point (log-barrier) minimization of the dual problem.

Slides 000, "Interior-point minimization" (Todorov, ICRA 2011).

The inequality constraints s_j(f) ≥ 0 of 004 eq. 9 are replaced by the barrier
    φ(f) = −Σ log s_j(f):   −log f_i (limits, contacts: pyramidal edges and normals),
    −log(η − f_i) − log(η + f_i) (friction loss η), −log(f_0² − Σ_j (f_j/μ_j)²) with f_0 > 0
    (elliptic cones),
and ℓ(f) + φ(f)/t, with ℓ(f) = ½ fᵀ(A + R) f + fᵀ b, is minimized by damped Newton steps
(dense Cholesky of t(A + R) + ∇²φ, a step shortened to stay strictly feasible, Armijo
backtracking) for t = t0, 10 t0, 100 t0, … Each centered point is within θ/t of the optimum
(θ = 1 per log f_i, 2 per friction-loss pair and per cone), so the loop stops once θ/t is
below 10⁻³ · tolerance relative to |ℓ|. Equality rows are unconstrained. Slower than Newton on
the primal, but a fully independent route to the same solution; it ignores warm starts.
"""

import math

import numpy as np
from numba import njit

from jointspace._numba.dense import chol_factor, chol_solve
from jointspace.solver.cost import (
    dual_cost,
    dual_state,
    make_ar,
    save_stats,
)


@njit(cache=True)
def feasible(d, f, cdim, cfr):
    """True when f is strictly inside every constraint."""
    ne = d.ne[0]
    nf = d.nf[0]
    nefc = d.nefc[0]
    for i in range(ne, ne + nf):
        if not abs(f[i]) < d.efc_frictionloss[i]:
            return False
    i = ne + nf
    while i < nefc:
        dim = cdim[i]
        if dim == 0:
            if not f[i] > 0.0:
                return False
            i += 1
            continue
        s = f[i] * f[i]
        for j in range(1, dim):
            u = f[i + j] / cfr[i, j - 1]
            s -= u * u
        if not (f[i] > 0.0 and s > 0.0):
            return False
        i += dim
    return True


@njit(cache=True)
def log_barrier(d, f, cdim, cfr, g, H, want):
    """φ(f); with `want`, adds ∇φ to g and ∇²φ to H."""
    ne = d.ne[0]
    nf = d.nf[0]
    nefc = d.nefc[0]
    phi = 0.0
    for i in range(ne, ne + nf):
        eta = d.efc_frictionloss[i]
        a = eta - f[i]
        c = eta + f[i]
        phi -= math.log(a) + math.log(c)
        if want:
            g[i] += 1.0 / a - 1.0 / c
            H[i, i] += 1.0 / (a * a) + 1.0 / (c * c)
    i = ne + nf
    while i < nefc:
        dim = cdim[i]
        if dim == 0:
            phi -= math.log(f[i])
            if want:
                g[i] -= 1.0 / f[i]
                H[i, i] += 1.0 / (f[i] * f[i])
            i += 1
            continue
        # s = f0² − Σ c_j f_j², c_j = 1/μ_j²;  ∇(−log s) = −∇s/s,
        # ∇²(−log s) = ∇s ∇sᵀ/s² − ∇²s/s with ∇s = (2 f0, −2 c_j f_j), ∇²s = diag(2, −2 c_j)
        s = f[i] * f[i]
        for j in range(1, dim):
            c = 1.0 / (cfr[i, j - 1] * cfr[i, j - 1])
            s -= c * f[i + j] * f[i + j]
        phi -= math.log(s)
        if want:
            for j in range(dim):
                gj = 2.0 * f[i] if j == 0 else -2.0 / (cfr[i, j - 1] * cfr[i, j - 1]) * f[i + j]
                g[i + j] -= gj / s
                for k in range(dim):
                    gk = (2.0 * f[i] if k == 0
                          else -2.0 / (cfr[i, k - 1] * cfr[i, k - 1]) * f[i + k])
                    H[i + j, i + k] += gj * gk / (s * s)
                hjj = 2.0 if j == 0 else -2.0 / (cfr[i, j - 1] * cfr[i, j - 1])
                H[i + j, i + j] -= hjj / s
        i += dim
    return phi


@njit(cache=True)
def sol_ipm(m, d, maxiter, cdim, cmu, cfr):
    """Barrier iterations from a strictly feasible start; writes efc_force and efc_state."""
    ne = d.ne[0]
    nf = d.nf[0]
    nefc = d.nefc[0]
    tol = m.opt_tolerance[0]
    f = d.efc_force
    b = d.efc_b
    AR = np.empty((nefc, nefc))
    make_ar(m, d, AR)
    H = np.empty((nefc, nefc))
    g = np.empty(nefc)
    step = np.empty(nefc)
    trial = np.empty(nefc)
    # strictly feasible start at the natural force scale |b_i| / AR_ii
    bmax = 0.0
    for i in range(nefc):
        bmax = max(bmax, abs(b[i]))
    theta = 0.0
    for i in range(nefc):
        f[i] = 0.0
    i = ne + nf
    while i < nefc:
        dim = cdim[i]
        sig = (abs(b[i]) + 1e-6 * bmax + 1e-300) / AR[i, i]
        f[i] = sig
        theta += 1.0 if dim == 0 else 2.0
        i += dim if dim > 0 else 1
    theta += 2.0 * nf
    # t0 = θ / (cost scale): |ℓ| at the start, or, where that vanishes (only friction-loss
    # rows start at f = 0), the unconstrained optimum's scale ½ Σ b_i² / AR_ii
    scale = 0.0
    for i in range(nefc):
        scale += 0.5 * b[i] * b[i] / AR[i, i]
    ell = dual_cost(d, AR, f)
    t = theta / max(abs(ell), scale, 1e-300) if theta > 0.0 else 1.0
    it = 0
    while it < maxiter:
        # Newton step on t ℓ(f) + φ(f)
        for r in range(nefc):
            s = b[r]
            for k in range(nefc):
                s += AR[r, k] * f[k]
                H[r, k] = t * AR[r, k]
            g[r] = t * s
        phi = log_barrier(d, f, cdim, cfr, g, H, True)
        chol_factor(H, nefc, 1e-300)
        for r in range(nefc):
            step[r] = -g[r]
        chol_solve(H, nefc, step)
        dec = 0.0
        for r in range(nefc):
            dec -= g[r] * step[r]
        value = t * dual_cost(d, AR, f) + phi
        # largest feasible fraction of the step, then Armijo backtracking
        a = 1.0
        found = False
        for _ in range(60):
            for r in range(nefc):
                trial[r] = f[r] + a * step[r]
            if feasible(d, trial, cdim, cfr):
                vt = t * dual_cost(d, AR, trial) + log_barrier(d, trial, cdim, cfr, g, H, False)
                if vt <= value - 0.25 * a * dec:
                    found = True
                    break
            a *= 0.5
        if found:
            for r in range(nefc):
                f[r] += a * step[r]
        ell = dual_cost(d, AR, f)
        save_stats(d, it, 0.5 * dec / t, math.sqrt(max(dec, 0.0)) / t, a if found else 0.0,
                    ell, 0, 0, 0, 0)
        it += 1
        # centered when the Newton decrement (affine invariant) is negligible, or below the
        # round-off of t ℓ + φ (no step decreases it any more); the gap there is θ/t
        if 0.5 * dec < 1e-10 or dec <= 1e-13 * abs(value) or not found:
            if theta == 0.0 or theta / t < 1e-3 * tol * max(abs(ell), 1e-300):
                break
            t *= 10.0
    d.solver_niter[0] = it
    dual_state(d, f, cdim, cmu, cfr, d.efc_state)
