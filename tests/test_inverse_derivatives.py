"""Jacobians of the inverse with contacts (inverse_derivatives) against mujoco.mjd_inverseFD.

With `analytic=False` both libraries differentiate the inverse at the same state, forward
differences with the same eps (MuJoCo's definition; its outputs are the transposes of
ours), on the scenes of tests/test_inverse.py: the humanoid lying (11 contacts), the
quadruped, a box stack and the mixed scene (condim 1, 3, 4, 6 contacts, friction loss,
limits, an equality), both cones. By default the position columns of plane–sphere and
plane–capsule contacts and of hinge and slide limits and springs are closed-form: checked
against centered differences with a smaller eps, whose truncation error is below the bound.
"""

import math

import mujoco
import numpy as np
import pytest

import jointspace as js
from jointspace import constraint as C
from jointspace.errors import JointspaceError
from jointspace.types import ENBL_INVDISCRETE
from tests.test_inverse import _scene

TOL = 1e-6  # relative to the largest entry: the same differences of inverses that agree
EPS = 1e-6  # to ~1e-12, divided by eps
# qfrc_inverse left in d against mj_inverse at the same state: closed-form forces on the
# same rows (test_inverse's bound)
INVERSE_TOL = 1e-8
TOL_ACC = 1e-7  # analytical ∂f/∂qacc, ∂f/∂qvel vs central differences (issue 21's bound)
# our analytical ∂f/∂qvel vs MuJoCo's forward differences: on an elliptic contact on the
# cone's curved surface they carry a truncation error ~ eps B² (curvature), B ~ 1/timeconst
# (measured 2e-5 relative on the humanoid; central differences agree to 1e-7, below)
TOL_VEL_MJ = 1e-4


def _state(name, cone, seed=0):
    m, d, mjm, mjd = _scene(name, cone)
    js.forward(m, d)
    rng = np.random.default_rng(seed)
    d.qacc[:] = d.qacc + 0.5 * rng.normal(size=m.nv)
    d.ctrl[:] = mjd.ctrl[:] = rng.uniform(-0.3, 0.3, m.nu)
    mjd.qpos[:] = d.qpos
    mjd.qvel[:] = d.qvel
    mjd.qacc[:] = d.qacc
    return m, d, mjm, mjd


def _mujoco(mjm, mjd, actuation):
    nv = mjm.nv
    out = [np.zeros((nv, nv)) for _ in range(3)]
    mujoco.mjd_inverseFD(mjm, mjd, EPS, actuation, *out, None, None, None, None)
    return [x.T for x in out]


def _centered_position_columns(m, d, eps=EPS):
    """Centered differences of the whole inverse (`js.inverse`) over qpos, on the manifold."""
    q0 = d.qpos.copy()
    cols = []
    for j in range(m.nv):
        f = []
        for s in (1.0, -1.0):
            d.qpos[:] = js.integrate_pos(m, q0, np.eye(m.nv)[j], s * eps)
            js.inverse(m, d)
            f.append(d.qfrc_inverse.copy())
        cols.append((f[0] - f[1]) / (2 * eps))
    d.qpos[:] = q0
    return np.array(cols).T


def _close(actual, desired, what, tol=TOL):
    scale = max(1.0, float(np.max(np.abs(desired))))
    err = float(np.max(np.abs(actual - desired)))
    assert err <= tol * scale, f"{what}: max error {err:.3g} > {tol:.1g} × {scale:.3g}"


