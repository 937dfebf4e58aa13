"""Linear complementarity problems: Lemke, principal pivoting with warm start, Find-Indices.

An LCP(q, M) asks for z with  w = M z + q,  z ≥ 0,  w ≥ 0,  zᵀw = 0  (Cottle, Pang & Stone
1992). The rigid-contact inverse dynamics of Zapolsky & Drumwright (paper 002) reduces to
three kinds:

  symmetric PSD     no-slip contact (§4) and the complementarity-free model (§6): convex
                    QPs  min ½ zᵀMz + qᵀz, z ≥ 0.  Solved by `ppm`, a principal pivoting
                    method that changes one index of the active set at a time, keeps the
                    principal block M_αα positive definite with an updated Cholesky
                    factor, starts from the previous active set (§4.6, Algorithm 2) and
                    never forms M when it is given as M = N Q Nᵀ (§4.7, Appendix F: every
                    iteration costs O(rows · p), linear in the number of contacts).
  copositive        Coulomb friction with a linearized cone (§5): Lemke's complementary
                    pivoting with the covering vector e and a lexicographic ratio test,
                    which cannot cycle, so that it terminates with a solution or a
                    secondary ray (`lemke`). A ray proves infeasibility for copositive-plus
                    M (PSD included).
  any, small        `enumerate_solutions`: every complementary basis (2ⁿ principal
                    systems), the exhaustive search of Algorithm 3.

`qp_eq_nonneg` is the small convex QP (equality constraints, nonnegative variables) of the
second stage of §6, solved through its dual LCP by the same pivoting.

`find_indices_kernel` is Algorithm 1 (Find-Indices): a greedy, incremental-Cholesky choice of rows
of J whose Gram matrix J G Jᵀ stays positive definite.

Every kernel works on dense float64 arrays, allocates only its small workspaces and returns
a status: LCP_SOLVED, LCP_INFEASIBLE (ray or unbounded QP: no solution exists),
LCP_MAXITER (iteration cap reached), LCP_SINGULAR (a principal system could not be
factored).
"""

from dataclasses import dataclass

import numpy as np
from numba import njit

from jointspace._numba import entry
from jointspace._numba.dense import chol_append, chol_inverse, chol_solve_into
from jointspace.errors import JointspaceError

LCP_SOLVED = 0
LCP_INFEASIBLE = 1
LCP_MAXITER = 2
LCP_SINGULAR = 3
STATUS_NAMES = ("solved", "infeasible", "iteration limit", "singular")


# ---------------------------------------------------------------------------------------------
# small dense linear algebra


@njit(cache=True)
def _lu_solve(A, b, x, rtol):
    """Solve A x = b (A square, copied) by Gaussian elimination with partial pivoting.

    Returns False when a pivot falls below rtol · max|A| (numerically singular).
    """
    n = A.shape[0]
    if n == 0:
        return True
    a = A.copy()
    r = b.copy()
    scale = 0.0
    for i in range(n):
        for j in range(n):
            scale = max(scale, abs(a[i, j]))
    if scale == 0.0:
        return False
    for k in range(n):
        p = k
        for i in range(k + 1, n):
            if abs(a[i, k]) > abs(a[p, k]):
                p = i
        if abs(a[p, k]) <= rtol * scale:
            return False
        if p != k:
            for j in range(n):
                a[k, j], a[p, j] = a[p, j], a[k, j]
            r[k], r[p] = r[p], r[k]
        inv = 1.0 / a[k, k]
        for i in range(k + 1, n):
            f = a[i, k] * inv
            if f != 0.0:
                for j in range(k + 1, n):
                    a[i, j] -= f * a[k, j]
                r[i] -= f * r[k]
    for i in range(n - 1, -1, -1):
        s = r[i]
        for j in range(i + 1, n):
            s -= a[i, j] * x[j]
        x[i] = s / a[i, i]
    return True


# ---------------------------------------------------------------------------------------------
# Lemke's algorithm with the lexicographic ratio test


