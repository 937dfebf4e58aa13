"""Projected Gauss–Seidel on the dual, with projection on elliptic cones (the paper's GPGS).

Minimizes ½ fᵀ AR f + fᵀ b over the constraint set of 004 eq. 9 (AR = J M⁻¹ Jᵀ + R
formed densely, b = efc_b) one block at a time, in row order (MuJoCo mj_solPGS):
  scalar rows   f_i ← f_i − r_i / AR_ii with r = AR f + b, then clamped: friction loss to
                [−frictionloss, frictionloss], limits and contact rows to f_i ≥ 0
  elliptic      (1) normal or ray update: f_0 from its scalar update when f_0 ≈ 0, else
                f ← f + x f along the current ray (x minimizing the block cost, f_0 ≥ 0);
                (2) friction with f_0 fixed: a small QCQP, min ½ xᵀA_t x + b_tᵀx subject to
                Σ (x_j/μ_j)² ≤ f_0², solved by Newton on its Lagrange multiplier
A block update that would raise the cost is undone. Sweeps stop when the scaled cost
improvement falls below the tolerance. Then qacc = qacc_smooth + M⁻¹ Jᵀ f.
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
from jointspace.types import MINVAL


@njit(cache=True)
def _qcqp(A, b, mu, r, n, x):
    """Solve for x minimizing ½ xᵀ A x + bᵀ x subject to Σ (x_j/μ_j)² ≤ r² (n ≤ 5); True if on it.

    With y_j = x_j / μ_j the constraint is |y| ≤ r; for λ ≥ 0, y(λ) = −(Â + λI)⁻¹ b̂ and
    Newton's method drives |y(λ)|² − r² to 0 (λ = 0 when the free minimum is inside).
    """
    As = np.empty((5, 5))
    L = np.empty((5, 5))
    bs = np.empty(5)
    y = np.empty(5)
    z = np.empty(5)
    for j in range(n):
        bs[j] = b[j] * mu[j]
        for k in range(n):
            As[j, k] = A[j, k] * mu[j] * mu[k]
    lam = 0.0
    for _ in range(20):
        # L Lᵀ = Â + λ I
        for j in range(n):
            for k in range(j + 1):
                L[j, k] = As[j, k]
            L[j, j] += lam
        if chol_factor(L, n, 1e-10) < n:
            for j in range(n):
                x[j] = 0.0
            return False
        # y = −(Â + λI)⁻¹ b̂
        for j in range(n):
            y[j] = -bs[j]
        chol_solve(L, n, y)
        val = -r * r
        for j in range(n):
            val += y[j] * y[j]
        if val < 1e-10:
            break
        # d|y|²/dλ = −2 yᵀ (Â + λI)⁻¹ y
        for j in range(n):
            z[j] = y[j]
        chol_solve(L, n, z)
        deriv = 0.0
        for j in range(n):
            deriv -= 2.0 * y[j] * z[j]
        delta = -val / deriv
        if delta < 1e-10:
            break
        lam += delta
    for j in range(n):
        x[j] = y[j] * mu[j]
    return lam != 0.0


@njit(cache=True)
def sol_pgs(m, d, maxiter, cdim, cmu, cfr):
    """Gauss–Seidel sweeps from d.efc_force; writes efc_force and efc_state."""
    nv = m.nv
    ne = d.ne[0]
    nf = d.nf[0]
    nefc = d.nefc[0]
    tol = m.opt_tolerance[0]
    f = d.efc_force
    b = d.efc_b
    floss = d.efc_frictionloss
    AR = np.empty((nefc, nefc))
    make_ar(m, d, AR)
    # warm start only if it beats f = 0
    if dual_cost(d, AR, f) > 0.0:
        for i in range(nefc):
            f[i] = 0.0
    scale = 1.0 / max(MINVAL, m.stat_meaninertia[0] * max(1, nv))  # 0 for a massless model
    res = np.empty(6)
    old = np.empty(6)
    delta = np.empty(6)
    At = np.empty((5, 5))
    bt = np.empty(5)
    x = np.empty(5)
    oldstate = np.empty(nefc, dtype=np.int32)
    dual_state(d, f, cdim, cmu, cfr, d.efc_state)
    it = 0
    while it < maxiter:
        improvement = 0.0
        i = 0
        while i < nefc:
            dim = cdim[i]
            n = dim if dim > 0 else 1
            # residual r = AR f + b over the block
            for j in range(n):
                row = AR[i + j]
                s = b[i + j]
                for k in range(nefc):
                    s += row[k] * f[k]
                res[j] = s
                old[j] = f[i + j]
            if dim == 0:
                f[i] -= res[0] / AR[i, i]
                if i >= ne + nf:
                    if f[i] < 0.0:
                        f[i] = 0.0
                elif i >= ne:
                    if f[i] < -floss[i]:
                        f[i] = -floss[i]
                    elif f[i] > floss[i]:
                        f[i] = floss[i]
            else:
                if f[i] < MINVAL:
                    # normal update, friction cleared
                    f[i] -= res[0] / AR[i, i]
                    if f[i] < 0.0:
                        f[i] = 0.0
                    for j in range(1, dim):
                        f[i + j] = 0.0
                else:
                    # ray update: f ← f + x f, x = −fᵀr / (fᵀ A f), keeping f_0 ≥ 0
                    num = 0.0
                    den = 0.0
                    for j in range(dim):
                        s = 0.0
                        for k in range(dim):
                            s += AR[i + j, i + k] * old[k]
                        den += old[j] * s
                        num += old[j] * res[j]
                    if den >= MINVAL:
                        t = -num / den
                        if f[i] + t * old[0] < 0.0:
                            t = -old[0] / f[i]
                        for j in range(dim):
                            f[i + j] += t * old[j]
                # friction with the normal fixed: A_t = AR[fric, fric],
                # b_t = r_fric − A_t f_old,fric + AR[fric, normal] (f_0 − f_0,old)
                nt = dim - 1
                for j in range(nt):
                    s = res[j + 1] + AR[i + 1 + j, i] * (f[i] - old[0])
                    for k in range(nt):
                        At[j, k] = AR[i + 1 + j, i + 1 + k]
                        s -= At[j, k] * old[k + 1]
                    bt[j] = s
                if f[i] < MINVAL:
                    for j in range(1, dim):
                        f[i + j] = 0.0
                else:
                    on = _qcqp(At, bt, cfr[i], f[i], nt, x)
                    if on:
                        # put x on the ellipsoid exactly
                        s = 0.0
                        for j in range(nt):
                            s += x[j] * x[j] / (cfr[i, j] * cfr[i, j])
                        scl = math.sqrt(f[i] * f[i] / max(MINVAL, s))
                        for j in range(nt):
                            x[j] *= scl
                    for j in range(nt):
                        f[i + 1 + j] = x[j]
            # cost change ½ δᵀ A δ + δᵀ r; undo a block update that raised the cost
            change = 0.0
            for j in range(n):
                delta[j] = f[i + j] - old[j]
            for j in range(n):
                s = 0.0
                for k in range(n):
                    s += AR[i + j, i + k] * delta[k]
                change += delta[j] * (0.5 * s + res[j])
            if change > 1e-10:
                for j in range(n):
                    f[i + j] = old[j]
                change = 0.0
            improvement -= change
            i += n
        for k in range(nefc):
            oldstate[k] = d.efc_state[k]
        nactive = dual_state(d, f, cdim, cmu, cfr, d.efc_state)
        nchange = 0
        for k in range(nefc):
            if d.efc_state[k] != oldstate[k]:
                nchange += 1
        improvement *= scale
        save_stats(d, it, improvement, 0.0, 0.0, dual_cost(d, AR, f), nactive, nchange, 0, 0)
        it += 1
        if improvement < tol:
            break
    d.solver_niter[0] = it