@pytest.mark.parametrize("cone", ["pyramidal", "elliptic"])
@pytest.mark.parametrize("name", ["humanoid_lying", "quadruped_standing", "box_stack", "mixed"])
def test_matches_mjd_inverse_fd(name, cone):
    m, d, mjm, mjd = _state(name, cone)
    q, v, a = d.qpos.copy(), d.qvel.copy(), d.qacc.copy()
    for actuation in (False, True):
        ours = js.inverse_derivatives(m, d, EPS, actuation, analytic=False)
        theirs = _mujoco(mjm, mjd, actuation)
        # d ends with the inverse at the given state (MuJoCo's at its last perturbed one)
        mujoco.mj_inverse(mjm, mjd)
        assert d.ncon[0] == mjd.ncon > 0
        _close(d.qfrc_inverse, mjd.qfrc_inverse, f"{name} {cone} qfrc_inverse", INVERSE_TOL)
        for x, y, w in zip(ours, theirs, ("DfDq", "DfDv", "DfDa")):
            tol = TOL_VEL_MJ if w == "DfDv" and cone == "elliptic" else TOL
            _close(x, y, f"{name} {cone} {w} actuation={actuation}", tol)
        np.testing.assert_array_equal(d.qpos, q)
        np.testing.assert_array_equal(d.qvel, v)
        np.testing.assert_array_equal(d.qacc, a)


@pytest.mark.parametrize("name", ["humanoid_lying", "mixed", "ball_condim6"])
def test_analytical_derivatives_match_central_differences(name):
    """∂f/∂qacc = M + Jᵀ H J and ∂f/∂qvel in every zone (quadratic, satisfied, cone, …).

    ∂f/∂qvel is analytical on the humanoid and the ball (no equality rows), centered
    differences on the mixed scene (its equality). The accelerations are spread (σ up to 30) so that
    elliptic contacts land inside the cone, on its surface and at the tip, and pyramidal
    rows on both sides of zero.
    """
    states = set()
    for cone in ("pyramidal", "elliptic"):
        m, d, _, _ = _state(name, cone)
        a0 = d.qacc.copy()
        rng = np.random.default_rng(5)
        for sigma in (0.0, 1.0, 30.0):
            a = a0 + sigma * rng.normal(size=m.nv)
            d.qacc[:] = a
            _, Fv, Fa = js.inverse_derivatives(m, d, EPS, centered=True)
            states |= set(d.efc_state[:d.nefc[0]].tolist())
            for F, x, w in ((Fa, d.qacc, "qacc"), (Fv, d.qvel, "qvel")):
                x0 = x.copy()
                cols = []
                for j in range(m.nv):
                    f = []
                    for s in (1.0, -1.0):
                        x[:] = x0
                        x[j] += s * EPS
                        js.inverse(m, d)
                        f.append(d.qfrc_inverse.copy())
                    cols.append((f[0] - f[1]) / (2 * EPS))
                x[:] = x0
                scale = max(1.0, float(np.max(np.abs(F))))
                err = float(np.max(np.abs(F - np.array(cols).T)))
                assert err <= TOL_ACC * scale, f"{name} {cone} σ={sigma} ∂/∂{w}: {err:.3g}"
    assert C.STATE_QUADRATIC in states and C.STATE_SATISFIED in states
    if name != "mixed":
        assert C.STATE_CONE in states


@pytest.mark.parametrize("name", ["humanoid_lying", "mixed"])
def test_position_derivative_matches_central_differences(name):
    """∂f/∂qpos, centered, equals centered differences of the whole inverse.

    Ours (`analytic=False`) is the analytical ∂(M qacc + c)/∂qpos plus centered differences
    of the rest; the reference perturbs qpos through integrate_pos and runs js.inverse.
    """
    for cone in ("pyramidal", "elliptic"):
        m, d, _, _ = _state(name, cone)
        Fq, _, _ = js.inverse_derivatives(m, d, EPS, centered=True, analytic=False)
        _close(Fq, _centered_position_columns(m, d), f"{name} {cone} ∂/∂qpos", TOL_ACC)


def test_position_derivative_is_analytical_in_its_smooth_part():
    """No constraint row and no spring: ∂f/∂qpos is rnea_derivatives' ∂τ/∂q, to round-off.

    arm7's passive force (damping) does not depend on qpos, so the differenced rest is zero
    and what remains is the analytical ∂(M qacc + c)/∂qpos; forward differences of the
    whole force would be ~eps away from it.
    """
    m = js.models.arm7()
    d = js.make_data(m)
    rng = np.random.default_rng(7)
    q = m.qpos0 + 0.1 * rng.normal(size=m.nq)
    v, a = rng.normal(size=m.nv), rng.normal(size=m.nv)
    d.qpos[:], d.qvel[:], d.qacc[:] = q, v, a
    Fq, _, _ = js.inverse_derivatives(m, d, EPS)
    assert d.nefc[0] == 0 and not m.jnt_stiffness.any()
    dtau_dq = js.rnea_derivatives(m, d, q, v, a)[0]
    assert np.max(np.abs(Fq - dtau_dq)) <= 1e-12 * max(1.0, np.max(np.abs(dtau_dq)))


