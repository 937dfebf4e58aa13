"""Controllers of jointspace.control.joint against their defining formulas and RNEA.

References: the PD/PID law written out, RNEA (an arm in free space, where every predictor
must give the same computed torque), `rigid.inverse_dynamics` called directly, and for the
soft-contact predictor jointspace's forward dynamics (its exact inverse) and MuJoCo's
mj_inverse on the same state.
"""

import mujoco
import numpy as np
import pytest

import jointspace as js
from jointspace import control, rigid
from jointspace.errors import JointspaceError

TIGHT = 1e-9  # round-off of one RNEA / one dense solve on 15 dofs
# forward at the soft predictor's torques: the solver's convergence (tolerance 1e-15) and
# the Newton residual 1e-10 N mapped through M⁻¹ on 18 dofs
ROUND_TRIP = 1e-8
# jointspace's and MuJoCo's inverse on the same state: forces of hundreds of N, round-off
PARITY = 1e-7


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
    pid = control.PD(m, kp, kd, ki=ki)
    e = q_ref - d.qpos[:9]
    out = None
    for _ in range(3):
        out = pid(m, d, q_ref, v_ref)
    expect = kp * e + kd * (v_ref - d.qvel[:9]) + ki * 3 * m.opt.timestep * e
    np.testing.assert_allclose(out.tau, expect, atol=TIGHT)
    np.testing.assert_allclose(out.qfrc[:9], expect, atol=TIGHT)
    assert np.all(out.qfrc[9:] == 0.0)


def test_inverse_dynamics_predictors_agree_without_contact():
    """No contact on the arm: no-contact, sensed, soft and every rigid predictor give RNEA."""
    rng = np.random.default_rng(2)
    m, d = arm_in_free_space(rng)
    js.forward(m, d)                   # the "simulator" state: qfrc_constraint of the box
    q_ref, v_ref, a_ref = rng.normal(size=9), rng.normal(size=9), rng.normal(size=9)
    kp, kd = 100.0, 20.0
    a_des = a_ref + kp * (q_ref - d.qpos[:9]) + kd * (v_ref - d.qvel[:9])
    qacc = d.qacc.copy()
    qacc[:9] = a_des
    ref = js.rnea(m, js.make_data(m), d.qpos, d.qvel, qacc)[:9] + m.dof_damping[:9] * d.qvel[:9]
    preds = [control.NoContacts(), control.SensedContacts(), control.SoftContacts()] + \
        [control.RigidContacts(f) for f in rigid.FORMULATIONS]
    for p in preds:
        out = control.InverseDynamics(m, kp, kd, p)(m, d, q_ref, v_ref, a_ref)
        np.testing.assert_allclose(out.qacc_des, a_des, atol=TIGHT)
        np.testing.assert_allclose(out.tau, ref, atol=1e-7)


def test_rigid_predictor_warm_starts():
    """RigidContacts passes its last result back: the second call is warm-started."""
    m = js.models.quadruped()
    d = js.make_data(m)
    pred = control.RigidContacts("cfree", gap_gain=0.0)
    ctrl = control.InverseDynamics(m, 0.0, 0.0, pred)
    q_ref = d.qpos[7:].copy()
    d.qpos[2] -= 1e-6
    first = ctrl(m, d, q_ref, np.zeros(12), np.zeros(12))
    second = ctrl(m, d, q_ref, np.zeros(12), np.zeros(12))
    assert first.info["result"].pivots > 0
    assert second.info["result"].pivots == 0
    np.testing.assert_allclose(second.tau, first.tau, atol=1e-6)


def soft_quadruped(rng):
    """The quadruped standing 2 mm into a stiff floor, moving, actuation off."""
    xml = js.models.xml("quadruped")
    m = js.load_string(xml)
    m.opt.tolerance = 1e-15
    m.opt.iterations = 500
    m.opt_disableflags[0] |= js.types.DSBL_ACTUATION
    d = js.make_data(m)
    d.qpos[:] = m.qpos0
    for leg in ("fl", "fr", "hl", "hr"):
        d.qpos[m.jnt_qposadr[m.joint(leg + "_hip_y")]] = 0.4
        d.qpos[m.jnt_qposadr[m.joint(leg + "_knee")]] = -0.8
    d.qpos[2] = 0.25 * np.cos(0.4) + 0.25 * np.cos(-0.4) + 0.035 - 0.002
    d.qvel[:] = 0.05 * rng.normal(size=m.nv)
    mjm = mujoco.MjModel.from_xml_string(xml)
    mjm.opt.disableflags |= mujoco.mjtDisableBit.mjDSBL_ACTUATION
    return m, d, mjm


