"""Smooth dynamics against Pinocchio: URDF robots and random trees built in Pinocchio.

Pinocchio is the oracle for URDF (DESIGN.md §5). Random trees are built in Pinocchio
directly, joint for joint (tests/_models.py), since its MJCF importer is not an oracle.
`PinAdapter` converts between the conventions (free-joint velocity frame and acceleration,
quaternion order, joint references); both sides include armature.
"""

import warnings

import numpy as np
import pytest

import jointspace as js
from jointspace.errors import JointspaceWarning
from tests._models import PinAdapter, pinocchio_tree, random_state, random_tree_desc
from tests._util import erd_robots_dir

pin = pytest.importorskip("pinocchio")

TOL = 1e-10  # relative to the largest entry: the same physics in float64, other recursions
NSTATES = 50



ROBOTS = erd_robots_dir()
URDFS = {
    "panda": ("panda_description/urdf/panda.urdf", False),
    "ur5": ("ur_description/urdf/ur5_robot.urdf", False),
    "solo12": ("solo_description/robots/solo12.urdf", True),
}
TREES = {
    f"tree{seed}": dict(seed=seed, nbody=n, branching=br, armature=arm)
    for seed, n, br, arm in [(10, 5, 0.0, 0.0), (11, 9, 0.4, 0.03), (12, 14, 0.6, 0.0),
                             (13, 18, 0.3, 0.01)]
}


def _close(actual, desired, what, tol=TOL):
    """Assert |actual - desired| <= tol · max(1, max |desired|)."""
    scale = max(1.0, float(np.max(np.abs(desired))))
    err = float(np.max(np.abs(np.asarray(actual) - desired)))
    assert err <= tol * scale, f"{what}: max error {err:.3g} > {tol:.1g} × {scale:.3g}"


def _sym(upper):
    """Pinocchio fills the upper triangle of M and M⁻¹: mirror it."""
    return np.triu(upper) + np.triu(upper, 1).T


def _models(name):
    if name in URDFS:
        rel, floating = URDFS[name]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", JointspaceWarning)
            m = js.load(ROBOTS / rel, floating_base=floating, visual=False)
        args = (pin.JointModelFreeFlyer(),) if floating else ()
        pm = pin.buildModelFromUrdf(str(ROBOTS / rel), *args)
    else:
        desc = random_tree_desc(**TREES[name])
        m = js.load_string(desc.mjcf())
        pm = pinocchio_tree(desc)
    return m, js.make_data(m), pm, pm.createData(), PinAdapter(m, pm)


@pytest.mark.parametrize("name", [*URDFS, *TREES])
def test_dynamics_match_pinocchio(name):
    """crba, rnea (with f_ext), nonLinearEffects, gravity, aba and computeMinverse."""
    m, d, pm, pd, ad = _models(name)
    rng = np.random.default_rng(sum(map(ord, name)))
    zero = np.zeros(m.nv)
    for _ in range(NSTATES):
        q, v, a = random_state(m, rng)
        f_ext = rng.normal(size=(m.nbody, 6))
        qp, vp = ad.q(q), ad.v(q, v)
        M_pin = _sym(pin.crba(pm, pd, qp))
        _close(js.crba(m, d, q), ad.matrix(q, M_pin), f"{name} crba")
        tau = js.rnea(m, d, q, v, a)
        _close(tau, ad.tau(q, pin.rnea(pm, pd, qp, vp, ad.a(q, v, a))), f"{name} rnea")
        pin.forwardKinematics(pm, pd, qp)
        fp = ad.forces(pin, pm, pd, d, f_ext)
        _close(js.rnea(m, d, q, v, a, f_ext),
               ad.tau(q, pin.rnea(pm, pd, qp, vp, ad.a(q, v, a), fp)), f"{name} rnea f_ext")
        # our a = 0 is a free joint's Pinocchio acceleration ad.a(q, v, 0), not zero
        nle = pin.nonLinearEffects(pm, pd, qp, vp)
        _close(js.bias_forces(m, d, q, v), ad.tau(q, nle + M_pin @ ad.a(q, v, zero)),
               f"{name} nonLinearEffects")
        _close(js.gravity_forces(m, d, q), ad.tau(q, pin.computeGeneralizedGravity(pm, pd, qp)),
               f"{name} gravity")
        qacc_pin = pin.aba(pm, pd, qp, vp, ad.tau_to_pin(q, tau), fp)
        _close(js.aba(m, d, q, v, tau, f_ext), ad.a_from_pin(q, v, qacc_pin), f"{name} aba")
        _close(js.minv(m, d, q), ad.matrix(q, _sym(pin.computeMinverse(pm, pd, qp))),
               f"{name} minv")

