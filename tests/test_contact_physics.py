"""The soft-contact model's physics (Todorov 2014, 004 §V) and trajectories against mj_step.

`step` runs collision, the constraint rows and the Newton solver inside `forward`. The
experiments: a resting body's penetration κ²εg/(1+ε) independent of its mass; a block on an
incline sliding with g(sin θ − μ cos θ) or sticking; torsional friction stopping a spinning
top and rolling friction a rolling ball; five stacked boxes standing; kinetic energy never
rising through a frictional impact; the Painlevé rod (000) lifting off, landing flat and
resting, along MuJoCo's trajectory. And
trajectory parity with MuJoCo for the humanoid falling, a box stack and the quadruped.
"""

import math

import mujoco
import numpy as np
import pytest

import jointspace as js
from tests.test_constraint import STACK

TRAJ_TOL = 1e-4  # max |qpos − qpos_mujoco| over the trajectory (the bound)
G = 9.81


def _soft(eps, kappa):
    solref, solimp = js.softness_from_epsilon_kappa(eps, kappa)
    return (f'solref="{solref[0]} {solref[1]}" '
            f'solimp="{" ".join(str(x) for x in solimp)}"')


@pytest.mark.parametrize("mass", [0.1, 1.0, 10.0])
def test_resting_penetration_is_independent_of_mass(mass):
    """A sphere resting on a plane sinks κ²εg/(1+ε) whatever its mass (004 §V).

    With one contact A is a scalar and R = εA exactly, so the rest point of the
    critically damped x-dynamics is the paper's formula up to the discrete step.
    """
    eps, kappa = 0.05, 0.02
    soft = _soft(eps, kappa)
    xml = f"""<mujoco><option timestep="0.001" cone="elliptic"/><worldbody>
      <geom type="plane" size="5 5 .1" {soft}/>
      <body pos="0 0 0.1"><freejoint/><geom type="sphere" size="0.1" mass="{mass}" {soft}/>
      </body></worldbody></mujoco>"""
    m = js.load_string(xml)
    d = js.make_data(m)
    js.step(m, d, 3000)
    depth = 0.1 - d.qpos[2]
    expected = kappa**2 * eps * G / (1 + eps)
    assert d.ncon[0] == 1
    assert abs(depth - expected) < 1e-6 * expected
    assert np.max(np.abs(d.qvel)) < 1e-9


@pytest.mark.parametrize("mu", [0.3, 0.8])
def test_block_on_incline_slides_or_sticks(mu):
    """A box on a 30° incline: a = g(sin θ − μ cos θ) when μ < tan θ, creep < 1e-3 m/s else.

    impratio = 10 makes friction ten times stiffer than the normal direction (with 1 the
    soft cone creeps at 1.3e-3 m/s here, as in MuJoCo). The soft contact slides 1% slower
    than the rigid-body formula.
    """
    theta = math.radians(30.0)
    q = f"{math.cos(theta / 2)} 0 {-math.sin(theta / 2)} 0"  # normal (−sin θ, 0, cos θ)
    xml = f"""<mujoco><option timestep="0.001" cone="elliptic" impratio="10"/><worldbody>
      <geom type="plane" size="5 5 .1" quat="{q}" friction="{mu} 0 0"/>
      <body pos="0 0 0.051" quat="{q}"><freejoint/>
        <geom type="box" size="0.1 0.1 0.05" mass="1" friction="{mu} 0 0"/>
      </body></worldbody></mujoco>"""
    m = js.load_string(xml)
    d = js.make_data(m)
    js.step(m, d, 500)
    v0 = d.qvel[:3].copy()
    js.step(m, d, 500)
    downhill = np.array([-math.cos(theta), 0.0, -math.sin(theta)])
    accel = (d.qvel[:3] - v0) @ downhill / 0.5
    if mu < math.tan(theta):
        expected = G * (math.sin(theta) - mu * math.cos(theta))
        assert abs(accel - expected) < 0.02 * expected
    else:
        assert d.ncon[0] == 4
        assert np.linalg.norm(d.qvel[:3]) < 1e-3


def test_torsional_friction_stops_a_spinning_top():
    """condim 4: a sphere spinning about the normal stops; with condim 3 it keeps spinning."""
    spins = {}
    for condim in (3, 4):
        xml = f"""<mujoco><option timestep="0.002" cone="elliptic"/><worldbody>
          <geom type="plane" size="5 5 .1" condim="{condim}" friction="1 0.05 0"/>
          <body pos="0 0 0.1"><freejoint/>
            <geom type="sphere" size="0.1" mass="1" condim="{condim}" friction="1 0.05 0"/>
          </body></worldbody></mujoco>"""
        m = js.load_string(xml)
        d = js.make_data(m)
        d.qvel[5] = 20.0
        js.step(m, d, 1000)
        spins[condim] = d.qvel[5]
    assert abs(spins[4]) < 1e-3
    assert spins[3] > 19.0


