"""Activation dynamics (act, act_dot) and muscles, against MuJoCo.

Every actuator dynamics type (integrator, filter, filterexact, muscle), with and without
actlimited/actrange and actearly, on joint and site transmissions: mj_forward's act_dot,
actuator_force, qfrc_actuator and qacc at random states; 1000-step trajectories of every
integrator against mj_step; rollouts and get_state/set_state carry act; the act rows and
columns of transition_derivatives against mjd_transitionFD; the muscle curves against
mju_muscleGain/Bias/Dynamics at sampled points.
"""

import warnings

import mujoco
import numpy as np
import pytest

import jointspace as js
from jointspace.actuation import muscle_bias, muscle_dynamics, muscle_gain
from jointspace.errors import ModelError
from tests._real_models import real_model

# one forward: the same sums in another order, and the dense solve of M⁻¹
FWD_TOL = 1e-9
# 1000 steps: rounding grows along the trajectory (measured ≤ 1e-11 on these models)
TRAJ_TOL = 1e-8
# forward differences with eps 1e-6 on both sides: truncation and rounding of the same steps
FD_TOL = 1e-6
# closed-form curves evaluated with the same operations: rounding only
CURVE_TOL = 1e-12

ACTUATORS = """
<general name="int" joint="h1" dyntype="integrator" gainprm="2" actlimited="true"
         actrange="-0.5 0.7"/>
<general name="filt" joint="h2" dyntype="filter" dynprm="0.05" gaintype="affine"
         gainprm="3 0.5 -0.2" biastype="affine" biasprm="0.1 -1 -0.3"/>
<general name="fexact" joint="s" dyntype="filterexact" dynprm="0.02" gainprm="4"
         actearly="true"/>
<position name="pos" joint="h3" kp="20" kv="1" timeconst="0.03"/>
<intvelocity name="iv" joint="h2" kp="5" actrange="-0.4 0.4"/>
<cylinder name="cyl" joint="s" timeconst="0.04" area="0.3" bias="0.1 -2 -0.5"/>
<muscle name="mus" joint="h1" lengthrange="-1.2 1.1" tausmooth="0.2"/>
<muscle name="mus2" joint="h3" lengthrange="-1 1" force="30" gear="-1"/>
<general name="gm" joint="s" dyntype="filter" actearly="true" dynprm="0.1" gaintype="muscle"
         biastype="muscle" gainprm="0.8 1.1 5 200 0.6 1.5 1.2 1.4 1.3"
         biasprm="0.8 1.1 5 200 0.6 1.5 1.2 1.4 1.3" lengthrange="-0.4 0.5"/>
<motor name="mot" joint="h1"/>
<general name="sitefilt" site="tip" gear="0 1 0 0 0 0.2" dyntype="filter" dynprm="0.08"
         actlimited="true" actrange="-1 1"/>
"""


def _xml(integrator="Euler", actuators=ACTUATORS, extra=""):
    return f"""<mujoco><option integrator="{integrator}" timestep="0.002"/>
<worldbody><body><joint name="h1" axis="0 1 0" damping="0.1"/>
<geom type="capsule" size=".05" fromto="0 0 0 0 0 -.4" mass="1"/>
<body pos="0 0 -.4"><joint name="h2" axis="1 0 0"/>
<geom type="capsule" size=".04" fromto="0 0 0 0 0 -.3" mass=".7"/>
<body pos="0 0 -.3"><joint name="s" type="slide" axis="0 0 1" damping=".5"/>
<geom type="box" size=".05 .05 .05" mass=".4"/>
<body pos="0 0 -.1"><joint name="h3" axis="0 0 1" armature=".01"/>
<geom type="capsule" size=".03" fromto="0 0 0 .2 0 0" mass=".3"/><site name="tip" pos=".2 0 0"/>
</body></body></body></body></worldbody><actuator>{actuators}</actuator>{extra}</mujoco>"""


def _pair(xml):
    mj = mujoco.MjModel.from_xml_string(xml)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m = js.load_string(xml)
    return mj, m


def _random_inputs(mj, rng):
    qpos = rng.uniform(-0.8, 0.8, mj.nq)
    qvel = rng.uniform(-1.5, 1.5, mj.nv)
    act = rng.uniform(-1.0, 1.2, mj.na)
    ctrl = rng.uniform(-1.2, 1.2, mj.nu)
    return qpos, qvel, act, ctrl


