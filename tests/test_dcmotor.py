"""MuJoCo 4.0's <dcmotor> actuator (and general dyntype/gaintype/biastype "dcmotor").

The `mujoco` 4.0 wheel is the oracle: compiled fields (each option alone and combined,
defaults), forward's forces, act_dot and accelerations at seeded random states, 1,000-step
trajectories under each integrator (the current and bristle states integrated exactly, the
others by Euler), transition derivatives, rollouts and MuJoCo's refusals.
"""


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
# 1,000 steps: per-step differences of ~1e-15 grow through the states
TRAJ_TOL = 1e-9

MODEL = """
<mujoco>
  <option timestep="0.002" integrator="{integrator}">{flags}</option>
  <default><geom contype="0" conaffinity="0"/>{defaults}</default>
  <worldbody>
    <site name="ref" pos="0 0 1"/>
    <body name="arm" pos="0 0 1">
      <joint name="hinge" type="hinge" axis="0 1 0" range="-1 2" damping="0.2"/>
      <geom type="capsule" fromto="0 0 0 0.4 0 0" size="0.05"/>
      <site name="crank" pos="0.2 0 0"/>
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
    <body name="ball" pos="1 0 1">
      <joint name="ball" type="ball" damping="0.1"/>
      <geom type="box" size="0.1 0.05 0.02" pos="0 0 -0.1"/>
    </body>
    <site name="slider" pos="0.3 0 0.7" zaxis="1 0 0"/>
  </worldbody>
  <tendon>
    <fixed name="both"><joint joint="hinge" coef="0.5"/><joint joint="twist" coef="-1"/></fixed>
  </tendon>
  <actuator>
    {actuators}
  </actuator>
</mujoco>
"""

