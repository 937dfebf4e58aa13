"""PGS, CG and Newton iterate for iterate, constraint islands and noslip, against MuJoCo 4.0.

MuJoCo 4.0's PGS shuffles its visiting order with a fixed-seed PCG32 generator and
extrapolates with Nesterov momentum, island by island; a file that fixes PGS and its
iteration count gets MuJoCo's answer only if every sweep is the same. The noslip solver
(`noslip_iterations` > 0) re-solves the frictional forces after any main solver.

States come from MuJoCo's own trajectory: at every step both engines run `forward` from
MuJoCo's qpos, qvel and warm start.
"""

import mujoco
import numpy as np
import pytest

import jointspace as js
from jointspace import types as T

# same sweeps on the same rows: float64 rounding, grown by the sweeps (measured 2e-12 on
# one-contact scenes and converged PGS; 1e-14 on the gymnasium humanoids, test_real_sweep)
ITERATE_TOL = 1e-9
# CG capped at 5 iterations on the humanoid: the same iterations, but each exact line search
# stops inside a bracket at its tolerance, which passes rounding on (measured 2.5e-8 on the
# forces, 2.2e-10 on qacc)
CG_ITERATE_TOL = 1e-7
# PGS stopped at its tolerance on a box stack: the iterates agree, but a stack's four
# corner contacts per face make the dual ill-conditioned and the last sweeps amplify
# rounding (measured 2e-8 relative over 300 steps)
STACK_TOL = 1e-6
# noslip on a stack: as STACK_TOL, and noslip drops the regularizer R, so on a face's four
# corner contacts its problem is singular and Gauss–Seidel settles on a solution that
# rounding picks (measured 1.5e-6 relative over 300 steps with pyramidal cones)
NOSLIP_STACK_TOL = 1e-5


def _stack(solver, cone, noslip=0, island=True, iterations=100, frictionloss=0.3, dx=0.03):
    boxes = "".join(
        f'<body pos="{dx * i} 0 {0.099 + 0.199 * i}"><freejoint/>'
        f'<geom type="box" size=".1 .1 .1" friction="{0.5 + 0.1 * i}"/></body>'
        for i in range(3))
    return f"""<mujoco><option solver="{solver}" cone="{cone}" timestep="0.005"
      noslip_iterations="{noslip}" iterations="{iterations}">
      <flag island="{'enable' if island else 'disable'}"/></option>
    <worldbody><geom type="plane" size="2 2 .1"/>{boxes}
    <body pos="0.5 0 0.299"><joint type="hinge" axis="0 1 0" frictionloss="{frictionloss}"/>
      <joint type="slide" axis="1 0 0" frictionloss="{frictionloss}"/>
      <geom type="capsule" size=".05 .2" fromto="0 0 0 .3 0 -.25"/></body>
    </worldbody></mujoco>"""


GRIPPER = """<mujoco><option solver="{solver}" cone="{cone}" noslip_iterations="{noslip}"
    timestep="0.002"/>
<worldbody>
 <body name="palm" pos="0 0 0.5">
  <geom type="box" size="0.08 0.02 0.02"/>
  <body name="left" pos="-0.06 0 -0.08"><joint name="l" type="slide" axis="1 0 0"/>
   <geom type="box" size="0.01 0.02 0.06" friction="0.8"/></body>
  <body name="right" pos="0.06 0 -0.08"><joint name="r" type="slide" axis="-1 0 0"/>
   <geom type="box" size="0.01 0.02 0.06" friction="0.8"/></body>
 </body>
 <body name="object" pos="0.003 0 0.42"><freejoint/>
  <geom type="box" size="0.04 0.015 0.03" mass="0.3"/></body>
</worldbody>
<actuator><position joint="l" kp="300"/><position joint="r" kp="300"/></actuator>
</mujoco>"""


