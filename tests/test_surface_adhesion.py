"""Moving contact surfaces (geom surfacevel) and contact adhesion against MuJoCo 4.0.

A conveyor: a plane whose surface moves (linear and angular surface velocity), a box with
a moving surface of its own and a ball on it (an explicit pair with adhesion), and a pad
under a second, adhesive plane, within reach of its gap (adhesion at a distance: the
in-gap contact stays active, normal-only). Compared: the compiled fields, the contacts
(dim, exclude, adhesion, surfacevel), efc_vel, efc_aref, efc_force, qfrc_adhesion, qacc
and the touch sensors (net interface forces) of mj_forward for every solver, both cones
and condim 1, 3, 4, 6, with the pair's geoms in both orders; 1000 steps against mj_step;
qfrc_inverse against mj_inverse; the inverse's derivatives against mjd_inverseFD, the step's against
mjd_transitionFD; noslip; a box carried along at the belt's speed; bad values.
"""

import mujoco
import numpy as np
import pytest

import jointspace as js
from jointspace.errors import JointspaceError, ModelError
from tests._util import rel_err

# compiled fields and the smooth parts of mj_forward (contacts, efc_vel, efc_aref,
# qfrc_adhesion): the same formulas in another order, rounding relative to max(1, |x|)
SMOOTH_TOL = 1e-9
# efc_force, qacc and the touch sensors go through the iterative solvers. PGS runs as
# MuJoCo's, sweep for sweep: rounding. Newton's and CG's iteration counts can differ from
# MuJoCo's by one at the default tolerance (elliptic cones: forces then differ by up to
# 3e-5), so both run to convergence; Newton then agrees to rounding (measured ≤ 3e-11), CG
# (not MuJoCo's step for step) to the slack of the cost's flat directions
CONVERGED = {"Newton": 'iterations="100" tolerance="1e-15"',
             "CG": 'iterations="2000" tolerance="1e-14"'}
SOLVER_TOL = {"Newton": 1e-9, "CG": 1e-6, "PGS": 1e-9}
# 1000 steps with contacts, Newton converged: rounding compounds (measured ≤ 2e-12)
TRAJECTORY_TOL = 1e-9
# qfrc_inverse: closed-form forces, no solver: rounding (mj_inverse's tolerance in the brief)
INVERSE_TOL = 1e-8
# inverse derivatives, relative to the largest entry: the position columns are differences
# of inverses that agree to ~1e-12, divided by eps = 1e-6 (tests/test_inverse_derivatives.py);
# our velocity and acceleration columns are analytical, MuJoCo's differences, which on an
# elliptic cone's curved surface are off by O(eps) of the curvature (ibid., TOL_VEL_MJ)
DERIV_TOL = 1e-6
DERIV_VEL_ELLIPTIC_TOL = 1e-4
# transition_derivatives and mjd_transitionFD difference the same steps, which agree to
# ~1e-13 (converged Newton): divided by eps = 1e-6
TRANSITION_TOL = 1e-6

BELT = """<mujoco><option cone="{cone}" solver="{solver}" {converged}/>
<worldbody>
<geom name="belt" type="plane" size="2 2 .1" euler="{tilt} 0 0" surfacevel="{sv}"
  condim="{condim}" margin="0.01" gap="0.02"/>
{second}
<body name="box" pos="0.1 0.05 {z}" euler="0 0 20"><freejoint/>
<geom name="box" type="box" size=".1 .08 .05" condim="{condim}" surfacevel="0 0.1 0 0 0 0.3"/>
</body>
<body name="ball" pos="0.6 -0.3 0.099"><freejoint/>
<geom name="ball" type="sphere" size=".1" condim="{condim}"/><site name="ball" size=".12"/>
</body>
<body name="pad" pos="-0.6 0.2 0.555"><freejoint/>
<geom name="pad" type="sphere" size=".05" condim="{condim}" adhesion="8" gap="0.02"/>
<site name="pad" size=".07"/></body>
</worldbody>
<contact><pair geom1="{pg1}" geom2="{pg2}" condim="{condim}" adhesion="1.5" margin="0.005"
  gap="0.03"/></contact>
<sensor><touch site="ball"/><touch site="pad"/></sensor>
</mujoco>"""
# a second, adhesive plane above the pad's sphere, facing down
CEILING = ('<geom name="ceiling" type="plane" size="2 2 .1" pos="0 0 0.62" euler="180 0 0" '
           'adhesion="{adh}" priority="{prio}"/>')


