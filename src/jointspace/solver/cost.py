"""The convex constraint problem shared by every solver: its cost, forces and line search.

Primal form (MuJoCo's, engine_solver.c; the dual of 004 eq. 10–11): find the acceleration a
minimizing
    c(a) = ½ (a − a0)ᵀ M (a − a0) + s(J a − aref),       a0 = qacc_smooth,
where s sums one term per constraint of jar = J a − aref (D = 1/R):
  equality          ½ D x²
  friction loss     Huber: ½ D x² for |x| < R f, else f |x| − ½ R f²  (force clamped to ±f)
  limit, contact    ½ D x² for x < 0, else 0 (frictionless and pyramidal rows)
  elliptic contact  in U = (μ x0, μ_1 x1, …) with N = U0, T = |U_1:|:
                    0 if N ≥ μ T (top: inside the dual cone), ½ Σ D_j x_j² if μ N + T ≤ 0
                    (bottom), else ½ Dm (N − μ T)², Dm = D0 / (μ² (1 + μ²))  (middle: cone)
The constraint force is f = −∂s/∂jar and qfrc_constraint = Jᵀ f; at the minimum
M a = qfrc_smooth + Jᵀ f. Dual form: f minimizes ½ fᵀ(A + R)f + fᵀ b over the cones
(b = J a0 − aref, A = J M⁻¹ Jᵀ), and a = a0 + M⁻¹ Jᵀ f.

Cone data per row (from `jointspace.constraint.cone_info`): cdim[i] = condim at the first
row of an elliptic contact (0 elsewhere), cmu[i] its regularized μ, cfr[i, :] its friction.
"""

import math

import numpy as np
from numba import njit, uint64

from jointspace._numba.scratch import borrow, keep, shaped
from jointspace.constraint import (
    STATE_CONE,
    STATE_LINEARNEG,
    STATE_LINEARPOS,
    STATE_QUADRATIC,
    STATE_SATISFIED,
)
from jointspace.dynamics.factor import solve_ld, solve_lt
from jointspace.types import MINVAL

# ---------------------------------------------------------------------------------------------
# linear algebra on Model/Data layouts


@njit(cache=True)
def mul_m(m, qM, x, out):
    """Product out = M x with M in qM's sparse layout.

    Each row's off-diagonal columns come from M_col rather than a walk of dof_parentid (whose
    loads wait on one another), and the row's own sum is kept in a register.
    """
    nv = m.nv
    madr = m.dof_Madr
    col = m.M_col
    nM = uint64(qM.shape[0])
    for i in range(nv):
        out[i] = qM[madr[i]] * x[i]
    for i in range(nv):
        end = uint64(madr[i + 1]) if i + 1 < nv else nM
        xi = x[i]
        s = 0.0
        for adr in range(uint64(madr[i]) + uint64(1), end):
            j = uint64(col[adr])
            s += qM[adr] * x[j]
            out[j] += qM[adr] * xi
        out[i] += s


@njit(cache=True)
def mul_j(d, x, out):
    """Product out[:nefc] = efc_J x over each row's index efc_J_colind."""
    nefc = d.nefc[0]
    J = d.efc_J
    nnz = d.efc_J_rownnz
    ind = d.efc_J_colind
    for i in range(nefc):
        s = 0.0
        for j in range(nnz[i]):
            k = np.uint32(ind[i, j])  # unsigned: no negative-index wraparound
            s += J[i, k] * x[k]
        out[i] = s