def test_rolling_friction_stops_a_rolling_ball():
    """condim 6: a rolling ball stops; with condim 3 it keeps rolling."""
    speeds = {}
    for condim in (3, 6):
        xml = f"""<mujoco><option timestep="0.002" cone="elliptic"/><worldbody>
          <geom type="plane" size="50 50 .1" condim="{condim}" friction="1 0.01 0.02"/>
          <body pos="0 0 0.1"><freejoint/>
            <geom type="sphere" size="0.1" mass="1" condim="{condim}" friction="1 0.01 0.02"/>
          </body></worldbody></mujoco>"""
        m = js.load_string(xml)
        d = js.make_data(m)
        d.qvel[0] = 1.0
        d.qvel[4] = 10.0  # rolling without slipping: ω = v / r about +y
        js.step(m, d, 2000)
        speeds[condim] = np.linalg.norm(d.qvel[:3])
    assert speeds[6] < 1e-3
    assert speeds[3] > 0.9


def test_five_stacked_boxes_stand_for_ten_seconds():
    """Five boxes stacked (masses 1 … 5 kg, 1 cm offsets) still stand after 10 s.

    Heights stay within 5 mm (the five soft contacts together sink 3.4 mm under the load) and
    each box stays on the one below (the soft cones let the stack creep sideways by about
    1 mm/s, as MuJoCo's does).
    """
    m = js.load_string(STACK)
    d = js.make_data(m)
    start = d.qpos.reshape(5, 7)[:, :3].copy()
    js.step(m, d, 5000)
    pos = d.qpos.reshape(5, 7)[:, :3]
    assert np.max(np.abs(pos[:, 2] - start[:, 2])) < 5e-3
    assert np.max(np.abs(np.diff(pos[:, :2], axis=0))) < 0.05
    assert np.max(np.abs(d.qvel)) < 1e-2


def test_frictional_impact_never_adds_kinetic_energy():
    """A box thrown obliquely onto the floor loses kinetic energy and never gains any.

    Gravity is off, so the energy before the impact is the bound at every later step.
    """
    xml = """<mujoco><option timestep="0.001" gravity="0 0 0"><flag energy="enable"/></option>
      <worldbody><geom type="plane" size="5 5 .1" friction="0.7"/>
      <body pos="0 0 0.3"><freejoint/>
        <geom type="box" size="0.1 0.15 0.05" mass="2"/>
      </body></worldbody></mujoco>"""
    m = js.load_string(xml)
    d = js.make_data(m)
    d.qvel[:3] = (1.0, 0.5, -3.0)
    js.forward(m, d)
    ke0 = d.energy[1]
    ke = []
    touched = False
    for _ in range(600):
        js.step(m, d)
        js.forward(m, d)
        touched |= bool(d.ncon[0])
        ke.append(d.energy[1])
    assert touched
    assert np.max(ke) <= ke0 * (1 + 1e-12)
    assert ke[-1] < 0.9 * ke0


def test_painleve_rod_lifts_off_falls_flat_and_rests():
    """Painlevé's rod (μ = 2, tilted): the soft model resolves it without blow-up.

    Released at rest, the rod pivots and slides on its lower end, the end lifts off, and the
    rod lands flat and rests on the table (z = cap radius), along MuJoCo's trajectory.
    """
    xml = js.models.xml("painleve")
    m = js.load_string(xml)
    d = js.make_data(m)
    mjm = mujoco.MjModel.from_xml_string(xml)
    mjd = mujoco.MjData(mjm)
    ncon, diff = [], 0.0
    with np.errstate(all="raise"):
        for _ in range(2000):
            js.step(m, d)
            mujoco.mj_step(mjm, mjd)
            ncon.append(int(d.ncon[0]))
            diff = max(diff, np.max(np.abs(d.qpos - mjd.qpos)))
    assert diff < TRAJ_TOL
    assert d.warning[:, 0].sum() == 0
    lifted = ncon.index(0)
    assert ncon[:lifted] == [1] * lifted and lifted > 100  # slides on one end, then lifts off
    assert ncon[-1] == 2  # lying flat: both end caps touch
    assert abs(d.qpos[2] - 0.01) < 1e-3 and np.max(np.abs(d.qvel)) < 1e-6


@pytest.mark.parametrize("name,nstep", [("humanoid", 500), ("box_stack", 1000),
                                        ("quadruped", 1000)])
def test_trajectory_matches_mj_step(name, nstep):
    """The humanoid falling onto the floor (1 s) and a box stack and the quadruped (2 s)."""
    xml = STACK if name == "box_stack" else js.models.xml(name)
    mjm = mujoco.MjModel.from_xml_string(xml)
    mjd = mujoco.MjData(mjm)
    m = js.load_string(xml)
    d = js.make_data(m)
    err = 0.0
    for _ in range(nstep):
        mujoco.mj_step(mjm, mjd)
        js.step(m, d)
        err = max(err, np.max(np.abs(d.qpos - mjd.qpos)))
    assert d.ncon[0] > 0
    assert err < TRAJ_TOL