def _xml(cone="pyramidal", solver="Newton", condim=3, sv="0.5 0.2 0 0 0 0.7", tilt=0,
         z=0.049, order=("ball", "belt"), adh=0.5, prio=0):
    converged = CONVERGED.get(solver, "")
    return BELT.format(cone=cone, solver=solver, converged=converged, condim=condim, sv=sv,
                       tilt=tilt, z=z,
                       second=CEILING.format(adh=adh, prio=prio), pg1=order[0], pg2=order[1])


def _pair(xml):
    return js.load_string(xml), mujoco.MjModel.from_xml_string(xml)


def _states(m, seed, n):
    rng = np.random.default_rng(seed)
    for _ in range(n):
        yield rng.normal(scale=0.5, size=m.nv)


def _compare_forward(m, mj, qvel, solver):
    d, md = js.make_data(m), mujoco.MjData(mj)
    d.qvel[:] = md.qvel[:] = qvel
    js.forward(m, d)
    mujoco.mj_forward(mj, md)
    n, nc = md.nefc, md.ncon
    assert d.ncon[0] == nc and d.nefc[0] == n
    np.testing.assert_array_equal(d.contact_geom[:nc], md.contact.geom)
    np.testing.assert_array_equal(d.contact_dim[:nc], md.contact.dim)
    np.testing.assert_array_equal(d.contact_exclude[:nc], md.contact.exclude)
    for name in ("dist", "pos", "frame", "adhesion", "surfacevel"):
        assert rel_err(getattr(d, "contact_" + name)[:nc], getattr(md.contact, name)) \
            <= SMOOTH_TOL, name
    np.testing.assert_array_equal(d.efc_type[:n], md.efc_type)
    for name in ("vel", "aref", "R"):
        assert rel_err(getattr(d, "efc_" + name)[:n], getattr(md, "efc_" + name)) \
            <= SMOOTH_TOL, name
    assert rel_err(d.qfrc_adhesion, md.qfrc_adhesion) <= SMOOTH_TOL
    assert rel_err(d.qfrc_passive, md.qfrc_passive) <= SMOOTH_TOL
    assert rel_err(d.efc_force[:n], md.efc_force) <= SOLVER_TOL[solver]
    assert rel_err(d.qacc, md.qacc) <= SOLVER_TOL[solver]
    # the touch sensors read the net interface force (the cone's force less the adhesion)
    assert rel_err(d.sensordata, md.sensordata) <= SOLVER_TOL[solver]
    return md


def test_compiled_fields_match_mujoco():
    """The compiled geom_surfacevel, geom_adhesion, pair_adhesion and flags.

    surfacevel from 1 to 6 numbers and from default classes; a mesh geom's (and a box
    fitted to the mesh) moved into the mesh's frame.
    """
    xml = """<mujoco><default><geom surfacevel="1 2 3 4 5 6" adhesion="0.5"/>
    <default class="b"><geom surfacevel="7"/></default><pair adhesion="3"/></default>
    <asset><mesh name="m" vertex="0 0 0 1 0 0 0 2 0 0 0 3 1 1 1"/></asset>
    <worldbody><geom name="a" type="plane" size="1 1 .1" surfacevel="0.5 0 -1"/>
    <body pos="0 0 1"><freejoint/><geom name="b" class="b" type="box" size=".1 .1 .1"/>
    <geom type="mesh" mesh="m" pos=".1 .2 .3" euler="10 20 30" surfacevel="1 -2 3 .4 .5 -.6"
      adhesion="-1"/>
    <geom type="box" mesh="m" surfacevel="0 0 0 0 0 1"/></body></worldbody>
    <contact><pair geom1="a" geom2="b"/><pair geom1="a" geom2="b" adhesion="0.25"/></contact>
    </mujoco>"""
    m, mj = _pair(xml)
    for name in ("geom_surfacevel", "geom_adhesion", "pair_adhesion", "geom_pos", "geom_quat"):
        assert rel_err(getattr(m, name), getattr(mj, name)) <= SMOOTH_TOL, name
    assert m.flg_surfacevel[0] == mj.flg_surfacevel == 1
    assert m.flg_adhesion[0] == mj.flg_adhesion == 1
    plain, mjplain = _pair('<mujoco><worldbody><geom size=".1"/></worldbody></mujoco>')
    assert plain.flg_surfacevel[0] == mjplain.flg_surfacevel == 0
    assert plain.flg_adhesion[0] == mjplain.flg_adhesion == 0


