"""Controllers from the dynamics (jointspace.control) in closed loop with our simulator.

Oracles: the analytic solution of the commanded linear error dynamics (matrix exponential),
dense linear algebra on M from `crba` (Λ = (J M⁻¹ Jᵀ)⁻¹, null-space projections), MuJoCo's
mj_inverse for the soft-contact inverse, and the forward dynamics itself: with a perfect
model, forward at the commanded torque must return the commanded acceleration.

Continuous-time closed loops are integrated by classic RK4 with the controller evaluated at
every stage (the simulator's `forward` gives q̈), so the only error left is RK4's; the
sampled-data loop (`step` with the torque held over a step) is checked to converge at first
order in the control period.
"""

import warnings

import mujoco
import numpy as np
import pytest
from scipy.linalg import expm

import jointspace as js
from jointspace import control
from jointspace.errors import JointspaceError, JointspaceWarning
from jointspace.types import DSBL_CONSTRAINT

ROUNDOFF = 1e-11  # closed loop vs RK4 of the desired ODE: same stages, round-off per stage
RK4_TOL = 1e-8  # RK4 (h = 1e-3, 1-2 s, |λ| ≤ 8) vs the exact solution: ~1e-10 measured
LAMBDA_TOL = 1e-10  # Λ vs dense inverse, relative: the task asks for 1e-10
NULL_TOL = 1e-12  # J M⁻¹ τ_null relative to J M⁻¹ τ: round-off of a projection
INVERSE_TOL = 1e-8  # soft inverse vs mj_inverse on the humanoid, relative to max |qfrc|
FORWARD_TOL = 1e-7  # forward at the commanded torque vs commanded q̈, relative (Newton tol)


def _rk4_closed_loop(m, d, control_fn, q0, v0, h, n):
    """(n + 1, nq), (n + 1, nv): RK4 of q̈ = forward(q, q̇, τ) with τ = control_fn(d, t)."""

    def f(t, q, v):
        d.qpos[:] = q
        d.qvel[:] = v
        control_fn(d, t)
        js.forward(m, d)
        return v.copy(), d.qacc.copy()

    qs = [np.array(q0, dtype=float)]
    vs = [np.array(v0, dtype=float)]
    for i in range(n):
        t, q, v = i * h, qs[-1], vs[-1]
        k1q, k1v = f(t, q, v)
        k2q, k2v = f(t + h / 2, q + h / 2 * k1q, v + h / 2 * k1v)
        k3q, k3v = f(t + h / 2, q + h / 2 * k2q, v + h / 2 * k2v)
        k4q, k4v = f(t + h, q + h * k3q, v + h * k3v)
        qs.append(q + h / 6 * (k1q + 2 * k2q + 2 * k3q + k4q))
        vs.append(v + h / 6 * (k1v + 2 * k2v + 2 * k3v + k4v))
    return np.array(qs), np.array(vs)


def _rk4_linear(A, x0, h, n):
    xs = [x0]
    for _ in range(n):
        x = xs[-1]
        k1 = A @ x
        k2 = A @ (x + h / 2 * k1)
        k3 = A @ (x + h / 2 * k2)
        k4 = A @ (x + h * k3)
        xs.append(x + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4))
    return np.array(xs)


def _exact(A, x0, times):
    return np.array([expm(A * t) @ x0 for t in times])


def _second_order(K, B):
    n = K.shape[0]
    return np.block([[np.zeros((n, n)), np.eye(n)], [-K, -B]])


K2 = np.array([[30.0, 5.0], [5.0, 20.0]])
B2 = np.array([[8.0, 1.0], [1.0, 6.0]])


# ------------------------------------------------------------------------------------------
# feedback linearization


