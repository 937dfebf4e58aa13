"""Rigid-contact inverse dynamics (jointspace.rigid, paper 002) against the simulator's rigid limit.

The predicted torques are applied (as qfrc_applied, actuation off) to jointspace's own
forward dynamics with contacts made rigid: impedance d → 1 and, with direct solref, the
reference acceleration −(1/h)·(J v) − (gain/h²)·φ that is exactly the velocity-level
constraint of §3. Regularization R ∝ (1 − d)/d leaves an O(R) error; three solves at
1 − d = 1e-4, 2e-4, 4e-4 extrapolated to R = 0 (quadratic in R) give the rigid limit to
~1e-6. Realized accelerations and contact forces must match the prediction there. Other
references: RNEA (no contact), MuJoCo's mj_contactForce, scipy SLSQP (the §4.5 QP), closed
forms (the grip force W/(2μ)), and the models' own complementarity conditions.
"""

import mujoco
import numpy as np
import pytest
from scipy.optimize import minimize

import jointspace as js
from jointspace import rigid
from jointspace.errors import JointspaceError
from jointspace.types import DSBL_ACTUATION, DSBL_CONTACT

# rigid-limit extrapolation error (measured ≤ 3e-6 on qacc, ≤ 6e-7 N on forces) plus margin
LIMIT_TOL = 2e-5
# round-off of one control period's dense solves (nv ≤ 18)
TIGHT = 1e-9
# a held body's acceleration, relative to gravity: the anti-chatter second stage keeps the
# unactuated impulse only to its QP's stopping tolerance; measured 1e-9 g on the arm's box
# (1e-15 g with regularization 1e-6 or 1e-8), 0 would be a fall of 1 g
HELD = 1e-8
H = 0.002
G = 9.81


def simulate_rigid(m, d, qpos, qvel, qfrc, gain=0.0, equality=False):
    """qacc and contact forces of `forward` in the rigid limit, with the ID's gap handling.

    With `equality=True` the third value returned is the equality rows' forces instead.
    """
    x, acc, frc = [], [], []
    for eps in (1e-4, 2e-4, 4e-4):
        d0 = 1.0 - eps
        for solimp, solref in ((m.geom_solimp, m.geom_solref), (m.eq_solimp, m.eq_solref)):
            solimp[:, 0] = d0
            solimp[:, 1] = d0
            # direct solref: B = 1/h, K d = gain/h² (constraint.py: B = −ζ/d, K = −τ/d²)
            solref[:, 0] = -gain * d0 / H**2
            solref[:, 1] = -d0 / H
        d.qpos[:] = qpos
        d.qvel[:] = qvel
        d.qfrc_applied[:] = qfrc
        js.forward(m, d)
        x.append(eps / d0)
        acc.append(d.qacc.copy())
        frc.append(d.efc_force[:d.ne[0]].copy() if equality else rigid.contact_forces(m, d))
    d.qfrc_applied[:] = 0.0

    def extrapolate(vals):
        out = 0.0
        for i in range(3):
            w = 1.0
            for j in range(3):
                if j != i:
                    w *= -x[j] / (x[i] - x[j])
            out = out + w * vals[i]
        return out

    return extrapolate(acc), extrapolate(frc)


def rigid_sim_model(name):
    m = js.models.load(name)
    m.opt.timestep = H
    m.opt.tolerance = 1e-15
    m.opt.iterations = 500
    m.opt_disableflags[0] |= DSBL_ACTUATION
    return m


def quadruped_stance(m, th1=0.4, th2=-0.8, sink=1e-10):
    """Bent-knee stance with all four feet touching the floor (sunk by `sink`)."""
    q = m.qpos0.copy()
    for leg in ("fl", "fr", "hl", "hr"):
        q[m.jnt_qposadr[m.joint(leg + "_hip_y")]] = th1
        q[m.jnt_qposadr[m.joint(leg + "_knee")]] = th2
    q[2] = 0.25 * np.cos(th1) + 0.25 * np.cos(th1 + th2) + 0.035 - sink
    return q


