"""Convex collision parity with MuJoCo's mj_collision, pair type by pair type.

For each convex pair type, N seeded random poses (deep, shallow, touching and separated
within the margin) are collided by MuJoCo and by jointspace, at MuJoCo's default CCD
settings (ccd_iterations 35, ccd_tolerance 1e-6) and at tightened ones (1000, 1e-12), and
compared contact by contact in MuJoCo's order: the count, then each contact's dist, pos and
frame. Prints one table row per pair type and setting.

    python tools/ccd_parity.py [--n 10000] [--pairs box-mesh,mesh-mesh] [--seed 0]

Columns: poses with contacts in either (touch), the fraction with equal counts (count%),
the fraction with equal counts and every contact equal to 1e-9 in dist, pos and frame
(exact%), and over the poses with equal counts the largest dist, pos and frame differences.
"""

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests._collision_cases import compare_with_mujoco as compare  # noqa: E402

PAIRS = [("sphere", "ellipsoid"), ("sphere", "mesh"), ("capsule", "ellipsoid"),
         ("capsule", "cylinder"), ("capsule", "mesh"), ("ellipsoid", "ellipsoid"),
         ("ellipsoid", "cylinder"), ("ellipsoid", "box"), ("ellipsoid", "mesh"),
         ("cylinder", "cylinder"), ("cylinder", "box"), ("cylinder", "mesh"),
         ("box", "mesh"), ("mesh", "mesh"), ("plane", "mesh"), ("plane", "ellipsoid")]


def main():
    """Print the table for the pair types and settings asked for."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=10000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--pairs", default="")
    ap.add_argument("--settings", default="default,tight")
    args = ap.parse_args()
    pairs = PAIRS
    if args.pairs:
        want = set(args.pairs.split(","))
        pairs = [p for p in PAIRS if "-".join(p) in want]
    print(f"{'pair':22s} {'ccd':8s} {'touch':>6s} {'count%':>8s} {'exact%':>8s} "
          f"{'dist':>9s} {'pos':>9s} {'frame':>9s}  first count mismatches, first inexact")
    for t1, t2 in pairs:
        for s in args.settings.split(","):
            r = compare(t1, t2, args.n, args.seed, s)
            w = r["worst"]
            print(f"{t1 + '-' + t2:22s} {s:8s} {r['touch']:6d} {100 * r['same']:8.2f} "
                  f"{100 * r['exact']:8.2f} {w[0]:9.2e} {w[1]:9.2e} {w[2]:9.2e}  {r['mism']} "
                  f"{r['inexact']}",
                  flush=True)


if __name__ == "__main__":
    main()
