"""Constraint stage: jointspace vs MuJoCo, same process, same run.

Run: python benchmarks/bench_constraint.py [--quick]

Scene: MuJoCo's 27-dof humanoid (`jointspace.models.humanoid`) lying on the floor after
1500 MuJoCo steps (about 11 contacts plus joint limits), pyramidal and elliptic cones. Both
libraries start from the same state, contacts and qacc_warmstart (MuJoCo's, from its last
step), islands disabled in MuJoCo (one monolithic solve, as ours).

Rows (median µs per call from Python, median over rounds of ours / MuJoCo, timed in
alternation batch by batch):
    rows       ours: make_constraint + reference (one compiled call);
               MuJoCo: mj_makeConstraint + mj_referenceConstraint
    Newton     ours: solve(m, d, "Newton") from the warm start;  MuJoCo: mj_fwdConstraint
    CG         the same with the CG solver (tolerance 1e-8, 100 iterations)
    rows+PGS   rows, then PGS: ours make_constraint + solve(m, d, "PGS") (which builds the
               dual matrix AR inside); MuJoCo mj_makeConstraint + mj_referenceConstraint +
               mj_projectConstraint (AR) + mj_fwdConstraint
"Loop" is our per-call time inside a compiled loop (no Python crossing).

Second table, the whole step (collision, constraints, Newton, Euler) on the same lying
humanoid, pyramidal cones: `js.step(m, d)` vs `mujoco.mj_step` from Python, and 1,000 steps
in one call: `js.step(m, d, 1000)` (a compiled loop) vs `mujoco.rollout.rollout` (one
thread), per step. The 2014 paper's headline, forward dynamics of the 27-dof humanoid with
10 contacts in 0.1 ms on its 2014 desktop, is set beside `js.forward` and `mj_forward`.
"""

import argparse
import os
import sys

import mujoco
import numpy as np
from numba import njit

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _timing import interleaved, per_call, table, us  # noqa: E402

import jointspace as js  # noqa: E402
from jointspace.collision import collision  # noqa: E402
from jointspace.constraint import make_constraint_reference  # noqa: E402
from jointspace.solver import solve_stage  # noqa: E402

_SOLVER = {"Newton": (2, mujoco.mjtSolver.mjSOL_NEWTON), "CG": (1, mujoco.mjtSolver.mjSOL_CG),
           "PGS": (0, mujoco.mjtSolver.mjSOL_PGS)}


@njit(cache=True)
def _loop_rows(m, d, n):
    for _ in range(n):
        make_constraint_reference(m, d)


@njit(cache=True)
def _loop_solve(m, d, ws, solver, n):
    for _ in range(n):
        d.qacc_warmstart[:] = ws
        solve_stage(m, d, solver, 100)


def scene(cone):
    """(m, d, mjm, mjd): the humanoid lying on the floor, both libraries at one state."""
    xml = js.models.xml("humanoid")
    mjm = mujoco.MjModel.from_xml_string(xml)
    mjm.opt.disableflags |= mujoco.mjtDisableBit.mjDSBL_ISLAND
    mjm.opt.cone = 0 if cone == "pyramidal" else 1
    mjd = mujoco.MjData(mjm)
    for _ in range(1500):
        mujoco.mj_step(mjm, mjd)
    m = js.load_string(xml)
    m.opt.cone = cone
    d = js.make_data(m)
    d.qpos[:] = mjd.qpos
    d.qvel[:] = mjd.qvel
    d.qacc_warmstart[:] = mjd.qacc_warmstart
    mujoco.mj_forward(mjm, mjd)
    js.forward(m, d)
    collision(m, d)
    js.make_constraint(m, d)
    return m, d, mjm, mjd


def rounds(ours, theirs, nround, budget=0.02):
    """Median per-call times and the median per-round ratio, ours and theirs alternating."""
    to, tt = interleaved([ours, theirs], nround, budget)
    return float(np.median(to)), float(np.median(tt)), float(np.median(to / tt))