@njit(cache=True)
def mul_m_on(m, qM, x, out, dofs, lo, n):
    """out = M x on one island's dofs dofs[lo:lo + n] (increasing); out elsewhere untouched.

    M is block-diagonal over trees and an island is a union of trees, so these rows of M x
    read x on the island only; each entry sums its terms in mul_m's order (the same
    numbers as mul_m of x zeroed outside the island).
    """
    madr = m.dof_Madr
    col = m.M_col
    nv = m.nv
    nM = uint64(qM.shape[0])
    for t in range(uint64(lo), uint64(lo + n)):
        i = uint64(dofs[t])
        out[i] = qM[madr[i]] * x[i]
    for t in range(uint64(lo), uint64(lo + n)):
        i = uint64(dofs[t])
        end = uint64(madr[i + 1]) if i + 1 < nv else nM
        xi = x[i]
        s = 0.0
        for adr in range(uint64(madr[i]) + uint64(1), end):
            j = uint64(col[adr])
            s += qM[adr] * x[j]
            out[j] += qM[adr] * xi
        out[i] += s


@njit(cache=True)
def mul_j_on(d, x, out, rows, lo, n):
    """out[i] = (efc_J x)[i] for one island's rows i in rows[lo:lo + n]; out elsewhere untouched."""
    J = d.efc_J
    nnz = d.efc_J_rownnz
    ind = d.efc_J_colind
    for t in range(uint64(lo), uint64(lo + n)):
        i = uint64(rows[t])
        s = 0.0
        for j in range(nnz[i]):
            k = np.uint32(ind[i, j])  # unsigned: no negative-index wraparound
            s += J[i, k] * x[k]
        out[i] = s


@njit(cache=True)
def mul_jt(d, f, out):
    """Product out = efc_Jᵀ f[:nefc] over each row's index efc_J_colind."""
    nefc = d.nefc[0]
    J = d.efc_J
    nnz = d.efc_J_rownnz
    ind = d.efc_J_colind
    for k in range(J.shape[1]):
        out[k] = 0.0
    for i in range(nefc):
        fi = f[i]
        if fi != 0.0:
            for j in range(nnz[i]):
                k = np.uint32(ind[i, j])  # unsigned: no negative-index wraparound
                out[k] += J[i, k] * fi


@njit(cache=True)
def solve_m(m, d, x):
    """Solve in place x ← M⁻¹ x with the factor in d.qLD, d.qLDiagInv (one vector)."""
    solve_ld(m, d.qLD, d.qLDiagInv, shaped(x, (1, x.shape[0])))


@njit(cache=True)
def dot(a, b, n):
    """a[:n] · b[:n]."""
    s = 0.0
    for k in range(n):
        s += a[k] * b[k]
    return s


@njit(cache=True)
def dot_on(a, b, idx, lo, n):
    """Σ a[k] b[k] over k in idx[lo:lo + n] (one island's dofs), in that order."""
    s = 0.0
    for t in range(uint64(lo), uint64(lo + n)):
        k = uint64(idx[t])  # unsigned: no negative-index wraparound in the loop
        s += a[k] * b[k]
    return s


# ---------------------------------------------------------------------------------------------
# cost and forces


