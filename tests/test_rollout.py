"""Batched, threaded rollouts (issue 20) against a Python loop of `js.step` and MuJoCo.

The oracle for the threaded rollouts is a Python loop of `js.step` on a fresh Data per
rollout: rollout must equal it bitwise for every thread count and chunk size, with models
with contacts, and from Data that other work left dirty (each rollout resets what it
uses). Against `mujoco.rollout.rollout` the smooth humanoid (contacts and constraints
disabled, as in test_forward.py) is compared within test_forward.py's trajectory tolerance.
"""

import copy
import threading
import warnings

import mujoco
import mujoco.rollout
import numpy as np
import pytest

import jointspace as js
from jointspace.errors import JointspaceWarning
from tests._real_models import real_model

TRAJ_TOL = 1e-8  # test_forward.py's: round-off grows through the dynamics, 1e-14 per step
CHEETAH = ("dm-control", "dm_control/suite/cheetah.xml")  # tendon-free, contacts, 9 dofs

SMOOTH_FLAG = '<flag contact="disable" constraint="disable"/>'

# A slider on a stiff spring with a time step past the stability limit of the explicit
# step (h √(k/m) = 3 > 2): any start off the rest position grows until the step's checks
# find |qvel| > 1e10 and reset the state; the rest position stays at rest.
UNSTABLE = """<mujoco><option timestep="0.1" gravity="0 0 0"/><worldbody>
<body><joint name="x" type="slide" axis="1 0 0" stiffness="900"/>
<geom type="sphere" size="0.1" mass="1"/></body></worldbody>
<actuator><motor joint="x"/></actuator></mujoco>"""


def _model(name):
    if name == "cheetah":
        with warnings.catch_warnings():  # its textures, lights and cameras are skipped
            warnings.simplefilter("ignore", JointspaceWarning)
            return js.load(real_model(*CHEETAH))
    return getattr(js.models, name)()


def _initial_states(m, rng, nbatch):
    """States near qpos0: hinges and slides moved by up to 0.1, velocities ~ 0.3."""
    x = np.zeros((nbatch, 1 + m.nq + m.nv))
    for r in range(nbatch):
        q = m.qpos0.copy()
        for j in range(m.njnt):
            if m.jnt_type[j] in (js.types.JNT_HINGE, js.types.JNT_SLIDE):
                q[m.jnt_qposadr[j]] += rng.uniform(-0.1, 0.1)
        x[r] = np.concatenate([[0.01 * r], q, 0.3 * rng.normal(size=m.nv)])
    return x


def _loop(models, x0, control, nstep, warmstart=None, sensors=None):
    """The reference: per rollout a fresh Data, then js.step one step at a time.

    With sensors (an (nbatch, nstep, nsensordata) array), d.sensordata after each step.
    """
    nbatch = len(x0)
    models = models if isinstance(models, list) else [models] * nbatch
    m0 = models[0]
    state = np.empty((nbatch, nstep, 1 + m0.nq + m0.nv))
    diverged = np.full(nbatch, -1)
    for r in range(nbatch):
        m = models[r]
        d = js.make_data(m)
        d.time = x0[r, 0]
        d.qpos[:] = x0[r, 1:1 + m.nq]
        d.qvel[:] = x0[r, 1 + m.nq:]
        if warmstart is not None:
            d.qacc_warmstart[:] = warmstart[r]
        for t in range(nstep):
            if control is not None:
                d.ctrl[:] = control[r, t]
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", JointspaceWarning)
                js.step(m, d)
            state[r, t] = np.concatenate([[d.time], d.qpos, d.qvel])
            if sensors is not None:
                sensors[r, t] = d.sensordata
            if d.warning[:, 0].any():
                diverged[r] = t
                state[r, t + 1:] = state[r, t]
                break
    return state, diverged


