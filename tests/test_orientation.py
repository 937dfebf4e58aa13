"""MuJoCo 4.0's <orientation> actuator (and general gaintype/biastype "so3"); nout ≠ nactuator.

An orientation servo drives a ball joint, or a site relative to a refsite, towards a target
orientation given by 3 controls (a rotation vector, input "expmap") or 4 (a quaternion,
input "quat"): force = kp log(q⁻¹ q_target) − kv ω in the child (site) frame, 3 outputs, the
torque's norm clamped to forcerange. The integrator variant keeps the setpoint in 3
activations. The `mujoco` 4.0 wheel is the oracle: compiled fields, forward at seeded random
states (rotations up to π), 1,000-step trajectories under each integrator, actuator sensors,
transition derivatives, rollouts, and MuJoCo's refusals.
"""


import mujoco
import mujoco.rollout
import numpy as np
import pytest

import jointspace as js
from jointspace.errors import JointspaceError, ModelError
from tests._actuator_cases import (
    assert_forward,
    assert_refused_as_mujoco,
    assert_trajectory,
    controls,
    load_pair,
)

# forces at one state: the same float64 products in nearly MuJoCo's order
FORCE_TOL = 1e-12
# qacc, relative to its largest entry: forces of tens through the hand's M⁻¹ (inertia
# ~3e-3) give qacc ~1e4, where MuJoCo's and our factorizations part by ~1e-14 relative
ACC_TOL = 1e-12
# 1,000 steps: per-step differences of ~1e-15 grow through the integration
TRAJ_TOL = 1e-9
# transition derivatives: two steps that agree to ~1e-14, divided by eps (relative to the
# largest entry, as tests/test_transition.py)
FD_TOL = 1e-6
FD_EPS = 1e-6

MODEL = """
<mujoco>
  <option timestep="0.002" integrator="{integrator}">{flags}</option>
  <default><geom contype="0" conaffinity="0"/>{defaults}</default>
  <worldbody>
    <site name="world" pos="0 0 1" quat="0.9 0.1 -0.3 0.2"/>
    <body name="arm" pos="0 0 1">
      <joint name="hinge" type="hinge" axis="0 1 0" damping="0.2"/>
      <geom type="capsule" fromto="0 0 0 0.4 0 0" size="0.05"/>
      <site name="armsite" pos="0.2 0 0" quat="0.7 0 0.7 0.1"/>
      <body name="wrist" pos="0.4 0 0">
        <joint name="ball1" type="ball" damping="0.05"/>
        <geom type="box" size="0.1 0.05 0.03" pos="0.1 0 0"/>
        <body name="hand" pos="0.2 0 0">
          <joint name="ball2" type="ball" damping="0.02"/>
          <geom type="ellipsoid" size="0.1 0.06 0.04" pos="0 0 -0.1"/>
          <site name="tip" pos="0 0 -0.1" quat="0.8 0.3 0.1 -0.2"/>
        </body>
      </body>
    </body>
  </worldbody>
  <actuator>
    {actuators}
  </actuator>
  {sensors}
</mujoco>
"""

