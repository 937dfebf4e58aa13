"""Kinematics, com quantities and Jacobians against MuJoCo, field by field.

MuJoCo is the oracle for MJCF (DESIGN.md §5). Each model is loaded from the same XML by both
libraries; bodies are numbered alike (depth-first), so fields compare by index.
"""

import mujoco
import numpy as np
import pytest

import jointspace as js
from tests._util import random_state, same_rotation_quat
from tests.mjcf_cases import CASES

TOL = 1e-10  # both compute the same closed-form products in float64: only round-off differs
TOL_MODEL = 1e-9  # compiled model fields: eigen-decompositions of inertia differ in round-off
NSTATES = 100
TOL_ULP = 5e-16  # a couple of units in the last place of numbers near 1

KIN_FIELDS = ("xpos", "xmat", "xipos", "ximat", "xanchor", "xaxis", "geom_xpos", "geom_xmat",
              "site_xpos", "site_xmat", "subtree_com", "cinert", "cdof", "cvel", "cdof_dot")


def _both(xml):
    return js.load_string(xml), mujoco.MjModel.from_xml_string(xml)


def _inertia_tensor(quat, diag):
    R = np.zeros(9)
    mujoco.mju_quat2Mat(R, quat)
    R = R.reshape(3, 3)
    return R @ np.diag(diag) @ R.T


@pytest.mark.parametrize("name", sorted(CASES))
def test_model_fields_match_mujoco(name):
    m, mm = _both(CASES[name])
    for k in ("nq", "nv", "nbody", "njnt", "ngeom", "nsite", "nu"):
        assert getattr(m, k) == getattr(mm, k), k
    for f in ("body_parentid", "body_rootid", "body_weldid", "body_jntnum", "body_jntadr",
              "body_dofnum", "body_dofadr", "jnt_type", "jnt_qposadr", "jnt_dofadr",
              "jnt_bodyid", "jnt_limited", "dof_bodyid", "dof_jntid", "dof_parentid",
              "geom_type", "geom_bodyid", "site_bodyid"):
        np.testing.assert_array_equal(getattr(m, f), getattr(mm, f), err_msg=f)
    for f in ("body_pos", "body_mass", "body_subtreemass", "body_ipos", "jnt_pos", "jnt_axis",
              "jnt_range", "jnt_stiffness", "dof_armature", "dof_damping", "dof_frictionloss",
              "qpos0", "qpos_spring", "geom_size", "geom_pos", "geom_friction", "site_pos",
              "dof_M0"):
        np.testing.assert_allclose(getattr(m, f), getattr(mm, f), atol=TOL_MODEL, rtol=TOL_MODEL,
                                   err_msg=f)
    for f in ("body_quat", "geom_quat", "site_quat"):
        a, b = same_rotation_quat(getattr(m, f), getattr(mm, f))
        np.testing.assert_allclose(a, b, atol=TOL_MODEL, err_msg=f)
    # principal axes may come out in another order or sign: compare full inertia tensors
    for i in range(m.nbody):
        np.testing.assert_allclose(_inertia_tensor(m.body_iquat[i], m.body_inertia[i]),
                                   _inertia_tensor(mm.body_iquat[i], mm.body_inertia[i]),
                                   atol=TOL_MODEL, err_msg=f"inertia of body {i}")


@pytest.mark.parametrize("name", sorted(CASES))
def test_kinematics_match_mujoco(name):
    m, mm = _both(CASES[name])
    d, md = js.make_data(m), mujoco.MjData(mm)
    rng = np.random.default_rng(1)
    for _ in range(NSTATES):
        md.qpos[:], md.qvel[:] = random_state(mm, rng)
        mujoco.mj_forward(mm, md)
        js.kinematics(m, d, md.qpos, md.qvel)
        for f in KIN_FIELDS:
            np.testing.assert_allclose(getattr(d, f), getattr(md, f).reshape(getattr(d, f).shape),
                                       atol=TOL, err_msg=f)
        a, b = same_rotation_quat(d.xquat, md.xquat)
        np.testing.assert_allclose(a, b, atol=TOL)


