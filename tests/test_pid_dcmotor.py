"""MuJoCo 4.0's <pid> actuator (and general gaintype/dyntype "pid"); nu ≠ nactuator.

A pid reads several controls (its inputs [pos, vel, ff], actuator_ctrlspec), so d.ctrl has
nu = Σ actuator_ctrlnum entries and the per-control fields (ctrlrange, ctrllimited, key_ctrl)
are indexed by control, the others by actuator. The `mujoco` 4.0 wheel is the oracle:
compiled fields, forward's forces and accelerations at seeded random states, 1,000-step
trajectories under each integrator, and MuJoCo's refusals. <dcmotor> stays
refused, naming the element.
"""

import warnings

import mujoco
import numpy as np
import pytest

import jointspace as js
from jointspace.errors import ModelError
from tests._actuator_cases import (
    assert_forward,
    assert_refused_as_mujoco,
    assert_trajectory,
    load_pair,
)
from tests._actuator_cases import controls as _controls

# forces at one state: the same float64 products in nearly MuJoCo's order
FORCE_TOL = 1e-12
# qacc: the forces through M⁻¹ of the small bodies
ACC_TOL = 1e-10
# 1,000 steps: per-step differences of ~1e-15 grow through the integral and slew states
TRAJ_TOL = 1e-9

MODEL = """
<mujoco>
  <option timestep="0.002" integrator="{integrator}">{flags}</option>
  <default><geom contype="0" conaffinity="0"/></default>
  <worldbody>
    <site name="ref" pos="0 0 1"/>
    <body name="arm" pos="0 0 1">
      <joint name="hinge" type="hinge" axis="0 1 0" range="-1 2" damping="0.2"/>
      <geom type="capsule" fromto="0 0 0 0.4 0 0" size="0.05"/>
      <body name="slider" pos="0.4 0 0">
        <joint name="slide" type="slide" axis="1 0 0" range="-0.2 0.3" damping="0.5"/>
        <geom type="box" size="0.1 0.05 0.05" pos="0.1 0 0"/>
        <body pos="0.2 0 0">
          <joint name="twist" type="hinge" axis="1 0 0" damping="0.05"/>
          <geom type="ellipsoid" size="0.1 0.06 0.04" pos="0 0 -0.1"/>
          <site name="tip" pos="0 0 -0.1"/>
        </body>
      </body>
    </body>
  </worldbody>
  <tendon>
    <fixed name="both"><joint joint="hinge" coef="0.5"/><joint joint="twist" coef="-1"/></fixed>
  </tendon>
  <actuator>
    {actuators}
  </actuator>
</mujoco>
"""