@njit(cache=True)
def _lex_less(T, b, rows_i, rows_j, col, n):
    """Lexicographic comparison of rows i and j of [b, B⁻¹] divided by their pivot entries.

    B⁻¹ is the tableau's first n columns (the slack columns started as the identity).
    Returns True when row i's vector is lexicographically smaller than row j's.
    """
    pi = T[rows_i, col]
    pj = T[rows_j, col]
    a = b[rows_i] / pi
    c = b[rows_j] / pj
    if a < c - 1e-12 * (1.0 + abs(c)):
        return True
    if a > c + 1e-12 * (1.0 + abs(c)):
        return False
    for k in range(n):
        a = T[rows_i, k] / pi
        c = T[rows_j, k] / pj
        if a < c - 1e-12 * (1.0 + abs(c)):
            return True
        if a > c + 1e-12 * (1.0 + abs(c)):
            return False
    return rows_i < rows_j


@njit(cache=True)
def _pivot(T, b, r, e):
    """Gauss–Jordan pivot of the tableau [T | b] on row r, column e."""
    n, ncol = T.shape
    p = 1.0 / T[r, e]
    for j in range(ncol):
        T[r, j] *= p
    b[r] *= p
    T[r, e] = 1.0
    for i in range(n):
        if i == r:
            continue
        f = T[i, e]
        if f != 0.0:
            for j in range(ncol):
                T[i, j] -= f * T[r, j]
            b[i] -= f * b[r]
            T[i, e] = 0.0


@njit(cache=True)
def _polish(M, q, z, tol):
    """Re-solve the principal system of z's support directly and keep it if still feasible.

    The tableau accumulates round-off over many pivots; one solve of M_αα z_α = −q_α on the
    final support α removes it. Kept only when z stays ≥ −tol and w = Mz + q ≥ −tol.
    """
    n = q.shape[0]
    idx = np.empty(n, dtype=np.int64)
    k = 0
    for i in range(n):
        if z[i] > 0.0:
            idx[k] = i
            k += 1
    if k == 0:
        return
    A = np.empty((k, k))
    rhs = np.empty(k)
    for a in range(k):
        rhs[a] = -q[idx[a]]
        for c in range(k):
            A[a, c] = M[idx[a], idx[c]]
    x = np.empty(k)
    if not _lu_solve(A, rhs, x, 1e-13):
        return
    znew = np.zeros(n)
    for a in range(k):
        if x[a] < -tol:
            return
        znew[idx[a]] = max(x[a], 0.0)
    for i in range(n):
        s = q[i]
        for j in range(n):
            s += M[i, j] * znew[j]
        if s < -tol:
            return
    z[:] = znew


