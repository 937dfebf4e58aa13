"""Constraint rows (efc_*) and forward dynamics with constraints against MuJoCo's mj_forward.

Scenes without contacts (collidable geoms are off): a pendulum with friction loss and limits
on hinge, slide and ball joints; four-bar loops closed with `connect` and with `weld`; joint
couplings with a quartic polycoef; an inactive weld. Scenes with contacts, reached by
stepping MuJoCo: the humanoid lying on the floor, the quadruped standing, a stack of five
boxes, a ball (condim 6) and a capsule (condim 4) rolling, each with pyramidal and elliptic
cones; contacts are matched to MuJoCo's by geoms and position, since box-box contacts may
come in another order. Rows, softness and reference
accelerations must match MuJoCo field by field; with the Newton solver, qacc and efc_force
must match to the solver tolerance, and our cost at our qacc may not exceed our cost at
MuJoCo's qacc. Also: the (ε, κ) parameterization, the row capacity njmax, the paper's
critically damped constraint stabilization (004 §V).
"""

import mujoco
import numpy as np
import pytest

import jointspace as js
from jointspace import constraint as C
from jointspace.errors import JointspaceWarning
from jointspace.io.mjcf import parse_mjcf

ROW_TOL = 1e-9  # efc_J, efc_pos, efc_R, efc_D, efc_aref (relative to max(1, |x|)): same sums
SOLVE_TOL = 1e-6  # qacc, efc_force with Newton, relative to the largest entry: tolerance 1e-8
COST_TOL = 1e-8  # our cost ≤ cost at MuJoCo's qacc × (1 + COST_TOL)
NSTATES = 4

LIMITS = """<mujoco model="limits">
<option timestep="0.002"/>
<default><geom contype="0" conaffinity="0"/></default>
<worldbody>
 <body name="a" pos="0 0 1">
  <joint name="h" type="hinge" axis="0 1 0" limited="true" range="-0.5 0.5"
         frictionloss="0.3" margin="0.01"/>
  <geom type="capsule" fromto="0 0 0 0.3 0 0" size="0.04"/>
  <body name="b" pos="0.3 0 0">
   <joint name="s" type="slide" axis="1 0 0" limited="true" range="-0.1 0.1"
          frictionloss="0.1" solreflimit="0.03 0.8" solimplimit="0.8 0.95 0.01 0.4 3"/>
   <geom type="box" size="0.05 0.05 0.05"/>
   <body name="c" pos="0.1 0 0">
    <joint name="ball" type="ball" limited="true" range="0 0.6" frictionloss="0.05"
           solreffriction="-500 -20" armature="0.01"/>
    <geom type="capsule" fromto="0 0 0 0 0 -0.3" size="0.03"/>
    <body name="d" pos="0 0 -0.3">
     <joint name="h2" type="hinge" axis="1 0 0" limited="true" range="-1 0.2"
            solreflimit="-2000 -30" solimplimit="0.5 0.99 0.05 0.5 1"/>
     <geom type="sphere" size="0.05"/>
    </body>
   </body>
  </body>
 </body>
</worldbody>
</mujoco>"""

