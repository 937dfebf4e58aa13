"""Tendons: `step` on tendon-driven models next to mj_step, and a model without tendons.

Run: python benchmarks/bench_tendon.py [--quick]

Models: dm_control's point_mass.xml (two fixed tendons carrying the motors), manipulator.xml
(fixed tendons, a tendon equality, contacts), an arm with spatial tendon armature and a
tendon's actuatorfrcrange (`ARM`, implicitfast) and, for the cost of the tendon stages when
there is none, the embedded humanoid (ntendon = 0). Both libraries step N steps inside one
call (`js.step(m, d, N)`, `mujoco.mj_step(m, d, N)`), timed in alternation; the ratio column
is the median of the per-round ratios (ours / MuJoCo's time per step). The last column
checks that both compute the same trajectory: max |qpos difference| after the first N steps
from the same start, before the timing.
"""

import pathlib
import sys

import mujoco
import numpy as np

import jointspace as js

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))
from benchmarks._timing import load_both, step_columns, step_row, table  # noqa: E402
from tests._real_models import real_model  # noqa: E402

# spatial tendons with armature (one through a pulley), a fixed tendon with armature across
# two branches, two actuators on one tendon with actuatorfrcrange; implicitfast
ARM = """<mujoco><option integrator="implicitfast"/><worldbody>
<body><joint name="j0" type="hinge" axis="0 1 0" damping=".05"/>
<geom type="capsule" fromto="0 0 0 0 0 -.5" size=".05"/><site name="s0" pos=".05 0 -.2"/>
<body pos="0 0 -.5"><joint name="j1" type="hinge" axis="1 0 0" damping=".05"/>
<geom type="capsule" fromto="0 0 0 0 0 -.4" size=".04"/><site name="s1" pos="0 .05 -.3"/>
<body pos="0 0 -.4"><joint name="j2" type="slide" axis="1 0 0" damping=".5"/><geom size=".08"/>
<site name="s2" pos=".1 0 0"/></body></body></body>
<body pos=".6 0 0"><joint name="j3" type="hinge" axis="0 0 1" damping=".05"/>
<geom type="box" size=".1 .15 .2"/><site name="s3" pos="0 .1 -.2"/></body>
<site name="w" pos="0.2 0.1 0.3"/></worldbody>
<tendon><spatial name="sp" armature="0.3" stiffness="2" damping=".1" actuatorfrcrange="-1 1">
<site site="w"/><site site="s0"/><site site="s1"/><site site="s2"/></spatial>
<spatial armature="0.2"><site site="s3"/><site site="s1"/><pulley divisor="2"/><site site="s1"/>
<site site="s2"/></spatial>
<fixed name="cross" armature="0.15"><joint joint="j0" coef="1"/><joint joint="j3" coef="-.7"/>
</fixed></tendon>
<actuator><motor tendon="sp" gear="2"/><position tendon="sp" kp="3" kv=".5"/>
<motor tendon="cross"/></actuator></mujoco>"""


def _models():
    yield "dm_control point_mass (2 tendons)", real_model(
        "dm-control", "dm_control/suite/point_mass.xml")
    yield "dm_control manipulator (2 tendons, equality)", real_model(
        "dm-control", "dm_control/suite/manipulator.xml")
    yield "arm: spatial tendon armature, actuatorfrcrange", ARM
    yield "humanoid (no tendon)", js.models.xml("humanoid")


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
        q0 = (mj.key_qpos[0] if mj.nkey else mj.qpos0).copy()
        v0 = 0.5 * rng.standard_normal(mj.nv)
        u0 = rng.uniform(-1.0, 1.0, mj.nu)
        md.qpos[:], md.qvel[:], md.ctrl[:] = q0, v0, u0
        d.qpos[:], d.qvel[:], d.ctrl[:] = q0, v0, u0
        rows.append(step_row(name, mj, md, m, d, nstep, repeat))
    print(table(rows, step_columns(nstep)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
