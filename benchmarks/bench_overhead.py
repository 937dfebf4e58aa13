"""What it costs to cross from Python into compiled code (DESIGN.md §2.4), measured here.

Run: python benchmarks/bench_overhead.py
Compares a Numba dispatcher call and a direct entry-point call with the Model/Data structs,
four vector arguments unboxed by Numba and as `CheckedArray`s, the full public-wrapper cost
of a trivial operation, and MuJoCo's binding overhead.
"""

import sys

import mujoco
import numpy as np
from numba import njit

sys.path.insert(0, __file__.rsplit("/", 1)[0])
from _timing import per_call, table, us  # noqa: E402

import jointspace as js  # noqa: E402
from jointspace._numba import entry  # noqa: E402


@njit(cache=True)
def _noop(m, d):
    return m.nv


@njit(cache=True)
def _noop0():
    return 0


@njit(cache=True)
def _noop4(d, q, v, a, out):
    return q.shape[0] + v.shape[0] + a.shape[0] + out.shape[0]


def main():
    """Print the overhead table."""
    m = js.models.humanoid()
    d = js.make_data(m)
    k = entry.Kernel(_noop)
    k.ep(m._s, d._s)
    mm = mujoco.MjModel.from_xml_string(js.models.xml("humanoid"))
    md = mujoco.MjData(mm)
    v3 = np.zeros(3)
    q, v, a, out = (np.zeros(m.nv) for _ in range(4))
    plain = entry.Kernel(_noop4)
    plain.ep(d._s, q, v, a, out)
    checked = entry.Kernel(_noop4, sig=(None, entry.IN1, entry.IN1, entry.IN1, entry.OUT1))
    checked.ep(d._s, q, v, a, out)
    k_ep, plain_ep, checked_ep = k.ep, plain.ep, checked.ep  # entry points, after the first call
    rows = [
        ["njit dispatcher, no argument", us(per_call(_noop0))],
        ["njit dispatcher, Model + Data structs", us(per_call(lambda: _noop(m._s, d._s)))],
        ["entry point, Model + Data structs", us(per_call(lambda: k_ep(m._s, d._s)))],
        ["entry point, Data struct + 4 (nv,) arrays, Numba's array unboxing",
         us(per_call(lambda: plain_ep(d._s, q, v, a, out)))],
        ["entry point, Data struct + 4 (nv,) arrays as CheckedArray",
         us(per_call(lambda: checked_ep(d._s, q, v, a, out)))],
        ["check_pair (argument validation)",
         us(per_call(lambda: entry.check_pair(m, d, "f")))],
        ["vec (validate one (nv,) array)",
         us(per_call(lambda: entry.vec(d.qvel, m.nv, "qvel", "f")))],
        ["MuJoCo binding, trivial call: mju_zero3 on a 3-vector",
         us(per_call(lambda: mujoco.mju_zero3(v3)))],
        ["MuJoCo mj_kinematics on the humanoid (for scale)",
         us(per_call(lambda: mujoco.mj_kinematics(mm, md)))],
    ]
    print(table(rows, ["call", "µs"]))


if __name__ == "__main__":
    main()