def _dirty_data(m, n):
    """n Data for m that earlier work left with forces, controls, warm starts and rows."""
    out = []
    for k in range(n):
        d = js.make_data(m)
        d.qfrc_applied[:] = 1.0 + k
        d.xfrc_applied[:, 2] = -3.0
        d.ctrl[:] = 0.5
        js.step(m, d, 5)
        out.append(d)
    return out


@pytest.mark.parametrize("name", ["humanoid", "quadruped", "cheetah"])
def test_rollout_equals_a_step_loop_bitwise_for_every_thread_count_and_chunk(name):
    m = _model(name)
    rng = np.random.default_rng(1)
    nbatch, nstep = 5, 30
    x0 = _initial_states(m, rng, nbatch)
    control = rng.uniform(-1, 1, (nbatch, nstep, m.nu))
    want_sensors = np.empty((nbatch, nstep, m.nsensordata))
    want, want_div = _loop(m, x0, control, nstep, sensors=want_sensors)
    assert (want_div == -1).all()
    assert name != "cheetah" or m.nsensordata == 3  # its subtreelinvel sensor
    for nthread in (1, 2, 3):
        data = _dirty_data(m, nthread)
        for chunk_size in (None, 1, 2, 3, nbatch, 2 * nbatch):
            diverged = np.zeros(nbatch, dtype=np.int64)
            state, sensordata = js.rollout(m, data, x0, control, nthread=nthread,
                                           chunk_size=chunk_size, diverged=diverged)
            assert np.array_equal(state, want), (nthread, chunk_size)
            assert np.array_equal(sensordata, want_sensors), (nthread, chunk_size)
            assert (diverged == -1).all()


def test_singleton_dimensions_tile():
    m = js.models.quadruped()
    rng = np.random.default_rng(2)
    nbatch, nstep = 3, 12
    x0 = _initial_states(m, rng, 1)
    u_step = rng.uniform(-1, 1, (1, nstep, m.nu))
    u_roll = rng.uniform(-1, 1, (nbatch, 1, m.nu))
    got, _ = js.rollout(m, None, x0[0], u_step, nthread=2, chunk_size=1)
    want, _ = _loop(m, np.repeat(x0, 1, 0), u_step, nstep)
    assert got.shape == (1, nstep, 1 + m.nq + m.nv) and np.array_equal(got, want)
    got, _ = js.rollout(m, None, x0, u_roll, nstep=nstep)
    want, _ = _loop(m, np.repeat(x0, nbatch, 0), np.repeat(u_roll, nstep, 1), nstep)
    assert np.array_equal(got, want)
    got, _ = js.rollout(m, None, np.repeat(x0, nbatch, 0), nstep=nstep)  # ctrl = 0
    want, _ = _loop(m, np.repeat(x0, nbatch, 0), None, nstep)
    assert np.array_equal(got, want)



def test_the_common_calls_shortcut_agrees_with_the_general_checks():
    # A call with only model, initial_state and control skips check_args (_quick_args);
    # giving an output array sends the same call through check_args. Both must infer the
    # same nbatch and nstep from the tiled shapes and give bitwise the same trajectories.
    m = js.models.quadruped()
    rng = np.random.default_rng(5)
    nbatch, nstep = 3, 7
    x0 = _initial_states(m, rng, nbatch)
    u = rng.uniform(-1, 1, (nbatch, nstep, m.nu))
    nstate = 1 + m.nq + m.nv
    for x, c in ((x0, u), (x0[:1], u), (x0, u[:1]), (x0, u[:, :1]), (x0, None)):
        quick, quick_sensors = js.rollout(m, None, x, c)
        shape = (max(len(x), 1 if c is None else len(c)), 1 if c is None else c.shape[1])
        state = np.empty(shape + (nstate,))
        general, general_sensors = js.rollout(m, None, x, c, state=state)
        assert quick.shape == shape + (nstate,)
        assert np.array_equal(quick, general) and np.array_equal(quick_sensors, general_sensors)