@njit(cache=True)
def constraint_update(d, jar, cdim, cmu, cfr, force, state, hcone, want_hess):
    """Forces f = −∂s/∂jar and states at jar; returns s(jar) (MuJoCo mj_constraintUpdate).

    With want_hess, the local Hessian ∂²s/∂jar² of each elliptic contact in the middle zone
    is written to hcone[i, :dim²] at its first row i.
    """
    ne = d.ne[0]
    nf = d.nf[0]
    nefc = d.nefc[0]
    D = d.efc_D
    R = d.efc_R
    floss = d.efc_frictionloss
    s = 0.0
    i = 0
    while i < nefc:
        x = jar[i]
        if i < ne:
            force[i] = -D[i] * x
            s += 0.5 * D[i] * x * x
            state[i] = STATE_QUADRATIC
            i += 1
            continue
        if i < ne + nf:
            f = floss[i]
            rf = R[i] * f
            if x <= -rf:
                s += -0.5 * rf * f - f * x
                force[i] = f
                state[i] = STATE_LINEARNEG
            elif x >= rf:
                s += -0.5 * rf * f + f * x
                force[i] = -f
                state[i] = STATE_LINEARPOS
            else:
                s += 0.5 * D[i] * x * x
                force[i] = -D[i] * x
                state[i] = STATE_QUADRATIC
            i += 1
            continue
        dim = cdim[i]
        if dim == 0:
            if x >= 0.0:
                force[i] = 0.0
                state[i] = STATE_SATISFIED
            else:
                s += 0.5 * D[i] * x * x
                force[i] = -D[i] * x
                state[i] = STATE_QUADRATIC
            i += 1
            continue
        # elliptic cone in the scaled space U = (μ x0, μ_j x_j)
        mu = cmu[i]
        N = x * mu
        T2 = 0.0
        for j in range(1, dim):
            u = jar[i + j] * cfr[i, j - 1]
            T2 += u * u
        T = math.sqrt(T2)
        if N >= mu * T or (T <= 0.0 and N >= 0.0):
            for j in range(dim):
                force[i + j] = 0.0
            st = STATE_SATISFIED
        elif mu * N + T <= 0.0 or (T <= 0.0 and N < 0.0):
            for j in range(dim):
                xj = jar[i + j]
                s += 0.5 * D[i + j] * xj * xj
                force[i + j] = -D[i + j] * xj
            st = STATE_QUADRATIC
        else:
            Dm = D[i] / (mu * mu * (1.0 + mu * mu))
            NmT = N - mu * T
            s += 0.5 * Dm * NmT * NmT
            f0 = -Dm * NmT * mu
            force[i] = f0
            for j in range(1, dim):
                fr = cfr[i, j - 1]
                force[i + j] = -f0 / T * jar[i + j] * fr * fr
            st = STATE_CONE
            if want_hess:
                # in U: [[1, −μ Uᵀ/T], [−μ U/T, (μ² − μ N/T) I + μ N U Uᵀ/T³]] Dm,
                # mapped back by diag(μ, μ_1, …) on both sides
                hcone[i, 0] = 1.0
                for j in range(1, dim):
                    uj = jar[i + j] * cfr[i, j - 1]
                    hcone[i, j] = -mu / T * uj
                    for k in range(j, dim):
                        uk = jar[i + k] * cfr[i, k - 1]
                        hcone[i, j * dim + k] = mu * N / (T * T * T) * uj * uk
                    hcone[i, j * dim + j] += mu * mu - mu * N / T
                for j in range(dim):
                    sj = mu if j == 0 else cfr[i, j - 1]
                    for k in range(j, dim):
                        sk = mu if k == 0 else cfr[i, k - 1]
                        hcone[i, j * dim + k] *= Dm * sj * sk
                for j in range(dim):
                    for k in range(j + 1, dim):
                        hcone[i, k * dim + j] = hcone[i, j * dim + k]
        for j in range(dim):
            state[i + j] = st
        i += dim
    return s


@njit(cache=True)
def gauss(m, d, qacc, Ma):
    """½ (a − a0)ᵀ (M a − qfrc_smooth), with Ma = M a (the Gauss term of the cost)."""
    s = 0.0
    for k in range(m.nv):
        s += 0.5 * (Ma[k] - d.qfrc_smooth[k]) * (qacc[k] - d.qacc_smooth[k])
    return s


# ---------------------------------------------------------------------------------------------
# exact line search along a direction v: cost(a + α v) is convex and piecewise smooth in α


