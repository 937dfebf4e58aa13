"""Complementarity solvers (jointspace.rigid.lcp) against brute force, LP feasibility and KKT.

Lemke (lexicographic) and the warm-started principal pivoting method (PPM) on 1,200 random
small LCPs of every class the rigid-contact inverse dynamics produces: positive definite,
positive semidefinite (symmetric and not), strictly copositive, and the copositive
Stewart–Trinkle friction LCPs; infeasible ones must be reported, with scipy's LP solver as
the independent witness. References: a NumPy enumeration of every complementary basis
(written here, independent of the compiled code), scipy.optimize.linprog, KKT conditions.
"""

import itertools

import numpy as np
import pytest
from scipy.optimize import linprog

from jointspace.errors import JointspaceError
from jointspace.rigid import lcp

# w = Mz + q, z ≥ 0, w ≥ 0, zᵀw = 0 within 1e-9 (the bound; entries of M and q are
# O(1), so round-off of the n ≤ 8 principal solves is ~1e-13)
TOL = 1e-9
# agreement of w (unique for PSD symmetric M) or z (unique for P-matrices) with brute force:
# both come from one linear solve each
AGREE = 1e-8
NCASES = 200  # per class, six classes: 1,200 LCPs


def brute_force(M, q, tol=1e-10):
    """Every solution with a nonsingular principal system, by NumPy (2ⁿ solves)."""
    n = q.size
    sols = []
    for k in range(n + 1):
        for a in itertools.combinations(range(n), k):
            a = list(a)
            z = np.zeros(n)
            if k:
                A = M[np.ix_(a, a)]
                if np.linalg.cond(A) > 1e12:
                    continue
                z[a] = np.linalg.solve(A, -q[a])
            w = M @ z + q
            if z.min() >= -tol and w.min() >= -tol:
                sols.append(np.maximum(z, 0.0))
    return sols


def feasible(M, q):
    """Whether {z ≥ 0 : Mz + q ≥ 0} is nonempty, by scipy's LP solver (HiGHS)."""
    n = q.size
    res = linprog(np.zeros(n), A_ub=-M, b_ub=q, bounds=[(0, None)] * n, method="highs")
    return res.status == 0


def assert_solution(M, q, z):
    scale = max(1.0, np.abs(q).max())
    w = M @ z + q
    assert z.min() >= -TOL * scale
    assert w.min() >= -TOL * scale
    assert abs(z @ w) <= TOL * scale * max(1.0, np.abs(z).max())


def friction_lcp(rng, nc, k, p):
    """Stewart–Trinkle LCP of nc contacts with k cone edges on p free dofs (paper 002 §5)."""
    Nr = rng.normal(size=(nc, p))
    Dr = np.zeros((nc * k, p))
    T = rng.normal(size=(2 * nc, p))
    for c in range(nc):
        for e in range(k):
            th = 2 * np.pi * e / k
            Dr[c * k + e] = np.cos(th) * T[2 * c] + np.sin(th) * T[2 * c + 1]
    B = rng.normal(size=(p, p))
    G = np.linalg.inv(B @ B.T + 0.1 * np.eye(p))
    J = np.vstack([Nr, Dr])
    A = J @ G @ J.T
    n = nc + nc * k + nc
    M = np.zeros((n, n))
    M[:nc + nc * k, :nc + nc * k] = A
    mu = rng.uniform(0.1, 1.5, nc)
    for c in range(nc):
        M[nc + c * k:nc + (c + 1) * k, nc + nc * k + c] = 1.0
        M[nc + nc * k + c, nc + c * k:nc + (c + 1) * k] = -1.0
        M[nc + nc * k + c, c] = mu[c]
    q = np.concatenate([J @ rng.normal(size=p), np.zeros(nc)])
    return M, q


def make_case(kind, rng):
    n = int(rng.integers(1, 9))
    if kind == "pd":
        A = rng.normal(size=(n, n))
        return A @ A.T + 0.1 * np.eye(n), rng.normal(size=n)
    if kind == "p_nonsym":
        A = rng.normal(size=(n, n))
        S = rng.normal(size=(n, n))
        return A @ A.T + (S - S.T) + 0.1 * np.eye(n), rng.normal(size=n)
    if kind == "psd":
        B = rng.normal(size=(n, int(rng.integers(0, n + 1))))
        return B @ B.T, rng.normal(size=n)
    if kind == "psd_nonsym":
        B = rng.normal(size=(n, int(rng.integers(0, n + 1))))
        S = rng.normal(size=(n, n))
        return B @ B.T + (S - S.T), rng.normal(size=n)
    if kind == "copositive":
        # strictly copositive: positive entries (zᵀMz > 0 for z ≥ 0, z ≠ 0)
        return rng.uniform(0.05, 1.0, (n, n)), rng.normal(size=n)
    nc = int(rng.integers(1, 3))
    return friction_lcp(rng, nc, 4, int(rng.integers(2, 7)))