def test_set_const_recomputes_the_flags():
    m = js.load_string('<mujoco><worldbody><geom size=".1"/></worldbody></mujoco>')
    m.geom_surfacevel[0, 0] = 1.0
    m.geom_adhesion[0] = 2.0
    js.set_const(m)
    assert m.flg_surfacevel[0] == 1 and m.flg_adhesion[0] == 1
    m.geom_surfacevel[0, 0] = 0.0
    m.geom_adhesion[0] = 0.0
    js.set_const(m)
    assert m.flg_surfacevel[0] == 0 and m.flg_adhesion[0] == 0


@pytest.mark.parametrize("solver", ["Newton", "CG", "PGS"])
@pytest.mark.parametrize("cone", ["pyramidal", "elliptic"])
@pytest.mark.parametrize("condim", [1, 3, 4, 6])
def test_forward_matches_mujoco(solver, cone, condim):
    """Contacts, rows, passive adhesion and qacc at seeded velocities.

    The belt also tilted (its surface velocity is in its own frame; at 12° a corner of the
    box is in the gap, excluded), the explicit pair in both geom orders.
    """
    seen_gap = seen_excluded = seen_sv = 0
    for k, (tilt, order) in enumerate([(0, ("ball", "belt")), (7, ("belt", "ball")),
                                       (12, ("ball", "belt"))]):
        m, mj = _pair(_xml(cone=cone, solver=solver, condim=condim, tilt=tilt, order=order))
        for qvel in _states(m, 11 + k, 2):
            md = _compare_forward(m, mj, qvel, solver)
            seen_gap += int(np.sum((md.contact.dist >= md.contact.includemargin)
                                   & (md.contact.exclude == 0)))
            seen_excluded += int(np.sum(md.contact.exclude == 1))
            seen_sv += int(np.any(md.contact.surfacevel != 0))
    assert seen_gap > 0 and seen_excluded > 0 and seen_sv > 0


@pytest.mark.parametrize("adh, prio", [(0.5, 0), (0.5, 1), (0.5, -1), (-0.3, 0), (0.0, 0)])
def test_adhesion_rules_match_mujoco(adh, prio):
    """Adhesion of two geoms: the sum, or the higher priority geom's.

    Negative adhesion; a pad with adhesion under a plane without: its contacts in the gap
    stay.
    """
    m, mj = _pair(_xml(adh=adh, prio=prio, cone="elliptic"))
    for qvel in _states(m, 3, 2):
        md = _compare_forward(m, mj, qvel, "Newton")
    assert md.ncon >= 4


def test_flags_skip_the_stages_as_mujoco():
    """No surface velocity and no adhesion anywhere: the plain rows, qfrc_adhesion zero."""
    xml = _xml(sv="0 0 0", adh=0).replace('surfacevel="0 0.1 0 0 0 0.3"', "")
    xml = xml.replace('adhesion="8"', "").replace('adhesion="1.5"', "")
    m, mj = _pair(xml)
    assert m.flg_surfacevel[0] == 0 and m.flg_adhesion[0] == 0
    md = _compare_forward(m, mj, next(_states(m, 5, 1)), "Newton")
    assert md.ncon > 0 and not np.any(md.qfrc_adhesion)