# Two planar four-bars: (l1, l2) and l3 hinged to the ground, the loop closed by a connect
# (coupler tip to l3's tip) and, in the second, by a weld of the coupler tip to l4, which
# hangs on its own hinge from l3. A slide/hinge pair coupled by a quartic, and a free body
# welded to the world with an explicit relpose and torquescale.
LOOPS = """<mujoco model="loops">
<default><geom contype="0" conaffinity="0"/></default>
<worldbody>
 <body name="l1">
  <joint name="j1" type="hinge" axis="0 1 0"/>
  <geom type="capsule" fromto="0 0 0 0 0 0.5" size="0.02"/>
  <body name="l2" pos="0 0 0.5">
   <joint name="j2" type="hinge" axis="0 1 0"/>
   <geom type="capsule" fromto="0 0 0 0.6 0 0" size="0.02"/>
  </body>
 </body>
 <body name="l3" pos="0.6 0 0">
  <joint name="j3" type="hinge" axis="0 1 0"/>
  <geom type="capsule" fromto="0 0 0 0 0 0.5" size="0.02"/>
 </body>
 <body name="m1" pos="0 1 0">
  <joint name="i1" type="hinge" axis="0 1 0"/>
  <geom type="capsule" fromto="0 0 0 0 0 0.5" size="0.02"/>
  <body name="m2" pos="0 0 0.5">
   <joint name="i2" type="hinge" axis="0 1 0"/>
   <geom type="capsule" fromto="0 0 0 0.6 0 0" size="0.02"/>
  </body>
 </body>
 <body name="m3" pos="0.6 1 0">
  <joint name="i3" type="hinge" axis="0 1 0"/>
  <geom type="capsule" fromto="0 0 0 0 0 0.5" size="0.02"/>
  <body name="m4" pos="0 0 0.5">
   <joint name="i4" type="hinge" axis="0 1 0"/>
   <geom type="sphere" size="0.05"/>
  </body>
 </body>
 <body name="p1" pos="-1 0 0">
  <joint name="k1" type="slide" axis="1 0 0"/>
  <geom type="sphere" size="0.1"/>
  <body name="p2">
   <joint name="k2" type="hinge" axis="0 0 1"/>
   <geom type="capsule" fromto="0 0 0 0.3 0 0" size="0.03"/>
  </body>
 </body>
 <body name="free" pos="1 1 1">
  <freejoint/>
  <geom type="box" size="0.1 0.2 0.3"/>
 </body>
 <body name="ghost" pos="2 0 0">
  <joint name="g" type="hinge" axis="0 0 1"/>
  <geom type="box" size="0.1 0.1 0.1"/>
 </body>
</worldbody>
<equality>
 <connect body1="l2" body2="l3" anchor="0.6 0 0"/>
 <weld body1="m2" body2="m4" anchor="0.6 0 0" solref="0.05 1.2"
       solimp="0.8 0.95 0.002 0.3 2" torquescale="2"/>
 <joint joint1="k1" joint2="k2" polycoef="0.1 0.5 0.2 -0.1 0.05"/>
 <joint joint1="j3" polycoef="0.2 0 0 0 0"/>
 <weld body1="free" relpose="0 0 1 1 0 0 0" torquescale="0.5"/>
 <weld body1="ghost" active="false"/>
</equality>
</mujoco>"""


# The same kinds of loops closed between sites (MuJoCo's site semantics): a connect of the
# coupler's tip site to l3's tip site, a weld of two rotated sites (site2's orientation
# enters the rows) with torquescale, and a free body welded to a rotated world site.
SITES = """<mujoco model="sites">
<default><geom contype="0" conaffinity="0"/></default>
<worldbody>
 <site name="w" pos="1 1 1.2" euler="0.3 0 0.5"/>
 <body name="l1">
  <joint name="j1" type="hinge" axis="0 1 0"/>
  <geom type="capsule" fromto="0 0 0 0 0 0.5" size="0.02"/>
  <body name="l2" pos="0 0 0.5">
   <joint name="j2" type="hinge" axis="0 1 0"/>
   <geom type="capsule" fromto="0 0 0 0.6 0 0" size="0.02"/>
   <site name="tip2" pos="0.6 0 0"/>
  </body>
 </body>
 <body name="l3" pos="0.6 0 0">
  <joint name="j3" type="hinge" axis="0 1 0"/>
  <geom type="capsule" fromto="0 0 0 0 0 0.5" size="0.02"/>
  <site name="tip3" pos="0 0 0.5"/>
 </body>
 <body name="m1" pos="0 1 0">
  <joint name="i1" type="hinge" axis="0 1 0"/>
  <geom type="capsule" fromto="0 0 0 0 0 0.5" size="0.02"/>
  <body name="m2" pos="0 0 0.5">
   <joint name="i2" type="hinge" axis="0 1 0"/>
   <geom type="capsule" fromto="0 0 0 0.6 0 0" size="0.02"/>
   <site name="a" pos="0.6 0 0" euler="0.2 0.4 -0.1"/>
  </body>
 </body>
 <body name="m3" pos="0.6 1 0">
  <joint name="i3" type="hinge" axis="0 1 0"/>
  <geom type="capsule" fromto="0 0 0 0 0 0.5" size="0.02"/>
  <body name="m4" pos="0 0 0.5">
   <joint name="i4" type="ball"/>
   <geom type="sphere" size="0.05"/>
   <site name="b" pos="0.02 0 0.01" euler="-0.3 0.1 0.6"/>
  </body>
 </body>
 <body name="free" pos="1 1 1">
  <freejoint/>
  <geom type="box" size="0.1 0.2 0.3"/>
  <site name="f" pos="0 0.1 0.2" euler="0 0.2 0"/>
 </body>
</worldbody>
<equality>
 <connect site1="tip2" site2="tip3"/>
 <weld site1="a" site2="b" solref="0.05 1.2" torquescale="2"/>
 <weld site1="f" site2="w" torquescale="0.5"/>
</equality>
</mujoco>"""


