"""Tendon-level actuator force limits and tendon armature against MuJoCo 4.0.

`actuatorfrclimited` on a tendon scales the forces of the tendon's actuators so that their
sum lies in `actuatorfrcrange` (before each actuator's own forcerange clamp, as the binary
does). Tendon armature adds armature · ten_Jᵀ ten_J to M on M's sparsity (so a tendon
across branches loses its cross terms, in MuJoCo and here) and, for spatial tendons, the
bias armature · (ten_J̇ q̇) ten_J to qfrc_bias and qfrc_inverse (mj_tendonBias).
"""

import warnings

import mujoco
import numpy as np
import pytest

import jointspace as js
from jointspace.errors import ModelError
from tests._util import rel_err

# smooth quantities of mj_forward (no constraint rows): rounding, relative to max(1, |x|)
SMOOTH_TOL = 1e-9
# 1000 steps without constraint rows: rounding grows along the trajectory
TRAJECTORY_TOL = 1e-8
# qfrc_inverse vs mj_inverse: the same formulas, rounding only
INVERSE_TOL = 1e-8
# central differences of ten_J q̇ along the motion, step 1e-5: O(eps²) truncation
FD_TOL = 1e-6

ACTFRC = """<mujoco><compiler autolimits="true"/><option integrator="{integrator}"/>
<worldbody><body><joint name="a" type="hinge" axis="0 1 0" damping="0.1"/>
<geom type="capsule" fromto="0 0 0 0 0 -.5" size=".05"/>
<body pos="0 0 -.5"><joint name="b" type="hinge" axis="0 1 0"/><geom size=".1"/></body></body>
<body pos="1 0 0"><joint name="c" type="slide" axis="1 0 0"/><geom size=".1"/></body></worldbody>
<tendon><fixed name="t" actuatorfrcrange="-1 2"><joint joint="a" coef="1"/>
<joint joint="b" coef="-.5"/></fixed>
<fixed name="u" actuatorfrclimited="true" actuatorfrcrange="-0.5 0.3"><joint joint="c" coef="2"/>
<joint joint="b" coef="1"/></fixed>
<fixed name="free"><joint joint="c" coef="1"/></fixed></tendon>
<actuator><motor tendon="t" gear="2" forcerange="-3 1.5"/><motor tendon="t"/>
<position tendon="u" kp="3" kv="0.5"/>
<general tendon="u" gainprm="2" biasprm="0 -1 -.2" biastype="affine"/>
<motor tendon="free"/><motor joint="a"/></actuator></mujoco>"""

ARMATURE = """<mujoco><option integrator="{integrator}"/>
<worldbody>
<body name="a"><joint name="j0" type="hinge" axis="0 1 0" damping=".05"/>
<geom type="capsule" fromto="0 0 0 0 0 -.5" size=".05"/><site name="s0" pos=".05 0 -.2"/>
<body pos="0 0 -.5"><joint name="j1" type="hinge" axis="1 0 0"/>
<geom type="capsule" fromto="0 0 0 0 0 -.4" size=".04"/><site name="s1" pos="0 .05 -.3"/>
<body pos="0 0 -.4"><joint name="j2" type="slide" axis="1 0 0"/><geom size=".08"/>
<site name="s2" pos=".1 0 0"/></body></body></body>
<body name="e" pos=".6 0 0"><joint name="j3" type="hinge" axis="0 0 1"/>
<joint name="j4" type="hinge" axis="1 0 0"/>
<geom type="box" size=".1 .15 .2"/><site name="s3" pos="0 .1 -.2"/></body>
<site name="w" pos="0.2 0.1 0.3"/>
</worldbody>
<tendon>
<spatial name="sp" armature="0.3" stiffness="2" damping=".1"><site site="w"/><site site="s0"/>
<site site="s1"/><site site="s2"/></spatial>
<spatial name="pul" armature="0.2"><site site="s3"/><site site="s1"/><pulley divisor="2"/>
<site site="s1"/><site site="s2"/></spatial>
<fixed name="cross" armature="0.15"><joint joint="j0" coef="1"/><joint joint="j3" coef="-.7"/>
</fixed>
</tendon>
<actuator><motor tendon="sp" gear="2"/><motor tendon="cross"/></actuator></mujoco>"""


