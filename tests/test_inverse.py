"""Inverse dynamics with contacts and constraints (004 §III) against mj_inverse and forward.

Parity: `inverse` and `mujoco.mj_inverse` on the same states (the humanoid lying with 11
contacts, the quadruped, a box stack, a ball and a capsule with condim 6 and 4, a scene with
condim 1, 3, 4, 6 contacts, friction loss, limits and an equality, and the contact-free
limits and loops scenes), pyramidal and elliptic cones: qfrc_inverse, efc_force and
efc_state. Round trips: forward with each solver run to convergence, then the inverse at its
qacc recovers qfrc_applied + qfrc_actuator + Jᵀ xfrc_applied and the forward's efc_force;
one step of Euler (damped), implicitfast and implicit is inverted from (q, v, v'), and RK4
is refused. The fwdinv diagnostic, the trajectory inverse (controls and contact forces) and
Algorithm 5 against an independent convex solve on 50,000 random problems.
"""

import mujoco
import numpy as np
import pytest
from scipy.optimize import minimize

import jointspace as js
from jointspace import constraint as C
from jointspace.types import ENBL_FWDINV, ENBL_INVDISCRETE
from tests.test_constraint import (
    CONTACT_SCENES,
    LIMITS,
    LOOPS,
    _pair,
    _random_state,
    _row_map,
)
from tests.test_dynamics import SINGULAR_XML

PARITY_TOL = 1e-8  # vs mj_inverse, relative to the forces' scale: the same closed forms
ROUND_TOL = 1e-6  # forward → inverse with converged solvers (the bound)
CONE_TOL = 1e-8  # Algorithm 5 vs the KKT reference, relative to |y| in the R metric
SLSQP_TOL = 1e-7  # SLSQP's own accuracy: it ends up to ~1e-8 outside the cone at the tip

MIXED = """<mujoco model="mixed"><option timestep="0.002"/>
<worldbody>
 <geom type="plane" size="5 5 0.1"/>
 <body pos="0 0 0.1"><freejoint/>
  <geom type="box" size="0.1 0.1 0.1" condim="1" priority="1"/></body>
 <body pos="0.5 0 0.1"><freejoint/>
  <geom type="sphere" size="0.1" condim="6" friction="0.7 0.01 0.002"/></body>
 <body pos="1 0 0.06"><freejoint/>
  <geom type="capsule" fromto="0 0 0 0.2 0 0" size="0.05" condim="4" friction="0.5 0.02 0.001"/>
 </body>
 <body pos="0 1 0.35">
  <joint name="h" type="hinge" axis="0 1 0" range="-0.3 0.3" frictionloss="0.5"
         damping="0.2" armature="0.01"/>
  <geom type="capsule" fromto="0 0 0 0.3 0 -0.3" size="0.03"/>
  <body pos="0.3 0 -0.3">
   <joint name="s" type="slide" axis="1 0 0" range="-0.05 0.05" frictionloss="0.1"
          damping="1"/>
   <geom type="sphere" size="0.06"/>
  </body>
 </body>
</worldbody>
<equality><joint joint1="s" joint2="h" polycoef="0 0.1 0 0 0" solref="0.05 1"/></equality>
<actuator><motor joint="h" gear="2"/><position joint="s" kp="50" kv="3"/></actuator>
</mujoco>"""

SCENES = dict(CONTACT_SCENES, mixed=(MIXED, 200, None))


def _scene(name, cone, solver="Newton"):
    """MuJoCo stepped into contact; ours at the same state (forward not run)."""
    xml, steps, qvel = SCENES[name]
    m, mjm, mjd = _pair(xml)
    mjm.opt.cone = 0 if cone == "pyramidal" else 1
    m.opt.cone = cone
    if qvel is not None:
        mjd.qvel[:] = qvel
    for _ in range(steps):
        mujoco.mj_step(mjm, mjd)
    d = js.make_data(m)
    d.qpos[:] = mjd.qpos
    d.qvel[:] = mjd.qvel
    m.opt.solver = solver
    return m, d, mjm, mjd


