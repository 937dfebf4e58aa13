"""The 2014 paper's Fig. 2: forward and inverse impulses on the hinge with dry friction.

Todorov (ICRA 2014, 004 §VI): a single joint with dry friction (friction loss) whose link
touches the ground, perturbed by random controls for 10 s. At every step the forward solver
computes the friction-loss and contact impulses; the analytical inverse, given the motion
the forward dynamics produced, computes them again. The paper reports agreement within
1e-5 with its PGS solver. This script runs the experiment with PGS at increasing iteration
limits, with Newton at its defaults and with Newton run to convergence, prints the largest
impulse differences, and writes the curves of the PGS run with 300 iterations to
docs/data/fig2_hinge_friction.csv (time, friction-loss impulse and contact normal impulse,
forward and inverse) and, with --plot and matplotlib installed, the figure in docs/inverse.md.

Run: python examples/fig2_hinge_friction.py [--plot docs/img/fig2_hinge_friction.png]
"""

import argparse
import pathlib

import numpy as np

import jointspace as js
from jointspace.constraint import (
    CNSTR_CONTACT_ELLIPTIC,
    CNSTR_CONTACT_FRICTIONLESS,
    CNSTR_FRICTION_DOF,
)
from jointspace.viz.plot import pyplot

ROOT = pathlib.Path(__file__).resolve().parents[1]
DURATION = 10.0  # s
HOLD = 0.05  # s each random control is held


