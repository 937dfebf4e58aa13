"""Inverse kinematics toward a preferred posture, checked against a general-purpose optimizer.

The oracle is scipy's SLSQP on the same problem, min ½‖q − q*‖² s.t. h(q) = x and the joint
bounds, started from q* (not from our answer) with a tight tolerance.
"""

import numpy as np
import pytest
from scipy.optimize import minimize

import jointspace as js
from jointspace.ik import Target, ik
from tests.mjcf_cases import CASES

TOL_HIT = 1e-8  # reachable targets: residual after convergence (m and rad)
TOL_OPT = 1e-5  # agreement with SLSQP, whose own tolerance is ~1e-12 on the cost


@pytest.fixture(scope="module")
def arm():
    return js.load_string(CASES["arm7"])


def _site_pose(m, q, site):
    d = js.make_data(m)
    js.kinematics(m, d, q)
    s = m.site(site)
    return d.site_xpos[s].copy(), d.xquat[m.site_bodyid[s]].copy(), d


def _random_q_in_limits(m, rng, shrink=0.6):
    lo, hi = m.jnt_range[:, 0], m.jnt_range[:, 1]
    mid = 0.5 * (lo + hi)
    return mid + shrink * (hi - lo) / 2 * rng.uniform(-1, 1, m.nq)


def test_reachable_pose_is_hit(arm):
    rng = np.random.default_rng(0)
    for _ in range(5):
        q_true = _random_q_in_limits(arm, rng)
        pos, quat, _ = _site_pose(arm, q_true, "ee")
        res = ik(arm, Target(site="ee", pos=pos, quat=quat))  # ee has the last body's frame
        assert res.converged, res
        p, qq, _ = _site_pose(arm, res.qpos, "ee")
        assert np.linalg.norm(p - pos) < TOL_HIT
        assert min(np.linalg.norm(qq - quat), np.linalg.norm(qq + quat)) < TOL_HIT


def test_redundant_solution_is_closest_to_preferred_posture(arm):
    """With 7 dofs and a 3-D position target, ik returns the constrained optimum (SLSQP)."""
    rng = np.random.default_rng(1)
    for _ in range(3):
        q_pref = _random_q_in_limits(arm, rng, 0.3)
        pos, _, _ = _site_pose(arm, _random_q_in_limits(arm, rng, 0.4), "ee")
        res = ik(arm, Target(site="ee", pos=pos), q_pref=q_pref)
        assert res.converged
        d = js.make_data(arm)
        s = arm.site("ee")

        def h(q):
            js.kinematics(arm, d, q)
            return d.site_xpos[s] - pos

        def hjac(q):
            js.kinematics(arm, d, q)
            return js.jacobian_site(arm, d, s)[0]

        sol = minimize(lambda q: 0.5 * np.sum((q - q_pref) ** 2), q_pref,
                       jac=lambda q: q - q_pref, method="SLSQP",
                       constraints=[{"type": "eq", "fun": h, "jac": hjac}],
                       bounds=list(zip(arm.jnt_range[:, 0], arm.jnt_range[:, 1])),
                       options={"ftol": 1e-12, "maxiter": 1000})
        assert sol.success
        np.testing.assert_allclose(res.qpos, sol.x, atol=TOL_OPT)
        # first-order optimality: q - q* lies in the row space of J
        assert res.optimality < 1e-8


def test_unreachable_target_reports_failure_with_best_effort(arm):
    target = np.array([3.0, 0.0, 0.5])  # the arm reaches about 1.4 m
    res = ik(arm, Target(site="ee", pos=target))
    assert not res.converged
    assert np.all(np.isfinite(res.qpos))
    p, _, d = _site_pose(arm, res.qpos, "ee")
    base = d.xpos[arm.body("l2")]
    reach = np.linalg.norm(p - base)
    # best effort: the arm stretches toward the target (tip nearly on the base-target line)
    direction = (target - base) / np.linalg.norm(target - base)
    assert np.linalg.norm((p - base) - reach * direction) < 0.05
    assert res.error == pytest.approx(np.linalg.norm(target - p), rel=1e-6)


def test_joint_limits_are_respected(arm):
    rng = np.random.default_rng(2)
    q_true = _random_q_in_limits(arm, rng, 0.95)
    pos, _, _ = _site_pose(arm, q_true, "ee")
    tight = js.load_string(CASES["arm7"].replace('range="-170 170"', 'range="-30 30"'))
    res = ik(tight, Target(site="ee", pos=pos))
    lo, hi = tight.jnt_range[:, 0], tight.jnt_range[:, 1]
    assert np.all(res.qpos >= lo - 1e-12) and np.all(res.qpos <= hi + 1e-12)


def test_floating_base_two_feet():
    """Targets on a free-floating tree: the quaternion stays on the manifold."""
    m = js.load_string(CASES["branched"])
    d = js.make_data(m)
    js.kinematics(m, d)
    lf, rf = d.site_xpos[m.site("left_foot")].copy(), d.site_xpos[m.site("right_foot")].copy()
    targets = [Target(site="left_foot", pos=lf + [0.05, 0.02, 0.1]),
               Target(site="right_foot", pos=rf + [-0.03, 0.0, 0.05]),
               Target(body="torso", quat=[1, 0, 0, 0])]
    res = ik(m, targets)
    assert res.converged
    js.kinematics(m, d, res.qpos)
    assert np.linalg.norm(d.site_xpos[m.site("left_foot")] - targets[0].pos) < TOL_HIT
    assert abs(np.linalg.norm(res.qpos[3:7]) - 1) < 1e-12


def test_bad_targets_are_rejected(arm):
    with pytest.raises(ValueError, match="exactly one of site or body"):
        ik(arm, Target(pos=[0, 0, 1]))
    with pytest.raises(ValueError, match="neither pos nor quat"):
        ik(arm, Target(site="ee"))
    with pytest.raises(ValueError, match=r"targets\[0\].pos must have shape \(3,\)"):
        ik(arm, Target(site="ee", pos=[0, 0]))
    with pytest.raises(KeyError, match="no site named 'tip'"):
        ik(arm, Target(site="tip", pos=[0, 0, 1]))
    with pytest.raises(ValueError, match=r"q_pref must have shape \(7,\)"):
        ik(arm, Target(site="ee", pos=[0, 0, 1]), q_pref=np.zeros(3))
