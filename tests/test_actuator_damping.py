"""MuJoCo 4.0's actuator damping and armature, and <option actuatorgroupdisable>.

An actuator with a joint, jointinparent or tendon transmission adds its `damping="b p0 p1"`
and `armature`, times gear₀², to that joint's dofs or to that tendon (mj_actuatorDamping,
mj_actuatorArmature); jnt_actuatorid and tendon_actuatorid say which actuator (−2:
several). The `mujoco` 4.0 wheel is the oracle: compiled fields, M, the passive forces and
qacc after forward at seeded random states, 200-step trajectories under each integrator,
qfrc_inverse (also "invdiscrete"), the inverse's velocity derivative, transition
derivatives, run-time changes of gear and damping, and the disabled actuator groups
(no force, activation still, in each integrator).
"""

import warnings

import mujoco
import numpy as np
import pytest

import jointspace as js
from jointspace.errors import ModelError
from jointspace.io.spec import ActuatorSpec
from tests._util import random_state
from tests._util import rel_err as _rel

# M and forces at one state: the same float64 products, summed in MuJoCo's order or nearly
FORCE_TOL = 1e-12
# qacc: forces through M⁻¹ (condition ~1e3 with the small bodies and armature)
ACC_TOL = 1e-10
# qfrc_inverse: M qacc and the passive forces at |qacc| ~ 1, as in test_damping_poly
INV_TOL = 1e-8
# 200 steps: per-step differences of ~1e-15 grow through the damped dynamics
TRAJ_TOL = 1e-9
# centered differences of the inverse over qvel, step 1e-6
FD_TOL = 1e-7
# transition Jacobians: two steps that agree to ~1e-14, divided by eps (test_transition)
TRANSITION_TOL = 1e-6

MODEL = """
<mujoco>
  <option timestep="0.002" integrator="{integrator}" {option}>{flags}</option>
  <default><geom contype="0" conaffinity="0"/></default>
  <worldbody>
    <site name="anchor" pos="0 0 1.5"/>
    <body name="arm" pos="0 0 1">
      <joint name="hinge" type="hinge" axis="0 1 0" damping="0.1"/>
      <geom type="capsule" fromto="0 0 0 0.4 0 0" size="0.05"/>
      <body name="slider" pos="0.4 0 0">
        <joint name="slide" type="slide" axis="1 0 0" damping="0.2 0.1" armature="0.01"/>
        <geom type="box" size="0.1 0.05 0.05" pos="0.1 0 0"/>
        <site name="tip" pos="0.2 0 0"/>
        <body pos="0.2 0 0">
          <joint name="hinge2" type="hinge" axis="1 0 0"/>
          <geom type="ellipsoid" size="0.1 0.06 0.04" pos="0 0 -0.1"/>
          <body pos="0 0 -0.2">
            <joint name="hinge3" type="hinge" axis="0 0 1"/>
            <geom type="box" size="0.08 0.03 0.02"/>
          </body>
        </body>
      </body>
    </body>
  </worldbody>
  <tendon>
    <fixed name="fixed" damping="0.1">
      <joint joint="hinge" coef="1.5"/><joint joint="slide" coef="-0.7"/>
    </fixed>
    <spatial name="spatial" armature="0.02"><site site="anchor"/><site site="tip"/></spatial>
  </tendon>
  <actuator>
    <motor joint="hinge" gear="2" damping="0.3" armature="0.05"/>
    <position joint="slide" kp="20" gear="-1.5" damping="0.5 0.4 0.2"/>
    <motor joint="slide" damping="0.1" armature="0.02"/>
    <motor jointinparent="hinge2" gear="0.7" damping="0 0.3 0.1" armature="0.03"/>
    <motor tendon="fixed" gear="1.3" damping="0.4 0.2" armature="0.04"/>
    <velocity tendon="spatial" kv="2" damping="0.6" armature="0.05"/>
    <motor joint="hinge3" gear="2"/>
    <general joint="hinge3" dyntype="filter" dynprm="0.05" gainprm="3" group="3"/>
  </actuator>
</mujoco>
"""

# the actuators carrying damping or armature: hinge one (0), slide two (−2), hinge2 one (3),
# hinge3 none; the fixed tendon one (4), the spatial one (5)
JNT_ACTUATORID = [0, -2, 3, -1]
TENDON_ACTUATORID = [4, 5]