@pytest.mark.parametrize("name", sorted(CASES))
def test_jacobians_match_mujoco(name):
    m, mm = _both(CASES[name])
    d, md = js.make_data(m), mujoco.MjData(mm)
    rng = np.random.default_rng(2)
    nv = mm.nv
    jp, jr = np.zeros((3, nv)), np.zeros((3, nv))
    jpd, jrd = np.zeros((3, nv)), np.zeros((3, nv))
    for _ in range(NSTATES):
        md.qpos[:], md.qvel[:] = random_state(mm, rng)
        mujoco.mj_forward(mm, md)
        js.kinematics(m, d, md.qpos, md.qvel)
        body = int(rng.integers(0, mm.nbody))
        point = rng.normal(size=3)
        mujoco.mj_jac(mm, md, jp, jr, point, body)
        ours = js.jacobian(m, d, body, point)
        np.testing.assert_allclose(ours[0], jp, atol=TOL)
        np.testing.assert_allclose(ours[1], jr, atol=TOL)
        mujoco.mj_jacBody(mm, md, jp, jr, body)
        np.testing.assert_allclose(np.vstack(js.jacobian_body(m, d, body)), np.vstack([jp, jr]),
                                   atol=TOL)
        mujoco.mj_jacBodyCom(mm, md, jp, jr, body)
        np.testing.assert_allclose(np.vstack(js.jacobian_body_com(m, d, body)),
                                   np.vstack([jp, jr]), atol=TOL)
        mujoco.mj_jacSubtreeCom(mm, md, jp, body)
        if mm.body_subtreemass[body] > 0:
            np.testing.assert_allclose(js.jacobian_subtree_com(m, d, body), jp, atol=TOL)
        for s in range(mm.nsite):
            mujoco.mj_jacSite(mm, md, jp, jr, s)
            np.testing.assert_allclose(np.vstack(js.jacobian_site(m, d, s)),
                                       np.vstack([jp, jr]), atol=TOL)
        # J̇q̇ against MuJoCo's time derivative of the Jacobian
        mujoco.mj_jacDot(mm, md, jpd, jrd, point, body)
        bias = js.jacobian_dot_qvel(m, d, body, point)
        np.testing.assert_allclose(bias[:3], jpd @ md.qvel, atol=TOL)
        np.testing.assert_allclose(bias[3:], jrd @ md.qvel, atol=TOL)


def test_jacobian_dot_matches_finite_difference():
    """J̇q̇ of a body point equals d/dt (J(q(t)) q̇) along the motion, by central differences."""
    m, mm = _both(CASES["branched"])
    d = js.make_data(m)
    rng = np.random.default_rng(3)
    qpos, qvel = random_state(mm, rng)
    body = m.body("lfoot")
    local = np.array([0.1, -0.05, 0.02])
    h = 1e-6

    def jv(q):
        js.kinematics(m, d, q, qvel)
        p = d.xpos[body] + d.xmat[body].reshape(3, 3) @ local
        jp, jr = js.jacobian(m, d, body, p)
        return np.r_[jp @ qvel, jr @ qvel]

    fd = (jv(js.integrate_pos(m, qpos, qvel, h))
          - jv(js.integrate_pos(m, qpos, qvel, -h))) / (2 * h)
    js.kinematics(m, d, qpos, qvel)
    p = d.xpos[body] + d.xmat[body].reshape(3, 3) @ local
    np.testing.assert_allclose(js.jacobian_dot_qvel(m, d, body, p), fd, atol=1e-7)


def test_quaternions_stay_unit_and_renormalized():
    """Non-unit quaternions in qpos are normalized before use (MuJoCo does the same)."""
    m, mm = _both(CASES["two_trees"])
    d, md = js.make_data(m), mujoco.MjData(mm)
    rng = np.random.default_rng(4)
    md.qpos[:], _ = random_state(mm, rng)
    md.qpos[3:7] *= 3.0  # free joint quaternion, not unit
    mujoco.mj_kinematics(mm, md)
    js.kinematics(m, d, md.qpos)
    np.testing.assert_allclose(np.linalg.norm(d.xquat, axis=1), 1.0, atol=1e-15)
    np.testing.assert_allclose(d.xpos, md.xpos, atol=TOL)


def test_api_rejects_bad_arguments():
    m = js.load_string(CASES["arm7"])
    d = js.make_data(m)
    with pytest.raises(ValueError, match=r"qpos must have shape \(7,\)"):
        js.kinematics(m, d, np.zeros(6))
    with pytest.raises(TypeError, match="first argument must be a jointspace Model"):
        js.kinematics(d, m)
    other = js.load_string(CASES["two_trees"])
    with pytest.raises(ValueError, match="different model"):
        js.kinematics(other, d)
    with pytest.raises(KeyError, match="no site named 'e'.*did you mean 'ee'"):
        js.jacobian_site(m, d, "e")
    with pytest.raises(IndexError, match="body id 99 out of range"):
        js.jacobian(m, d, 99, np.zeros(3))
    with pytest.raises(ValueError, match=r"point must have shape \(3,\)"):
        js.jacobian(m, d, 1, np.zeros(2))