def pinned_feet_model(q):
    """The quadruped with its feet pinned to the floor (connect constraints, contacts off).

    The bilateral rigid limit of the no-slip model.
    """
    m = js.models.quadruped()
    d = js.make_data(m)
    d.qpos[:] = q
    js.kinematics(m, d)
    eqs = []
    for leg in ("fl", "fr", "hl", "hr"):
        b = m.body(leg + "_shin")
        p = d.geom_xpos[m.geom(leg + "_toe")] - np.array([0.0, 0.0, 0.035])
        local = d.xmat[b].reshape(3, 3).T @ (p - d.xpos[b])
        eqs.append(f'<connect body1="{leg}_shin" body2="world" '
                   f'anchor="{local[0]:.17g} {local[1]:.17g} {local[2]:.17g}"/>')
    xml = js.models.xml("quadruped").replace(
        "</mujoco>", "<equality>" + "".join(eqs) + "</equality></mujoco>")
    mp = js.load_string(xml)
    mp.opt.timestep = H
    mp.opt.tolerance = 1e-15
    mp.opt.iterations = 500
    mp.opt_disableflags[0] |= DSBL_ACTUATION | DSBL_CONTACT
    return mp


def feet_fixed_accelerations(m, d, q, a_base):
    """Leg accelerations that keep the four feet still while the base accelerates (v = 0)."""
    d.qpos[:] = q
    js.kinematics(m, d)
    a = np.zeros(m.nv)
    a[:6] = a_base
    for leg in ("fl", "fr", "hl", "hr"):
        b = m.body(leg + "_shin")
        p = d.geom_xpos[m.geom(leg + "_toe")] - np.array([0.0, 0.0, 0.035])  # lowest point
        jacp, _ = js.jacobian(m, d, b, p)
        cols = [m.jnt_dofadr[m.joint(leg + s)] for s in ("_hip_x", "_hip_y", "_knee")]
        a[cols] = np.linalg.solve(jacp[:, cols], -jacp[:, :6] @ a_base)
    return a


def test_no_contact_is_rnea():
    """Without contact on the arm, τ is RNEA minus passive forces; qacc = desired there."""
    m = js.models.arm_box()
    d = js.make_data(m)
    rng = np.random.default_rng(3)
    act = rigid.actuated_dofs(m)
    assert list(act) == list(range(9))
    for _ in range(5):
        q = m.qpos0.copy()
        q[:9] += rng.uniform(-0.3, 0.3, 9) * np.r_[np.ones(7), 0.02, 0.02]
        q[9:12] = [2.0, 2.0, 0.025]           # the box alone on the floor, far away
        v = np.r_[rng.normal(size=9), np.zeros(6)]
        a = rng.normal(size=m.nv)
        d.qpos[:] = q
        d.qvel[:] = v
        for f in rigid.FORMULATIONS:
            res = rigid.inverse_dynamics(m, d, a, formulation=f)
            ref = js.rnea(m, js.make_data(m), q, v, a) - d.qfrc_passive
            np.testing.assert_allclose(res.tau, ref[act], atol=TIGHT * 100)
            np.testing.assert_allclose(res.qacc[act], a[act], atol=TIGHT)


