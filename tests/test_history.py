"""Delayed and sampled signals (MuJoCo 4.0's history buffers) against MuJoCo 4.0.

Compiled fields must equal MuJoCo's exactly; d.history, d.sensordata and d.qacc must follow
MuJoCo's along 300 steps with changing controls, through keyframe resets, state round trips
and every integrator.
"""

import mujoco
import numpy as np
import pytest
from mujoco import rollout as mj_rollout

import jointspace as js
from jointspace.errors import ModelError
from tests._util import rel_err

# The same arithmetic in the same order as MuJoCo's, but for the constraint solver's and the
# RK4 stages' sums, which round differently: 1e-12 of the largest value (rel_err's scale).
TOL = 1e-12
NSTEP = 300
INTEGRATORS = ("Euler", "implicit", "implicitfast", "RK4")
HISTORY_FIELDS = ("actuator_history", "actuator_historyadr", "actuator_delay",
                  "sensor_history", "sensor_historyadr", "sensor_delay", "sensor_interval")

# A pendulum with a slider whose ball bounces on the floor (touch), damping (the Euler step's
# implicit damping), delays that are and are not multiples of the time step, every interp,
# sensors delayed, sampled, both, and history-only, a pid whose three controls are buffered
# and delayed as one block, and a keyframe.
XML = """
<mujoco>
  <option timestep="0.004"/>
  <worldbody>
    <geom type="plane" size="2 2 .1"/>
    <body pos="0 0 0.62">
      <joint name="hinge" type="hinge" axis="0 1 0" damping="0.05"/>
      <geom type="capsule" size="0.03" fromto="0 0 0 0 0 -0.3" mass="1"/>
      <site name="imu" pos="0.02 0 -0.3"/>
      <body pos="0 0 -0.3">
        <joint name="slide" type="slide" axis="0 0 1" range="-0.3 0.3"/>
        <geom type="sphere" size="0.05" mass="0.5"/>
        <site name="foot" size="0.07"/>
      </body>
    </body>
  </worldbody>
  <actuator>
    <motor name="motor" joint="hinge" nsample="4" delay="0.01" interp="linear"
           ctrlrange="-2 2"/>
    <position name="servo" joint="slide" kp="40" nsample="3" delay="0.008"/>
    <motor name="plain" joint="slide" gear="0.5"/>
    <general name="filtered" joint="hinge" dyntype="filter" dynprm="0.02" nsample="5"
             delay="0.0132" interp="cubic"/>
    <motor name="kept" joint="hinge" gear="0.1" nsample="2"/>
    <pid name="pid" joint="slide" kp="30" kv="2" ki="4" input="pos vel ff" velrange="-1 1"
         ffrange="-2 2" nsample="4" delay="0.0105" interp="cubic"/>
  </actuator>
  <sensor>
    <jointpos name="q" joint="hinge" nsample="4" delay="0.012"/>
    <jointvel name="qd" joint="slide" nsample="3" interval="0.01 -0.002"/>
    <jointvel name="qd_late" joint="hinge" nsample="5" delay="0.0165" interp="linear"/>
    <accelerometer name="acc" site="imu" nsample="3" delay="0.006" interp="cubic"/>
    <touch name="touch" site="foot" nsample="3" delay="0.005" interp="linear"/>
    <jointpos name="kept" joint="slide" nsample="2"/>
    <gyro name="gyro" site="imu" nsample="4" delay="0.009" interval="0.0105"/>
    <framepos name="fp" objtype="site" objname="imu" nsample="2" interval="0.007"
              interp="linear"/>
    <accelerometer name="plainacc" site="imu"/>
  </sensor>
  <keyframe>
    <key name="up" time="0.7" qpos="0.8 -0.1" qvel="-1 0.5" ctrl="0.5 0.1 0 0.2 0.3 0.1 -0.3 0.4"/>
  </keyframe>
</mujoco>
"""


def _pair(xml=XML, integrator="Euler"):
    m = js.load_string(xml)
    mm = mujoco.MjModel.from_xml_string(xml)
    m.opt.integrator = integrator
    mm.opt.integrator = getattr(mujoco.mjtIntegrator, "mjINT_" + integrator.upper())
    return m, js.make_data(m), mm, mujoco.MjData(mm)


def _mj_state(mm, md, spec):
    out = np.empty(mujoco.mj_stateSize(mm, spec))
    mujoco.mj_getState(mm, md, out, spec)
    return out