def test_computed_torque_closed_loop_is_the_slides_linear_system():
    """τ = c − M(Bq̇ + K(q − q_ref)) on the 2-link arm under gravity: q̈ + Bq̇ + K(q − q_ref) = 0.

    Full (non-diagonal) K and B; the closed loop agrees with RK4 of the linear ODE to
    round-off and with its exact solution to RK4's accuracy.
    """
    m = js.models.arm2(link="rod")
    d = js.make_data(m)
    q_ref = np.array([0.4, -0.7])
    fl = control.ComputedTorque(m, kp=K2, kd=B2, q_ref=q_ref)
    q0, v0 = np.array([-0.5, 1.2]), np.array([0.3, -2.0])
    h, n = 1e-3, 1500
    qs, vs = _rk4_closed_loop(m, d, lambda d, t: fl(d), q0, v0, h, n)
    A = _second_order(K2, B2)
    x0 = np.r_[q0 - q_ref, v0]
    got = np.hstack([qs - q_ref, vs])
    assert np.abs(got - _rk4_linear(A, x0, h, n)).max() < ROUNDOFF
    assert np.abs(got - _exact(A, x0, h * np.arange(n + 1))).max() < RK4_TOL


def test_computed_torque_tracks_a_trajectory_with_feedforward():
    """Tracking form on the 7-dof arm: e = q_ref − q obeys ë + B ė + K e = 0.

    The arm has damping, armature and gravity; the reference moves and q̈_ref is fed forward.
    """
    m = js.models.arm7()
    d = js.make_data(m)
    nv = m.nv
    rng = np.random.default_rng(3)
    K = np.diag(rng.uniform(20, 40, nv))
    B = np.diag(rng.uniform(6, 12, nv))
    amp, w = rng.uniform(0.2, 0.5, nv), rng.uniform(1, 3, nv)
    base = np.asarray(js.models.ARM7_READY)

    def ref(t):
        return base + amp * np.sin(w * t), amp * w * np.cos(w * t), -amp * w**2 * np.sin(w * t)

    fl = control.ComputedTorque(m, kp=K, kd=B)

    def law(d, t):
        q_r, v_r, a_r = ref(t)
        fl(d, q_r, v_r, a_r)

    q0 = base + rng.uniform(-0.1, 0.1, nv)
    v0 = rng.uniform(-0.5, 0.5, nv)
    h, n = 1e-3, 1000
    qs, vs = _rk4_closed_loop(m, d, law, q0, v0, h, n)
    refs = [ref(i * h) for i in range(n + 1)]
    e = np.array([r[0] for r in refs]) - qs
    edot = np.array([r[1] for r in refs]) - vs
    A = _second_order(K, B)
    exact = _exact(A, np.r_[e[0], edot[0]], h * np.arange(n + 1))
    assert np.abs(np.hstack([e, edot]) - exact).max() < RK4_TOL


def test_sampled_computed_torque_converges_at_first_order_in_the_period():
    """Torque held over each `step` (zero-order hold): error to the ODE halves with h."""
    errs = []
    q_ref = np.array([0.4, -0.7])
    q0 = np.array([-0.5, 1.2])
    A = _second_order(K2, B2)
    for h in (2e-3, 1e-3):
        m = js.models.arm2(link="rod")
        m.opt.timestep = h
        d = js.make_data(m)
        d.qpos[:] = q0
        fl = control.ComputedTorque(m, kp=K2, kd=B2, q_ref=q_ref)
        n = int(round(1.0 / h))
        for _ in range(n):
            fl(d)
            js.step(m, d)
        exact = expm(A * 1.0) @ np.r_[q0 - q_ref, 0.0, 0.0]
        errs.append(np.abs(np.r_[d.qpos - q_ref, d.qvel] - exact).max())
    assert 1.7 < errs[0] / errs[1] < 2.3
    assert errs[1] < 1e-2


def _no_constraints(m):
    m.opt_disableflags[0] |= DSBL_CONSTRAINT
    return m


