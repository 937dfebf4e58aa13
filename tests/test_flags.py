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


# Contact flags: the parameter override, parent filtering and the reset of a diverged state.
# The contacts are those of the same collision code on both sides; forces and trajectories
# agree to the contact tolerance of the collision parity tests.
CONTACT_TOL = 1e-9
# 200 steps of a box resting on four corners: each Newton solve stops at its tolerance
# (1e-8), and the two engines' iterates part by up to 1e-7 in qpos (measured 1.1e-7)
TRAJ_TOL = 1e-6

SCENE = """
<mujoco>
  <option timestep="0.002" o_margin="{o_margin}" o_solref="0.03 0.8"
          o_solimp="0.8 0.9 0.002 0.4 3" o_friction="0.6 0.7 0.01 0.002 0.003" cone="elliptic">
    <flag {flags}/>
  </option>
  <worldbody>
    <geom type="plane" size="2 2 0.1" margin="0.003" solref="0.01 1" friction="1.2 0.01 0.001"/>
    <body name="box" pos="0 0 0.11">
      <freejoint/>
      <geom type="box" size="0.1 0.08 0.1" margin="0.002" condim="6"/>
      <body name="arm" pos="0.1 0 0.05">
        <joint name="hinge" type="hinge" axis="0 1 0" damping="0.1"/>
        <geom type="capsule" fromto="0 0 0 0.2 0 -0.1" size="0.03" condim="4"/>
      </body>
    </body>
    <body name="ball" pos="0.35 0.05 0.06">
      <freejoint/>
      <geom type="sphere" size="0.05" gap="0.001" margin="0.004"/>
    </body>
  </worldbody>
  <contact>
    <pair geom1="ball" geom2="ball" margin="0.01" solref="0.05 1"/>
  </contact>
</mujoco>
"""


def _contact_scene(flags, o_margin=0.02):
    xml = SCENE.format(flags=flags, o_margin=o_margin)
    xml = xml.replace('<pair geom1="ball" geom2="ball"', '<pair geom1="floor" geom2="ball"')
    xml = xml.replace('<geom type="plane"', '<geom name="floor" type="plane"')
    xml = xml.replace('<geom type="sphere"', '<geom name="ball" type="sphere"')
    return xml, js.load_string(xml), mujoco.MjModel.from_xml_string(xml)


def _contacts_equal(d, md):
    assert d.ncon[0] == md.ncon
    c, mc = d.contact, md.contact
    for name in ("dist", "includemargin", "friction", "solref", "solreffriction", "solimp",
                 "dim", "geom"):
        np.testing.assert_allclose(np.asarray(getattr(c, name))[:md.ncon],
                                   getattr(mc, name)[:md.ncon], rtol=0, atol=CONTACT_TOL,
                                   err_msg=name)


@pytest.mark.parametrize("o_margin", [0.02, 0.0])
def test_contact_override_matches_mujoco(o_margin):
    """o_margin, o_solref, o_solimp and o_friction replace every contact's parameters."""
    xml, m, mm = _contact_scene('override="enable"', o_margin)
    assert m.opt_enableflags[0] == mm.opt.enableflags
    np.testing.assert_array_equal(m.opt_o_solimp, mm.opt.o_solimp)
    np.testing.assert_array_equal(m.opt_o_friction, mm.opt.o_friction)
    d, md = js.make_data(m), mujoco.MjData(mm)
    js.forward(m, d)
    mujoco.mj_forward(mm, md)
    assert md.ncon > 0
    _contacts_equal(d, md)
    # the override changed what a contact gets: every friction is o_friction's
    np.testing.assert_allclose(md.contact.friction[:md.ncon],
                               np.tile(mm.opt.o_friction, (md.ncon, 1)), rtol=0, atol=0)
    np.testing.assert_allclose(d.qacc, md.qacc, rtol=0, atol=1e-6)
    js.step(m, d, 200)
    mujoco.mj_step(mm, md, 200)
    _contacts_equal(d, md)
    np.testing.assert_allclose(d.qpos, md.qpos, rtol=0, atol=TRAJ_TOL)