@pytest.mark.parametrize("formulation", ["noslip", "coulomb", "coulomb_enum", "cfree"])
def test_quadruped_standing_rigid_limit(formulation):
    """Standing quadruped, base accelerating with the feet still: simulator agrees.

    The desired leg accelerations keep the feet fixed while the base accelerates by a_b, so
    the prediction must return a_b on the base; applying τ to the rigid-limit simulator must
    realize the same accelerations and the same four contact forces (the forward problem is
    determinate: 12 independent contact rows), which lie in the friction cone and satisfy
    complementarity. The no-slip model is "sticky" (tangential force without normal force
    is allowed, and its indeterminate distribution often uses it), so its simulator is the
    bilateral one: feet pinned by connect constraints, whose forces are compared.
    """
    m = rigid_sim_model("quadruped")
    d = js.make_data(m)
    q = quadruped_stance(m)
    if formulation == "noslip":
        mp = pinned_feet_model(q)
        dp = js.make_data(mp)
    rng = np.random.default_rng(7)
    for _ in range(3):
        a_base = rng.normal(size=6) * np.r_[0.3, 0.3, 1.0, 0.5, 0.5, 0.5]
        a = feet_fixed_accelerations(m, d, q, a_base)
        d.qpos[:] = q
        d.qvel[:] = 0.0
        res = rigid.inverse_dynamics(m, d, a, formulation=formulation, gap_gain=0.0)
        assert res.status == "solved"
        assert res.diagnostics["projected"] == 0.0
        np.testing.assert_allclose(res.qacc, a, atol=1e-8)
        assert res.contact_force.shape == (4, 3)
        assert res.contact_force[:, 0].min() >= -TIGHT
        assert res.diagnostics["complementarity"] <= TIGHT
        if formulation != "noslip":
            assert res.diagnostics["cone_violation"] <= 1e-9
        # the equation of motion with the predicted forces, from RNEA
        rows = contact_rows(m, d, res.contact_id)
        wrench = sum(rows[i].T @ res.contact_force[i] for i in range(len(rows)))
        rnea = js.rnea(m, js.make_data(m), q, np.zeros(m.nv), res.qacc)
        np.testing.assert_allclose(rnea, res.qfrc_actuator + wrench, atol=1e-8)
        if formulation == "noslip":
            acc, eqf = simulate_rigid(mp, dp, q, np.zeros(m.nv), res.qfrc_actuator,
                                      equality=True)
            pinned = eqf.reshape(4, 3)                  # connect rows: force on the foot
            frames = np.array([d.contact.frame[c].reshape(3, 3) for c in res.contact_id])
            np.testing.assert_allclose(acc, res.qacc, atol=LIMIT_TOL)
            np.testing.assert_allclose(np.einsum("cij,cj->ci", frames, pinned),
                                       res.contact_force, atol=LIMIT_TOL)
            continue
        acc, frc = simulate_rigid(m, d, q, np.zeros(m.nv), res.qfrc_actuator)
        np.testing.assert_allclose(acc, res.qacc, atol=LIMIT_TOL)
        np.testing.assert_allclose(frc[res.contact_id], res.contact_force, atol=LIMIT_TOL)


def contact_rows(m, d, cids):
    """(3, nv) frame Jacobian of each contact (geom 1 is the floor, fixed)."""
    out = []
    for c in cids:
        b = m.geom_bodyid[d.contact.geom[c, 1]]
        jacp, _ = js.jacobian(m, d, b, d.contact.pos[c])
        out.append(d.contact.frame[c].reshape(3, 3) @ jacp)
    return out


def test_cfree_sliding_matches_simulator():
    """Moving, sliding, penetrating quadruped: cfree predicts the simulator's rigid limit.

    Random joint velocities and a low friction (μ = 0.1) make the feet slide; the gap term
    (gain 1) is on. The complementarity-free model is the simulator's own contact model, so
    agreement is exact in the limit, sliding included.
    """
    m = rigid_sim_model("quadruped")
    m.geom_friction[:, 0] = 0.1
    d = js.make_data(m)
    rng = np.random.default_rng(11)
    for _ in range(3):
        q = quadruped_stance(m, sink=rng.uniform(0.0, 2e-3))
        v = rng.normal(size=m.nv) * 0.3
        a = rng.normal(size=m.nv)
        d.qpos[:] = q
        d.qvel[:] = v
        res = rigid.inverse_dynamics(m, d, a, formulation="cfree", gap_gain=1.0)
        assert res.status == "solved"
        np.testing.assert_allclose(res.qacc[res.dofs], a[res.dofs], atol=1e-8)
        assert res.diagnostics["cone_violation"] <= 1e-9
        acc, frc = simulate_rigid(m, d, q, v, res.qfrc_actuator, gain=1.0)
        scale = max(1.0, np.abs(res.qacc).max())
        np.testing.assert_allclose(acc, res.qacc, atol=LIMIT_TOL * scale)
        np.testing.assert_allclose(frc[res.contact_id], res.contact_force,
                                   atol=LIMIT_TOL * max(1.0, np.abs(res.contact_force).max()))


def arm_grasp(m, pads_vertical=True):
    """The arm holding the box between its finger pads in the air (pads sunk by 1e-9)."""
    q = m.qpos0.copy()
    if not pads_vertical:
        q[m.jnt_qposadr[m.joint("j2")]] = -np.pi / 2   # arm horizontal, away from the table
        q[m.jnt_qposadr[m.joint("j7")]] = np.pi / 2
    s = 0.015 + 1e-9
    q[m.jnt_qposadr[m.joint("finger_left")]] = s
    q[m.jnt_qposadr[m.joint("finger_right")]] = s
    d = js.make_data(m)
    d.qpos[:] = q
    js.kinematics(m, d)
    b7 = m.body("link7")
    a = m.jnt_qposadr[m.joint("box")]
    q[a:a + 3] = d.xpos[b7] + d.xmat[b7].reshape(3, 3) @ np.array([0.0, 0.0, 0.095])
    q[a + 3:a + 7] = d.xquat[b7]
    return q