@njit(cache=True)
def _ls_prepare(d, jar, Jv, cdim, cmu, cfr, quad, rows, lo, n):
    """Per-row polynomials of the line search.

    quad[i, 0:3] = (½ D x², D x Jv, ½ D Jv²) of row i (summed over an elliptic contact's
    rows at its first row); elliptic contacts also store (U0, V0, UU, UV, VV, Dm) in
    quad[i, 3:9] with U = scaled jar, V = scaled Jv. Only the rows in rows[lo:lo + n] (one
    island's, increasing: an elliptic contact's rows side by side).
    """
    D = d.efc_D
    t = lo
    end = lo + n
    while t < end:
        i = rows[t]
        dim = cdim[i]
        if dim == 0:
            x = jar[i]
            v = Jv[i]
            quad[i, 0] = 0.5 * D[i] * x * x
            quad[i, 1] = D[i] * x * v
            quad[i, 2] = 0.5 * D[i] * v * v
            t += 1
            continue
        mu = cmu[i]
        q0 = 0.0
        q1 = 0.0
        q2 = 0.0
        UU = 0.0
        UV = 0.0
        VV = 0.0
        for j in range(dim):
            x = jar[i + j]
            v = Jv[i + j]
            q0 += 0.5 * D[i + j] * x * x
            q1 += D[i + j] * x * v
            q2 += 0.5 * D[i + j] * v * v
            if j > 0:
                fr = cfr[i, j - 1]
                UU += x * fr * x * fr
                UV += x * fr * v * fr
                VV += v * fr * v * fr
        quad[i, 0] = q0
        quad[i, 1] = q1
        quad[i, 2] = q2
        quad[i, 3] = jar[i] * mu
        quad[i, 4] = Jv[i] * mu
        quad[i, 5] = UU
        quad[i, 6] = UV
        quad[i, 7] = VV
        quad[i, 8] = D[i] / (mu * mu * (1.0 + mu * mu))
        t += dim


@njit(cache=True)
def _huber(x, f, rf, D):
    if -rf < x < rf:
        return 0.5 * D * x * x
    if x <= -rf:
        return f * (-0.5 * rf - x)
    return f * (-0.5 * rf + x)


@njit(cache=True)
def _zone(N, T2, mu):
    """Zone of an elliptic contact: 1 top (no force), 2 bottom (quadratic), 3 middle (cone)."""
    if T2 <= 0.0:
        return 2 if N < 0.0 else 1
    T = math.sqrt(T2)
    if N >= mu * T:
        return 1
    if mu * N + T <= 0.0:
        return 2
    return 3


