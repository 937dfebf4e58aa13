"""What it costs to cross from Python into compiled code (DESIGN.md §2.4), measured here.

Run: python benchmarks/bench_overhead.py
Compares a Numba dispatcher call and a direct entry-point call with the Model/Data structs,
the full public-wrapper cost of a trivial operation, and MuJoCo's binding overhead.
"""

import sys

import mujoco
import numpy as np
from numba import njit

sys.path.insert(0, __file__.rsplit("/", 1)[0])
from _timing import per_call, table, us  # noqa: E402

import jointspace as js  # noqa: E402
from jointspace import _entry  # noqa: E402


@njit(cache=True)
def _noop(m, d):
    return m.nv


@njit(cache=True)
def _noop0():
    return 0


def main():
    """Print the overhead table."""
    m = js.models.humanoid()
    d = js.make_data(m)
    k = _entry.Kernel(_noop)
    k(m._s, d._s)
    mm = mujoco.MjModel.from_xml_string(js.models.xml("humanoid"))
    md = mujoco.MjData(mm)
    v3 = np.zeros(3)
    rows = [
        ["njit dispatcher, no argument", us(per_call(_noop0))],
        ["njit dispatcher, Model + Data structs", us(per_call(lambda: _noop(m._s, d._s)))],
        ["entry point, Model + Data structs", us(per_call(lambda: k(m._s, d._s)))],
        ["check_pair (argument validation)",
         us(per_call(lambda: _entry.check_pair(m, d, "f")))],
        ["vec (validate one (nv,) array)",
         us(per_call(lambda: _entry.vec(d.qvel, m.nv, "qvel", "f")))],
        ["MuJoCo binding, trivial call: mju_zero3 on a 3-vector",
         us(per_call(lambda: mujoco.mju_zero3(v3)))],
        ["MuJoCo mj_kinematics on the humanoid (for scale)",
         us(per_call(lambda: mujoco.mj_kinematics(mm, md)))],
    ]
    print(table(rows, ["call", "µs"]))


if __name__ == "__main__":
    main()
