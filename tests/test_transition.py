"""Finite-differenced step Jacobians (transition_derivatives) against mujoco.mjd_transitionFD.

Both libraries step the same state (MuJoCo's, after it settled into contact) from the same
warm start; the solvers run their iterations with tolerance 0, as MuJoCo's documentation
advises for finite differences, so that every perturbed solve ends at the same optimum in
both. Then A and B differ by the steps' difference divided by eps. The sensor Jacobians C
and D (sensors=True) are compared the same way on tests.test_sensor's model (every sensor
type on a floating base, hinge, slide and ball joints, contacts), with an activation added,
and against central differences of our own step's sensordata.
"""

import math
import warnings

import mujoco
import numpy as np
import pytest

import jointspace as js
from jointspace.sensor import SENS_E_KINETIC, STAGE_POS, STAGE_VEL
from jointspace.step import _k_transition
from tests._real_models import real_model
from tests.test_constraint import CONTACT_SCENES, _pair
from tests.test_sensor import SENSORS

TOL = 1e-6  # relative to the largest entry: two steps that agree to ~1e-14, divided by eps
EPS = 1e-6
ITERATIONS = 30  # Newton converges in a few; tolerance 0 runs them all, on both sides


def _setup(name, integrator="Euler", cone="pyramidal"):
    xml, steps, qvel = CONTACT_SCENES[name]
    m, mjm, mjd = _pair(xml)
    mjm.opt.integrator = getattr(mujoco.mjtIntegrator, f"mjINT_{integrator.upper()}")
    mjm.opt.cone = 0 if cone == "pyramidal" else 1
    m.opt.integrator = integrator
    m.opt.cone = cone
    if qvel is not None:
        mjd.qvel[:] = qvel
    for _ in range(steps):
        mujoco.mj_step(mjm, mjd)
    rng = np.random.default_rng(sum(map(ord, name)))
    lo, hi = mjm.actuator_ctrlrange[:, 0], mjm.actuator_ctrlrange[:, 1]
    mjd.ctrl[:] = rng.uniform(lo, hi)
    if mjm.nu >= 2:  # one control at each limit: one-sided differences, inward
        mjd.ctrl[0], mjd.ctrl[1] = lo[0], hi[1]
    for mm in (m, mjm):
        mm.opt.tolerance = 0.0
        mm.opt.iterations = ITERATIONS
    d = js.make_data(m)
    d.time = mjd.time
    d.qpos[:] = mjd.qpos
    d.qvel[:] = mjd.qvel
    d.ctrl[:] = mjd.ctrl
    d.qacc_warmstart[:] = mjd.qacc_warmstart
    return m, d, mjm, mjd


def _mujoco(mjm, mjd, centered, sensors=False):
    nx = 2 * mjm.nv + mjm.na
    A, B = np.zeros((nx, nx)), np.zeros((nx, mjm.nu))
    if not sensors:
        mujoco.mjd_transitionFD(mjm, mjd, EPS, centered, A, B, None, None)
        return A, B
    C, D = np.zeros((mjm.nsensordata, nx)), np.zeros((mjm.nsensordata, mjm.nu))
    mujoco.mjd_transitionFD(mjm, mjd, EPS, centered, A, B, C, D)
    return A, B, C, D


def _close(actual, desired, what, tol=TOL):
    assert actual.shape == desired.shape
    if desired.size == 0:
        return
    scale = max(1.0, float(np.max(np.abs(desired))))
    err = float(np.max(np.abs(actual - desired)))
    assert err <= tol * scale, f"{what}: max error {err:.3g} > {tol:.1g} × {scale:.3g}"


@pytest.mark.parametrize("centered", [False, True])
@pytest.mark.parametrize("name,integrator,cone", [
    ("humanoid_lying", "Euler", "pyramidal"), ("humanoid_lying", "implicitfast", "elliptic"),
    ("quadruped_standing", "Euler", "elliptic"), ("box_stack", "implicit", "pyramidal")])