def model(integrator="Euler", option="", flags=""):
    return MODEL.format(integrator=integrator, option=option, flags=flags)


def _load(xml):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return js.load_string(xml)


def _pair(xml):
    mj = mujoco.MjModel.from_xml_string(xml)
    m = _load(xml)
    return mj, mujoco.MjData(mj), m, js.Data(m)


def _full_m(mj, md):
    M = np.zeros((mj.nv, mj.nv))
    mujoco.mj_fullM(mj, md, M)
    return M


def _random(mj, md, d, rng, scale=1.5):
    """The same seeded random qpos, qvel and ctrl in MuJoCo's data and ours."""
    q, v = random_state(mj, rng, scale=scale)
    u = rng.normal(size=mj.nu)
    md.qpos[:], md.qvel[:], md.ctrl[:] = q, v, u
    d.qpos[:], d.qvel[:], d.ctrl[:] = q, v, u


def _compare_forward(mj, md, m, d):
    mujoco.mj_forward(mj, md)
    js.forward(m, d)
    assert _rel(js.crba(m, d, d.qpos), _full_m(mj, md)) <= FORCE_TOL
    for f in ("qfrc_damper", "qfrc_passive", "qfrc_actuator", "actuator_force"):
        assert _rel(getattr(d, f), getattr(md, f)) <= FORCE_TOL, f
    assert _rel(d.qacc, md.qacc) <= ACC_TOL


def test_compiled_fields_match_mujoco():
    """actuator_damping, _dampingpoly, _armature, the actuator ids and dof_M0 equal MjModel's."""
    mj, _, m, _ = _pair(model(option='actuatorgroupdisable="3 30"'))
    for name in ("actuator_damping", "actuator_dampingpoly", "actuator_armature",
                 "actuator_group", "jnt_actuatorid", "tendon_actuatorid"):
        np.testing.assert_array_equal(getattr(m, name), getattr(mj, name), err_msg=name)
    np.testing.assert_array_equal(m.jnt_actuatorid, JNT_ACTUATORID)
    np.testing.assert_array_equal(m.tendon_actuatorid, TENDON_ACTUATORID)
    np.testing.assert_allclose(m.dof_M0, mj.dof_M0, rtol=1e-12, atol=0)
    assert m.opt.disableactuator == mj.opt.disableactuator == (1 << 3) | (1 << 30)


def test_armature_is_on_the_diagonal_times_gear_squared():
    """dof_M0 grows by Σ armature gear² of the joint's actuators: 0.05·2² on the hinge."""
    xml = model()
    m = _load(xml)
    bare = _load(xml.replace(' armature="0.05"/>\n    <position', '/>\n    <position'))
    assert m.dof_M0[0] - bare.dof_M0[0] == pytest.approx(0.05 * 4, rel=1e-12)


@pytest.mark.parametrize("flags", ["", '<flag damper="disable"/>'])
def test_forward_matches_mujoco(flags):
    """M, qfrc_damper, qfrc_passive, the actuator forces and qacc equal mj_forward's."""
    mj, md, m, d = _pair(model(flags=flags))
    rng = np.random.default_rng(0)
    for _ in range(5):
        _random(mj, md, d, rng)
        _compare_forward(mj, md, m, d)
    if not flags:
        assert np.max(np.abs(md.qfrc_damper)) > 0.1


def test_damper_force_is_the_actuators_polynomial():
    """A lone slide: qfrc_damper = −v g² (b + p₀ |v| + p₁ v²) with the actuator's values."""
    xml = ('<mujoco><worldbody><body><joint name="j" type="slide"/><geom size=".1"/></body>'
           '</worldbody><actuator><motor joint="j" gear="3" damping="0.5 2 1"/></actuator>'
           '</mujoco>')
    m = _load(xml)
    d = js.Data(m)
    for v in (-1.3, 0.0, 0.4):
        d.qvel[0] = v
        js.forward(m, d)
        expected = -v * 9 * (0.5 + 2 * abs(v) + 1 * v * v)
        assert d.qfrc_damper[0] == pytest.approx(expected, rel=1e-14, abs=1e-15)