def _pair(xml, integrator="Euler"):
    xml = xml.format(integrator=integrator)
    return js.load_string(xml), mujoco.MjModel.from_xml_string(xml)


def _states(m, n, seed, ctrl_scale):
    rng = np.random.default_rng(seed)
    for _ in range(n):
        yield (m.qpos0 + 0.4 * rng.normal(size=m.nq), rng.normal(size=m.nv),
               ctrl_scale * rng.normal(size=m.nu))


def _compare_forward(m, mj, seed, ctrl_scale):
    """Max relative error of each field over seeded states, and forward's qacc."""
    d, md = js.make_data(m), mujoco.MjData(mj)
    M = np.zeros((m.nv, m.nv))
    moment = np.zeros((mj.nu, mj.nv))
    err = {}
    for q, v, u in _states(m, 8, seed, ctrl_scale):
        d.qpos[:], d.qvel[:], d.ctrl[:] = q, v, u
        md.qpos[:], md.qvel[:], md.ctrl[:] = q, v, u
        js.forward(m, d)
        mujoco.mj_forward(mj, md)
        for name in ("actuator_length", "actuator_force", "qfrc_actuator", "qfrc_passive",
                     "qfrc_bias", "qacc"):
            e = rel_err(getattr(d, name), getattr(md, name))
            err[name] = max(err.get(name, 0.0), e)
        mujoco.mju_sparse2dense(moment, md.actuator_moment, md.moment_rownnz,
                                md.moment_rowadr, md.moment_colind)
        err["actuator_moment"] = max(err.get("actuator_moment", 0.0),
                                     rel_err(d.actuator_moment, moment))
        mujoco.mj_fullM(mj, md, M)
        err["qM"] = max(err.get("qM", 0.0), rel_err(js.crba(m, d, q), M))
    return err


@pytest.mark.parametrize("xml", [ACTFRC, ARMATURE], ids=["actfrc", "armature"])
def test_compiled_constants_match_mujoco(xml):
    """The qpos0 constants, with the tendon armature in M (set_const)."""
    m, mj = _pair(xml)
    for name in ("tendon_armature", "tendon_length0", "tendon_invweight0", "actuator_acc0",
                 "dof_invweight0", "body_invweight0"):
        a = getattr(m, name)
        assert rel_err(a, np.asarray(getattr(mj, name)).reshape(a.shape)) <= SMOOTH_TOL, name


def test_actuatorfrcrange_matches_mujoco():
    """The tendon clamp scales each actuator's force, then forcerange clamps it."""
    m, mj = _pair(ACTFRC)
    np.testing.assert_array_equal(m.tendon_actfrclimited, mj.tendon_actfrclimited)
    np.testing.assert_array_equal(m.tendon_actfrcrange, mj.tendon_actfrcrange)
    err = _compare_forward(m, mj, seed=5, ctrl_scale=3.0)
    for name, e in err.items():
        assert e <= SMOOTH_TOL, (name, e)


def test_actuatorfrcrange_scales_before_forcerange():
    """ctrl (2, 1) on tendon t, range [-1, 2]: scaled by 2/3 to (4/3, 2/3), under 1.5.

    Clamping to forcerange first would give (1.5, 1) and then (1.2, 0.8).
    """
    m, mj = _pair(ACTFRC)
    d, md = js.make_data(m), mujoco.MjData(mj)
    d.ctrl[:2] = md.ctrl[:2] = (2.0, 1.0)
    js.forward(m, d)
    mujoco.mj_forward(mj, md)
    np.testing.assert_allclose(d.actuator_force[:2], (4 / 3, 2 / 3), rtol=0, atol=1e-15)
    np.testing.assert_allclose(d.actuator_force, md.actuator_force, rtol=0, atol=1e-15)


def test_tendon_armature_matches_mujoco():
    """Spatial tendons (one through a pulley) and a fixed one across two branches."""
    m, mj = _pair(ARMATURE)
    err = _compare_forward(m, mj, seed=9, ctrl_scale=1.0)
    for name, e in err.items():
        assert e <= SMOOTH_TOL, (name, e)


