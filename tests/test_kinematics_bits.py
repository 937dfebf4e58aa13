"""Kinematics equal to MuJoCo 4.0's bit for bit, and the compiled frames it starts from.

MuJoCo's binary sums four-term products in pairs (the quaternion product, the squared norm)
and the rotation matrix's diagonal in its own grouping; its compiler normalizes with its own
rounding and converts degrees as value / 180 · π (jointspace.rotation, jointspace.io.frames).
Where the last bit differs, a body resting exactly on a plane is in contact in one engine and
not in the other, and trajectories part (issue 23's sphere at −5.6e-17): so the comparisons
here are exact, not to a tolerance.
"""

import math
import pathlib
import warnings

import mujoco
import numpy as np
import pytest

import jointspace as js
from jointspace.integrate import _quat_integrate
from jointspace.rotation import quat_mul_s, quat_normalize_s, quat_to_mat_s, rot_vec_quat_s
from tests._real_models import real_model
from tests.test_real_sweep import FILES

# compiled frame fields equal to MuJoCo's bit for bit (quaternions up to sign)
FRAME_FIELDS = ("body_pos", "body_quat", "jnt_pos", "jnt_axis", "geom_pos", "geom_quat",
                "site_pos", "site_quat", "body_sameframe", "geom_sameframe", "site_sameframe")
# inertial frames come from eigen-decompositions (MuJoCo's Jacobi sweeps, ours numpy's) and
# mesh or multi-geom inertia sums: equal only to round-off in these files (measured 4e-13)
INERTIAL_ROUNDOFF = {"cheetah", "dog", "finger", "humanoid_CMU", "manipulator", "stacker"}
KIN_FIELDS = ("xpos", "xquat", "xmat", "xipos", "ximat", "xanchor", "xaxis", "geom_xpos",
              "geom_xmat", "site_xpos", "site_xmat")


def test_rotation_helpers_round_as_mujoco():
    rng = np.random.default_rng(0)
    for k in range(3000):
        a = rng.normal(size=4)
        b = rng.normal(size=4)
        want = np.zeros(4)
        mujoco.mju_mulQuat(want, a, b)
        assert np.array_equal(quat_mul_s(*a, *b), want), (a, b)
        q = a * rng.choice([1.0, 1e-3, 1.0 + 1e-15, 1e-16])
        want = q.copy()
        mujoco.mju_normalize4(want)
        assert np.array_equal(quat_normalize_s(*q), want), q
        u = a / np.linalg.norm(a)
        want = np.zeros(9)
        mujoco.mju_quat2Mat(want, u)
        assert np.array_equal(quat_to_mat_s(*u), want), u
        v = rng.normal(size=3)
        want = np.zeros(3)
        mujoco.mju_rotVecQuat(want, v, u)
        assert np.array_equal(rot_vec_quat_s(*u, *v), want), (u, v)
        w = v * rng.choice([1.0, 1e-8, 0.0])
        want = u.copy()
        mujoco.mju_quatIntegrate(want, w, 0.002)
        got = u.copy()
        _quat_integrate(got, w, 0.002)
        assert np.array_equal(got, want), (u, w)


def _load_both(dist, path):
    f = real_model(dist, path)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return mujoco.MjModel.from_xml_path(str(f)), js.load(f)


def _up_to_sign(a, b):
    """b with each quaternion row's sign flipped where it points against a's."""
    return b * np.where((a * b).sum(-1, keepdims=True) < 0, -1.0, 1.0)


@pytest.mark.parametrize("dist, path", FILES,
                         ids=[pathlib.Path(p).stem + "-" + d for d, p in FILES])
