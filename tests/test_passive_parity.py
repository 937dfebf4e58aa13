"""Passive and joint-level forces against MuJoCo's mj_forward.

Gravity compensation, actuatorgravcomp, the actuatorfrcrange clamp, springdamper, the
inertia-box fluid model, damper and dampratio actuators, and the option flags that public
functions honor.

Each case is a focused MJCF model compiled by both; at seeded random states (qpos, qvel,
ctrl) the parts of qfrc_passive (qfrc_spring, qfrc_damper, qfrc_gravcomp, qfrc_fluid),
qfrc_actuator, actuator_force and qacc are compared with MuJoCo's.
"""

import warnings

import mujoco
import numpy as np
import pytest

import jointspace as js
from jointspace.errors import ModelError
from jointspace.io.mjcf import parse_mjcf
from tests._util import random_state

# smooth dynamics without contacts: the same float64 formulas in another order, divided by
# M (condition numbers up to ~1e3 here)
TOL = 1e-9
# trajectories: the per-step difference (~1e-14) grows through the dynamics' sensitivity
TRAJ_TOL = 1e-8

ARM = """
<mujoco>
  <option gravity="0 0 -9.81" {option}>{flags}</option>
  <default><geom contype="0" conaffinity="0"/></default>
  <worldbody>
    <body name="base" pos="0 0 1" {g0}>
      <joint name="j0" type="hinge" axis="0 0 1" damping="0.1" {j0}/>
      <geom type="capsule" fromto="0 0 0 0.4 0 0" size="0.05"/>
      <body name="upper" pos="0.4 0 0" {g1}>
        <joint name="j1" type="hinge" axis="0 1 0" stiffness="2" springref="0.3" {j1}/>
        <geom type="box" size="0.2 0.04 0.03" pos="0.2 0 0"/>
        <body name="fore" pos="0.4 0 0" {g2}>
          <joint name="j2" type="slide" axis="1 0 0" {j2}/>
          <geom type="ellipsoid" size="0.1 0.05 0.03" pos="0.1 0 0"/>
          <site name="tip" pos="0.2 0 0"/>
        </body>
      </body>
    </body>
    <body name="float" pos="1 1 1" {g3}>
      <freejoint/>
      <geom type="box" size="0.1 0.2 0.3"/>
      <body pos="0 0 -0.4">
        <joint name="j4" type="ball" damping="0.05"/>
        <geom type="cylinder" size="0.05 0.1"/>
      </body>
    </body>
  </worldbody>
  <actuator>{actuators}</actuator>
</mujoco>
"""


def arm(option="", flags="", actuators='<motor joint="j0"/><motor joint="j1" gear="2"/>'
        '<motor joint="j2"/>', **kw):
    fields = dict(g0="", g1="", g2="", g3="", j0="", j1="", j2="")
    fields.update(kw)
    return ARM.format(option=option, flags=flags, actuators=actuators, **fields)


def _load(xml):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return js.load_string(xml)


def compare_forward(xml, nstate=5, seed=0, ctrl_scale=3.0,
                    fields=("qfrc_spring", "qfrc_damper", "qfrc_gravcomp", "qfrc_fluid",
                            "qfrc_passive", "qfrc_actuator", "actuator_force", "qfrc_bias",
                            "qacc")):
    """Max |jointspace − MuJoCo| of each field over seeded states (asserted ≤ TOL)."""
    mj = mujoco.MjModel.from_xml_string(xml)
    md = mujoco.MjData(mj)
    m = _load(xml)
    d = js.Data(m)
    rng = np.random.default_rng(seed)
    worst = dict.fromkeys(fields, 0.0)
    for _ in range(nstate):
        q, v = random_state(mj, rng)
        u = ctrl_scale * rng.normal(size=mj.nu)
        md.qpos[:], md.qvel[:], md.ctrl[:] = q, v, u
        d.qpos[:], d.qvel[:], d.ctrl[:] = q, v, u
        mujoco.mj_forward(mj, md)
        js.forward(m, d)
        for f in fields:
            err = np.max(np.abs(getattr(d, f) - getattr(md, f)), initial=0.0)
            scale = max(1.0, np.max(np.abs(getattr(md, f)), initial=0.0))
            worst[f] = max(worst[f], err / scale)
    for f, err in worst.items():
        assert err <= TOL, f"{f}: {err:.3g}"
    return worst


# ---- gravity compensation ----------------------------------------------------------------