def _pair(xml):
    mjm = mujoco.MjModel.from_xml_string(xml)
    # MuJoCo 4.0 solves per island and then leaves efc_state in island order; one monolithic
    # solve, in both, gives the states in row order (test_pgs_noslip compares the islands)
    mjm.opt.disableflags |= mujoco.mjtDisableBit.mjDSBL_ISLAND
    m = js.load_string(xml)
    m.opt_disableflags[0] |= mujoco.mjtDisableBit.mjDSBL_ISLAND
    return m, mjm, mujoco.MjData(mjm)


def _random_state(mjm, rng):
    qpos = mjm.qpos0.copy()
    for j in range(mjm.njnt):
        a = mjm.jnt_qposadr[j]
        t = mjm.jnt_type[j]
        if t in (mujoco.mjtJoint.mjJNT_FREE, mujoco.mjtJoint.mjJNT_BALL):
            o = 3 if t == mujoco.mjtJoint.mjJNT_FREE else 0
            if o:
                qpos[a:a + 3] += rng.uniform(-0.2, 0.2, 3)
            q = rng.normal(size=4)
            q[0] += 2.0
            qpos[a + o:a + o + 4] = q / np.linalg.norm(q)
        else:
            qpos[a] += rng.uniform(-1.0, 1.0)
    return qpos, rng.normal(size=mjm.nv)


def _forward_both(m, d, mjm, mjd, qpos, qvel):
    mjd.qpos[:] = qpos
    mjd.qvel[:] = qvel
    mjd.qacc_warmstart[:] = 0.0
    mujoco.mj_forward(mjm, mjd)
    d.qpos[:] = qpos
    d.qvel[:] = qvel
    d.qacc_warmstart[:] = 0.0
    js.forward(m, d)


def _close(a, b, tol, what):
    a = np.asarray(a, dtype=float)
    b = np.asarray(b, dtype=float).reshape(a.shape)
    err = np.max(np.abs(a - b) / np.maximum(1.0, np.abs(b)), initial=0.0)
    assert err < tol, f"{what}: max relative error {err:.2e}"


def _check_rows(d, mjd):
    n = mjd.nefc
    assert (d.ne[0], d.nf[0], d.nl[0], d.nefc[0]) == (mjd.ne, mjd.nf, mjd.nl, n)
    np.testing.assert_array_equal(d.efc_type[:n], mjd.efc_type)
    np.testing.assert_array_equal(d.efc_id[:n], mjd.efc_id)
    for ours, theirs in (("efc_J", "efc_J"), ("efc_pos", "efc_pos"), ("efc_margin", "efc_margin"),
                         ("efc_frictionloss", "efc_frictionloss"), ("efc_R", "efc_R"),
                         ("efc_D", "efc_D"), ("efc_KBIP", "efc_KBIP"), ("efc_vel", "efc_vel"),
                         ("efc_aref", "efc_aref"), ("efc_diagApprox", "efc_diagA"),
                         ("efc_b", "efc_b")):
        _close(getattr(d, ours)[:n], getattr(mjd, theirs), ROW_TOL, ours)


