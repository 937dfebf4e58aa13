"""Dense Cholesky factorization and solves for the small systems of the solvers: the one home.

`chol_factor` (regularized, in place) and `chol_solve`; `chol_update` (a rank-one update or
downdate of a factor, Newton's incremental Hessian); `chol_factor_pd` (a copy, refusing a
non-positive pivot), `chol_solve_spd` (factor and solve, refusing), `chol_solve_into` (into
another vector), `chol_inverse` (the inverse from a factor); `chol_append` extends a factor
by one row and column (the LCP's pivoting).
`sym_eig` (cyclic Jacobi) and `damped_inverse` serve the controllers' task-space inverses.

One factorization serves every dense symmetric system in the package: Newton's and the
interior-point Hessians, the barrier model's, PGS's friction subproblem, the LCP's and
rigid-contact inverse's Gram and mass blocks, and the control QPs'. Callers that need a
strictly positive definite matrix check that the returned rank is full; the solvers use the
regularized factor as it is.
"""

import math

import numpy as np
from numba import njit


@njit(cache=True)
def chol_factor(A, n, mindiag):
    """In-place lower Cholesky L Lᵀ of A[:n, :n] (only the lower triangle is read or written).

    A pivot below mindiag (or NaN) is raised to mindiag and the rest of its column zeroed,
    so the factor always exists; returns the rank, n minus the number of raised pivots.
    """
    rank = n
    for j in range(n):
        t = A[j, j]
        for k in range(j):
            t -= A[j, k] * A[j, k]
        if not t >= mindiag:
            rank -= 1
            A[j, j] = math.sqrt(mindiag)
            for i in range(j + 1, n):
                A[i, j] = 0.0
            continue
        A[j, j] = math.sqrt(t)
        inv = 1.0 / A[j, j]
        # four rows at a time: four independent sums share each A[j, k] (every sum keeps
        # its order, so the factor is bit for bit the row-by-row one; 18% faster at n = 27)
        i = j + 1
        while i + 4 <= n:
            s0 = A[i, j]
            s1 = A[i + 1, j]
            s2 = A[i + 2, j]
            s3 = A[i + 3, j]
            for k in range(j):
                a = A[j, k]
                s0 -= A[i, k] * a
                s1 -= A[i + 1, k] * a
                s2 -= A[i + 2, k] * a
                s3 -= A[i + 3, k] * a
            A[i, j] = s0 * inv
            A[i + 1, j] = s1 * inv
            A[i + 2, j] = s2 * inv
            A[i + 3, j] = s3 * inv
            i += 4
        while i < n:
            s = A[i, j]
            for k in range(j):
                s -= A[i, k] * A[j, k]
            A[i, j] = s * inv
            i += 1
    return rank


@njit(cache=True)
def chol_solve(L, n, x):
    """Solve in place x ← (L Lᵀ)⁻¹ x with the lower factor L[:n, :n] of chol_factor.

    Forward: a dot product of row i with the solved part; backward (Lᵀ): each solved x_i
    is subtracted from the rows above along row i of L, so that both read L by rows
    (the column-wise backward loop took 1.4–2× as long at n = 27–60).
    """
    for i in range(n):
        s = x[i]
        for k in range(i):
            s -= L[i, k] * x[k]
        x[i] = s / L[i, i]
    for i in range(n - 1, -1, -1):
        xi = x[i] / L[i, i]
        x[i] = xi
        for k in range(i):
            x[k] -= L[i, k] * xi


@njit(cache=True)
def chol_update(L, n, x, add, mindiag):
    """Rank-one change of a factor in place: L Lᵀ ← L Lᵀ ± x xᵀ (add: +), x destroyed.

    Givens-style sweep over the columns of the lower factor L[:n, :n], O(n²). A downdate
    whose pivot would fall below mindiag (the matrix lost definiteness numerically) stops
    and returns False, leaving L unusable: the caller refactors from scratch. MuJoCo updates
    its Newton Hessian the same way when constraints enter or leave their quadratic zone
    (mju_cholUpdate).
    """
    sgn = 1.0 if add else -1.0
    for k in range(n):
        xk = x[k]
        if xk == 0.0:
            continue
        lkk = L[k, k]
        r2 = lkk * lkk + sgn * xk * xk
        if not r2 >= mindiag:
            return False
        r = math.sqrt(r2)
        c = r / lkk
        s = xk / lkk
        L[k, k] = r
        for i in range(k + 1, n):
            lik = (L[i, k] + sgn * s * x[i]) / c
            x[i] = c * x[i] - s * lik
            L[i, k] = lik
    return True


_TINY = 1e-300  # a pivot must be positive: the least threshold that refuses 0


@njit(cache=True)
def chol_factor_pd(A, L):
    """L Lᵀ = A (A symmetric PD, n × n, kept); returns False if a pivot is not positive."""
    n = A.shape[0]
    for i in range(n):
        for j in range(i + 1):
            L[i, j] = A[i, j]
        for j in range(i + 1, n):
            L[i, j] = 0.0
    return chol_factor(L, n, _TINY) == n


@njit(cache=True)
def chol_solve_spd(A, n, b, mindiag):
    """Solve A x = b in place (b → x) for a symmetric positive definite n × n A (destroyed).

    Returns False (b partly overwritten) when a pivot is not above mindiag.
    """
    if chol_factor(A, n, mindiag) < n:
        return False
    chol_solve(A, n, b)
    return True


