"""Loading models: `js.load` vs MuJoCo's `MjModel.from_xml_path`, same process, same run.

MJCF files: the dm_control suite's dog (162 STL meshes) and humanoid_CMU, gymnasium's
humanoid and ant, each loaded by both libraries in alternation, round by round; the ratio
is the median of the per-round ratios ours / MuJoCo. URDF files of example-robot-data
(COLLADA and STL meshes with package:// paths, which MuJoCo's URDF reader does not resolve)
are timed against Pinocchio building the model and its collision and visual geometry
(meshes loaded through hpp-fcl / coal), the closest thing it does: `js.load` reads both
kinds of geometry too (its default `visual=True`). Both sides read the files from the page
cache: the first load of each file is not timed.

Run: python benchmarks/bench_load.py [--quick]
"""

import argparse
import sys
import time
import warnings

import numpy as np

sys.path.insert(0, __file__.rsplit("/", 1)[0])
from _timing import table  # noqa: E402

import jointspace as js  # noqa: E402

MJCF = [("dm-control", "dm_control/suite/dog.xml"),
        ("dm-control", "dm_control/suite/humanoid_CMU.xml"),
        ("gymnasium", "gymnasium/envs/mujoco/assets/humanoid.xml"),
        ("gymnasium", "gymnasium/envs/mujoco/assets/ant.xml")]
URDF = ["so_arm_description/urdf/so101.urdf", "go1_description/urdf/go1.urdf",
        "b1_description/urdf/b1-z1.urdf", "talos_data/robots/talos_full_v2.urdf"]


def _js_load(path, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return js.load(path, **kw)


def _rounds(fns, repeat):
    """Seconds of one call of each fn, in alternation, `repeat` rounds (after one warm-up)."""
    for fn in fns:
        fn()
    times = [[] for _ in fns]
    for _ in range(repeat):
        for fn, ts in zip(fns, times):
            t = time.perf_counter()
            fn()
            ts.append(time.perf_counter() - t)
    return [np.array(ts) for ts in times]


def _row(name, m, ours, theirs):
    return [name, str(m.nmesh), str(m.nmeshvert), f"{np.median(ours) * 1e3:.0f}",
            f"{np.median(theirs) * 1e3:.0f}", f"{np.median(ours / theirs):.2f}"]


def main(argv=None):
    """Run the benchmark and print the tables."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="few repetitions (CI smoke run)")
    args = ap.parse_args(argv)
    repeat = 2 if args.quick else 7

    import mujoco

    sys.path.insert(0, __file__.rsplit("/", 2)[0])
    from tests._real_models import real_model

    rows = []
    for dist, rel in MJCF[:2] if args.quick else MJCF:
        path = str(real_model(dist, rel))
        m = _js_load(path)
        ours, theirs = _rounds([lambda: _js_load(path),
                                lambda: mujoco.MjModel.from_xml_path(path)], repeat)
        rows.append(_row(rel.rsplit("/", 1)[1], m, ours, theirs))
    print(f"MJCF: js.load vs mujoco.MjModel.from_xml_path, median of {repeat} rounds\n")
    print(table(rows, ["file", "nmesh", "nmeshvert", "js.load ms", "MuJoCo ms", "ratio"]))

    try:
        import pinocchio as pin

        from tests._util import erd_robots_dir
    except ImportError:
        print("\n(URDF: Pinocchio or example-robot-data is not installed; skipped)")
        return 0
    robots = erd_robots_dir()
    rows = []
    for rel in URDF[:1] if args.quick else URDF:
        path = str(robots / rel)
        pkg = [str(robots.parent.parent)]

        def theirs(path=path, pkg=pkg):
            model = pin.buildModelFromUrdf(path)
            for kind in (pin.GeometryType.COLLISION, pin.GeometryType.VISUAL):
                pin.buildGeomFromUrdf(model, path, kind, package_dirs=pkg)

        m = _js_load(path)
        ours, theirs_t = _rounds([lambda path=path: _js_load(path), theirs], repeat)
        rows.append(_row(rel.rsplit("/", 1)[1], m, ours, theirs_t))
    print(f"\nURDF: js.load vs Pinocchio (model, collision and visual geometry), median of "
          f"{repeat} rounds\n")
    print(table(rows, ["file", "nmesh", "nmeshvert", "js.load ms", "Pinocchio ms", "ratio"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