def _run(m, d, mm, md, rng, nstep, err):
    """nstep steps of both under the same random controls; the worst error of each field."""
    for _ in range(nstep):
        u = rng.uniform(-1.5, 1.5, m.nu)
        d.ctrl[:] = u
        md.ctrl[:] = u
        js.step(m, d)
        mujoco.mj_step(mm, md)
        for name in ("history", "sensordata", "qacc"):
            err[name] = max(err[name], rel_err(getattr(d, name), getattr(md, name)))
    assert d.time == md.time


def test_compiled_fields_and_initial_buffers_match_mujoco():
    m, d, mm, md = _pair()
    assert m.nhistory == mm.nhistory > 0
    for f in HISTORY_FIELDS:
        np.testing.assert_array_equal(getattr(m, f), getattr(mm, f), err_msg=f)
    np.testing.assert_array_equal(d.history, md.history)
    # a new time step changes the times the next reset writes
    m.opt.timestep = mm.opt.timestep = 0.003
    js.reset(m, d, "up")
    mujoco.mj_resetDataKeyframe(mm, md, 0)
    np.testing.assert_array_equal(d.history, md.history)
    assert d.time == md.time == 0.7
    plain = js.load_string(BASE.format('<motor joint="j" nsample="-1"/>',
                                       '<jointpos joint="j" interval="0.1"/>'))
    mj_plain = mujoco.MjModel.from_xml_string(BASE.format('<motor joint="j" nsample="-1"/>',
                                                          '<jointpos joint="j" interval="0.1"/>'))
    assert plain.nhistory == mj_plain.nhistory == 0
    for f in HISTORY_FIELDS:
        np.testing.assert_array_equal(getattr(plain, f), getattr(mj_plain, f), err_msg=f)