# each case: the actuators; every one is compared field by field and stepped
CASES = {
    "joint": '<orientation joint="ball1" kp="20" kv="1"/>',
    "joint_forcerange": '<orientation joint="ball2" kp="30" kv="0.5" forcerange="0 0.4"/>',
    "joint_quat": '<orientation joint="ball1" kp="15" kv="0.8" input="quat"/>',
    "joint_ctrlrange": '<orientation joint="ball2" kp="10" kv="0.3" ctrlrange="-1 1.5"/>',
    "site_world": '<orientation site="tip" refsite="world" kp="8" kv="0.4"/>',
    "site_common": ('<orientation site="tip" refsite="armsite" kp="6" kv="0.3" '
                    'forcerange="0 0.8"/>'),
    "site_quat": '<orientation site="tip" refsite="world" kp="5" kv="0.2" input="quat"/>',
    "dampratio": '<orientation joint="ball1" kp="20" dampratio="0.8"/>',
    "general": ('<general joint="ball2" gaintype="so3" biastype="so3" gainprm="12" '
                'biasprm="0.05 -12 -0.6" gear="2"/>'),
    "integrator": ('<general joint="ball1" gaintype="so3" biastype="so3" dyntype="integrator" '
                   'gainprm="20" biasprm="0 -20 -1"/>'),
    "integrator_actearly": ('<general site="tip" refsite="world" gaintype="so3" biastype="so3" '
                            'dyntype="integrator" actearly="true" gainprm="8" '
                            'biasprm="0 -8 -0.5" actlimited="true" actrange="-2 2.5"/>'),
    "mixed": ('<motor joint="hinge" gear="2" ctrllimited="true" ctrlrange="-1 1"/>'
              '<orientation name="o1" joint="ball1" kp="10" kv="0.2"/>'
              '<position joint="hinge" kp="10" kv="1"/>'
              '<orientation name="o2" site="tip" refsite="armsite" kp="6" kv="0.3" '
              'input="quat"/>'
              '<pid joint="hinge" kp="5" ki="1" input="pos vel"/>'
              '<general joint="ball2" gaintype="so3" biastype="so3" dyntype="integrator" '
              'gainprm="9" biasprm="0 -9 -0.4"/>'),
}

FIELDS = ("actuator_ctrladr", "actuator_ctrlnum", "actuator_ctrlspec", "actuator_outadr",
          "actuator_outnum", "actuator_dyntype", "actuator_gaintype", "actuator_biastype",
          "actuator_gainprm", "actuator_biasprm", "actuator_dynprm", "actuator_ctrlrange",
          "actuator_ctrllimited", "actuator_forcelimited", "actuator_forcerange",
          "actuator_actadr", "actuator_actnum", "actuator_actlimited", "actuator_actrange",
          "actuator_actearly", "actuator_gear", "actuator_trntype", "actuator_trnid",
          "actuator_lengthrange")


def _xml(actuators, integrator="Euler", defaults="", sensors=""):
    # RK4 with the ball joints' limit-free model has no constraint rows; disabling them keeps
    # RK4 on the path tests/test_pid_dcmotor.py measured
    flags = '<flag constraint="disable"/>' if integrator == "RK4" else ""
    return MODEL.format(integrator=integrator, actuators=actuators, flags=flags,
                        defaults=defaults, sensors=sensors)


def _pair(actuators, integrator="Euler", **kw):
    return load_pair(_xml(actuators, integrator, **kw))


def _controls(mm, rng, scale=1.2):
    """Controls: rotation vectors of angle up to ~2π (beyond π too), quaternions, or in range."""
    return controls(mm, rng, scale)


def _state(mm, rng):
    """A pose with random ball orientations (every angle up to π), velocities and act."""
    q = np.zeros(mm.nq)
    q[0] = rng.normal()
    for j in (1, 2):
        adr = mm.jnt_qposadr[j]
        quat = rng.normal(size=4)
        q[adr:adr + 4] = quat / np.linalg.norm(quat)
    return q, rng.normal(size=mm.nv), rng.normal(scale=1.5, size=mm.na)


def _set_random(mm, rng, datas, scale=1.2):
    """Write one random state (`_state`) and controls (`_controls`) into each of datas."""
    q, v, act = _state(mm, rng)
    u = _controls(mm, rng, scale)
    for data in datas:
        data.qpos[:], data.qvel[:], data.act[:], data.ctrl[:] = q, v, act, u