@njit(cache=True)
def _ls_eval(d, alpha, jar, Jv, cdim, cmu, quad, g1, g2, rows, lo, n, out):
    """Evaluate out = (cost(α) − cost(0), ∂cost/∂α, ∂²cost/∂α²) along the prepared direction.

    g1, g2: the Gauss polynomial's α and α² coefficients. Differences are formed per piece
    so that tiny steps keep their accuracy. Only the rows in rows[lo:lo + n], as
    _ls_prepare's.
    """
    ne = d.ne[0]
    nf = d.nf[0]
    D = d.efc_D
    R = d.efc_R
    floss = d.efc_frictionloss
    c0 = 0.0
    c1 = g1
    c2 = g2
    cost = 0.0
    d1 = 0.0
    d2 = 0.0
    t = lo
    end = lo + n
    while t < end:
        i = rows[t]
        if i < ne:
            c1 += quad[i, 1]
            c2 += quad[i, 2]
            t += 1
            continue
        if i < ne + nf:
            start = jar[i]
            v = Jv[i]
            x = start + alpha * v
            f = floss[i]
            rf = R[i] * f
            zs = 0 if -rf < start < rf else (-1 if start <= -rf else 1)
            zx = 0 if -rf < x < rf else (-1 if x <= -rf else 1)
            if zs == 0 and zx == 0:
                cost += 0.5 * D[i] * (x - start) * (x + start)
            elif zs == zx:
                cost += zs * f * (x - start)
            else:
                cost += _huber(x, f, rf, D[i]) - _huber(start, f, rf, D[i])
            if zx == 0:
                d1 += D[i] * x * v
                d2 += D[i] * v * v
            else:
                d1 += zx * f * v
            t += 1
            continue
        dim = cdim[i]
        if dim == 0:
            x = jar[i] + alpha * Jv[i]
            base = quad[i, 0] if jar[i] < 0.0 else 0.0
            if x < 0.0:
                c0 += quad[i, 0] - base
                c1 += quad[i, 1]
                c2 += quad[i, 2]
            else:
                cost -= base
            t += 1
            continue
        mu = cmu[i]
        U0 = quad[i, 3]
        V0 = quad[i, 4]
        UU = quad[i, 5]
        UV = quad[i, 6]
        VV = quad[i, 7]
        Dm = quad[i, 8]
        N = U0 + alpha * V0
        T2 = UU + alpha * (2.0 * UV + alpha * VV)
        z0 = _zone(U0, UU, mu)
        za = _zone(N, T2, mu)
        T0 = math.sqrt(UU) if UU > 0.0 else 0.0
        T = math.sqrt(T2) if T2 > 0.0 else 0.0
        r0 = U0 - mu * T0
        # cost difference by zones (1 top, 2 bottom, 3 middle)
        # bottom and middle costs meet on μN + T = 0, where (R_j μ_j² = R_1 μ_1²)
        # ½ Σ D_j x_j² − ½ Dm (N − μT)² = ½ Dm (μN + T)²; that form avoids cancellation
        if za == 2:
            cost += alpha * (quad[i, 1] + alpha * quad[i, 2])
            if z0 == 1:
                cost += quad[i, 0]
            elif z0 == 3:
                cost += 0.5 * Dm * (mu * U0 + T0) * (mu * U0 + T0)
        elif za == 3:
            if z0 == 3:
                # r(α) − r(0) without cancellation: T − T0 = (T² − T0²) / (T + T0)
                rd = alpha * V0 - mu * (alpha * (2.0 * UV + alpha * VV)) / (T + T0)
                cost += 0.5 * Dm * rd * (2.0 * r0 + rd)
            elif z0 == 2:
                b = mu * N + T
                cost += alpha * (quad[i, 1] + alpha * quad[i, 2]) - 0.5 * Dm * b * b
            else:
                r = N - mu * T
                cost += 0.5 * Dm * r * r
        else:
            if z0 == 2:
                cost -= quad[i, 0]
            elif z0 == 3:
                cost -= 0.5 * Dm * r0 * r0
        if za == 2:
            d1 += quad[i, 1] + 2.0 * alpha * quad[i, 2]
            d2 += 2.0 * quad[i, 2]
        elif za == 3:
            dT = (UV + alpha * VV) / T
            ddT = VV / T - (UV + alpha * VV) * dT / (T * T)
            r = N - mu * T
            dr = V0 - mu * dT
            d1 += Dm * r * dr
            d2 += Dm * (dr * dr - r * mu * ddT)
        t += dim
    cost += alpha * alpha * c2 + alpha * c1 + c0
    d1 += 2.0 * alpha * c2 + c1
    d2 += 2.0 * c2
    if d2 <= 0.0:
        d2 = MINVAL
    out[0] = cost
    out[1] = d1
    out[2] = d2