def test_discrete_inverse_matches_mujoco():
    """With the invdiscrete flag both differentiate the step's inverse (Euler, damped)."""
    m, d, mjm, mjd = _state("mixed", "elliptic", seed=3)
    m.opt.enableflags |= ENBL_INVDISCRETE
    mjm.opt.enableflags |= mujoco.mjtEnableBit.mjENBL_INVDISCRETE
    for x, y, w in zip(js.inverse_derivatives(m, d, EPS), _mujoco(mjm, mjd, False),
                       ("DfDq", "DfDv", "DfDa")):
        _close(x, y, f"discrete {w}")


def test_centered_differences_agree_with_forward_ones():
    """The mixed scene away from kinks: forward and centered differences within O(eps)."""
    m, d, _, _ = _state("mixed", "pyramidal", seed=4)
    fwd = js.inverse_derivatives(m, d, EPS)
    cen = js.inverse_derivatives(m, d, EPS, centered=True)
    for x, y in zip(fwd, cen):
        assert np.max(np.abs(x - y)) <= 1e-3 * max(1.0, np.max(np.abs(y)))


@pytest.mark.parametrize("eps", [0.0, -1e-6, math.nan, math.inf, True, "1e-6", None])
def test_bad_eps_is_refused(eps):
    m = js.models.arm7()
    with pytest.raises(ValueError, match="inverse_derivatives: argument eps"):
        js.inverse_derivatives(m, js.make_data(m), eps)


@pytest.mark.parametrize("flag", [1, "no", None, np.array([False])])
def test_bad_analytic_is_refused(flag):
    m = js.models.arm7()
    with pytest.raises(TypeError, match="inverse_derivatives: argument analytic"):
        js.inverse_derivatives(m, js.make_data(m), analytic=flag)


def test_bad_state_and_rk4_discrete_are_refused():
    m = js.models.arm7()
    d = js.make_data(m)
    d.qacc[2] = math.nan
    with pytest.raises(JointspaceError, match="inverse_derivatives: .* is NaN"):
        js.inverse_derivatives(m, d)
    d.qacc[2] = 0.0
    m.opt.integrator = "RK4"
    m.opt.enableflags |= ENBL_INVDISCRETE
    with pytest.raises(JointspaceError, match="not defined for the RK4 integrator"):
        js.inverse_derivatives(m, d)


# Three trees and a free box: a hinge–ball–hinge arm whose tip rests on the box, a
# slide–hinge bar across the box and the floor; with an adhesion actuator on the arm's tip
# (its moment reads every contact, so the position columns then collide every pair)
LIMBS = """<mujoco model="limbs"><option timestep="0.002"/>
<default><joint damping="0.5"/><geom friction="0.8 0.02 0.01"/></default>
<worldbody>
  <geom name="floor" type="plane" size="2 2 .1"/>
  <body name="box" pos="0.35 0 0.1"><freejoint/><geom type="box" size=".1 .1 .1" mass="2"/>
  </body>
  <body name="a1" pos="0 0 0.45"><joint type="hinge" axis="0 1 0" range="-60 60"/>
    <geom type="capsule" fromto="0 0 0 0.25 0 0" size=".04"/>
    <body name="a2" pos="0.25 0 0"><joint type="ball"/>
      <geom type="capsule" fromto="0 0 0 0.2 0 -0.05" size=".04"/>
      <body name="a3" pos="0.2 0 -0.05"><joint type="hinge" axis="0 1 0"/>
        <geom type="sphere" size=".05"/></body></body></body>
  <body name="c1" pos="0.35 0.2 0.5"><joint type="slide" axis="0 0 1"/>
    <joint type="hinge" axis="1 0 0"/>
    <geom type="capsule" fromto="0 0 0 0 -0.2 0" size=".04"/></body>
</worldbody>
<actuator>ACTUATORS</actuator>
</mujoco>"""


