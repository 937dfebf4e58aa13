"""The log-barrier contact model of the slides (000) and Theorem 3's general inverse (004).

On a scene with an equality, friction loss, limits and condim 1, 3, 4, 6 contacts (elliptic
cones): the barrier model's forward forces, and the inverse's forces from the forward's
constraint-space accelerations, agree (Theorem 3); both equal the minimizers scipy's
trust-region Newton finds for the same objectives written out in NumPy (A = J M⁻¹ Jᵀ from
the dense M); as κ shrinks the forces approach the soft model's; bad arguments are refused.
"""

import numpy as np
import pytest
from scipy.optimize import minimize

import jointspace as js
from jointspace import constraint as C
from tests.test_inverse import _scene

THEOREM3_TOL = 1e-8  # forward vs inverse forces, relative: both Newton to round-off
SCIPY_TOL = 1e-6  # vs scipy trust-exact (its gtol-limited accuracy)
KAPPA, KAPPA_V, VMIN = 1e-2, 1e-2, -200.0


def _setup():
    m, d, _, _ = _scene("mixed", "elliptic")
    m.opt.tolerance = 1e-14
    js.forward(m, d)
    return m, d


def _blocks(d):
    """(kind, first row, rows, μ) of each constraint: 'eq', 'fric', 'pos', 'cone'."""
    n, ne, nf = d.nefc[0], d.ne[0], d.nf[0]
    out, i = [], 0
    while i < n:
        if i < ne:
            out.append(("eq", i, 1, None))
            i += 1
        elif i < ne + nf:
            out.append(("fric", i, 1, d.efc_frictionloss[i]))
            i += 1
        elif d.efc_type[i] == C.CNSTR_CONTACT_ELLIPTIC:
            c = d.efc_id[i]
            dim = d.contact_dim[c]
            out.append(("cone", i, dim, d.contact_friction[c, :dim - 1].copy()))
            i += dim
        else:
            out.append(("pos", i, 1, None))
            i += 1
    return out


def _phi(blocks, f):
    """φ, ∇φ, ∇²φ of the force constraints; φ = inf outside."""
    n = f.shape[0]
    g, H, val = np.zeros(n), np.zeros((n, n)), 0.0
    for kind, i, k, p in blocks:
        if kind == "fric":
            a, c = p - f[i], p + f[i]
            if a <= 0 or c <= 0:
                return np.inf, g, H
            val -= np.log(a) + np.log(c)
            g[i] += 1 / a - 1 / c
            H[i, i] += 1 / a ** 2 + 1 / c ** 2
        elif kind == "pos":
            if f[i] <= 0:
                return np.inf, g, H
            val -= np.log(f[i])
            g[i] -= 1 / f[i]
            H[i, i] += 1 / f[i] ** 2
        elif kind == "cone":
            w = np.r_[1.0, -1.0 / p ** 2]
            x = f[i:i + k]
            s = np.sum(w * x * x)
            if x[0] <= 0 or s <= 0:
                return np.inf, g, H
            ds = 2 * w * x
            val -= np.log(s)
            g[i:i + k] -= ds / s
            H[i:i + k, i:i + k] += np.outer(ds, ds) / s ** 2 - np.diag(2 * w) / s
    return val, g, H


def _psi(blocks, v):
    """ψ = −Σ log(v_i − vmin) over the normal rows, with derivatives; inf outside."""
    g, h, val = np.zeros(v.shape[0]), np.zeros(v.shape[0]), 0.0
    for kind, i, _, _ in blocks:
        if kind in ("pos", "cone"):
            z = v[i] - VMIN
            if z <= 0:
                return np.inf, g, h
            val -= np.log(z)
            g[i], h[i] = -1 / z, 1 / z ** 2
    return val, g, h


def _problem(m, d):
    n = d.nefc[0]
    J = d.efc_J[:n]
    A = J @ np.linalg.solve(js.crba(m, d, d.qpos), J.T)
    b = J @ d.qacc_smooth - d.efc_aref[:n]
    return A, np.diag(d.efc_R[:n]), b, _blocks(d)