@pytest.mark.parametrize("integrator", ["Euler", "implicit", "implicitfast", "RK4"])
def test_trajectory_matches_mj_step(integrator):
    """200 steps from a random state stay on mj_step's trajectory."""
    mj, md, m, d = _pair(model(integrator))
    rng = np.random.default_rng(2)
    _random(mj, md, d, rng, scale=2.0)
    for _ in range(200):
        mujoco.mj_step(mj, md)
    js.step(m, d, 200)
    for f in ("qpos", "qvel", "act"):
        assert _rel(getattr(d, f), getattr(md, f)) <= TRAJ_TOL, f


BALL_FREE = """
<mujoco>
  <option integrator="{integrator}"/>
  <worldbody>
    <body pos="0 0 1">
      <joint name="b" type="ball" damping="0.1"/>
      <geom type="capsule" fromto="0 0 0 0 0 -.4" size=".05"/>
    </body>
    <body pos="1 0 1"><joint name="f" type="free"/><geom type="box" size=".1 .2 .3"/></body>
  </worldbody>
  <actuator>
    <motor joint="b" gear="2 1 0" damping="0.3 0.2 0.1" armature="0.05"/>
    <motor jointinparent="b" gear="0 1 1" damping="0.2" armature="0.01"/>
    <motor joint="f" gear="1.5 0 0 0 0 1" damping="0.4" armature="0.2"/>
  </actuator>
</mujoco>
"""


@pytest.mark.parametrize("integrator", ["Euler", "implicit", "implicitfast", "RK4"])
def test_ball_and_free_joints_match_mujoco(integrator):
    """On every dof of a ball (two actuators, one jointinparent) and a free joint, gear₀².

    The free body is standalone: implicitfast's 6×6 block takes M with the armature.
    """
    mj, md, m, d = _pair(BALL_FREE.format(integrator=integrator))
    np.testing.assert_array_equal(m.jnt_actuatorid, [-2, 2])
    np.testing.assert_allclose(m.dof_M0, mj.dof_M0, rtol=1e-12, atol=0)
    rng = np.random.default_rng(6)
    _random(mj, md, d, rng)
    _compare_forward(mj, md, m, d)
    for _ in range(200):
        mujoco.mj_step(mj, md)
    js.step(m, d, 200)
    for f in ("qpos", "qvel"):
        assert _rel(getattr(d, f), getattr(md, f)) <= TRAJ_TOL, f


def test_euler_is_implicit_with_actuator_armature_alone():
    """A joint whose actuator has armature only still takes mj_Euler's factored step.

    mj_Euler's test for damping includes jnt_actuatorid ≠ −1; the step then solves
    (M + h·0) a = f again instead of reusing qacc: the same to rounding.
    """
    xml = ('<mujoco><option timestep="0.01"/><worldbody><body><joint name="j" axis="0 1 0"/>'
           '<geom type="capsule" fromto="0 0 0 .3 0 0" size=".05"/></body></worldbody>'
           '<actuator><motor joint="j" armature="0.2" gear="2"/></actuator></mujoco>')
    mj, md, m, d = _pair(xml)
    md.qvel[0] = d.qvel[0] = 2.0
    md.ctrl[0] = d.ctrl[0] = 0.3
    for _ in range(100):
        mujoco.mj_step(mj, md)
    js.step(m, d, 100)
    assert _rel(d.qpos, md.qpos) <= TRAJ_TOL
    assert _rel(d.qvel, md.qvel) <= TRAJ_TOL


@pytest.mark.parametrize("integrator", ["Euler", "implicit", "implicitfast"])
@pytest.mark.parametrize("flags", ["", '<flag invdiscrete="enable"/>'])
def test_inverse_matches_mujoco(integrator, flags):
    """qfrc_passive and qfrc_inverse equal mj_inverse's, also with invdiscrete."""
    mj, md, m, d = _pair(model(integrator, flags=flags))
    rng = np.random.default_rng(1)
    for _ in range(4):
        q, v = random_state(mj, rng, scale=1.5)
        a = rng.normal(size=mj.nv)
        md.qpos[:], md.qvel[:], md.qacc[:] = q, v, a
        d.qpos[:], d.qvel[:], d.qacc[:] = q, v, a
        mujoco.mj_inverse(mj, md)
        js.inverse(m, d)
        assert _rel(d.qfrc_passive, md.qfrc_passive) <= FORCE_TOL
        assert _rel(d.qfrc_inverse, md.qfrc_inverse) <= INV_TOL


