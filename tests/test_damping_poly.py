"""MuJoCo 4.0's damping polynomials on joints and tendons against the `mujoco` 4.0 wheel.

`damping="b p0 p1"` gives the damper force −v (b + p₀ |v| + p₁ v²) (dof_dampingpoly,
tendon_dampingpoly). Focused models with hinge, slide, ball and free joints and fixed and
spatial tendons are compared with MuJoCo at seeded random states: the compiled fields,
qfrc_damper, qfrc_passive and qacc after forward, qfrc_inverse (continuous and with the
"invdiscrete" flag, whose Euler and implicitfast conversions use the damper's velocity
derivative b + 2 p₀ |v| + 3 p₁ v²), and 500-step trajectories under Euler, implicit and
implicitfast.
"""

import warnings

import mujoco
import numpy as np
import pytest

import jointspace as js
from jointspace.errors import ModelError
from tests._util import random_state
from tests._util import rel_err as _rel

# forces at one state: the same float64 products in the same order, summed through ten_J
FORCE_TOL = 1e-12
# qacc and qfrc_inverse: the forces divided by (or multiplied through) M of condition ~1e2
ACC_TOL = 1e-10
# centered differences, step 1e-6: truncation ~1e-12 f''', round-off ~1e-10 |f|
FD_TOL = 1e-7
# MuJoCo's forward differences (step 1e-6): truncation ~1e-6 · f''
MJ_FD_TOL = 1e-4
# 500 steps: per-step differences of ~1e-15 grow through the damped dynamics
TRAJ_TOL = 1e-9

MODEL = """
<mujoco>
  <option timestep="0.002" integrator="{integrator}">{flags}</option>
  <default><geom contype="0" conaffinity="0"/></default>
  <worldbody>
    <site name="anchor" pos="0 0 1.5"/>
    <body name="arm" pos="0 0 1">
      <joint name="hinge" type="hinge" axis="0 1 0" damping="0.2 0.5 0.3"/>
      <geom type="capsule" fromto="0 0 0 0.4 0 0" size="0.05"/>
      <body name="slider" pos="0.4 0 0">
        <joint name="slide" type="slide" axis="1 0 0" damping="0 1.5 0.4"/>
        <geom type="box" size="0.1 0.05 0.05" pos="0.1 0 0"/>
        <site name="tip" pos="0.2 0 0"/>
        <body pos="0.2 0 0">
          <joint name="ball" type="ball" damping="0.05 0.2 0.1"/>
          <geom type="ellipsoid" size="0.1 0.06 0.04" pos="0 0 -0.1"/>
        </body>
      </body>
    </body>
    <body name="float" pos="1 0 1">
      <joint type="free" damping="0.01 0.3 0.2"/>
      <geom type="box" size="0.1 0.15 0.2"/>
    </body>
  </worldbody>
  <tendon>
    <fixed name="fixed" damping="0.1 0.8 0.6">
      <joint joint="hinge" coef="1.5"/><joint joint="slide" coef="-0.7"/>
    </fixed>
    <spatial name="spatial" damping="0 0.4 0.9">
      <site site="anchor"/><site site="tip"/>
    </spatial>
  </tendon>
  <actuator>
    <motor joint="hinge" gear="2"/><motor tendon="fixed" gear="3"/>
    <motor joint="slide" gear="0.5"/>
  </actuator>
</mujoco>
"""


def model(integrator="Euler", flags=""):
    return MODEL.format(integrator=integrator, flags=flags)


def _load(xml):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return js.load_string(xml)


def _pair(xml):
    mj = mujoco.MjModel.from_xml_string(xml)
    m = _load(xml)
    return mj, mujoco.MjData(mj), m, js.Data(m)


def test_compiled_fields_match_mujoco():
    """dof_damping, dof_dampingpoly, tendon_damping and tendon_dampingpoly equal MjModel's."""
    mj, _, m, _ = _pair(model())
    for name in ("dof_damping", "dof_dampingpoly", "tendon_damping", "tendon_dampingpoly"):
        np.testing.assert_array_equal(getattr(m, name), getattr(mj, name), err_msg=name)
    assert np.any(m.dof_dampingpoly != 0) and np.any(m.tendon_dampingpoly != 0)


def test_default_class_values_are_overwritten_entry_by_entry():
    """An element's `damping` with fewer values keeps the class's remaining coefficients."""
    xml = ('<mujoco><default><joint damping="1 2 3"/><default class="c"><joint damping="4 5"/>'
           '</default></default><worldbody><body><joint damping="6"/><geom size=".1"/>'
           '<body><joint class="c"/><geom size=".1"/></body><body><joint class="c" '
           'damping="7"/><geom size=".1"/></body></body></worldbody></mujoco>')
    mj, _, m, _ = _pair(xml)
    np.testing.assert_array_equal(m.dof_damping, mj.dof_damping)
    np.testing.assert_array_equal(m.dof_dampingpoly, mj.dof_dampingpoly)
    np.testing.assert_array_equal(m.dof_dampingpoly, [[2, 3], [5, 3], [5, 3]])