def test_a_list_of_models_runs_each_its_own_and_leaves_data_bound():
    base = js.models.humanoid()
    models = []
    for k in range(4):
        mk = copy.deepcopy(base)
        mk.body_mass[1:] *= 1.0 + 0.2 * k
        mk.opt.timestep = 0.002 + 0.001 * k
        models.append(mk)
    models.insert(2, models[1])  # a run of one model inside the list
    rng = np.random.default_rng(3)
    x0 = _initial_states(base, rng, 1)
    control = rng.uniform(-1, 1, (1, 20, base.nu))
    want, _ = _loop(models, np.repeat(x0, 5, 0), np.repeat(control, 5, 0), 20)
    assert not np.array_equal(want[0], want[1])
    data = _dirty_data(base, 2)
    for nthread, chunk_size in ((1, None), (2, 2), (2, 1)):
        got, _ = js.rollout(models, data, x0, control, nthread=nthread, chunk_size=chunk_size)
        assert np.array_equal(got, want)
    # the Data's struct points at its own model again: a step matches a fresh Data's
    d_fresh = js.make_data(models[0])
    for d in data:
        for name in ("qpos", "qvel", "ctrl", "qfrc_applied", "xfrc_applied", "qacc_warmstart"):
            getattr(d, name)[...] = getattr(d_fresh, name)
        d.time = 0.0
        js.step(models[0], d, 3)
    js.step(models[0], d_fresh, 3)
    assert all(np.array_equal(d.qpos, d_fresh.qpos) for d in data)


def test_initial_warmstart_is_the_first_steps_warm_start():
    m = js.models.humanoid()
    rng = np.random.default_rng(4)
    x0 = _initial_states(m, rng, 3)
    warm = rng.normal(size=(3, m.nv))
    control = rng.uniform(-1, 1, (3, 10, m.nu))
    want, _ = _loop(m, x0, control, 10, warmstart=warm)
    got, _ = js.rollout(m, None, x0, control, initial_warmstart=warm, nthread=2, chunk_size=1)
    assert np.array_equal(got, want)
    cold, _ = js.rollout(m, None, x0, control)
    assert not np.array_equal(cold, got)  # it reached the solver


def test_a_diverging_rollout_is_flagged_and_repeats_its_last_state():
    m = js.load_string(UNSTABLE)
    x0 = np.array([[0.0, 0.0, 0.0], [0.0, 0.01, 0.0], [0.0, 0.0, 0.0], [0.0, -1.0, 0.0]])
    nstep = 60
    want, want_div = _loop(m, x0, None, nstep)
    assert want_div.tolist()[0] == -1 and want_div[1] > 0 and want_div[3] > 0
    for nthread in (1, 2):
        diverged = np.zeros(4, dtype=np.int64)
        with pytest.warns(JointspaceWarning, match="2 of 4 rollouts diverged"):
            got, _ = js.rollout(m, None, x0, nstep=nstep, nthread=nthread, chunk_size=1,
                                diverged=diverged)
        assert np.array_equal(got, want)
        assert diverged.tolist() == want_div.tolist()
    t = int(want_div[1])
    assert (got[1, t:] == got[1, t]).all() and np.array_equal(got[1, t, 1:], m.qpos0.tolist()
                                                              + [0.0])
    with js.Rollout(nthread=2) as r:
        with pytest.warns(JointspaceWarning):
            r.rollout(m, None, x0, nstep=nstep)
        assert r.diverged.tolist() == want_div.tolist()


