"""Controllers of jointspace.idcontrol against their defining formulas and RNEA.

References: the PD/PID law written out, RNEA (an arm in free space, where every predictor
must give the same computed torque), and `rigid.inverse_dynamics` called directly.
"""

import numpy as np
import pytest

import jointspace as js
from jointspace import idcontrol, rigid
from jointspace.errors import JointspaceError

TIGHT = 1e-9  # round-off of one RNEA / one dense solve on 15 dofs


def arm_in_free_space(rng):
    """arm_box with the box far away: no contact on the arm."""
    m = js.models.arm_box()
    d = js.make_data(m)
    d.qpos[:9] += rng.uniform(-0.3, 0.3, 9) * np.r_[np.ones(7), 0.02, 0.02]
    d.qpos[9:12] = [2.0, 2.0, 0.025]
    d.qvel[:9] = rng.normal(size=9)
    return m, d


def test_pd_and_pid_law():
    rng = np.random.default_rng(1)
    m, d = arm_in_free_space(rng)
    kp, kd, ki = rng.uniform(1, 10, 9), rng.uniform(0.1, 1, 9), 3.0
    q_ref, v_ref = rng.normal(size=9), rng.normal(size=9)
    pid = idcontrol.PD(m, kp, kd, ki=ki)
    e = q_ref - d.qpos[:9]
    out = None
    for _ in range(3):
        out = pid(m, d, q_ref, v_ref)
    expect = kp * e + kd * (v_ref - d.qvel[:9]) + ki * 3 * m.opt.timestep * e
    np.testing.assert_allclose(out.tau, expect, atol=TIGHT)
    np.testing.assert_allclose(out.qfrc[:9], expect, atol=TIGHT)
    assert np.all(out.qfrc[9:] == 0.0)


def test_inverse_dynamics_predictors_agree_without_contact():
    """No contact on the arm: no-contact, sensed and every rigid predictor give RNEA."""
    rng = np.random.default_rng(2)
    m, d = arm_in_free_space(rng)
    js.forward(m, d)                   # the "simulator" state: qfrc_constraint of the box
    q_ref, v_ref, a_ref = rng.normal(size=9), rng.normal(size=9), rng.normal(size=9)
    kp, kd = 100.0, 20.0
    a_des = a_ref + kp * (q_ref - d.qpos[:9]) + kd * (v_ref - d.qvel[:9])
    qacc = d.qacc.copy()
    qacc[:9] = a_des
    ref = js.rnea(m, js.make_data(m), d.qpos, d.qvel, qacc)[:9] + m.dof_damping[:9] * d.qvel[:9]
    preds = [idcontrol.NoContacts(), idcontrol.SensedContacts()] + \
        [idcontrol.RigidContacts(f) for f in rigid.FORMULATIONS]
    for p in preds:
        out = idcontrol.InverseDynamics(m, kp, kd, p)(m, d, q_ref, v_ref, a_ref)
        np.testing.assert_allclose(out.qacc_des, a_des, atol=TIGHT)
        np.testing.assert_allclose(out.tau, ref, atol=1e-7)


def test_rigid_predictor_warm_starts():
    """RigidContacts passes its last result back: the second call is warm-started."""
    m = js.models.quadruped()
    d = js.make_data(m)
    pred = idcontrol.RigidContacts("cfree", gap_gain=0.0)
    ctrl = idcontrol.InverseDynamics(m, 0.0, 0.0, pred)
    q_ref = d.qpos[7:].copy()
    d.qpos[2] -= 1e-6
    first = ctrl(m, d, q_ref, np.zeros(12), np.zeros(12))
    second = ctrl(m, d, q_ref, np.zeros(12), np.zeros(12))
    assert first.info["result"].pivots > 0
    assert second.info["result"].pivots == 0
    np.testing.assert_allclose(second.tau, first.tau, atol=1e-6)


def test_bad_input():
    m = js.models.arm_box()
    d = js.make_data(m)
    with pytest.raises(JointspaceError, match="gain kp must be finite"):
        idcontrol.PD(m, -1.0, 1.0)
    with pytest.raises(JointspaceError, match="q_ref and v_ref must have shape"):
        idcontrol.PD(m, 1.0, 1.0)(m, d, np.zeros(3), np.zeros(9))
    with pytest.raises(JointspaceError, match="formulation must be one of"):
        idcontrol.RigidContacts("lcp")
    with pytest.raises(JointspaceError, match="alpha must be in"):
        idcontrol.SensedContacts(alpha=0.0)
    ctrl = idcontrol.InverseDynamics(m, 1.0, 1.0, idcontrol.NoContacts())
    with pytest.raises(JointspaceError, match="a_ref must have shape"):
        ctrl(m, d, np.zeros(9), np.zeros(9), np.zeros(2))