def _along_mujoco(xml, steps, ctrl=None):
    """Worst relative qacc and efc_force differences, forward at MuJoCo's states."""
    mjm = mujoco.MjModel.from_xml_string(xml)
    mjd = mujoco.MjData(mjm)
    m = js.load_string(xml)
    d = js.make_data(m)
    if ctrl is not None:
        mjd.ctrl[:] = ctrl
        d.ctrl[:] = ctrl
    worst_a = worst_f = 0.0
    iters = []
    for _ in range(steps):
        d.qpos[:], d.qvel[:] = mjd.qpos, mjd.qvel
        d.qacc_warmstart[:] = mjd.qacc_warmstart
        d.time = mjd.time
        mujoco.mj_forward(mjm, mjd)
        js.forward(m, d)
        n = mjd.nefc
        assert d.nefc[0] == n
        scale = max(1.0, np.abs(mjd.qacc).max())
        worst_a = max(worst_a, np.abs(d.qacc - mjd.qacc).max() / scale)
        if n:
            fs = max(1.0, np.abs(mjd.efc_force).max())
            worst_f = max(worst_f, np.abs(d.efc_force[:n] - mjd.efc_force).max() / fs)
            iters.append((int(mjd.solver_niter[0]), int(d.solver_niter[0])))
        mujoco.mj_step(mjm, mjd)
    return worst_a, worst_f, iters


@pytest.mark.parametrize("cone", ["pyramidal", "elliptic"])
@pytest.mark.parametrize("island", [True, False], ids=["islands", "monolithic"])
def test_pgs_follows_mujoco_sweep_for_sweep(cone, island):
    """Capped at 5 sweeps, far from converged: only the same sweeps give the same forces."""
    a, f, iters = _along_mujoco(_stack("PGS", cone, island=island, iterations=5), 150)
    assert all(i == j == 5 for i, j in iters)
    assert a <= ITERATE_TOL and f <= ITERATE_TOL, (a, f)


def _humanoid(solver, cone, iterations):
    xml = js.models.xml("humanoid")
    return xml.replace("<option ", f'<option solver="{solver}" cone="{cone}" '
                       f'iterations="{iterations}" ', 1)


@pytest.mark.parametrize("cone", ["pyramidal", "elliptic"])
@pytest.mark.parametrize("solver", ["PGS", "CG"])
def test_capped_solvers_follow_mujoco_on_the_humanoid(solver, cone):
    """The humanoid falling and lying (one island): 5 iterations, far from converged."""
    a, f, iters = _along_mujoco(_humanoid(solver, cone, 5), 300)
    assert sum(1 for i, _ in iters if i == 5) > 100
    assert all(i == j for i, j in iters)
    tol = ITERATE_TOL if solver == "PGS" else CG_ITERATE_TOL
    assert a <= tol and f <= tol, (a, f)


@pytest.mark.parametrize("dx", [0.0, 0.03, 0.05], ids=["straight", "offset3", "offset5"])
def test_capped_cg_follows_mujoco_on_a_box_stack(dx):
    """Straight and offset stacks (measured ≤ 2e-13 in qacc).

    On the offset stacks a tilted box's edge lies on the face below up to rounding, so
    where clipping cuts it depends on the last bits of the box frames: with kinematics not
    MuJoCo's bit for bit, the points differed by 4.5e-4 m and the iterates parted.
    """
    a, f, iters = _along_mujoco(_stack("CG", "elliptic", iterations=5, island=False, dx=dx),
                                300)
    assert all(i == j for i, j in iters)
    assert a <= ITERATE_TOL and f <= ITERATE_TOL, (a, f)


# CG with pyramidal cones on the stack: the iterates agree (qacc measured 1.1e-7), but the
# four corner contacts of a face split their forces along directions that barely move qacc,
# where each line search's stopping point passes rounding on (forces measured 9.6e-5)
CG_PYRAMIDAL_QACC_TOL = 1e-6
CG_PYRAMIDAL_FORCE_TOL = 1e-3


@pytest.mark.parametrize("cone", ["pyramidal", "elliptic"])
@pytest.mark.parametrize("solver,iterations", [("Newton", 1), ("Newton", 100), ("CG", 5),
                                               ("CG", 100)])
def test_primal_solvers_run_island_by_island_as_mujoco(solver, iterations, cone):
    """The stack and the capsule are two islands, each with its own line searches and stop.

    Solved as one problem instead, the islands share each line search's step and stop
    together: measured 1.6e-4 (Newton to tolerance) to 3.4 (Newton capped at 1) in qacc.
    """
    a, f, iters = _along_mujoco(_stack(solver, cone, iterations=iterations, dx=0.0), 300)
    assert all(i == j for i, j in iters), "island 0's iteration counts differ"
    if solver == "CG" and cone == "pyramidal":
        assert a <= CG_PYRAMIDAL_QACC_TOL and f <= CG_PYRAMIDAL_FORCE_TOL, (a, f)
    else:
        assert a <= ITERATE_TOL and f <= ITERATE_TOL, (a, f)