# each case: the actuators; every one is compared field by field, forwarded and stepped
CASES = {
    "voltage": '<dcmotor joint="hinge" motorconst="0.1" resistance="1"/>',
    "two_constants": '<dcmotor joint="twist" motorconst="0.05 0.2" resistance="0.5"/>',
    "nominal": '<dcmotor joint="hinge" nominal="12 0.5 100"/>',
    "nominal_damping": '<dcmotor joint="hinge" nominal="6 0.3 40" damping="0.01"/>',
    "nominal_r_damping": ('<dcmotor joint="slide" nominal="6 0 40" resistance="2" '
                          'damping="0.01"/>'),
    "inductance": '<dcmotor joint="hinge" motorconst="0.1" resistance="1" inductance="0.01"/>',
    "timeconst": '<dcmotor joint="twist" motorconst="0.1" resistance="1" inductance="0 0.004"/>',
    "saturation": ('<dcmotor joint="hinge" motorconst="0.3" resistance="0.5" '
                   'saturation="0.4"/>'),
    "saturation_current": ('<dcmotor joint="hinge" motorconst="0.3" resistance="0.5" '
                           'inductance="0.005" saturation="0 1.5 40"/>'),
    "cogging": '<dcmotor joint="hinge" motorconst="0.1" resistance="1" cogging="0.05 6 0.3"/>',
    "thermal": ('<dcmotor joint="hinge" motorconst="0.2" resistance="0.4" '
                'thermal="2 0.05 0 0.004 25 20"/>'),
    "thermal_timeconst": ('<dcmotor joint="hinge" motorconst="0.2" resistance="0.4" '
                          'thermal="0 0.02 0.1 0.01 20 30" inductance="0.002"/>'),
    "thermal_all": ('<dcmotor joint="slide" motorconst="0.2" resistance="0.4" '
                    'thermal="2 3 0.5 0.01 20 30"/>'),
    "lugre": ('<dcmotor joint="twist" motorconst="0.05" resistance="1" '
              'lugre="200 0.5 0.02 0.04 0.1"/>'),
    "lugre_inductance": ('<dcmotor joint="hinge" motorconst="0.1" resistance="1" '
                         'inductance="0.004" lugre="100 1 0.05 0.08 0.2"/>'),
    "passive": ('<dcmotor joint="hinge" motorconst="0.1" resistance="1" input="none" '
                'cogging="0.02 4 0" lugre="50 0.2 0.01 0.02 0.1"/>'),
    "pos": ('<dcmotor joint="hinge" motorconst="0.1" resistance="1" input="pos" '
            'controller="4 0 0.3"/>'),
    "pos_vel": ('<dcmotor joint="hinge" motorconst="0.1" resistance="1" input="pos vel" '
                'controller="4 0 0.3 0 0 20"/>'),
    "integral": ('<dcmotor joint="slide" motorconst="0.1" resistance="1" input="pos" '
                 'controller="20 30 1 0 0.02" inductance="0.002"/>'),
    "slew": ('<dcmotor joint="hinge" motorconst="0.1" resistance="1" input="pos vel ff" '
             'controller="5 2 0.4 0.5 0.3 8"/>'),
    "slew_vel": ('<dcmotor joint="twist" motorconst="0.1" resistance="1" input="vel ff" '
                 'controller="0 0 0.2 3"/>'),
    "ff_voltage": ('<dcmotor joint="hinge" motorconst="0.1" resistance="1" input="ff voltage" '
                   'controller="0 0 0 0 0 2" ctrlrange="-3 3"/>'),
    "all": ('<dcmotor joint="hinge" motorconst="0.15 0.1" resistance="0.8" '
            'input="pos vel ff voltage" controller="6 3 0.5 1 0.2 12" inductance="0.003" '
            'thermal="3 0.1 0 0.004 25 22" lugre="150 0.5 0.03 0.05 0.1" '
            'cogging="0.01 8 0.1" saturation="0 4 500"/>'),
    "tendon": ('<dcmotor tendon="both" motorconst="0.1" resistance="1" inductance="0.002" '
               'ctrlrange="-2 2"/>'),
    "site": '<dcmotor site="tip" gear="0 0 0 1 0 0" motorconst="0.05" resistance="1"/>',
    "refsite": ('<dcmotor site="tip" refsite="ref" gear="0 0 0 1 0 0" motorconst="0.05" '
                'resistance="1" input="pos" controller="1 0 0.1"/>'),
    "ball": '<dcmotor joint="ball" gear="0 1 0" motorconst="0.05" resistance="1"/>',
    "slidercrank": ('<dcmotor cranksite="crank" slidersite="slider" cranklength="0.5" '
                    'motorconst="0.1" resistance="1" inductance="0.003"/>'),
    "jointinparent": ('<dcmotor jointinparent="ball" gear="1 0 0" motorconst="0.05" '
                      'resistance="1" lugre="100 0.2 0.01 0.02 0.1"/>'),
    "delay": ('<dcmotor joint="hinge" motorconst="0.1" resistance="1" inductance="0.002" '
              'nsample="5" delay="0.006"/>'),
    "delay_controller": ('<dcmotor joint="hinge" motorconst="0.1" resistance="1" '
                         'input="pos vel" controller="1" nsample="3" delay="0.005" '
                         'interp="linear"/>'),
    "general": ('<general joint="slide" dyntype="dcmotor" gaintype="dcmotor" '
                'biastype="dcmotor" gainprm="1.5 0.2 0 0 3 2 0.2" dynprm="0.004 0 0 0 0 0 0 0 '
                '0.5" biasprm="0.01 3 0" actdim="2" actearly="true" input="pos vel"/>'),
    "mixed": ('<motor joint="twist" gear="2" ctrllimited="true" ctrlrange="-1 1"/>'
              '<dcmotor joint="hinge" motorconst="0.1" resistance="1" input="pos vel" '
              'controller="4 1 0.3" inductance="0.002"/>'
              '<pid joint="slide" kp="20" ki="3" input="pos ff"/>'
              '<dcmotor joint="slide" motorconst="0.1" resistance="1" input="none" '
              'lugre="100 0.3 0.02 0.03 0.1"/>'
              '<dcmotor joint="twist" motorconst="0.1" resistance="1" thermal="1 0.1"/>'),
}

FIELDS = ("actuator_ctrladr", "actuator_ctrlnum", "actuator_ctrlspec", "actuator_outadr",
          "actuator_outnum", "actuator_dyntype", "actuator_gaintype", "actuator_biastype",
          "actuator_gainprm", "actuator_biasprm", "actuator_dynprm", "actuator_ctrlrange",
          "actuator_ctrllimited", "actuator_forcelimited", "actuator_forcerange",
          "actuator_actadr", "actuator_actnum", "actuator_actlimited", "actuator_actrange",
          "actuator_actearly", "actuator_gear", "actuator_trntype", "actuator_trnid")


def _xml(actuators, integrator="Euler", defaults=""):
    # RK4 with joint-limit rows differs from MuJoCo 4.0 by ~2e-7 in 1,000 steps with no
    # actuator at all (measured in test_pid_dcmotor): its runs leave the constraints out
    flags = '<flag constraint="disable"/>' if integrator == "RK4" else ""
    return MODEL.format(integrator=integrator, actuators=actuators, flags=flags,
                        defaults=defaults)


def _pair(actuators, integrator="Euler", defaults=""):
    return load_pair(_xml(actuators, integrator, defaults))