def test_matches_mujoco_rollout_on_the_smooth_humanoid():
    xml = js.models.xml("humanoid").replace('<option timestep="0.005"/>',
                                            f'<option timestep="0.005">{SMOOTH_FLAG}</option>')
    assert SMOOTH_FLAG in xml
    m = js.load_string(xml)
    mm = mujoco.MjModel.from_xml_string(xml)
    nstate = mujoco.mj_stateSize(mm, mujoco.mjtState.mjSTATE_FULLPHYSICS)
    assert nstate == 1 + m.nq + m.nv
    rng = np.random.default_rng(5)
    x0 = _initial_states(m, rng, 4)
    control = rng.uniform(-1, 1, (4, 200, m.nu))
    got, _ = js.rollout(m, None, x0, control, nthread=2)
    want, _ = mujoco.rollout.rollout(mm, mujoco.MjData(mm), x0, control)
    scale = max(1.0, float(np.abs(want).max()))
    err = float(np.abs(got - want).max())
    assert err <= TRAJ_TOL * scale, f"max error {err:.3g} > {TRAJ_TOL:.1g} × {scale:.3g}"


def test_control_spec_sets_forces_as_mujoco_rollout_does():
    xml = js.models.xml("humanoid").replace('<option timestep="0.005"/>',
                                            f'<option timestep="0.005">{SMOOTH_FLAG}</option>')
    m = js.load_string(xml)
    mm = mujoco.MjModel.from_xml_string(xml)
    S = mujoco.mjtState
    spec = int(S.mjSTATE_CTRL | S.mjSTATE_QFRC_APPLIED | S.mjSTATE_XFRC_APPLIED)
    ncontrol = mujoco.mj_stateSize(mm, spec)
    assert js.state_size(m, spec) == ncontrol == m.nu + m.nv + 6 * m.nbody
    rng = np.random.default_rng(8)
    x0 = _initial_states(m, rng, 3)
    control = rng.uniform(-1, 1, (3, 100, ncontrol))
    got, _ = js.rollout(m, None, x0, control, nthread=2, control_spec=spec)
    want, _ = mujoco.rollout.rollout(mm, mujoco.MjData(mm), x0, control, control_spec=spec)
    scale = max(1.0, float(np.abs(want).max()))
    err = float(np.abs(got - want).max())
    assert err <= TRAJ_TOL * scale, f"max error {err:.3g} > {TRAJ_TOL:.1g} × {scale:.3g}"
    ctrl_only, _ = js.rollout(m, None, x0, control[:, :, :m.nu])
    assert np.abs(got - ctrl_only).max() > 1e-3  # the forces moved it


def test_control_spec_with_contacts_equals_a_step_loop_bitwise():
    m = js.models.quadruped()
    spec = ["qfrc_applied", "ctrl"]  # packed in MuJoCo's order whatever the list's
    rng = np.random.default_rng(9)
    x0 = _initial_states(m, rng, 4)
    control = rng.uniform(-2, 2, (4, 30, m.nu + m.nv))
    got, _ = js.rollout(m, None, x0, control, nthread=2, chunk_size=1, control_spec=spec)
    want = np.empty_like(got)
    for r in range(4):
        d = js.make_data(m)
        js.set_state(m, d, x0[r], "fullphysics")
        for t in range(30):
            js.set_state(m, d, control[r, t], spec)
            js.step(m, d)
            want[r, t] = js.get_state(m, d, "fullphysics")
    assert np.array_equal(got, want)


def test_rollout_object_is_a_persistent_pool_and_closes():
    m = js.models.quadruped()
    rng = np.random.default_rng(6)
    x0 = _initial_states(m, rng, 4)
    want, _ = js.rollout(m, None, x0, nstep=5)
    with js.Rollout(nthread=3) as r:
        for _ in range(3):
            got, _ = r.rollout(m, None, x0, nstep=5)
            assert np.array_equal(got, want)
        state = np.empty((4, 5, 1 + m.nq + m.nv))
        out, _ = r.rollout(m, None, x0, nstep=5, state=state)
        assert out is state and np.array_equal(state, want)
    with pytest.raises(RuntimeError, match="closed"):
        r.rollout(m, None, x0, nstep=5)
    empty, sensordata = js.rollout(m, None, x0, nstep=0)
    assert empty.shape == (4, 0, 1 + m.nq + m.nv) and sensordata.shape == (4, 0, 0)


