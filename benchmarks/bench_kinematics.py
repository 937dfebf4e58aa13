"""Kinematics and Jacobians on the humanoid: jointspace vs MuJoCo, same process, same run.

Run: python benchmarks/bench_kinematics.py [--quick]
Prints a Markdown table of median µs per call from Python and the ratio ours / MuJoCo.
"""

import argparse
import sys
import time

import mujoco
import numpy as np

sys.path.insert(0, __file__.rsplit("/", 1)[0])
from _timing import per_call, table, us  # noqa: E402

t0 = time.perf_counter()
import jointspace as js  # noqa: E402

IMPORT_S = time.perf_counter() - t0


def main(argv=None):
    """Run the benchmark and print the table."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="few repetitions (CI smoke run)")
    args = ap.parse_args(argv)
    repeat = 3 if args.quick else 15

    t = time.perf_counter()
    m = js.models.humanoid()
    d = js.make_data(m)
    js.kinematics(m, d)
    site = m.names["site"].index(next(n for n in m.names["site"] if "foot" in n))
    js.jacobian_site(m, d, site)
    first_s = time.perf_counter() - t

    mm = mujoco.MjModel.from_xml_string(js.models.xml("humanoid"))
    md = mujoco.MjData(mm)
    rng = np.random.default_rng(0)
    md.qpos[:] = mm.qpos0 + 0.1 * rng.normal(size=mm.nq)
    md.qpos[3:7] /= np.linalg.norm(md.qpos[3:7])
    d.qpos[:] = md.qpos
    mujoco.mj_forward(mm, md)
    js.kinematics(m, d)
    jp, jr = np.zeros((3, mm.nv)), np.zeros((3, mm.nv))
    jpo, jro = np.zeros((3, m.nv)), np.zeros((3, m.nv))

    def mj_kin():
        mujoco.mj_kinematics(mm, md)
        mujoco.mj_comPos(mm, md)
        mujoco.mj_comVel(mm, md)

    rows = []
    for name, ours, theirs in [
        ("kinematics (poses + com + cvel)", lambda: js.kinematics(m, d), mj_kin),
        ("jacobian_site (preallocated)", lambda: js.jacobian_site(m, d, site, jpo, jro),
         lambda: mujoco.mj_jacSite(mm, md, jp, jr, site)),
    ]:
        a = per_call(ours, repeat=repeat)
        b = per_call(theirs, repeat=repeat)
        rows.append([name, us(a), us(b), f"{a / b:.2f}"])
    print(f"humanoid: nq={m.nq} nv={m.nv} nbody={m.nbody}; import {IMPORT_S:.2f} s, "
          f"first calls (load + compile or cache) {first_s:.2f} s")
    print(table(rows, ["operation (from Python)", "jointspace µs", "MuJoCo µs",
                       "ratio ours/MuJoCo"]))
    print("MuJoCo column for kinematics = mj_kinematics + mj_comPos + mj_comVel (same outputs).")


if __name__ == "__main__":
    main()
