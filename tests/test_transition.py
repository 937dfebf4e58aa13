"""Finite-differenced step Jacobians (transition_derivatives) against mujoco.mjd_transitionFD.

Both libraries step the same state (MuJoCo's, after it settled into contact) from the same
warm start; the solvers run their iterations with tolerance 0, as MuJoCo's documentation
advises for finite differences, so that every perturbed solve ends at the same optimum in
both. Then A and B differ by the steps' difference divided by eps.
"""

import math

import mujoco
import numpy as np
import pytest

import jointspace as js
from jointspace.step import _k_transition
from tests.test_constraint import CONTACT_SCENES, _pair

TOL = 1e-6  # relative to the largest entry: two steps that agree to ~1e-14, divided by eps
EPS = 1e-6
ITERATIONS = 30  # Newton converges in a few; tolerance 0 runs them all, on both sides


def _setup(name, integrator="Euler", cone="pyramidal"):
    xml, steps, qvel = CONTACT_SCENES[name]
    m, mjm, mjd = _pair(xml)
    mjm.opt.integrator = getattr(mujoco.mjtIntegrator, f"mjINT_{integrator.upper()}")
    mjm.opt.cone = 0 if cone == "pyramidal" else 1
    m.opt.integrator = integrator
    m.opt.cone = cone
    if qvel is not None:
        mjd.qvel[:] = qvel
    for _ in range(steps):
        mujoco.mj_step(mjm, mjd)
    rng = np.random.default_rng(sum(map(ord, name)))
    lo, hi = mjm.actuator_ctrlrange[:, 0], mjm.actuator_ctrlrange[:, 1]
    mjd.ctrl[:] = rng.uniform(lo, hi)
    if mjm.nu >= 2:  # one control at each limit: one-sided differences, inward
        mjd.ctrl[0], mjd.ctrl[1] = lo[0], hi[1]
    for mm in (m, mjm):
        mm.opt.tolerance = 0.0
        mm.opt.iterations = ITERATIONS
    d = js.make_data(m)
    d.time = mjd.time
    d.qpos[:] = mjd.qpos
    d.qvel[:] = mjd.qvel
    d.ctrl[:] = mjd.ctrl
    d.qacc_warmstart[:] = mjd.qacc_warmstart
    return m, d, mjm, mjd


def _mujoco(mjm, mjd, centered):
    nx = 2 * mjm.nv + mjm.na
    A, B = np.zeros((nx, nx)), np.zeros((nx, mjm.nu))
    mujoco.mjd_transitionFD(mjm, mjd, EPS, centered, A, B, None, None)
    return A, B


def _close(actual, desired, what):
    assert actual.shape == desired.shape
    if desired.size == 0:
        return
    scale = max(1.0, float(np.max(np.abs(desired))))
    err = float(np.max(np.abs(actual - desired)))
    assert err <= TOL * scale, f"{what}: max error {err:.3g} > {TOL:.1g} × {scale:.3g}"


@pytest.mark.parametrize("centered", [False, True])
@pytest.mark.parametrize("name,integrator,cone", [
    ("humanoid_lying", "Euler", "pyramidal"), ("humanoid_lying", "implicitfast", "elliptic"),
    ("quadruped_standing", "Euler", "elliptic"), ("box_stack", "implicit", "pyramidal")])
def test_matches_mjd_transition_fd(name, integrator, cone, centered):
    """A and B equal MuJoCo's with contacts, each integrator but RK4, both cones."""
    m, d, mjm, mjd = _setup(name, integrator, cone)
    state = (d.qpos.copy(), d.qvel.copy(), d.ctrl.copy(), d.qacc_warmstart.copy(), d.time)
    A, B = js.transition_derivatives(m, d, EPS, centered)
    Am, Bm = _mujoco(mjm, mjd, centered)
    assert d.ncon[0] == mjd.ncon > 0
    if name == "humanoid_lying":
        assert d.ncon[0] >= 10
    _close(A, Am, f"{name} A")
    _close(B, Bm, f"{name} B")
    # the state is restored
    np.testing.assert_array_equal(d.qpos, state[0])
    np.testing.assert_array_equal(d.qvel, state[1])
    np.testing.assert_array_equal(d.ctrl, state[2])
    np.testing.assert_array_equal(d.qacc_warmstart, state[3])
    assert d.time == state[4]


@pytest.mark.parametrize("integrator", ["Euler", "implicitfast", "implicit"])
def test_skipping_the_position_stage_changes_nothing(integrator):
    """Reusing the position stage (MuJoCo's mj_stepSkip) gives the full steps' Jacobians.

    Control and velocity columns skip it; the result is the same bit for bit.
    """
    m, d, _, _ = _setup("humanoid_lying", integrator, "elliptic")
    out = []
    for skip in (True, False):
        A, B = np.empty((2 * m.nv, 2 * m.nv)), np.empty((2 * m.nv, m.nu))
        assert _k_transition.ep(d._s, EPS, True, skip, 0, m.nu + 2 * m.nv, A, B) == 0
        out.append((A, B))
    np.testing.assert_array_equal(out[0][0], out[1][0])
    np.testing.assert_array_equal(out[0][1], out[1][1])


def test_threads_give_the_same_jacobians():
    """Columns split over threads, each on its own copy of d: bit for bit one thread's."""
    m, d, _, _ = _setup("humanoid_lying", "Euler", "elliptic")
    state = (d.qpos.copy(), d.qvel.copy(), d.qacc_warmstart.copy())
    one = js.transition_derivatives(m, d, EPS, True)
    for n in (2, 3, 200):
        many = js.transition_derivatives(m, d, EPS, True, nthread=n)
        np.testing.assert_array_equal(many[0], one[0])
        np.testing.assert_array_equal(many[1], one[1])
    np.testing.assert_array_equal(d.qpos, state[0])
    np.testing.assert_array_equal(d.qvel, state[1])
    np.testing.assert_array_equal(d.qacc_warmstart, state[2])


@pytest.mark.parametrize("nthread", [0, -1, 1.5, True, "2"])
def test_bad_nthread_is_refused(nthread):
    m = js.models.arm7()
    with pytest.raises(ValueError, match="transition_derivatives: argument nthread"):
        js.transition_derivatives(m, js.make_data(m), nthread=nthread)


def test_shapes_and_a_step_without_contacts():
    """A contact-free pendulum: B is (2nv, nu) and A's velocity block is ≈ the identity."""
    m = js.models.arm7()
    d = js.make_data(m)
    A, B = js.transition_derivatives(m, d)
    assert A.shape == (2 * m.nv, 2 * m.nv) and B.shape == (2 * m.nv, m.nu)
    h = m.opt.timestep
    assert np.allclose(A[:m.nv, m.nv:], h * np.eye(m.nv), atol=10 * h * h)


@pytest.mark.parametrize("eps", [0.0, -1e-6, math.nan, math.inf, True, "1e-6", None])
def test_bad_eps_is_refused(eps):
    m = js.models.arm7()
    d = js.make_data(m)
    with pytest.raises(ValueError, match="transition_derivatives: argument eps"):
        js.transition_derivatives(m, d, eps)


def test_rk4_is_refused():
    m = js.models.arm7()
    m.opt.integrator = "RK4"
    with pytest.raises(ValueError, match="RK4 integrator is not supported"):
        js.transition_derivatives(m, js.make_data(m))


def test_wrong_data_is_refused():
    m = js.models.arm7()
    with pytest.raises(ValueError, match="different model"):
        js.transition_derivatives(m, js.make_data(js.models.humanoid()))