KINDS = ("pd", "p_nonsym", "psd", "psd_nonsym", "copositive", "friction")


@pytest.mark.parametrize("kind", KINDS)
def test_lemke_random(kind):
    """Lemke solves every random LCP of the class, and brute force agrees on existence."""
    rng = np.random.default_rng(KINDS.index(kind) + 11)
    solved = 0
    for _ in range(NCASES):
        M, q = make_case(kind, rng)
        res = lcp.solve_lcp(M, q, method="lemke")
        sols = brute_force(M, q) if kind in ("pd", "p_nonsym", "psd") or res.status != "solved" \
            else None
        if res.status == "solved":
            assert_solution(M, q, res.z)
            solved += 1
            if kind in ("pd", "p_nonsym"):
                # P-matrix: the solution is unique
                assert len(sols) == 1
                np.testing.assert_allclose(res.z, sols[0], atol=AGREE)
            if kind == "psd":
                # symmetric PSD: w = Mz + q is the same at every solution
                np.testing.assert_allclose(M @ res.z, M @ sols[0], atol=AGREE)
        else:
            # a secondary ray: only allowed when no solution exists at all
            assert res.status == "infeasible"
            assert not sols
            assert kind in ("psd", "psd_nonsym")
            assert not feasible(M, q)
    # every class except the PSD ones always has a solution
    if kind not in ("psd", "psd_nonsym"):
        assert solved == NCASES


@pytest.mark.parametrize("kind", ("pd", "psd"))
def test_ppm_random(kind):
    """PPM on symmetric PD/PSD LCPs: solutions, w agreeing with Lemke and brute force."""
    rng = np.random.default_rng(31 + (kind == "psd"))
    for _ in range(NCASES):
        M, q = make_case(kind, rng)
        res = lcp.solve_lcp(M, q, method="ppm")
        ref = lcp.solve_lcp(M, q, method="lemke")
        assert (res.status == "solved") == (ref.status == "solved")
        if res.status == "solved":
            assert_solution(M, q, res.z)
            np.testing.assert_allclose(M @ res.z, M @ ref.z, atol=AGREE)
            np.testing.assert_allclose(res.w[res.active], 0.0, atol=TOL)
        else:
            assert res.status == "infeasible"
            assert not feasible(M, q)


def infeasible_psd(rng, n, r):
    """A PSD LCP with a Farkas certificate y ≥ 0, My = 0, qᵀy < 0 (so no z ≥ 0 has w ≥ 0)."""
    y = rng.uniform(0.1, 1.0, n)
    B = rng.normal(size=(n, r))
    B -= np.outer(y, y @ B) / (y @ y)
    q = rng.normal(size=n)
    q -= y * ((q @ y) + rng.uniform(0.1, 1.0)) / (y @ y)
    return B @ B.T, q


def test_infeasible_reported():
    """Infeasible PSD LCPs: Lemke ends on a ray, PPM on an unbounded direction; LP agrees."""
    rng = np.random.default_rng(5)
    for _ in range(100):
        n = int(rng.integers(1, 8))
        M, q = infeasible_psd(rng, n, int(rng.integers(0, n)))
        assert not feasible(M, q)
        assert lcp.solve_lcp(M, q, method="lemke").status == "infeasible"
        assert lcp.solve_lcp(M, q, method="ppm").status == "infeasible"
        assert lcp.lcp_solutions(M, q).shape[0] == 0


def test_factored_ppm_matches_dense():
    """PPM given M = N Q Nᵀ (many rows, low rank: the contact case) equals the dense solve."""
    rng = np.random.default_rng(8)
    for _ in range(50):
        n, p = int(rng.integers(4, 30)), int(rng.integers(1, 7))
        N = rng.normal(size=(n, p))
        B = rng.normal(size=(p, p))
        Q = B @ B.T
        q = N @ rng.normal(size=p) + rng.uniform(0.0, 0.5, n)
        res = lcp.solve_lcp(None, q, method="ppm", factor=(N, Q))
        M = N @ Q @ N.T
        ref = lcp.solve_lcp(M, q, method="lemke")
        assert res.status == ref.status == "solved"
        assert_solution(M, q, res.z)
        np.testing.assert_allclose(M @ res.z, M @ ref.z, atol=AGREE * max(1, np.abs(q).max()))
        # at most rank(M) = p positive entries (Appendix F)
        assert res.active.size <= p


