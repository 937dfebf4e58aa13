"""Projected Gauss–Seidel on the dual, with projection on elliptic cones (the paper's GPGS).

Minimizes ½ fᵀ AR f + fᵀ b over the constraint set of 004 eq. 9 (AR = J M⁻¹ Jᵀ + R
formed densely, b = efc_b) one block at a time (MuJoCo mj_solPGS), island by island
(solver.island), in an order reshuffled before each sweep, with Nesterov momentum between
sweeps (`sol_pgs`):
  scalar rows   f_i ← f_i − r_i / AR_ii with r = AR f + b, then clamped: friction loss to
                [−frictionloss, frictionloss], limits and contact rows to f_i ≥ 0
  elliptic      (1) normal or ray update: f_0 from its scalar update when f_0 ≈ 0, else
                f ← f + x f along the current ray (x minimizing the block cost, f_0 ≥ 0);
                (2) friction with f_0 fixed: a small QCQP, min ½ xᵀA_t x + b_tᵀx subject to
                Σ (x_j/μ_j)² ≤ f_0², solved by Newton on its Lagrange multiplier
A block update that would raise the cost is undone. An island's sweeps stop when its cost
improvement, scaled by 1 / its trace of M, falls below the tolerance. Then qacc =
qacc_smooth + M⁻¹ Jᵀ f.
"""

import math

import numpy as np
from numba import njit

from jointspace._numba.dense import chol_factor, chol_solve
from jointspace._numba.scratch import borrow, keep, shaped
from jointspace._numba.simd import dot_row
from jointspace.solver.cost import dual_cost, save_stats
from jointspace.types import (
    MINVAL,
    STATE_CONE,
    STATE_LINEARNEG,
    STATE_LINEARPOS,
    STATE_QUADRATIC,
    STATE_SATISFIED,
)


@njit(cache=True)
def _qcqp_n(A, b, mu, r, n, x):
    """`qcqp` for any n ≤ 5, by Cholesky factors of Â + λI."""
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
def _qcqp_small(A, b, mu, r, n, x):
    """`qcqp` for n = 2 or 3, by the explicit inverse (adjugate / determinant) of Â + λI.

    The same iteration as `_qcqp_n` in the arithmetic MuJoCo uses for these sizes
    (mju_QCQP2, mju_QCQP3), so that PGS and noslip agree with it to the last bits.
    """
    a11 = A[0, 0] * mu[0] * mu[0]
    a22 = A[1, 1] * mu[1] * mu[1]
    a12 = A[0, 1] * mu[0] * mu[1]
    b1 = b[0] * mu[0]
    b2 = b[1] * mu[1]
    if n == 3:
        a33 = A[2, 2] * mu[2] * mu[2]
        a13 = A[0, 2] * mu[0] * mu[2]
        a23 = A[1, 2] * mu[1] * mu[2]
        b3 = b[2] * mu[2]
    else:
        a33 = a13 = a23 = b3 = 0.0
    lam = 0.0
    v1 = v2 = v3 = 0.0
    for _ in range(20):
        if n == 2:
            det = (a11 + lam) * (a22 + lam) - a12 * a12
            if det < 1e-10:
                x[0] = 0.0
                x[1] = 0.0
                return False
            inv = 1.0 / det
            p11 = (a22 + lam) * inv
            p22 = (a11 + lam) * inv
            p12 = -a12 * inv
            v1 = -p11 * b1 - p12 * b2
            v2 = -p12 * b1 - p22 * b2
            val = v1 * v1 + v2 * v2 - r * r
            if val < 1e-10:
                break
            deriv = -2.0 * (p11 * v1 * v1 + 2.0 * p12 * v1 * v2 + p22 * v2 * v2)
        else:
            p11 = (a22 + lam) * (a33 + lam) - a23 * a23
            p22 = (a11 + lam) * (a33 + lam) - a13 * a13
            p33 = (a11 + lam) * (a22 + lam) - a12 * a12
            p12 = a13 * a23 - a12 * (a33 + lam)
            p13 = a12 * a23 - a13 * (a22 + lam)
            p23 = a12 * a13 - a23 * (a11 + lam)
            det = (a11 + lam) * p11 + a12 * p12 + a13 * p13
            if det < 1e-10:
                x[0] = 0.0
                x[1] = 0.0
                x[2] = 0.0
                return False
            inv = 1.0 / det
            p11 *= inv
            p22 *= inv
            p33 *= inv
            p12 *= inv
            p13 *= inv
            p23 *= inv
            v1 = -p11 * b1 - p12 * b2 - p13 * b3
            v2 = -p12 * b1 - p22 * b2 - p23 * b3
            v3 = -p13 * b1 - p23 * b2 - p33 * b3
            val = v1 * v1 + v2 * v2 + v3 * v3 - r * r
            if val < 1e-10:
                break
            deriv = (-2.0 * (p11 * v1 * v1 + p22 * v2 * v2 + p33 * v3 * v3)
                     - 4.0 * (p12 * v1 * v2 + p13 * v1 * v3 + p23 * v2 * v3))
        delta = -val / deriv
        if delta < 1e-10:
            break
        lam += delta
    x[0] = v1 * mu[0]
    x[1] = v2 * mu[1]
    if n == 3:
        x[2] = v3 * mu[2]
    return lam != 0.0


