"""Analytical derivatives of RNEA and ABA against Pinocchio and central finite differences.

Pinocchio's computeRNEADerivatives / computeABADerivatives are the oracle on fixed-base
models (URDF robots of example-robot-data, and seeded random trees with hinge, slide and
ball joints built in Pinocchio): there both libraries take the q-derivative in the same
tangent space (a ball's angular velocity in its local frame), so the matrices compare after
the dof permutation. Free joints use another velocity frame in Pinocchio (local linear
velocity), and Pinocchio's f_ext turn with the body while ours (MuJoCo's xfrc_applied) are
world-fixed: those cases are checked against central differences of our own rnea and aba,
perturbing q on the manifold through integrate_pos.
"""

import warnings

import numpy as np
import pytest

import jointspace as js
from jointspace.errors import JointspaceWarning, SingularMassError
from tests._models import PinAdapter, pinocchio_tree, random_state, random_tree_desc
from tests._util import erd_robots_dir

TOL_PIN = 1e-9  # relative to the largest entry: the same derivatives by other recursions
TOL_FD = 1e-6  # relative: central differences with EPS, truncation O(EPS²), rounding 1e-16/EPS
EPS = 1e-5  # ABA's differences lose ~1e-11 absolute to rounding on random trees: at 1e-6
#             that reached 3.5e-6 relative (measured), at 1e-5 at most 2e-7
NSTATES = 5

FD_MODELS = {
    "humanoid": lambda: js.models.humanoid(),
    "quadruped": lambda: js.models.quadruped(),
    "chain": lambda: js.models.chain(8),
    **{f"tree{seed}": (lambda seed=seed, n=n, br=br, arm=arm: js.load_string(
        random_tree_desc(seed, n, branching=br, armature=arm, max_joints=3).mjcf()))
       for seed, n, br, arm in [(20, 6, 0.0, 0.0), (21, 10, 0.4, 0.05), (22, 14, 0.6, 0.0)]},
}


def _close(actual, desired, what, tol):
    """Assert |actual - desired| <= tol · max(1, max |desired|)."""
    scale = max(1.0, float(np.max(np.abs(desired))))
    err = float(np.max(np.abs(np.asarray(actual) - desired)))
    assert err <= tol * scale, f"{what}: max error {err:.3g} > {tol:.1g} × {scale:.3g}"


def _fd_q(f, m, q):
    """Central differences of f along integrate_pos(q, ±EPS e_j), column by column."""
    cols = []
    for j in range(m.nv):
        e = np.zeros(m.nv)
        e[j] = EPS
        cols.append((f(js.integrate_pos(m, q, e, 1.0)) - f(js.integrate_pos(m, q, -e, 1.0)))
                    / (2 * EPS))
    return np.array(cols).T


def _fd_v(f, v):
    """Central differences of f at v, column by column."""
    cols = []
    for j in range(v.shape[0]):
        e = np.zeros(v.shape[0])
        e[j] = EPS
        cols.append((f(v + e) - f(v - e)) / (2 * EPS))
    return np.array(cols).T


@pytest.mark.parametrize("name", list(FD_MODELS))
@pytest.mark.parametrize("with_fext", [False, True])
def test_derivatives_match_finite_differences(name, with_fext):
    """∂rnea/∂q (tangent), ∂rnea/∂v, M; ∂aba/∂q, ∂aba/∂v, M⁻¹ — free and ball joints too."""
    m = FD_MODELS[name]()
    d = js.make_data(m)
    rng = np.random.default_rng(sum(map(ord, name)) + with_fext)
    for _ in range(NSTATES):
        q, v, a = random_state(m, rng)
        f_ext = rng.normal(size=(m.nbody, 6)) if with_fext else None
        dq, dv, M = js.rnea_derivatives(m, d, q, v, a, f_ext)
        _close(dq, _fd_q(lambda x: js.rnea(m, d, x, v, a, f_ext), m, q), f"{name} dtau_dq",
               TOL_FD)
        _close(dv, _fd_v(lambda x: js.rnea(m, d, q, x, a, f_ext), v), f"{name} dtau_dv",
               TOL_FD)
        _close(M, js.crba(m, d, q), f"{name} M", TOL_PIN)
        tau = js.rnea(m, d, q, v, a, f_ext)
        ddq, ddv, Minv = js.aba_derivatives(m, d, q, v, tau, f_ext)
        _close(d.qacc, a, f"{name} qacc", TOL_PIN)
        _close(ddq, _fd_q(lambda x: js.aba(m, d, x, v, tau, f_ext), m, q), f"{name} ddq_dq",
               TOL_FD)
        _close(ddv, _fd_v(lambda x: js.aba(m, d, q, x, tau, f_ext), v), f"{name} ddq_dv",
               TOL_FD)
        _close(Minv, js.minv(m, d, q), f"{name} Minv", TOL_PIN)