def random_controls(m, rng, nstep):
    """Piecewise-constant controls, uniform over ctrlrange, changing every HOLD seconds."""
    lo, hi = m.actuator_ctrlrange[0]
    per = max(1, int(round(HOLD / m.opt.timestep)))
    levels = rng.uniform(lo, hi, nstep // per + 1)
    return np.repeat(levels, per)[:nstep]


def simulate(m, ctrl):
    """Forward-simulate; per step the state, forward's qacc and its constraint rows."""
    d = js.make_data(m)
    T = ctrl.shape[0]
    qpos, qvel, qacc = np.empty((T, m.nq)), np.empty((T, m.nv)), np.empty((T, m.nv))
    rows = []
    for t in range(T):
        d.ctrl[0] = ctrl[t]
        js.forward(m, d)
        qpos[t], qvel[t], qacc[t] = d.qpos, d.qvel, d.qacc
        n = d.nefc[0]
        rows.append((d.efc_type[:n].copy(), d.efc_id[:n].copy(), d.efc_force[:n].copy()))
        js.step(m, d)
    return d, qpos, qvel, qacc, rows


def impulses(types, ids, force, h):
    """(friction-loss impulse, total contact normal impulse) of one step's rows.

    The normal force of a contact is the sum of its pyramid edges, or its first row for
    elliptic and frictionless contacts.
    """
    friction = h * float(np.sum(force[types == CNSTR_FRICTION_DOF]))
    normal = 0.0
    for i in np.flatnonzero(types >= CNSTR_CONTACT_FRICTIONLESS):
        first = i == 0 or ids[i - 1] != ids[i] or types[i - 1] != types[i]
        if types[i] != CNSTR_CONTACT_ELLIPTIC or first:
            normal += h * float(force[i])
    return friction, normal


def run(solver, iterations, tolerance, ctrl):
    """One experiment: largest |forward − inverse| impulse and the two curves."""
    m = js.models.hinge_friction()
    m.opt.solver = solver
    m.opt.iterations = iterations
    m.opt.tolerance = tolerance
    h = m.opt.timestep
    d, qpos, qvel, qacc, rows = simulate(m, ctrl)
    inv = js.inverse_trajectory(m, d, qpos, qvel, qacc)
    worst = 0.0
    curves = np.zeros((len(rows), 5))
    for t, (types, ids, force) in enumerate(rows):
        n = types.shape[0]
        assert inv.nefc[t] == n
        worst = max(worst, h * float(np.max(np.abs(inv.efc_force[t, :n] - force), initial=0.0)))
        curves[t, 0] = t * h
        curves[t, 1], curves[t, 3] = impulses(types, ids, force, h)
        curves[t, 2], curves[t, 4] = impulses(types, ids, inv.efc_force[t, :n], h)
    return worst, curves


SETTINGS = (("PGS", 100, 1e-8), ("PGS", 300, 1e-10), ("PGS", 3000, 1e-14),
            ("Newton", 100, 1e-8), ("Newton", 100, 1e-15))
CURVES = ("PGS", 300, 1e-10)  # the run whose curves are written and plotted


def main(argv=None):
    """Run the solver settings, print the table, write the curves (and plot them).

    Returns:
        {(solver, iterations, tolerance): largest |impulse fwd − inv|} and the curves
        (time, friction fwd, friction inv, normal fwd, normal inv) of the PGS-300 run.
    """
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=str(ROOT / "docs" / "data" / "fig2_hinge_friction.csv"))
    parser.add_argument("--plot", default=None, help="write the figure here (needs matplotlib)")
    parser.add_argument("--duration", type=float, default=DURATION, help="simulated seconds")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--settings", default=None,
                        help="comma-separated indices into SETTINGS to run (default: all)")
    args = parser.parse_args(argv)
    m = js.models.hinge_friction()
    nstep = int(round(args.duration / m.opt.timestep))
    ctrl = random_controls(m, np.random.default_rng(args.seed), nstep)
    chosen = SETTINGS if args.settings is None else [SETTINGS[int(k)]
                                                     for k in args.settings.split(",")]
    print(f"hinge_friction, {args.duration:g} s at h = {m.opt.timestep:g} s, random controls "
          f"held {HOLD:g} s")
    print("| forward solver | iterations | tolerance | max |impulse fwd − inv| (N·s) |")
    print("|---|---|---|---|")
    gaps, curves = {}, None
    for setting in chosen:
        worst, c = run(*setting, ctrl)
        gaps[setting] = worst
        if setting == CURVES:
            curves = c
        print(f"| {setting[0]} | {setting[1]} | {setting[2]:g} | {worst:.2e} |")
    if curves is not None and args.out:
        out = pathlib.Path(args.out)
        out.parent.mkdir(parents=True, exist_ok=True)
        np.savetxt(out, curves, delimiter=",", fmt="%.10g",
                   header="time,friction_forward,friction_inverse,normal_forward,normal_inverse")
        active = np.mean(curves[:, 3] > 0)
        print(f"wrote {out} (PGS, 300 iterations; the contact is active in "
              f"{100 * active:.0f}% of the steps, friction impulse range "
              f"[{curves[:, 1].min():.3g}, {curves[:, 1].max():.3g}] N·s)")
    if curves is not None and args.plot:
        plot(curves, pathlib.Path(args.plot))
    return gaps, curves


def plot(curves, path):
    """The paper's figure: both impulses, forward (solid) and inverse (dots), over time."""
    plt = pyplot()
    t = curves[:, 0]
    fig, axes = plt.subplots(2, 1, figsize=(8, 5), sharex=True)
    for ax, k, name in ((axes[0], 1, "joint friction"), (axes[1], 3, "contact normal")):
        ax.plot(t, curves[:, k], "C0-", lw=1.0, label="forward (PGS, 300 iterations)")
        ax.plot(t, curves[:, k + 1], "C3.", ms=1.5, label="inverse (analytical)")
        ax.set_ylabel(f"{name} impulse (N·s)")
        ax.legend(loc="upper right", fontsize=8)
    gap = np.max(np.abs(curves[:, [1, 3]] - curves[:, [2, 4]]))
    axes[0].set_title("hinge with dry friction touching the ground "
                      f"(curves at most {gap:.1e} N·s apart)")
    axes[1].set_xlabel("time (s)")
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