def test_real_model_kinematics_equal_mujocos_bit_for_bit(dist, path):
    mj, m = _load_both(dist, path)
    stem = pathlib.Path(path).stem
    for f in FRAME_FIELDS:
        a, b = np.asarray(getattr(mj, f)), np.asarray(getattr(m, f))
        if f.endswith("quat"):
            b = _up_to_sign(a, b)
        assert np.array_equal(a, b), (f, np.flatnonzero(a != b)[:5])
    for f in ("body_ipos", "body_iquat"):
        a, b = np.asarray(getattr(mj, f)), np.asarray(getattr(m, f))
        if f == "body_iquat":
            b = _up_to_sign(a, b)
        assert np.array_equal(a, b) or stem in INERTIAL_ROUNDOFF, f
        # from here on the states start from the same inertial frames
        getattr(m, f)[:] = a
    md = mujoco.MjData(mj)
    d = js.make_data(m)
    rng = np.random.default_rng(3)
    for k in range(5):
        # random coordinates, quaternions of free and ball joints not normalized
        q = mj.qpos0 + (0.3 * rng.normal(size=mj.nq) if k else 0.0)
        md.qpos[:] = q
        d.qpos[:] = q
        mujoco.mj_kinematics(mj, md)
        js.kinematics(m, d)
        for f in KIN_FIELDS:
            a, b = getattr(md, f), getattr(d, f)
            assert np.array_equal(a, b), (f, k, np.flatnonzero(a != b)[:5])


def test_sameframe_follows_mujocos_frame_tolerance():
    """Offsets within 1e-6 of the body (or inertial) frame are taken as none, as in MuJoCo."""
    xml = """<mujoco><worldbody><body pos="0 0 1"><freejoint/>
      <geom name="a" type="sphere" size=".1" pos="4e-7 0 0"/>
      <geom name="b" type="box" size=".1 .2 .3" pos="0.2 0 0" quat="1 3e-7 0 0"/>
      <geom name="c" type="capsule" size=".05 .2" pos="0 0.3 0" euler="30 0 0"/>
      <site name="s" pos="1e-7 0 2e-7"/></body></worldbody></mujoco>"""
    mj = mujoco.MjModel.from_xml_string(xml)
    m = js.load_string(xml)
    for f in ("body_sameframe", "geom_sameframe", "site_sameframe"):
        assert np.array_equal(getattr(m, f), getattr(mj, f)), f
    # the inertia of three geoms: diagonalized by each engine in its own rounding
    m.body_ipos[:] = mj.body_ipos
    m.body_iquat[:] = mj.body_iquat
    md = mujoco.MjData(mj)
    d = js.make_data(m)
    q = mj.qpos0.copy()
    q[3:7] = [math.cos(0.3), 0.0, math.sin(0.3), 0.0]
    md.qpos[:] = q
    d.qpos[:] = q
    mujoco.mj_kinematics(mj, md)
    js.kinematics(m, d)
    for f in KIN_FIELDS:
        assert np.array_equal(getattr(md, f), getattr(d, f)), f
    # geom a sits at its body's origin, not 4e-7 off it
    assert np.array_equal(d.geom_xpos[0], d.xpos[1])


def test_sphere_resting_exactly_on_the_plane_touches_as_in_mujoco():
    """gymnasium's point: a sphere of radius 0.5 at height 0.5 on a body turned by a hinge.

    MuJoCo's R(q) puts it 5.6e-17 into the floor, so its contact is active from the first
    turn; a 1 − 2(y² + z²) diagonal put it at exactly 0 and the motions parted at once.
    """
    mj, m = _load_both("gymnasium", "gymnasium/envs/mujoco/assets/point.xml")
    md = mujoco.MjData(mj)
    d = js.make_data(m)
    rng = np.random.default_rng(0)
    touching = 0
    for t in range(60):
        u = rng.uniform(mj.actuator_ctrlrange[:, 0], mj.actuator_ctrlrange[:, 1])
        md.ctrl[:] = u
        d.ctrl[:] = u
        mujoco.mj_step(mj, md)
        js.step(m, d)
        assert d.ncon[0] == md.ncon and d.nefc[0] == md.nefc, t
        if md.ncon:
            assert d.contact.dist[0] == md.contact.dist[0], t
            touching += md.contact.dist[0] < 0
    assert touching > 0
    assert np.max(np.abs(d.qpos - md.qpos)) < 1e-12