def test_matches_mjd_transition_fd(name, integrator, cone, centered):
    """A and B equal MuJoCo's with contacts, each integrator but RK4, both cones."""
    m, d, mjm, mjd = _setup(name, integrator, cone)
    state = (d.qpos.copy(), d.qvel.copy(), d.ctrl.copy(), d.qacc_warmstart.copy(), d.time)
    A, B = js.transition_derivatives(m, d, EPS, centered)
    Am, Bm = _mujoco(mjm, mjd, centered)
    assert d.ncon[0] == mjd.ncon > 0
    if name == "humanoid_lying":
        assert d.ncon[0] >= 10
    _close(A, Am, f"{name} A")
    _close(B, Bm, f"{name} B")
    # the state is restored
    np.testing.assert_array_equal(d.qpos, state[0])
    np.testing.assert_array_equal(d.qvel, state[1])
    np.testing.assert_array_equal(d.ctrl, state[2])
    np.testing.assert_array_equal(d.qacc_warmstart, state[3])
    assert d.time == state[4]


@pytest.mark.parametrize("integrator", ["Euler", "implicitfast", "implicit"])
def test_skipping_the_position_stage_changes_nothing(integrator):
    """Reusing the position stage (MuJoCo's mj_stepSkip) gives the full steps' Jacobians.

    Control and velocity columns skip it; the result is the same bit for bit.
    """
    m, d, _, _ = _setup("humanoid_lying", integrator, "elliptic")
    out = []
    for skip in (True, False):
        A, B = np.empty((2 * m.nv, 2 * m.nv)), np.empty((2 * m.nv, m.nu))
        C, D = np.empty((0, 2 * m.nv)), np.empty((0, m.nu))
        assert _k_transition.ep(d._s, EPS, True, skip, False, False, 0, m.nu + 2 * m.nv,
                                A, B, C, D) == 0
        out.append((A, B))
    np.testing.assert_array_equal(out[0][0], out[1][0])
    np.testing.assert_array_equal(out[0][1], out[1][1])


def test_threads_give_the_same_jacobians():
    """Columns split over threads, each on its own copy of d: bit for bit one thread's."""
    m, d, _, _ = _setup("humanoid_lying", "Euler", "elliptic")
    state = (d.qpos.copy(), d.qvel.copy(), d.qacc_warmstart.copy())
    one = js.transition_derivatives(m, d, EPS, True)
    for n in (2, 3, 200):
        many = js.transition_derivatives(m, d, EPS, True, nthread=n)
        np.testing.assert_array_equal(many[0], one[0])
        np.testing.assert_array_equal(many[1], one[1])
    np.testing.assert_array_equal(d.qpos, state[0])
    np.testing.assert_array_equal(d.qvel, state[1])
    np.testing.assert_array_equal(d.qacc_warmstart, state[2])


@pytest.mark.parametrize("nthread", [0, -1, 1.5, True, "2"])
def test_bad_nthread_is_refused(nthread):
    m = js.models.arm7()
    with pytest.raises(ValueError, match="transition_derivatives: argument nthread"):
        js.transition_derivatives(m, js.make_data(m), nthread=nthread)


def test_shapes_and_a_step_without_contacts():
    """A contact-free pendulum: B is (2nv, nu) and A's velocity block is ≈ the identity."""
    m = js.models.arm7()
    d = js.make_data(m)
    A, B = js.transition_derivatives(m, d)
    assert A.shape == (2 * m.nv, 2 * m.nv) and B.shape == (2 * m.nv, m.nu)
    h = m.opt.timestep
    assert np.allclose(A[:m.nv, m.nv:], h * np.eye(m.nv), atol=10 * h * h)


@pytest.mark.parametrize("eps", [0.0, -1e-6, math.nan, math.inf, True, "1e-6", None])
def test_bad_eps_is_refused(eps):
    m = js.models.arm7()
    d = js.make_data(m)
    with pytest.raises(ValueError, match="transition_derivatives: argument eps"):
        js.transition_derivatives(m, d, eps)


def test_rk4_is_refused():
    m = js.models.arm7()
    m.opt.integrator = "RK4"
    with pytest.raises(ValueError, match="RK4 integrator is not supported"):
        js.transition_derivatives(m, js.make_data(m))


def test_wrong_data_is_refused():
    m = js.models.arm7()
    with pytest.raises(ValueError, match="different model"):
        js.transition_derivatives(m, js.make_data(js.models.humanoid()))