def _same_fields(m, mm, what):
    assert (m.nu, m.na) == (mm.nu, mm.na), what
    for f in FIELDS:
        np.testing.assert_allclose(getattr(m, f), getattr(mm, f), rtol=0, atol=1e-12,
                                   err_msg=f"{what}: {f}")


@pytest.mark.parametrize("case", sorted(CASES))
def test_compiled_fields(case):
    """Sizes and every actuator field equal MuJoCo 4.0's compiled model."""
    m, mm = _pair(CASES[case])
    assert m.nactuator == mm.actuator_ctrlnum.size
    _same_fields(m, mm, case)


def _set_state(mm, rng, datas):
    """Seeded random qpos, qvel, act (each state on its own scale) and controls."""
    q = rng.normal(scale=0.5, size=mm.nq)
    v = rng.normal(size=mm.nv)
    act = rng.normal(scale=0.3, size=mm.na)
    u = _controls(mm, rng)
    for data in datas:
        data.qpos[:], data.qvel[:], data.act[:], data.ctrl[:] = q, v, act, u


@pytest.mark.parametrize("case", sorted(CASES))
def test_forward(case):
    """actuator_force, act_dot, qfrc_actuator and qacc at seeded random states."""
    m, mm = _pair(CASES[case])
    d, dd = js.make_data(m), mujoco.MjData(mm)
    rng = np.random.default_rng(7)
    for _ in range(5):
        _set_state(mm, rng, (d, dd))
        assert_forward(m, mm, d, dd, FORCE_TOL, ACC_TOL)


