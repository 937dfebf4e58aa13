"""Sensors against MuJoCo's sensordata, type by type and on dm_control's suite files.

Every sensor type jointspace computes but the geometric ones (rangefinder, contact,
insidesite, geom distances: tests/test_sensor_contact_ray.py) is declared in SENSORS on a
model with a floating base, hinge, slide and ball joints, a joint limit, actuators, a weld,
contacts with the floor and relative frames; `d.sensordata` equals MuJoCo's after
`mj_forward` at seeded states and along `mj_step`. The dm_control suite files that declare
sensors and load here are compared the same way. Sensors that jointspace does not compute
keep MuJoCo's layout and read NaN, named in a warning; unsupported ones that would change
the layout are refused.
"""

import mujoco
import numpy as np
import pytest

import jointspace as js
from jointspace.errors import ModelError
from tests._real_models import real_model
from tests._util import random_state

SMOOTH_TOL = 1e-8  # sensordata relative to max(1, |value|) without contacts: the bound
# with contacts, the acceleration-stage sensors carry the constraint solve's difference from
# MuJoCo's. SENSORS is solved nearly to convergence (tolerance 1e-15): measured ≤ 4.4e-8 but
# at one state of the 500 where our Newton stops one iteration before MuJoCo's (2.3e-7). At
# MuJoCo's default tolerance (1e-8) that early stop costs more (measured on SENSORS: 7e-6);
# dm_control's files at their own settings stay within 1e-6 at the compared states.
CONTACT_TOL = 1e-6
DEFAULT_SOLVER_TOL = 1e-6

SENSORS = """<mujoco model="sensors">
<option timestep="0.002" magnetic="0.1 -0.4 0.2" cone="elliptic" tolerance="1e-15"
        ls_tolerance="1e-6" iterations="200"/>
<worldbody>
  <geom name="floor" type="plane" size="3 3 .1"/>
  <site name="world_site" pos="0.3 -0.2 0.1" quat="0.8 0.2 0.5 0.1"/>
  <body name="torso" pos="0 0 0.6">
    <freejoint name="root"/>
    <geom name="torso_geom" type="box" size=".15 .1 .05" quat="0.9 0.1 0.2 0.3"/>
    <site name="imu" pos=".05 .02 .03" quat="0.7 0.1 0.7 0.1" size=".02"/>
    <body name="thigh" pos="0.1 0 -0.05">
      <joint name="hip" type="hinge" axis="0 1 0" range="-30 40" damping="0.1"/>
      <geom name="thigh_geom" type="capsule" fromto="0 0 0 0 0 -.25" size=".04"/>
      <site name="hip_site" pos="0 0 -.05" quat="0.6 0.3 0.6 -0.4"/>
      <body name="shin" pos="0 0 -.25">
        <joint name="knee" type="slide" axis="0 0 1" range="-.1 .05" stiffness="50"/>
        <geom name="shin_geom" type="capsule" fromto="0 0 0 0 0 -.2" size=".035"/>
        <site name="foot" type="sphere" pos="0 0 -.2" size=".06"/>
        <site name="foot_box" type="box" pos="0 0 -.2" size=".05 .05 .08"/>
      </body>
    </body>
    <body name="arm" pos="-0.1 0.1 0">
      <joint name="shoulder" type="ball" damping="0.05"/>
      <geom name="arm_geom" type="capsule" fromto="0 0 0 -.2 0 -.1" size=".03"/>
      <site name="hand" type="capsule" pos="-.2 0 -.1" size=".04 .05"/>
    </body>
  </body>
  <body name="box" pos="0.6 0 0.1">
    <freejoint/>
    <geom name="box_geom" type="box" size=".1 .1 .1"/>
    <site name="box_site" type="cylinder" pos="0 0 -.05" size=".12 .06"/>
    <site name="box_top" type="ellipsoid" pos="0 0 .1" size=".05 .06 .07"/>
  </body>
</worldbody>
<actuator>
  <motor name="hip_motor" joint="hip" gear="2" ctrlrange="-1 1"/>
  <position name="knee_servo" joint="knee" kp="40"/>
</actuator>
<sensor>
  <accelerometer name="acc" site="imu"/>
  <velocimeter site="imu"/>
  <gyro site="imu" cutoff="2"/>
  <force site="hip_site"/>
  <torque site="hip_site"/>
  <magnetometer site="imu"/>
  <touch site="foot"/>
  <touch site="foot_box"/>
  <touch site="box_site"/>
  <touch site="box_top"/>
  <touch name="hand_touch" site="hand"/>
  <jointpos joint="hip"/>
  <jointvel joint="knee"/>
  <actuatorpos actuator="knee_servo"/>
  <actuatorvel actuator="hip_motor"/>
  <actuatorfrc actuator="knee_servo"/>
  <jointactuatorfrc joint="hip"/>
  <ballquat joint="shoulder"/>
  <ballangvel joint="shoulder"/>
  <jointlimitpos joint="knee"/>
  <jointlimitvel joint="knee"/>
  <jointlimitfrc joint="knee"/>
  <jointlimitfrc joint="hip"/>
  <framepos objtype="body" objname="thigh"/>
  <framepos objtype="site" objname="hand" reftype="xbody" refname="thigh"/>
  <framequat objtype="geom" objname="shin_geom"/>
  <framequat objtype="body" objname="arm" reftype="site" refname="imu"/>
  <framexaxis objtype="xbody" objname="shin"/>
  <frameyaxis objtype="site" objname="foot" reftype="geom" refname="torso_geom"/>
  <framezaxis objtype="body" objname="box"/>
  <framelinvel objtype="site" objname="hand"/>
  <framelinvel objtype="site" objname="foot" reftype="site" refname="imu"/>
  <frameangvel objtype="body" objname="shin"/>
  <frameangvel objtype="xbody" objname="arm" reftype="body" refname="box"/>
  <framelinacc objtype="site" objname="foot"/>
  <frameangacc objtype="body" objname="arm"/>
  <framelinvel objtype="site" objname="world_site"/>
  <framelinacc objtype="site" objname="world_site"/>
  <subtreecom body="thigh"/>
  <subtreelinvel body="torso"/>
  <subtreeangmom body="torso"/>
  <subtreeangmom body="world"/>
  <e_potential/>
  <e_kinetic/>
  <clock/>
  <user dim="2" needstage="vel"/>
  <jointpos joint="hip" cutoff="0.2"/>
  <touch site="foot" cutoff="5"/>
</sensor>
</mujoco>"""