# ---------------------------------------------------------------------------------------------
# sensor Jacobians C = ∂sensordata/∂x, D = ∂sensordata/∂u

# SENSORS with an activation (a filter actuator, so that C has act columns) and, without
# contacts, the contact flag disabled
_FILTER = ('<general name="filter" joint="hip" dyntype="filter" dynprm="0.05" gainprm="0.5" '
           'ctrlrange="-1 1"/>\n</actuator>')
SENSOR_SCENES = {
    "contacts": SENSORS.replace("</actuator>", _FILTER, 1),
    "no_contacts": SENSORS.replace("</actuator>", _FILTER, 1).replace(
        'iterations="200"/>', 'iterations="200"><flag contact="disable"/></option>', 1),
    "sensor_flag_off": SENSORS.replace("</actuator>", _FILTER, 1).replace(
        'iterations="200"/>', 'iterations="200"><flag sensor="disable"/></option>', 1),
}
SETTLE = 250  # steps of MuJoCo's from qpos0: the torso lands, the feet and the box touch
# C and D rows hold sensors of different units (touch forces, angles, accelerations): each
# row is compared relative to its own largest entry, with TOL (measured ≤ 2.4e-8)
SENSOR_FD_TOL = 1e-9  # ours against our own steps differenced in Python (measured 0: the
# same steps and arithmetic; the bound only leaves room for a reordered sum)


def _sensor_setup(name, integrator="Euler"):
    xml = SENSOR_SCENES[name]
    m, mjm, mjd = _pair(xml)
    mjm.opt.integrator = getattr(mujoco.mjtIntegrator, f"mjINT_{integrator.upper()}")
    m.opt.integrator = integrator
    for _ in range(SETTLE):
        mujoco.mj_step(mjm, mjd)
    rng = np.random.default_rng(sum(map(ord, name + integrator)))
    mjd.ctrl[:] = rng.uniform(-1, 1, mjm.nu)
    mjd.ctrl[0] = mjm.actuator_ctrlrange[0, 1]  # the hip motor at its limit: one-sided
    mjd.act[:] = rng.uniform(-1, 1, mjm.na)
    for mm in (m, mjm):
        mm.opt.tolerance = 0.0
        mm.opt.iterations = ITERATIONS
    d = js.make_data(m)
    d.time = mjd.time
    d.qpos[:] = mjd.qpos
    d.qvel[:] = mjd.qvel
    d.act[:] = mjd.act
    d.ctrl[:] = mjd.ctrl
    d.qacc_warmstart[:] = mjd.qacc_warmstart
    return m, d, mjm, mjd


def _close_rows(actual, desired, tol, what):
    """Each row within tol × max(1, its largest entry in desired)."""
    assert actual.shape == desired.shape
    for r in range(desired.shape[0]):
        scale = max(1.0, float(np.max(np.abs(desired[r]), initial=0.0)))
        err = float(np.max(np.abs(actual[r] - desired[r]), initial=0.0))
        assert err <= tol * scale, f"{what} row {r}: max error {err:.3g} > {tol:.1g} × {scale:.3g}"


@pytest.mark.parametrize("centered", [False, True])
@pytest.mark.parametrize("name,integrator", [
    ("contacts", "Euler"), ("contacts", "implicitfast"), ("no_contacts", "Euler")])