def test_arm_holds_box_by_friction():
    """Pads vertical: cfree squeezes W/(2μ) per finger and the simulator holds the box."""
    m = rigid_sim_model("arm_box")
    d = js.make_data(m)
    q = arm_grasp(m)
    d.qpos[:] = q
    d.qvel[:] = 0.0
    a = np.zeros(m.nv)
    res = rigid.inverse_dynamics(m, d, a, formulation="cfree", gap_gain=0.0)
    assert res.status == "solved"
    assert res.contact_force.shape[0] == 8
    np.testing.assert_allclose(res.qacc, 0.0, atol=HELD * G)  # the box is held
    weight = 0.2 * G
    mu = 1.5
    # squeeze: the finger slides push with the least normal force that holds the box
    fingers = [m.jnt_dofadr[m.joint(n)] for n in ("finger_left", "finger_right")]
    np.testing.assert_allclose(res.qfrc_actuator[fingers], weight / (2 * mu), rtol=1e-6)
    np.testing.assert_allclose(res.contact_force[:, 0].sum(), weight / mu, rtol=1e-6)
    acc, frc = simulate_rigid(m, d, q, np.zeros(m.nv), res.qfrc_actuator)
    np.testing.assert_allclose(acc, res.qacc, atol=LIMIT_TOL)
    # the forward problem is indeterminate over the 4 points of a pad: compare per pad
    pad_of = d.contact.geom[res.contact_id, 0]
    assert set(pad_of) == {m.geom("finger_left"), m.geom("finger_right")}
    for pad in set(pad_of):
        sel = pad_of == pad
        np.testing.assert_allclose(frc[res.contact_id[sel]].sum(axis=0),
                                   res.contact_force[sel].sum(axis=0), atol=LIMIT_TOL)
    # a requested grip force: the second stage picks the solution with that squeeze, the
    # motion unchanged, and the simulator realizes it with those forces
    target = np.full(res.tau.size, np.nan)
    target[7:9] = 5.0
    grip = rigid.inverse_dynamics(m, d, a, formulation="cfree", gap_gain=0.0, previous=res,
                                  tau_target=target)
    assert grip.status == "solved"
    np.testing.assert_allclose(grip.qacc, res.qacc, atol=HELD * G)
    np.testing.assert_allclose(grip.qfrc_actuator[fingers], 5.0, rtol=1e-5)
    np.testing.assert_allclose(grip.contact_force[:, 0].sum(), 10.0, rtol=1e-5)
    acc, frc = simulate_rigid(m, d, q, np.zeros(m.nv), grip.qfrc_actuator)
    np.testing.assert_allclose(acc, grip.qacc, atol=LIMIT_TOL)
    np.testing.assert_allclose(frc[grip.contact_id, 0].sum(), 10.0, rtol=LIMIT_TOL)


@pytest.mark.parametrize("formulation", ["noslip", "coulomb", "cfree"])
def test_arm_holds_box_on_lower_pad(formulation):
    """Pads horizontal: the lower finger carries the box; every formulation matches."""
    m = rigid_sim_model("arm_box")
    d = js.make_data(m)
    q = arm_grasp(m, pads_vertical=False)
    d.qpos[:] = q
    d.qvel[:] = 0.0
    rng = np.random.default_rng(5)
    a = np.zeros(m.nv)
    a[:7] = rng.normal(size=7) * 0.1
    res = rigid.inverse_dynamics(m, d, a, formulation=formulation, gap_gain=0.0)
    assert res.status == "solved"
    acc, frc = simulate_rigid(m, d, q, np.zeros(m.nv), res.qfrc_actuator)
    np.testing.assert_allclose(acc, res.qacc, atol=LIMIT_TOL)
    np.testing.assert_allclose(acc[:9], a[:9], atol=LIMIT_TOL)
    # net force on the box in world axes (its split over the 8 points is indeterminate)
    frames = np.array([d.contact.frame[c].reshape(3, 3) for c in res.contact_id])
    world = np.einsum("cji,cj->i", frames, res.contact_force)
    np.testing.assert_allclose(np.einsum("cji,cj->i", frames, frc[res.contact_id]), world,
                               atol=LIMIT_TOL)
    np.testing.assert_allclose(world[2], 0.2 * G * np.sign(world[2]), rtol=0.2)