@pytest.mark.parametrize("kw", [
    dict(g1='gravcomp="1"'),
    dict(g0='gravcomp="0.5"', g2='gravcomp="1"', g3='gravcomp="0.3"'),
    dict(g1='gravcomp="1"', g2='gravcomp="2"', j1='actuatorgravcomp="true"'),
    dict(g0='gravcomp="1"', g1='gravcomp="1"', g2='gravcomp="1"', j0='actuatorgravcomp="true"',
         j2='actuatorgravcomp="true"'),
])
def test_gravcomp_matches_mujoco(kw):
    compare_forward(arm(**kw))


def test_gravcomp_without_actuators_is_passive_only():
    # MuJoCo adds actuatorgravcomp forces in mj_fwdActuation, which returns early when nu = 0
    compare_forward(arm(actuators="", g1='gravcomp="1"', j1='actuatorgravcomp="true"'))


@pytest.mark.parametrize("flag", ["gravity", "spring", "damper", "actuation"])
def test_gravcomp_with_disabled_flags(flag):
    compare_forward(arm(flags=f'<flag {flag}="disable"/>', g1='gravcomp="1"',
                        g2='gravcomp="1"', j2='actuatorgravcomp="true"'))


def test_full_gravcomp_makes_a_passive_arm_float():
    xml = arm(actuators="", g0='gravcomp="1"', g1='gravcomp="1"', g2='gravcomp="1"',
              g3='gravcomp="1"').replace('stiffness="2"', "").replace(
                  '<body pos="0 0 -0.4">', '<body pos="0 0 -0.4" gravcomp="1">')
    m = _load(xml)
    d = js.Data(m)
    d.qpos[:] = m.qpos0 + np.r_[0.3, -0.7, 0.1, np.zeros(m.nq - 3)]
    js.forward(m, d)
    assert np.max(np.abs(d.qacc)) < 1e-12
    js.step(m, d, 200)
    assert np.max(np.abs(d.qvel)) < 1e-10


# ---- joint-level clamp of qfrc_actuator -------------------------------------------------

@pytest.mark.parametrize("kw", [
    dict(j0='actuatorfrcrange="-0.5 0.5"'),
    dict(j0='actuatorfrcrange="-0.5 0.5"', j1='actuatorfrcrange="-1 2" actuatorfrclimited="true"',
         j2='actuatorfrcrange="-1 1" actuatorfrclimited="false"'),
    dict(j1='actuatorfrcrange="-0.1 0.2" actuatorgravcomp="true"', g2='gravcomp="1"'),
])
def test_actuatorfrcrange_clamps_qfrc_actuator(kw):
    acts = ('<motor joint="j0"/><motor joint="j0" gear="2"/><position joint="j1" kp="20"/>'
            '<motor joint="j2" gear="3"/>')
    worst = compare_forward(arm(actuators=acts, **kw), ctrl_scale=5.0)
    assert worst["qacc"] <= TOL


# ---- springdamper ------------------------------------------------------------------------

@pytest.mark.parametrize("kw", [
    dict(j0='springdamper="0.2 1"'),
    dict(j2='springdamper="0.5 0.3" stiffness="100" damping="7"', j0='springdamper="1 2"'),
])
def test_springdamper_matches_mujoco_compiler(kw):
    xml = arm(**kw)
    mj = mujoco.MjModel.from_xml_string(xml)
    m = _load(xml)
    np.testing.assert_allclose(m.jnt_stiffness, mj.jnt_stiffness, rtol=TOL, atol=0)
    np.testing.assert_allclose(m.dof_damping, mj.dof_damping, rtol=TOL, atol=0)
    compare_forward(xml)


# ---- fluid forces (inertia-box model) ---------------------------------------------------

@pytest.mark.parametrize("option", [
    'density="1000"',
    'viscosity="0.5"',
    'density="1.2" viscosity="0.01" wind="1 -2 0.5"',
    'density="4000" viscosity="0.1" wind="0 0 3"',
])
def test_inertia_box_fluid_matches_mujoco(option):
    worst = compare_forward(arm(option=option), nstate=8)
    assert worst["qfrc_fluid"] <= TOL