def _set(md, d, qpos, qvel, act, ctrl):
    for x in (md, d):
        x.qpos[:] = qpos
        x.qvel[:] = qvel
        x.act[:] = act
        x.ctrl[:] = ctrl


def test_model_fields_match_mujoco():
    mj, m = _pair(_xml())
    assert m.na == mj.na == 10
    for name in ("actadr", "actnum", "actlimited", "actearly", "dyntype", "gaintype",
                 "biastype"):
        np.testing.assert_array_equal(getattr(m, "actuator_" + name),
                                      getattr(mj, "actuator_" + name), err_msg=name)
    for name in ("actrange", "lengthrange", "gainprm", "biasprm", "dynprm"):
        np.testing.assert_allclose(getattr(m, "actuator_" + name),
                                   getattr(mj, "actuator_" + name), rtol=0, atol=FWD_TOL,
                                   err_msg=name)
    np.testing.assert_allclose(m.actuator_acc0, mj.actuator_acc0, rtol=1e-12, atol=0)


def test_forward_matches_mujoco():
    mj, m = _pair(_xml())
    md, d = mujoco.MjData(mj), js.Data(m)
    rng = np.random.default_rng(0)
    worst = 0.0
    for _ in range(20):
        _set(md, d, *_random_inputs(mj, rng))
        mujoco.mj_forward(mj, md)
        js.forward(m, d)
        for name in ("act_dot", "actuator_force", "actuator_length", "actuator_velocity",
                     "qfrc_actuator", "qacc"):
            err = np.max(np.abs(getattr(d, name) - getattr(md, name)))
            scale = max(1.0, np.max(np.abs(getattr(md, name))))
            assert err <= FWD_TOL * scale, (name, err)
            worst = max(worst, err / scale)
    assert worst <= FWD_TOL


@pytest.mark.parametrize("integrator", ["Euler", "implicit", "implicitfast", "RK4"])
def test_trajectory_matches_mj_step(integrator):
    mj, m = _pair(_xml(integrator))
    md, d = mujoco.MjData(mj), js.Data(m)
    rng = np.random.default_rng(1)
    qpos, qvel, act, _ = _random_inputs(mj, rng)
    _set(md, d, 0.3 * qpos, 0.3 * qvel, act, np.zeros(mj.nu))
    for k in range(1000):
        u = np.sin(0.01 * k + np.arange(mj.nu)) * 1.1
        md.ctrl[:] = u
        d.ctrl[:] = u
        mujoco.mj_step(mj, md)
        js.step(m, d)
    for name in ("qpos", "qvel", "act"):
        err = np.max(np.abs(getattr(d, name) - getattr(md, name)))
        assert err <= TRAJ_TOL, (name, err)


def test_actrange_clamps_the_integrated_activation():
    mj, m = _pair(_xml())
    md, d = mujoco.MjData(mj), js.Data(m)
    u = np.full(mj.nu, 1.0)
    md.ctrl[:] = u
    d.ctrl[:] = u
    for _ in range(400):
        mujoco.mj_step(mj, md)
        js.step(m, d)
    i = mj.actuator("int").id
    assert d.act[m.actuator_actadr[i]] == md.act[mj.actuator_actadr[i]] == 0.7
    np.testing.assert_allclose(d.act, md.act, rtol=0, atol=TRAJ_TOL)


def test_state_and_rollout_carry_act():
    mj, m = _pair(_xml())
    d = js.Data(m)
    rng = np.random.default_rng(2)
    qpos, qvel, act, ctrl = _random_inputs(mj, rng)
    d.qpos[:], d.qvel[:], d.act[:], d.ctrl[:] = qpos, qvel, act, ctrl
    s = js.get_state(m, d)
    d2 = js.Data(m)
    js.set_state(m, d2, s)
    np.testing.assert_array_equal(d2.act, act)
    nstep = 50
    ctrls = np.tile(ctrl, (1, nstep, 1))
    state, _ = js.rollout(m, None, s[None], ctrls)
    for _ in range(nstep):
        js.step(m, d)
    final = state[0, -1]
    np.testing.assert_array_equal(final[1 + m.nq + m.nv:], d.act)