def main():
    """Print the table."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    nround, number = (5, 200) if args.quick else (21, 1000)
    rows = []
    for cone in ("pyramidal", "elliptic"):
        m, d, mjm, mjd = scene(cone)
        ws = mjd.qacc_warmstart.copy()
        ms, ds = m._s, d._s
        _loop_rows(ms, ds, 1)

        def ours_rows():
            js.make_constraint(m, d)

        def mj_rows():
            mujoco.mj_makeConstraint(mjm, mjd)
            mujoco.mj_referenceConstraint(mjm, mjd)

        o, t, r = rounds(ours_rows, mj_rows, nround)
        loop = per_call(lambda: _loop_rows(ms, ds, number), number=1) / number
        rows.append([cone, "rows", str(d.nefc[0]), us(o), us(t), f"{r:.2f}", us(loop), "", ""])
        for name, (sid, mjsid) in _SOLVER.items():
            m.opt.tolerance = mjm.opt.tolerance = 1e-8
            mjm.opt.solver = mjsid
            mjm.opt.iterations = 100

            mjd.qacc_warmstart[:] = ws
            mujoco.mj_forward(mjm, mjd)  # rebuilds MuJoCo's efc arena (and AR for PGS)

            def ours_solve():
                d.qacc_warmstart[:] = ws
                if name == "PGS":
                    js.make_constraint(m, d)
                js.solve(m, d, name, iterations=100)

            def mj_solve():
                mjd.qacc_warmstart[:] = ws
                if name == "PGS":
                    # AR = J M⁻¹ Jᵀ + R lives in MuJoCo's arena, which only mj_makeConstraint
                    # resets: repeated mj_projectConstraint calls alone would overflow it
                    mujoco.mj_makeConstraint(mjm, mjd)
                    mujoco.mj_referenceConstraint(mjm, mjd)
                    mujoco.mj_projectConstraint(mjm, mjd)
                mujoco.mj_fwdConstraint(mjm, mjd)

            o, t, r = rounds(ours_solve, mj_solve, nround)
            _loop_solve(ms, ds, ws, sid, 1)
            loop = per_call(lambda: _loop_solve(ms, ds, ws, sid, number), number=1) / number
            ours_solve()
            mj_solve()
            label = "rows+PGS" if name == "PGS" else name
            rows.append([cone, label, str(d.nefc[0]), us(o), us(t), f"{r:.2f}", us(loop),
                         str(d.solver_niter[0]), str(mjd.solver_niter[0])])
    print(table(rows, ["cone", "stage", "nefc", "ours µs", "MuJoCo µs", "ours/MuJoCo",
                       "ours in loop µs", "iters", "MuJoCo iters"]))
    print()
    print(step_table(nround))


def step_table(nround):
    """The whole step, from Python and in 1,000-step rollouts; forward beside the paper."""
    import mujoco.rollout

    m, d, mjm, mjd = scene("pyramidal")
    mjm.opt.disableflags &= ~int(mujoco.mjtDisableBit.mjDSBL_ISLAND)
    q0, v0, w0 = d.qpos.copy(), d.qvel.copy(), d.qacc_warmstart.copy()
    spec = mujoco.mjtState.mjSTATE_FULLPHYSICS
    state0 = np.empty(mujoco.mj_stateSize(mjm, spec))
    mujoco.mj_getState(mjm, mjd, state0, spec)

    def reset():
        d.qpos[:] = q0
        d.qvel[:] = v0
        d.qacc_warmstart[:] = w0
        mujoco.mj_setState(mjm, mjd, state0, spec)

    rows = []
    reset()
    o, t, r = rounds(lambda: js.step(m, d), lambda: mujoco.mj_step(mjm, mjd), nround)
    rows.append(["step from Python", us(o), us(t), f"{r:.2f}"])
    nstep = 1000
    out = np.empty((1, nstep, state0.size))

    def ours_roll():
        reset()
        js.step(m, d, nstep)

    def mj_roll():
        mujoco.rollout.rollout(mjm, mjd, state0[None], nstep=nstep, state=out)

    o, t, r = rounds(ours_roll, mj_roll, max(3, nround // 3))
    rows.append([f"rollout of {nstep} steps, per step", us(o / nstep), us(t / nstep),
                 f"{r:.2f}"])
    reset()
    o, t, r = rounds(lambda: js.forward(m, d), lambda: mujoco.mj_forward(mjm, mjd), nround)
    rows.append([f"forward ({int(d.ncon[0])} contacts; 2014 paper: 100 µs)", us(o), us(t),
                 f"{r:.2f}"])
    return table(rows, ["humanoid, lying", "ours µs", "MuJoCo µs", "ours/MuJoCo"])


if __name__ == "__main__":
    main()