def test_derivatives_of_each_joint_kind_alone():
    """One free, ball, hinge or slide joint under a pendulum: every group rule on its own."""
    for joint in ('<freejoint/>', '<joint type="ball"/>', '<joint type="hinge" axis="0 1 1"/>',
                  '<joint type="slide" axis="1 0 1"/>'):
        xml = f"""<mujoco><worldbody><body pos="0.1 0.2 1" euler="10 20 30">{joint}
          <geom type="capsule" fromto="0 0 0 0.1 0.3 -0.4" size="0.05"/>
          <body pos="0.1 0 -0.4"><joint type="ball"/><joint type="slide" axis="0 1 0"/>
            <geom type="box" size="0.1 0.05 0.2" pos="0.05 0 -0.1"/></body>
        </body></worldbody></mujoco>"""
        m = js.load_string(xml)
        d = js.make_data(m)
        rng = np.random.default_rng(7)
        q, v, a = random_state(m, rng)
        f_ext = rng.normal(size=(m.nbody, 6))
        dq, dv, _ = js.rnea_derivatives(m, d, q, v, a, f_ext)
        _close(dq, _fd_q(lambda x: js.rnea(m, d, x, v, a, f_ext), m, q), joint, TOL_FD)
        _close(dv, _fd_v(lambda x: js.rnea(m, d, q, x, a, f_ext), v), joint, TOL_FD)


# ── Pinocchio ──────────────────────────────────────────────────────────────────────────



URDFS = {
    "panda": "panda_description/urdf/panda.urdf",
    "ur5": "ur_description/urdf/ur5_robot.urdf",
    "solo12": "solo_description/robots/solo12.urdf",
    "talos_arm": "talos_data/robots/talos_left_arm.urdf",
}
TREES = {
    f"tree{seed}": dict(seed=seed, nbody=n, branching=br, armature=arm)
    for seed, n, br, arm in [(30, 5, 0.0, 0.0), (31, 9, 0.4, 0.03), (32, 14, 0.6, 0.0),
                             (33, 18, 0.3, 0.01)]
}


def _pin_models(pin, name):
    if name in URDFS:
        robots = erd_robots_dir()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", JointspaceWarning)
            m = js.load(robots / URDFS[name], visual=False)
        pm = pin.buildModelFromUrdf(str(robots / URDFS[name]))
    else:
        desc = random_tree_desc(**TREES[name], free_root=False)
        m = js.load_string(desc.mjcf())
        pm = pinocchio_tree(desc)
    return m, js.make_data(m), pm, pm.createData(), PinAdapter(m, pm)