@pytest.mark.parametrize("case", sorted(CASES))
def test_compiled_fields(case):
    """Sizes and every actuator field (per actuator, per control, per output) equal MuJoCo's."""
    m, mm = _pair(CASES[case])
    assert (m.nu, m.nactuator, m.nout, m.na) == (mm.nu, mm.nu - int(np.sum(
        mm.actuator_ctrlnum)) + mm.actuator_ctrlnum.size, mm.nout, mm.na)
    assert m.nactuator == mm.actuator_ctrlnum.size
    for f in FIELDS:
        np.testing.assert_allclose(getattr(m, f), getattr(mm, f), rtol=0, atol=1e-12,
                                   err_msg=f)
    # acc0 per output: M⁻¹ of the moment rows at qpos0
    np.testing.assert_allclose(m.actuator_acc0, mm.actuator_acc0, rtol=1e-12, atol=0)


def test_layout_sizes():
    """nout = Σ outnum; the per-output Data arrays are nout long, d.ctrl nu long."""
    m, mm = _pair(CASES["mixed"])
    assert (m.nu, m.nactuator, m.nout) == (mm.nu, 6, mm.nout) == (14, 6, 12)
    d = js.make_data(m)
    for f in ("actuator_force", "actuator_length", "actuator_velocity"):
        assert getattr(d, f).shape == (12,), f
    assert d.actuator_moment.shape == (12, m.nv)
    assert m.actuator_gear.shape == (12, 6) and m.actuator_acc0.shape == (12,)


@pytest.mark.parametrize("case", sorted(CASES))
def test_forward(case):
    """actuator length, velocity, force, act_dot, qfrc_actuator and qacc at random states."""
    m, mm = _pair(CASES[case])
    d, dd = js.make_data(m), mujoco.MjData(mm)
    rng = np.random.default_rng(7)
    for _ in range(8):
        _set_random(mm, rng, (d, dd))
        assert_forward(m, mm, d, dd, FORCE_TOL, ACC_TOL, acc_relative=True)


def test_near_pi():
    """Rotations of angle near π (either side) for the pose, the target and their error."""
    m, mm = _pair(CASES["joint"] + CASES["site_world"])
    d, dd = js.make_data(m), mujoco.MjData(mm)
    rng = np.random.default_rng(3)
    for k in range(12):
        axis = rng.normal(size=3)
        axis /= np.linalg.norm(axis)
        angle = np.pi + (-1) ** k * 10.0 ** -rng.integers(3, 9)
        q = np.zeros(mm.nq)
        q[0] = 0.3
        q[1:5] = np.r_[np.cos(angle / 2), np.sin(angle / 2) * axis]
        q[5:9] = np.r_[np.cos(angle / 4), np.sin(angle / 4) * axis[::-1]]
        u = np.r_[-axis * (np.pi - 1e-6 * k), axis[[1, 2, 0]] * (np.pi + 1e-7 * k)]
        v = rng.normal(size=mm.nv)
        for data in (d, dd):
            data.qpos[:], data.qvel[:], data.ctrl[:] = q, v, u
        js.forward(m, d)
        mujoco.mj_forward(mm, dd)
        for f in ("actuator_length", "actuator_force", "qfrc_actuator"):
            np.testing.assert_allclose(getattr(d, f), getattr(dd, f), rtol=0, atol=FORCE_TOL,
                                       err_msg=f)


def test_forcerange_is_active():
    """The torque norm reaches forcerange₁ and is clamped to it, direction kept."""
    m, mm = _pair(CASES["joint_forcerange"])
    d, dd = js.make_data(m), mujoco.MjData(mm)
    d.ctrl[:] = dd.ctrl[:] = [2.0, -1.0, 0.5]
    js.forward(m, d)
    mujoco.mj_forward(mm, dd)
    assert np.linalg.norm(d.actuator_force) == pytest.approx(0.4, abs=1e-14)
    np.testing.assert_allclose(d.actuator_force, dd.actuator_force, rtol=0, atol=FORCE_TOL)