def _trajectory_gap(xml, seed, integrator=None):
    """Max |Δqpos| and |Δqvel| after 1000 steps of ours and mj_step from one random state.

    integrator (a name): set on both models after loading; None keeps the file's.
    """
    mj = mujoco.MjModel.from_xml_string(xml)
    m = _load(xml)
    if integrator is not None:
        mj.opt.integrator = getattr(mujoco.mjtIntegrator, f"mjINT_{integrator.upper()}")
        m.opt.integrator = integrator
    md = mujoco.MjData(mj)
    d = js.Data(m)
    q, v = random_state(mj, np.random.default_rng(seed))
    md.qpos[:], md.qvel[:] = q, v
    d.qpos[:], d.qvel[:] = q, v
    for _ in range(1000):
        mujoco.mj_step(mj, md)
    js.step(m, d, 1000)
    return np.max(np.abs(d.qpos - md.qpos)), np.max(np.abs(d.qvel - md.qvel))


def test_fluid_trajectory_matches_mj_step():
    xml = arm(option='density="1000" viscosity="0.05" wind="0.5 0 0" integrator="RK4"')
    for integrator in ("Euler", "RK4"):
        gap_q, gap_v = _trajectory_gap(xml, 3, integrator)
        assert gap_q < TRAJ_TOL, integrator
        assert gap_v < TRAJ_TOL, integrator



FLUID_IMPLICIT = """<mujoco><option density="1.2" viscosity="0.02" wind="0.3 -.2 .1"
integrator="{integrator}"/>
<worldbody>
<body pos="0 0 1"><joint type="hinge" axis="0 1 0" damping=".05"/>
<geom type="capsule" fromto="0 0 0 .3 0 0" size=".04" {shape}/>
<body pos=".3 0 0"><joint type="ball"/><geom type="box" size=".1 .05 .02" {shape}/></body></body>
<body pos="1 0 1"><freejoint/><geom type="ellipsoid" size=".1 .06 .03" {shape}/></body>
</worldbody></mujoco>"""


@pytest.mark.parametrize("shape", ["", 'fluidshape="ellipsoid"'], ids=["box", "ellipsoid"])
@pytest.mark.parametrize("integrator", ["implicit", "implicitfast"])
def test_fluid_with_implicit_integrators_matches_mj_step(shape, integrator):
    """The fluid forces' velocity derivative in M − h D, as mjd_passive_vel.

    Under implicitfast a standalone free body's block stays unsymmetrized, the rest is
    symmetrized.
    """
    xml = FLUID_IMPLICIT.format(integrator=integrator, shape=shape)
    mj = mujoco.MjModel.from_xml_string(xml)
    md = mujoco.MjData(mj)
    m = _load(xml)
    d = js.Data(m)
    rng = np.random.default_rng(5)
    q, v = random_state(mj, rng)
    md.qpos[:], md.qvel[:] = q, 2.0 * v
    d.qpos[:], d.qvel[:] = q, 2.0 * v
    for _ in range(1000):
        mujoco.mj_step(mj, md)
    js.step(m, d, 1000)
    assert np.max(np.abs(d.qpos - md.qpos)) < TRAJ_TOL
    assert np.max(np.abs(d.qvel - md.qvel)) < TRAJ_TOL


ELLIPSOID_CASES = [
    # every geom: capsule (fromto), box, ellipsoid, box, cylinder
    ('density="1000"', '<geom contype="0" conaffinity="0" fluidshape="ellipsoid"/>'),
    ('density="1.2" viscosity="0.01" wind="1 -2 0.5"',
     '<geom contype="0" conaffinity="0" fluidshape="ellipsoid" fluidcoef="0.4 0.3 1 2 0.5"/>'),
    ('viscosity="0.3"', '<geom contype="0" conaffinity="0" fluidshape="ellipsoid"/>'),
]


@pytest.mark.parametrize("option, default", ELLIPSOID_CASES)
def test_ellipsoid_fluid_matches_mujoco(option, default):
    xml = arm(option=option).replace('<default><geom contype="0" conaffinity="0"/></default>',
                                     f"<default>{default}</default>")
    mj = mujoco.MjModel.from_xml_string(xml)
    m = _load(xml)
    np.testing.assert_allclose(m.geom_fluid, mj.geom_fluid, rtol=TOL, atol=1e-15)
    worst = compare_forward(xml, nstate=8)
    assert worst["qfrc_fluid"] <= TOL


def test_ellipsoid_and_box_models_on_different_bodies():
    # the float body's geom uses the ellipsoid model, every other body the inertia box
    xml = arm(option='density="800" viscosity="0.02" wind="0 1 0"').replace(
        '<geom type="box" size="0.1 0.2 0.3"/>',
        '<geom type="box" size="0.1 0.2 0.3" fluidshape="ellipsoid"/>')
    compare_forward(xml, nstate=8)