@njit(cache=True)
def linesearch(m, d, v, Mv, Jv, Ma, jar, cdim, cmu, cfr, quad, scale, res, pts, dofs, dlo, dn,
               rows, rlo, rn, whole):
    """Exact line search along v: returns α, the minimizer of cost(a + α v) to tolerance.

    pts: (7, 4) scratch for the search's points, from the caller's borrowed block.

    One island's search: v moves the dofs dofs[dlo:dlo + dn] only, which the rows
    rows[rlo:rlo + rn] alone act on (whole: every dof and row, both lists in order). Only
    those entries of v are read and of Mv, Jv written: the search costs the island's size,
    and equals, bit for bit, the search along v zeroed outside the island (every sum keeps
    its order and loses only zero terms).

    One-dimensional Newton steps from α = 0, then a bracketed search mixing Newton steps and
    bisection (the method of MuJoCo's PrimalSearch). Converged when |∂cost/∂α| <
    tolerance · ls_tolerance · |v| / scale with a lower cost. Fills Mv = M v, Jv = J v and
    res = (improvement −Δcost, |slope| scaled, evaluations).
    """
    nv = m.nv
    if whole:
        snorm = math.sqrt(dot(v, v, nv))
    else:
        snorm = math.sqrt(dot_on(v, v, dofs, dlo, dn))
    res[0] = 0.0
    res[1] = 1.0
    res[2] = 0.0
    if snorm < MINVAL:
        return 0.0
    gtol = m.opt_tolerance[0] * m.opt_ls_tolerance[0] * snorm / scale
    slopescl = scale / snorm
    maxeval = m.opt_ls_iterations[0]
    if whole:
        mul_m(m, d.qM, v, Mv)
        mul_j(d, v, Jv)
        g1 = dot(v, Ma, nv) - dot(d.qfrc_smooth, v, nv)
        g2 = 0.5 * dot(v, Mv, nv)
    else:
        mul_m_on(m, d.qM, v, Mv, dofs, dlo, dn)
        mul_j_on(d, v, Jv, rows, rlo, rn)
        g1 = dot_on(v, Ma, dofs, dlo, dn) - dot_on(d.qfrc_smooth, v, dofs, dlo, dn)
        g2 = 0.5 * dot_on(v, Mv, dofs, dlo, dn)
    _ls_prepare(d, jar, Jv, cdim, cmu, cfr, quad, rows, rlo, rn)
    # points are (α, cost, d1, d2), rows of one block
    pts[:, :] = 0.0
    p0 = pts[0]
    p1 = pts[1]
    p2 = pts[2]
    n1 = pts[3]
    n2 = pts[4]
    pm = pts[5]
    ev = pts[6]  # (cost, d1, d2) of one evaluation
    neval = 0

    _ls_eval(d, 0.0, jar, Jv, cdim, cmu, quad, g1, g2, rows, rlo, rn, ev)
    neval += 1
    p0[1] = ev[0]
    p0[2] = ev[1]
    p0[3] = ev[2]
    # one Newton step from 0
    p1[0] = -p0[2] / p0[3]
    _ls_eval(d, p1[0], jar, Jv, cdim, cmu, quad, g1, g2, rows, rlo, rn, ev)
    neval += 1
    p1[1], p1[2], p1[3] = ev[0], ev[1], ev[2]
    if abs(p1[2]) < gtol and (p1[0] == 0.0 or p1[1] < 0.0):
        res[0] = -p1[1]
        res[1] = abs(p1[2]) * slopescl
        res[2] = neval
        return p1[0]
    direction = 1.0 if p1[2] < 0.0 else -1.0
    # keep stepping (1-D Newton) while the slope still points the same way
    p2[:] = p0
    while p1[2] * direction <= -gtol and neval < maxeval:
        p2[:] = p1
        p1[0] -= p1[2] / p1[3]
        _ls_eval(d, p1[0], jar, Jv, cdim, cmu, quad, g1, g2, rows, rlo, rn, ev)
        neval += 1
        p1[1], p1[2], p1[3] = ev[0], ev[1], ev[2]
        if abs(p1[2]) < gtol and p1[1] < 0.0:
            res[0] = -p1[1]
            res[1] = abs(p1[2]) * slopescl
            res[2] = neval
            return p1[0]
    if neval >= maxeval:
        res[0] = -p1[1]
        res[1] = abs(p1[2]) * slopescl
        res[2] = neval
        return p1[0]
    # bracket [p1, p2]: Newton candidates from each end, and the midpoint
    n2[:] = p1
    n1[0] = p1[0] - p1[2] / p1[3]
    _ls_eval(d, n1[0], jar, Jv, cdim, cmu, quad, g1, g2, rows, rlo, rn, ev)
    neval += 1
    n1[1], n1[2], n1[3] = ev[0], ev[1], ev[2]
    while neval < maxeval:
        pm[0] = 0.5 * (p1[0] + p2[0])
        _ls_eval(d, pm[0], jar, Jv, cdim, cmu, quad, g1, g2, rows, rlo, rn, ev)
        neval += 1
        pm[1], pm[2], pm[3] = ev[0], ev[1], ev[2]
        best = -1
        bestcost = 0.0
        for c in range(3):
            cand = n1 if c == 0 else (n2 if c == 1 else pm)
            if abs(cand[2]) < gtol and (best == -1 or cand[1] < bestcost):
                best = c
                bestcost = cand[1]
        if best >= 0:
            cand = n1 if best == 0 else (n2 if best == 1 else pm)
            res[0] = -cand[1]
            res[1] = abs(cand[2]) * slopescl
            res[2] = neval
            return cand[0]
        # shrink each end toward the candidate whose slope has its sign and is closer to 0
        moved = 0
        for end in range(2):
            p = p1 if end == 0 else p2
            upd = False
            for c in range(3):
                cand = n1 if c == 0 else (n2 if c == 1 else pm)
                if p[2] < 0.0 and cand[2] < 0.0 and p[2] < cand[2]:
                    p[:] = cand
                    upd = True
                elif p[2] > 0.0 and cand[2] > 0.0 and p[2] > cand[2]:
                    p[:] = cand
                    upd = True
            if upd:
                moved += 1
                nx = n1 if end == 0 else n2
                nx[0] = p[0] - p[2] / p[3]
                _ls_eval(d, nx[0], jar, Jv, cdim, cmu, quad, g1, g2, rows, rlo, rn, ev)
                neval += 1
                nx[1], nx[2], nx[3] = ev[0], ev[1], ev[2]
        if moved == 0:
            res[0] = -pm[1]
            res[1] = abs(pm[2]) * slopescl
            res[2] = neval
            return pm[0]
    res[2] = neval
    if p1[1] <= p2[1] and p1[1] < 0.0:
        res[0] = -p1[1]
        res[1] = abs(p1[2]) * slopescl
        return p1[0]
    if p2[1] <= p1[1] and p2[1] < 0.0:
        res[0] = -p2[1]
        res[1] = abs(p2[2]) * slopescl
        return p2[0]
    return 0.0