def test_contact_forces_match_mujoco():
    """contact_forces equals MuJoCo's mj_contactForce after the same mj_forward."""
    m = js.models.quadruped()
    mjm = mujoco.MjModel.from_xml_string(js.models.xml("quadruped"))
    mjd = mujoco.MjData(mjm)
    d = js.make_data(m)
    q = quadruped_stance(m, sink=1e-3)
    d.qpos[:] = q
    mjd.qpos[:] = q
    js.forward(m, d)
    mujoco.mj_forward(mjm, mjd)
    ours = rigid.contact_forces(m, d)
    assert ours.shape == (mjd.ncon, 3)
    ref = np.zeros(6)
    for c in range(mjd.ncon):
        mujoco.mj_contactForce(mjm, mjd, c, ref)
        np.testing.assert_allclose(ours[c], ref[:3], atol=1e-6 * max(1.0, abs(ref[0])))


def test_warm_start_few_pivots_and_smooth():
    """A slowly varying standing motion: warm-started no-slip and cfree need ≤ 2 pivots."""
    m = js.models.quadruped()
    d = js.make_data(m)
    q = quadruped_stance(m)
    for formulation in ("noslip", "cfree"):
        prev = None
        pivots, taus = [], []
        for t in np.linspace(0.0, 1.0, 60):
            a_base = np.array([0.2 * np.sin(3 * t), 0.0, 0.5 * t, 0.0, 0.3 * np.cos(2 * t), 0.0])
            a = feet_fixed_accelerations(m, d, q, a_base)
            d.qpos[:] = q
            d.qvel[:] = 0.0
            res = rigid.inverse_dynamics(m, d, a, formulation=formulation, previous=prev,
                                         gap_gain=0.0)
            assert res.status == "solved"
            pivots.append(res.pivots)
            taus.append(res.tau)
            prev = res
        assert np.mean(pivots[1:]) <= 2.0
        # no chatter: the torques change by a small fraction of their size per step
        steps = np.abs(np.diff(taus, axis=0)).max()
        assert steps <= 0.1 * np.abs(taus).max()


def test_coulomb_enum_picks_nearest_solution():
    """Algorithm 3 on two feet (n = 12): a valid solution nearest the previous torques."""
    m = js.models.quadruped()
    d = js.make_data(m)
    q = quadruped_stance(m)
    q[m.jnt_qposadr[m.joint("fr_knee")]] = -1.2   # lift two diagonal feet
    q[m.jnt_qposadr[m.joint("hl_knee")]] = -1.2
    d.qpos[:] = q
    a = np.zeros(m.nv)
    lem = rigid.inverse_dynamics(m, d, a, formulation="coulomb", gap_gain=0.0)
    assert lem.contact_force.shape[0] == 2
    target = lem.tau + np.random.default_rng(1).normal(size=lem.tau.size)
    prev = rigid.RigidIDResult("coulomb_enum", target, lem.dofs, lem.qfrc_actuator, lem.qacc,
                               lem.contact_id, lem.contact_force, lem.active[:0], "solved", 0)
    res = rigid.inverse_dynamics(m, d, a, formulation="coulomb_enum", previous=prev,
                                 gap_gain=0.0)
    assert res.status == "solved"
    assert res.diagnostics["nsolutions"] >= 1
    assert res.diagnostics["complementarity"] <= TIGHT
    assert res.diagnostics["cone_violation"] <= 1e-9
    assert np.linalg.norm(res.tau - target) <= np.linalg.norm(lem.tau - target) + TIGHT