@njit(cache=True, nogil=True)
def lemke(M, q, z, max_pivots, tol):
    """Solve LCP(q, M) by Lemke's complementary pivoting; returns (status, pivots).

    Tableau  w − M z − e z₀ = q  with the slacks w as the first basis. z₀ enters at
    max(−q); then the complement of each leaving variable enters, the leaving row chosen by
    the minimum ratio with ties broken lexicographically on the rows of [b, B⁻¹]/pivot
    (Cottle–Pang–Stone §4.9), which makes every basis distinct and the method finite. It
    ends when z₀ leaves (solution), when no row blocks the entering column (secondary ray:
    for copositive-plus M, including PSD, the LCP is infeasible), or after max_pivots.

    Args:
        M: (n, n) matrix.
        q: (n,) vector.
        z: (n,) output, the solution (zero unless status is LCP_SOLVED).
        max_pivots: iteration cap.
        tol: feasibility tolerance for the final polish.
    """
    n = q.shape[0]
    z[:] = 0.0
    if n == 0:
        return LCP_SOLVED, 0
    r = 0
    for i in range(n):
        if q[i] < q[r]:
            r = i
    if q[r] >= 0.0:
        return LCP_SOLVED, 0
    z0 = 2 * n
    T = np.zeros((n, 2 * n + 1))
    b = q.copy()
    basis = np.empty(n, dtype=np.int64)
    for i in range(n):
        T[i, i] = 1.0
        for j in range(n):
            T[i, n + j] = -M[i, j]
        T[i, z0] = -1.0
        basis[i] = i
    # first pivot: z₀ enters at max(−q); lexicographic choice among the tied rows
    # (lexicographic rule: among rows tied with min q, the last one)
    for i in range(n):
        if i > r and abs(q[i] - q[r]) <= 1e-12 * (1.0 + abs(q[r])):
            r = i
    _pivot(T, b, r, z0)
    leaving = basis[r]
    basis[r] = z0
    pivots = 1
    while pivots < max_pivots:
        e = leaving + n if leaving < n else leaving - n
        # ratio test over rows whose basic variable decreases as x_e increases
        r = -1
        zrow = -1
        best = np.inf
        for i in range(n):
            a = T[i, e]
            if a > 1e-12:
                ratio = b[i] / a
                if r < 0 or ratio < best - 1e-12 * (1.0 + abs(best)):
                    r = i
                    best = ratio
                elif ratio <= best + 1e-12 * (1.0 + abs(best)):
                    if _lex_less(T, b, i, r, e, n):
                        r = i
                        best = min(best, ratio)
        if r < 0:
            return LCP_INFEASIBLE, pivots
        # prefer z₀ among the rows tied with the minimum ratio: the path ends there
        for i in range(n):
            if basis[i] == z0 and T[i, e] > 1e-12:
                if b[i] / T[i, e] <= best + 1e-12 * (1.0 + abs(best)):
                    zrow = i
        if zrow >= 0:
            r = zrow
        _pivot(T, b, r, e)
        leaving = basis[r]
        basis[r] = e
        pivots += 1
        if leaving == z0:
            for i in range(n):
                v = basis[i]
                if n <= v < 2 * n:
                    z[v - n] = max(b[i], 0.0)
            _polish(M, q, z, tol)
            return LCP_SOLVED, pivots
    return LCP_MAXITER, pivots


# ---------------------------------------------------------------------------------------------
# principal pivoting for symmetric PSD LCPs in factored form


@njit(cache=True)
def _mij(P, N, i, j):
    """(N Q Nᵀ)[i, j] = P[i] · N[j] with P = N Q."""
    s = 0.0
    for k in range(N.shape[1]):
        s += P[i, k] * N[j, k]
    return s


@njit(cache=True)
def _w_full(P, N, q, z, act, na, w):
    """w = N Q Nᵀ z + q = P (N_αᵀ z_α) + q; O(rows · p), the full M is never formed."""
    p = N.shape[1]
    u = np.zeros(p)
    for a in range(na):
        i = act[a]
        zi = z[i]
        if zi != 0.0:
            for k in range(p):
                u[k] += N[i, k] * zi
    for i in range(N.shape[0]):
        s = q[i]
        for k in range(p):
            s += P[i, k] * u[k]
        w[i] = s


@njit(cache=True)
def _refactor(P, N, act, na, L, rtol):
    """Cholesky factor of M_αα from scratch; returns the number of leading indices kept.

    An index whose column makes M_αα singular is dropped from act (the rest shift down).
    """
    k = 0
    col = np.empty(max(na, 1))
    for a in range(na):
        i = act[a]
        for c in range(k):
            col[c] = _mij(P, N, act[c], i)
        if chol_append(L, k, col, _mij(P, N, i, i), rtol):
            act[k] = i
            k += 1
    return k


