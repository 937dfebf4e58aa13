"""The noslip post-solver (MuJoCo's `noslip_iterations` > 0): remove the soft model's slip.

After the main solver, Gauss–Seidel sweeps re-solve the frictional forces alone with the
normal and limit forces fixed, on the dual problem without the regularizer on those rows:
minimize ½ fᵀ A f + fᵀ b with A = J M⁻¹ Jᵀ (AR less diag(R)), b = efc_b. One sweep visits

    friction-loss rows   f_i ← f_i − r_i / A_ii, clamped to [−frictionloss, frictionloss]
    pyramidal contacts   each pair of opposing edges (f_a, f_b): their sum 2m is kept and
                         f_a = m + y, f_b = m − y with y minimizing the pair's cost on
                         [−m, m]
    elliptic contacts    the tangential block with the normal fixed: the QCQP of the main
                         PGS, min ½ xᵀ A_t x + b_tᵀ x subject to Σ (x_j/μ_j)² ≤ f_0²

where r = A f + b over the current forces. A pyramidal or elliptic block update that would
raise the cost is undone. Sweeps stop after `m.opt_noslip_iterations`, or once the scaled
cost improvement falls below `m.opt_noslip_tolerance` (the first sweep also counts the
regularizer's cost ½ Σ R_i f_i² that the problem drops). Then qacc = qacc_smooth +
M⁻¹ Jᵀ f; the statistics continue after the main solver's.

Every solver's answer goes through it when noslip is on (MuJoCo mj_fwdConstraint), island
by island (jointspace.solver.island) unless the "island" flag is disabled.
"""

import numpy as np
from numba import njit

from jointspace._numba.scratch import borrow, keep, shaped
from jointspace.solver.cost import save_stats
from jointspace.solver.pgs import dual_state_rows, project_ellipsoid, qcqp, row_dot
from jointspace.types import CNSTR_CONTACT_ELLIPTIC, CNSTR_CONTACT_PYRAMIDAL, MINVAL

DIAG_FLOOR = 1e-10  # MuJoCo's lower bound on a block's diagonal once R is removed


@njit(cache=True)
def _residual(AR, R, b, f, rows, lo, contig, i, n, res):
    """res[:n] = (A f + b)[i:i+n] with A = AR − diag(R), over one island's rows."""
    for j in range(n):
        res[j] = b[i + j] + row_dot(AR, i + j, f, rows, lo, contig) - R[i + j] * f[i + j]


@njit(cache=True)
def _block(AR, R, i, n, Ac):
    """Ac = A[i:i+n, i:i+n] (A = AR − diag(R)) with its diagonal floored at DIAG_FLOOR."""
    for j in range(n):
        for k in range(n):
            Ac[j, k] = AR[i + j, i + k]
        Ac[j, j] = max(DIAG_FLOOR, Ac[j, j] - R[i + j])


@njit(cache=True)
def _cost_change(Ac, f, i, old, res, n):
    """½ δᵀ Ac δ + δᵀ r of the block update δ = f[i:i+n] − old; undone when it is a rise."""
    quad = 0.0
    lin = 0.0
    for j in range(n):
        s = 0.0
        for k in range(n):
            s += Ac[j, k] * (f[i + k] - old[k])
        quad += (f[i + j] - old[j]) * s
        lin += (f[i + j] - old[j]) * res[j]
    change = 0.5 * quad + lin
    if change > 1e-10:
        for j in range(n):
            f[i + j] = old[j]
        change = 0.0
    return change