# ---------------------------------------------------------------------------------------------
# statistics


@njit(cache=True)
def primal_scale(m, d):
    """1 / trace(M): the scale of improvements and gradients in the primal termination tests.

    MuJoCo 4.0's binary divides by the trace of M at the current state (its per-island
    inertia), not by stat.meaninertia · nv.
    """
    s = 0.0
    for i in range(m.nv):
        s += d.qM[m.dof_Madr[i]]
    return 1.0 / max(s, MINVAL)


@njit(cache=True)
def save_stats(d, it, improvement, gradient, slope, cost, nactive, nchange, neval, nupdate):
    """Per-iteration statistics (MuJoCo's d.solver) for iterations below 200."""
    if it >= d.solver_improvement.shape[0]:
        return
    d.solver_improvement[it] = improvement
    d.solver_gradient[it] = gradient
    d.solver_lineslope[it] = slope
    d.solver_cost[it] = cost
    d.solver_nactive[it] = nactive
    d.solver_nchange[it] = nchange
    d.solver_neval[it] = neval
    d.solver_nupdate[it] = nupdate


# ---------------------------------------------------------------------------------------------
# the dual problem


@njit(cache=True)
def make_ar(m, d, AR):
    """AR = J M⁻¹ Jᵀ + diag(R) (nefc × nefc, dense, symmetric): the dual's Hessian.

    With M = Lᵀ D L (d.qLD), J M⁻¹ Jᵀ = Y Yᵀ for Y = J L⁻¹ D^-½: one triangular pass per
    row (its rows' non-zeros are the ancestors of J's). Then row i of the lower triangle
    is Σ_k Y_ik Y[:i+1, k] over the non-zero Y_ik, in dof order, as MuJoCo's mj_makeAR
    (mju_sqrMatTD on Yᵀ): the inner loop runs along a row of Yᵀ, which vectorizes, and
    skips the dofs a row does not reach (a foot's contact reaches about half the
    humanoid's). Indexed in two dimensions, not through row views: a view made in a loop
    costs two atomic reference-count updates.
    """
    nefc = d.nefc[0]
    nv = m.nv
    J = d.efc_J
    own = np.empty(2 * nefc * nv + nv)
    buf = borrow(own)  # its rows reach solve_lt uncounted (`_numba.scratch`)
    Y = shaped(buf[0:nefc * nv], (np.int64(nefc), nv))
    Yt = shaped(buf[nefc * nv:2 * nefc * nv], (nv, np.int64(nefc)))
    dsqrt = buf[2 * nefc * nv:]  # D^-½, once (MuJoCo keeps it as qLDiagSqrtInv)
    for k in range(nv):
        dsqrt[k] = math.sqrt(d.qLDiagInv[k])
    for i in range(nefc):
        y = Y[i]
        for k in range(nv):
            y[k] = J[i, k]
        solve_lt(m, d.qLD, y)  # Lᵀ z = J_iᵀ
        for k in range(nv):
            y[k] *= dsqrt[k]
            Yt[k, i] = y[k]
    for i in range(nefc):
        for j in range(i + 1):
            AR[i, j] = 0.0
        for k in range(nv):
            yik = Y[i, k]
            if yik != 0.0:
                for j in range(i + 1):
                    AR[i, j] += yik * Yt[k, j]
    for i in range(nefc):
        for j in range(i):
            AR[j, i] = AR[i, j]
        AR[i, i] += d.efc_R[i]
    keep(own)