@njit(cache=True, nogil=True)
def ppm(N, Q, q, warm, nwarm, z, active, max_iter, tol):
    """Solve LCP(q, N Q Nᵀ) for symmetric PSD Q by principal pivoting with warm start.

    The LCP is the convex QP  min ½ zᵀMz + qᵀz, z ≥ 0  with M = N Q Nᵀ. The method keeps an
    active set α (indices allowed to be positive, w_α = 0) whose principal block M_αα is
    positive definite, held as a Cholesky factor updated by one row per added index:

      1. z_α = −M_αα⁻¹ q_α; if some entry is negative, step from the current feasible z
         toward it until the first entry reaches zero and drop that index (one pivot).
      2. w = Mz + q over all rows (O(rows · p)); if min w_β ≥ −tol, z solves the LCP.
      3. Otherwise the most negative w_j enters α (one pivot). When M_{α∪j} is singular,
         column j depends on α: z moves along d (d_j = 1, d_α = −M_αα⁻¹ M_αj, M d = 0) while
         the objective falls at rate w_j, until the first z_i with d_i < 0 reaches zero; i
         leaves and j enters (an exchange, two pivots). If no entry blocks, the QP is
         unbounded below and the LCP infeasible.

    The objective decreases at every pivot, so no active set repeats (finite for PSD M).
    Warm start (§4.6, Algorithm 2): the previous active set is factored first (indices that
    would make M_αα singular are skipped); when the contacts are the same and the solution
    moved little, step 1 accepts it at once and no pivot is needed.

    Args:
        N: (n, p) factor (identity for a dense M).
        Q: (p, p) symmetric PSD.
        q: (n,).
        warm: (≥ nwarm,) int indices of the previous active set.
        nwarm: how many entries of warm to use (0 = cold start).
        z: (n,) output solution.
        active: (n,) int output; its first `nactive` entries are the final active set.
        max_iter: cap on pivots.
        tol: tolerance on w and on z's sign (absolute, in q's units).

    Returns:
        (status, pivots, nactive).
    """
    n, p = N.shape
    z[:] = 0.0
    P = N @ Q
    cap = min(n, p)                     # rank(M) ≤ min(n, p) bounds the active set
    L = np.zeros((max(cap, 1), max(cap, 1)))
    act = np.empty(n + 1, dtype=np.int64)
    inact = np.zeros(n, dtype=np.bool_)
    w = np.empty(n)
    rtol = 1e-10
    na = 0
    for a in range(nwarm):
        i = warm[a]
        if 0 <= i < n and not inact[i] and na < cap:
            act[na] = i
            inact[i] = True
            na += 1
    na = _refactor(P, N, act, na, L, rtol)
    for i in range(n):
        inact[i] = False
    for a in range(na):
        inact[act[a]] = True
    pivots = 0
    s = np.empty(cap + 1)
    rhs = np.empty(cap + 1)
    col = np.empty(cap + 1)
    y = np.empty(cap + 1)
    status = LCP_MAXITER
    it = 0
    while it < 4 * max_iter + 4 * n + 8:
        it += 1
        # 1. minimizer on the active set, with a ratio step back to feasibility
        for a in range(na):
            rhs[a] = -q[act[a]]
        chol_solve_into(L, na, rhs, s)
        lam = 1.0
        blk = -1
        for a in range(na):
            if s[a] < 0.0:
                zi = z[act[a]]
                t = zi / (zi - s[a]) if zi - s[a] > 0.0 else 0.0
                if t < lam:
                    lam = t
                    blk = a
        for a in range(na):
            i = act[a]
            z[i] += lam * (s[a] - z[i])
        if blk >= 0:
            # drop every index that reached zero (at least the blocking one)
            k = 0
            for a in range(na):
                i = act[a]
                if a == blk or (s[a] < 0.0 and z[i] <= 1e-300):
                    z[i] = 0.0
                    inact[i] = False
                    pivots += 1
                else:
                    act[k] = i
                    k += 1
            na = _refactor(P, N, act, k, L, rtol)
            if pivots > max_iter:
                break
            continue
        # 2. optimality
        _w_full(P, N, q, z, act, na, w)
        j = -1
        wmin = -tol
        for i in range(n):
            if not inact[i] and w[i] < wmin:
                wmin = w[i]
                j = i
        if j < 0:
            status = LCP_SOLVED
            break
        if pivots >= max_iter:
            break
        # 3. j enters
        for a in range(na):
            col[a] = _mij(P, N, act[a], j)
        mjj = _mij(P, N, j, j)
        if na < cap and chol_append(L, na, col, mjj, rtol):
            act[na] = j
            inact[j] = True
            na += 1
            pivots += 1
            continue
        # column j depends on α: move along the null direction d
        chol_solve_into(L, na, col, y)
        t = np.inf
        blk = -1
        for a in range(na):
            if y[a] > 1e-12:
                ta = z[act[a]] / y[a]
                if ta < t:
                    t = ta
                    blk = a
        if blk < 0:
            status = LCP_INFEASIBLE
            break
        for a in range(na):
            i = act[a]
            z[i] = max(z[i] - t * y[a], 0.0)
        z[j] = t
        out = act[blk]
        z[out] = 0.0
        inact[out] = False
        act[blk] = j
        inact[j] = True
        pivots += 2
        na = _refactor(P, N, act, na, L, rtol)
        inact[:] = False
        for a in range(na):
            inact[act[a]] = True
        for i in range(n):
            if not inact[i]:
                z[i] = 0.0
    for a in range(na):
        active[a] = act[a]
    return status, pivots, na