@pytest.mark.parametrize("integrator", ["Euler", "implicitfast"])
def test_transition_derivatives_act_rows_match_mujoco(integrator):
    mj, m = _pair(_xml(integrator))
    md, d = mujoco.MjData(mj), js.Data(m)
    rng = np.random.default_rng(3)
    _set(md, d, *_random_inputs(mj, rng))
    nx = 2 * mj.nv + mj.na
    A0 = np.empty((nx, nx))
    B0 = np.empty((nx, mj.nu))
    mujoco.mjd_transitionFD(mj, md, 1e-6, False, A0, B0, None, None)
    A, B = js.transition_derivatives(m, d, eps=1e-6)
    assert A.shape == (nx, nx) and B.shape == (nx, mj.nu)
    scale = max(1.0, np.max(np.abs(A0)))
    assert np.max(np.abs(A - A0)) <= FD_TOL * scale
    assert np.max(np.abs(B - B0)) <= FD_TOL * max(1.0, np.max(np.abs(B0)))


def test_muscle_curves_match_mujoco():
    rng = np.random.default_rng(4)
    for _ in range(300):
        lo = rng.uniform(-1, 0.5)
        lr = np.array([lo, lo + rng.uniform(0.1, 2)])
        r0 = rng.uniform(0.3, 0.9)
        prm = np.array([r0, r0 + rng.uniform(0.1, 0.8), rng.choice([-1.0, rng.uniform(1, 50)]),
                        rng.uniform(10, 300), rng.uniform(0.2, 0.8), rng.uniform(1.2, 2.0),
                        rng.uniform(0.5, 3), rng.uniform(0.5, 2), rng.uniform(1.05, 1.8),
                        0.0])
        acc0 = rng.uniform(0.1, 5)
        length = rng.uniform(lr[0] - 0.3, lr[1] + 0.3)
        vel = rng.uniform(-3, 3)
        g = mujoco.mju_muscleGain(length, vel, lr, acc0, prm[:9])
        b = mujoco.mju_muscleBias(length, lr, acc0, prm[:9])
        assert abs(muscle_gain(length, vel, lr[0], lr[1], acc0, prm) - g) <= CURVE_TOL * max(
            1, abs(g))
        assert abs(muscle_bias(length, lr[0], lr[1], acc0, prm) - b) <= CURVE_TOL * max(
            1, abs(b))
        dyn = np.array([rng.uniform(0.005, 0.05), rng.uniform(0.01, 0.1),
                        rng.choice([0.0, rng.uniform(0.01, 0.5)])])
        u, a = rng.uniform(-0.3, 1.3), rng.uniform(-0.3, 1.3)
        ref = mujoco.mju_muscleDynamics(u, a, dyn)
        assert abs(muscle_dynamics(u, a, dyn) - ref) <= CURVE_TOL * max(1, abs(ref))


@pytest.mark.parametrize("actuator, what", [
    ('<general joint="h1" dyntype="filter" actlimited="true" actrange="1 -1"/>',
     "lower bound exceeds the upper"),
    ('<general joint="h1" dyntype="sideways"/>', "dyntype"),
    ('<general joint="h1" dyntype="filter" gaintype="cubic"/>', "gaintype"),
    ('<position joint="h1" kp="1" timeconst="-0.1"/>', "timeconst=-0.1 is negative"),
    ('<position joint="h1" kp="1" dampratio="-1"/>', "dampratio=-1.0 is negative"),
    ('<cylinder joint="h1" timeconst="-1"/>', "timeconst=-1.0 is negative"),
    ('<muscle joint="h1" lengthrange="-1 1" tausmooth="-1"/>', "tausmooth=-1.0 is negative"),
    ('<muscle joint="h1" lengthrange="-1 1" range="1 0.5"/>', "range"),
    ('<muscle joint="h1" lengthrange="-1 1" lmin="1.2"/>', "lmin < 1 < lmax"),
    ('<muscle joint="h1" lengthrange="-1 1" vmax="0"/>', "positive scale"),
    ('<general joint="h1" actlimited="true" actrange="-1 1"/>', "no activation dynamics"),
    ('<general joint="h1" dyntype="filter" actdim="2"/>', "actdim=2: more than one"),
    ('<general joint="h1" actdim="1"/>', "actdim=1 on an actuator without activation"),
    ('<general joint="h1" dyntype="muscle" actdim="0"/>', "actdim=0 on an actuator with"),
    ('<general joint="h1" dyntype="user"/>', "dyntype='user'"),
])
def test_bad_activation_input_is_an_error(actuator, what):
    with pytest.raises(ModelError, match=what) as err:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            js.load_string(_xml(actuators=actuator))
    assert "line" in str(err.value) or "<string>" in str(err.value)