@pytest.mark.parametrize("cone", ["pyramidal", "elliptic"])
def test_1000_steps_match_mj_step(cone):
    """The box and ball carried by the belt, the pad pulled up onto the ceiling."""
    m, mj = _pair(_xml(cone=cone, condim=4))
    d, md = js.make_data(m), mujoco.MjData(mj)
    for _ in range(1000):
        js.step(m, d)
        mujoco.mj_step(mj, md)
    assert rel_err(d.qpos, md.qpos) <= TRAJECTORY_TOL
    assert rel_err(d.qvel, md.qvel) <= TRAJECTORY_TOL
    assert md.ncon > 0


@pytest.mark.parametrize("solver", ["Newton", "PGS"])
@pytest.mark.parametrize("cone", ["pyramidal", "elliptic"])
def test_noslip_matches_mujoco(solver, cone):
    """The noslip post-solver on rows whose reference holds the surface velocities."""
    xml = _xml(cone=cone, solver=solver, condim=4, tilt=7, order=("belt", "ball"))
    m, mj = _pair(xml.replace("<option ", '<option noslip_iterations="5" '))
    for qvel in _states(m, 3, 2):
        _compare_forward(m, mj, qvel, solver)
    d, md = js.make_data(m), mujoco.MjData(mj)
    for _ in range(300):
        js.step(m, d)
        mujoco.mj_step(mj, md)
    assert rel_err(d.qpos, md.qpos) <= TRAJECTORY_TOL
    assert rel_err(d.qvel, md.qvel) <= TRAJECTORY_TOL


def test_box_is_carried_at_the_belt_speed():
    """Physics: a box on a belt moving at 0.5 m/s along x moves with it.

    And the pad, 1.5 cm below the ceiling, its weight (5.1 N) less than the adhesion
    (8.5 N), is pulled across the gap and held there.
    """
    xml = _xml(sv="0.5 0 0", condim=3).replace('surfacevel="0 0.1 0 0 0 0.3"', "")
    m = js.load_string(xml)
    d = js.make_data(m)
    for _ in range(1500):
        js.step(m, d)
    box = m.body("box")
    v = d.qvel[6 * (box - 1):6 * (box - 1) + 3]
    assert abs(v[0] - 0.5) < 1e-3 and abs(v[1]) < 1e-3
    pad = m.body("pad")
    assert abs(d.xpos[pad, 2] - (0.62 - 0.05)) < 5e-3 and np.max(np.abs(d.qvel[12:18])) < 1e-3


@pytest.mark.parametrize("cone", ["pyramidal", "elliptic"])
def test_inverse_matches_mj_inverse(cone):
    """qfrc_inverse at seeded qacc: surface velocities shift the reference, adhesion pulls."""
    m, mj = _pair(_xml(cone=cone, condim=4))
    d, md = js.make_data(m), mujoco.MjData(mj)
    rng = np.random.default_rng(7)
    for qvel in _states(m, 9, 3):
        d.qvel[:] = md.qvel[:] = qvel
        qacc = rng.normal(scale=3.0, size=m.nv)
        d.qacc[:] = md.qacc[:] = qacc
        js.inverse(m, d)
        mujoco.mj_inverse(mj, md)
        assert rel_err(d.qfrc_inverse, md.qfrc_inverse) <= INVERSE_TOL
        assert rel_err(d.efc_force[:md.nefc], md.efc_force) <= INVERSE_TOL


@pytest.mark.parametrize("cone", ["pyramidal", "elliptic"])
def test_inverse_derivatives_match_mjd_inverse_fd(cone):
    """Adhesion's pull varies with the pose; the surface velocities shift the reference."""
    m, mj = _pair(_xml(cone=cone, condim=3))
    d, md = js.make_data(m), mujoco.MjData(mj)
    d.qvel[:] = md.qvel[:] = next(_states(m, 13, 1))
    js.forward(m, d)
    d.qacc[:] += 0.5 * np.random.default_rng(2).normal(size=m.nv)
    md.qacc[:] = d.qacc
    ours = js.inverse_derivatives(m, d, 1e-6)
    nv = m.nv
    theirs = [np.zeros((nv, nv)) for _ in range(3)]
    mujoco.mjd_inverseFD(mj, md, 1e-6, 0, *theirs, None, None, None, None)
    assert md.ncon > 0 and np.any(md.qfrc_adhesion)
    for x, y, w in zip(ours, theirs, ("DfDq", "DfDv", "DfDa")):
        tol = DERIV_VEL_ELLIPTIC_TOL if w == "DfDv" and cone == "elliptic" else DERIV_TOL
        scale = max(1.0, float(np.max(np.abs(y))))
        assert float(np.max(np.abs(x - y.T))) <= tol * scale, w