# ---------------------------------------------------------------------------------------------
# Algorithm 1 (Find-Indices) and exhaustive enumeration (Algorithm 3)


@njit(cache=True, nogil=True)
def find_indices_kernel(J, G, order, norder, out, rtol):
    """Greedy choice of rows of J with a positive definite Gram matrix J_S G J_Sᵀ.

    Rows are tried in the given order; a row is kept when the Cholesky factor of the
    selected rows' Gram matrix extends with a pivot above rtol times its diagonal (one
    O(k²) update per row, Algorithm 1's singularity checks on lines 6 and 10). At most
    rank(G) rows can be kept.

    Args:
        J: (rows, n) candidate rows.
        G: (n, n) symmetric PSD metric (e.g. M⁻¹ restricted to the unactuated dofs).
        order: (norder,) int row indices in the order to try.
        norder: number of rows to try.
        out: (≥ norder,) int output: the kept rows, in order.
        rtol: relative pivot tolerance.

    Returns:
        number of kept rows.
    """
    n = J.shape[1]
    cap = min(norder, n) if norder > 0 else 1
    L = np.zeros((cap + 1, cap + 1))
    JG = np.empty((cap + 1, n))
    col = np.empty(cap + 1)
    g = np.empty(n)
    k = 0
    for a in range(norder):
        if k >= cap:
            break
        r = order[a]
        for c in range(n):
            s = 0.0
            for e in range(n):
                s += G[c, e] * J[r, e]
            g[c] = s
        diag = 0.0
        for c in range(n):
            diag += J[r, c] * g[c]
        for b in range(k):
            s = 0.0
            for c in range(n):
                s += JG[b, c] * J[r, c]
            col[b] = s
        if diag > 0.0 and chol_append(L, k, col, diag, rtol):
            JG[k, :] = g
            out[k] = r
            k += 1
    return k


@njit(cache=True, nogil=True)
def enumerate_solutions(M, q, sols, tol):
    """Every solution of LCP(q, M) whose support gives a nonsingular principal system.

    For each of the 2ⁿ subsets α: solve M_αα z_α = −q_α (skip if singular), keep z when
    z ≥ −tol and w = Mz + q ≥ −tol; duplicates (within tol) are kept once. This is the
    exhaustive search of Algorithm 3 and the brute-force reference for small n.

    Args:
        M: (n, n), n ≤ 24.
        q: (n,).
        sols: (max_solutions, n) output rows.
        tol: feasibility tolerance.

    Returns:
        number of solutions written (at most sols.shape[0]; the count keeps growing past
        it so that a caller can tell the buffer was too small).
    """
    n = q.shape[0]
    nsol = 0
    cap = sols.shape[0]
    idx = np.empty(max(n, 1), dtype=np.int64)
    A = np.empty((max(n, 1), max(n, 1)))
    rhs = np.empty(max(n, 1))
    x = np.empty(max(n, 1))
    zc = np.empty(n)
    for mask in range(1 << n):
        k = 0
        for i in range(n):
            if (mask >> i) & 1:
                idx[k] = i
                k += 1
        Ak = A[:k, :k]
        for a in range(k):
            rhs[a] = -q[idx[a]]
            for c in range(k):
                Ak[a, c] = M[idx[a], idx[c]]
        xk = x[:k]
        if not _lu_solve(Ak, rhs[:k], xk, 1e-12):
            continue
        ok = True
        zc[:] = 0.0
        for a in range(k):
            if xk[a] < -tol:
                ok = False
                break
            zc[idx[a]] = max(xk[a], 0.0)
        if not ok:
            continue
        for i in range(n):
            s = q[i]
            for j in range(n):
                s += M[i, j] * zc[j]
            if s < -tol:
                ok = False
                break
        if not ok:
            continue
        dup = False
        for s_ in range(min(nsol, cap)):
            same = True
            for i in range(n):
                if abs(sols[s_, i] - zc[i]) > tol * (1.0 + abs(zc[i])):
                    same = False
                    break
            if same:
                dup = True
                break
        if dup:
            continue
        if nsol < cap:
            sols[nsol, :] = zc
        nsol += 1
    return nsol