@pytest.mark.parametrize("actuator", [
    '<general joint="h1" actdim="0"/>',
    '<general joint="h1" actdim="-2"/>',
    '<general joint="h1" actdim="1" dyntype="filter" dynprm="0.1"/>',
    '<general joint="h1" actdim="1" dyntype="integrator"/>',
    '<general joint="h1" actdim="1" dyntype="filterexact" dynprm="0.1"/>',
])
def test_actdim_that_mujoco_accepts_loads_and_steps_as_in_mujoco(actuator):
    # actdim equal to what the dyntype gives (any negative value meaning "as the dyntype
    # gives") is accepted by MuJoCo 4.0; the model must load with the same activations and
    # step to the same state.
    xml = _xml(actuators=actuator)
    ref = mujoco.MjModel.from_xml_string(xml)
    m = js.load_string(xml)
    assert m.na == ref.na and list(m.actuator_actnum) == list(ref.actuator_actnum)
    rd = mujoco.MjData(ref)
    d = js.make_data(m)
    rd.ctrl[:] = d.ctrl[:] = 0.5
    for _ in range(20):
        mujoco.mj_step(ref, rd)
        js.step(m, d)
    assert np.allclose(d.qpos, rd.qpos, rtol=0, atol=1e-12)
    assert np.allclose(d.act, rd.act, rtol=0, atol=1e-12)


def _limited_xml(integrator, actuators):
    xml = _xml(integrator, actuators)
    for joint, rng in (('name="h1" axis="0 1 0" damping="0.1"', "-60 45"),
                       ('name="h2" axis="1 0 0"', "-40 50"),
                       ('name="s" type="slide" axis="0 0 1" damping=".5"', "-.1 .2"),
                       ('name="h3" axis="0 0 1" armature=".01"', "-90 60")):
        xml = xml.replace(f"<joint {joint}/>", f'<joint {joint} range="{rng}"/>')
    return xml


@pytest.mark.parametrize("integrator", ["Euler", "RK4"])
def test_muscle_lengthrange_matches_mujoco(integrator):
    """Muscles without lengthrange: MuJoCo's compiler simulation (mj_setLengthRange)."""
    prm = '"0.7 1.1 5 200 0.5 1.6 1.5 1.3 1.2"'
    xml = _limited_xml(integrator, f"""<muscle joint="h1"/><muscle joint="s" gear="2"/>
        <general joint="h2" gaintype="muscle" dyntype="filter" gainprm={prm}/>
        <muscle jointinparent="h3" lengthrange="-1 1"/>""")
    mj, m = _pair(xml)
    # 2 × 1000 steps per muscle, compared with MuJoCo's after the same steps (measured 2e-13)
    np.testing.assert_allclose(m.actuator_lengthrange, mj.actuator_lengthrange, rtol=0,
                               atol=TRAJ_TOL)
    assert m.actuator_lengthrange[3].tolist() == [-1.0, 1.0]  # given: kept


def test_muscle_lengthrange_that_does_not_converge_is_an_error():
    xml = _xml(actuators='<muscle joint="s"/>')  # an unlimited slide: no range to find
    with pytest.raises(ValueError, match="did not converge"):
        mujoco.MjModel.from_xml_string(xml)
    with pytest.raises(ModelError, match="did not converge") as err:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            js.load_string(xml)
    assert "<muscle>" in str(err.value) and "line" in str(err.value) or "<string>" in str(
        err.value)