@pytest.mark.parametrize("adhesion", [False, True])
@pytest.mark.parametrize("cone", ["pyramidal", "elliptic"])
def test_position_columns_by_subtree(cone, adhesion):
    """∂f/∂qpos with contacts between trees, on a free body, under a ball joint.

    Column i collides only the pairs with a geom in dof i's subtree and differences their
    contacts' forces against the same contacts at the given state; the others keep theirs.
    Against mjd_inverseFD (every pair collided in every column) and centered differences of
    the whole inverse.
    """
    act = '<adhesion body="a3" ctrlrange="0 1" gain="5"/>' if adhesion else ""
    xml = LIMBS.replace("ACTUATORS", act)
    m = js.load_string(xml)
    mjm = mujoco.MjModel.from_xml_string(xml)
    mjd = mujoco.MjData(mjm)
    mjd.ctrl[:] = 0.5
    for _ in range(400):
        mujoco.mj_step(mjm, mjd)
    m.opt.cone = cone
    mjm.opt.cone = 0 if cone == "pyramidal" else 1
    d = js.make_data(m)
    d.qpos[:], d.qvel[:], d.ctrl[:] = mjd.qpos, mjd.qvel, mjd.ctrl
    js.forward(m, d)
    d.qacc[:] = d.qacc + 0.5 * np.random.default_rng(5).normal(size=m.nv)
    mjd.qacc[:] = d.qacc
    ours = js.inverse_derivatives(m, d, EPS)
    theirs = _mujoco(mjm, mjd, False)
    bodies = {tuple(sorted(m.geom_bodyid[g])) for g in d.contact_geom[:d.ncon[0]]}
    # floor–box, floor–bar, box–arm tip and box–bar: contacts on three trees
    assert {(0, 1), (0, 5), (1, 4), (1, 5)} <= bodies, bodies
    for x, y, w in zip(ours, theirs, ("DfDq", "DfDv", "DfDa")):
        tol = TOL_VEL_MJ if w == "DfDv" and cone == "elliptic" else TOL
        _close(x, y, f"limbs {cone} adhesion={adhesion} {w}", tol)
    Fq = js.inverse_derivatives(m, d, EPS, centered=True)[0]
    _close(Fq, _centered_position_columns(m, d), f"limbs {cone} adhesion={adhesion} centered "
           f"∂/∂qpos", TOL_ACC)


# Two pendulums on separate trees whose tips are 1 cm apart, and a bar on a third: a large
# perturbation (0.05 rad) of the first alone brings its tip into the second's, while the
# second's own turns its tip away; a box lies on the floor
PENDULUMS = """<mujoco model="pendulums"><option timestep="0.002"/>
<worldbody>
  <geom name="floor" type="plane" size="2 2 .1"/>
  <body name="box" pos="0.5 0.5 0.1"><freejoint/><geom type="box" size=".1 .1 .1"/></body>
  <body name="a" pos="0 0 0.6"><joint type="hinge" axis="0 1 0" stiffness="2" range="-1 1"/>
    <geom type="capsule" fromto="0 0 0 0 0 -0.3" size=".02"/>
    <body pos="0 0 -0.3"><geom type="sphere" size=".045"/></body></body>
  <body name="b" pos="-0.1 0 0.6"><joint type="hinge" axis="0 1 0" range="-1 1"/>
    <geom type="capsule" fromto="0 0 0 0 0 -0.3" size=".02"/>
    <body pos="0 0 -0.3"><geom type="sphere" size=".045"/></body></body>
  <body name="c" pos="-1 -1 0.6"><joint type="hinge" axis="1 0 0"/>
    <geom type="capsule" fromto="0 0 0 0 0 -0.3" size=".02"/></body>
</worldbody>
</mujoco>"""