@njit(cache=True)
def qcqp(A, b, mu, r, n, x):
    """Solve for x minimizing ½ xᵀ A x + bᵀ x subject to Σ (x_j/μ_j)² ≤ r² (n ≤ 5); True if on it.

    With y_j = x_j / μ_j the constraint is |y| ≤ r; for λ ≥ 0, y(λ) = −(Â + λI)⁻¹ b̂ and
    Newton's method drives |y(λ)|² − r² to 0 (λ = 0 when the free minimum is inside).
    """
    if n <= 3:
        return _qcqp_small(A, b, mu, r, n, x)
    return _qcqp_n(A, b, mu, r, n, x)


@njit(cache=True)
def project_ellipsoid(x, r, mu, n):
    """Scale x (n tangential forces) onto the ellipsoid Σ (x_j/μ_j)² = r²."""
    s = 0.0
    for j in range(n):
        s += x[j] * x[j] / (mu[j] * mu[j])
    scl = math.sqrt(r * r / max(MINVAL, s))
    for j in range(n):
        x[j] *= scl


_PCG_MULT = np.uint64(6364136223846793005)
_U1 = np.uint64(1)
_U32 = np.uint64(0xFFFFFFFF)


@njit(cache=True, inline="always")
def _pcg32_out(old):
    """PCG32's 32-bit output for the state old (XSH RR), as a uint64 below 2³²."""
    x = (((old >> np.uint64(18)) ^ old) >> np.uint64(27)) & _U32
    rot = old >> np.uint64(59)
    return ((x >> rot) | (x << ((np.uint64(32) - rot) & np.uint64(31)))) & _U32


@njit(cache=True)
def _pcg32(rng):
    """The next 32-bit draw of a PCG32 generator (state rng[0], increment rng[1])."""
    old = rng[0]
    rng[0] = old * _PCG_MULT + (rng[1] | _U1)
    return _pcg32_out(old)


@njit(cache=True, inline="always")
def _below(x, m, inv_m):
    """x mod m for 0 ≤ x < 2³², from q = trunc(x / m) computed as x · (1 / m), one off at most."""
    j = x - np.int64(np.float64(x) * inv_m) * m
    if j < 0:
        j += m
    elif j >= m:
        j -= m
    return j


@njit(cache=True)
def _shuffle(a, n, rng, inv):
    """Fisher–Yates shuffle of a[:n] in place, drawing from rng; inv[i] = 1 / (i + 1).

    The draw x is reduced modulo i + 1 as MuJoCo's shuffle_int reduces it (32-bit
    unsigned remainder), computed without a division: q = trunc(x · inv[i]) is x // (i + 1)
    or one off (x < 2³², so the product's error is below 1e-6), and one correction of the
    remainder x − q (i + 1) makes it exact. The hardware division was an eighth of the
    sweep's time on gymnasium's humanoid. The generator's state s ← a s + c is a chain of
    dependent multiplies that bounds the loop's speed, so it runs as two interleaved
    chains, the even and the odd draws, each stepped twice at once (s ← a² s + (a + 1) c):
    the same sequence of draws at half the chain's latency. The state is stored once at
    the end.
    """
    inc = rng[1] | _U1
    mult2 = _PCG_MULT * _PCG_MULT
    inc2 = inc * _PCG_MULT + inc
    even = rng[0]
    odd = even * _PCG_MULT + inc
    i = n - 1
    while i >= 2:
        j0 = _below(np.int64(_pcg32_out(even)), i + 1, inv[i])
        j1 = _below(np.int64(_pcg32_out(odd)), i, inv[i - 1])
        even = even * mult2 + inc2
        odd = odd * mult2 + inc2
        t = a[i]
        a[i] = a[j0]
        a[j0] = t
        t = a[i - 1]
        a[i - 1] = a[j1]
        a[j1] = t
        i -= 2
    if i == 1:
        j0 = _below(np.int64(_pcg32_out(even)), 2, inv[1])
        t = a[1]
        a[1] = a[j0]
        a[j0] = t
        even = odd
    rng[0] = even


