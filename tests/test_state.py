"""Keyframes, reset, mocap bodies and the packed state, against MuJoCo's.

The keyframe fields compile to MuJoCo's `key_*` exactly (defaults, completion of short
vectors, normalized quaternions); `reset` equals mj_resetData / mj_resetDataKeyframe field by
field; `get_state` / `set_state` pack every mjtState component in MuJoCo's order, so that a
state taken from MuJoCo sets jointspace (and back) and the next steps follow MuJoCo's;
mocap bodies move with d.mocap_pos / d.mocap_quat, welds to them included; eq_active
switches an equality constraint at run time.
"""

import re

import mujoco
import numpy as np
import pytest

import jointspace as js
from jointspace.errors import ModelError
from tests.test_constraint import STACK

TRAJ_TOL = 1e-4  # max |qpos - qpos_mujoco| over contact trajectories (test_contact_physics)
FIELD_TOL = 1e-9  # forward fields relative to max(1, |field|) (test_forward's tolerance)

# mocap body welded to a free box (teleoperation), a second mocap body, a hinge chain with an
# actuator and a joint equality, user data, and two keyframes (one partial)
MOCAP = """<mujoco model="mocap">
<size nuserdata="3"/>
<option timestep="0.002"/>
<worldbody>
  <geom type="plane" size="3 3 .1"/>
  <body name="hand" mocap="true" pos="0.2 0 1" quat="0.9 0.1 0.2 0.3">
    <geom type="box" size=".05 .05 .05" contype="0" conaffinity="0"/>
  </body>
  <body name="target" mocap="true" pos="-1 0 0.5"/>
  <body name="box" pos="0.2 0 0.8"><freejoint/><geom type="box" size=".1 .1 .1"/></body>
  <body name="arm" pos="1 0 1">
    <joint name="a1" type="hinge" axis="0 1 0"/>
    <geom type="capsule" fromto="0 0 0 .3 0 0" size=".03"/>
    <body pos=".3 0 0"><joint name="a2" type="hinge" axis="0 1 0" ref="10"/>
      <geom type="capsule" fromto="0 0 0 .3 0 0" size=".03"/></body>
  </body>
</worldbody>
<equality>
  <weld name="grip" body1="hand" body2="box"/>
  <joint name="couple" joint1="a1" joint2="a2" polycoef="0 0.5 0 0 0"/>
</equality>
<actuator><motor joint="a1" ctrlrange="-1 1"/><position joint="a2" kp="5"/></actuator>
<keyframe>
  <key name="home" time="1.5" qpos="0 0.1 0.9 0 0 0 2 0.3 -0.2" qvel="0 0 0 0 0 0.5 1 -1"
       ctrl="0.4 -0.3" mpos="0.3 0.1 1.1 -1 0 0.6" mquat="0 0 0 3 1 0 0 0"/>
  <key qpos="0.5 0.5" mpos="1 2 3"/>
</keyframe>
</mujoco>"""

KEY_FIELDS = ("key_time", "key_qpos", "key_qvel", "key_act", "key_ctrl", "key_mpos",
              "key_mquat")
RESET_FIELDS = ("qpos", "qvel", "act", "ctrl", "mocap_pos", "mocap_quat", "qfrc_applied",
                "xfrc_applied", "qacc_warmstart", "userdata")
COMPONENTS = ("time", "qpos", "qvel", "act", "history", "warmstart", "ctrl", "qfrc_applied",
              "xfrc_applied", "eq_active", "mocap_pos", "mocap_quat", "userdata", "plugin",
              "plastic")
GROUPS = ("physics", "fullphysics", "user", "integration")


def _load(xml):
    m = js.load_string(xml)
    mm = mujoco.MjModel.from_xml_string(xml)
    return m, js.make_data(m), mm, mujoco.MjData(mm)


def _mj_spec(name):
    return int(getattr(mujoco.mjtState, "mjSTATE_" + name.upper()))


def _mj_state(mm, md, name):
    out = np.empty(mujoco.mj_stateSize(mm, _mj_spec(name)))
    mujoco.mj_getState(mm, md, out, _mj_spec(name))
    return out


def test_keyframes_compile_as_in_mujoco():
    m, _, mm, _ = _load(MOCAP)
    assert (m.nkey, m.nmocap, m.nuserdata, m.na) == (mm.nkey, mm.nmocap, mm.nuserdata, mm.na)
    assert m.names["key"] == ["home", ""]
    for f in KEY_FIELDS:
        np.testing.assert_array_equal(getattr(m, f), getattr(mm, f), err_msg=f)


def test_size_nkey_adds_default_keyframes():
    xml = MOCAP.replace('<size nuserdata="3"/>', '<size nuserdata="3" nkey="4" njmax="50"/>')
    m, _, mm, _ = _load(xml)
    assert m.nkey == mm.nkey == 4
    for f in KEY_FIELDS:
        np.testing.assert_array_equal(getattr(m, f), getattr(mm, f), err_msg=f)