def test_position_columns_grouped_keep_contacts_between_subtrees():
    """Grouped columns equal the columns one by one, also where a column makes a contact.

    Dofs in different subtrees may share one perturbation; two whose geoms could meet
    within it may not (a contact between the pendulums appears in one column alone). With
    eps = 0.05 and `analytic=False` (the closed form sees no contact appear) both our
    position Jacobian and the reference, the analytical ∂(M qacc + c)/∂q plus forward
    differences of −qfrc_passive − qfrc_constraint from `inverse` at each perturbed state,
    see it.
    """
    m = js.load_string(PENDULUMS)
    d = js.make_data(m)
    rng = np.random.default_rng(11)
    d.qvel[:] = 0.1 * rng.normal(size=m.nv)
    d.qacc[:] = rng.normal(size=m.nv)
    q0, v0, a0 = d.qpos.copy(), d.qvel.copy(), d.qacc.copy()
    eps = 0.05
    Fq = js.inverse_derivatives(m, d, eps, analytic=False)[0]
    js.inverse(m, d)
    assert d.ncon[0] == 4  # the box on the floor only
    rest0 = -(d.qfrc_passive + d.qfrc_constraint)
    cols = []
    ncon = []
    for j in range(m.nv):
        d.qpos[:] = js.integrate_pos(m, q0, np.eye(m.nv)[j], eps)
        js.inverse(m, d)
        ncon.append(int(d.ncon[0]))
        cols.append((-(d.qfrc_passive + d.qfrc_constraint) - rest0) / eps)
    d.qpos[:] = q0
    assert ncon[6] > 4  # pendulum a's column: its tip in pendulum b's
    expected = js.rnea_derivatives(m, d, q0, v0, a0)[0] + np.array(cols).T
    _close(Fq, expected, "pendulums ∂/∂qpos", 1e-10)


# A ball joint with a spring and a limit over a capsule and a sphere on a limited hinge with a
# spring, a slide–hinge bar (limited slide with a spring), a free capsule with a sphere, a
# box on a hinge and a free mesh (a tilted wedge): every closed-form path of the position
# columns (the ball's limit and spring differenced)
PLANE_JOINTS = """<mujoco model="plane joints"><option timestep="0.002"/>
<default><geom friction="0.8 0.02 0.01" solimp="0.9 0.95 0.01 0.5 2"/></default>
<asset><mesh name="wedge" vertex="-.08 -.06 0  .08 -.06 0  -.08 .06 0  .08 .06 0  0 -.06 .07
  0 .06 .07"/></asset>
<worldbody>
  <geom type="plane" size="3 3 .1"/>
  <body pos="0 0 0.2"><joint type="ball" stiffness="2" range="0 3" damping="1"/>
    <geom type="capsule" fromto="0 0 0 0.25 0 -0.22" size="0.04"/>
    <body pos="0.25 0 -0.22">
      <joint type="hinge" axis="0 1 0" stiffness="3" range="-2 2" damping="0.5"/>
      <geom type="sphere" size="0.05" pos="0.05 0 0"/></body></body>
  <body pos="0.6 0 0.2">
    <joint type="slide" axis="0 0 1" stiffness="10" range="-0.01 0.01" damping="1"/>
    <joint type="hinge" axis="1 0 0" damping="0.3"/>
    <geom type="capsule" fromto="0 -0.2 -0.15 0 0.2 -0.1" size=".04"/></body>
  <body pos="-0.6 0 0.05"><freejoint/>
    <geom type="capsule" fromto="-0.1 0 0 0.1 0.05 0.0" size="0.04"/>
    <geom type="sphere" size="0.03" pos="0 0.1 0"/></body>
  <body pos="0 0.6 0.15"><joint type="hinge" axis="1 0 0" damping="0.2"/>
    <geom type="box" size=".05 .1 .04" pos="0 0.1 -0.1" euler="10 0 0"/></body>
  <body pos="0 -0.6 0.05" euler="3 4 0"><freejoint/><geom type="mesh" mesh="wedge"/></body>
</worldbody>
</mujoco>"""
# analytical position columns against centered differences of the whole inverse at this eps:
# their truncation error (~eps² × the contacts' third derivative) measured 9e-9 relative on
# the humanoid, the analytical columns' distance from them falling as eps² down to 1e-9
EPS_REF = 1e-7