# each case: the actuators; every one is compared field by field and stepped
CASES = {
    "pos_vel": '<pid joint="hinge" kp="20" kv="2"/>',
    "integral": '<pid joint="hinge" kp="20" kv="1" ki="5"/>',
    "integral_imax": '<pid joint="hinge" kp="20" ki="40" imax="0.02"/>',
    "slew": '<pid joint="slide" kp="50" kv="3" slewmax="0.5"/>',
    "slew_integral": '<pid joint="slide" kp="50" ki="10" imax="0.05" slewmax="0.4"/>',
    "pos": '<pid joint="hinge" kp="15" kv="1" input="pos"/>',
    "vel": '<pid joint="twist" kv="2" input="vel"/>',
    "ff": '<pid joint="twist" input="ff"/>',
    "pos_ff": '<pid joint="hinge" kp="8" ki="2" input="pos ff" ffrange="-1 1"/>',
    "vel_ff": '<pid joint="twist" kv="2" input="vel ff" velrange="-1 1" ffrange="-0.5 0.5"/>',
    "all_inputs": ('<pid joint="hinge" kp="12" kv="1" ki="3" input="pos vel ff" '
                   'posrange="-0.5 0.5" velrange="-2 2" ffrange="-1 1"/>'),
    "tendon": '<pid tendon="both" kp="6" kv="0.5" ki="2"/>',
    "forcelimited": ('<pid joint="hinge" kp="40" kv="2" ki="5" forcelimited="true" '
                     'forcerange="-1.5 1.5"/>'),
    "dampratio": '<pid joint="slide" kp="30" dampratio="0.7"/>',
    "inheritrange": '<pid joint="hinge" kp="10" inheritrange="0.8"/>',
    "site": '<pid site="tip" gear="0 0 0 1 0 0" kp="3" kv="0.2"/>',
    "refsite": '<pid site="tip" refsite="ref" gear="0 0 0 1 0 0" kp="3" kv="0.3" ki="1"/>',
    "refsite_slew": ('<pid site="tip" refsite="ref" gear="0 0 0 1 0 0" kp="3" kv="0.3" '
                     'slewmax="2"/>'),
    "general": ('<general joint="slide" gaintype="pid" biastype="affine" dyntype="pid" '
                'gainprm="4" biasprm="0 -30 -2" dynprm="0.1 0.8" input="pos vel"/>'),
    "general_actlimited": ('<general joint="slide" gaintype="pid" biastype="affine" '
                           'dyntype="pid" gainprm="8" biasprm="0.1 -30 -2" actlimited="true" '
                           'actrange="-0.01 0.02"/>'),
    "actearly": ('<general joint="hinge" gaintype="pid" biastype="affine" dyntype="pid" '
                 'gainprm="6" biasprm="0 -20 -1" actearly="true"/>'),
    "classic_inputs": ('<position joint="hinge" kp="5"/><velocity joint="slide" kv="2"/>'
                       '<cylinder joint="twist"/><general joint="hinge" input="vel"/>'
                       '<intvelocity joint="slide" kp="2" actrange="-1 1"/>'),
    "mixed": ('<motor joint="twist" gear="2" ctrllimited="true" ctrlrange="-1 1"/>'
              '<pid joint="hinge" kp="20" kv="1" ki="4" input="pos vel ff"/>'
              '<position joint="slide" kp="30" kv="2"/>'
              '<pid joint="slide" kp="5" input="pos" ctrlrange="-0.1 0.1"/>'
              '<intvelocity joint="twist" kp="3" actrange="-1 1"/>'),
}

FIELDS = ("actuator_ctrladr", "actuator_ctrlnum", "actuator_ctrlspec", "actuator_outadr",
          "actuator_outnum", "actuator_dyntype", "actuator_gaintype", "actuator_biastype",
          "actuator_gainprm", "actuator_biasprm", "actuator_dynprm", "actuator_ctrlrange",
          "actuator_ctrllimited", "actuator_forcelimited", "actuator_forcerange",
          "actuator_actadr", "actuator_actnum", "actuator_actlimited", "actuator_actrange",
          "actuator_actearly", "actuator_gear", "actuator_trntype", "actuator_trnid")


def _pair(actuators, integrator="Euler"):
    # RK4 with joint-limit rows differs from MuJoCo 4.0 by ~2e-7 in 1,000 steps with no
    # actuator at all (measured; not the actuators'): its runs leave the constraints out
    flags = '<flag constraint="disable"/>' if integrator == "RK4" else ""
    return load_pair(MODEL.format(integrator=integrator, actuators=actuators, flags=flags))


@pytest.mark.parametrize("case", sorted(CASES))
def test_compiled_fields(case):
    """Sizes and every actuator field equal MuJoCo 4.0's compiled model."""
    m, mm = _pair(CASES[case])
    assert (m.nu, m.nactuator, m.na) == (mm.nu, mm.nu - int(np.sum(mm.actuator_ctrlnum))
                                         + mm.actuator_ctrlnum.size, mm.na)
    assert m.nactuator == mm.actuator_ctrlnum.size
    for f in FIELDS:
        np.testing.assert_allclose(getattr(m, f), getattr(mm, f), rtol=0, atol=1e-12,
                                   err_msg=f)


@pytest.mark.parametrize("case", sorted(CASES))
def test_forward(case):
    """actuator_force, act_dot, qfrc_actuator and qacc at seeded random states."""
    m, mm = _pair(CASES[case])
    d, dd = js.make_data(m), mujoco.MjData(mm)
    rng = np.random.default_rng(7)
    for _ in range(5):
        q = rng.normal(scale=0.5, size=mm.nq)
        v = rng.normal(size=mm.nv)
        act = rng.normal(scale=0.05, size=mm.na)
        u = _controls(mm, rng)
        for data in (d, dd):
            data.qpos[:], data.qvel[:], data.act[:], data.ctrl[:] = q, v, act, u
        assert_forward(m, mm, d, dd, FORCE_TOL, ACC_TOL)