def test_inconsistent_accelerations_projected():
    """§4.5: legs splaying with stuck feet are projected onto the nearest admissible motion.

    The reference is scipy SLSQP on min ½‖a − a_des‖²_M s.t. T(v + h a) = 0, N(v + h a) ≥ 0.
    """
    m = js.models.quadruped()
    d = js.make_data(m)
    q = quadruped_stance(m)
    d.qpos[:] = q
    a = np.zeros(m.nv)
    for leg, sign in (("fl", 1), ("fr", -1), ("hl", 1), ("hr", -1)):
        a[m.jnt_dofadr[m.joint(leg + "_hip_x")]] = 5.0 * sign
    res = rigid.inverse_dynamics(m, d, a, formulation="noslip", gap_gain=0.0)
    assert res.diagnostics["projected"] == 1.0
    assert res.diagnostics["slip"] <= 1e-9
    assert res.diagnostics["penetration"] <= 1e-9
    M = js.crba(m, d, q)
    rows = []
    for c in range(d.ncon[0]):
        b = m.geom_bodyid[d.contact.geom[c, 1]]
        jacp, _ = js.jacobian(m, d, b, d.contact.pos[c])
        rows.append(d.contact.frame[c].reshape(3, 3) @ jacp)
    N = np.array([r[0] for r in rows])
    T = np.vstack([r[1:] for r in rows])
    ref = minimize(lambda x: 0.5 * (x - a) @ M @ (x - a), a, jac=lambda x: M @ (x - a),
                   method="SLSQP", options={"ftol": 1e-15, "maxiter": 500},
                   constraints=[{"type": "eq", "fun": lambda x: T @ x, "jac": lambda x: T},
                                {"type": "ineq", "fun": lambda x: N @ x, "jac": lambda x: N}])
    np.testing.assert_allclose(res.qacc, ref.x, atol=1e-5)


def test_bad_input():
    """Each bad argument gets a JointspaceError that names it."""
    m = js.models.quadruped()
    d = js.make_data(m)
    a = np.zeros(m.nv)
    with pytest.raises(JointspaceError, match="formulation must be one of"):
        rigid.inverse_dynamics(m, d, a, formulation="lcp")
    with pytest.raises(ValueError, match="qacc_desired must have shape"):
        rigid.inverse_dynamics(m, d, np.zeros(3))
    with pytest.raises(JointspaceError, match=r"qacc_desired\[2\] is not finite"):
        rigid.inverse_dynamics(m, d, np.r_[0.0, 0.0, np.nan, np.zeros(m.nv - 3)])
    with pytest.raises(JointspaceError, match="mu must be a finite positive"):
        rigid.inverse_dynamics(m, d, a, mu=np.inf)
    with pytest.raises(JointspaceError, match="edges must be an integer"):
        rigid.inverse_dynamics(m, d, a, edges=2)
    with pytest.raises(JointspaceError, match="h must be a positive"):
        rigid.inverse_dynamics(m, d, a, h=0.0)
    with pytest.raises(JointspaceError, match="previous must be"):
        rigid.inverse_dynamics(m, d, a, previous=np.zeros(12))
    with pytest.raises(JointspaceError, match=r"tau_target must be a \(12,\) array"):
        rigid.inverse_dynamics(m, d, a, tau_target=np.zeros(3))
    d.qvel[3] = np.nan
    with pytest.raises(JointspaceError, match=r"d.qvel\[3\] is not finite"):
        rigid.inverse_dynamics(m, d, a)
    with pytest.raises(TypeError, match="Data"):
        rigid.inverse_dynamics(m, m, a)


def test_stiff_contacts_shrink_the_resting_penetration():
    """rigid.stiff_contacts: a resting box sinks far less than with MuJoCo's default softness."""
    xml = """<mujoco><option timestep="0.002"/><worldbody><geom type="plane" size="5 5 .1"/>
      <body pos="0 0 0.1"><freejoint/><geom type="box" size=".1 .1 .1" mass="1"/></body>
      </worldbody></mujoco>"""
    sinks = []
    for stiff in (False, True):
        m = js.load_string(xml)
        if stiff:
            rigid.stiff_contacts(m)
            assert np.all(m.geom_solref[:, 0] == 2 * H) and np.all(m.geom_solimp[:, :2] == 0.99)
        d = js.make_data(m)
        js.step(m, d, 500)
        assert abs(d.qvel).max() < 1e-6  # at rest
        sinks.append(0.1 - d.qpos[2])
    assert 0.0 < sinks[1] < sinks[0] / 10
    with pytest.raises(JointspaceError, match="h must be a positive time step"):
        rigid.stiff_contacts(js.load_string(xml), h=0.0)