@njit(cache=True)
def dual_state_rows(d, f, cdim, cmu, cfr, rows, ne, nf):
    """MuJoCo's dualState on one island's rows; returns the number active.

    rows: the island's rows, its first ne equality and next nf friction-loss rows; writes
    d.efc_state there.
    """
    floss = d.efc_frictionloss
    state = d.efc_state
    n = rows.shape[0]
    nactive = ne + nf
    for c in range(ne):
        state[rows[c]] = STATE_QUADRATIC
    for c in range(ne, ne + nf):
        i = rows[c]
        if f[i] <= -floss[i]:
            state[i] = STATE_LINEARPOS
        elif f[i] >= floss[i]:
            state[i] = STATE_LINEARNEG
        else:
            state[i] = STATE_QUADRATIC
    c = ne + nf
    while c < n:
        i = rows[c]
        dim = cdim[i]
        if dim == 0:
            if f[i] <= 0.0:
                state[i] = STATE_SATISFIED
            else:
                state[i] = STATE_QUADRATIC
                nactive += 1
            c += 1
            continue
        T2 = 0.0
        for j in range(1, dim):
            u = f[i + j] / cfr[i, j - 1]
            T2 += u * u
        T = math.sqrt(T2)
        N = f[i]
        if N >= T:
            st = STATE_SATISFIED
        else:
            st = STATE_QUADRATIC if N / cmu[i] + cmu[i] * T <= 0.0 else STATE_CONE
            nactive += dim
        for j in range(dim):
            state[i + j] = st
        c += dim
    return nactive


@njit(cache=True, inline="always")
def row_dot(AR, i, f, rows, lo, contig):
    """AR[i, rows] · f[rows]; contiguous rows (one island, or islands off) as a plain run.

    The run is summed by `dot_row` (4-wide vector instructions in the order of MuJoCo's
    mju_dot). For the callers outside PGS's sweep (noslip, the final cost); the sweep calls
    `dot_row` and `_rows_dot` itself: this helper, inlined, copies its three arrays into
    variables that take and drop a reference at every call.
    """
    if contig:
        return dot_row(AR, i, f, lo, lo + rows.shape[0])
    return _rows_dot(AR, i, f, rows)


@njit(cache=True)
def _rows_dot(AR, i, f, rows):
    """AR[i, rows] · f[rows] for rows not in one run (islands interleaved)."""
    s = 0.0
    for r in rows:
        s += AR[i, r] * f[r]
    return s


@njit(cache=True)
def _rows_cost(d, AR, f, rows, lo, contig):
    """½ fᵀ AR f + fᵀ b over one island's rows."""
    s = 0.0
    for i in rows:
        s += f[i] * (0.5 * row_dot(AR, i, f, rows, lo, contig) + d.efc_b[i])
    return s


@njit(cache=True)
def _project_feasible(d, f, cdim, cfr, rows, ne, nf):
    """Put f back in the feasible set after a momentum extrapolation.

    Friction loss into its interval, scalar contact and limit rows to f ≥ 0, elliptic
    blocks into the cone (f_0 < 0 clears the block, tangential forces outside the
    ellipsoid are scaled in).
    """
    floss = d.efc_frictionloss
    for c in range(ne, ne + nf):
        i = rows[c]
        f[i] = min(max(f[i], -floss[i]), floss[i])
    n = rows.shape[0]
    c = ne + nf
    while c < n:
        i = rows[c]
        dim = cdim[i]
        if dim == 0:
            if f[i] < 0.0:
                f[i] = 0.0
            c += 1
            continue
        if f[i] < 0.0:
            for j in range(dim):
                f[i + j] = 0.0
        else:
            s = 0.0
            for j in range(dim - 1):
                s += f[i + 1 + j] * f[i + 1 + j] / (cfr[i, j] * cfr[i, j])
            if s > f[i] * f[i]:
                scl = math.sqrt(f[i] * f[i] / max(MINVAL, s))
                for j in range(dim - 1):
                    f[i + 1 + j] *= scl
        c += dim