# ---------------------------------------------------------------------------------------------
# a small convex QP (the second stage of §6)


@njit(cache=True)
def qp_eq_nonneg(H, g, E, x, max_iter, tol):
    """min ½ xᵀHx + gᵀx  s.t.  E x = E x₀,  x ≥ 0, from a feasible start x₀ (overwritten).

    H positive definite. The equalities are eliminated on their null space (an SVD, so
    redundant rows of E are harmless): x = x₀ + Z y. The remaining problem,
    min ½ yᵀH_r y + g_rᵀy s.t. x₀ + Z y ≥ 0 with H_r = ZᵀHZ, g_r = Zᵀ(Hx₀ + g), has for dual
    the symmetric PSD LCP  s = Z H_r⁻¹ Zᵀ λ + (x₀ − Z H_r⁻¹ g_r) ⊥ λ ≥ 0  (s the slack of
    x ≥ 0), solved by `ppm` in factored form (Lemke if pivoting gives up); then
    y = H_r⁻¹ (Zᵀλ − g_r). x₀ feasible makes the dual bounded, so it always has a solution.

    Returns:
        (pivots, converged).
    """
    n = x.shape[0]
    m = E.shape[0]
    if m > 0:
        _, S, Vt = np.linalg.svd(E, full_matrices=True)
        smax = S[0] if S.shape[0] > 0 else 0.0
        rank = 0
        for s in S:
            if s > 1e-10 * max(smax, 1e-300):
                rank += 1
        Z = np.ascontiguousarray(Vt[rank:, :].T)
    else:
        Z = np.eye(n)
    k = Z.shape[1]
    if k == 0:
        return 0, True
    e0 = E @ x
    Hr = Z.T @ H @ Z
    gr = Z.T @ (H @ x + g)
    L = np.zeros((k, k))
    for i in range(k):
        col = np.empty(max(i, 1))
        for j in range(i):
            col[j] = Hr[j, i]
        if not chol_append(L, i, col, Hr[i, i], 1e-14):
            return 0, False
    Hinv = np.empty((k, k))
    chol_inverse(L, k, Hinv)
    y0 = Hinv @ gr
    qv = x - Z @ y0
    lam = np.zeros(n)
    act = np.empty(n, dtype=np.int64)
    warm = np.empty(1, dtype=np.int64)
    st, piv, _ = ppm(Z, Hinv, qv, warm, np.int64(0), lam, act, max_iter, tol)
    if st == LCP_MAXITER:
        st, piv2 = lemke(Z @ Hinv @ Z.T, qv, lam, 50 * (n + 1), tol)
        piv += piv2
    if st != LCP_SOLVED:
        return piv, False
    y = Hinv @ (Z.T @ lam) - y0
    xn = x + Z @ y
    # round-off of H_r⁻¹ (conditioned like H) may leave tiny negatives: clip them
    lim = tol
    for i in range(n):
        lim = max(lim, 1e-7 * abs(x[i]))
    for i in range(n):
        if xn[i] < -lim:
            return piv, False
        x[i] = max(xn[i], 0.0)
    # restore E x = e on the support (the elimination's round-off), keeping zeros at zero
    if m > 0:
        idx = np.empty(n, dtype=np.int64)
        for _ in range(2):
            k = 0
            for i in range(n):
                if x[i] > 0.0:
                    idx[k] = i
                    k += 1
            if k == 0:
                break
            ES = np.empty((m, k))
            for r in range(m):
                for a in range(k):
                    ES[r, a] = E[r, idx[a]]
            dx = np.linalg.lstsq(ES, E @ x - e0, rcond=1e-10)[0]
            for a in range(k):
                x[idx[a]] = max(x[idx[a]] - dx[a], 0.0)
    return piv, True