def test_springdamper_keeps_the_polynomial():
    """springdamper replaces the linear damping only, as MuJoCo's compiler does."""
    xml = ('<mujoco><worldbody><body><joint springdamper="0.1 1" damping="5 2 3"/>'
           '<geom size=".1" pos=".2 0 0"/></body></worldbody></mujoco>')
    mj, _, m, _ = _pair(xml)
    np.testing.assert_allclose(m.dof_damping, mj.dof_damping, rtol=1e-12)
    np.testing.assert_array_equal(m.dof_dampingpoly, mj.dof_dampingpoly)


@pytest.mark.parametrize("flags", ["", '<flag damper="disable"/>', '<flag spring="disable"/>'])
def test_forward_matches_mujoco(flags):
    """Damper, spring and passive forces and qacc equal mj_forward's, with either flag off."""
    mj, md, m, d = _pair(model(flags=flags))
    rng = np.random.default_rng(0)
    for _ in range(5):
        q, v = random_state(mj, rng, scale=1.5)
        u = rng.normal(size=mj.nu)
        md.qpos[:], md.qvel[:], md.ctrl[:] = q, v, u
        d.qpos[:], d.qvel[:], d.ctrl[:] = q, v, u
        mujoco.mj_forward(mj, md)
        js.forward(m, d)
        for f in ("qfrc_damper", "qfrc_spring", "qfrc_passive"):
            assert _rel(getattr(d, f), getattr(md, f)) <= FORCE_TOL, f
        assert _rel(d.qacc, md.qacc) <= ACC_TOL
    if not flags:
        assert np.max(np.abs(md.qfrc_damper)) > 0.1


def test_damper_force_is_the_polynomial():
    """qfrc_damper = −v (b + p₀ |v| + p₁ v²) on a lone hinge, both signs of v."""
    xml = ('<mujoco><worldbody><body><joint damping="0.5 2 3"/><geom size=".1" pos=".2 0 0"/>'
           '</body></worldbody></mujoco>')
    m = _load(xml)
    d = js.Data(m)
    for v in (-1.7, -0.2, 0.0, 0.3, 2.5):
        d.qvel[0] = v
        js.forward(m, d)
        assert d.qfrc_damper[0] == pytest.approx(-v * (0.5 + 2 * abs(v) + 3 * v * v), abs=1e-14)


@pytest.mark.parametrize("integrator", ["Euler", "implicitfast"])
@pytest.mark.parametrize("flags", ["", '<flag invdiscrete="enable"/>'])
def test_inverse_matches_mujoco(integrator, flags):
    """qfrc_passive and qfrc_inverse equal mj_inverse's, also with invdiscrete."""
    mj, md, m, d = _pair(model(integrator, flags))
    rng = np.random.default_rng(1)
    for _ in range(4):
        q, v = random_state(mj, rng, scale=1.5)
        a = rng.normal(size=mj.nv)
        md.qpos[:], md.qvel[:], md.qacc[:] = q, v, a
        d.qpos[:], d.qvel[:], d.qacc[:] = q, v, a
        mujoco.mj_inverse(mj, md)
        js.inverse(m, d)
        assert _rel(d.qfrc_passive, md.qfrc_passive) <= FORCE_TOL
        assert _rel(d.qfrc_inverse, md.qfrc_inverse) <= ACC_TOL


def test_inverse_velocity_derivative_matches_differences():
    """inverse_derivatives' analytical ∂f/∂qvel has the dof and tendon dampers' derivatives.

    Checked against centered differences of `inverse` over qvel (and MuJoCo's mjd_inverseFD,
    forward differences, more loosely).
    """
    mj, md, m, d = _pair(model())
    rng = np.random.default_rng(3)
    q, v = random_state(mj, rng, scale=1.5)
    a = rng.normal(size=mj.nv)
    d.qpos[:], d.qvel[:], d.qacc[:] = q, v, a
    _, dfdv, _ = js.inverse_derivatives(m, d)
    eps = 1e-6
    fd = np.empty((mj.nv, mj.nv))
    for i in range(mj.nv):
        cols = []
        for s in (1.0, -1.0):
            d.qvel[:] = v
            d.qvel[i] += s * eps
            js.inverse(m, d)
            cols.append(d.qfrc_inverse.copy())
        fd[:, i] = (cols[0] - cols[1]) / (2 * eps)
    assert _rel(dfdv, fd) <= FD_TOL
    md.qpos[:], md.qvel[:], md.qacc[:] = q, v, a
    mjv = np.zeros((mj.nv, mj.nv))
    mujoco.mjd_inverseFD(mj, md, 1e-6, 0, None, mjv, None, None, None, None, None)
    assert _rel(dfdv, mjv.T) <= MJ_FD_TOL