def _scale(*arrays):
    return max([1.0] + [float(np.max(np.abs(a), initial=0.0)) for a in arrays])


def _inverse_both(m, d, mjm, mjd, qacc):
    d.qacc[:] = qacc
    mjd.qpos[:] = d.qpos
    mjd.qvel[:] = d.qvel
    mjd.qacc[:] = qacc
    js.inverse(m, d)
    mujoco.mj_inverse(mjm, mjd)


def _check_parity(d, mjd, rows):
    n = mjd.nefc
    assert d.nefc[0] == n
    scale = _scale(mjd.qfrc_inverse, mjd.qfrc_constraint, mjd.qfrc_bias)
    assert np.max(np.abs(d.qfrc_inverse - mjd.qfrc_inverse)) < PARITY_TOL * scale
    assert np.max(np.abs(d.qfrc_constraint - mjd.qfrc_constraint)) < PARITY_TOL * scale
    if n:
        fscale = _scale(mjd.efc_force)
        assert np.max(np.abs(d.efc_force[rows] - mjd.efc_force)) < PARITY_TOL * fscale
        np.testing.assert_array_equal(d.efc_state[rows], mjd.efc_state)


@pytest.mark.parametrize("cone", ["pyramidal", "elliptic"])
@pytest.mark.parametrize("name", list(SCENES))
def test_matches_mj_inverse_with_contacts(name, cone):
    """qfrc_inverse, efc_force and efc_state equal mj_inverse's at and around rest."""
    m, d, mjm, mjd = _scene(name, cone)
    js.forward(m, d)
    assert d.ncon[0] == mjd.ncon > 0
    rng = np.random.default_rng(1)
    a0 = d.qacc.copy()
    states = set()
    for sigma in (0.0, 1.0, 30.0):
        _inverse_both(m, d, mjm, mjd, a0 + sigma * rng.normal(size=m.nv))
        _check_parity(d, mjd, _row_map(d, mjd))
        states |= set(d.efc_state[:d.nefc[0]].tolist())
    if name == "humanoid_lying":
        assert d.ncon[0] >= 10
    if name == "mixed":
        assert sorted(set(d.contact_dim[:d.ncon[0]])) == [1, 3, 4, 6]
        assert d.ne[0] == 1 and d.nf[0] == 2 and d.nl[0] >= 1
    if cone == "elliptic":
        assert C.STATE_CONE in states and C.STATE_QUADRATIC in states


@pytest.mark.parametrize("xml", [LIMITS, LOOPS], ids=["limits", "loops"])
def test_matches_mj_inverse_equality_limits_friction(xml):
    """Equality (connect, weld, joint), limits and friction loss on random states."""
    m, mjm, mjd = _pair(xml)
    d = js.make_data(m)
    rng = np.random.default_rng(2)
    states = set()
    for _ in range(6):
        d.qpos[:], d.qvel[:] = _random_state(mjm, rng)
        _inverse_both(m, d, mjm, mjd, 20.0 * rng.normal(size=m.nv))
        _check_parity(d, mjd, np.arange(mjd.nefc))
        states |= set(d.efc_state[:d.nefc[0]].tolist())
    if xml is LIMITS:
        assert {C.STATE_LINEARNEG, C.STATE_LINEARPOS, C.STATE_SATISFIED} <= states


def _drive(m, d, rng):
    """Random controls inside ctrlrange, an applied force and a Cartesian force."""
    lo, hi = m.actuator_ctrlrange[:, 0], m.actuator_ctrlrange[:, 1]
    ctrl = rng.uniform(-1, 1, m.nu)
    d.ctrl[:] = np.where(m.actuator_ctrllimited > 0, lo + (hi - lo) * (ctrl + 1) / 2, ctrl)
    d.qfrc_applied[:] = 0.5 * rng.normal(size=m.nv)
    d.xfrc_applied[:] = 0.0
    d.xfrc_applied[m.nbody - 1] = rng.normal(size=6)


