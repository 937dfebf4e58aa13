"""Activation dynamics: `step` on models with act states and muscles, next to mj_step.

Run: python benchmarks/bench_activation.py [--quick]

Models: the embedded humanoid as is (no activations: the new stages must leave it where it
was), the same humanoid with every motor given a first-order filter (`dyntype="filter"`,
21 activations), with every motor a muscle (`<muscle>` with a lengthrange of ±gear·1 rad,
21 activations), and dm_control's model_with_third_order_actuators.xml (a cylinder and an
integrator; from the pinned wheel of tests/_real_models.py). Both libraries step N steps
inside one call (`js.step(m, d, N)`, `mujoco.mj_step(m, d, N)`), timed in alternation; the
ratio is the median of the per-round ratios (ours / MuJoCo's time per step). The last column
checks that both compute the same trajectory: max |qpos difference| after the first N steps
from the same start (Euler), under the same constant controls.
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


def _humanoid(kind):
    xml = js.models.xml("humanoid")
    if kind == "filter":
        xml = xml.replace("<motor ", '<general dyntype="filter" dynprm="0.05" ')
    elif kind == "muscle":
        xml = re.sub(r'<motor ([^>]*?)gear="([0-9.]+)"',
                     lambda g: f'<muscle {g.group(1)}gear="{g.group(2)}" lengthrange="'
                               f'-{g.group(2)} {g.group(2)}"', xml)
    return xml


def _models():
    yield "humanoid (no activation)", _humanoid("")
    yield "humanoid, filter on every motor", _humanoid("filter")
    yield "humanoid, muscle on every motor", _humanoid("muscle")
    yield "dm_control third-order actuators", real_model(
        "dm-control", "dm_control/mujoco/testing/assets/model_with_third_order_actuators.xml")


def main(argv=None):
    """Print the table of per-step times and ratios."""
    quick = "--quick" in (sys.argv[1:] if argv is None else argv)
    nstep = 20 if quick else 200
    repeat = 3 if quick else 15
    rows = []
    for name, src in _models():
        mj, m = load_both(src)
        md = mujoco.MjData(mj)
        d = js.make_data(m)
        rng = np.random.default_rng(0)
        v0 = 0.5 * rng.standard_normal(mj.nv)
        u = rng.uniform(0.0, 0.5, mj.nu)
        for x in (md, d):
            x.qpos[:], x.qvel[:], x.ctrl[:] = mj.qpos0, v0, u
        row = step_row(name, mj, md, m, d, nstep, repeat)
        rows.append(row[:2] + [str(mj.na)] + row[2:])
    cols = step_columns(nstep)
    print(table(rows, cols[:2] + ["na"] + cols[2:]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