def test_override_flag_set_at_run_time_matches_mujoco():
    """The flag is read at every step: enabling it after loading acts as in MuJoCo."""
    _, m, mm = _contact_scene("")
    d, md = js.make_data(m), mujoco.MjData(mm)
    js.forward(m, d)
    mujoco.mj_forward(mm, md)
    assert not np.allclose(d.contact.friction[:d.ncon[0]], m.opt_o_friction)
    m.opt.enableflags = mm.opt.enableflags = 1  # mjENBL_OVERRIDE
    js.forward(m, d)
    mujoco.mj_forward(mm, md)
    _contacts_equal(d, md)
    np.testing.assert_array_equal(d.contact.friction[:d.ncon[0]],
                                  np.tile(m.opt_o_friction, (d.ncon[0], 1)))


def test_parent_filter_disabled_matches_mujoco():
    """filterparent="disable": a body collides with its parent (the arm with the box)."""
    _, m, mm = _contact_scene('filterparent="disable"')
    d, md = js.make_data(m), mujoco.MjData(mm)
    js.forward(m, d)
    mujoco.mj_forward(mm, md)
    box, arm = mm.body("box").id, mm.body("arm").id
    pairs = {tuple(sorted(mm.geom_bodyid[g])) for g in md.contact.geom[:md.ncon]}
    assert (box, arm) in pairs  # the filter is off: parent and child touch
    _contacts_equal(d, md)
    np.testing.assert_allclose(d.qacc, md.qacc, rtol=0, atol=1e-6)
    _, m2, _ = _contact_scene("")
    d2 = js.make_data(m2)
    js.forward(m2, d2)
    assert d2.ncon[0] < d.ncon[0]  # with the filter on the same contacts are dropped


def test_autoreset_disabled_keeps_a_diverged_state_as_mujoco():
    """autoreset="disable": a NaN control leaves a NaN state, counted, not reset."""
    xml = XML.format(flag="autoreset", integrator="Euler")
    m, mm = js.load_string(xml), mujoco.MjModel.from_xml_string(xml)
    d, md = js.make_data(m), mujoco.MjData(mm)
    d.qfrc_applied[0] = md.qfrc_applied[0] = np.nan
    with pytest.warns(js.JointspaceWarning, match="it was kept"):
        js.step(m, d, 3)
    mujoco.mj_step(mm, md, 3)
    np.testing.assert_array_equal(np.isnan(d.qpos), np.isnan(md.qpos))
    assert np.isnan(d.qpos).any()
    assert d.warning[2, 0] > 0 and md.warning[mujoco.mjtWarning.mjWARN_BADQACC].number > 0
    # with the flag on (the default) the state is reset to qpos0
    m.opt.disableflags = int(m.opt.disableflags) & ~(1 << 16)
    d = js.make_data(m)
    d.qfrc_applied[0] = np.nan
    with pytest.warns(js.JointspaceWarning, match="reset to qpos0"):
        js.step(m, d, 1)
    assert np.isfinite(d.qpos).all()


def test_option_view_reads_and_writes_the_vector_options():
    """m.opt gives o_solref, o_solimp, o_friction and magnetic whole, and checks writes."""
    xml, m, mm = _contact_scene("")
    for name in ("o_solref", "o_solimp", "o_friction", "magnetic", "gravity", "wind"):
        np.testing.assert_array_equal(getattr(m.opt, name), getattr(mm.opt, name), name)
    m.opt.o_solref = (0.05, 0.7)
    np.testing.assert_array_equal(m.opt_o_solref, [0.05, 0.7])
    assert m.opt.o_margin == 0.02
    with pytest.raises(ValueError, match="option o_solimp takes 5 numbers"):
        m.opt.o_solimp = (0.9, 0.95)
    with pytest.raises(ValueError, match="option o_friction must be finite"):
        m.opt.o_friction = (1.0, np.nan, 0.005, 0.0001, 0.0001)