@pytest.mark.parametrize("cone", ["pyramidal", "elliptic"])
def test_pgs_to_tolerance_stops_where_mujoco_stops(cone):
    a, f, iters = _along_mujoco(_stack("PGS", cone), 300)
    assert all(i == j for i, j in iters), "sweep counts differ"
    assert a <= STACK_TOL and f <= STACK_TOL, (a, f)


def test_islands_partition_the_rows_as_mujoco_does():
    xml = _stack("PGS", "pyramidal")
    mjm = mujoco.MjModel.from_xml_string(xml)
    mjd = mujoco.MjData(mjm)
    m = js.load_string(xml)
    d = js.make_data(m)
    for _ in range(40):
        mujoco.mj_step(mjm, mjd)
    d.qpos[:], d.qvel[:] = mjd.qpos, mjd.qvel
    mujoco.mj_forward(mjm, mjd)
    js.forward(m, d)
    n = mjd.nefc
    assert mjd.nisland == d.nisland[0] == 2
    np.testing.assert_array_equal(d.efc_island[:n], mjd.efc_island)


@pytest.mark.parametrize("cone", ["pyramidal", "elliptic"])
def test_island_line_search_equals_the_masked_search(cone):
    """An island's line search reads and writes its own dofs and rows only.

    Regression: each island searched the whole problem along its direction zeroed outside
    the island, so a step with k islands paid k whole line searches (the box stack of
    dm_control's stacker 1.2x slower than before the island solves). The island-local
    search must give the masked search's numbers bit for bit: every sum keeps its order
    and only loses terms that are exactly zero.
    """
    from jointspace.solver import cone_arrays
    from jointspace.solver.cost import linesearch, mul_j, mul_m
    from jointspace.solver.island import efc_islands, island_dofs

    xml = _stack("Newton", cone)
    mjm = mujoco.MjModel.from_xml_string(xml)
    mjd = mujoco.MjData(mjm)
    for _ in range(40):
        mujoco.mj_step(mjm, mjd)
    m = js.load_string(xml)
    d = js.make_data(m)
    d.qpos[:], d.qvel[:] = mjd.qpos, mjd.qvel
    js.forward(m, d)
    nv, nefc = m.nv, int(d.nefc[0])
    ms, ds = m._s, d._s  # the compiled structs the kernels take
    cdim, cmu, cfr = cone_arrays(ms, ds)
    rows, adr, cnt, nei, nfi = (np.zeros(nefc, dtype=np.int64) for _ in range(5))
    scale = np.zeros(nefc)
    dof_island = np.zeros(nv, dtype=np.int64)
    trees = np.zeros(4 * nv + nefc, dtype=np.int64)
    nisland = efc_islands(ms, ds, rows, adr, cnt, nei, nfi, scale, dof_island, trees)
    assert nisland == 2
    dofs, dadr, dcnt = (np.zeros(n, dtype=np.int32) for n in (nv, nisland, nisland))
    island_dofs(nv, dof_island, nisland, dofs, dadr, dcnt)
    rng = np.random.default_rng(5)
    qacc = d.qacc_smooth + rng.normal(scale=0.1, size=nv)
    Ma = np.zeros(nv)
    jar = np.zeros(nefc)
    mul_m(ms, d.qM, qacc, Ma)
    mul_j(ds, qacc, jar)
    jar -= d.efc_aref[:nefc]
    search = d.qacc[:nv] - qacc + rng.normal(scale=0.1, size=nv)
    every_dof, every_row = np.arange(nv, dtype=np.int32), np.arange(nefc, dtype=np.int64)
    for k in range(nisland):
        out = []
        for local in (True, False):
            Mv, Jv, res = np.full(nv, np.nan), np.full(nefc, np.nan), np.zeros(3)
            quad, pts = np.zeros((nefc, 9)), np.zeros((7, 4))
            if local:
                alpha = linesearch(ms, ds, search, Mv, Jv, Ma, jar, cdim, cmu, cfr, quad,
                                   scale[k], res, pts, dofs, dadr[k], dcnt[k], rows, adr[k],
                                   cnt[k], False)
            else:
                v = np.zeros(nv)
                mine = dofs[dadr[k]:dadr[k] + dcnt[k]]
                v[mine] = search[mine]
                alpha = linesearch(ms, ds, v, Mv, Jv, Ma, jar, cdim, cmu, cfr, quad, scale[k],
                                   res, pts, every_dof, 0, nv, every_row, 0, nefc, True)
            out.append((alpha, res.copy(), Mv, Jv))
        (a1, r1, Mv1, Jv1), (a2, r2, Mv2, Jv2) = out
        mine = dofs[dadr[k]:dadr[k] + dcnt[k]]
        own = rows[adr[k]:adr[k] + cnt[k]]
        assert a1 != 0.0 and a1 == a2
        np.testing.assert_array_equal(r1, r2)
        np.testing.assert_array_equal(Mv1[mine], Mv2[mine])
        np.testing.assert_array_equal(Jv1[own], Jv2[own])
        # nothing outside the island is read into the result or written
        assert np.isnan(np.delete(Mv1, mine)).all() and np.isnan(np.delete(Jv1, own)).all()


