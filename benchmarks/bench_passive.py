"""Passive forces: `step` with fluid forces, gravcomp and actuator clamps, next to mj_step.

The models have fluid forces, gravity compensation and joint-level actuator clamps; both
libraries step them in the same run.

Run: python benchmarks/bench_passive.py [--quick]

Models: gymnasium's and dm_control's swimmer.xml (the inertia-box fluid model; from the pinned
wheels of tests/_real_models.py, downloaded on first use), and the embedded humanoid as is
and with body gravity compensation (gravcomp 0.5 on every body, actuatorgravcomp on the
hinges) and an actuatorfrcrange clamp on every hinge, so that the cost of the new stages is
visible next to the same model without them. Both libraries step N steps inside one call
(`js.step(m, d, N)`, `mujoco.mj_step(m, d, N)`), timed in alternation; the ratio column is
the median of the per-round ratios (ours / MuJoCo's time per step). The last column checks
that both compute the same trajectory: max |qpos difference| after the first N steps from
the same start, before the timing (RK4 for the swimmers, Euler for the humanoids).
"""

import pathlib
import re
import sys

import mujoco
import numpy as np

import jointspace as js

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))
from benchmarks._timing import load_both, step_columns, step_row, table  # noqa: E402
from tests._real_models import real_model  # noqa: E402


def _humanoid(extra):
    xml = js.models.xml("humanoid")
    if extra:
        xml = re.sub(r"<body ([^>]*?)>", r'<body \1 gravcomp="0.5">', xml)
        xml = xml.replace('<joint type="hinge"', '<joint type="hinge" actuatorgravcomp="true" '
                          'actuatorfrcrange="-50 50"', 1)
    return xml


def _models():
    yield "gymnasium swimmer (fluid)", real_model(
        "gymnasium", "gymnasium/envs/mujoco/assets/swimmer.xml"), "RK4"
    yield "dm_control swimmer (fluid)", real_model(
        "dm-control", "dm_control/suite/swimmer.xml"), "RK4"
    yield "gymnasium swimmer (fluid), implicit", real_model(
        "gymnasium", "gymnasium/envs/mujoco/assets/swimmer.xml"), "implicit"
    yield "dm_control swimmer (fluid), implicitfast", real_model(
        "dm-control", "dm_control/suite/swimmer.xml"), "implicitfast"
    yield "humanoid", _humanoid(False), "Euler"
    yield "humanoid + gravcomp, actuatorfrcrange", _humanoid(True), "Euler"


def main(argv=None):
    """Print the table of per-step times and ratios."""
    quick = "--quick" in (sys.argv[1:] if argv is None else argv)
    nstep = 20 if quick else 200
    repeat = 3 if quick else 15
    rows = []
    for name, src, integrator in _models():
        mj, m = load_both(src)
        mj.opt.integrator = getattr(mujoco.mjtIntegrator, f"mjINT_{integrator.upper()}")
        m.opt.integrator = integrator
        md = mujoco.MjData(mj)
        d = js.make_data(m)
        rng = np.random.default_rng(0)
        q0 = mj.qpos0.copy()
        v0 = 0.5 * rng.standard_normal(mj.nv)
        md.qpos[:], md.qvel[:] = q0, v0
        d.qpos[:], d.qvel[:] = q0, v0
        rows.append(step_row(name, mj, md, m, d, nstep, repeat))
    print(table(rows, step_columns(nstep)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
