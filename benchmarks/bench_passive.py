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
import warnings

import mujoco
import numpy as np

import jointspace as js

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))
from benchmarks._timing import interleaved, table  # noqa: E402
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
    yield "humanoid", _humanoid(False), "Euler"
    yield "humanoid + gravcomp, actuatorfrcrange", _humanoid(True), "Euler"


def main(argv=None):
    """Print the table of per-step times and ratios."""
    quick = "--quick" in (sys.argv[1:] if argv is None else argv)
    nstep = 20 if quick else 200
    repeat = 3 if quick else 15
    rows = []
    for name, src, integrator in _models():
        is_file = isinstance(src, pathlib.Path)
        mj = (mujoco.MjModel.from_xml_path(str(src)) if is_file
              else mujoco.MjModel.from_xml_string(src))
        mj.opt.integrator = getattr(mujoco.mjtIntegrator, f"mjINT_{integrator.upper()}")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            m = js.load(src) if is_file else js.load_string(src)
        m.opt.integrator = integrator
        md = mujoco.MjData(mj)
        d = js.make_data(m)
        rng = np.random.default_rng(0)
        q0 = mj.qpos0.copy()
        v0 = 0.5 * rng.standard_normal(mj.nv)
        md.qpos[:], md.qvel[:] = q0, v0
        d.qpos[:], d.qvel[:] = q0, v0
        mujoco.mj_step(mj, md, nstep)
        js.step(m, d, nstep)
        diff = float(np.max(np.abs(d.qpos - md.qpos)))
        ours, theirs = interleaved([lambda: js.step(m, d, nstep),
                                    lambda: mujoco.mj_step(mj, md, nstep)], repeat)
        ratio = float(np.median(ours / theirs))
        rows.append([name, str(mj.nv), f"{np.median(ours) / nstep * 1e6:.2f}",
                     f"{np.median(theirs) / nstep * 1e6:.2f}", f"{ratio:.2f}", f"{diff:.0e}"])
    print(table(rows, ["model", "nv", "js.step µs/step", "mj_step µs/step", "ratio",
                       f"|Δqpos| after {nstep} steps"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
