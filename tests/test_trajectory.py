"""Recorded simulations (`js.simulate`, `js.Trajectory`) against MuJoCo's mj_step."""

import mujoco
import numpy as np
import pytest

import jointspace as js

# trajectories match mj_step to round-off (docs/testing.md: measured ~2e-14 over 1 s); a margin for
# the pendulum's 0.3 s and the contact solver's tolerance
TOL_QPOS = 1e-9
TOL_FORCE = 1e-6  # contact forces: both solvers stop at the same tolerance, not exactly


def _mujoco(name, **kw):
    mjm = mujoco.MjModel.from_xml_string(js.models.xml(name, **kw))
    mjm.opt.enableflags |= mujoco.mjtEnableBit.mjENBL_ENERGY
    return mjm, mujoco.MjData(mjm)


def test_recorded_frames_match_mujoco_steps_and_energies():
    m = js.models.load("pendulum", n=2)
    d = js.make_data(m)
    d.qpos[:] = [0.7, -0.4]
    traj = js.simulate(m, d, 0.3, record_every=7)
    nstep = int(round(0.3 / m.opt.timestep))
    assert traj.steps == nstep and not traj.interrupted
    assert len(traj) == nstep // 7 + 1 + (nstep % 7 != 0)
    mjm, mjd = _mujoco("pendulum", n=2)
    mjd.qpos[:] = [0.7, -0.4]
    for k in range(len(traj)):
        target = min(k * 7, nstep)
        while round(mjd.time / mjm.opt.timestep) < target:
            mujoco.mj_step(mjm, mjd)
        mujoco.mj_forward(mjm, mjd)
        assert traj.time[k] == pytest.approx(mjd.time, abs=1e-12)
        np.testing.assert_allclose(traj.qpos[k], mjd.qpos, atol=TOL_QPOS)
        np.testing.assert_allclose(traj.qvel[k], mjd.qvel, atol=TOL_QPOS)
        np.testing.assert_allclose(traj.energy[k], mjd.energy, atol=TOL_QPOS)


def test_contact_normal_forces_match_mj_contact_force(tmp_path):
    m = js.models.humanoid()
    d = js.make_data(m)
    mjm, mjd = _mujoco("humanoid")
    js.step(m, d, 40)
    mujoco.mj_step(mjm, mjd, 40)
    js.forward(m, d)
    mujoco.mj_forward(mjm, mjd)
    f = js.trajectory.contact_normal_forces(m, d)
    assert d.ncon[0] == mjd.ncon > 0
    ref = np.zeros(6)
    want = np.empty(mjd.ncon)
    for i in range(mjd.ncon):
        mujoco.mj_contactForce(mjm, mjd, i, ref)
        want[i] = ref[0]
    np.testing.assert_allclose(f, want, atol=TOL_FORCE * max(1.0, want.max()))
    # and a trajectory saved to disk reads back the same
    traj = js.simulate(m, d, 0.05, record_every=2, model_name="humanoid")
    traj.save(tmp_path / "t.npz")
    back = js.Trajectory.load(tmp_path / "t.npz")
    for name in ("time", "qpos", "qvel", "ctrl", "energy", "ncon", "contact_force"):
        np.testing.assert_array_equal(getattr(back, name), getattr(traj, name))
    assert back.model == "humanoid" and back.joint_names == m.names["joint"]
    assert back.steps == traj.steps and back.contacts_total == traj.contacts_total
    assert traj.contact_force[0] > 0.5 * m.body_mass.sum() * 9.81  # it stands on its feet


def test_bad_arguments_are_named():
    m = js.models.load("pendulum")
    d = js.make_data(m)
    with pytest.raises(ValueError, match="seconds"):
        js.simulate(m, d, -1.0)
    with pytest.raises(ValueError, match="record_every"):
        js.simulate(m, d, 0.1, record_every=0)
    with pytest.raises(ValueError, match="ctrl"):
        js.simulate(m, d, 0.1, ctrl=np.ones(3))
    with pytest.raises(js.JointspaceError, match="not found"):
        js.Trajectory.load("no_such_trajectory.npz")