def test_partial_feedback_linearization_on_a_floating_base():
    """Humanoid in the air: partial feedback linearization through the motors.

    Without constraints, the actuated dofs get exactly their q̈_des through the motors
    (output='ctrl'), the free joint gets no force, and tracking the base too is reported
    infeasible.
    """
    m = _no_constraints(js.models.humanoid())
    m.actuator_ctrllimited[:] = 0
    d = js.make_data(m)
    rng = np.random.default_rng(5)
    fl = control.ComputedTorque(m, kp=30.0, kd=8.0, track="actuated", output="ctrl")
    for _ in range(3):
        d.qpos[:] = js.integrate_pos(m, m.qpos0, rng.normal(scale=0.3, size=m.nv), 1.0)
        d.qvel[:] = rng.normal(size=m.nv)
        tau = fl(d)
        js.forward(m, d)
        act = fl.actuated
        assert not act[:6].any() and act[6:].all()
        assert np.all(tau[:6] == 0)
        np.testing.assert_allclose(d.qfrc_actuator, tau, atol=1e-9 * np.abs(tau).max())
        np.testing.assert_allclose(d.qacc[act], fl.qacc_des[act], atol=1e-9, rtol=1e-9)
        np.testing.assert_allclose(d.qacc, fl.qacc, atol=1e-9, rtol=1e-9)
    strict = control.ComputedTorque(m, kp=30.0, kd=8.0, on_infeasible="raise")
    with pytest.raises(JointspaceError, match="dof [0-5] is not actuated"):
        strict(d)
    warn = control.ComputedTorque(m, kp=30.0, kd=8.0)
    with pytest.warns(JointspaceWarning, match="infeasible"):
        warn(d)
    assert warn.infeasibility > 1e-3


def test_acrobot_partial_feedback_linearization():
    """arm2 driven at the elbow only: the elbow follows q̈_des, the shoulder is free."""
    m = js.models.arm2(link="rod")
    d = js.make_data(m)
    fl = control.ComputedTorque(m, kp=25.0, kd=10.0, q_ref=[0.0, 1.0], actuated=["elbow"],
                                track="actuated")
    d.qpos[:] = [0.3, -0.2]
    d.qvel[:] = [1.0, 0.5]
    tau = fl(d)
    assert tau[0] == 0.0 and d.qfrc_applied[0] == 0.0
    js.forward(m, d)
    assert abs(d.qacc[1] - fl.qacc_des[1]) < 1e-12 * (1 + abs(fl.qacc_des[1]))
    assert abs(d.qacc[0] - fl.qacc[0]) < 1e-12 * (1 + abs(fl.qacc[0]))


