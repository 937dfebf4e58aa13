"""The 2014 paper's Fig. 2: forward and inverse impulses on the hinge with dry friction.

Todorov (ICRA 2014, 004 §VI): a single joint with dry friction (friction loss) whose link
touches the ground, perturbed by random controls for 10 s. At every step the forward solver
computes the friction-loss and contact impulses; the analytical inverse, given the motion
the forward dynamics produced, computes them again. The paper reports agreement within
1e-5 with its PGS solver. This script runs the experiment with PGS at increasing iteration
limits, with Newton at its defaults and with Newton run to convergence, prints the largest
impulse differences, and writes the curves of the PGS run with 300 iterations to
docs/data/fig2_hinge_friction.csv (time, friction-loss impulse and contact normal impulse,
forward and inverse) — the data of the figure in docs/inverse.md.

Run: python examples/fig2_hinge_friction.py [--out docs/data/fig2_hinge_friction.csv]
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


def main():
    """Run the three solver settings, print the table, write the PGS curves."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=str(pathlib.Path(__file__).resolve().parents[1]
                                             / "docs" / "data" / "fig2_hinge_friction.csv"))
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    m = js.models.hinge_friction()
    nstep = int(round(DURATION / m.opt.timestep))
    ctrl = random_controls(m, np.random.default_rng(args.seed), nstep)
    print(f"hinge_friction, {DURATION:g} s at h = {m.opt.timestep:g} s, random controls held "
          f"{HOLD:g} s")
    print("| forward solver | iterations | tolerance | max |impulse fwd − inv| (N·s) |")
    print("|---|---|---|---|")
    curves = None
    for solver, iters, tol in (("PGS", 100, 1e-8), ("PGS", 300, 1e-10), ("PGS", 3000, 1e-14),
                               ("Newton", 100, 1e-8), ("Newton", 100, 1e-15)):
        worst, c = run(solver, iters, tol, ctrl)
        if iters == 300:
            curves = c
        print(f"| {solver} | {iters} | {tol:g} | {worst:.2e} |")
    out = pathlib.Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    np.savetxt(out, curves, delimiter=",", fmt="%.10g",
               header="time,friction_forward,friction_inverse,normal_forward,normal_inverse")
    active = np.mean(curves[:, 3] > 0)
    print(f"wrote {out} (PGS, 300 iterations; the contact is active in "
          f"{100 * active:.0f}% of the steps, "
          f"friction impulse range [{curves[:, 1].min():.3g}, {curves[:, 1].max():.3g}] N·s)")


if __name__ == "__main__":
    main()