def test_sensor_jacobians_match_mjd_transition_fd(name, integrator, centered):
    """C and D equal MuJoCo's (every sensor type, with and without contacts); A, B too."""
    m, d, mjm, mjd = _sensor_setup(name, integrator)
    A, B, C, D = js.transition_derivatives(m, d, EPS, centered, sensors=True)
    Am, Bm, Cm, Dm = _mujoco(mjm, mjd, centered, sensors=True)
    assert d.ncon[0] == mjd.ncon and (d.ncon[0] >= 3 if name == "contacts" else d.ncon[0] == 0)
    assert C.shape == (m.nsensordata, 2 * m.nv + m.na) and D.shape == (m.nsensordata, m.nu)
    _close(A, Am, f"{name} A")
    _close(B, Bm, f"{name} B")
    _close_rows(C, Cm, TOL, f"{name} C")
    _close_rows(D, Dm, TOL, f"{name} D")
    # what C and D differentiate: the sensors at the state the step starts from (the first
    # jointpos sensor reads the hip angle: 1 in its position column, 0 elsewhere)
    jointpos = [i for i in range(mjm.nsensor)
                if mjm.sensor_type[i] == mujoco.mjtSensor.mjSENS_JOINTPOS]
    row = mjm.sensor_adr[jointpos[0]]
    expect = np.zeros(2 * m.nv + m.na)
    expect[m.jnt_dofadr[m.id("joint", "hip")]] = 1.0
    np.testing.assert_allclose(C[row], expect, atol=1e-9)
    assert not D[row].any()
    if name == "contacts":  # the touch sensors respond to the state through the contacts
        touch = [mjm.sensor_adr[i] for i in range(mjm.nsensor)
                 if mjm.sensor_type[i] == mujoco.mjtSensor.mjSENS_TOUCH]
        assert np.abs(C[touch]).max() > 1.0


def test_sensor_jacobians_are_central_differences_of_step():
    """C and D (centered) equal central differences of js.step's sensordata, column by column.

    Each column perturbs a fresh copy of d in Python (js.integrate_pos for positions) and
    runs one full js.step, so the skipped stages and the compiled bookkeeping are checked
    against the plain definition (with the solver in every column, as js.step: the reused
    Hessian's solves differ from it at round-off, which eps magnifies past this bound).
    """
    m, d, _, _ = _sensor_setup("contacts")
    _, _, C, D = js.transition_derivatives(m, d, EPS, True, sensors=True, reuse_hessian=False)
    nv, nu = m.nv, m.nu
    lo, hi = m.actuator_ctrlrange[:, 0], m.actuator_ctrlrange[:, 1]

    def sensed(kind, i, h):
        dc = js.make_data(m)
        dc.time = d.time
        for f in ("qpos", "qvel", "act", "ctrl", "qacc_warmstart"):
            getattr(dc, f)[:] = getattr(d, f)
        if kind == "ctrl":
            dc.ctrl[i] += h
        elif kind == "qvel":
            dc.qvel[i] += h
        elif kind == "act":
            dc.act[i] += h
        else:
            dc.qpos[:] = js.integrate_pos(m, dc.qpos, np.eye(nv)[i], h)
        js.step(m, dc)
        return dc.sensordata.copy()

    ref_d = np.empty_like(D)
    for i in range(nu):
        up = m.actuator_ctrllimited[i] == 0 or d.ctrl[i] + EPS <= hi[i]
        down = m.actuator_ctrllimited[i] == 0 or d.ctrl[i] - EPS >= lo[i]
        assert up or down
        if up and down:
            ref_d[:, i] = (sensed("ctrl", i, EPS) - sensed("ctrl", i, -EPS)) / (2 * EPS)
        else:  # at a limit: one-sided, inward
            s0 = sensed("ctrl", i, 0.0)
            ref_d[:, i] = ((sensed("ctrl", i, EPS) - s0) / EPS if up
                           else (s0 - sensed("ctrl", i, -EPS)) / EPS)
    ref_c = np.empty_like(C)
    for col, (kind, i) in enumerate([("qpos", i) for i in range(nv)]
                                    + [("qvel", i) for i in range(nv)]
                                    + [("act", i) for i in range(m.na)]):
        ref_c[:, col] = (sensed(kind, i, EPS) - sensed(kind, i, -EPS)) / (2 * EPS)
    # MuJoCo's skips: the control, activation and velocity columns keep the position-stage
    # sensors, the control and activation columns the velocity-stage ones too
    pos, vel = _stage_rows(m, STAGE_POS), _stage_rows(m, STAGE_VEL)
    ekin = m.sensor_adr[list(m.sensor_type).index(SENS_E_KINETIC)]
    assert np.abs(ref_c[ekin, nv:2 * nv]).max() > 1.0  # e_kinetic moves with qvel …
    assert not C[ekin, nv:2 * nv].any()  # … but is a position-stage sensor, kept
    ref_c[pos, nv:] = 0.0
    ref_c[vel, 2 * nv:] = 0.0
    ref_d[pos] = 0.0
    ref_d[vel] = 0.0
    _close_rows(C, ref_c, SENSOR_FD_TOL, "C")
    _close_rows(D, ref_d, SENSOR_FD_TOL, "D")