def test_ellipsoid_fluid_trajectory_matches_mj_step():
    xml = arm(option='density="1000" viscosity="0.05" wind="0.5 0 0"').replace(
        '<default><geom contype="0" conaffinity="0"/></default>',
        '<default><geom contype="0" conaffinity="0" fluidshape="ellipsoid"/></default>')
    for integrator in ("Euler", "RK4"):
        assert _trajectory_gap(xml, 4, integrator)[0] < TRAJ_TOL, integrator


def test_ellipsoid_fluid_on_mesh_and_plane_geoms_matches_mujoco():
    # A mesh geom's ellipsoid is its compiled geom_size (the mesh's box), a plane's its
    # size (x, y, spacing), as mju_geomSemiAxes reads them: geom_fluid, qfrc_fluid at
    # random states and a trajectory with wind equal MuJoCo's.
    mesh = ('<asset><mesh name="tet" vertex="0 0 0  0.2 0 0  0 0.3 0  0 0 0.25"/></asset>'
            '<worldbody><geom type="plane" size="2 2 .1" fluidshape="ellipsoid"/>')
    xml = arm(option='density="1000" viscosity="0.02" wind="0.5 -0.3 0.1"').replace(
        "<worldbody>", mesh, 1).replace(
        '<geom type="box" size="0.1 0.2 0.3"/>',
        '<geom type="mesh" mesh="tet" fluidshape="ellipsoid" fluidcoef=".4 .3 1.2 .9 1.1"/>')
    mj = mujoco.MjModel.from_xml_string(xml)
    m = _load(xml)
    assert m.geom_fluid[:, 0].sum() == 2  # the mesh and the plane use the ellipsoid model
    np.testing.assert_allclose(m.geom_fluid, mj.geom_fluid, rtol=TOL, atol=1e-15)
    worst = compare_forward(xml, nstate=8)
    assert worst["qfrc_fluid"] <= TOL
    assert _trajectory_gap(xml, 6)[0] < TRAJ_TOL


# ---- actuators: damper (affine gain), dampratio ----------------------------------------

def test_damper_and_dampratio_actuators_match_mujoco():
    acts = ('<damper joint="j0" kv="3" ctrlrange="0 2"/>'
            '<position joint="j1" kp="30" dampratio="0.8"/>'
            '<position joint="j2" kp="5" dampratio="1.5" gear="2"/>'
            '<position site="tip" kp="4" dampratio="1" gear="0 0 1 0 0 0"/>')
    worst = compare_forward(arm(actuators=acts))
    assert worst["actuator_force"] <= TOL


def test_damper_implicit_step_matches_mj_step():
    acts = '<damper joint="j0" kv="3" ctrlrange="0 2"/><position joint="j1" kp="30" kv="2"/>'
    xml = arm(actuators=acts, option='integrator="implicitfast"')
    mj = mujoco.MjModel.from_xml_string(xml)
    md = mujoco.MjData(mj)
    m = _load(xml)
    d = js.Data(m)
    md.ctrl[:] = d.ctrl[:] = (1.5, 0.4)
    md.qvel[:3] = d.qvel[:3] = (2.0, -1.0, 0.5)
    for _ in range(300):
        mujoco.mj_step(mj, md)
    js.step(m, d, 300)
    assert np.max(np.abs(d.qpos - md.qpos)) < TRAJ_TOL


# ---- option flags in the public functions ---------------------------------------------

@pytest.mark.parametrize("flags", ['<flag gravity="disable"/>', ""])
def test_bias_gravity_rnea_honor_the_gravity_flag(flags):
    xml = arm(flags=flags)
    mj = mujoco.MjModel.from_xml_string(xml)
    md = mujoco.MjData(mj)
    m = _load(xml)
    d = js.Data(m)
    rng = np.random.default_rng(1)
    for _ in range(3):
        q, v = random_state(mj, rng)
        a = rng.normal(size=mj.nv)
        md.qpos[:], md.qvel[:] = q, v
        mujoco.mj_forward(mj, md)
        np.testing.assert_allclose(js.bias_forces(m, d, q, v), md.qfrc_bias, rtol=0, atol=TOL)
        # gravity alone: MuJoCo's rne at zero velocity
        md.qvel[:] = 0
        mujoco.mj_forward(mj, md)
        np.testing.assert_allclose(js.gravity_forces(m, d, q), md.qfrc_bias, rtol=0, atol=TOL)
        # rnea = M a + bias (armature included in M)
        M = np.zeros((mj.nv, mj.nv))
        mujoco.mj_fullM(mj, md, M)
        md.qvel[:] = v
        mujoco.mj_forward(mj, md)
        np.testing.assert_allclose(js.rnea(m, d, q, v, a), M @ a + md.qfrc_bias, rtol=0,
                                   atol=TOL)


