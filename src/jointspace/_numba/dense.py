"""Dense Cholesky factorization and solves for the small systems of the solvers.

One factorization serves every dense symmetric system in the package: Newton's and the
interior-point Hessians, the barrier model's, PGS's friction subproblem, the LCP's and
rigid-contact inverse's Gram and mass blocks, and the control QPs'. Callers that need a
strictly positive definite matrix check that the returned rank is full; the solvers use the
regularized factor as it is.
"""

import math

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