# a box resting on the floor (one island) beside a ball in the air and a swinging pendulum
# (in no island)
ISLAND_START = """<mujoco><option solver="{solver}"/><worldbody>
 <geom type="plane" size="5 5 .1"/>
 <body pos="0 0 .1"><freejoint/><geom type="box" size=".1 .1 .1"/></body>
 <body pos="1 0 2"><freejoint/><geom type="sphere" size=".1"/></body>
 <body pos="2 0 1"><joint type="hinge" axis="0 1 0" damping=".1"/>
  <geom type="capsule" fromto="0 0 0 .3 0 0" size=".05"/></body>
</worldbody></mujoco>"""
# the same forward from the same state and warm start: rounding (measured 0 on the box's
# dofs, 2e-15 elsewhere)
START_TOL = 1e-12


@pytest.mark.parametrize("solver", ["Newton", "CG"])
def test_dofs_in_no_island_start_at_the_smooth_acceleration(solver):
    """MuJoCo's primal start with islands: dofs in no island take qacc_smooth exactly.

    The warm start is the box's solution with the other trees' accelerations perturbed; it
    beats qacc_smooth, so it is taken, and then the ball's and the pendulum's dofs are
    reset: the solver meets the box's converged island alone and stops at once, as MuJoCo's.
    """
    xml = ISLAND_START.format(solver=solver)
    mjm = mujoco.MjModel.from_xml_string(xml)
    mjd = mujoco.MjData(mjm)
    m = js.load_string(xml)
    d = js.make_data(m)
    for _ in range(100):
        mujoco.mj_step(mjm, mjd)
    mujoco.mj_forward(mjm, mjd)
    assert mjd.nisland == 1 and mjd.ncon > 0
    free = np.arange(6, mjm.nv)
    ws = mjd.qacc.copy()
    ws[free] += np.random.default_rng(3).normal(scale=1e-2, size=free.size)
    d.qpos[:], d.qvel[:] = mjd.qpos, mjd.qvel
    d.qacc_warmstart[:] = mjd.qacc_warmstart[:] = ws
    js.forward(m, d)
    mujoco.mj_forward(mjm, mjd)
    np.testing.assert_array_equal(d.qacc[free], d.qacc_smooth[free])
    assert np.max(np.abs(d.qacc - mjd.qacc)) < START_TOL
    assert d.solver_niter[0] == mjd.solver_niter[0] == 0


@pytest.mark.parametrize("solver", ["PGS", "Newton"])
@pytest.mark.parametrize("cone", ["pyramidal", "elliptic"])
def test_noslip_on_a_gripper_holding_an_object(solver, cone):
    xml = GRIPPER.format(solver=solver, cone=cone, noslip=20)
    a, f, iters = _along_mujoco(xml, 300, ctrl=[0.03, 0.03])
    assert len(iters) > 200, "the fingers never touched the object"
    assert a <= ITERATE_TOL and f <= ITERATE_TOL, (a, f)