@pytest.mark.parametrize("spatial_armature", [False, True])
def test_inverse_derivatives_match_differences(spatial_armature):
    """inverse_derivatives' ∂f/∂qvel and ∂f/∂qpos equal centered differences of `inverse`.

    With and without the spatial tendon's armature (its own and its actuator's). With it,
    the velocity and position columns are differences of all of f: its share of M and its
    bias vary with ten_J, which the analytical terms do not differentiate. Regression:
    they were analytical there too, 5e-3 off (the tendon's own armature alone: 1.4e-3).
    """
    xml = model()
    if not spatial_armature:
        xml = xml.replace('<spatial name="spatial" armature="0.02">', '<spatial name="spatial">')
        xml = xml.replace('damping="0.6" armature="0.05"', 'damping="0.6"')
    mj, md, m, d = _pair(xml)
    rng = np.random.default_rng(3)
    q, v = random_state(mj, rng, scale=1.5)
    a = rng.normal(size=mj.nv)
    d.qpos[:], d.qvel[:], d.qacc[:] = q, v, a
    dfdq, dfdv, _ = js.inverse_derivatives(m, d, centered=True)
    eps = 1e-6
    fdv = np.empty((mj.nv, mj.nv))
    fdq = np.empty((mj.nv, mj.nv))
    for i in range(mj.nv):
        cols, rows = [], []
        for s in (1.0, -1.0):
            d.qpos[:], d.qvel[:] = q, v
            d.qvel[i] += s * eps
            js.inverse(m, d)
            cols.append(d.qfrc_inverse.copy())
            dq = np.zeros(mj.nv)
            dq[i] = s * eps
            d.qpos[:], d.qvel[:] = js.integrate_pos(m, q, dq, 1.0), v
            js.inverse(m, d)
            rows.append(d.qfrc_inverse.copy())
        fdv[:, i] = (cols[0] - cols[1]) / (2 * eps)
        fdq[:, i] = (rows[0] - rows[1]) / (2 * eps)
    assert _rel(dfdv, fdv) <= FD_TOL
    assert _rel(dfdq, fdq) <= FD_TOL


@pytest.mark.parametrize("integrator", ["Euler", "implicit", "implicitfast"])
def test_transition_derivatives_match_mjd_transition_fd(integrator):
    """A and B of transition_derivatives equal mjd_transitionFD's (forward differences)."""
    mj, md, m, d = _pair(model(integrator))
    rng = np.random.default_rng(4)
    _random(mj, md, d, rng)
    nx = 2 * mj.nv + mj.na
    A, B = np.zeros((nx, nx)), np.zeros((nx, mj.nu))
    mujoco.mjd_transitionFD(mj, md, 1e-6, False, A, B, None, None)
    a, b = js.transition_derivatives(m, d, eps=1e-6)
    for ours, theirs in ((a, A), (b, B)):
        assert _rel(ours, theirs) <= TRANSITION_TOL


def test_runtime_gear_and_damping_changes_take_effect():
    """Changing actuator_gear, _damping, _armature after compiling acts as in MuJoCo.

    They are read at each step. A nonzero damping given to an actuator that had none needs
    set_const (mj_setConst) to register it in jnt_actuatorid, as in MuJoCo.
    """
    mj, md, m, d = _pair(model())
    rng = np.random.default_rng(5)
    for mm in (m, mj):
        mm.actuator_gear[0, 0] = 3.0
        mm.actuator_gear[4, 0] = -0.5
        mm.actuator_damping[2] = 0.7
        mm.actuator_armature[3] = 0.1
        mm.actuator_dampingpoly[5] = [0.2, 0.3]
    _random(mj, md, d, rng)
    _compare_forward(mj, md, m, d)
    for mm in (m, mj):
        mm.actuator_damping[6] = 0.4
    js.set_const(m)
    mujoco.mj_setConst(mj, md)
    np.testing.assert_array_equal(m.jnt_actuatorid, mj.jnt_actuatorid)
    assert m.jnt_actuatorid[3] == 6
    np.testing.assert_allclose(m.dof_M0, mj.dof_M0, rtol=1e-12, atol=0)
    _random(mj, md, d, rng)
    _compare_forward(mj, md, m, d)