def _stage_rows(m, stage):
    """The sensordata rows of the sensors that need the given stage."""
    return [k for i in range(m.nsensor) if m.sensor_needstage[i] == stage
            for k in range(m.sensor_adr[i], m.sensor_adr[i] + m.sensor_dim[i])]


def test_sensors_flag_keeps_a_and_b():
    """Asking for C and D changes neither A nor B (bit for bit); without it, two arrays."""
    m, d, _, _ = _sensor_setup("contacts")
    out = js.transition_derivatives(m, d, EPS, False)
    assert len(out) == 2
    A, B, C, D = js.transition_derivatives(m, d, EPS, False, sensors=True)
    np.testing.assert_array_equal(A, out[0])
    np.testing.assert_array_equal(B, out[1])


def test_sensor_jacobians_skipping_and_threads_change_nothing():
    """Skipping the position stage and splitting columns over threads: C, D bit for bit.

    Skipping with the solver in every column; the threads with the reused Hessian too.
    """
    m, d, _, _ = _sensor_setup("contacts")
    nx, ns = 2 * m.nv + m.na, m.nsensordata
    out = []
    for skip in (True, False):
        A, B = np.empty((nx, nx)), np.empty((nx, m.nu))
        C, D = np.empty((ns, nx)), np.empty((ns, m.nu))
        assert _k_transition.ep(d._s, EPS, True, skip, False, True, 0, m.nu + nx, A, B, C, D) == 0
        out.append((A, B, C, D))
    for k in range(4):
        np.testing.assert_array_equal(out[0][k], out[1][k])
    one = js.transition_derivatives(m, d, EPS, True, sensors=True, reuse_hessian=False)
    for k in range(4):
        np.testing.assert_array_equal(one[k], out[0][k])
    for reuse in (False, True):
        one = js.transition_derivatives(m, d, EPS, True, sensors=True, reuse_hessian=reuse)
        for n in (2, 5):
            many = js.transition_derivatives(m, d, EPS, True, nthread=n, sensors=True,
                                             reuse_hessian=reuse)
            for k in range(4):
                np.testing.assert_array_equal(many[k], one[k])


def test_disabled_sensors_give_zero_jacobians():
    """With the sensor flag disabled sensordata keeps its values: C, D zero, as MuJoCo's."""
    m, d, mjm, mjd = _sensor_setup("sensor_flag_off")
    A, B, C, D = js.transition_derivatives(m, d, EPS, sensors=True)
    Am, Bm, Cm, Dm = _mujoco(mjm, mjd, False, sensors=True)
    assert not C.any() and not D.any() and not Cm.any() and not Dm.any()
    _close(A, Am, "A")


def test_sensor_jacobians_of_a_model_without_sensors():
    """No sensors: C and D are empty, (0, 2nv + na) and (0, nu), as MuJoCo's."""
    m = js.models.arm7()
    A, B, C, D = js.transition_derivatives(m, js.make_data(m), sensors=True)
    assert C.shape == (0, 2 * m.nv) and D.shape == (0, m.nu)


@pytest.mark.parametrize("sensors", [1, "yes", None, np.array([True])])
def test_bad_sensors_is_refused(sensors):
    m = js.models.arm7()
    with pytest.raises(TypeError, match="transition_derivatives: argument sensors"):
        js.transition_derivatives(m, js.make_data(m), sensors=sensors)


@pytest.mark.parametrize("flag", [1, "yes", None, np.array([True])])
def test_bad_reuse_hessian_is_refused(flag):
    m = js.models.arm7()
    with pytest.raises(TypeError, match="transition_derivatives: argument reuse_hessian"):
        js.transition_derivatives(m, js.make_data(m), reuse_hessian=flag)


# the reused Hessian's columns against the solver's: one solve of the same quadratic model
# against Newton's iterations to its optimum, both exact to round-off (~1e-15 of qacc),
# divided by eps (measured: 6e-9 on the humanoid's B, 2e-10 on A)
REUSE_TOL = 1e-7