def _check_solution(m, d, mjd):
    scale = max(1.0, np.max(np.abs(mjd.qacc)))
    assert np.max(np.abs(d.qacc - mjd.qacc)) < SOLVE_TOL * scale
    n = mjd.nefc
    if n:
        fscale = max(1.0, np.max(np.abs(mjd.efc_force)))
        assert np.max(np.abs(d.efc_force[:n] - mjd.efc_force)) < SOLVE_TOL * fscale
        np.testing.assert_array_equal(d.efc_state[:n], mjd.efc_state)
    ours = js.primal_cost(m, d, d.qacc)
    theirs = js.primal_cost(m, d, mjd.qacc)
    assert ours <= theirs * (1 + COST_TOL) + 1e-300


@pytest.mark.parametrize("xml", [LIMITS, LOOPS, SITES], ids=["limits", "loops", "sites"])
def test_rows_and_newton_match_mujoco(xml):
    """Rows, softness and aref, and the Newton solution, match mj_forward on random states."""
    m, mjm, mjd = _pair(xml)
    d = js.make_data(m)
    rng = np.random.default_rng(0)
    kinds = set()
    for _ in range(NSTATES):
        qpos, qvel = _random_state(mjm, rng)
        _forward_both(m, d, mjm, mjd, qpos, qvel)
        assert mjd.nefc > 0
        kinds |= set(mjd.efc_type.tolist())
        _check_rows(d, mjd)
        _check_solution(m, d, mjd)
        np.testing.assert_allclose(d.qfrc_constraint, mjd.qfrc_constraint, rtol=0,
                                   atol=SOLVE_TOL * max(1.0, np.abs(mjd.qfrc_constraint).max()))
    if xml is LIMITS:
        assert kinds == {C.CNSTR_FRICTION_DOF, C.CNSTR_LIMIT_JOINT}
    else:
        assert kinds == {C.CNSTR_EQUALITY}