DISABLE = """
<mujoco>
  <option timestep="0.005" integrator="{integrator}" actuatorgroupdisable="2 5 30"/>
  <worldbody>
    <body>
      <joint name="a" axis="0 1 0" damping="0.05"/>
      <geom type="capsule" fromto="0 0 0 .3 0 0" size=".05"/>
      <body pos=".3 0 0">
        <joint name="b" axis="0 1 0"/>
        <geom type="capsule" fromto="0 0 0 .3 0 0" size=".04"/>
      </body>
    </body>
  </worldbody>
  <actuator>
    <motor joint="a" gear="2"/>
    <general joint="a" group="2" dyntype="filter" dynprm="0.1" gainprm="4"/>
    <motor joint="b" group="2" forcelimited="true" forcerange="0.5 1"/>
    <velocity joint="b" group="5" kv="3"/>
    <general joint="b" group="1" dyntype="integrator" gainprm="2" actlimited="true"
             actrange="-1 1"/>
    <general joint="a" group="31" dyntype="integrator" gainprm="1"/>
  </actuator>
</mujoco>
"""


@pytest.mark.parametrize("integrator", ["Euler", "implicitfast", "implicit", "RK4"])
def test_disabled_actuator_groups_match_mj_step(integrator):
    """Actuators of disabled groups exert no force (forcerange still clamps) and keep act.

    Groups 2 and 5 are disabled; group 31 lies outside 0..30 and is never disabled. The
    disabled velocity actuator adds no damping to the implicit steps. 100 steps match
    mj_step; then enabling the groups again at run time (opt.disableactuator = 0) does too.
    """
    xml = DISABLE.format(integrator=integrator)
    mj, md, m, d = _pair(xml)
    assert m.opt.disableactuator == mj.opt.disableactuator == (1 << 2) | (1 << 5) | (1 << 30)
    md.qvel[:] = d.qvel[:] = [1.0, -2.0]
    md.ctrl[:] = d.ctrl[:] = [0.3, 1.0, 2.0, 0.5, 0.8, 0.2]
    md.act[:] = d.act[:] = [0.25, 0.1, -0.3]
    for _ in range(100):
        mujoco.mj_step(mj, md)
    js.step(m, d, 100)
    for f in ("qpos", "qvel", "act", "actuator_force"):
        assert _rel(getattr(d, f), getattr(md, f)) <= TRAJ_TOL, f
    assert d.actuator_force[1] == 0.0 and d.actuator_force[3] == 0.0
    assert d.actuator_force[2] == 0.5  # 0 clamped into forcerange, as in MuJoCo
    assert d.act[0] == 0.25  # the disabled filter's activation stays
    assert d.act[1] != 0.1 and d.act[2] != -0.3
    m.opt.disableactuator = 0
    mj.opt.disableactuator = 0
    for _ in range(20):
        mujoco.mj_step(mj, md)
    js.step(m, d, 20)
    for f in ("qpos", "qvel", "act", "actuator_force"):
        assert _rel(getattr(d, f), getattr(md, f)) <= TRAJ_TOL, f
    assert d.act[0] != 0.25


def test_disabled_group_transition_derivatives_match_mjd_transition_fd():
    """B's columns of disabled actuators are zero in both; A matches mjd_transitionFD."""
    mj, md, m, d = _pair(DISABLE.format(integrator="implicitfast"))
    md.qvel[:] = d.qvel[:] = [1.0, -2.0]
    md.ctrl[:] = d.ctrl[:] = [0.3, 1.0, 2.0, 0.5, 0.8, 0.2]
    nx = 2 * mj.nv + mj.na
    A, B = np.zeros((nx, nx)), np.zeros((nx, mj.nu))
    mujoco.mjd_transitionFD(mj, md, 1e-6, False, A, B, None, None)
    a, b = js.transition_derivatives(m, d, eps=1e-6)
    assert _rel(a, A) <= TRANSITION_TOL
    assert _rel(b, B) <= TRANSITION_TOL
    assert not np.any(b[:, [1, 2, 3]])