def _trust_exact(fun, x0):
    res = minimize(lambda x: fun(x)[0], x0, jac=lambda x: fun(x)[1],
                   hess=lambda x: fun(x)[2], method="trust-exact",
                   options={"gtol": 1e-11, "maxiter": 2000, "initial_trust_radius": 1e-2})
    return res.x


def _start(blocks, n, scale):
    x = np.zeros(n)
    for kind, i, _, _ in blocks:
        if kind in ("pos", "cone"):
            x[i] = scale
    return x


@pytest.mark.parametrize("kappa_v", [0.0, KAPPA_V])
def test_barrier_inverse_recovers_forward_forces(kappa_v):
    """Theorem 3: the inverse at the forward's jar returns the forward's forces."""
    m, d = _setup()
    f, jar = js.barrier_forward(m, d, KAPPA, kappa_v, VMIN)
    A, R, b, blocks = _problem(m, d)
    np.testing.assert_allclose(jar, A @ f + b, atol=1e-9 * np.max(np.abs(jar)))
    finv = js.barrier_inverse(m, d, jar, KAPPA, kappa_v, VMIN)
    scale = np.max(np.abs(f))
    assert np.max(np.abs(finv - f)) < THEOREM3_TOL * scale
    # the force barrier is active: some cone is neither at its tip nor deep inside
    assert np.isfinite(_phi(blocks, f)[0])


def test_barrier_models_match_scipy():
    """Both objectives written out in NumPy and minimized by scipy's trust-exact."""
    m, d = _setup()
    A, R, b, blocks = _problem(m, d)
    n = b.shape[0]

    def forward_cost(x):
        p, gp, Hp = _phi(blocks, x)
        v = A @ x + b
        s, gs, hs = _psi(blocks, v)
        if not np.isfinite(p + s):
            return np.inf, gp, Hp
        val = 0.5 * x @ (A + R) @ x + x @ b + KAPPA * p + KAPPA_V * s
        grad = (A + R) @ x + b + KAPPA * gp + KAPPA_V * A @ gs
        return val, grad, A + R + KAPPA * Hp + KAPPA_V * A @ np.diag(hs) @ A

    f, jar = js.barrier_forward(m, d, KAPPA, KAPPA_V, VMIN)
    ref = _trust_exact(forward_cost, _start(blocks, n, 1.0))
    assert np.max(np.abs(ref - f)) < SCIPY_TOL * np.max(np.abs(f))
    assert forward_cost(f)[0] <= forward_cost(ref)[0] + 1e-12 * abs(forward_cost(ref)[0])
    lin = jar + KAPPA_V * A @ _psi(blocks, jar)[1]

    def inverse_cost(x):
        p, gp, Hp = _phi(blocks, x)
        return (0.5 * x @ R @ x + x @ lin + KAPPA * p, R @ x + lin + KAPPA * gp,
                R + KAPPA * Hp)

    ref = _trust_exact(inverse_cost, _start(blocks, n, 1.0))
    finv = js.barrier_inverse(m, d, jar, KAPPA, KAPPA_V, VMIN)
    assert np.max(np.abs(ref - finv)) < SCIPY_TOL * np.max(np.abs(finv))


def test_small_barrier_approaches_the_soft_model():
    """As κ → 0 (no velocity barrier) the forces tend to the soft model's efc_force."""
    m, d = _setup()
    soft = d.efc_force[:d.nefc[0]]
    errs = [np.max(np.abs(js.barrier_forward(m, d, k)[0] - soft)) for k in (1e-2, 1e-4, 1e-6)]
    assert errs[0] > errs[1] > errs[2]
    assert errs[2] < 1e-3 * np.max(np.abs(soft))


def test_barrier_bad_arguments():
    m, d = _setup()
    with pytest.raises(ValueError, match="kappa"):
        js.barrier_forward(m, d, 0.0)
    with pytest.raises(ValueError, match="kappa_v"):
        js.barrier_inverse(m, d, np.zeros(d.nefc[0]), 1.0, kappa_v=-1.0)
    with pytest.raises(ValueError, match="jar"):
        js.barrier_inverse(m, d, np.zeros(d.nefc[0] + 1), 1.0)
    with pytest.raises(js.JointspaceError, match="vmin"):
        js.barrier_forward(m, d, 1.0, kappa_v=1.0, vmin=1e6)