# With an active forcerange clamp the implicit integrators drop the kv term when the
# clamped torque's norm is >= forcerange₁, and MuJoCo 4.0 itself keeps it in about 1 of 5
# saturated steps where rounding leaves the norm 1 ulp below (measured from its qDeriv): the
# decision follows the last bit of the force, which agrees with MuJoCo's to ~1e-15 only, so
# those trajectories part at the first saturated step. The rule itself is tested in
# test_implicit_drops_kv_at_the_bound; Euler and RK4 run every case.
SATURATING = {"joint_forcerange", "site_common"}
TRAJECTORY_CASES = [(c, i) for c in sorted(CASES) for i in ("Euler", "implicitfast", "implicit",
                                                             "RK4")
                    if c not in SATURATING or i in ("Euler", "RK4")]


@pytest.mark.parametrize("case, integrator", TRAJECTORY_CASES)
def test_trajectory(case, integrator):
    """1,000 steps with controls changed every 100 steps: qpos, qvel and act."""
    m, mm = _pair(CASES[case], integrator)
    d, dd = js.make_data(m), mujoco.MjData(mm)
    rng = np.random.default_rng(11)
    q, v, _ = _state(mm, rng)
    d.qpos[:], dd.qpos[:] = q, q
    assert_trajectory(m, mm, d, dd, rng, TRAJ_TOL, _controls)


@pytest.mark.parametrize("integrator", ["implicitfast", "implicit"])
def test_implicit_drops_kv_at_the_bound(integrator):
    """One implicit step: −kv enters the step unless the torque norm is at forcerange₁.

    States where the clamped norm is exactly forcerange₁ in both codes (skipped), and
    unsaturated ones (kept), give the same step as MuJoCo's.
    """
    m, mm = _pair(CASES["joint_forcerange"], integrator)
    d, dd = js.make_data(m), mujoco.MjData(mm)
    rng = np.random.default_rng(21)
    seen = set()
    for k in range(40):
        q, v, _ = _state(mm, rng)
        u = _controls(mm, rng, scale=2.0)
        if k % 2:
            # near the identity and the target: torque norm below the bound
            q[1:9] = [1.0, 0.0, 0.0, 0.0] * 2
            u *= 0.005
        js.reset(m, d)
        mujoco.mj_resetData(mm, dd)
        for data in (d, dd):
            data.qpos[:], data.qvel[:], data.ctrl[:] = q, v * 0.01, u
        js.forward(m, d)
        mujoco.mj_forward(mm, dd)
        norms = [float(np.sqrt(np.sum(f ** 2))) for f in (d.actuator_force, dd.actuator_force)]
        if any(0.4 - 1e-12 < n < 0.4 for n in norms):
            continue  # rounding below the bound: the decision follows the force's last bit
        seen.add(norms[0] >= 0.4)
        js.step(m, d)
        mujoco.mj_step(mm, dd)
        np.testing.assert_allclose(d.qvel, dd.qvel, rtol=0, atol=1e-12)
    assert seen == {True, False}


def test_integrator_setpoint_is_reanchored():
    """The integrator's act is kept at angle ≤ π as it passes π (MuJoCo's mj_advance)."""
    m, mm = _pair(CASES["integrator"])
    d, dd = js.make_data(m), mujoco.MjData(mm)
    d.ctrl[:] = dd.ctrl[:] = [40.0, -30.0, 20.0]
    for _ in range(200):
        js.step(m, d)
        mujoco.mj_step(mm, dd)
    assert np.linalg.norm(dd.act) <= np.pi
    np.testing.assert_allclose(d.act, dd.act, rtol=0, atol=TRAJ_TOL)
    np.testing.assert_allclose(d.qpos, dd.qpos, rtol=0, atol=TRAJ_TOL)


SENSORS = """<sensor>
    <actuatorpos actuator="o1"/><actuatorvel actuator="o1"/><actuatorfrc actuator="o1"/>
    <actuatorfrc actuator="o2"/><actuatorpos actuator="o2"/><jointactuatorfrc joint="hinge"/>
  </sensor>"""