@pytest.mark.parametrize("tolerance", [0.0, None])
@pytest.mark.parametrize("name,cone", [("humanoid_lying", "pyramidal"),
                                       ("quadruped_standing", "pyramidal"),
                                       ("humanoid_lying", "elliptic"),
                                       ("box_stack", "elliptic")])
def test_reused_hessian_equals_the_solver(name, cone, tolerance):
    """Control and velocity columns solved once with the unperturbed Hessian.

    Against the solver in every column (reuse_hessian=False, itself checked against
    mjd_transitionFD above) with tolerance 0 and the model's own (1e-8), forward and
    centered; and at eps = 0.05, where perturbations move rows across their zones' bounds
    (checked with forward at the perturbed controls), so that those columns must fall back
    to the solver.
    """
    m, d, _, _ = _setup(name, cone=cone)
    if tolerance is None:
        m.opt.tolerance = 1e-8
        m.opt.iterations = 100
    for centered in (False, True):
        reused = js.transition_derivatives(m, d, EPS, centered)
        solved = js.transition_derivatives(m, d, EPS, centered, reuse_hessian=False)
        for x, y, w in zip(reused, solved, "AB"):
            _close(x, y, f"{name} {cone} centered={centered} {w}", REUSE_TOL)
        # pyramidal rows keep a quadratic model: the reused Hessian served (round-off apart);
        # the humanoid's elliptic contacts on their cones' surfaces leave it to the solver
        assert np.array_equal(reused[0], solved[0]) == (name == "humanoid_lying"
                                                         and cone == "elliptic")
    # large perturbations: some control column leaves a row's zone
    eps = 0.05
    dc = js.make_data(m)
    for f in ("qpos", "qvel", "act", "ctrl", "qacc_warmstart"):
        getattr(dc, f)[:] = getattr(d, f)
    js.forward(m, dc)
    base = dc.efc_state[:dc.nefc[0]].copy()
    flips = 0
    for i in range(m.nu):
        dc.ctrl[:] = d.ctrl
        dc.ctrl[i] = d.ctrl[i] + eps
        dc.qacc_warmstart[:] = d.qacc_warmstart
        js.forward(m, dc)
        flips += int(np.any(dc.efc_state[:dc.nefc[0]] != base))
    reused = js.transition_derivatives(m, d, eps)
    solved = js.transition_derivatives(m, d, eps, reuse_hessian=False)
    for x, y, w in zip(reused, solved, "AB"):
        _close(x, y, f"{name} {cone} eps={eps} {w}", REUSE_TOL)
    if name == "humanoid_lying" and cone == "pyramidal":
        assert flips > 0


@pytest.mark.parametrize("name", ["cheetah", "walker", "hopper", "humanoid", "quadruped",
                                  "humanoid_CMU"])
def test_real_models_match_mjd_transition_fd(name):
    """dm_control suite files in contact, their own solver settings (Newton, tolerance 1e-8).

    200 steps of MuJoCo under random controls, then A and B from the same state and warm
    start (the reused Hessian by default; measured ≤ 9e-9 of the largest entry).
    """
    f = real_model("dm-control", f"dm_control/suite/{name}.xml")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        mjm = mujoco.MjModel.from_xml_path(str(f))
        m = js.load(f)
    mjd = mujoco.MjData(mjm)
    rng = np.random.default_rng(0)
    if mjm.nkey:
        mjd.qpos[:] = mjm.key_qpos[0]
    for _ in range(200):
        mjd.ctrl[:] = rng.uniform(-0.3, 0.3, mjm.nu)
        mujoco.mj_step(mjm, mjd)
    assert mjd.ncon > 0
    d = js.make_data(m)
    d.time = mjd.time
    for field in ("qpos", "qvel", "act", "ctrl", "qacc_warmstart"):
        getattr(d, field)[:] = getattr(mjd, field)
    A, B = js.transition_derivatives(m, d, EPS)
    Am, Bm = _mujoco(mjm, mjd, False)
    _close(A, Am, f"{name} A")
    _close(B, Bm, f"{name} B")
