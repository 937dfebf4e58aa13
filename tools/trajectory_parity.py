"""Trajectories of every real file against mj_step, and how chaotic each motion is.

For each dm_control and gymnasium file (and the mesh robots of tests/_mesh_robots.py), both
engines step N steps from the file's first keyframe (or its initial state) under the same
seeded controls: piecewise constant, a new uniform draw in half the control range (±0.5
where unlimited) every 100 steps. Printed per file: the largest |qpos − MuJoCo's| at step
100 and up to step N, and MuJoCo's own growth: the same run with qvel perturbed by 1e-10
(a seeded direction), |Δqpos| / 1e-10 at step 100 and at its largest up to N. A growth G
means a round-off difference of ~1e-16 may become ~1e-16 · G: a motion with G ≥ 1e6
(tests/test_real_trajectories.py's CHAOTIC) is compared over 100 steps only.

    python tools/trajectory_parity.py [--n 1000] [names ...]
"""

import argparse
import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))

from tests.test_real_trajectories import cases, run  # noqa: E402


def main():
    """Print one row per file."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=1000)
    ap.add_argument("--tight", action="store_true",
                    help="MuJoCo's convex collision run to convergence in both")
    ap.add_argument("names", nargs="*")
    args = ap.parse_args()
    print(f"{'file':32s} {'|Δqpos| @100':>13s} {f'max @{args.n}':>12s} "
          f"{'growth @100':>12s} {f'max @{args.n}':>12s}")
    for name, load in cases():
        if args.names and name not in args.names:
            continue
        mj, m, *settled = load()
        dev, grow = run(mj, m, args.n, growth=True, settled=settled[0] if settled else None,
                        tight=args.tight)
        print(f"{name:32s} {dev[99]:13.1e} {dev.max():12.1e} {grow[99]:12.1e} "
              f"{grow.max():12.1e}", flush=True)


if __name__ == "__main__":
    main()
