"""Command line: `python -m jointspace [MODEL]` prints a summary of a model's kinematics.

MODEL is an embedded model's name (see `jointspace.models.list()`) or an MJCF/URDF file;
the default is the embedded humanoid.
"""

import argparse
import sys

import numpy as np


def summary(m, d):
    """Lines describing the model and its current pose (kinematics must have run)."""
    import jointspace as js

    jt = ("free", "ball", "slide", "hinge")
    counts = {t: int(np.sum(m.jnt_type == i)) for i, t in enumerate(jt)}
    lines = [
        f"model      {m.source or 'built in Python'}",
        f"sizes      nq={m.nq} nv={m.nv} nbody={m.nbody} njnt={m.njnt} ngeom={m.ngeom} "
        f"nsite={m.nsite} nu={m.nu}",
        "joints     " + ", ".join(f"{n} {t}" for t, n in counts.items() if n),
        f"mass       {m.body_mass.sum():.4f} kg in {int(np.sum(m.body_mass > 0))} bodies",
        f"com        {np.array2string(d.subtree_com[0], precision=4)} m",
    ]
    feet = [i for i, n in enumerate(m.names["site"]) if "foot" in n or "toe" in n]
    for s in feet:
        lines.append(f"site       {m.names['site'][s]:<12s} at "
                     f"{np.array2string(d.site_xpos[s], precision=4)} m")
    if not feet:
        for b in range(1, m.nbody):
            if all(m.body_parentid[c] != b for c in range(b + 1, m.nbody)):
                lines.append(f"leaf body  {m.names['body'][b]:<12s} at "
                             f"{np.array2string(d.xpos[b], precision=4)} m")
    for w in m.warnings:
        lines.append(f"warning    {w}")
    del js
    return lines


def main(argv=None):
    """Entry point of `python -m jointspace` and the `jointspace` script."""
    import jointspace as js

    ap = argparse.ArgumentParser(prog="jointspace", description=__doc__.splitlines()[0])
    ap.add_argument("model", nargs="?", default="humanoid",
                    help="embedded model name or MJCF/URDF file (default: humanoid)")
    args = ap.parse_args(argv)
    try:
        if args.model in dict(js.models.list()):
            m = js.models.load(args.model)
        else:
            m = js.load(args.model)
    except (js.JointspaceError, KeyError, OSError) as e:
        print(f"jointspace: error: {e}", file=sys.stderr)
        return 2
    d = js.make_data(m)
    js.kinematics(m, d)
    print("\n".join(summary(m, d)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