@pytest.mark.parametrize("integrator", ["Euler", "implicitfast", "implicit", "RK4"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_trajectory(case, integrator):
    """1,000 steps with controls changed every 100 steps: qpos, qvel and act."""
    m, mm = _pair(CASES[case], integrator)
    d, dd = js.make_data(m), mujoco.MjData(mm)
    assert_trajectory(m, mm, d, dd, np.random.default_rng(11), TRAJ_TOL)


DEFAULTS = [
    ('<dcmotor motorconst="0.2" resistance="3" controller="1 2 3 4 5 6" input="pos" '
     'thermal="2 3 0 0.1 25 20" lugre="1 2 3 4 5" cogging="1 2 3" inductance="0.03" '
     'saturation="0 0 5"/>', '<dcmotor joint="hinge" resistance="1.5" motorconst="0.1"/>'),
    ('<dcmotor motorconst="0.2 0.8" resistance="3" saturation="4 1"/>',
     '<dcmotor joint="hinge"/>'),
    ('<general gainprm="3 4 5 6 7 8 9" dynprm="1 2 3 4 5 6 7 8 9" biasprm="1 2 3 4 5 6"/>',
     '<dcmotor joint="hinge" motorconst="0.1" resistance="1"/>'),
    ('<position kp="3"/>', '<dcmotor joint="hinge" motorconst="0.1" resistance="1"/>'),
    ('<dcmotor motorconst="0.2" resistance="3"/>', '<motor joint="hinge"/>'),
    ('<dcmotor motorconst="0.2" resistance="3" input="pos vel" controller="1"/>',
     '<general joint="hinge"/>'),
    ('<dcmotor motorconst="0.2" resistance="3" input="pos vel" controller="1"/>',
     '<pid joint="hinge"/>'),
]


@pytest.mark.parametrize("default, actuator", DEFAULTS)
def test_defaults(default, actuator):
    """A <dcmotor> default gives what the element does not; other defaults give nothing."""
    m, mm = _pair(actuator, defaults=default)
    _same_fields(m, mm, default)


@pytest.mark.parametrize("actuator, words", [
    ('<dcmotor joint="hinge" resistance="1"/>', ["motorconst", "K must be positive"]),
    ('<dcmotor joint="hinge" motorconst="0.1"/>', ["resistance", "R must be positive"]),
    ('<dcmotor joint="hinge" motorconst="-0.1 0.2" resistance="1"/>',
     ["motorconst", "non-negative"]),
    ('<dcmotor joint="hinge" motorconst="0.1" resistance="-1"/>', ["resistance"]),
    ('<dcmotor joint="hinge" motorconst="0.1" resistance="1" inductance="-1"/>',
     ["inductance"]),
    ('<dcmotor joint="hinge" motorconst="0.1" resistance="1" inductance="0 -1"/>',
     ["inductance", "time constant"]),
    ('<dcmotor joint="hinge" motorconst="0.1" resistance="1" thermal="1 0 0"/>',
     ["thermal", "capacitance"]),
    ('<dcmotor joint="hinge" motorconst="0.1" resistance="1" thermal="0 0 12"/>',
     ["thermal", "resistance"]),
    ('<dcmotor joint="hinge" motorconst="0.1" resistance="1" controller="1"/>',
     ["controller", "controller input"]),
    ('<dcmotor joint="hinge" motorconst="0.1" resistance="1" controller="0 1" input="vel"/>',
     ["ki", "pos input"]),
    ('<dcmotor joint="hinge" motorconst="0.1" resistance="1" controller="0 0 0 1"/>',
     ["slewmax", "controller input"]),
    ('<dcmotor joint="hinge" motorconst="0.1" resistance="1" input="voltage pos"/>',
     ["input", "order"]),
    ('<dcmotor joint="hinge" motorconst="0.1" resistance="1" input="none pos"/>', ["input"]),
    ('<dcmotor joint="hinge" motorconst="0.1" resistance="1" input="foo"/>', ["input"]),
    ('<general joint="hinge" dyntype="dcmotor" gaintype="dcmotor" biastype="dcmotor" '
     'dynprm="0.01" gainprm="1 0.1"/>', ["actdim"]),
    ('<general joint="hinge" dyntype="dcmotor" gaintype="dcmotor" biastype="dcmotor" '
     'dynprm="0.01" gainprm="1 0.1" actdim="1"/>', ["actearly"]),
    ('<general joint="hinge" dyntype="dcmotor" gaintype="dcmotor" biastype="dcmotor" '
     'dynprm="0" gainprm="1 0" input="pos" actearly="true"/>', ["motor constant"]),
    ('<general joint="hinge" gaintype="dcmotor" biastype="dcmotor" gainprm="1 0.1"/>',
     ["dcmotor"]),
])
def test_refused_as_mujoco(actuator, words):
    """What MuJoCo 4.0 refuses, jointspace refuses, naming the line and the attribute."""
    assert_refused_as_mujoco(_xml(actuator), words)


@pytest.mark.parametrize("actuator, words", [
    ('<general joint="hinge" dyntype="dcmotor" gaintype="fixed" biastype="none" '
     'actdim="1" actearly="true"/>', ["dcmotor", "all"]),
])
def test_refused_by_jointspace(actuator, words):
    """Type combinations MuJoCo runs partly and jointspace does not compute are refused."""
    with pytest.raises(ModelError) as e:
        js.load_string(_xml(actuator))
    for w in words:
        assert w in str(e.value), str(e.value)


@pytest.mark.parametrize("case", ["all", "mixed", "lugre_inductance"])
def test_transition_derivatives(case):
    """A = ∂x'/∂x and B = ∂x'/∂ctrl (one column per control) equal mjd_transitionFD's."""
    m, mm = _pair(CASES[case])
    d, dd = js.make_data(m), mujoco.MjData(mm)
    rng = np.random.default_rng(1)
    _set_state(mm, rng, (d, dd))
    A, B = js.transition_derivatives(m, d, eps=1e-6)
    nx = 2 * mm.nv + mm.na
    A_mj, B_mj = np.zeros((nx, nx)), np.zeros((nx, mm.nu))
    mujoco.mj_forward(mm, dd)
    mujoco.mjd_transitionFD(mm, dd, 1e-6, 0, A_mj, B_mj, None, None)
    assert B.shape == (nx, m.nu)
    # two steps that agree to ~1e-14, divided by eps, times the states' scales (~1e2)
    np.testing.assert_allclose(A, A_mj, rtol=0, atol=1e-6)
    np.testing.assert_allclose(B, B_mj, rtol=0, atol=1e-6)


@pytest.mark.parametrize("case", ["all", "mixed"])
def test_rollout(case):
    """A rollout's states equal MuJoCo's rollout's (controls with nu columns)."""
    from mujoco import rollout as mj_rollout

    m, mm = _pair(CASES[case])
    rng = np.random.default_rng(5)
    nstate = mujoco.mj_stateSize(mm, mujoco.mjtState.mjSTATE_FULLPHYSICS)
    x0 = np.zeros((2, nstate))
    x0[:, 1:1 + mm.nq] = rng.normal(scale=0.2, size=(2, mm.nq))
    u = rng.normal(scale=0.5, size=(2, 200, mm.nu))
    ours = js.rollout(m, None, x0, u)[0]
    theirs = mj_rollout.rollout(mm, mujoco.MjData(mm), x0, u)[0]
    np.testing.assert_allclose(ours, theirs, rtol=0, atol=TRAJ_TOL)


def test_inverse_trajectory_refused():
    """inverse_trajectory does not recover a dcmotor's controls: refused, naming it."""
    m, _ = _pair(CASES["voltage"])
    d = js.make_data(m)
    with pytest.raises(js.JointspaceError, match="dcmotor"):
        js.inverse_trajectory(m, d, d.qpos[None], d.qvel[None], d.qacc[None])