@pytest.mark.parametrize("integrator", ["Euler", "implicitfast", "implicit", "RK4"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_trajectory(case, integrator):
    """1,000 steps with controls changed every 100 steps: qpos, qvel and act."""
    m, mm = _pair(CASES[case], integrator)
    d, dd = js.make_data(m), mujoco.MjData(mm)
    assert_trajectory(m, mm, d, dd, np.random.default_rng(11), TRAJ_TOL)


def test_ctrl_layout_and_keyframe():
    """d.ctrl is nu long; a keyframe's ctrl fills it by control, as MuJoCo's key_ctrl."""
    acts = CASES["mixed"]
    xml = MODEL.format(integrator="Euler", flags="", actuators=acts).replace(
        "</mujoco>", '<keyframe><key name="k" ctrl="0.5 0.1 0.2 0.3 0.4 -0.05 0.7"/></keyframe>'
        "</mujoco>")
    m = js.load_string(xml)
    mm = mujoco.MjModel.from_xml_string(xml)
    assert (m.nu, m.nactuator) == (7, 5) == (mm.nu, mm.nu - 2)
    d = js.make_data(m)
    assert d.ctrl.shape == (7,) and d.actuator_force.shape == (5,)
    np.testing.assert_array_equal(m.key_ctrl, mm.key_ctrl)
    js.reset(m, d, "k")
    np.testing.assert_array_equal(d.ctrl, mm.key_ctrl[0])


def test_bad_control_zeroes_all():
    """A NaN in any pid input zeroes every control for the forces, as MuJoCo does."""
    m, mm = _pair(CASES["mixed"])
    d, dd = js.make_data(m), mujoco.MjData(mm)
    u = np.linspace(-0.5, 0.5, mm.nu)
    u[3] = np.nan
    d.ctrl[:], dd.ctrl[:] = u, u
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        js.forward(m, d)
    mujoco.mj_forward(mm, dd)
    np.testing.assert_allclose(d.actuator_force, dd.actuator_force, rtol=0, atol=FORCE_TOL)


@pytest.mark.parametrize("actuator, words", [
    ('<pid joint="hinge" ki="1" input="vel"/>', ["pos input"]),
    ('<pid joint="hinge" input="ff pos"/>', ["input", "order"]),
    ('<pid joint="hinge" input="pos pos"/>', ["input"]),
    ('<pid joint="hinge" input="voltage"/>', ["pid inputs"]),
    ('<pid joint="hinge" ki="-1"/>', ["no state"]),
    ('<pid joint="hinge" ki="1" imax="-1"/>', ["imax"]),
    ('<pid joint="hinge" slewmax="-1"/>', ["slewmax"]),
    ('<pid joint="hinge" kv="-1"/>', ["kv"]),
    ('<pid joint="hinge" dampratio="-1"/>', ["dampratio"]),
    ('<pid joint="hinge" kv="1" dampratio="1"/>', ["kv or dampratio"]),
    ('<pid joint="hinge" posrange="-1 1" inheritrange="1"/>', ["posrange or inheritrange"]),
    ('<pid joint="hinge" ctrllimited="true" ctrlrange="1 1"/>', ["ctrlrange"]),
    ('<general joint="hinge" gaintype="pid" biastype="affine" gainprm="1"/>', ["dyntype"]),
    ('<general joint="hinge" gaintype="pid"/>', ["biastype"]),
    ('<general joint="hinge" gaintype="pid" dyntype="integrator" biastype="affine" '
     'gainprm="0"/>', ["dyntype"]),
    ('<general joint="hinge" gaintype="affine" dyntype="pid" biastype="affine"/>',
     ["gaintype 'pid'"]),
    ('<general joint="hinge" gaintype="pid" dyntype="pid" biastype="affine" gainprm="1" '
     'actdim="2"/>', ["actdim"]),
    ('<general joint="hinge" gaintype="pid" dyntype="pid" biastype="affine" gainprm="0"/>',
     ["no state"]),
    ('<general joint="hinge" input="pos vel"/>', ["one input"]),
])
def test_refused_as_mujoco(actuator, words):
    """What MuJoCo 4.0 refuses, jointspace refuses, naming the line and the attribute."""
    assert_refused_as_mujoco(MODEL.format(integrator="Euler", flags="", actuators=actuator),
                             words)


@pytest.mark.parametrize("actuator, words", [
    ('<general joint="hinge" dyntype="dcmotor" gaintype="dcmotor" biastype="dcmotor"/>',
     ["dcmotor"]),
])
def test_refused_by_jointspace(actuator, words):
    """What jointspace does not compute is refused, naming it (never other physics)."""
    xml = MODEL.format(integrator="Euler", flags="", actuators=actuator)
    with pytest.raises(ModelError) as e:
        js.load_string(xml)
    for w in words:
        assert w in str(e.value), str(e.value)


def test_pid_defaults():
    """A <pid> default sets the pid's attributes; <general> defaults do not reach a <pid>."""
    for default, act in [('<pid kp="5" ki="2" imax="3"/>', '<pid joint="hinge" kv="2"/>'),
                         ('<general gainprm="3" biasprm="1 2 3" dynprm="4 5"/>',
                          '<pid joint="hinge"/>'),
                         ('<position kp="7" kv="2"/>', '<pid joint="hinge" kp="3"/>'),
                         ('<pid kp="7" dampratio="1" input="pos ff" ffrange="-3 3"/>',
                          '<pid joint="hinge"/>'),
                         ('<pid kp="7" kv="1"/>', '<position joint="hinge"/>'),
                         ('<pid kp="7" ki="1"/>', '<general joint="hinge"/>')]:
        xml = MODEL.format(integrator="Euler", flags="", actuators=act).replace(
            "<default>", f"<default>{default}")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            m = js.load_string(xml)
        mm = mujoco.MjModel.from_xml_string(xml)
        assert (m.nu, m.na) == (mm.nu, mm.na), default
        for f in FIELDS:
            np.testing.assert_allclose(getattr(m, f), getattr(mm, f), rtol=0, atol=1e-12,
                                       err_msg=f"{default}: {f}")


BALL_MODEL = MODEL.replace('<joint joint="twist" coef="-1"/>', '<joint joint="slide" coef="-1"/>'
                           ).replace('<joint name="twist" type="hinge" axis="1 0 0"',
                                     '<joint name="twist" type="ball"')


@pytest.mark.parametrize("model, actuator", [
    (MODEL, '<pid site="tip" refsite="ref" gear="0 0 0 1 0 0" kp="3" kv="0.3" ki="1" '
            'slewmax="2"/>'),
    (MODEL, '<pid site="tip" refsite="ref" gear="0 0 0 0.5 0 0" kp="3" kv="0.3" ki="1"/>'),
    (BALL_MODEL, '<pid joint="twist" gear="0 1 0" kp="3" kv="0.3" ki="1" slewmax="1"/>'),
    (MODEL, '<position site="tip" refsite="ref" gear="0 0 0 1 0 0" kp="3"/>'),
    (MODEL, '<intvelocity site="tip" refsite="ref" gear="0 0 0 1 0 0" kp="3"/>'),
    (BALL_MODEL, '<position joint="twist" gear="0 0 1" kp="3" kv="1"/>'),
    (BALL_MODEL, '<intvelocity joint="twist" gear="1 0 0" kp="3" kv="1"/>'),
    (MODEL, '<general site="tip" refsite="ref" gear="0 0 0 1 0 0" biastype="affine" '
            'gainprm="2" biasprm="0 -2 -1" dyntype="integrator"/>'),
], ids=["pid_refsite", "pid_refsite_gear", "pid_ball", "position_refsite",
        "intvelocity_refsite", "position_ball", "intvelocity_ball", "general_integrator"])
def test_rotational_setpoint_wrap(model, actuator):
    """Servos on rotational transmissions take the setpoint nearest the length (MuJoCo 4.0).

    Controls and activations far beyond ±π: forward's forces and act_dot, then 300 steps
    (the integrator's act re-anchored each step).
    """
    xml = model.format(integrator="Euler", flags="", actuators=actuator)
    m, mm = js.load_string(xml), mujoco.MjModel.from_xml_string(xml)
    d, dd = js.make_data(m), mujoco.MjData(mm)
    rng = np.random.default_rng(3)
    for _ in range(20):
        q = rng.normal(size=mm.nq)
        v = rng.normal(size=mm.nv)
        act = rng.normal(scale=3, size=mm.na)
        u = rng.uniform(-12, 12, size=mm.nu)
        for data in (d, dd):
            data.qpos[:], data.qvel[:], data.act[:], data.ctrl[:] = q, v, act, u
        js.forward(m, d)
        mujoco.mj_forward(mm, dd)
        np.testing.assert_allclose(d.actuator_force, dd.actuator_force, rtol=0,
                                   atol=FORCE_TOL * 10)  # forces ~ kp · 2π · 10
        np.testing.assert_allclose(d.act_dot, dd.act_dot, rtol=0, atol=FORCE_TOL * 10)
    for _ in range(300):
        js.step(m, d)
        mujoco.mj_step(mm, dd)
    np.testing.assert_allclose(d.qpos, dd.qpos, rtol=0, atol=TRAJ_TOL)
    np.testing.assert_allclose(d.act, dd.act, rtol=0, atol=TRAJ_TOL)


def test_transition_derivatives_per_control():
    """B = ∂x'/∂ctrl has a column per control (nu), as mjd_transitionFD's; same values."""
    m, mm = _pair(CASES["mixed"])
    d, dd = js.make_data(m), mujoco.MjData(mm)
    rng = np.random.default_rng(1)
    u = rng.normal(scale=0.1, size=mm.nu)
    q = rng.normal(scale=0.3, size=mm.nq)
    for data in (d, dd):
        data.ctrl[:], data.qpos[:] = u, q
    A, B = js.transition_derivatives(m, d, eps=1e-6)
    nx = 2 * mm.nv + mm.na
    A_mj, B_mj = np.zeros((nx, nx)), np.zeros((nx, mm.nu))
    mujoco.mj_forward(mm, dd)
    mujoco.mjd_transitionFD(mm, dd, 1e-6, 0, A_mj, B_mj, None, None)
    assert B.shape == (nx, m.nu) == (nx, 7)
    # two steps that agree to ~1e-14, divided by eps (as test_transition)
    np.testing.assert_allclose(A, A_mj, rtol=0, atol=1e-6)
    np.testing.assert_allclose(B, B_mj, rtol=0, atol=1e-6)
    assert js.state_size(m, "ctrl") == mujoco.mj_stateSize(mm, mujoco.mjtState.mjSTATE_CTRL)


def test_rollout_controls_per_control():
    """A rollout's controls have nu columns; its states equal MuJoCo's rollout's."""
    from mujoco import rollout as mj_rollout

    m, mm = _pair(CASES["mixed"])
    rng = np.random.default_rng(5)
    nstate = mujoco.mj_stateSize(mm, mujoco.mjtState.mjSTATE_FULLPHYSICS)
    x0 = np.zeros((2, nstate))
    x0[:, 1:1 + mm.nq] = rng.normal(scale=0.2, size=(2, mm.nq))
    u = rng.normal(scale=0.3, size=(2, 50, mm.nu))
    ours = js.rollout(m, None, x0, u)[0]
    theirs = mj_rollout.rollout(mm, mujoco.MjData(mm), x0, u)[0]
    np.testing.assert_allclose(ours, theirs, rtol=0, atol=TRAJ_TOL)


def test_inverse_trajectory_recovers_pid_controls():
    """inverse_trajectory's least-squares controls are a pid's inputs (one per control)."""
    acts = ('<pid joint="hinge" kp="20" kv="1" input="pos"/><pid joint="slide" kp="30" '
            'input="pos"/><pid joint="twist" kv="2" input="ff"/>')
    xml = MODEL.format(integrator="Euler", flags='<flag constraint="disable"/>',
                       actuators=acts)
    m = js.load_string(xml)
    d = js.make_data(m)
    rng = np.random.default_rng(9)
    d.qpos[:] = rng.normal(scale=0.3, size=m.nq)
    d.qvel[:] = rng.normal(size=m.nv)
    d.ctrl[:] = rng.normal(size=m.nu)
    js.forward(m, d)
    out = js.inverse_trajectory(m, js.make_data(m), d.qpos[None], d.qvel[None], d.qacc[None])
    # the inverse's forces reproduce forward's to ~1e-12; through the gains ~1e-10
    np.testing.assert_allclose(out.ctrl[0], d.ctrl, rtol=0, atol=1e-9)
    np.testing.assert_allclose(out.ctrl_residual[0], 0.0, rtol=0, atol=1e-9)
