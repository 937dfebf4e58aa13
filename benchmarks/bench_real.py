"""The step on every real MJCF file of the test data, next to mj_step (issue 23's speed table).

Run: python benchmarks/bench_real.py [--quick] [--only NAME ...]

Files: every dm_control suite and gymnasium model the tests sweep (tests/test_real_sweep.py;
the pinned wheels are fetched once into the test-data cache). Each file is loaded by both
libraries as it is written (its own solver, integrator, islands and time step). MuJoCo steps
it 300 steps from its initial state (zero controls), so that bodies rest on the floor and
contacts exist; our Data takes MuJoCo's full physics state (`set_state`). Then both step N
steps inside one call (`js.step(m, d, N)`, `mujoco.mj_step(m, d, N)`) from that state, timed
in alternation; the ratio column is the median of the per-round ratios (ours / MuJoCo's time
per step). |Δqpos| compares the two states after the first N steps from the same start
(chaotic files part by design; test_real_sweep holds the parity). The last lines give the
median and the worst ratio, the issue's targets being ≤ 1.0 and ≤ 1.3.

Then the mesh robots of our own making (tests/_mesh_robots.py: the quadruped on mesh feet,
the arm whose mesh fingers hold a mesh cube), settled as that module does (the gripper's
cube lifted), each with its controls held; test_mesh_robots holds their parity.
"""

import argparse
import pathlib
import sys

import mujoco
import numpy as np

import jointspace as js

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))
from benchmarks._timing import interleaved, load_both, table  # noqa: E402
from tests._mesh_robots import into_ours, mesh_gripper, mesh_quadruped, settle  # noqa: E402
from tests._real_models import real_model  # noqa: E402
from tests.test_real_sweep import FILES  # noqa: E402

SETTLE = 300  # MuJoCo steps before the timed state: bodies come to rest on the floor


def row(dist, path, nstep, repeat):
    """One table row for a file: sizes, contacts, both times per step, ratio, |Δqpos|."""
    mj, m = load_both(real_model(dist, path))
    md = mujoco.MjData(mj)
    mujoco.mj_step(mj, md, SETTLE)
    name = f"{pathlib.Path(path).stem} ({'dm' if dist == 'dm-control' else 'gym'})"
    return timed(name, mj, md, m, nstep, repeat)


def mesh_row(name, xml, nstep, repeat):
    """A table row for a mesh robot scene, settled as tests/_mesh_robots.settle does."""
    _, m = load_both(xml)
    mj, md = settle(xml, SETTLE)
    return timed(name, mj, md, m, nstep, repeat)


def timed(name, mj, md, m, nstep, repeat):
    """Both libraries stepped from MuJoCo's state md, its controls held: (ratio, cells)."""
    d = js.make_data(m)
    into_ours(m, d, mj, md)
    mujoco.mj_step(mj, md, nstep)
    js.step(m, d, nstep)
    diff = float(np.max(np.abs(d.qpos - md.qpos), initial=0.0))
    ours, theirs = interleaved([lambda: js.step(m, d, nstep),
                                lambda: mujoco.mj_step(mj, md, nstep)], repeat)
    ratio = float(np.median(ours / theirs))
    return ratio, [name, str(mj.nv), str(int(md.ncon)), str(int(md.nefc)),
                   f"{np.median(ours) / nstep * 1e6:.2f}",
                   f"{np.median(theirs) / nstep * 1e6:.2f}", f"{ratio:.2f}", f"{diff:.0e}"]


def main():
    """Print the table, its median and its worst ratio."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--only", nargs="*", default=None,
                    help="file stems to time (mesh_quadruped, mesh_gripper for ours)")
    args = ap.parse_args()
    nstep, repeat = (50, 5) if args.quick else (200, 15)
    rows, ratios = [], []
    for dist, path in FILES:
        if args.only and pathlib.Path(path).stem not in args.only:
            continue
        r, cells = row(dist, path, nstep, repeat)
        ratios.append(r)
        rows.append(cells)
        print(" | ".join(cells), flush=True)
    for name, make in (("mesh quadruped (ours)", mesh_quadruped),
                       ("mesh gripper (ours)", mesh_gripper)):
        if args.only and name.split(" (")[0].replace(" ", "_") not in args.only:
            continue
        r, cells = mesh_row(name, make(), nstep, repeat)
        ratios.append(r)
        rows.append(cells)
        print(" | ".join(cells), flush=True)
    print()
    print(table(rows, ["file", "nv", "ncon", "nefc", "js.step µs/step", "mj_step µs/step",
                       "ratio", f"|Δqpos| after {nstep} steps"]))
    print()
    print(f"median ratio {np.median(ratios):.2f}, worst {max(ratios):.2f} "
          f"({rows[int(np.argmax(ratios))][0]}), {len(ratios)} models")


if __name__ == "__main__":
    main()