def _load(xml):
    m = js.load_string(xml)
    mm = mujoco.MjModel.from_xml_string(xml)
    return m, js.make_data(m), mm, mujoco.MjData(mm)


def _by_sensor(m, errfn):
    """The first sensor (name or type) whose slice errfn flags, for a failure message."""
    for i in range(m.nsensor):
        a, n = m.sensor_adr[i], m.sensor_dim[i]
        if errfn(slice(a, a + n)):
            return f"sensor {i} ({m.names['sensor'][i] or mujoco.mjtSensor(m.sensor_type[i]).name})"
    return "no sensor"


def _compare(m, d, mm, md, tol, what):
    scale = np.maximum(1.0, np.abs(md.sensordata))
    bad = lambda s: np.any(np.abs(d.sensordata[s] - md.sensordata[s]) > tol * scale[s])  # noqa: E731
    assert not bad(slice(None)), f"{what}: {_by_sensor(m, bad)}"


def test_layout_equals_mujoco():
    m, _, mm, _ = _load(SENSORS)
    assert (m.nsensor, m.nsensordata) == (mm.nsensor, mm.nsensordata)
    for f in ("type", "datatype", "needstage", "objtype", "objid", "reftype", "refid", "dim",
              "adr", "cutoff", "noise"):
        np.testing.assert_array_equal(getattr(m, "sensor_" + f), getattr(mm, "sensor_" + f),
                                      err_msg=f)
    np.testing.assert_array_equal(m.opt_magnetic, mm.opt.magnetic)


