"""The sparsity index of the constraint rows (efc_J_rownnz, efc_J_colind) is exact.

For every row, efc_J is zero outside the row's index, the index is increasing and equals
MuJoCo's efc_J_colind in its sparse mode (mjJAC_SPARSE): a contact's rows span both bodies'
dof chains without their common dofs, a connect's or weld's the union of both chains, a
joint coupling its two dofs, friction-loss and limit rows their dof (three for a ball
limit). The products over the index (J x, Jᵀ f, efc_vel = J qvel) equal the dense ones.
Scenes: limits and friction loss, four-bar loops closed by connect and weld with joint
couplings, and contact scenes (humanoid, quadruped, box stack, condim-6 ball), on random
states visited in sequence on one Data so that rows shrink, grow and change pattern.
"""

import mujoco
import numpy as np
import pytest

import jointspace as js
from jointspace.solver.cost import mul_j, mul_jt
from tests.test_constraint import CONTACT_SCENES, LIMITS, LOOPS, _pair, _random_state, _row_map

PROD_TOL = 1e-14  # products over the index vs dense products, relative: the same terms, summed
NSTATES = 4


def _mj_sparse(mjm):
    mjm.opt.jacobian = mujoco.mjtJacobian.mjJAC_SPARSE
    return mujoco.MjData(mjm)


def _mj_colind(mjd, r):
    a = mjd.efc_J_rowadr[r]
    return mjd.efc_J_colind[a:a + mjd.efc_J_rownnz[r]]


def _check_index(m, d):
    """Every row below njmax: increasing index in [0, nv), J zero outside it."""
    nv = m.nv
    for i in range(m.njmax):
        n = int(d.efc_J_rownnz[i])
        cols = d.efc_J_colind[i, :n]
        assert 0 <= n <= nv
        assert np.all(np.diff(cols) > 0) and np.all((cols >= 0) & (cols < nv)), f"row {i}"
        outside = np.ones(nv, dtype=bool)
        outside[cols] = False
        assert not np.any(d.efc_J[i, outside]), f"row {i}: nonzero outside its index"


def _check_products(m, d, rng):
    n = int(d.nefc[0])
    J = d.efc_J[:n]
    x = rng.normal(size=m.nv)
    f = rng.normal(size=max(n, 1))
    jx = np.empty(max(n, 1))
    jtf = np.empty(m.nv)
    mul_j(d._s, x, jx)
    mul_jt(d._s, f, jtf)
    scale = max(1.0, np.abs(J).max(initial=0.0))
    np.testing.assert_allclose(jx[:n], J @ x, rtol=0, atol=PROD_TOL * scale * np.abs(x).sum())
    np.testing.assert_allclose(jtf, J.T @ f[:n], rtol=0,
                               atol=PROD_TOL * scale * np.abs(f).sum())
    np.testing.assert_allclose(d.efc_vel[:n], J @ d.qvel, rtol=0,
                               atol=PROD_TOL * scale * max(1.0, np.abs(d.qvel).sum()))
    np.testing.assert_allclose(d.qfrc_constraint, J.T @ d.efc_force[:n], rtol=0,
                               atol=PROD_TOL * scale * max(1.0, np.abs(d.efc_force[:n]).sum()))


@pytest.mark.parametrize("xml", [LIMITS, LOOPS], ids=["limits", "loops"])
def test_index_of_equality_friction_and_limit_rows(xml):
    """Rows of equality, friction-loss and limit constraints: index = MuJoCo's sparse colind."""
    m, mjm, _ = _pair(xml)
    mjd = _mj_sparse(mjm)
    d = js.make_data(m)
    rng = np.random.default_rng(0)
    for _ in range(NSTATES):
        qpos, qvel = _random_state(mjm, rng)
        mjd.qpos[:] = qpos
        mjd.qvel[:] = qvel
        mujoco.mj_forward(mjm, mjd)
        d.qpos[:] = qpos
        d.qvel[:] = qvel
        js.forward(m, d)
        assert d.nefc[0] == mjd.nefc > 0
        for r in range(mjd.nefc):
            np.testing.assert_array_equal(d.efc_J_colind[r, :d.efc_J_rownnz[r]],
                                          _mj_colind(mjd, r), err_msg=f"row {r}")
        _check_index(m, d)
        _check_products(m, d, rng)


@pytest.mark.parametrize("name", list(CONTACT_SCENES))
def test_index_of_contact_rows(name):
    """Contact rows along a MuJoCo trajectory: index = MuJoCo's sparse colind, row by row."""
    xml, steps, qvel = CONTACT_SCENES[name]
    m, mjm, _ = _pair(xml)
    mjm.opt.cone = mujoco.mjtCone.mjCONE_ELLIPTIC if name == "ball_condim6" else 0
    m.opt.cone = "elliptic" if name == "ball_condim6" else "pyramidal"
    mjd = _mj_sparse(mjm)
    if qvel is not None:
        mjd.qvel[:] = qvel
    d = js.make_data(m)
    rng = np.random.default_rng(1)
    # states along the fall and at rest: contacts appear, vanish and change bodies
    for k in range(NSTATES):
        for _ in range(steps // NSTATES if k else 1):
            mujoco.mj_step(mjm, mjd)
        mujoco.mj_forward(mjm, mjd)
        d.qpos[:] = mjd.qpos
        d.qvel[:] = mjd.qvel
        js.forward(m, d)
        assert d.nefc[0] == mjd.nefc
        rows = _row_map(d, mjd)
        for r in range(mjd.nefc):
            ours = rows[r]
            np.testing.assert_array_equal(d.efc_J_colind[ours, :d.efc_J_rownnz[ours]],
                                          _mj_colind(mjd, r), err_msg=f"row {r}")
        _check_index(m, d)
        _check_products(m, d, rng)
    assert mjd.ncon > 0