@pytest.mark.parametrize("flag", ["sleep", "ipc", "speculative"])
def test_flags_that_change_the_physics_are_refused(flag):
    """MuJoCo 4.0's sleep, ipc and speculative flags: refused in MJCF, a ModelSpec and at run time.

    MuJoCo computes with them; jointspace has no such computation, so a model or a program
    that turns one on gets an error naming the flag, never a silent result without it.
    """
    xml = arm(flags=f'<flag {flag}="enable"/>')
    # MuJoCo loads each (ipc only with its own integrator, which jointspace lacks too)
    mujoco.MjModel.from_xml_string(
        xml.replace("<option", '<option integrator="discrete"') if flag == "ipc" else xml)
    with pytest.raises(ModelError, match=rf"<string>:\d+ <flag>: <flag {flag}='enable'>"):
        _load(xml)
    spec = parse_mjcf(arm())
    spec.option.enable_flags = (flag,)
    with pytest.raises(ModelError, match=f"enable flag '{flag}'"):
        js.compile_model(spec)
    m = _load(arm())
    bit = 1 << js.types.ENABLE_FLAGS.index(flag)
    assert bit == getattr(mujoco.mjtEnableBit, f"mjENBL_{flag.upper()}")
    with pytest.raises(ValueError, match=f"option enableflags: the {flag} flag"):
        m.opt.enableflags |= bit
    with pytest.raises(ValueError, match="read-only"):
        m.opt_enableflags[0] = bit
    assert m.opt.enableflags == 0
    m.opt.enableflags |= js.types.ENBL_DIAGEXACT  # the flags jointspace computes stay writable
    assert m.opt_enableflags[0] == js.types.ENBL_DIAGEXACT


@pytest.mark.parametrize("groups, actuators", [
    ("0", '<motor joint="j0"/><motor joint="j1" gear="2"/><motor joint="j2"/>'),
    ("1 4", '<motor joint="j0" group="1"/><motor joint="j1" gear="2" group="3"/>'
            '<motor joint="j2" group="4" damping="0.5" armature="0.1"/>'),
])
def test_actuatorgroupdisable_matches_mujoco(groups, actuators):
    """Disabled actuator groups (MuJoCo 4.0's actuatorgroupdisable) exert no force.

    A disabled actuator keeps the damping and armature it lends its joint, as in MuJoCo.
    tests/test_actuator_damping.py has trajectories and activations.
    """
    compare_forward(arm(option=f'actuatorgroupdisable="{groups}"', actuators=actuators))


@pytest.mark.parametrize("option, what", [
    ('density="-1"', "density"),
])
def test_options_that_jointspace_does_not_compute_are_refused(option, what):
    with pytest.raises(ModelError, match=rf"<string>:\d+ <option>.*{what}"):
        _load(arm(option=option))


@pytest.mark.parametrize("kw", [
    dict(option='density="1000" viscosity="0.05" wind="0.5 0 0"'),
    dict(g1='gravcomp="1"', g2='gravcomp="0.5"', j2='actuatorgravcomp="true"',
         j1='springdamper="0.3 1"'),
])
def test_inverse_with_passive_forces_matches_mj_inverse(kw):
    xml = arm(**kw)
    mj = mujoco.MjModel.from_xml_string(xml)
    md = mujoco.MjData(mj)
    m = _load(xml)
    d = js.Data(m)
    rng = np.random.default_rng(5)
    for _ in range(3):
        q, v = random_state(mj, rng)
        a = rng.normal(size=mj.nv)
        md.qpos[:], md.qvel[:], md.qacc[:] = q, v, a
        d.qpos[:], d.qvel[:], d.qacc[:] = q, v, a
        mujoco.mj_inverse(mj, md)
        js.inverse(m, d)
        scale = max(1.0, np.max(np.abs(md.qfrc_inverse)))
        assert np.max(np.abs(d.qfrc_inverse - md.qfrc_inverse)) / scale < TRAJ_TOL
        np.testing.assert_allclose(d.qfrc_passive, md.qfrc_passive, rtol=0, atol=TOL * scale)