def test_actuator_sensors():
    """actuatorpos/vel/frc of an orientation actuator give its 3 outputs (sensor dim 3)."""
    m, mm = _pair(CASES["mixed"], sensors=SENSORS)
    np.testing.assert_array_equal(m.sensor_dim, mm.sensor_dim)
    np.testing.assert_array_equal(m.sensor_adr, mm.sensor_adr)
    assert m.nsensordata == mm.nsensordata == 16
    d, dd = js.make_data(m), mujoco.MjData(mm)
    rng = np.random.default_rng(5)
    for _ in range(4):
        _set_random(mm, rng, (d, dd))
        js.forward(m, d)
        mujoco.mj_forward(mm, dd)
        np.testing.assert_allclose(d.sensordata, dd.sensordata, rtol=0, atol=FORCE_TOL)


@pytest.mark.parametrize("integrator", ["Euler", "implicitfast", "implicit"])
def test_transition_derivatives(integrator):
    """A and B (forward differences and centered) equal mjd_transitionFD's."""
    m, mm = _pair(CASES["mixed"], integrator)
    d, dd = js.make_data(m), mujoco.MjData(mm)
    rng = np.random.default_rng(9)
    _set_random(mm, rng, (d, dd), scale=0.5)
    nx = 2 * mm.nv + mm.na
    for centered in (False, True):
        A, B = js.transition_derivatives(m, d, FD_EPS, centered)
        Am, Bm = np.zeros((nx, nx)), np.zeros((nx, mm.nu))
        mujoco.mjd_transitionFD(mm, dd, FD_EPS, centered, Am, Bm, None, None)
        for got, want, what in ((A, Am, "A"), (B, Bm, "B")):
            scale = max(1.0, float(np.abs(want).max()))
            assert np.abs(got - want).max() <= FD_TOL * scale, (what, centered)


def test_rollout():
    """js.rollout equals mujoco.rollout.rollout (states and sensors) for 3 rollouts."""
    m, mm = _pair(CASES["mixed"], sensors=SENSORS)
    rng = np.random.default_rng(13)
    nbatch, nstep = 3, 60
    nstate = mujoco.mj_stateSize(mm, mujoco.mjtState.mjSTATE_FULLPHYSICS)
    assert nstate == 1 + mm.nq + mm.nv + mm.na
    x0 = np.zeros((nbatch, nstate))
    for r in range(nbatch):
        q, v, act = _state(mm, rng)
        x0[r, 1:1 + mm.nq] = q
        x0[r, 1 + mm.nq:1 + mm.nq + mm.nv] = v
        x0[r, 1 + mm.nq + mm.nv:1 + mm.nq + mm.nv + mm.na] = act
    control = rng.normal(size=(nbatch, nstep, mm.nu))
    want, want_sensors = mujoco.rollout.rollout(mm, mujoco.MjData(mm), x0, control)
    got, got_sensors = js.rollout(m, None, x0, control)
    np.testing.assert_allclose(got, want, rtol=0, atol=TRAJ_TOL)
    np.testing.assert_allclose(got_sensors, want_sensors, rtol=0, atol=TRAJ_TOL)


def test_defaults():
    """An <orientation> default sets kp, kv, input and ranges; other kinds' do not reach it."""
    for default, act in [('<orientation kp="5" kv="2" input="quat" ctrlrange="-1 1"/>',
                          '<orientation joint="ball1"/>'),
                         ('<position kp="7" kv="3"/>', '<orientation joint="ball1"/>'),
                         ('<general gainprm="4" biasprm="1 2 3"/>',
                          '<orientation joint="ball1" kv="1"/>'),
                         ('<orientation kp="5" kv="2"/>', '<general joint="ball1"/>'),
                         ('<orientation kp="-3" forcerange="0 2"/>',
                          '<orientation site="tip" refsite="world" kp="4"/>')]:
        m, mm = _pair(act, defaults=default)
        assert (m.nu, m.nout, m.na) == (mm.nu, mm.nout, mm.na), default
        for f in FIELDS:
            np.testing.assert_allclose(getattr(m, f), getattr(mm, f), rtol=0, atol=1e-12,
                                       err_msg=f"{default}: {f}")