@njit(cache=True)
def dual_cost(d, AR, f):
    """½ fᵀ AR f + fᵀ b."""
    nefc = d.nefc[0]
    s = 0.0
    for i in range(nefc):
        t = 0.0
        for j in range(nefc):
            t += AR[i, j] * f[j]
        s += f[i] * (0.5 * t + d.efc_b[i])
    return s


@njit(cache=True)
def dual_state(d, f, cdim, cmu, cfr, state):
    """States of the dual solution f (MuJoCo's dualState); returns the number active."""
    ne = d.ne[0]
    nf = d.nf[0]
    nefc = d.nefc[0]
    floss = d.efc_frictionloss
    nactive = ne + nf
    for i in range(ne):
        state[i] = STATE_QUADRATIC
    for i in range(ne, ne + nf):
        if f[i] <= -floss[i]:
            state[i] = STATE_LINEARPOS
        elif f[i] >= floss[i]:
            state[i] = STATE_LINEARNEG
        else:
            state[i] = STATE_QUADRATIC
    i = ne + nf
    while i < nefc:
        dim = cdim[i]
        if dim == 0:
            if f[i] <= 0.0:
                state[i] = STATE_SATISFIED
            else:
                state[i] = STATE_QUADRATIC
                nactive += 1
            i += 1
            continue
        T2 = 0.0
        for j in range(1, dim):
            u = f[i + j] / cfr[i, j - 1]
            T2 += u * u
        T = math.sqrt(T2)
        N = f[i]
        # the force cone: f0 ≥ |f_j / μ_j|
        if N >= T:
            st = STATE_SATISFIED
        else:
            st = STATE_QUADRATIC if N / cmu[i] + cmu[i] * T <= 0.0 else STATE_CONE
            nactive += dim
        for j in range(dim):
            state[i + j] = st
        i += dim
    return nactive


@njit(cache=True)
def dual_finish(m, d):
    """qfrc_constraint = Jᵀ efc_force, qacc = qacc_smooth + M⁻¹ qfrc_constraint."""
    mul_jt(d, d.efc_force, d.qfrc_constraint)
    for k in range(m.nv):
        d.qacc[k] = d.qfrc_constraint[k]
    solve_m(m, d, d.qacc)
    for k in range(m.nv):
        d.qacc[k] += d.qacc_smooth[k]