@njit(cache=True)
def _pgs_island(m, d, maxiter, cdim, cmu, cfr, AR, rows, ne, nf, scale, stats):
    """PGS sweeps over one island's rows; returns the number of sweeps.

    With stats (island 0), each sweep's statistics are saved; the dual cost only after the
    last sweep (NaN before it). MuJoCo's PGS records no cost, and an O(n²) product per
    sweep doubled the sweep's work: gymnasium humanoid's 40 rows, RK4, 30-46 sweeps a solve.
    """
    n = rows.shape[0]
    tol = m.opt_tolerance[0]
    f = d.efc_force
    b = d.efc_b
    floss = d.efc_frictionloss
    state = d.efc_state
    # scratch in two blocks, used through borrowed views (`_numba.scratch`): the sweep's
    # calls then count no references on them
    f_own = np.empty(53 + 4 * n)
    i_own = np.empty(2 * n, dtype=np.int64)
    r_own = np.zeros(2, dtype=np.uint64)
    fb = borrow(f_own)
    ib = borrow(i_own)
    res = fb[0:6]
    old = fb[6:12]
    delta = fb[12:18]
    At = shaped(fb[18:43], (5, 5))
    bt = fb[43:48]
    x = fb[48:53]
    arinv = fb[53:53 + n]  # 1 / AR_ii, multiplied by as MuJoCo does (not divided)
    f_prev = fb[53 + n:53 + 2 * n]
    f_mom = fb[53 + 2 * n:53 + 3 * n]
    inv = fb[53 + 3 * n:53 + 4 * n]  # 1 / (k + 1), for the shuffle's remainders
    oldstate = ib[0:n]
    blocks = ib[n:2 * n]
    rng = borrow(r_own)
    for c in range(n):
        arinv[c] = 1.0 / AR[rows[c], rows[c]]
        f_prev[c] = f[rows[c]]
        inv[c] = 1.0 / (c + 1)
    nblocks = 0
    c = 0
    while c < n:
        blocks[nblocks] = c
        nblocks += 1
        c += max(cdim[rows[c]], 1)
    rng[1] = _U1
    _pcg32(rng)
    lo = rows[0]
    hi = lo + n
    contig = rows[n - 1] - lo == n - 1
    dual_state_rows(d, f, cdim, cmu, cfr, rows, ne, nf)
    it = 0
    k_nest = 0
    while it < maxiter:
        beta = (k_nest - 1) / (k_nest + 2) if it > 0 else 0.0
        if beta > 0.0:
            for c in range(n):
                i = rows[c]
                fs = f[i]
                f[i] += beta * (f[i] - f_prev[c])
                f_prev[c] = fs
            _project_feasible(d, f, cdim, cfr, rows, ne, nf)
        else:
            for c in range(n):
                f_prev[c] = f[rows[c]]
        for c in range(n):
            f_mom[c] = f[rows[c]]
        improvement = 0.0
        _shuffle(blocks, nblocks, rng, inv)
        for bi in range(nblocks):
            c = blocks[bi]
            i = rows[c]
            dim = cdim[i]
            if dim == 0:
                # a scalar row, in registers: residual r = AR_i f + b_i (AR is zero between
                # islands), the clamped minimum, and the cost change ½ δ² AR_ii + δ r
                r0 = b[i] + (dot_row(AR, i, f, lo, hi) if contig else
                             _rows_dot(AR, i, f, rows))
                f0 = f[i]
                fi = f0 - r0 * arinv[c]
                if c >= ne + nf:
                    if fi < 0.0:
                        fi = 0.0
                elif c >= ne:
                    if fi < -floss[i]:
                        fi = -floss[i]
                    elif fi > floss[i]:
                        fi = floss[i]
                d0 = fi - f0
                change = 0.5 * d0 * d0 * (1.0 / arinv[c]) + d0 * r0
                if change > 1e-10:
                    fi = f0
                    change = 0.0
                f[i] = fi
                improvement -= change
                continue
            # an elliptic contact: the residual over its dim rows
            nb = dim
            for j in range(nb):
                res[j] = b[i + j] + (dot_row(AR, i + j, f, lo, hi) if contig else
                                     _rows_dot(AR, i + j, f, rows))
                old[j] = f[i + j]
            # an elliptic block: (1) normal or ray update
            if f[i] < MINVAL:
                # normal update, friction cleared
                f[i] -= res[0] * arinv[c]
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
                s = 0.0
                for k in range(nt):
                    At[j, k] = AR[i + 1 + j, i + 1 + k]
                    s += At[j, k] * old[k + 1]
                bt[j] = res[j + 1] - s + AR[i + 1 + j, i] * (f[i] - old[0])
            if f[i] < MINVAL:
                for j in range(1, dim):
                    f[i + j] = 0.0
            else:
                if qcqp(At, bt, cfr[i], f[i], nt, x):
                    project_ellipsoid(x, f[i], cfr[i], nt)  # on it exactly
                for j in range(nt):
                    f[i + 1 + j] = x[j]
            # cost change ½ δᵀ A δ + δᵀ r; undo a block update that raised the cost
            for j in range(nb):
                delta[j] = f[i + j] - old[j]
            quad = 0.0
            lin = 0.0
            for j in range(nb):
                s = 0.0
                for k in range(nb):
                    s += AR[i + j, i + k] * delta[k]
                quad += delta[j] * s
                lin += delta[j] * res[j]
            change = 0.5 * quad + lin
            if change > 1e-10:
                for j in range(nb):
                    f[i + j] = old[j]
                change = 0.0
            improvement -= change
        for c in range(n):
            oldstate[c] = state[rows[c]]
        nactive = dual_state_rows(d, f, cdim, cmu, cfr, rows, ne, nf)
        nchange = 0
        for c in range(n):
            if state[rows[c]] != oldstate[c]:
                nchange += 1
        improvement *= scale
        if stats:
            save_stats(d, it, improvement, 0.0, 0.0, np.nan, nactive, nchange, np.int64(0),
                       np.int64(0))
        # adaptive restart: the sweep's correction against the extrapolation
        restart = False
        if it > 0:
            dot = 0.0
            for c in range(n):
                dot += (f[rows[c]] - f_mom[c]) * (f_mom[c] - f_prev[c])
            restart = dot < 0.0
        k_nest = 0 if restart else k_nest + 1
        it += 1
        if improvement < tol:
            break
    if stats and 0 < it <= d.solver_cost.shape[0]:
        d.solver_cost[it - 1] = _rows_cost(d, AR, f, rows, lo, contig)
    keep(f_own)
    keep(i_own)
    keep(r_own)
    return it