@pytest.mark.parametrize("cone", ["pyramidal", "elliptic"])
def test_transition_derivatives_match_mjd_transition_fd(cone):
    """A of one step (forward differences of steps, eps 1e-6) equals mjd_transitionFD's."""
    m, mj = _pair(_xml(cone=cone, condim=4))
    d, md = js.make_data(m), mujoco.MjData(mj)
    for _ in range(20):
        mujoco.mj_step(mj, md)
    d.qpos[:], d.qvel[:], d.qacc_warmstart[:] = md.qpos, md.qvel, md.qacc_warmstart
    nx = 2 * mj.nv
    A = np.zeros((nx, nx))
    mujoco.mjd_transitionFD(mj, md, 1e-6, False, A, None, None, None)
    a, _ = js.transition_derivatives(m, d, eps=1e-6)
    assert md.ncon > 0 and np.any(md.qfrc_adhesion)
    scale = max(1.0, float(np.max(np.abs(A))))
    assert float(np.max(np.abs(a - A))) <= TRANSITION_TOL * scale


@pytest.mark.parametrize("xml, what", [
    ('<mujoco><worldbody>\n<geom size=".1" surfacevel="1 2 3 4 5 6 7"/></worldbody></mujoco>',
     "surfacevel"),
    ('<mujoco><worldbody>\n<geom size=".1" adhesion="1 2"/></worldbody></mujoco>', "adhesion"),
    ('<mujoco><worldbody>\n<geom size=".1" surfacevel="1 x"/></worldbody></mujoco>',
     "surfacevel"),
    ('<mujoco><worldbody><geom name="a" size=".1"/><body><freejoint/><geom name="b" '
     'size=".1"/></body></worldbody><contact>\n<pair geom1="a" geom2="b" adhesion="1 2"/>'
     '</contact></mujoco>', "adhesion"),
])
def test_bad_values_are_refused(xml, what):
    with pytest.raises(ValueError):
        mujoco.MjModel.from_xml_string(xml)
    with pytest.raises(ModelError, match=rf"<string>:2 <(geom|pair)>.*{what}"):
        js.load_string(xml)


@pytest.mark.parametrize("attr", ['surfacevel="nan 0 0"', 'adhesion="inf"'])
def test_non_finite_values_are_refused(attr):
    """MuJoCo loads them (with a warning); jointspace refuses them, naming the attribute."""
    xml = f'<mujoco><worldbody><geom size=".1" {attr}/></worldbody></mujoco>'
    mujoco.MjModel.from_xml_string(xml)
    with pytest.raises(ModelError, match=attr.split("=")[0]):
        js.load_string(xml)


def test_contact_forces_are_the_net_force_of_mj_contact_force():
    """rigid.contact_forces: the normal less the adhesion (negative under tension)."""
    m, mj = _pair(_xml(cone="pyramidal", condim=3, tilt=7, order=("belt", "ball")))
    d, md = js.make_data(m), mujoco.MjData(mj)
    js.forward(m, d)
    mujoco.mj_forward(mj, md)
    ours = js.rigid.contact_forces(m, d)
    theirs = np.zeros((md.ncon, 6))
    for c in range(md.ncon):
        mujoco.mj_contactForce(mj, md, c, theirs[c])
    assert np.any(theirs[:, 0] < 0)
    assert rel_err(ours, theirs[:, :3]) <= SOLVER_TOL["Newton"]
    with pytest.raises(JointspaceError, match="surfacevel"):
        js.rigid.inverse_dynamics(m, d, np.zeros(m.nv))
