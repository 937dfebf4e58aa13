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
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import mujoco  # noqa: E402

import jointspace as js  # noqa: E402
from jointspace.collision import collision  # noqa: E402
from tests._collision_cases import pair_xml, random_quat  # noqa: E402

PAIRS = [("sphere", "ellipsoid"), ("sphere", "mesh"), ("capsule", "ellipsoid"),
         ("capsule", "cylinder"), ("capsule", "mesh"), ("ellipsoid", "ellipsoid"),
         ("ellipsoid", "cylinder"), ("ellipsoid", "box"), ("ellipsoid", "mesh"),
         ("cylinder", "cylinder"), ("cylinder", "box"), ("cylinder", "mesh"),
         ("box", "mesh"), ("mesh", "mesh"), ("plane", "mesh"), ("plane", "ellipsoid")]
SETTINGS = {"default": (35, 1e-6), "tight": (1000, 1e-12)}
EXACT = 1e-9
MARGIN = 0.01  # each geom's margin: separated poses within 0.02 still give contacts


def _poses(qpos0, rng, n, plane):
    """Poses near contact: deep (centre distance 0.02-0.1), shallow and separated (0.1-0.35)."""
    out = []
    for i in range(n):
        q = qpos0.copy()
        if plane:
            q[0:3] = [rng.uniform(-1, 1), rng.uniform(-1, 1), rng.uniform(-0.05, 0.2)]
            q[3:7] = random_quat(rng)
        else:
            q[0:3] = rng.uniform(-0.05, 0.05, 3)
            q[3:7] = random_quat(rng)
            u = rng.normal(size=3)
            r = rng.uniform(0.02, 0.1) if i % 4 == 0 else rng.uniform(0.1, 0.35)
            q[7:10] = q[0:3] + u / np.linalg.norm(u) * r
            q[10:14] = random_quat(rng)
        out.append(q)
    return out


def _contacts_mj(mm, md, q):
    md.qpos[:] = q
    mujoco.mj_kinematics(mm, md)
    mujoco.mj_collision(mm, md)
    c = md.contact
    n = md.ncon
    return c.dist[:n].copy(), c.pos[:n].copy(), c.frame[:n].copy()


def _contacts_js(jm, jd, q):
    jd.qpos[:] = q
    n = collision(jm, jd)
    c = jd.contact
    return c.dist[:n].copy(), c.pos[:n].copy(), c.frame[:n].copy()


def compare(t1, t2, n, seed, setting):
    """Agreement statistics of one pair type at one CCD setting."""
    rng = np.random.default_rng(seed)
    extra = f'margin="{MARGIN}"'
    xml = pair_xml(t1, t2, rng, extra, extra)
    mm = mujoco.MjModel.from_xml_string(xml)
    mm.opt.ccd_iterations, mm.opt.ccd_tolerance = SETTINGS[setting]
    md = mujoco.MjData(mm)
    xml_js = xml.replace("<mujoco>", '<mujoco><option ccd_iterations="%d" ccd_tolerance="%g"/>'
                         % SETTINGS[setting])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        jm = js.load_string(xml_js)
    jd = js.make_data(jm)
    touch = same = exact = 0
    worst = np.zeros(3)
    mism = []
    for i, q in enumerate(_poses(mm.qpos0, rng, n, t1 == "plane")):
        a = _contacts_mj(mm, md, q)
        b = _contacts_js(jm, jd, q)
        touch += bool(len(a[0]) or len(b[0]))
        if len(a[0]) != len(b[0]):
            mism.append(i)
            continue
        same += 1
        if not len(a[0]):
            exact += 1
            continue
        e = np.array([np.abs(a[0] - b[0]).max(), np.abs(a[1] - b[1]).max(),
                      np.abs(a[2] - b[2]).max()])
        worst = np.maximum(worst, e)
        exact += bool(e.max() <= EXACT)
    return dict(touch=touch, same=same / n, exact=exact / n, worst=worst, mism=mism[:5])


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
          f"{'dist':>9s} {'pos':>9s} {'frame':>9s}  first count mismatches")
    for t1, t2 in pairs:
        for s in args.settings.split(","):
            r = compare(t1, t2, args.n, args.seed, s)
            w = r["worst"]
            print(f"{t1 + '-' + t2:22s} {s:8s} {r['touch']:6d} {100 * r['same']:8.2f} "
                  f"{100 * r['exact']:8.2f} {w[0]:9.2e} {w[1]:9.2e} {w[2]:9.2e}  {r['mism']}",
                  flush=True)


if __name__ == "__main__":
    main()