@njit(cache=True)
def sol_pgs(m, d, maxiter, cdim, cmu, cfr, AR, rows, adr, cnt, nei, nfi, iscale, nisland):
    """Gauss–Seidel sweeps from d.efc_force, island by island; writes efc_force, efc_state.

    MuJoCo 4's PGS: each sweep visits an island's blocks (a row, or an elliptic contact's
    rows) in an order reshuffled before every sweep by a PCG32 generator seeded alike for
    every island, and sweeps are extrapolated with Nesterov momentum, f ← f + β (f −
    f_prev), β = (k − 1) / (k + 2), projected back onto the constraint set; k restarts at
    0 when a sweep's correction points against the extrapolation (O'Donoghue & Candès's
    adaptive restart). Each island stops on its own test; d.solver_niter[0] and the
    statistics are island 0's (as MuJoCo's first island slot).
    """
    # warm start only if it beats f = 0
    if dual_cost(d, AR, d.efc_force) > 0.0:
        for i in range(d.nefc[0]):
            d.efc_force[i] = 0.0
    for k in range(nisland):
        it = _pgs_island(m, d, maxiter, cdim, cmu, cfr, AR, rows[adr[k]:adr[k] + cnt[k]],
                         nei[k], nfi[k], iscale[k], k == 0)
        if k == 0:
            d.solver_niter[0] = it