def test_tendon_bias_is_the_derivative_of_ten_J():
    """qfrc_bias − RNE's c(q, v) = Σ armature (d/dt ten_J) q̇ ten_J, d/dt by central differences."""
    m, _ = _pair(ARMATURE)
    d = js.make_data(m)
    rng = np.random.default_rng(2)
    q, v = m.qpos0 + 0.4 * rng.normal(size=m.nq), rng.normal(size=m.nv)
    eps = 1e-5

    def ten_J(qq):
        dd = js.make_data(m)
        dd.qpos[:] = qq
        js.forward(m, dd)
        return dd.ten_J.copy()

    Jdot = (ten_J(js.integrate_pos(m, q, v, eps))
            - ten_J(js.integrate_pos(m, q, v, -eps))) / (2 * eps)
    d.qpos[:], d.qvel[:] = q, v
    js.forward(m, d)
    rne = js.bias_forces(m, js.make_data(m), q, v)
    expected = rne + (m.tendon_armature * (Jdot @ v)) @ d.ten_J
    assert rel_err(d.qfrc_bias, expected) <= FD_TOL


@pytest.mark.parametrize("xml", [ACTFRC, ARMATURE], ids=["actfrc", "armature"])
@pytest.mark.parametrize("integrator", ["Euler", "implicit", "implicitfast", "RK4"])
def test_1000_steps_match_mj_step(xml, integrator):
    m, mj = _pair(xml, integrator)
    d, md = js.make_data(m), mujoco.MjData(mj)
    q, v, u = next(_states(m, 1, 3, 2.0))
    d.qpos[:], d.qvel[:], d.ctrl[:] = q, v, u
    md.qpos[:], md.qvel[:], md.ctrl[:] = q, v, u
    for _ in range(1000):
        js.step(m, d)
        mujoco.mj_step(mj, md)
    assert rel_err(d.qpos, md.qpos) <= TRAJECTORY_TOL
    assert rel_err(d.qvel, md.qvel) <= TRAJECTORY_TOL


def test_inverse_with_tendon_armature_matches_mj_inverse():
    """qfrc_inverse carries the armature's M qacc share and its bias, as mj_inverse."""
    m, mj = _pair(ARMATURE)
    d, md = js.make_data(m), mujoco.MjData(mj)
    rng = np.random.default_rng(4)
    for q, v, u in _states(m, 4, 6, 1.0):
        a = rng.normal(size=m.nv)
        d.qpos[:], d.qvel[:], d.ctrl[:], d.qacc[:] = q, v, u, a
        md.qpos[:], md.qvel[:], md.ctrl[:], md.qacc[:] = q, v, u, a
        js.inverse(m, d)
        mujoco.mj_inverse(mj, md)
        assert rel_err(d.qfrc_inverse, md.qfrc_inverse) <= INVERSE_TOL


WRAP_ARMATURE = """<mujoco><worldbody><site name="a"/><geom name="g" size=".1" pos=".5 0 0"/>
<body pos="1 0 0"><joint type="slide"/><geom size=".1"/><site name="b"/></body></worldbody>
<tendon><spatial name="s" armature="1"><site site="a"/><geom geom="g"/><site site="b"/>
</spatial></tendon></mujoco>"""
BAD_RANGE = """<mujoco><worldbody><body><joint name="j" type="slide"/><geom size=".1"/></body>
</worldbody><tendon><fixed name="t" actuatorfrclimited="true" actuatorfrcrange="1 1">
<joint joint="j" coef="1"/></fixed></tendon></mujoco>"""


@pytest.mark.parametrize("xml, words", [
    (WRAP_ARMATURE, ["tendon armature with geom wrapping", "<string>:3"]),
    (BAD_RANGE, ["<string>:2 <fixed name='t'>", "actuatorfrcrange"]),
])
def test_refused_like_mujoco(xml, words):
    """MuJoCo refuses both (its compiler's errors); so do we, naming the element."""
    with pytest.raises(ValueError):
        mujoco.MjModel.from_xml_string(xml)
    with pytest.raises(ModelError) as e, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        js.load_string(xml)
    for w in words:
        assert w in str(e.value), str(e.value)