def test_computed_torque_rejects_bad_arguments():
    m = js.models.arm2()
    d = js.make_data(m)
    with pytest.raises(ValueError, match="argument kp"):
        control.ComputedTorque(m, kp=np.ones(3), kd=1.0)
    with pytest.raises(ValueError, match="argument kd must be finite"):
        control.ComputedTorque(m, kp=1.0, kd=np.nan)
    with pytest.raises(ValueError, match="on_infeasible"):
        control.ComputedTorque(m, kp=1.0, kd=1.0, on_infeasible="explode")
    fl = control.ComputedTorque(m, kp=1.0, kd=1.0)
    with pytest.raises(ValueError, match="q_ref must have shape"):
        fl(d, q_ref=[1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match="different model"):
        fl(js.make_data(js.models.arm7()))
    h = js.models.humanoid()
    with pytest.raises(JointspaceError, match="exactly one actuator"):
        control.ComputedTorque(h, kp=1.0, kd=1.0, actuated=list(range(h.nv)), output="ctrl")


# ------------------------------------------------------------------------------------------
# operational space


def _site_jac(m, d, site, rows=slice(None)):
    jp, jr = js.jacobian_site(m, d, site)
    return np.vstack([jp, jr])[rows]


@pytest.mark.parametrize("name, site", [("arm7", "ee"), ("humanoid", "left_foot")])
def test_task_inertia_equals_dense_inverse(name, site):
    """Λ from the sparse LᵀDL and from the analytical M⁻¹ equals inv(J inv(M) Jᵀ)."""
    m = js.models.load(name)
    d = js.make_data(m)
    rng = np.random.default_rng(11)
    for _ in range(3):
        q = js.integrate_pos(m, m.qpos0, rng.normal(scale=0.5, size=m.nv), 1.0)
        js.kinematics(m, d, q)
        J = _site_jac(m, d, site)
        M = js.crba(m, d, q)
        dense = np.linalg.inv(J @ np.linalg.inv(M) @ J.T)
        for method in ("factor", "minv"):
            lam = control.task_inertia(m, d, q, J, method=method, singular_threshold=1e-9)
            assert np.abs(lam - dense).max() < LAMBDA_TOL * np.abs(dense).max()


def test_task_inertia_damps_a_singular_jacobian_as_stated():
    """Outstretched 2-link arm: J M⁻¹ Jᵀ is singular; Λ = (A + δI)⁻¹ with the stated δ."""
    m = js.models.arm2()
    d = js.make_data(m)
    q = np.array([0.3, 0.0])
    js.kinematics(m, d, q)
    J = _site_jac(m, d, "hand", [0, 2])
    eps = 1e-3
    with pytest.warns(JointspaceWarning, match="damped"):
        lam = control.task_inertia(m, d, q, J, singular_threshold=eps)
    A = J @ np.linalg.inv(js.crba(m, d, q)) @ J.T
    S = np.diag(1 / np.sqrt(np.diag(A)))
    w = np.linalg.eigvalsh(S @ A @ S)
    wbar = eps * w.max()
    delta = wbar * (1 - (max(w.min(), 0) / wbar) ** 2)
    np.testing.assert_allclose(lam, S @ np.linalg.inv(S @ A @ S + delta * np.eye(2)) @ S,
                               rtol=1e-9)
    assert np.linalg.eigvalsh(np.linalg.inv(S) @ lam @ np.linalg.inv(S)).max() <= (
        1 / wbar * (1 + 1e-9))


def _osc_loop_errors(m, osc, task, q0, h, n):
    d = js.make_data(m)
    errs = []

    def law(d, t):
        osc(d)
        errs.append(np.r_[task.error, task.error_rate])

    qs, vs = _rk4_closed_loop(m, d, law, q0, np.zeros(m.nv), h, n)
    d.qpos[:], d.qvel[:] = qs[-1], vs[-1]
    osc(d)
    return np.array(errs[::4] + [np.r_[task.error, task.error_rate]])


def test_osc_pose_error_follows_the_commanded_spring_damper():
    """OSC pose task error follows ë + K_d ė + K_p e = 0 to RK4 accuracy.

    7-dof arm, 6-D site task (position and orientation) with a posture in the null space:
    the task error obeys ë + K_d ė + K_p e = 0 (exact solution), and halving the step
    shrinks the gap at fourth order (it is RK4's error).

    The initial orientation error turns about one axis, the arm starts at rest and the
    rotational gains are isotropic, so the orientation stays on that axis' geodesic, where
    log(R_des Rᵀ) is linear (with anisotropic gains it leaves it: the error then follows
    the spring-damper only to first order).
    """
    m = js.models.arm7()
    q0 = np.asarray(js.models.ARM7_READY)
    kp = np.array([60.0, 50.0, 40.0, 35.0, 35.0, 35.0])
    kd = np.array([14.0, 12.0, 11.0, 10.0, 10.0, 10.0])
    gaps = []
    for h in (4e-3, 2e-3):
        task = control.SiteTask("ee", kp=kp, kd=kd, orientation=True)
        osc = control.OperationalSpace(m, [task], control.Posture(q0, kp=20.0, kd=6.0))
        d = js.make_data(m)
        d.qpos[:] = q0
        osc.hold(d)
        axis = np.array([1.0, 2.0, -1.0]) / np.sqrt(6.0)
        rot = np.r_[np.cos(0.15), np.sin(0.15) * axis]  # 0.3 rad about axis
        quat = np.empty(4)
        held = task.target
        mujoco.mju_mulQuat(quat, rot, held["quat"])
        task.set_target(pos=held["pos"] + [0.05, -0.04, 0.03], quat=quat)
        n = int(round(0.6 / h))
        got = _osc_loop_errors(m, osc, task, q0, h, n)
        A = np.block([[np.zeros((6, 6)), np.eye(6)], [-np.diag(kp), -np.diag(kd)]])
        exact = _exact(A, got[0], h * np.arange(n + 1))
        gaps.append(np.abs(got - exact).max())
        assert np.abs(got[0, 3:6] - 0.3 * axis).max() < 1e-12
    assert gaps[1] < RK4_TOL
    assert gaps[0] / gaps[1] > 10


def test_null_space_torque_does_not_reach_the_task():
    """J M⁻¹ τ_null ≈ 0 to round-off (position task, 4-D null space, strong posture)."""
    m = js.models.arm7()
    d = js.make_data(m)
    rng = np.random.default_rng(21)
    task = control.SiteTask("ee", kp=100.0, kd=20.0)
    osc = control.OperationalSpace(m, [task], control.Posture(m.qpos0, kp=50.0, kd=10.0),
                                   output=None)
    for _ in range(5):
        q = np.asarray(js.models.ARM7_READY) + rng.uniform(-0.5, 0.5, m.nv)
        d.qpos[:] = q
        d.qvel[:] = rng.normal(size=m.nv)
        task.set_target(pos=rng.uniform([0.3, -0.3, 0.3], [0.6, 0.3, 0.8]))
        tau = osc(d)
        J = _site_jac(m, d, "ee", slice(0, 3))
        M = js.crba(m, d, q)
        assert np.abs(osc.tau_null).max() > 1.0
        through = J @ np.linalg.solve(M, osc.tau_null)
        scale = np.abs(J @ np.linalg.solve(M, M @ osc.qacc)).max() + np.abs(
            J @ np.linalg.solve(M, tau)).max()
        assert np.abs(through).max() < NULL_TOL * scale


def _dense_priority(J1, b1, J2, b2, a0, M):
    """The recursion of _prioritized with dense matrices (independent implementation)."""
    Mi = np.linalg.inv(M)
    L1 = np.linalg.inv(J1 @ Mi @ J1.T)
    Jb1 = Mi @ J1.T @ L1
    N1 = np.eye(M.shape[0]) - Jb1 @ J1
    qa = Jb1 @ b1
    J2h = J2 @ N1
    L2 = np.linalg.inv(J2h @ Mi @ J2h.T)
    Jb2 = Mi @ J2h.T @ L2
    qa = qa + Jb2 @ (b2 - J2 @ qa)
    N2 = N1 - Jb2 @ J2h
    return qa + N2 @ (a0 - qa)


def test_prioritized_tasks_against_dense_recursion_and_forward():
    """Two task levels plus posture against a dense implementation and forward dynamics.

    7-dof arm: site position, then the horizontal position of the elbow's body origin.
    q̈ equals a dense implementation of the recursion; forward at τ gives q̈ and the first
    level's commanded acceleration exactly.
    """
    m = js.models.arm7()
    d = js.make_data(m)
    rng = np.random.default_rng(8)
    t1 = control.SiteTask("ee", kp=80.0, kd=15.0)
    t2 = control.BodyTask("link4", kp=40.0, kd=10.0, axes="xy")
    post = control.Posture(js.models.ARM7_READY, kp=10.0, kd=4.0)
    osc = control.OperationalSpace(m, [t1, t2], post, singular_threshold=1e-9)
    q = np.asarray(js.models.ARM7_READY) + rng.uniform(-0.3, 0.3, m.nv)
    d.qpos[:] = q
    d.qvel[:] = rng.normal(size=m.nv)
    t1.set_target(pos=[0.5, 0.1, 0.6], vel=[0.1, 0, 0], acc=[0, 0.2, 0])
    t2.set_target(pos=[0.2, -0.1, 0.0])
    tau = osc(d)
    js.kinematics(m, d, q, d.qvel)
    J1 = _site_jac(m, d, "ee", slice(0, 3))
    jb = m.id("body", "link4")
    J2 = js.jacobian_body(m, d, jb)[0][:2]
    b1 = (np.array([0, 0.2, 0]) + 15.0 * (np.array([0.1, 0, 0]) - J1 @ d.qvel)
          + 80.0 * (np.array([0.5, 0.1, 0.6]) - d.site_xpos[0])
          - js.jacobian_dot_qvel(m, d, m.site_bodyid[0], d.site_xpos[0])[:3])
    b2 = (-10.0 * (J2 @ d.qvel) + 40.0 * (np.array([0.2, -0.1]) - d.xpos[jb, :2])
          - js.jacobian_dot_qvel(m, d, jb, d.xpos[jb])[:2])
    a0 = 10.0 * js.diff_pos(m, q, post.q_star) - 4.0 * d.qvel
    M = js.crba(m, d, q)
    want = _dense_priority(J1, b1, J2, b2, a0, M)
    np.testing.assert_allclose(osc.qacc, want, rtol=1e-9, atol=1e-9 * np.abs(want).max())
    d.qfrc_applied[:] = tau
    js.forward(m, d)
    np.testing.assert_allclose(d.qacc, osc.qacc, atol=1e-9 * np.abs(osc.qacc).max())
    jdot = js.jacobian_dot_qvel(m, d, m.site_bodyid[0], d.site_xpos[0])[:3]
    np.testing.assert_allclose(J1 @ d.qacc + jdot, b1 + jdot, atol=1e-9 * np.abs(b1).max())


def test_osc_warns_at_a_singular_configuration_and_stays_finite():
    m = js.models.arm2()
    d = js.make_data(m)
    task = control.SiteTask("hand", kp=50.0, kd=10.0, axes="xz")
    osc = control.OperationalSpace(m, [task])
    d.qpos[:] = [0.2, 0.4]
    task.set_target(pos=[2.5, 0.0, 0.0])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        osc(d)
    assert not osc.singular.any()
    d.qpos[:] = [0.2, 0.0]
    with pytest.warns(JointspaceWarning, match="level 0 is at or near a singular"):
        tau = osc(d)
    assert osc.singular[0] and np.all(np.isfinite(tau))
    assert osc.level_eig[0, 2] > 0


def test_osc_rejects_bad_tasks_and_models():
    m = js.models.arm7()
    with pytest.raises(ValueError, match="axes"):
        control.SiteTask("ee", kp=1.0, kd=1.0, axes="xw")
    with pytest.raises(ValueError, match="no orientation"):
        control.Task("com", "world", kp=1.0, kd=1.0, orientation=True)
    with pytest.raises(KeyError, match="no site named 'hnd'"):
        control.OperationalSpace(m, [control.SiteTask("hnd", kp=1.0, kd=1.0)])
    t = control.SiteTask("ee", kp=1.0, kd=1.0)
    control.OperationalSpace(m, [t])
    with pytest.raises(JointspaceError, match="already belongs"):
        control.OperationalSpace(m, [t])
    with pytest.raises(ValueError, match="pos must have shape"):
        t.set_target(pos=[1.0, 2.0])
    with pytest.raises(JointspaceError, match="WholeBodyID"):
        control.OperationalSpace(js.models.humanoid(),
                                 [control.SiteTask("left_foot", kp=1.0, kd=1.0)])


# ------------------------------------------------------------------------------------------
# whole-body inverse dynamics with predicted soft contacts


def _standing(seed):
    """Humanoid standing on its feet (the feet sink 2 mm), a random velocity."""
    m = js.models.humanoid()
    d = js.make_data(m)
    rng = np.random.default_rng(seed)
    d.qpos[:] = m.qpos0
    d.qpos[2] -= 0.002
    d.qvel[:] = rng.normal(scale=0.1, size=m.nv)
    return m, d, rng


def _wbid(m, predictor=None, output="qfrc_applied"):
    feet = (control.SiteTask("left_foot", kp=100.0, kd=20.0, orientation=True),
            control.SiteTask("right_foot", kp=100.0, kd=20.0, orientation=True))
    upper = (control.ComTask(kp=50.0, kd=15.0),
             control.BodyTask("torso", kp=50.0, kd=15.0, position=False, orientation=True))
    gains = np.r_[np.zeros(6), np.full(m.nv - 6, 20.0)]
    post = control.Posture(m.qpos0, kp=gains, kd=gains / 4)
    return control.WholeBodyID(m, [feet, upper], post, predictor=predictor, output=output)


def test_soft_inverse_matches_mujoco_inverse():
    m, d, rng = _standing(1)
    mjm = mujoco.MjModel.from_xml_string(js.models.xml("humanoid"))
    mjd = mujoco.MjData(mjm)
    for _ in range(3):
        qacc = rng.normal(scale=2.0, size=m.nv)
        ours = control.soft_inverse(m, d, qacc)
        mjd.qpos[:], mjd.qvel[:], mjd.qacc[:] = d.qpos, d.qvel, qacc
        mujoco.mj_inverse(mjm, mjd)
        assert d.nefc[0] == mjd.nefc > 0
        scale = np.abs(mjd.qfrc_inverse).max()
        assert np.abs(ours - mjd.qfrc_inverse).max() < INVERSE_TOL * scale


def test_whole_body_id_torque_produces_the_commanded_acceleration():
    """Forward at WholeBodyID's torque returns its q̈ and its predicted contact forces.

    The free joint gets no force, and the feet carry the weight.
    """
    m, d, _ = _standing(2)
    wb = _wbid(m)
    wb.hold(d)
    wb.tasks[2].set_target(pos=wb.tasks[2].target["pos"] + [0.01, -0.01, 0.0])
    tau = wb(d)
    assert wb.residual <= wb.tol and d.nefc[0] > 0
    assert np.all(tau[:6] == 0)
    forces = d.efc_force[:d.nefc[0]].copy()
    m.opt.tolerance = 1e-12
    js.forward(m, d)
    np.testing.assert_allclose(d.qacc, wb.qacc, atol=FORWARD_TOL * np.abs(wb.qacc).max())
    np.testing.assert_allclose(d.efc_force[:d.nefc[0]], forces,
                               atol=FORWARD_TOL * np.abs(forces).max())
    assert forces.sum() > 0.5 * 9.81 * m.body_mass.sum()


def test_whole_body_id_takes_an_external_predictor():
    """MuJoCo's mj_inverse plugged in as the contact model gives the same torque."""
    m, d, _ = _standing(3)
    mjm = mujoco.MjModel.from_xml_string(js.models.xml("humanoid"))
    mjd = mujoco.MjData(mjm)

    def mujoco_inverse(m_, d_):
        mjd.qpos[:], mjd.qvel[:], mjd.qacc[:] = d_.qpos, d_.qvel, d_.qacc
        mujoco.mj_inverse(mjm, mjd)
        d_.qfrc_inverse[:] = mjd.qfrc_inverse

    ours = _wbid(m)
    theirs = _wbid(m, predictor=control.inverse_predictor(mujoco_inverse))
    ours.hold(d)
    theirs.hold(d)
    tau = ours(d)
    tau2 = theirs(d)
    assert theirs.residual <= theirs.tol
    np.testing.assert_allclose(tau2, tau, atol=1e-6 * np.abs(tau).max())
    np.testing.assert_allclose(theirs.qacc, ours.qacc, atol=1e-6 * np.abs(ours.qacc).max())


def test_whole_body_id_reports_an_inconsistent_predictor():
    m, d, _ = _standing(4)

    def no_base(m_, d_, qacc):
        out = control.soft_inverse(m_, d_, qacc)
        out[:6] = 1.0  # base rows that no acceleration changes: inconsistent with the model
        return out

    wb = _wbid(m, predictor=no_base)
    wb.maxiter = 3
    wb.hold(d)
    with pytest.warns(JointspaceWarning, match="did not converge"):
        wb(d)