@pytest.mark.parametrize("cone", ["pyramidal", "elliptic"])
def test_noslip_on_a_box_stack(cone):
    a, f, _ = _along_mujoco(_stack("Newton", cone, noslip=10, island=False), 300)
    assert a <= NOSLIP_STACK_TOL and f <= NOSLIP_STACK_TOL, (a, f)
    a, f, _ = _along_mujoco(_stack("PGS", cone, noslip=10), 300)
    assert a <= NOSLIP_STACK_TOL and f <= NOSLIP_STACK_TOL, (a, f)


# 1100 steps of a box resting on an incline, ours against mj_step's: no chaos, one contact
# patch; measured 3e-13 m
INCLINE_TRAJ_TOL = 1e-10


def _creep_on_incline(noslip):
    """How far a box resting on a 20° incline (μ = 1 > tan 20°) creeps down it in 2 s.

    Also returns the largest difference of jointspace's and MuJoCo's qpos along the way.
    """
    xml = f"""<mujoco><option noslip_iterations="{noslip}" timestep="0.002"/>
    <worldbody><geom type="plane" size="2 2 .1" euler="0 20 0" friction="1"/>
    <body pos="0 0 0.11" euler="0 20 0"><freejoint/>
     <geom type="box" size=".1 .1 .1" friction="1"/></body></worldbody></mujoco>"""
    m = js.load_string(xml)
    d = js.make_data(m)
    mjm = mujoco.MjModel.from_xml_string(xml)
    mjd = mujoco.MjData(mjm)
    down = np.array([np.cos(np.radians(20)), 0.0, -np.sin(np.radians(20))])
    worst = 0.0
    for k in range(1100):
        if k == 100:  # settled
            x0 = d.qpos[:3].copy()
        js.step(m, d)
        mujoco.mj_step(mjm, mjd)
        worst = max(worst, np.abs(d.qpos - mjd.qpos).max())
    return (d.qpos[:3] - x0) @ down, worst


def test_noslip_stops_the_soft_contacts_creep():
    """Soft contacts let a resting box creep down an incline; noslip all but removes it."""
    creep, err0 = _creep_on_incline(0)
    held, err1 = _creep_on_incline(20)
    assert creep > 1e-3  # 3.7 mm (MuJoCo's too)
    assert 0.0 < held < 2e-3 * creep  # 4.7 µm: down 800-fold
    assert max(err0, err1) <= INCLINE_TRAJ_TOL


def test_noslip_options_reach_the_model():
    m = js.load_string('<mujoco><option noslip_iterations="7" noslip_tolerance="1e-9"/>'
                       '<worldbody/></mujoco>')
    assert m.opt.noslip_iterations == 7 and m.opt.noslip_tolerance == 1e-9
    assert js.load_string("<mujoco/>").opt.noslip_iterations == 0
    assert T.DSBL_ISLAND == 1 << 18


def test_the_shuffle_draws_mujocos_permutation_without_a_division():
    # _shuffle takes the remainder x mod (i + 1) of each 32-bit draw from a floating-point
    # quotient, corrected once; MuJoCo's shuffle_int takes it with an integer division.
    # Against that reference, in Python integers, for PCG32 streams from several states
    # and block counts up to 2^20 (where the quotient's rounding is largest), the
    # permutations and the generator's final state must be identical.
    from jointspace.solver.pgs import _pcg32, _shuffle

    mult, mask = 6364136223846793005, 2**64 - 1

    def reference(n, state, inc):
        a = list(range(n))
        for i in range(n - 1, 0, -1):
            old = state
            state = (old * mult + (inc | 1)) & mask
            x = (((old >> 18) ^ old) >> 27) & 0xFFFFFFFF
            rot = old >> 59
            x = ((x >> rot) | (x << ((32 - rot) & 31))) & 0xFFFFFFFF
            j = x % (i + 1)
            a[i], a[j] = a[j], a[i]
        return a, state

    rng = np.random.default_rng(8)
    for n in (0, 1, 2, 3, 7, 28, 1000, 2**20):
        for _ in range(3 if n < 2**20 else 1):
            seed = int(rng.integers(0, 2**63))
            gen = np.array([seed, 1], dtype=np.uint64)
            _pcg32(gen)  # a state reached by the generator, as the solver's
            state = int(gen[0])
            a = np.arange(n, dtype=np.int64)
            inv = 1.0 / np.arange(1, n + 1)
            _shuffle(a, n, gen, inv)
            want, want_state = reference(n, state, 1)
            assert a.tolist() == want, n
            assert int(gen[0]) == want_state