def test_soft_predictor_is_exact_and_matches_mujoco():
    """Soft inverse as predictor: forward at its τ gives q̈ back; mj_inverse agrees."""
    rng = np.random.default_rng(3)
    m, d, mjm = soft_quadruped(rng)
    mjd = mujoco.MjData(mjm)
    act = rigid.actuated_dofs(m)
    qacc_des = np.zeros(m.nv)
    qacc_des[act] = rng.normal(size=act.size)
    for base in ("consistent", "lstsq"):
        pred = control.SoftContacts(base=base, tol=1e-10)
        qfrc, info = pred.tau(m, js.make_data(m), qacc_des, d)
        assert info["efc_force"].size >= 12            # four feet in contact
        assert np.all(qfrc[:6] == 0.0)
        np.testing.assert_allclose(info["qacc"][act], qacc_des[act], atol=0.0)
        # MuJoCo's inverse at the same (q, v, q̈): the actuated rows are τ
        mjd.qpos[:], mjd.qvel[:], mjd.qacc[:] = d.qpos, d.qvel, info["qacc"]
        mujoco.mj_inverse(mjm, mjd)
        np.testing.assert_allclose(qfrc[act], mjd.qfrc_inverse[act], atol=PARITY)
        np.testing.assert_allclose(info["efc_force"], mjd.efc_force, atol=PARITY)
        if base == "consistent":
            # the base needs no force: forward dynamics at τ realizes exactly q̈
            assert info["residual"] <= 1e-10 and info["iterations"] >= 1
            np.testing.assert_allclose(mjd.qfrc_inverse[:6], 0.0, atol=PARITY)
            d.qfrc_applied[:] = qfrc
            js.forward(m, d)
            np.testing.assert_allclose(d.qacc, info["qacc"], atol=ROUND_TRIP)
            d.qfrc_applied[:] = 0.0
        else:
            # least squares: the base keeps the reference and its force is dropped
            np.testing.assert_allclose(info["qacc"][:6], 0.0, atol=0.0)
            assert info["residual"] == pytest.approx(np.abs(mjd.qfrc_inverse[:6]).max(),
                                                     rel=1e-9)
    ctrl = control.InverseDynamics(m, 0.0, 0.0, control.SoftContacts())
    out = ctrl(m, d, d.qpos[7:], d.qvel[6:], qacc_des[act],
               qacc_unactuated=np.zeros(m.nv))
    np.testing.assert_allclose(out.qacc_des, qacc_des[act], atol=TIGHT)


def test_bad_input():
    m = js.models.arm_box()
    d = js.make_data(m)
    with pytest.raises(JointspaceError, match="gain kp must be finite"):
        control.PD(m, -1.0, 1.0)
    with pytest.raises(JointspaceError, match="q_ref and v_ref must have shape"):
        control.PD(m, 1.0, 1.0)(m, d, np.zeros(3), np.zeros(9))
    with pytest.raises(JointspaceError, match="formulation must be one of"):
        control.RigidContacts("lcp")
    with pytest.raises(JointspaceError, match="alpha must be in"):
        control.SensedContacts(alpha=0.0)
    with pytest.raises(JointspaceError, match="base must be 'consistent' or 'lstsq'"):
        control.SoftContacts(base="pinv")
    with pytest.raises(JointspaceError, match="maxiter must be a non-negative"):
        control.SoftContacts(maxiter=-1)
    ctrl = control.InverseDynamics(m, 1.0, 1.0, control.NoContacts())
    with pytest.raises(JointspaceError, match="a_ref must have shape"):
        ctrl(m, d, np.zeros(9), np.zeros(9), np.zeros(2))
    with pytest.raises(JointspaceError, match=r"qacc_unactuated must be a finite \(15,\)"):
        ctrl(m, d, np.zeros(9), np.zeros(9), np.zeros(9), qacc_unactuated=np.zeros(3))