# ---------------------------------------------------------------------------------------------
# Python entry points


@dataclass
class LCPResult:
    """Solution of an LCP.

    Attributes:
        z: (n,) the solution (zeros unless status is "solved").
        w: (n,) M z + q.
        status: "solved", "infeasible" (no solution exists: Lemke's secondary ray for
            copositive-plus M, or an unbounded QP for `ppm`), "iteration limit" or
            "singular".
        pivots: pivots done (for `ppm`: indices moved in or out of the active set after
            the warm start was factored).
        active: (k,) int indices of the final active set (`ppm`) or of z's support (Lemke),
            the warm start of the next call.
    """

    z: np.ndarray
    w: np.ndarray
    status: str
    pivots: int
    active: np.ndarray


def _matrix(x, name, fname, shape=None):
    x = np.ascontiguousarray(x, dtype=np.float64)
    if x.ndim != 2 or (shape is not None and x.shape != shape):
        want = f"shape {shape}" if shape is not None else "a 2-D array"
        raise JointspaceError(f"{fname}: argument {name} must be {want}, got shape {x.shape}")
    if not np.all(np.isfinite(x)):
        i = np.argwhere(~np.isfinite(x))[0]
        raise JointspaceError(f"{fname}: argument {name} has a non-finite entry at "
                              f"{tuple(int(k) for k in i)}; pass finite numbers")
    return x


def _vector(x, n, name, fname):
    x = np.ascontiguousarray(x, dtype=np.float64)
    if x.shape != (n,):
        raise JointspaceError(f"{fname}: argument {name} must have shape ({n},), "
                              f"got {x.shape}")
    if not np.all(np.isfinite(x)):
        i = int(np.argwhere(~np.isfinite(x))[0][0])
        raise JointspaceError(f"{fname}: argument {name}[{i}] is not finite; pass finite "
                              "numbers")
    return x


_k_lemke = entry.Kernel(lemke)
_k_ppm = entry.Kernel(ppm)
_k_enum = entry.Kernel(enumerate_solutions)
_k_find = entry.Kernel(find_indices_kernel)

METHODS = ("lemke", "ppm")