def test_equality_data_at_qpos0():
    """eq_data: connect anchors in body2's frame, weld relative poses, as MuJoCo compiles them."""
    m, mjm, _ = _pair(LOOPS)
    # columns 0-9: anchors, relpose, polycoef; column 10: torquescale (welds use it)
    np.testing.assert_allclose(m.eq_data[:, :10], mjm.eq_data[:, :10], rtol=0, atol=1e-12)
    weld = mjm.eq_type == mujoco.mjtEq.mjEQ_WELD
    np.testing.assert_array_equal(m.eq_data[weld, 10], mjm.eq_data[weld, 10])
    np.testing.assert_allclose(m.body_invweight0, mjm.body_invweight0, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(m.dof_invweight0, mjm.dof_invweight0, rtol=1e-10, atol=1e-12)


def test_inactive_equality_and_eq_active():
    """An inactive weld adds no rows until d.eq_active switches it on, as in MuJoCo."""
    m, mjm, mjd = _pair(LOOPS)
    d = js.make_data(m)
    ghost = m.neq - 1
    assert d.eq_active[ghost] == 0
    js.forward(m, d)
    assert not np.any(d.efc_id[:d.ne[0]] == ghost)
    d.eq_active[ghost] = 1
    mjd.eq_active[ghost] = 1
    qpos, qvel = _random_state(mjm, np.random.default_rng(5))
    _forward_both(m, d, mjm, mjd, qpos, qvel)
    assert np.count_nonzero(d.efc_id[:d.ne[0]] == ghost) == 6
    _check_rows(d, mjd)


def test_disable_flags():
    """<flag> disables frictionloss, limit or the whole constraint stage, as MuJoCo does.

    LIMITS has no equality constraint, so disabling those changes nothing.
    """
    both = {C.CNSTR_FRICTION_DOF, C.CNSTR_LIMIT_JOINT}
    for flags, kinds in (('equality="disable"', both),
                         ('frictionloss="disable"', {C.CNSTR_LIMIT_JOINT}),
                         ('limit="disable"', {C.CNSTR_FRICTION_DOF}),
                         ('constraint="disable"', set())):
        xml = LIMITS.replace('<option timestep="0.002"/>',
                             f'<option timestep="0.002"><flag {flags}/></option>')
        m, mjm, mjd = _pair(xml)
        d = js.make_data(m)
        qpos, qvel = _random_state(mjm, np.random.default_rng(1))
        _forward_both(m, d, mjm, mjd, qpos, qvel)
        assert set(d.efc_type[:d.nefc[0]].tolist()) == kinds
        _check_rows(d, mjd)
        np.testing.assert_allclose(d.qacc, mjd.qacc, rtol=SOLVE_TOL, atol=SOLVE_TOL)


def test_trajectory_with_limits_and_loops():
    """1 s of mj_step with limits, friction loss and loop closures stays within 1e-8."""
    for xml in (LIMITS, LOOPS):
        m, mjm, mjd = _pair(xml)
        d = js.make_data(m)
        qpos, qvel = _random_state(mjm, np.random.default_rng(2))
        mjd.qpos[:] = qpos
        mjd.qvel[:] = qvel
        d.qpos[:] = qpos
        d.qvel[:] = qvel
        for _ in range(500):
            mujoco.mj_step(mjm, mjd)
        js.step(m, d, 500)
        assert np.max(np.abs(d.qpos - mjd.qpos)) < 1e-8


def test_efc_view_is_read_only():
    """d.efc shows rows 0 … nefc−1 of every efc_* field and refuses writes."""
    m, mjm, mjd = _pair(LIMITS)
    d = js.make_data(m)
    qpos, qvel = _random_state(mjm, np.random.default_rng(3))
    d.qpos[:] = qpos
    d.qvel[:] = qvel
    js.forward(m, d)
    n = int(d.nefc[0])
    assert d.efc.n == n and d.efc.J.shape == (n, m.nv) and d.efc.force.shape == (n,)
    with pytest.raises(ValueError):
        d.efc.force[0] = 1.0
    with pytest.raises(AttributeError, match="efc_nope"):
        d.efc.nope


def test_epsilon_kappa_softness():
    """(ε, κ) → solref/solimp gives R = ε A_ii, B = 2(1+ε)/κ, K·d = (1+ε)/κ² (004 eq. 27–28)."""
    eps, kappa = 0.05, 0.04
    solref, solimp = js.softness_from_epsilon_kappa(eps, kappa)
    sr = " ".join(map(str, solref))
    si = " ".join(map(str, solimp))
    xml = f"""<mujoco><worldbody><body>
      <joint type="slide" axis="0 0 1" limited="true" range="0 1" solreflimit="{sr}"
             solimplimit="{si}"/>
      <geom type="sphere" size="0.1" mass="2" contype="0" conaffinity="0"/>
    </body></worldbody></mujoco>"""
    m = js.load_string(xml)
    d = js.make_data(m)
    d.qpos[0] = -0.01
    js.forward(m, d)
    assert d.nefc[0] == 1
    A = 1.0 / 2.0  # J M⁻¹ Jᵀ of a 2 kg point mass on a slide
    np.testing.assert_allclose(d.efc_R[0], eps * A, rtol=1e-12)
    K, B, imp = d.efc_KBIP[0, :3]
    np.testing.assert_allclose(B, 2 * (1 + eps) / kappa, rtol=1e-12)
    np.testing.assert_allclose(K * imp, (1 + eps) / kappa**2, rtol=1e-12)
    with pytest.raises(ValueError, match="epsilon"):
        js.softness_from_epsilon_kappa(-1.0, kappa)
    with pytest.raises(ValueError, match="kappa"):
        js.softness_from_epsilon_kappa(eps, 0.0)


def test_violation_decays_critically_damped():
    """A violated constraint returns as x(t) = x0 (1 + t/κ) e^(−t/κ): critical damping, 004 §V.

    A joint equality on one slide dof (a 3 kg point mass, gravity off) has R = ε A exactly,
    so eq. 25–28 give ẍ + 2ẋ/κ + x/κ² = 0; the discrete step differs by O(h/κ). (A
    one-sided limit cannot pull, so it releases the mass once braking would need pulling.)
    """
    eps, kappa, h = 0.01, 0.05, 1e-4
    solref, solimp = js.softness_from_epsilon_kappa(eps, kappa)
    xml = f"""<mujoco><option timestep="{h}" gravity="0 0 0"/><worldbody><body>
      <joint name="s" type="slide" axis="0 0 1"/>
      <geom type="sphere" size="0.1" mass="3" contype="0" conaffinity="0"/>
    </body></worldbody><equality>
      <joint joint1="s" polycoef="0 1 0 0 0" solref="{solref[0]} {solref[1]}"
             solimp="{' '.join(map(str, solimp))}"/>
    </equality></mujoco>"""
    m = js.load_string(xml)
    d = js.make_data(m)
    x0 = -0.02
    d.qpos[0] = x0
    ts = np.arange(1, 4001) * h
    xs = np.empty_like(ts)
    for k in range(ts.size):
        js.step(m, d)
        xs[k] = d.qpos[0]
    expected = x0 * (1 + ts / kappa) * np.exp(-ts / kappa)
    assert np.max(np.abs(xs - expected)) < 0.01 * abs(x0)
    assert np.all(xs <= 0.0)  # no overshoot


def test_njmax_overflow_warns_and_stays_in_bounds():
    """Too small njmax: whole constraints dropped, counted, warned; nothing written past it."""
    spec = parse_mjcf(LOOPS)
    spec.njmax = 4
    m = js.compile_model(spec)
    assert m.njmax == 4 and m.opt_solver[0] == 2
    d = js.make_data(m)
    js.forward(m, d)  # the stage counts the overflow; make_constraint also warns
    assert d.warning_cnstrfull[0] == 1
    with pytest.warns(JointspaceWarning, match="njmax = 4"):
        n = js.make_constraint(m, d)
    # connect (3 rows) and the first joint coupling (1) fit; the welds (6) and the second
    # coupling do not
    assert n == 4 and d.nefc[0] == 4
    np.testing.assert_array_equal(d.efc_id[:4], [0, 0, 0, 2])
    assert d.warning_cnstrfull[0] == 2 and d.warning_cnstrfull[1] == 3 + 6 + 1 + 1 + 6
    assert d.efc_J.shape == (4, m.nv) and np.all(np.isfinite(d.qacc))


def test_inverse_warns_when_rows_are_dropped_and_errors_take_precedence():
    """Too small njmax: the inverse warns with the rows requested (from d.warning_cnstrfull).

    A bad state is an error whether or not rows overflow.
    """
    spec = parse_mjcf(LOOPS)
    spec.njmax = 4
    m = js.compile_model(spec)
    d = js.make_data(m)
    with pytest.warns(JointspaceWarning, match=r"inverse: the constraints need 17 rows .*= 4"):
        js.inverse(m, d)
    assert d.warning_cnstrfull[0] == 1 and d.nefc[0] == 4
    d.qacc[0] = np.nan
    with pytest.raises(js.JointspaceError, match=r"qacc\[0\].*NaN"):
        js.inverse(m, d)


def test_default_njmax_counts_rows():
    """The default capacity holds every equality, friction and limit row (no contacts)."""
    m = js.load_string(LIMITS)
    assert m.njmax == 5 + 2 * 3 + 1  # frictionloss dofs, hinge/slide sides, ball cone


# ---------------------------------------------------------------------------------------------
# contacts: scenes reached by stepping MuJoCo, then one mj_forward against ours

BALL6 = """<mujoco model="ball6"><option timestep="0.002"/>
<worldbody>
 <geom name="floor" type="plane" size="5 5 0.1" friction="1 0.01 0.005"/>
 <body name="ball" pos="0 0 0.1"><freejoint/>
  <geom type="sphere" size="0.1" mass="1" condim="6" friction="0.8 0.02 0.01"/>
 </body>
 <body name="top" pos="0.5 0 0.2"><freejoint/>
  <geom type="capsule" fromto="0 0 0 0 0 0.2" size="0.05" condim="4" friction="0.6 0.05 0.001"/>
 </body>
</worldbody></mujoco>"""

_BOXES = "\n".join(f'<body pos="{0.01 * k} 0 {0.1 + 0.2 * k}"><freejoint/>'
                   f'<geom type="box" size="0.1 0.1 0.1" mass="{1 + k}"/></body>'
                   for k in range(5))
STACK = f"""<mujoco model="stack"><option timestep="0.002"/>
<worldbody><geom name="floor" type="plane" size="5 5 0.1"/>
{_BOXES}
</worldbody></mujoco>"""

CONTACT_SCENES = {
    "humanoid_lying": (js.models.xml("humanoid"), 1500, None),
    "quadruped_standing": (js.models.xml("quadruped"), 300, None),
    "box_stack": (STACK, 300, None),
    "ball_condim6": (BALL6, 100, (0.5, 0.0, 0.0, 0.0, 3.0, 0.0, 0.0, 0.2, 0.0, 0.0, 0.0, 8.0)),
}


def _contact_scene(name, cone):
    xml, steps, qvel = CONTACT_SCENES[name]
    m, mjm, mjd = _pair(xml)
    mjm.opt.cone = 0 if cone == "pyramidal" else 1
    mjm.opt.tolerance = 1e-10
    m.opt.cone = cone
    m.opt.tolerance = 1e-10
    if qvel is not None:
        mjd.qvel[:] = qvel
    for _ in range(steps):
        mujoco.mj_step(mjm, mjd)
    d = js.make_data(m)
    d.qpos[:] = mjd.qpos
    d.qvel[:] = mjd.qvel
    d.qacc_warmstart[:] = mjd.qacc_warmstart
    mujoco.mj_forward(mjm, mjd)
    js.forward(m, d)  # runs collision and the solver, then saves qacc as the warm start
    d.qacc_warmstart[:] = mjd.qacc_warmstart
    js.solve(m, d)
    return m, d, mjm, mjd


def _row_map(d, mjd):
    """Our row index for each of MuJoCo's rows; contacts are matched by geoms and position."""
    n = mjd.nefc
    rows = np.arange(n)
    contact = mjd.efc_type >= C.CNSTR_CONTACT_FRICTIONLESS
    first = int(np.argmax(contact)) if contact.any() else n
    assert np.all(contact[first:])
    ours = {}
    for c in range(int(d.ncon[0])):
        key = (tuple(d.contact_geom[c]), tuple(np.round(d.contact_pos[c], 9)))
        ours[key] = c
    start = {c: int(np.argmax(d.efc_id[first:n] == c)) + first for c in ours.values()}
    for r in range(first, n):
        c = mjd.efc_id[r]
        key = (tuple(mjd.contact.geom[c]), tuple(np.round(mjd.contact.pos[c], 9)))
        assert key in ours, f"MuJoCo contact {key} not found"
        rows[r] = start[ours[key]] + r - mjd.contact.efc_address[c]
    return rows


@pytest.mark.parametrize("cone", ["pyramidal", "elliptic"])
@pytest.mark.parametrize("name", list(CONTACT_SCENES))
def test_contact_rows_and_newton_match_mujoco(name, cone):
    """Contact rows (frames, cones, condim 1-6), softness and the Newton solution vs MuJoCo."""
    m, d, mjm, mjd = _contact_scene(name, cone)
    n = mjd.nefc
    assert d.ncon[0] == mjd.ncon > 0 and d.nefc[0] == n
    rows = _row_map(d, mjd)
    kind = C.CNSTR_CONTACT_PYRAMIDAL if cone == "pyramidal" else C.CNSTR_CONTACT_ELLIPTIC
    assert kind in d.efc_type[:n]
    np.testing.assert_array_equal(d.efc_type[rows], mjd.efc_type)
    for ours, theirs in (("efc_J", "efc_J"), ("efc_pos", "efc_pos"), ("efc_margin", "efc_margin"),
                         ("efc_R", "efc_R"), ("efc_D", "efc_D"), ("efc_KBIP", "efc_KBIP"),
                         ("efc_aref", "efc_aref"), ("efc_diagApprox", "efc_diagA")):
        _close(getattr(d, ours)[rows], getattr(mjd, theirs), ROW_TOL, ours)
    scale = max(1.0, np.max(np.abs(mjd.qacc)))
    assert np.max(np.abs(d.qacc - mjd.qacc)) < SOLVE_TOL * scale
    fscale = max(1.0, np.max(np.abs(mjd.efc_force)))
    assert np.max(np.abs(d.efc_force[rows] - mjd.efc_force)) < SOLVE_TOL * fscale
    np.testing.assert_array_equal(d.efc_state[rows], mjd.efc_state)
    ours = js.primal_cost(m, d, d.qacc)
    assert ours <= js.primal_cost(m, d, mjd.qacc) * (1 + COST_TOL)
    if name == "ball_condim6":
        assert sorted(d.contact_dim[:d.ncon[0]]) == [4, 6]