def test_make_data_and_reset_match_mujoco():
    m, d, mm, md = _load(MOCAP)
    for f in RESET_FIELDS + ("eq_active",):
        np.testing.assert_array_equal(getattr(d, f), getattr(md, f), err_msg=f"make_data {f}")
    rng = np.random.default_rng(0)
    for key in (None, "home", 1):
        x = rng.normal(size=js.state_size(m, "integration"))
        eq = js.state_size(m, list(COMPONENTS[:COMPONENTS.index("eq_active")]))
        x[eq:eq + m.neq] = 0.0  # both equalities off
        js.set_state(m, d, x, "integration")
        mujoco.mj_setState(mm, md, x, _mj_spec("integration"))
        js.step(m, d, 3)
        mujoco.mj_step(mm, md, 3)
        if key is None:
            js.reset(m, d)
            mujoco.mj_resetData(mm, md)
        else:
            js.reset(m, d, key)
            mujoco.mj_resetDataKeyframe(mm, md, m.id("key", key))
        assert d.time == md.time
        for f in RESET_FIELDS + ("eq_active", "qacc"):
            np.testing.assert_array_equal(getattr(d, f), getattr(md, f), err_msg=f"{key} {f}")
        # every intermediate is cleared, as mj_resetData clears the arena
        assert d.ncon[0] == 0 and d.nefc[0] == 0 and not d.efc_force.any()
        assert not d.xpos.any() and not d.qfrc_bias.any() and not d.warning.any()


@pytest.mark.parametrize("spec", COMPONENTS + GROUPS)
def test_get_state_packs_like_mujoco(spec):
    m, d, mm, md = _load(MOCAP)
    rng = np.random.default_rng(1)
    x = rng.normal(size=mujoco.mj_stateSize(mm, _mj_spec("integration")))
    mujoco.mj_setState(mm, md, x, _mj_spec("integration"))
    md.eq_active[:] = [1, 0]
    js.set_state(m, d, _mj_state(mm, md, "integration"), "integration")
    assert js.state_size(m, spec) == mujoco.mj_stateSize(mm, _mj_spec(spec))
    np.testing.assert_array_equal(js.get_state(m, d, spec), _mj_state(mm, md, spec))
    # the same through the integer mask, MuJoCo's enum value and a caller's buffer
    out = np.empty(js.state_size(m, spec))
    js.get_state(m, d, getattr(mujoco.mjtState, "mjSTATE_" + spec.upper()), out=out)
    np.testing.assert_array_equal(out, _mj_state(mm, md, spec))


def test_set_state_round_trips_and_leaves_the_rest():
    m, d, mm, md = _load(MOCAP)
    rng = np.random.default_rng(2)
    before = js.get_state(m, d, "integration")
    q = rng.normal(size=js.state_size(m, ["qpos", "ctrl"]))
    js.set_state(m, d, q, ["qpos", "ctrl"])
    np.testing.assert_array_equal(js.get_state(m, d, ["ctrl", "qpos"]), q)
    after = js.get_state(m, d, "integration")
    changed = np.flatnonzero(after != before)
    n_time = 1
    assert changed.min() >= n_time  # time untouched
    np.testing.assert_array_equal(js.get_state(m, d, "qvel"), np.zeros(m.nv))


def test_state_from_mujoco_reproduces_its_next_steps():
    """A mid-flight box stack with contacts: MuJoCo's state set here, 100 steps each."""
    m, d, mm, md = _load(STACK)
    rng = np.random.default_rng(3)
    md.qvel[:] = 0.2 * rng.normal(size=mm.nv)
    mujoco.mj_step(mm, md, 150)
    js.set_state(m, d, _mj_state(mm, md, "integration"), "integration")
    for _ in range(100):
        js.step(m, d)
        mujoco.mj_step(mm, md)
        assert np.max(np.abs(d.qpos - md.qpos)) <= TRAJ_TOL
    assert d.ncon[0] == md.ncon > 0
    assert d.time == md.time
    # and back: jointspace's state sets MuJoCo, whose next step matches ours
    js.step(m, d, 20)
    mujoco.mj_setState(mm, md, js.get_state(m, d, "integration"), _mj_spec("integration"))
    js.step(m, d)
    mujoco.mj_step(mm, md)
    assert np.max(np.abs(d.qpos - md.qpos)) <= TRAJ_TOL


def test_mocap_bodies_move_and_drag_welded_bodies():
    """Teleoperation: the hand (mocap) moves on a circle, the box welded to it follows."""
    m, d, mm, md = _load(MOCAP)
    hand, box = m.body("hand"), m.body("box")
    for k in range(300):
        t = 0.002 * k
        pos = [0.2 + 0.3 * np.sin(2 * t), 0.3 * (1 - np.cos(2 * t)), 1.0 + 0.1 * t]
        quat = [np.cos(t), 0, np.sin(t), 0]
        for dd in (d, md):
            dd.mocap_pos[0] = pos
            dd.mocap_quat[0] = quat
        js.step(m, d)
        mujoco.mj_step(mm, md)
    np.testing.assert_allclose(d.xpos[hand], pos, rtol=0, atol=1e-15)
    assert np.max(np.abs(d.qpos - md.qpos)) <= TRAJ_TOL
    # held by the weld at the distance of the model's pose (0.2 m), up to its softness
    assert abs(np.linalg.norm(d.xpos[box] - d.xpos[hand]) - 0.2) < 0.02
    js.kinematics(m, d)
    mujoco.mj_kinematics(mm, md)
    np.testing.assert_allclose(d.xquat[hand], md.xquat[hand], rtol=0, atol=1e-15)