@pytest.mark.parametrize("option, mujoco_says, ours", [
    ('actuatorgroupdisable="31"', "cannot exceed 30", "must be in 0..30"),
    ('actuatorgroupdisable="0 -1"', "must be non-negative", "must be in 0..30"),
])
def test_bad_groups_are_refused_as_mujoco_does(option, mujoco_says, ours):
    xml = DISABLE.format(integrator="Euler").replace('actuatorgroupdisable="2 5 30"', option)
    with pytest.raises(ValueError, match=mujoco_says):
        mujoco.MjModel.from_xml_string(xml)
    with pytest.raises(ModelError, match=rf"<string>:\d+ <option>: actuatorgroupdisable.*{ours}"):
        _load(xml)


J1 = ('<mujoco><worldbody><body><joint name="j"/><geom size=".1"/><site name="s"/></body>'
      '</worldbody><actuator>\n{}</actuator></mujoco>')


@pytest.mark.parametrize("actuator, what", [
    ('<motor site="s" damping="1"/>', "damping needs a joint, jointinparent or tendon"),
    ('<motor site="s" armature="1"/>', "armature needs a joint, jointinparent or tendon"),
])
def test_damping_without_joint_or_tendon_is_refused_as_mujoco_does(actuator, what):
    with pytest.raises(ValueError, match="requires joint or tendon transmission"):
        mujoco.MjModel.from_xml_string(J1.format(actuator))
    with pytest.raises(ModelError, match=rf"<string>:2 <motor>: {what}"):
        _load(J1.format(actuator))


@pytest.mark.parametrize("actuator, what", [
    ('<motor joint="j" damping="-1"/>', "damping=-1.0 0.0 0.0 has a negative value"),
    ('<motor joint="j" damping="1 0 -2"/>', "damping=1.0 0.0 -2.0 has a negative value"),
    ('<motor joint="j" armature="-0.5"/>', "armature=-0.5 is negative"),
])
def test_negative_values_are_refused(actuator, what):
    """Negative actuator damping or armature is refused, as on joints and tendons.

    MuJoCo loads them: a damper that pushes along the motion, a mass matrix that may lose
    its positive definiteness.
    """
    mujoco.MjModel.from_xml_string(J1.format(actuator))
    with pytest.raises(ModelError, match=rf"<string>:2 <motor>: {what}"):
        _load(J1.format(actuator))


def _spec(**kw):
    spec = js.ModelSpec()
    body = spec.world.add_body(name="b")
    body.add_joint(type="hinge", name="j")
    body.add_geom(type="sphere", size=np.r_[0.1, 0, 0])
    spec.actuators.append(ActuatorSpec(joint="j", source="robot.xml:7 <motor>", **kw))
    return spec


@pytest.mark.parametrize("kw, what", [
    (dict(damping=-1.0), r"actuator damping=-1.0 must be finite and non-negative"),
    (dict(damping=float("nan")), r"actuator damping=nan must be finite"),
    (dict(dampingpoly=(1.0, -1.0)), r"actuator dampingpoly must be 2 finite non-negative"),
    (dict(armature=-2.0), r"actuator armature=-2.0 must be finite and non-negative"),
])
def test_spec_values_are_checked(kw, what):
    with pytest.raises(ModelError, match=what + r".*robot.xml:7"):
        js.compile_model(_spec(**kw))


def test_spec_fields_compile():
    spec = _spec(damping=0.5, dampingpoly=(0.1, 0.2), armature=0.3, gear=np.r_[2.0, 0, 0, 0,
                                                                                0, 0])
    spec.option.disable_actuator_groups = (1, 4)
    m = js.compile_model(spec)
    assert m.actuator_damping[0] == 0.5 and m.actuator_armature[0] == 0.3
    np.testing.assert_array_equal(m.actuator_dampingpoly[0], [0.1, 0.2])
    assert m.jnt_actuatorid[0] == 0
    assert m.opt.disableactuator == 0b10010
    spec.option.disable_actuator_groups = (31,)
    with pytest.raises(ModelError, match="31 is not an actuator group in 0..30"):
        js.compile_model(spec)