def test_warm_start_pivots():
    """Warm-started PPM on a slowly changing contact-like LCP needs ≤ 2 pivots per step.

    Eight contacts on a 6-dof free body (M = N Q Nᵀ of rank 6, indeterminate like four
    feet on the ground), the rows and q drifting a little each step; the previous active set
    warm-starts each solve. Cold starts are counted too, to show what warm starting saves.
    """
    rng = np.random.default_rng(2)
    n, p = 8, 6
    N0 = rng.normal(size=(n, p))
    dN = rng.normal(size=(n, p))
    B = rng.normal(size=(p, p))
    Q = np.linalg.inv(B @ B.T + np.eye(p))
    x0, dx = rng.normal(size=p), rng.normal(size=p)
    warm = None
    warm_pivots, cold_pivots = [], []
    for t in np.linspace(0.0, 1.0, 200):
        N = N0 + 0.3 * np.sin(t) * dN
        q = N @ (x0 + t * dx) - 0.5
        res = lcp.solve_lcp(None, q, method="ppm", factor=(N, Q), warm=warm)
        cold = lcp.solve_lcp(None, q, method="ppm", factor=(N, Q))
        assert res.status == cold.status == "solved"
        assert_solution(N @ Q @ N.T, q, res.z)
        warm = res.active
        warm_pivots.append(res.pivots)
        cold_pivots.append(cold.pivots)
    assert np.mean(warm_pivots[1:]) <= 2.0
    assert np.mean(warm_pivots[1:]) < np.mean(cold_pivots[1:])


def test_enumeration_matches_brute_force():
    """lcp_solutions (compiled, Algorithm 3's search) finds the NumPy brute force's set."""
    rng = np.random.default_rng(13)
    for _ in range(60):
        M, q = make_case(("copositive", "friction", "psd_nonsym")[_ % 3], rng)
        if q.size > 10:
            continue
        ours = lcp.lcp_solutions(M, q)
        ref = brute_force(M, q)
        assert ours.shape[0] == len(ref)
        for z in ref:
            assert np.min(np.abs(ours - z).max(axis=1)) <= AGREE
        for z in ours:
            assert_solution(M, q, z)


def test_find_indices_independent_and_maximal():
    """Algorithm 1 keeps rows with a PD Gram matrix whose count is the rank of all rows."""
    rng = np.random.default_rng(21)
    for _ in range(50):
        p = int(rng.integers(1, 8))
        rows = int(rng.integers(1, 12))
        J = rng.normal(size=(rows, p)) @ rng.normal(size=(p, p))
        J[rng.integers(0, rows)] = J[0] * 2.0 if rows > 1 else J[0]
        B = rng.normal(size=(p, p))
        G = B @ B.T + 0.1 * np.eye(p)
        kept = lcp.find_indices(J, G)
        assert kept.size == np.linalg.matrix_rank(J @ G @ J.T, tol=1e-8)
        assert np.linalg.eigvalsh(J[kept] @ G @ J[kept].T).min() > 0.0
        assert list(kept) == sorted(kept)


def test_bad_input():
    """Bad arguments get a JointspaceError naming the argument, never a Numba traceback."""
    M = np.eye(3)
    with pytest.raises(JointspaceError, match="argument q must have shape"):
        lcp.solve_lcp(M, np.zeros(2))
    with pytest.raises(JointspaceError, match=r"argument q\[1\] is not finite"):
        lcp.solve_lcp(M, np.array([0.0, np.nan, 1.0]))
    with pytest.raises(JointspaceError, match="argument M must be square"):
        lcp.solve_lcp(np.ones((2, 3)), np.zeros(2))
    with pytest.raises(JointspaceError, match="method must be one of"):
        lcp.solve_lcp(M, np.zeros(3), method="pgs")
    with pytest.raises(JointspaceError, match="symmetric PSD"):
        lcp.solve_lcp(np.array([[1.0, 1.0], [0.0, 1.0]]), np.zeros(2), method="ppm")
    with pytest.raises(JointspaceError, match="warm indices"):
        lcp.solve_lcp(M, np.zeros(3), method="ppm", warm=[5])


def test_qp_eq_nonneg_matches_scipy():
    """The second-stage QP (equalities, x ≥ 0) reaches scipy SLSQP's optimum and its KKT."""
    from scipy.optimize import minimize

    rng = np.random.default_rng(17)
    for _ in range(40):
        n, m = int(rng.integers(2, 10)), int(rng.integers(0, 4))
        B = rng.normal(size=(n, n))
        H = B @ B.T + 0.05 * np.eye(n)
        g = rng.normal(size=n)
        E = rng.normal(size=(m, n))
        if m > 1:
            E[-1] = E[0] + E[1]  # a redundant row must be harmless
        x0 = rng.uniform(0.0, 1.0, n) * (rng.uniform(size=n) < 0.7)
        e = E @ x0
        x = x0.copy()
        _, ok = lcp.qp_eq_nonneg(H, g, E, x, 200, 1e-12)
        assert ok
        ref = minimize(lambda y: 0.5 * y @ H @ y + g @ y, x0, jac=lambda y: H @ y + g,
                       bounds=[(0, None)] * n, method="SLSQP", options={"ftol": 1e-14},
                       constraints=[{"type": "eq", "fun": lambda y: E @ y - e,
                                     "jac": lambda y: E}] if m else [])
        f = 0.5 * x @ H @ x + g @ x
        assert x.min() >= 0.0
        np.testing.assert_allclose(E @ x, e, atol=1e-9)
        assert f <= ref.fun + 1e-8 * max(1.0, abs(ref.fun))