@pytest.mark.parametrize("name", [*URDFS, *TREES])
def test_derivatives_match_pinocchio(name):
    """computeRNEADerivatives and computeABADerivatives on fixed-base robots and trees."""
    pin = pytest.importorskip("pinocchio")
    m, d, pm, pd, ad = _pin_models(pin, name)
    rng = np.random.default_rng(sum(map(ord, name)))
    for _ in range(NSTATES * 4):
        q, v, a = random_state(m, rng)
        qp, vp, ap = ad.q(q), ad.v(q, v), ad.a(q, v, a)
        P = ad.b_matrix(q)
        dq, dv, M = js.rnea_derivatives(m, d, q, v, a)
        pdq, pdv, pM = (np.array(x) for x in pin.computeRNEADerivatives(pm, pd, qp, vp, ap))
        _close(dq, P @ pdq @ P.T, f"{name} dtau_dq", TOL_PIN)
        _close(dv, P @ pdv @ P.T, f"{name} dtau_dv", TOL_PIN)
        _close(M, P @ (np.triu(pM) + np.triu(pM, 1).T) @ P.T, f"{name} M", TOL_PIN)
        tau = js.rnea(m, d, q, v, a)
        ddq, ddv, Minv = js.aba_derivatives(m, d, q, v, tau)
        pdq, pdv, pMinv = (np.array(x) for x in pin.computeABADerivatives(
            pm, pd, qp, vp, ad.tau_to_pin(q, tau)))
        _close(ddq, P @ pdq @ P.T, f"{name} ddq_dq", TOL_PIN)
        _close(ddv, P @ pdv @ P.T, f"{name} ddq_dv", TOL_PIN)
        _close(Minv, P @ (np.triu(pMinv) + np.triu(pMinv, 1).T) @ P.T, f"{name} Minv", TOL_PIN)


# ── arguments ──────────────────────────────────────────────────────────────────────────


def test_lists_and_views_are_accepted():
    """Lists and strided views go through the validated path and give the same matrices."""
    m = js.models.humanoid()
    d = js.make_data(m)
    q, v, a = random_state(m, np.random.default_rng(1))
    ref = js.rnea_derivatives(m, d, q, v, a)
    got = js.rnea_derivatives(m, d, list(q), list(v), np.repeat(a, 2)[::2])
    for x, y in zip(got, ref):
        np.testing.assert_array_equal(x, y)
    tau = js.rnea(m, d, q, v, a)
    ref = js.aba_derivatives(m, d, q, v, tau)
    got = js.aba_derivatives(m, d, list(q), list(v), list(tau))
    for x, y in zip(got, ref):
        np.testing.assert_array_equal(x, y)


def test_wrong_shapes_name_the_argument():
    m = js.models.humanoid()
    d = js.make_data(m)
    q, v, a = random_state(m, np.random.default_rng(2))
    with pytest.raises(ValueError, match=r"rnea_derivatives: argument q must have shape"):
        js.rnea_derivatives(m, d, q[:-1], v, a)
    with pytest.raises(ValueError, match=r"rnea_derivatives: argument a must have shape"):
        js.rnea_derivatives(m, d, q, v, np.zeros(m.nv + 1))
    with pytest.raises(ValueError, match=r"rnea_derivatives: argument f_ext must have shape"):
        js.rnea_derivatives(m, d, q, v, a, np.zeros((m.nbody, 3)))
    with pytest.raises(ValueError, match=r"aba_derivatives: argument tau must have shape"):
        js.aba_derivatives(m, d, q, v, np.zeros(2))
    with pytest.raises(ValueError, match=r"aba_derivatives: argument v must have shape"):
        js.aba_derivatives(m, d, q, v[:3], a)
    with pytest.raises(ValueError, match="different model"):
        js.rnea_derivatives(js.models.chain(3), d, q, v, a)


def test_singular_mass_is_refused():
    """aba_derivatives needs M⁻¹: a dof that moves no mass raises, naming it."""
    xml = """<mujoco><worldbody><body name="arm"><joint name="shoulder" axis="0 1 0"/>
      <geom type="capsule" fromto="0 0 0 0.5 0 0" size="0.05"/>
      <body name="ghost" pos="0.5 0 0"><joint name="massless" axis="0 1 0"/></body>
    </body></worldbody></mujoco>"""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", JointspaceWarning)
        m = js.load_string(xml)
    d = js.make_data(m)
    q, v = m.qpos0, np.ones(m.nv)
    assert np.all(np.isfinite(js.rnea_derivatives(m, d, q, v, v)[0]))
    with pytest.raises(SingularMassError, match="'massless'"):
        js.aba_derivatives(m, d, q, v, v)