@pytest.mark.parametrize("integrator", ["Euler", "RK4"])
def test_every_sensor_matches_mujoco_along_a_trajectory(integrator):
    """At seeded states, then along 500 of MuJoCo's steps with contacts and limits in play.

    Before each step our state is set to MuJoCo's (`set_state`, warm start included), so
    that sensordata is compared at the same states: left free, the two trajectories agree
    to 1e-15 for ~200 steps and then part by ~1e-9 at a contact-solver event.
    """
    xml = SENSORS.replace('cone="elliptic"', f'cone="elliptic" integrator="{integrator}"')
    m, d, mm, md = _load(xml)
    rng = np.random.default_rng(4)
    for k in range(5):
        q, v = random_state(mm, rng, scale=0.5)
        q[2] = 0.6 + 0.1 * k  # above the floor
        ctrl = rng.uniform(-1, 1, m.nu)
        for dd in (d, md):
            dd.qpos[:] = q
            dd.qvel[:] = v
            dd.ctrl[:] = ctrl
        js.forward(m, d)
        mujoco.mj_forward(mm, md)
        _compare(m, d, mm, md, CONTACT_TOL if md.ncon else SMOOTH_TOL, f"state {k}")
    mujoco.mj_resetData(mm, md)
    spec = mujoco.mjtState.mjSTATE_INTEGRATION
    x = np.empty(mujoco.mj_stateSize(mm, spec))
    touched = np.zeros(m.nsensordata, dtype=bool)
    for k in range(500):
        md.ctrl[:] = [np.sin(0.02 * k), -0.05 + 0.05 * np.cos(0.03 * k)]
        mujoco.mj_getState(mm, md, x, spec)
        js.set_state(m, d, x, "integration")
        js.step(m, d)
        mujoco.mj_step(mm, md)
        _compare(m, d, mm, md, CONTACT_TOL if md.ncon else SMOOTH_TOL,
                 f"{integrator} step {k}")
        touched |= d.sensordata != 0
    # the trajectory exercised the contact and limit sensors
    for name in ("touch", "jointlimitfrc"):
        idx = [m.sensor_adr[i] for i in range(m.nsensor)
               if mujoco.mjtSensor(m.sensor_type[i]).name == "mjSENS_" + name.upper()]
        assert touched[idx].any(), name


def test_inverse_fills_the_sensors_as_mj_inverse():
    m, d, mm, md = _load(SENSORS)
    js.step(m, d, 200)
    mujoco.mj_step(mm, md, 200)
    for dd in (d, md):
        dd.qacc[:] = np.linspace(-1, 1, m.nv)
        dd.sensordata[:] = 0
    js.inverse(m, d)
    mujoco.mj_inverse(mm, md)
    _compare(m, d, mm, md, SMOOTH_TOL, "inverse")


def test_cutoff_clips_and_sensor_flag_disables():
    m, d, mm, md = _load(SENSORS)
    i = m.nsensor - 2  # jointpos with cutoff 0.2
    d.qpos[m.jnt_qposadr[m.joint("hip")]] = 0.6
    js.forward(m, d)
    assert d.sensordata[m.sensor_adr[i]] == 0.2
    m.opt_disableflags[0] |= js.types.DSBL_SENSOR
    d.sensordata[:] = 7.0
    js.forward(m, d)
    assert np.all(d.sensordata == 7.0)


@pytest.mark.parametrize("name", ["cheetah", "finger", "hopper", "humanoid", "humanoid_CMU",
                                  "walker"])
def test_dm_control_suite_sensors_match_mujoco(name):
    """dm_control's suite files: touch, force, torque, IMU, subtree, frame and joint sensors.

    MuJoCo steps under random controls; every 60 steps its state is set here and both run
    forward, so that the sensors are compared at the same state.
    """
    path = str(real_model("dm-control", f"dm_control/suite/{name}.xml"))
    m = js.load(path)
    mm = mujoco.MjModel.from_xml_path(path)
    d, md = js.make_data(m), mujoco.MjData(mm)
    assert m.nsensordata == mm.nsensordata > 0
    spec = mujoco.mjtState.mjSTATE_INTEGRATION
    x = np.empty(mujoco.mj_stateSize(mm, spec))
    rng = np.random.default_rng(5)
    contacts = 0
    for k in range(301):
        if k % 60 == 0:
            mujoco.mj_getState(mm, md, x, spec)
            js.set_state(m, d, x, "integration")
            js.forward(m, d)
            mujoco.mj_forward(mm, md)
            contacts += md.ncon
            _compare(m, d, mm, md, DEFAULT_SOLVER_TOL if md.ncon else SMOOTH_TOL,
                     f"{name} step {k}")
            md.ctrl[:] = rng.uniform(-1, 1, m.nu)
        mujoco.mj_step(mm, md)
    assert name == "finger" or contacts > 0  # the walkers and humanoids touch the floor