def test_concurrent_calls_share_no_data():
    m = js.models.quadruped()
    rng = np.random.default_rng(7)
    x0 = [_initial_states(m, rng, 6) for _ in range(3)]
    want = [js.rollout(m, None, x, nstep=20)[0] for x in x0]
    got = [None] * 3

    def call(k):
        got[k] = js.rollout(m, None, x0[k], nstep=20, nthread=2, chunk_size=1)[0]

    threads = [threading.Thread(target=call, args=(k,)) for k in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert all(np.array_equal(g, w) for g, w in zip(got, want))


def test_bad_input_gets_a_clear_error():
    m = js.models.quadruped()
    other = js.models.humanoid()
    x0 = np.zeros((2, 1 + m.nq + m.nv))
    x0[:, 1:1 + m.nq] = m.qpos0
    cases = [
        (dict(model=[m, other]), ValueError, r"model\[1\] has other sizes"),
        (dict(model="m"), TypeError, "jointspace Model"),
        (dict(model=[m, 3]), TypeError, r"model\[1\]"),
        (dict(model=[m, m, m]), ValueError, "3 models for a batch of 2"),
        (dict(initial_state=x0[:, :-1]), ValueError, "initial_state must be nstate"),
        (dict(initial_state=np.zeros((2, 1, 1))), ValueError, "at most 2 dimensions"),
        (dict(initial_state=x0 + 0j), TypeError, "complex"),
        (dict(initial_state="state"), TypeError, "initial_state"),
        (dict(control=np.zeros((2, 3, m.nu + 1))), ValueError, "control must be nu"),
        (dict(control=np.zeros((3, 3, m.nu))), ValueError, "dimension 0 of control is 3"),
        (dict(control=np.zeros((2, 3, m.nu)), nstep=4), ValueError,
         "dimension 1 of control is 3"),
        (dict(initial_warmstart=np.zeros((2, 1))), ValueError, "initial_warmstart must be nv"),
        (dict(nthread=0), ValueError, "nthread must be a positive integer"),
        (dict(nthread=-2), ValueError, "nthread"),
        (dict(nthread=1.5), ValueError, "nthread"),
        (dict(nthread=True), ValueError, "nthread"),
        (dict(chunk_size=0), ValueError, "chunk_size"),
        (dict(nstep=-1), ValueError, "nstep must be a non-negative integer"),
        (dict(data=js.make_data(other)), ValueError, r"data\[0\] was made for a model"),
        (dict(data=[js.make_data(m), "d"]), TypeError, r"data\[1\]"),
        (dict(data=3), TypeError, "data must be"),
        (dict(state=np.zeros((2, 1, 3))), ValueError, "output state must have shape"),
        (dict(state=np.zeros((2, 1, 1 + m.nq + m.nv), dtype=np.float32)), TypeError,
         "output state"),
        (dict(diverged=np.zeros(2)), TypeError, "output diverged"),
        (dict(control_spec="qpos"), ValueError, "subset of mjSTATE_USER"),
        (dict(control_spec="torque"), ValueError, "control_spec: unknown state component"),
        (dict(control_spec=1.5), TypeError, "control_spec"),
        (dict(control=np.zeros((2, 3, m.nu)), control_spec=["ctrl", "qfrc_applied"]),
         ValueError, r"control must be state_size\(m, 192\)"),
    ]
    for kwargs, exc, match in cases:
        args = dict(model=m, data=None, initial_state=x0)
        args.update(kwargs)
        with pytest.raises(exc, match=match):
            js.rollout(args.pop("model"), args.pop("data"), args.pop("initial_state"), **args)
    d = js.make_data(m)
    with pytest.raises(ValueError, match="appears twice"):
        js.rollout(m, [d, d], x0)
    with pytest.raises(ValueError, match="nthread"):
        js.Rollout(nthread=0)