def test_info_and_inverse_trajectory():
    """CLI info names the servo; inverse_trajectory refuses it (force not affine in ctrl)."""
    from jointspace.cli import info_lines

    m, _ = _pair(CASES["mixed"])
    d = js.make_data(m)
    js.forward(m, d)
    text = "\n".join(info_lines(m, d))
    assert "nout=12" in text and "orientation (expmap) kp 10" in text
    with pytest.raises(JointspaceError, match="orientation"):
        js.inverse_trajectory(m, d, d.qpos[None], d.qvel[None], d.qacc[None])


@pytest.mark.parametrize("actuator, words", [
    ('<orientation joint="hinge"/>', ["joint='hinge'", "ball joint"]),
    ('<orientation site="tip"/>', ["refsite"]),
    ('<orientation joint="ball1" forcerange="-1 2"/>', ["forcerange", "lower bound must be 0"]),
    ('<orientation joint="ball1" kv="-1"/>', ["kv"]),
    ('<orientation joint="ball1" dampratio="-1"/>', ["dampratio"]),
    ('<orientation joint="ball1" kv="1" dampratio="1"/>', ["kv or dampratio"]),
    ('<orientation joint="ball1" gear="2"/>', ["gear"]),
    ('<orientation joint="ball1" ctrllimited="true" ctrlrange="-1 1"/>', ["ctrllimited"]),
    ('<general joint="ball1" gaintype="so3" gainprm="2" biasprm="0 -2 0"/>',
     ["gaintype and biastype must both be 'so3'"]),
    ('<general joint="ball1" biastype="so3" gainprm="2" biasprm="0 -2 0"/>',
     ["gaintype and biastype must both be 'so3'"]),
    ('<general joint="ball1" gaintype="so3" biastype="so3" gainprm="2" biasprm="0 -3 0"/>',
     ["gainprm[0] == -biasprm[1]"]),
    ('<general joint="ball1" gaintype="so3" biastype="so3" dyntype="filter" gainprm="2" '
     'biasprm="0 -2 0"/>', ["dyntype 'none' or 'integrator'"]),
    ('<general joint="ball1" gaintype="so3" biastype="so3" dyntype="integrator" '
     'input="quat" gainprm="2" biasprm="0 -2 0"/>', ["quat", "dyntype 'none'"]),
    ('<general joint="ball1" gaintype="so3" biastype="so3" dyntype="integrator" actdim="2" '
     'gainprm="2" biasprm="0 -2 0"/>', ["actdim"]),
    ('<general jointinparent="ball1" gaintype="so3" biastype="so3" gainprm="1" '
     'biasprm="0 -1 0"/>', ["site (with refsite) or ball joint"]),
    ('<general site="armsite" gaintype="so3" biastype="so3" gainprm="1" biasprm="0 -1 0"/>',
     ["refsite"]),
])
def test_refused_as_mujoco(actuator, words):
    """What MuJoCo 4.0 refuses, jointspace refuses, naming the line and the attribute."""
    assert_refused_as_mujoco(_xml(actuator), words, element=False)


@pytest.mark.parametrize("actuator, words", [
    ('<orientation joint="ball1" input="pos"/>', ["input='pos'", "expmap or quat"]),
])
def test_refused_by_jointspace(actuator, words):
    """What MuJoCo 4.0 accepts but jointspace does not compute is refused, naming it."""
    xml = _xml(actuator)
    mujoco.MjModel.from_xml_string(xml)
    with pytest.raises(ModelError) as e:
        js.load_string(xml)
    for w in words:
        assert w in str(e.value), str(e.value)