@pytest.mark.parametrize("integrator", ["Euler", "implicit", "implicitfast"])
def test_trajectory_matches_mj_step(integrator):
    """500 steps from a random state stay on mj_step's trajectory."""
    mj, md, m, d = _pair(model(integrator))
    rng = np.random.default_rng(2)
    q, v = random_state(mj, rng, scale=2.0)
    u = rng.normal(size=mj.nu)
    md.qpos[:], md.qvel[:], md.ctrl[:] = q, v, u
    d.qpos[:], d.qvel[:], d.ctrl[:] = q, v, u
    for _ in range(500):
        mujoco.mj_step(mj, md)
    js.step(m, d, 500)
    assert _rel(d.qpos, md.qpos) <= TRAJ_TOL
    assert _rel(d.qvel, md.qvel) <= TRAJ_TOL


def test_euler_damps_implicitly_with_a_polynomial_alone():
    """A dof whose only damping is the polynomial still gets Euler's implicit damping.

    Regression: the Euler step looked at dof_damping > 0 alone, so a model with only
    polynomial damping stepped explicitly where MuJoCo's mj_Euler factors M + h B.
    """
    xml = ('<mujoco><option timestep="0.01"/><worldbody><body><joint type="slide" '
           'damping="0 50 50"/><geom size=".1" mass="0.1"/></body></worldbody></mujoco>')
    mj, md, m, d = _pair(xml)
    md.qvel[0] = d.qvel[0] = 3.0
    for _ in range(50):
        mujoco.mj_step(mj, md)
    js.step(m, d, 50)
    assert _rel(d.qvel, md.qvel) <= TRAJ_TOL


@pytest.mark.parametrize("xml, what", [
    ('<mujoco><worldbody><body>\n<joint damping="1 2 3 4"/><geom size=".1"/></body>'
     '</worldbody></mujoco>', "<joint>: attribute damping='1 2 3 4' has 4 values"),
    ('<mujoco><worldbody><body><joint name="j"/><geom size=".1"/></body></worldbody><tendon>'
     '\n<fixed damping="1 2 3 4"><joint joint="j" coef="1"/></fixed></tendon></mujoco>',
     "<fixed>: attribute damping='1 2 3 4' has 4 values"),
])
def test_too_many_coefficients_are_refused_as_mujoco_does(xml, what):
    with pytest.raises(ValueError, match="too much data"):
        mujoco.MjModel.from_xml_string(xml)
    with pytest.raises(ModelError, match=what):
        _load(xml)


@pytest.mark.parametrize("xml, what", [
    ('<mujoco><worldbody><body>\n<joint damping="1 -2"/><geom size=".1"/></body>'
     '</worldbody></mujoco>', "<joint>: damping=1.0 -2.0 0.0 has a negative value"),
    ('<mujoco><worldbody><body><joint name="j"/><geom size=".1"/></body></worldbody><tendon>'
     '\n<fixed damping="0 0 -1"><joint joint="j" coef="1"/></fixed></tendon></mujoco>',
     "<fixed>: damping=0.0 0.0 -1.0 has a negative value"),
])
def test_negative_coefficients_are_refused(xml, what):
    """Negative damping coefficients are refused, as a negative linear damping is.

    MuJoCo loads them: a damper that can push along the motion.
    """
    mujoco.MjModel.from_xml_string(xml)
    with pytest.raises(ModelError, match=what):
        _load(xml)


def test_actuator_dampingpoly_matches_mujoco():
    """An actuator's damping polynomial reaches its joint's damper, times gear² (MuJoCo 4).

    tests/test_actuator_damping.py covers actuator damping and armature in full.
    """
    xml = ('<mujoco><worldbody><body><joint name="j" damping="0 0.5 0"/><geom size=".1" '
           'pos=".2 0 0"/></body></worldbody><actuator>\n<motor joint="j" gear="2" '
           'damping="0 1"/></actuator></mujoco>')
    mj, md, m, d = _pair(xml)
    np.testing.assert_array_equal(m.actuator_dampingpoly, mj.actuator_dampingpoly)
    md.qvel[0] = d.qvel[0] = -1.5
    mujoco.mj_forward(mj, md)
    js.forward(m, d)
    assert _rel(d.qfrc_damper, md.qfrc_damper) <= FORCE_TOL
    assert d.qfrc_damper[0] == pytest.approx(1.5 * (0.5 + 4.0) * 1.5, rel=1e-14)


def test_spec_dampingpoly_is_checked():
    spec = js.ModelSpec()
    body = spec.world.add_body(name="b", source="robot.xml:3 <body>")
    body.add_joint(type="hinge", dampingpoly=(1.0, -1.0), source="robot.xml:4 <joint>")
    body.add_geom(type="sphere", size=np.r_[0.1, 0, 0])
    with pytest.raises(ModelError, match=r"joint dampingpoly must be 2 finite.*robot.xml:4"):
        js.compile_model(spec)