@njit(cache=True)
def chol_solve_into(L, k, b, x):
    """x = (L Lᵀ)⁻¹ b for the leading k × k block of L."""
    for i in range(k):
        x[i] = b[i]
    chol_solve(L, k, x)


@njit(cache=True)
def chol_inverse(L, n, out):
    """out[:n, :n] = (L Lᵀ)⁻¹ from the lower factor L[:n, :n], one unit column at a time."""
    e = np.zeros(n)
    x = np.empty(n)
    for j in range(n):
        e[:] = 0.0
        e[j] = 1.0
        chol_solve_into(L, n, e, x)
        out[:, j] = x


@njit(cache=True)
def chol_append(L, k, col, diag, rtol):
    """Extend the Cholesky factor L[:k, :k] of a PD matrix by one row and column.

    col (k,) = the new column's off-diagonal part, diag = its diagonal entry. Writes row k
    of L and returns True, or returns False (L unchanged) when the new pivot
    diag − |L⁻¹ col|² is not above rtol · diag: the extended matrix is (numerically)
    singular. O(k²).
    """
    s = diag
    for i in range(k):
        v = col[i]
        for j in range(i):
            v -= L[i, j] * L[k, j]
        v /= L[i, i]
        L[k, i] = v
        s -= v * v
    if not (s > rtol * max(diag, 1e-300)):
        return False
    L[k, k] = np.sqrt(s)
    return True


@njit(cache=True)
def sym_eig(A, n, w, V):
    """Eigenvalues w and eigenvectors (columns of V) of the symmetric n × n A, cyclic Jacobi.

    A is destroyed. Sweeps of rotations go on until every off-diagonal element is at
    round-off (1e-15) against its two diagonal elements or the largest one; convergence is
    quadratic, a few sweeps for n ≤ 20.
    """
    floor = 0.0
    for i in range(n):
        for j in range(n):
            V[i, j] = 0.0
        V[i, i] = 1.0
        floor = max(floor, abs(A[i, i]))
    floor *= 1e-15
    for _ in range(50):
        rotated = False
        for p in range(n - 1):
            for q in range(p + 1, n):
                apq = A[p, q]
                # at round-off against the diagonal (or the matrix): rotating is pointless
                if abs(apq) <= 1e-15 * (math.sqrt(abs(A[p, p] * A[q, q])) + floor):
                    continue
                rotated = True
                # rotation angle that zeroes A[p, q]
                theta = (A[q, q] - A[p, p]) / (2.0 * apq)
                t = 1.0 / (abs(theta) + math.sqrt(theta * theta + 1.0))
                if theta < 0.0:
                    t = -t
                c = 1.0 / math.sqrt(t * t + 1.0)
                s = t * c
                for k in range(n):
                    akp = A[k, p]
                    akq = A[k, q]
                    A[k, p] = c * akp - s * akq
                    A[k, q] = s * akp + c * akq
                for k in range(n):
                    apk = A[p, k]
                    aqk = A[q, k]
                    A[p, k] = c * apk - s * aqk
                    A[q, k] = s * apk + c * aqk
                for k in range(n):
                    vkp = V[k, p]
                    vkq = V[k, q]
                    V[k, p] = c * vkp - s * vkq
                    V[k, q] = s * vkp + c * vkq
        if not rotated:
            break
    for i in range(n):
        w[i] = A[i, i]


@njit(cache=True)
def damped_inverse(A, n, eps, out):
    """out ≈ A⁻¹ for a symmetric positive semi-definite n × n A, damped when A is singular.

    A is first scaled to unit diagonal, Â = S A S with S = diag(A_ii)^(-1/2) (so that rows of
    different units, positions and orientations, compare; a zero row gets S_ii = 0). With w
    the eigenvalues of Â and w̄ = eps · max(w): out = S (Â + δ I)⁻¹ S, δ = 0 when
    min(w) ≥ w̄, otherwise δ = w̄ (1 − (min(w) / w̄)²), which is continuous in A and bounds the
    eigenvalues of (Â + δ I)⁻¹ by 1 / w̄ (Chiaverini's variable damping). A is destroyed.
    Returns (min(w), max(w), δ); a zero A gives out = 0.
    """
    if n == 0:
        return 0.0, 0.0, 0.0
    sc = np.empty(n)
    dmax = 0.0
    for i in range(n):
        dmax = max(dmax, A[i, i])
    for i in range(n):
        sc[i] = 1.0 / math.sqrt(A[i, i]) if A[i, i] > 1e-14 * dmax else 0.0
    for i in range(n):
        for j in range(n):
            A[i, j] *= sc[i] * sc[j]
    w = np.empty(n)
    V = np.empty((n, n))
    sym_eig(A, n, w, V)
    wmin = np.inf
    wmax = 0.0
    for i in range(n):
        wmin = min(wmin, w[i])
        wmax = max(wmax, w[i])
    if not wmax > 0.0:
        for i in range(n):
            for j in range(n):
                out[i, j] = 0.0
        return wmin, wmax, 0.0
    wbar = eps * wmax
    delta = 0.0
    wpos = max(wmin, 0.0)
    if wpos < wbar:
        r = wpos / wbar
        delta = wbar * (1.0 - r * r)
    for i in range(n):
        w[i] = 1.0 / (max(w[i], 0.0) + delta)
    for i in range(n):
        for j in range(i, n):
            s = 0.0
            for k in range(n):
                s += V[i, k] * w[k] * V[j, k]
            s *= sc[i] * sc[j]
            out[i, j] = s
            out[j, i] = s
    return wmin, wmax, delta
