"""Solver report: iterations each solver needs along real trajectories, warm and cold.

Run: python benchmarks/report_solvers.py [--quick]

Scenes: the humanoid falling onto the floor and lying there (impact included), the
quadruped standing, a stack of five boxes, a ball with condim 6 rolling (elliptic cones),
a pendulum with limits and friction loss, and a four-bar loop closed by `connect`. Each
scene is first simulated with Newton for a while; from that state every solver
(Newton, CG, PGS, IPM) runs the same number of steps with tolerance 1e-8 and at most 1,000
iterations, once warm-started from the previous step's acceleration (`qacc_warmstart`, the
default) and once cold (the `warmstart` disable flag: the solve starts at qacc_smooth).
The table gives the mean iterations per step, the fraction of the reduction warm start
brings, and the largest relative excess of the solver's primal cost over Newton's at the
same rows (Newton re-solved to 1e-12 at each step's state), which says how close to the
common optimum each solver stops.
"""

import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _timing import table  # noqa: E402

import jointspace as js  # noqa: E402

_NO_WARMSTART = 1 << js.types.DISABLE_FLAGS.index("warmstart")

_BOXES = "\n".join(f'<body pos="{0.01 * k} 0 {0.1 + 0.2 * k}"><freejoint/>'
                   f'<geom type="box" size="0.1 0.1 0.1" mass="{1 + k}"/></body>'
                   for k in range(5))
STACK = f"""<mujoco model="stack"><option timestep="0.002"/>
<worldbody><geom name="floor" type="plane" size="5 5 0.1"/>
{_BOXES}
</worldbody></mujoco>"""

BALL = """<mujoco model="ball"><option timestep="0.002" cone="elliptic"/><worldbody>
<geom type="plane" size="50 50 .1" condim="6" friction="1 0.01 0.02"/>
<body pos="0 0 0.1"><freejoint/>
 <geom type="sphere" size="0.1" mass="1" condim="6" friction="1 0.01 0.02"/>
</body></worldbody></mujoco>"""

PENDULUM = """<mujoco model="pendulum"><option timestep="0.002"/><worldbody>
<body pos="0 0 1"><joint name="h" type="hinge" axis="0 1 0" range="-40 40" frictionloss="0.3"/>
 <geom type="capsule" fromto="0 0 0 0.5 0 0" size="0.04" mass="1"/>
 <body pos="0.5 0 0"><joint type="hinge" axis="0 1 0" range="-30 30" frictionloss="0.1"/>
  <geom type="capsule" fromto="0 0 0 0.4 0 0" size="0.03" mass="0.5"/>
 </body></body></worldbody></mujoco>"""

FOURBAR = """<mujoco model="fourbar"><option timestep="0.002"/><worldbody>
<body name="crank" pos="0 0 1"><joint type="hinge" axis="0 1 0" damping="0.05"/>
 <geom type="capsule" fromto="0 0 0 0.2 0 0" size="0.02" mass="0.2"/>
 <body name="coupler" pos="0.2 0 0"><joint type="hinge" axis="0 1 0"/>
  <geom type="capsule" fromto="0 0 0 0.2 0 -0.4" size="0.02" mass="0.4"/>
 </body></body>
<body name="rocker" pos="0.5 0 1"><joint type="hinge" axis="0 1 0"/>
 <geom type="capsule" fromto="0 0 0 -0.1 0 -0.4" size="0.02" mass="0.3"/>
</body></worldbody>
<equality><connect body1="coupler" body2="rocker" anchor="0.2 0 -0.4"/></equality>
</mujoco>"""

# name: (xml, cone or None for the model's, Newton steps before the report, initial qvel)
SCENES = {
    "humanoid falling": (js.models.xml("humanoid"), "pyramidal", 50, None),
    "humanoid falling, elliptic": (js.models.xml("humanoid"), "elliptic", 50, None),
    "quadruped standing": (js.models.xml("quadruped"), None, 200, None),
    "box stack": (STACK, None, 200, None),
    "ball rolling, condim 6": (BALL, None, 100, (1.0, 0, 0, 0, 10.0, 0)),
    "pendulum, limits + friction loss": (PENDULUM, None, 0, (3.0, -2.0)),
    "four-bar (connect)": (FOURBAR, None, 0, (2.0, 0.0, 0.0)),
}
SOLVERS = ("Newton", "CG", "PGS", "IPM")


def _start(xml, cone, nwarm, qvel):
    m = js.load_string(xml)
    if cone is not None:
        m.opt.cone = cone
    m.opt.solver = "Newton"
    d = js.make_data(m)
    if qvel is not None:
        d.qvel[:] = qvel
    if nwarm:
        js.step(m, d, nwarm)
    return m, d


def _run(m, d0, solver, warm, nstep):
    """Mean iterations and rows per step, and the largest relative cost excess over Newton's."""
    d = js.make_data(m)
    for name in ("qpos", "qvel", "qacc_warmstart", "ctrl"):
        getattr(d, name)[:] = getattr(d0, name)
    m.opt.solver = solver
    m.opt.tolerance = 1e-8
    m.opt.iterations = 1000
    flags = int(m.opt_disableflags[0])
    m.opt_disableflags[0] = flags & ~_NO_WARMSTART if warm else flags | _NO_WARMSTART
    iters, rows, excess = [], [], 0.0
    try:
        for _ in range(nstep):
            js.forward(m, d)
            iters.append(int(d.solver_niter[0]))
            rows.append(int(d.nefc[0]))
            if int(d.nefc[0]):
                cost = js.primal_cost(m, d, d.qacc)
                a = d.qacc.copy()
                m.opt.tolerance = 1e-12
                js.solve(m, d, "Newton", iterations=200)
                best = js.primal_cost(m, d, d.qacc)
                m.opt.tolerance = 1e-8
                d.qacc[:] = a
                excess = max(excess, (cost - best) / max(abs(best), 1e-12))
            js.step(m, d)
    finally:
        m.opt_disableflags[0] = flags
    return float(np.mean(iters)), float(np.mean(rows)), excess


def main():
    """Print the report."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    nstep = 5 if args.quick else 100
    rows = []
    for label, (xml, cone, nwarm, qvel) in SCENES.items():
        m, d0 = _start(xml, cone, nwarm, qvel)
        for solver in SOLVERS:
            warm, nefc, ex_w = _run(m, d0, solver, True, nstep)
            cold, _, ex_c = _run(m, d0, solver, False, nstep)
            saved = 1.0 - warm / cold if cold > 0 else 0.0
            rows.append([label, f"{nefc:.0f}", solver, f"{warm:.1f}", f"{cold:.1f}",
                         f"{100 * saved:.0f}%", f"{max(ex_w, ex_c):.1e}"])
    print(f"Mean solver iterations per step over {nstep} steps (tolerance 1e-8):\n")
    print(table(rows, ["scene", "rows (mean)", "solver", "warm", "cold", "saved by warm start",
                       "cost excess over Newton"]))


if __name__ == "__main__":
    main()