def solve_lcp(M, q, method="lemke", warm=None, factor=None, max_iter=None, tol=1e-12):
    """Solve the LCP  w = M z + q, z ≥ 0, w ≥ 0, zᵀw = 0.

    Args:
        M: (n, n) matrix. "lemke" takes any M and is guaranteed to terminate; it finds a
            solution or proves there is none for copositive-plus M (PSD included) and for
            the copositive LCPs of Coulomb friction. "ppm" needs M symmetric PSD.
        q: (n,) vector.
        method: "lemke" or "ppm".
        warm: for "ppm", the `active` of a previous result (or any index list): the
            principal pivoting starts from that set.
        factor: for "ppm", optionally (N, Q) with M = N Q Nᵀ (N (n, p), Q (p, p) symmetric
            PSD): M is then never formed and each pivot costs O(n p). M may be None.
        max_iter: pivot cap (default 50 (n + 1)).
        tol: tolerance on w and z, absolute, scaled by max(1, max|q|).

    Returns:
        `LCPResult`.

    Raises:
        JointspaceError: bad shapes, non-finite entries, an unknown method, or a
            non-symmetric M for "ppm".
    """
    fname = "solve_lcp"
    if method not in METHODS:
        raise JointspaceError(f"{fname}: method must be one of {METHODS}, got {method!r}")
    if factor is not None:
        if method != "ppm":
            raise JointspaceError(f"{fname}: factor=(N, Q) is only used by method='ppm'")
        N = _matrix(factor[0], "factor[0] (N)", fname)
        n, p = N.shape
        Q = _matrix(factor[1], "factor[1] (Q)", fname, (p, p))
        Md = None
    else:
        Md = _matrix(M, "M", fname)
        n = Md.shape[0]
        if Md.shape != (n, n):
            raise JointspaceError(f"{fname}: argument M must be square, got shape {Md.shape}")
    q = _vector(q, n, "q", fname)
    scale = max(1.0, float(np.max(np.abs(q)))) if n else 1.0
    max_iter = 50 * (n + 1) if max_iter is None else int(max_iter)
    z = np.zeros(n)
    if method == "lemke":
        ep = _k_lemke.ep
        st, piv = ep(Md, q, z, max_iter, tol * scale)
        active = np.flatnonzero(z > 0.0)
        w = Md @ z + q
    else:
        if factor is None:
            if not np.allclose(Md, Md.T, rtol=1e-12, atol=1e-12 * max(1.0, np.abs(Md).max())):
                raise JointspaceError(f"{fname}: method='ppm' needs a symmetric PSD M; use "
                                      "method='lemke' for other matrices")
            N = np.eye(n)
            Q = Md
        warm = np.zeros(0, np.int64) if warm is None else np.asarray(warm, dtype=np.int64)
        if warm.size and (warm.min() < 0 or warm.max() >= n):
            raise JointspaceError(f"{fname}: warm indices must lie in [0, {n}); got "
                                  f"{warm.min()}..{warm.max()}")
        act = np.empty(n, dtype=np.int64)
        ep = _k_ppm.ep
        st, piv, na = ep(N, Q, q, warm, warm.size, z, act, max_iter, tol * scale)
        active = np.sort(act[:na])
        w = N @ (Q @ (N.T @ z)) + q
    return LCPResult(z, w, STATUS_NAMES[st], int(piv), active)


def lcp_solutions(M, q, max_solutions=256, tol=1e-10):
    """Every solution of a small LCP with a nonsingular principal system (2ⁿ solves).

    Args:
        M: (n, n), n ≤ 24.
        q: (n,).
        max_solutions: buffer size.
        tol: feasibility tolerance.

    Returns:
        (k, n) array of distinct solutions z.
    """
    fname = "lcp_solutions"
    M = _matrix(M, "M", fname)
    n = M.shape[0]
    if M.shape != (n, n) or n > 24:
        raise JointspaceError(f"{fname}: argument M must be square with n ≤ 24 (2ⁿ "
                              f"subsystems), got shape {M.shape}")
    q = _vector(q, n, "q", fname)
    sols = np.empty((max_solutions, n))
    ep = _k_enum.ep
    k = ep(M, q, sols, tol)
    if k > max_solutions:
        raise JointspaceError(f"{fname}: {k} solutions found, more than max_solutions="
                              f"{max_solutions}; pass a larger max_solutions")
    return sols[:k].copy()


def find_indices(J, G, rtol=1e-9):
    """Algorithm 1 (Find-Indices): rows of J, in order, whose Gram matrix J G Jᵀ is PD.

    Args:
        J: (rows, n) candidate constraint rows.
        G: (n, n) symmetric PSD metric (M⁻¹, or M⁻¹ of the unactuated dofs).
        rtol: a row is dropped when its Cholesky pivot is below rtol times its diagonal.

    Returns:
        int array of the kept row indices (at most rank(G) of them).
    """
    fname = "find_indices"
    J = _matrix(J, "J", fname)
    G = _matrix(G, "G", fname, (J.shape[1], J.shape[1]))
    order = np.arange(J.shape[0], dtype=np.int64)
    out = np.empty(max(J.shape[0], 1), dtype=np.int64)
    ep = _k_find.ep
    k = ep(J, G, order, J.shape[0], out, float(rtol))
    return out[:k].copy()