def test_sensor_by_name_is_a_view():
    m, d, _, _ = _load(SENSORS)
    js.forward(m, d)
    acc = js.sensor(m, d, "acc")
    assert acc.shape == (3,) and np.shares_memory(acc, d.sensordata)
    np.testing.assert_array_equal(acc, d.sensordata[:3])
    with pytest.raises(KeyError, match="no sensor named 'ac'.*did you mean 'acc'"):
        js.sensor(m, d, "ac")


def test_camprojection_among_the_other_sensors_matches_mujoco():
    """camprojection was NaN while cameras were not loaded; tests/test_camera.py has more."""
    xml = SENSORS.replace("<clock/>", '<camprojection name="rf" site="foot" camera="eye"/>'
                                      '<clock/>')
    xml = xml.replace('<site name="world_site"', '<camera name="eye" pos="0 -2 1"/>'
                                                '<site name="world_site"')
    m, d, mm, md = _load(xml)
    np.testing.assert_array_equal(m.sensor_adr, mm.sensor_adr)
    js.forward(m, d)
    mujoco.mj_forward(mm, md)
    rf = js.sensor(m, d, "rf")
    np.testing.assert_allclose(rf, md.sensor("rf").data, rtol=1e-12, atol=1e-9)


def test_bad_sensors_are_named():
    def load(old, new):
        assert old in SENSORS
        return js.load_string(SENSORS.replace(old, new, 1))

    unknown = r"sensor <accelerometer> 'acc' refers to unknown site 'imux' \(<string>:\d+ <"
    with pytest.raises(ModelError, match=unknown):
        load('site="imu"/>', 'site="imux"/>')
    with pytest.raises(ModelError, match=r"<velocimeter> needs the attribute site="):
        load('<velocimeter site="imu"/>', "<velocimeter/>")
    with pytest.raises(ModelError, match=r"unknown objtype 'bodyx'"):
        load('objtype="body" objname="thigh"', 'objtype="bodyx" objname="thigh"')
    with pytest.raises(ModelError, match=r"refers to unknown camera 'thigh'"):
        load('objtype="body" objname="thigh"', 'objtype="camera" objname="thigh"')
    with pytest.raises(ModelError, match=r"joint 'hip' is not a ball joint"):
        load('<ballquat joint="shoulder"/>', '<ballquat joint="hip"/>')
    with pytest.raises(ModelError, match=r"joint 'shoulder' must be a hinge or slide"):
        load('<jointpos joint="hip"/>', '<jointpos joint="shoulder"/>')
    with pytest.raises(ModelError, match=r"<camprojection> needs the attribute camera="):
        load("<clock/>", '<camprojection site="foot"/>')
    with pytest.raises(ModelError, match=r"<plugin> sensors are not supported"):
        load("<clock/>", '<plugin plugin="p"/>')
    with pytest.raises(ModelError, match=r"unknown sensor <jointposition>"):
        load("<clock/>", '<jointposition joint="hip"/>')
    with pytest.raises(ModelError, match=r"cutoff must be non-negative"):
        load('cutoff="2"', 'cutoff="-2"')
    with pytest.raises(ModelError, match=r"user sensor needs dim="):
        load('<user dim="2" needstage="vel"/>', '<user needstage="vel"/>')
    with pytest.raises(ModelError, match=r"delay=0.01 needs a history buffer"):
        load('<clock/>', '<clock delay="0.01"/>')
    with pytest.raises(ModelError, match=r"duplicate sensor name 'acc'"):
        load("<clock/>", '<clock name="acc"/>')


def test_simulate_records_sensordata_and_plots_a_sensor(tmp_path):
    from jointspace.viz.plot import plot_trajectory

    m, d, _, _ = _load(SENSORS)
    d2 = js.make_data(m)
    traj = js.simulate(m, d, 0.1, record_every=5)
    for i in range(50):
        js.step(m, d2)
        if i % 5 == 0:  # frame k: the state before step 5k, its sensors from that step
            np.testing.assert_array_equal(traj.sensordata[i // 5], d2.sensordata)
    path = tmp_path / "t.npz"
    traj.save(path)
    back = js.Trajectory.load(path)
    np.testing.assert_array_equal(back.sensor("acc"), traj.sensordata[:, :3])
    png = tmp_path / "acc.png"
    plot_trajectory(back, png, what=("qpos", "sensor:acc"))
    assert png.stat().st_size > 1000
    with pytest.raises(ValueError, match="no sensor named 'gyro_x'"):
        plot_trajectory(back, png, what=("sensor:gyro_x",))