def _expected_force(m, d):
    """qfrc_applied + qfrc_actuator + Σ J_bᵀ xfrc_applied_b with Jacobians at the coms."""
    f = d.qfrc_applied + d.qfrc_actuator
    for b in range(1, m.nbody):
        jacp, jacr = js.jacobian_body_com(m, d, b)
        f = f + jacp.T @ d.xfrc_applied[b, :3] + jacr.T @ d.xfrc_applied[b, 3:]
    return f


CONVERGED = {"Newton": (100, 1e-14), "CG": (2000, 1e-14), "PGS": (20000, 1e-15),
             "IPM": (1000, 1e-13)}


@pytest.mark.parametrize("name", ["humanoid_lying", "quadruped_standing", "box_stack", "mixed"])
def test_round_trip_every_solver(name):
    """forward (each solver, both cones, converged) → inverse recovers forces and efc_force."""
    rng = np.random.default_rng(3)
    for cone in ("elliptic", "pyramidal"):
        m, d, _, _ = _scene(name, cone)
        _drive(m, d, rng)
        for solver, (iters, tol) in CONVERGED.items():
            m.opt.solver = solver
            m.opt.iterations = iters
            m.opt.tolerance = tol
            # from the previous solver's solution, then from its own (forward, as
            # mj_forward, saves no warm start: PGS on elliptic cones needs the head start)
            for _ in range(2):
                d.qacc_warmstart[:] = d.qacc
                js.forward(m, d)
            force = d.efc_force[:d.nefc[0]].copy()
            qfrc_c = d.qfrc_constraint.copy()
            expected = _expected_force(m, d)
            js.inverse(m, d)
            scale = _scale(expected, qfrc_c, d.qfrc_bias)
            err = np.max(np.abs(d.qfrc_inverse - expected)) / scale
            assert err < ROUND_TOL, (cone, solver, err)
            ferr = np.max(np.abs(d.efc_force[:d.nefc[0]] - force)) / _scale(force)
            assert ferr < ROUND_TOL, (cone, solver, ferr)


def _step_pair(m, d, integrator, rng):
    """One step from a driven state: (qpos, qvel) before, qvel after, expected force."""
    m.opt.integrator = integrator
    m.opt.tolerance = 1e-14
    _drive(m, d, rng)
    js.forward(m, d)
    js.forward(m, d)
    q0, v0 = d.qpos.copy(), d.qvel.copy()
    expected = _expected_force(m, d)
    force = d.efc_force[:d.nefc[0]].copy()
    js.step(m, d)
    v1 = d.qvel.copy()
    d.qpos[:], d.qvel[:] = q0, v0
    return v1, expected, force