@pytest.mark.parametrize("integrator", ["Euler", "implicitfast", "RK4"])
def test_dm_control_third_order_actuators_match_mujoco(integrator):
    """dm_control's model_with_third_order_actuators.xml (cylinder and integrator, na = 2)."""
    path = real_model("dm-control",
                      "dm_control/mujoco/testing/assets/model_with_third_order_actuators.xml")
    mj = mujoco.MjModel.from_xml_path(str(path))
    mj.opt.integrator = getattr(mujoco.mjtIntegrator, "mjINT_" + integrator.upper())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m = js.load(str(path))
    m.opt.integrator = integrator
    assert m.na == mj.na == 2
    md, d = mujoco.MjData(mj), js.Data(m)
    for k in range(1000):
        u = np.cos(0.02 * k + np.arange(mj.nu))
        md.ctrl[:] = u
        d.ctrl[:] = u
        mujoco.mj_step(mj, md)
        js.step(m, d)
    for name in ("qpos", "qvel", "act", "act_dot", "actuator_force"):
        err = np.max(np.abs(getattr(d, name) - getattr(md, name)))
        assert err <= TRAJ_TOL * max(1.0, np.max(np.abs(getattr(md, name)))), (name, err)


def test_keyframe_act_matches_mujoco():
    key = '<keyframe><key name="k" qpos="0.1 -0.2 0.05 0.3" act="{}"/></keyframe>'.format(
        " ".join(f"{0.1 * k - 0.3:g}" for k in range(10)))
    mj, m = _pair(_xml(extra=key))
    np.testing.assert_array_equal(m.key_act, mj.key_act)
    md, d = mujoco.MjData(mj), js.Data(m)
    mujoco.mj_resetDataKeyframe(mj, md, 0)
    js.reset(m, d, "k")
    np.testing.assert_array_equal(d.act, md.act)
    mujoco.mj_forward(mj, md)
    js.forward(m, d)
    np.testing.assert_allclose(d.act_dot, md.act_dot, rtol=0, atol=FWD_TOL)


@pytest.mark.parametrize("options", [
    'mode="all"',
    'mode="all" useexisting="false" uselimit="true"',
    'mode="muscle" useexisting="false" accel="35" timeconst="0.5" timestep="0.005" '
    'inttotal="8" interval="1.5" tolrange="0.1"',
    'mode="muscleuser" maxforce="3"',
    'mode="none"',
])
def test_lengthrange_compiler_options_match_mujoco(options):
    """<compiler><lengthrange> options as mj_setLengthRange's mjLROpt.

    Which actuators are simulated (mode, useexisting), limits taken instead (uselimit) and
    the simulation's parameters.
    """
    xml = _limited_xml("Euler", """<muscle joint="h1"/><muscle joint="s" gear="2"/>
        <motor joint="h2" gear="3"/><muscle jointinparent="h3" lengthrange="-1 1"/>
        <position joint="h3" kp="5"/>""").replace(
        "<worldbody>", f"<compiler><lengthrange {options}/></compiler><worldbody>", 1)
    mj, m = _pair(xml)
    np.testing.assert_allclose(m.actuator_lengthrange, mj.actuator_lengthrange, rtol=0,
                               atol=TRAJ_TOL)


@pytest.mark.parametrize("options, what", [
    ('mode="some"', "'mode'"),
    ('accel="x"', "'x' is not a finite number"),
])
def test_bad_lengthrange_options_are_errors(options, what):
    xml = _xml(actuators='<muscle joint="h1" lengthrange="-1 1"/>').replace(
        "<worldbody>", f"<compiler>\n<lengthrange {options}/></compiler><worldbody>", 1)
    with pytest.raises(ValueError):
        mujoco.MjModel.from_xml_string(xml)
    with pytest.raises(ModelError, match=rf"<string>:\d+ <lengthrange>.*{what}"):
        js.load_string(xml)


def test_disabled_actuation_keeps_act_dot_as_mujoco():
    """With actuation disabled MuJoCo leaves act_dot as it was and its steps hold act."""
    mj, m = _pair(_xml())
    md, d = mujoco.MjData(mj), js.Data(m)
    _set(md, d, *_random_inputs(mj, np.random.default_rng(5)))
    mujoco.mj_forward(mj, md)
    js.forward(m, d)
    mj.opt.disableflags |= mujoco.mjtDisableBit.mjDSBL_ACTUATION
    m.opt_disableflags[0] |= mujoco.mjtDisableBit.mjDSBL_ACTUATION
    for _ in range(100):
        mujoco.mj_step(mj, md)
        js.step(m, d)
    for name in ("act", "act_dot", "qpos", "qvel"):
        np.testing.assert_allclose(getattr(d, name), getattr(md, name), rtol=0, atol=TRAJ_TOL,
                                   err_msg=name)
    assert not d.actuator_force.any()