@pytest.mark.parametrize("integrator", INTEGRATORS)
def test_trajectory_matches_mujoco(integrator):
    """300 steps, a keyframe reset and a state round trip through a new Data midway."""
    m, d, mm, md = _pair(integrator=integrator)
    rng = np.random.default_rng(7)
    err = dict.fromkeys(("history", "sensordata", "qacc"), 0.0)
    _run(m, d, mm, md, rng, NSTEP // 3, err)
    js.reset(m, d, "up")
    mujoco.mj_resetDataKeyframe(mm, md, 0)
    _run(m, d, mm, md, rng, NSTEP // 3, err)
    spec = mujoco.mjtState.mjSTATE_INTEGRATION
    x = js.get_state(m, d, spec)
    np.testing.assert_allclose(x, _mj_state(mm, md, spec), rtol=0, atol=TOL * max(1, abs(x).max()))
    d2 = js.make_data(m)
    js.set_state(m, d2, x, spec)
    _run(m, d2, mm, md, rng, NSTEP - 2 * (NSTEP // 3), err)
    assert max(err.values()) < TOL, err
    assert np.any(d2.history != 0.0)


def test_touch_and_delays_matter():
    """The test's model exercises what it claims: contacts, delayed forces, held samples."""
    m, d, mm, md = _pair()
    rng = np.random.default_rng(1)
    touched = held = 0
    i_touch = m.sensor_adr[m.id("sensor", "touch")]
    i_qd = m.sensor_adr[m.id("sensor", "qd")]
    for _ in range(NSTEP):
        d.ctrl[:] = rng.uniform(-1.5, 1.5, m.nu)
        before = d.sensordata[i_qd]
        js.step(m, d)
        touched += d.sensordata[i_touch] > 0
        held += d.sensordata[i_qd] == before
    assert touched > 5 and held > NSTEP // 3
    # the delayed motor's force follows the control of `delay` ago, not the current one
    js.reset(m, d)
    d.ctrl[:] = 0.0
    d.ctrl[0] = 1.0
    js.forward(m, d)
    assert d.actuator_force[0] == 0.0
    js.step(m, d, 4)
    js.forward(m, d)
    assert d.actuator_force[0] == 1.0


def test_rollout_states_carry_the_history():
    m, d, mm, md = _pair()
    rng = np.random.default_rng(3)
    nbatch, nstep = 3, 60
    x0 = np.stack([js.get_state(m, d, "fullphysics") for _ in range(nbatch)])
    x0[:, 1:1 + m.nq] += rng.normal(scale=0.2, size=(nbatch, m.nq))
    assert x0.shape[1] == mujoco.mj_stateSize(mm, mujoco.mjtState.mjSTATE_FULLPHYSICS)
    u = rng.uniform(-1, 1, (nbatch, nstep, m.nu))
    state, sensordata = js.rollout(m, None, x0, u)
    mj_state, mj_sensordata = mj_rollout.rollout(mm, md, x0, u)
    assert rel_err(state, mj_state) < TOL
    assert rel_err(sensordata, mj_sensordata) < TOL
    # the history part moves, and a rollout restarted from a state continues it
    h = slice(1 + m.nq + m.nv + m.na, None)
    assert np.any(state[:, -1, h] != x0[:, h])
    again, _ = js.rollout(m, None, state[:, nstep // 2 - 1], u[:, nstep // 2:])
    np.testing.assert_array_equal(again, state[:, nstep // 2:])


def test_read_ctrl_and_read_sensor_match_mujoco():
    m, d, mm, md = _pair()
    rng = np.random.default_rng(5)
    _run(m, d, mm, md, rng, 40, dict.fromkeys(("history", "sensordata", "qacc"), 0.0))
    for t in d.time + np.array([-0.05, -0.013, -0.0101, -0.004, 0.0, 0.02]):
        for interp in (0, 1, 2):
            # the bindings return a view of the result buffer (or of MuJoCo's own memory)
            # without keeping the buffer alive: hold it in a name and copy the view at once
            for a in range(m.nactuator):
                res = np.empty(m.actuator_ctrlnum[a])
                want = np.array(mujoco.mj_readCtrl(mm, md, a, t, res, interp), copy=True)
                got = js.history.read_ctrl(m, d, a, t, interp)
                assert np.shape(got) == (() if res.size == 1 else res.shape)
                assert rel_err(got, want.ravel() if res.size > 1 else want) < TOL
            for s in range(m.nsensor):
                res = np.empty(m.sensor_dim[s])
                want = np.array(mujoco.mj_readSensor(mm, md, s, t, res, interp), copy=True)
                got = js.history.read_sensor(m, d, s, t, ["zoh", "linear", "cubic"][interp])
                assert rel_err(got, want) < TOL, (s, t, interp)
    with pytest.raises(ValueError, match="interp must be one of"):
        js.history.read_ctrl(m, d, "motor", interp="spline")


def test_bad_state_reset_resets_the_buffers():
    m, d, mm, md = _pair()
    rng = np.random.default_rng(2)
    _run(m, d, mm, md, rng, 20, dict.fromkeys(("history", "sensordata", "qacc"), 0.0))
    d.qpos[0] = md.qpos[0] = np.nan
    with pytest.warns(js.JointspaceWarning):
        js.step(m, d)
    mujoco.mj_step(mm, md)
    assert rel_err(d.history, md.history) < TOL
    assert rel_err(d.qacc, md.qacc) < TOL


ORIENTATION = """
<mujoco>
  <option timestep="0.004" integrator="{integrator}"/>
  <worldbody>
    <body pos="0 0 1">
      <joint name="ball" type="ball" damping="0.05"/>
      <geom type="box" size="0.1 0.05 0.03" pos="0.1 0 -0.2"/>
      <site name="tip" pos="0.1 0 -0.2"/>
    </body>
  </worldbody>
  <actuator>
    <orientation joint="ball" kp="3" kv="0.2" input="{chart}" nsample="4" delay="0.0105"
                 interp="cubic"/>
    <orientation site="tip" refsite="ref" kp="2" kv="0.1" nsample="2" delay="0.004"/>
  </actuator>
  <worldbody><site name="ref" pos="0 0 1"/></worldbody>
</mujoco>
"""


@pytest.mark.parametrize("chart", ("expmap", "quat"))
@pytest.mark.parametrize("integrator", ("Euler", "RK4"))
def test_orientation_controls_are_buffered_as_one_block(chart, integrator):
    """An orientation servo's 3 or 4 controls are written and read late together (4.0.0)."""
    m, d, mm, md = _pair(ORIENTATION.format(chart=chart, integrator=integrator), integrator)
    assert m.nhistory == mm.nhistory == 2 + 4 * (1 + m.actuator_ctrlnum[0]) + 2 + 2 * (1 + 3)
    rng = np.random.default_rng(11)
    err = dict.fromkeys(("history", "sensordata", "qacc"), 0.0)
    _run(m, d, mm, md, rng, NSTEP, err)
    assert max(err.values()) < TOL, err
    # the delayed force differs from the one of the current controls
    js.forward(m, d)
    m_now = js.load_string(ORIENTATION.format(chart=chart, integrator=integrator)
                           .replace(' nsample="4" delay="0.0105"', "")
                           .replace(' nsample="2" delay="0.004"', ""))
    now = js.make_data(m_now)
    now.qpos[:], now.qvel[:], now.ctrl[:] = d.qpos, d.qvel, d.ctrl
    js.forward(m_now, now)
    assert np.abs(now.actuator_force - d.actuator_force).max() > 1e-3


def test_quaternion_targets_reset_to_the_identity():
    """A quaternion target's neutral control is (1, 0, 0, 0) (MuJoCo 4.0's mj_resetCtrl).

    In d.ctrl and in its buffer's samples, after make_data, reset, a keyframe (key_ctrl as
    given) and the reset of a bad state.
    """
    xml = ORIENTATION.format(chart="quat", integrator="Euler").replace(
        "</mujoco>", '<keyframe><key name="k" qpos="0 1 0 0"/></keyframe></mujoco>')
    m, d, mm, md = _pair(xml)
    np.testing.assert_array_equal(d.ctrl, md.ctrl)
    assert d.ctrl[0] == 1.0 and not d.ctrl[1:].any()
    np.testing.assert_array_equal(d.history, md.history)
    d.ctrl[:] = md.ctrl[:] = 0.3
    js.reset(m, d)
    mujoco.mj_resetData(mm, md)
    np.testing.assert_array_equal(d.ctrl, md.ctrl)
    np.testing.assert_array_equal(d.history, md.history)
    js.reset(m, d, "k")
    mujoco.mj_resetDataKeyframe(mm, md, 0)
    np.testing.assert_array_equal(d.ctrl, md.ctrl)
    np.testing.assert_array_equal(m.key_ctrl, mm.key_ctrl)
    d.ctrl[:] = md.ctrl[:] = 0.3
    d.qpos[0] = md.qpos[0] = np.nan
    with pytest.warns(js.JointspaceWarning):
        js.step(m, d)
    mujoco.mj_step(mm, md)
    np.testing.assert_array_equal(d.ctrl, md.ctrl)
    assert rel_err(d.history, md.history) < TOL


def test_transition_derivatives_refuse_history():
    m, d, _, _ = _pair()
    with pytest.raises(ValueError, match="history buffers"):
        js.transition_derivatives(m, d)


BASE = """
<mujoco>
  <worldbody><body><joint name="j"/><geom size="0.1"/><site name="s"/></body></worldbody>
  <actuator>{}</actuator>
  <sensor>{}</sensor>
</mujoco>
"""


@pytest.mark.parametrize("actuator, sensor, message", [
    ('<motor joint="j" delay="0.01"/>', "", r"<motor>.*delay=0.01 needs a history buffer"),
    ("", '<jointpos joint="j" delay="0.01"/>', r"<jointpos>.*delay=0.01 needs a history"),
    ("", '<jointpos joint="j" nsample="2" interval="-0.1"/>', "period must be non-negative"),
    ("", '<jointpos joint="j" nsample="2" interval="0.1 0.05"/>', "phase must be zero or neg"),
    ("", '<jointpos joint="j" nsample="2" interval="0.1 -0.1"/>', "greater than -period"),
    ("", '<user dim="1" nsample="2"/>', "user sensors have no history buffer"),
    ('<motor joint="j" nsample="16777217"/>', "", "at most 2"),
    ('<motor joint="j" nsample="2" interp="spline"/>', "", "spline"),
])
def test_refused_as_mujoco_refuses(actuator, sensor, message):
    xml = BASE.format(actuator, sensor)
    with pytest.raises(ModelError, match=message):
        js.load_string(xml)
    with pytest.raises(ValueError):
        mujoco.MjModel.from_xml_string(xml)


def test_a_model_spec_is_checked_as_mjcf_is():
    """compile_model refuses what the MJCF reader refuses, for specs built in Python."""
    from jointspace.io.mjcf import parse_mjcf

    ok = BASE.format('<motor joint="j" nsample="2"/>', '<jointpos joint="j" nsample="2"/>')
    for edit, message in ((lambda s: setattr(s.actuators[0], "delay", 0.1), None),
                          (lambda s: setattr(s.actuators[0], "nsample", 0), "needs a history"),
                          (lambda s: setattr(s.sensors[0], "interval", (0.1, 0.2)), "phase in"),
                          (lambda s: setattr(s.sensors[0], "interp", "spline"), "spline")):
        spec = parse_mjcf(ok)
        spec.actuators[0].delay = 0.1
        edit(spec)
        if message is None:
            assert js.compile_model(spec).actuator_delay[0] == 0.1
        else:
            with pytest.raises(ModelError, match=message):
                js.compile_model(spec)