@njit(cache=True)
def _noslip_island(m, d, maxiter, cdim, cmu, cfr, AR, rows, ne, nf, scale, stats):
    """Noslip sweeps over one island's rows; returns the number of sweeps."""
    n = rows.shape[0]
    tol = m.opt_noslip_tolerance[0]
    f = d.efc_force
    b = d.efc_b
    R = d.efc_R
    floss = d.efc_frictionloss
    # scratch through borrowed views (`_numba.scratch`)
    f_own = np.empty(47)
    i_own = np.empty(n, dtype=np.int32)
    fb = borrow(f_own)
    res = fb[0:6]
    old = fb[6:12]
    Ac = shaped(fb[12:37], (5, 5))
    bc = fb[37:42]
    x = fb[42:47]
    oldstate = borrow(i_own)
    niter0 = d.solver_niter[0]
    lo = rows[0]
    contig = rows[n - 1] - lo == n - 1
    dual_state_rows(d, f, cdim, cmu, cfr, rows, ne, nf)
    it = 0
    while it < maxiter:
        improvement = 0.0
        if it == 0:
            for i in rows:
                improvement += 0.5 * f[i] * f[i] * R[i]
        # dry friction
        for c in range(ne, ne + nf):
            i = rows[c]
            _residual(AR, R, b, f, rows, lo, contig, i, np.int64(1), res)
            f0 = f[i]
            ainv = 1.0 / max(MINVAL, AR[i, i] - R[i])
            f[i] -= res[0] * ainv
            if f[i] < -floss[i]:
                f[i] = -floss[i]
            elif f[i] > floss[i]:
                f[i] = floss[i]
            delta = f[i] - f0
            improvement -= 0.5 * delta * delta / ainv + delta * res[0]
        # contact friction
        c = ne + nf
        while c < n:
            i = rows[c]
            typ = d.efc_type[i]
            if typ == CNSTR_CONTACT_PYRAMIDAL:
                dim = d.contact_dim[d.efc_id[i]]
                for j in range(i, i + 2 * (dim - 1), 2):
                    _residual(AR, R, b, f, rows, lo, contig, j, np.int64(2), res)
                    old[0] = f[j]
                    old[1] = f[j + 1]
                    _block(AR, R, j, np.int64(2), Ac)
                    for k in range(2):
                        bc[k] = res[k] - (Ac[k, 0] * old[0] + Ac[k, 1] * old[1])
                    # f_j = mid + y, f_j+1 = mid − y, y ∈ [−mid, mid]
                    mid = 0.5 * (f[j] + f[j + 1])
                    K1 = Ac[0, 0] + Ac[1, 1] - Ac[0, 1] - Ac[1, 0]
                    K0 = mid * (Ac[0, 0] - Ac[1, 1]) + bc[0] - bc[1]
                    if K1 < MINVAL:
                        f[j] = mid
                        f[j + 1] = mid
                    else:
                        y = -K0 / K1
                        if y < -mid:
                            f[j] = 0.0
                            f[j + 1] = 2.0 * mid
                        elif y > mid:
                            f[j] = 2.0 * mid
                            f[j + 1] = 0.0
                        else:
                            f[j] = mid + y
                            f[j + 1] = mid - y
                    improvement -= _cost_change(Ac, f, j, old, res, np.int64(2))
                c += 2 * (dim - 1)
            elif typ == CNSTR_CONTACT_ELLIPTIC:
                dim = d.contact_dim[d.efc_id[i]]
                nt = dim - 1
                _residual(AR, R, b, f, rows, lo, contig, i + 1, nt, res)
                for j in range(nt):
                    old[j] = f[i + 1 + j]
                _block(AR, R, i + 1, nt, Ac)
                for j in range(nt):
                    s = 0.0
                    for k in range(nt):
                        s += Ac[j, k] * old[k]
                    bc[j] = res[j] - s
                if f[i] < MINVAL:
                    for j in range(nt):
                        f[i + 1 + j] = 0.0
                else:
                    if qcqp(Ac, bc, cfr[i], f[i], nt, x):
                        project_ellipsoid(x, f[i], cfr[i], nt)
                    for j in range(nt):
                        f[i + 1 + j] = x[j]
                improvement -= _cost_change(Ac, f, i + 1, old, res, nt)
                c += dim
            else:
                c += 1
        for c in range(n):
            oldstate[c] = d.efc_state[rows[c]]
        nactive = dual_state_rows(d, f, cdim, cmu, cfr, rows, ne, nf)
        nchange = 0
        for c in range(n):
            if d.efc_state[rows[c]] != oldstate[c]:
                nchange += 1
        improvement *= scale
        if stats:
            save_stats(d, niter0 + it, improvement, 0.0, 0.0, 0.0, nactive, nchange, np.int64(0),
                       np.int64(0))
        it += 1
        if improvement < tol:
            break
    keep(f_own)
    keep(i_own)
    return it


@njit(cache=True)
def sol_noslip(m, d, maxiter, cdim, cmu, cfr, AR, rows, adr, cnt, nei, nfi, iscale, nisland):
    """Noslip sweeps on d.efc_force after the main solver, island by island.

    AR = J M⁻¹ Jᵀ + diag(R) of the rows. Writes efc_force and efc_state and adds island 0's
    sweeps to d.solver_niter[0].
    """
    for k in range(nisland):
        it = _noslip_island(m, d, maxiter, cdim, cmu, cfr, AR, rows[adr[k]:adr[k] + cnt[k]],
                            nei[k], nfi[k], iscale[k], k == 0)
        if k == 0:
            d.solver_niter[0] += it