def test_mocap_quat_is_normalized_in_kinematics():
    m, d, mm, md = _load(MOCAP)
    for dd in (d, md):
        dd.mocap_quat[1] = [2.0, 0.0, 0.0, 2.0]
    js.kinematics(m, d)
    mujoco.mj_kinematics(mm, md)
    np.testing.assert_allclose(d.xquat, md.xquat, rtol=0, atol=1e-15)


def test_eq_active_switches_a_constraint_at_run_time():
    m, d, mm, md = _load(MOCAP)
    for active in ([1, 1], [0, 1], [1, 0], [0, 0]):
        for dd in (d, md):
            dd.eq_active[:] = active
            dd.qvel[:] = 0.1
        js.forward(m, d)
        mujoco.mj_forward(mm, md)
        assert d.nefc[0] == md.nefc, active
        scale = max(1.0, float(np.max(np.abs(md.qacc))))
        assert np.max(np.abs(d.qacc - md.qacc)) <= 1e-6 * scale, active


def test_bad_keyframes_and_states_are_named():
    with pytest.raises(ModelError, match=r"keyframe 'home': qpos has 10 values, the model has 9"):
        js.load_string(MOCAP.replace('qpos="0 0.1 0.9 0 0 0 2 0.3 -0.2"',
                                     'qpos="0 0.1 0.9 0 0 0 2 0.3 -0.2 7"'))
    with pytest.raises(ModelError, match=r"keyframe 'home': ctrl has 3 values.*one per actuator"):
        js.load_string(MOCAP.replace('ctrl="0.4 -0.3"', 'ctrl="0.4 -0.3 1"'))
    with pytest.raises(ModelError, match=r"keyframe 'home': act has 1 values, the model has 0"):
        js.load_string(MOCAP.replace('ctrl="0.4 -0.3"', 'act="1"'))
    with pytest.raises(ModelError, match=r"<key name='home'.*is not a finite number"):
        js.load_string(MOCAP.replace('time="1.5"', 'time="nan"'))
    with pytest.raises(ModelError, match=r"duplicate key name 'home'"):
        js.load_string(MOCAP.replace('<key qpos', '<key name="home" qpos'))
    with pytest.raises(ModelError, match=r"unknown element <frame> in <keyframe>"):
        js.load_string(MOCAP.replace("</keyframe>", "<frame/></keyframe>"))
    m = js.load_string(MOCAP)
    d = js.make_data(m)
    with pytest.raises(KeyError, match=r"no key named 'hom'.*did you mean 'home'"):
        js.reset(m, d, "hom")
    with pytest.raises(IndexError, match=r"key id 2 out of range"):
        js.reset(m, d, 2)
    n = js.state_size(m)
    with pytest.raises(ValueError, match=rf"state: expected shape \({n},\)"):
        js.set_state(m, d, np.zeros(n + 1))
    with pytest.raises(ValueError, match="unknown state component 'qpso'"):
        js.get_state(m, d, "qpso")
    with pytest.raises(ValueError, match="invalid state mask 32768"):
        js.state_size(m, 1 << 15)
    with pytest.raises(TypeError, match="not a bool"):
        js.get_state(m, d, True)
    with pytest.raises(ValueError, match="eq_active entries .* must be 0 or 1"):
        js.set_state(m, d, [0.5, 1.0], "eq_active")
    with pytest.raises(ValueError, match=r"out: expected a writeable float64 array of shape"):
        js.get_state(m, d, "qpos", out=np.empty(3))
    with pytest.raises(ValueError, match="made for a different model"):
        js.get_state(js.models.humanoid(), d)


def test_cli_starts_from_a_keyframe(tmp_path):
    from tests.test_cli import _ok, _run

    xml, out = tmp_path / "mocap.xml", tmp_path / "t.npz"
    xml.write_text(MOCAP)
    _ok(_run("simulate", xml, "--key", "home", "--seconds", 0.01, "--out", out))
    traj = js.Trajectory.load(out)
    m = js.load_string(MOCAP)
    np.testing.assert_array_equal(traj.qpos[0], m.key_qpos[0])
    np.testing.assert_array_equal(traj.qvel[0], m.key_qvel[0])
    assert traj.time[0] == m.key_time[0]
    for key, message in (("hom", "no key named 'hom'.*home, 1 \\(unnamed\\)"),
                         ("7", "key id 7 out of range")):
        r = _run("simulate", xml, "--key", key, "--seconds", 0.01, timeout=120)
        assert r.returncode == 2 and "Traceback" not in r.stderr
        lines = r.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("jointspace: error: --key")
        assert re.search(message, lines[0]), lines[0]
