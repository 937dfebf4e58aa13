"""MuJoCo's <option><flag …="disable"/> switches act on the smooth pipeline as in MuJoCo."""

import mujoco
import numpy as np
import pytest

import jointspace as js

TOL = 1e-9  # same arithmetic on both sides; trajectories of 0.2 s stay at round-off

XML = """
<mujoco>
  <option timestep="0.002" integrator="{integrator}">
    <flag {flag}="disable" contact="disable" constraint="disable"/>
  </option>
  <worldbody>
    <body pos="0 0 1">
      <joint name="a" type="hinge" axis="0 1 0" stiffness="3" springref="0.2" damping="0.7"/>
      <geom type="capsule" fromto="0 0 0 0.3 0 0" size="0.04"/>
      <body pos="0.3 0 0">
        <joint name="b" type="slide" axis="1 0 0" stiffness="5" damping="0.4"/>
        <geom type="sphere" size="0.06"/>
      </body>
    </body>
  </worldbody>
  <actuator>
    <position joint="a" kp="20" kv="1" ctrlrange="-0.3 0.3"/>
    <motor joint="b" gear="2" ctrlrange="-1 1"/>
  </actuator>
</mujoco>
"""


@pytest.mark.parametrize("flag", ["spring", "damper", "gravity", "clampctrl", "actuation",
                                  "eulerdamp"])
@pytest.mark.parametrize("integrator", ["Euler", "implicitfast"])
def test_disabled_feature_matches_mujoco(flag, integrator):
    xml = XML.format(flag=flag, integrator=integrator)
    m, mm = js.load_string(xml), mujoco.MjModel.from_xml_string(xml)
    assert m.opt_disableflags[0] == mm.opt.disableflags
    d, md = js.make_data(m), mujoco.MjData(mm)
    d.ctrl[:] = md.ctrl[:] = [1.0, 3.0]  # beyond ctrlrange: clamping matters
    d.qvel[:] = md.qvel[:] = [0.5, -0.2]
    js.step(m, d, 100)
    mujoco.mj_step(mm, md, 100)
    np.testing.assert_allclose(d.qpos, md.qpos, atol=TOL)
    np.testing.assert_allclose(d.qvel, md.qvel, atol=TOL)
    np.testing.assert_allclose(d.qfrc_passive, md.qfrc_passive, atol=TOL)
    np.testing.assert_allclose(d.qfrc_actuator, md.qfrc_actuator, atol=TOL)
    np.testing.assert_allclose(d.qfrc_bias, md.qfrc_bias, atol=TOL)
