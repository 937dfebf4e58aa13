"""Dense Cholesky factorization and solves for the small systems of the solvers: the one home.

`chol_factor` (regularized, in place) and `chol_solve`; `chol_factor_pd` (a copy, refusing a
non-positive pivot), `chol_solve_spd` (factor and solve, refusing), `chol_solve_into` (into
another vector); `chol_append` extends a factor by one row and column (the LCP's pivoting).

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
        for i in range(j + 1, n):
            s = A[i, j]
            for k in range(j):
                s -= A[i, k] * A[j, k]
            A[i, j] = s * inv
    return rank


@njit(cache=True)
def chol_solve(L, n, x):
    """Solve in place x ← (L Lᵀ)⁻¹ x with the lower factor L[:n, :n] of chol_factor."""
    for i in range(n):
        s = x[i]
        for k in range(i):
            s -= L[i, k] * x[k]
        x[i] = s / L[i, i]
    for i in range(n - 1, -1, -1):
        s = x[i]
        for k in range(i + 1, n):
            s -= L[k, i] * x[k]
        x[i] = s / L[i, i]


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
