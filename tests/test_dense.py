"""The shared dense Cholesky (jointspace._numba.dense) against NumPy, and its pivot handling."""

import numpy as np

from jointspace._numba.dense import chol_factor, chol_solve, chol_update

TOL = 1e-12  # well-conditioned SPD systems of size ≤ 12: round-off only


def _spd(rng, n):
    B = rng.normal(size=(n, n))
    return B @ B.T + n * np.eye(n)


def test_factor_and_solve_match_numpy():
    rng = np.random.default_rng(3)
    for n in (1, 2, 5, 12):
        A = _spd(rng, n)
        b = rng.normal(size=n)
        L = A.copy()
        assert chol_factor(L, n, 1e-300) == n
        np.testing.assert_allclose(np.tril(L), np.linalg.cholesky(A), rtol=TOL, atol=TOL)
        x = b.copy()
        chol_solve(L, n, x)
        np.testing.assert_allclose(x, np.linalg.solve(A, b), rtol=TOL, atol=TOL)


def test_leading_block_of_a_larger_array():
    rng = np.random.default_rng(4)
    A = _spd(rng, 4)
    big = np.full((7, 7), np.nan)
    big[:4, :4] = A
    assert chol_factor(big, 4, 1e-300) == 4
    x = np.arange(1.0, 5.0)
    chol_solve(big, 4, x)
    np.testing.assert_allclose(A @ x, np.arange(1.0, 5.0), rtol=TOL, atol=TOL)
    assert np.isnan(big[4:, :]).all() and np.isnan(big[:, 4:]).all()


def test_deficient_pivots_are_counted_and_regularized():
    rng = np.random.default_rng(5)
    v = rng.normal(size=(4, 2))
    A = v @ v.T  # rank 2
    L = A.copy()
    assert chol_factor(L, 4, 1e-10) == 2
    assert np.all(np.isfinite(np.tril(L))) and np.all(np.diag(L) > 0)
    N = _spd(rng, 3)
    N[1, 1] = np.nan
    assert chol_factor(N, 3, 1e-12) < 3


def test_rank_one_update_and_downdate_equal_a_fresh_factor():
    rng = np.random.default_rng(5)
    for n in (1, 3, 8, 27):
        A = _spd(rng, n)
        v = rng.normal(size=n)
        v[rng.random(n) < 0.4] = 0.0  # sparse like a constraint row
        L = A.copy()
        chol_factor(L, n, 1e-300)
        assert chol_update(L, n, v.copy(), True, 1e-15)
        np.testing.assert_allclose(np.tril(L), np.linalg.cholesky(A + np.outer(v, v)),
                                   rtol=TOL, atol=TOL)
        assert chol_update(L, n, v.copy(), False, 1e-15)
        np.testing.assert_allclose(np.tril(L), np.linalg.cholesky(A), rtol=TOL, atol=TOL)


def test_downdate_that_loses_definiteness_is_refused():
    A = np.diag([4.0, 1.0])
    L = A.copy()
    chol_factor(L, 2, 1e-300)
    assert not chol_update(L, 2, np.array([0.0, 1.0]), False, 1e-15)  # A − e₂e₂ᵀ singular