@pytest.mark.parametrize("integrator", ["Euler", "implicitfast", "implicit"])
def test_inverse_step_round_trip(integrator):
    """inverse_step from (q, v, v') of one step recovers the forces and constraint forces."""
    rng = np.random.default_rng(4)
    m, d, _, _ = _scene("mixed", "elliptic")
    assert np.any(m.dof_damping > 0)
    v1, expected, force = _step_pair(m, d, integrator, rng)
    js.inverse_step(m, d, v1)
    scale = _scale(expected, d.qfrc_constraint, d.qfrc_bias)
    assert np.max(np.abs(d.qfrc_inverse - expected)) < ROUND_TOL * scale
    assert np.max(np.abs(d.efc_force[:d.nefc[0]] - force)) < ROUND_TOL * _scale(force)
    np.testing.assert_allclose(d.qacc * m.opt.timestep, v1 - d.qvel, rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("integrator", ["Euler", "implicitfast", "implicit"])
def test_invdiscrete_matches_mj_inverse(integrator):
    """With the invdiscrete flag, qacc is a step's acceleration, as in MuJoCo."""
    m, d, mjm, mjd = _scene("mixed", "elliptic")
    mjm.opt.integrator = {"Euler": 0, "implicit": 2, "implicitfast": 3}[integrator]
    m.opt.integrator = integrator
    m.opt.enableflags |= ENBL_INVDISCRETE
    mjm.opt.enableflags |= mujoco.mjtEnableBit.mjENBL_INVDISCRETE
    rng = np.random.default_rng(5)
    _drive(m, d, rng)
    mjd.ctrl[:] = d.ctrl
    d.qvel[:] += rng.normal(size=m.nv)
    js.forward(m, d)
    for sigma in (0.0, 5.0):
        _inverse_both(m, d, mjm, mjd, d.qacc + sigma * rng.normal(size=m.nv))
        _check_parity(d, mjd, _row_map(d, mjd))


def test_rk4_discrete_is_refused_and_continuous_works():
    m, d, _, _ = _scene("box_stack", "elliptic")
    m.opt.integrator = "RK4"
    js.forward(m, d)
    with pytest.raises(js.JointspaceError, match="RK4"):
        js.inverse_step(m, d, d.qvel + 0.01)
    m.opt.enableflags |= ENBL_INVDISCRETE
    with pytest.raises(js.JointspaceError, match="invdiscrete"):
        js.inverse(m, d)
    m.opt.enableflags = 0
    force = d.efc_force[:d.nefc[0]].copy()
    js.inverse(m, d)
    assert np.max(np.abs(d.efc_force[:d.nefc[0]] - force)) < ROUND_TOL * _scale(force)


def test_fwdinv_diagnostic():
    """step records the forward/inverse gap; compare_fwd_inv leaves forward's results."""
    m, d, _, _ = _scene("humanoid_lying", "elliptic")
    _drive(m, d, np.random.default_rng(6))
    m.opt.enableflags |= ENBL_FWDINV
    m.opt.tolerance = 1e-14
    js.step(m, d, 3)
    scale = _scale(d.qfrc_constraint, d.qfrc_bias)
    assert 0.0 <= d.solver_fwdinv[0] < 1e-9 * scale and d.solver_fwdinv[1] < 1e-9 * scale
    # one iteration from no warm start: the gap is the solver's, and inverse recomputes it
    m.opt.iterations = 1
    d.qacc_warmstart[:] = 0.0
    js.forward(m, d)
    qacc, force = d.qacc.copy(), d.efc_force.copy()
    d.qacc_warmstart[:] = 0.0
    gap = js.compare_fwd_inv(m, d)
    np.testing.assert_array_equal(d.qacc, qacc)
    np.testing.assert_array_equal(d.efc_force, force)
    qfrc_c = d.qfrc_constraint.copy()
    expected = _expected_force(m, d)
    js.inverse(m, d)
    assert gap[0] == pytest.approx(np.linalg.norm(qfrc_c - d.qfrc_constraint), rel=1e-9)
    assert gap[1] == pytest.approx(np.linalg.norm(expected - d.qfrc_inverse), rel=1e-6)
    # a primal solver's efc_force is the inverse's map at its qacc: the gap is in the forces
    assert gap[0] < 1e-9 * scale < 1e-3 * scale < gap[1]
    # a dual solver stopped early leaves forces the inverse does not reproduce
    m.opt.solver = "PGS"
    m.opt.iterations = 2
    gap = js.compare_fwd_inv(m, d)
    assert gap[0] > 1e-3 * scale


@pytest.mark.parametrize("cone", ["pyramidal", "elliptic"])
def test_trajectory_recovers_controls_and_contact_forces(cone):
    """The quadruped (position servos) driven by random controls: ctrl and contacts back."""
    m, d, _, _ = _scene("quadruped_standing", cone)
    m.opt.tolerance = 1e-14
    rng = np.random.default_rng(7)
    T = 30
    qpos, qvel, qacc = np.empty((T, m.nq)), np.empty((T, m.nv)), np.empty((T, m.nv))
    ctrl, force, ncon = np.empty((T, m.nu)), [], []
    for t in range(T):
        d.ctrl[:] = np.clip(m.qpos0[7:] + 0.2 * rng.normal(size=m.nu),
                            *m.actuator_ctrlrange.T)
        js.forward(m, d)
        qpos[t], qvel[t], qacc[t], ctrl[t] = d.qpos, d.qvel, d.qacc, d.ctrl
        force.append(d.efc_force[:d.nefc[0]].copy())
        ncon.append(int(d.ncon[0]))
        js.step(m, d)
    res = js.inverse_trajectory(m, d, qpos, qvel, qacc)
    assert list(res.ncon) == ncon and max(ncon) > 0
    np.testing.assert_allclose(res.ctrl, ctrl, atol=ROUND_TOL * _scale(ctrl))
    assert np.max(np.abs(res.ctrl_residual)) < ROUND_TOL * _scale(res.qfrc_inverse)
    for t in range(T):
        n = res.nefc[t]
        assert np.max(np.abs(res.efc_force[t, :n] - force[t]), initial=0) < ROUND_TOL * 100
        assert not np.any(res.efc_force[t, n:])
    # the normal force of each contact is Σ of its pyramid edges, or its first row
    f = res.contact_force[T - 1, :res.ncon[T - 1]]
    rows = force[T - 1]
    assert np.sum(f[:, 0]) == pytest.approx(
        np.sum(rows) if cone == "pyramidal" else np.sum(rows[::3]), rel=1e-9)
    assert np.all(f[:, 0] >= 0)
    # the step's accelerations (v_{t+1} − v_t)/h with discrete=True give the same controls
    h = m.opt.timestep
    res2 = js.inverse_trajectory(m, d, qpos[:-1], qvel[:-1], np.diff(qvel, axis=0) / h,
                                 discrete=True)
    np.testing.assert_allclose(res2.ctrl, ctrl[:-1], atol=1e-5 * _scale(ctrl))


def test_enable_flags_from_mjcf():
    """<flag fwdinv="enable" invdiscrete="enable"/> sets MuJoCo's enable bits.

    step then records fwdinv at forward's continuous qacc (invdiscrete does not apply to
    the comparison, unlike MuJoCo's), so the converged gap is round-off.
    """
    xml = MIXED.replace('<option timestep="0.002"/>', '<option timestep="0.002"><flag '
                        'fwdinv="enable" invdiscrete="enable"/></option>')
    m = js.load_string(xml)
    assert m.opt.enableflags == ENBL_FWDINV | ENBL_INVDISCRETE
    assert m.opt.enableflags == int(mujoco.MjModel.from_xml_string(xml).opt.enableflags)
    d = js.make_data(m)
    js.step(m, d, 5)
    assert 0.0 < d.solver_fwdinv[1] < 1e-6 * _scale(d.qfrc_bias, d.qfrc_constraint)


def test_singular_mass_continuous_works_discrete_refused():
    """A massless dof: the continuous inverse needs no M⁻¹ (it equals rnea here).

    The discrete inverse does, and names the joint.
    """
    with pytest.warns(js.JointspaceWarning, match="singular"):
        m = js.load_string(SINGULAR_XML)
    d = js.make_data(m)
    d.qvel[:] = [0.3, -0.2]
    d.qacc[:] = [1.0, 2.0]
    js.inverse(m, d)
    tau = js.rnea(m, js.make_data(m), d.qpos, d.qvel, d.qacc)
    np.testing.assert_allclose(d.qfrc_inverse, tau, rtol=1e-12, atol=1e-12)
    with pytest.raises(js.SingularMassError, match="'massless'"):
        js.inverse_step(m, d, d.qvel)


def test_bad_input_errors():
    m, d, _, _ = _scene("box_stack", "elliptic")
    d.qacc[3] = np.nan
    with pytest.raises(js.JointspaceError, match=r"qacc\[3\]"):
        js.inverse(m, d)
    d.qacc[3] = 0.0
    with pytest.raises(ValueError, match="qvel_next"):
        js.inverse_step(m, d, np.zeros(m.nv + 1))
    q = np.tile(d.qpos, (3, 1))
    v = np.zeros((3, m.nv))
    with pytest.raises(ValueError, match="qacc"):
        js.inverse_trajectory(m, d, q, v, np.zeros((2, m.nv)))
    with pytest.raises(ValueError, match="qpos"):
        js.inverse_trajectory(m, d, q[:, :-1], v, v)
    a = v.copy()
    a[2, 1] = np.inf
    with pytest.raises(js.JointspaceError, match=r"time index 2.*qacc\[1\]"):
        js.inverse_trajectory(m, d, q, v, a)
    with pytest.raises(TypeError, match="Model"):
        js.inverse(d, m)
    with pytest.raises(ValueError, match="mu"):
        js.cone_project([1.0, 2.0, 3.0], [0.5, -1.0], 1.0, 1.0)
    with pytest.raises(ValueError, match="d = 1"):
        js.cone_project(np.ones(8), np.ones(7), 1.0, 1.0)


# ---------------------------------------------------------------------------------------------
# Algorithm 5


def _cone_problems(rng, N, d):
    """Random y, μ, r0, r_F over many decades, with the degenerate cases planted."""
    mu = np.exp(rng.uniform(np.log(0.01), np.log(3.0), (N, d)))
    r0 = np.exp(rng.uniform(-5, 5, N))
    rf = np.exp(rng.uniform(-5, 5, N))
    y = rng.normal(size=(N, d + 1)) * np.exp(rng.uniform(-3, 3, (N, 1)))
    k = N // 10
    y[:k, 0] = 0.0  # ŷ0 = 0 (eq. 20)
    y[k:2 * k, 1:] = 0.0  # no tangential component
    on = slice(2 * k, 3 * k)  # on the cone's surface
    y[on, 0] = np.sqrt(np.sum((y[on, 1:] / mu[on]) ** 2, axis=1))
    y[3 * k:3 * k + 10] = 0.0
    return y, mu, r0, rf


def _weights(mu, r0, rf):
    """r_k of eq. 22."""
    m2 = np.mean(mu ** -2, axis=1, keepdims=True)
    return np.concatenate([r0[:, None], rf[:, None] * mu ** -2 / m2], axis=1)


def _kkt_projection(y, mu, r):
    """Projection in the original metric from the KKT conditions, vectorized.

    y in C gives y; −R y in the dual cone {z0 ≥ |μ ∘ z_T|} gives 0; otherwise
    x0 = r0 y0/(r0 − ν), x_j = r_j y_j/(r_j + ν/μ_j²) with the multiplier ν > 0 where x is on
    the surface: bisection on w = |r0 − ν| in log scale (w ↦ surface function is monotone).
    """
    y0, yt = y[:, 0], y[:, 1:]
    r0, rt = r[:, 0], r[:, 1:]
    inside = (y0 >= 0) & (y0 ** 2 >= np.sum((yt / mu) ** 2, axis=1))
    polar = -r0 * y0 >= np.sqrt(np.sum((mu * rt * yt) ** 2, axis=1))
    sgn = np.where(y0 > 0, -1.0, 1.0)

    def surface_point(w):
        nu = r0 + sgn * w
        return r0 * np.abs(y0) / w, rt * yt / (rt + nu[:, None] / mu ** 2)

    lo = np.full(len(y), -60.0)
    hi = np.where(y0 > 0, np.log(r0), 60.0)
    for _ in range(160):
        mid = 0.5 * (lo + hi)
        x0, xt = surface_point(np.exp(mid))
        outside = x0 ** 2 > np.sum((xt / mu) ** 2, axis=1)
        lo = np.where(outside, mid, lo)
        hi = np.where(outside, hi, mid)
    x0, xt = surface_point(np.exp(0.5 * (lo + hi)))
    # y0 = 0: ν = r0 and x0 is set by the surface
    zero = y0 == 0
    xt0 = rt * yt / (rt + r0[:, None] / mu ** 2)
    x0 = np.where(zero, np.sqrt(np.sum((xt0 / mu) ** 2, axis=1)), x0)
    xt = np.where(zero[:, None], xt0, xt)
    x = np.concatenate([x0[:, None], xt], axis=1)
    x[inside] = y[inside]
    x[polar & ~inside] = 0.0
    return x


def _rdist(x, z, y, r):
    ny = np.sqrt(np.sum(r * y * y, axis=1))
    return np.sqrt(np.sum(r * (x - z) ** 2, axis=1)) / np.maximum(ny, 1e-300)


@pytest.mark.parametrize("d", [1, 2, 3, 4, 5])
def test_cone_project_matches_convex_solve(d):
    """10,000 problems per d: Algorithm 5 equals the KKT solution; every case is hit."""
    rng = np.random.default_rng(10 + d)
    y, mu, r0, rf = _cone_problems(rng, 10000, d)
    x, state = js.cone_project(y, mu, r0, rf)
    r = _weights(mu, r0, rf)
    assert np.all(np.abs(mu ** 2 * r[:, 1:] - (r[:, :1] * mu[:, :1] ** 2 * r[:, 1:2] / r[:, :1]))
                  <= 1e-12 * mu ** 2 * r[:, 1:])  # eq. 17
    ref = _kkt_projection(y, mu, r)
    err = _rdist(x, ref, y, r)
    zero = ~np.any(y, axis=1)
    assert np.all(x[zero] == 0.0)
    assert np.max(err[~zero]) < CONE_TOL
    assert set(np.unique(state)) == {C.STATE_SATISFIED, C.STATE_QUADRATIC, C.STATE_CONE}
    # feasibility of every x and the states' meaning
    assert np.all(x[:, 0] >= 0)
    assert np.all(np.sum((x[:, 1:] / mu) ** 2, axis=1) <= x[:, 0] ** 2 * (1 + 1e-12))
    np.testing.assert_array_equal(x[state == C.STATE_QUADRATIC], y[state == C.STATE_QUADRATIC])
    assert not np.any(x[state == C.STATE_SATISFIED])


def test_cone_project_against_slsqp():
    """A general-purpose optimizer (SLSQP) finds the same points, never a nearer one.

    The cone is written as x0 − |x_T/μ| ≥ 0 (the squared form stalls SLSQP at the tip,
    where its gradient vanishes); runs SLSQP reports as failed are not compared.
    """
    rng = np.random.default_rng(20)
    solved = 0
    for d in (2, 3, 4, 5):
        mu = rng.uniform(0.2, 1.5, (6, d))
        r0, rf = rng.uniform(0.5, 2.0, 6), rng.uniform(0.5, 2.0, 6)
        y = rng.normal(size=(6, d + 1))
        x, _ = js.cone_project(y, mu, r0, rf)
        r = _weights(mu, r0, rf)
        for p in range(6):
            w = r[p]
            mp = mu[p]

            def cone(z, mp=mp):
                return z[0] - np.sqrt(np.sum((z[1:] / mp) ** 2) + 1e-300)

            def cone_jac(z, mp=mp):
                return np.r_[1.0, -z[1:] / mp ** 2 / np.sqrt(np.sum((z[1:] / mp) ** 2) + 1e-300)]

            res = minimize(lambda z, w=w, p=p: np.sum(w * (z - y[p]) ** 2),
                           np.r_[1.0 + np.abs(y[p]).sum(), np.zeros(d)],
                           jac=lambda z, w=w, p=p: 2 * w * (z - y[p]), method="SLSQP",
                           constraints=[{"type": "ineq", "fun": cone, "jac": cone_jac}],
                           options={"ftol": 1e-12, "maxiter": 300})
            if not res.success:
                continue
            solved += 1
            ny = np.sqrt(np.sum(w * y[p] ** 2))
            assert np.sum(w * (x[p] - y[p]) ** 2) <= res.fun * (1 + SLSQP_TOL) + 1e-14
            assert np.sqrt(np.sum(w * (res.x - x[p]) ** 2)) < 1e-5 * ny
    assert solved >= 20