def _plane_joints(cone):
    m = js.load_string(PLANE_JOINTS)
    mjm = mujoco.MjModel.from_xml_string(PLANE_JOINTS)
    mjd = mujoco.MjData(mjm)
    for _ in range(300):
        mujoco.mj_step(mjm, mjd)
    m.opt.cone = cone
    mjm.opt.cone = 0 if cone == "pyramidal" else 1
    d = js.make_data(m)
    d.qpos[:], d.qvel[:] = mjd.qpos, mjd.qvel
    js.forward(m, d)
    mjd.qacc[:] = d.qacc
    return m, d, mjm, mjd


@pytest.mark.parametrize("name", ["humanoid_lying", "quadruped_standing", "plane_joints"])
def test_analytical_position_columns_match_central_differences(name):
    """Plane–sphere, –capsule, –box, –mesh contacts, hinge and slide limits and springs.

    ∂f/∂qpos by default equals centered differences of the whole inverse (eps 1e-7) in every
    zone of the contacts' forces (accelerations spread by σ up to 30, as for ∂/∂qacc). The
    columns are differenced nowhere on the humanoid and the quadruped (the result does not
    depend on eps); on plane_joints the ball joint's spring and limit are, and that scene
    has contacts below the ball, a limited ball, hinge and slide, a free body's capsule.
    """
    states = set()
    for cone in ("pyramidal", "elliptic"):
        if name == "plane_joints":
            m, d, _, _ = _plane_joints(cone)
            types = set(d.efc_type[:d.nefc[0]].tolist())
            assert d.ncon[0] >= 12 and C.CNSTR_LIMIT_JOINT in types
            kinds = {int(m.geom_type[g]) for g in d.contact_geom[:d.ncon[0], 1]}
            assert kinds == {2, 3, 6, 7}  # sphere, capsule, box, mesh
        else:
            m, d, _, _ = _state(name, cone)
        a0 = d.qacc.copy()
        rng = np.random.default_rng(5)
        for sigma in (0.0, 1.0, 30.0):
            d.qacc[:] = a0 + sigma * rng.normal(size=m.nv)
            Fq = js.inverse_derivatives(m, d, EPS, centered=True)[0]
            states |= set(d.efc_state[:d.nefc[0]].tolist())
            _close(Fq, _centered_position_columns(m, d, EPS_REF),
                   f"{name} {cone} σ={sigma} ∂/∂qpos", TOL_ACC)
            if name != "plane_joints":
                np.testing.assert_array_equal(js.inverse_derivatives(m, d, 1e-3)[0], Fq)
    assert C.STATE_QUADRATIC in states and C.STATE_SATISFIED in states
    assert C.STATE_CONE in states


def test_analytical_and_differenced_position_columns_agree_to_truncation():
    """MuJoCo's forward differences are eps away from the closed form, ours the same way.

    On the humanoid: `analytic=False` equals mjd_inverseFD (above); both differ from the
    closed form by the same O(eps) truncation (~7e-4 relative: the contacts' stiffness
    varies fast with their depth), which centered differences shrink to O(eps²).
    """
    m, d, mjm, mjd = _state("humanoid_lying", "elliptic")
    exact = js.inverse_derivatives(m, d, EPS)[0]
    fwd = js.inverse_derivatives(m, d, EPS, analytic=False)[0]
    cen = js.inverse_derivatives(m, d, EPS, centered=True, analytic=False)[0]
    scale = float(np.max(np.abs(exact)))
    err_fwd = float(np.max(np.abs(fwd - exact))) / scale
    err_cen = float(np.max(np.abs(cen - exact))) / scale
    _close(fwd, _mujoco(mjm, mjd, False)[0], "humanoid forward differences")
    assert 1e-5 < err_fwd < 1e-2 and err_cen < 1e-2 * err_fwd, (err_fwd, err_cen)
