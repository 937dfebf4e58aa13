"""The 2014 paper's Fig. 3: forward vs inverse dynamics time against the Jacobian size.

Run: python benchmarks/bench_fig3.py [--quick] [--csv PATH] [--plot PATH]

Todorov (ICRA 2014, 004 §VI.B) dragged the 27-dof humanoid around with a 3D mouse, ran the
forward and the inverse dynamics at every step, and plotted the median CPU time per step for
each size of the contact Jacobian (nefc), with the forward's PGS solver run for 5 or 50
iterations ("to generate larger Jacobians we enabled all contact friction directions"),
and the speed-up forward / inverse: "an order of magnitude".

Here the same humanoid (`jointspace.models.humanoid`, every geom condim 6: sliding,
torsional and rolling friction, elliptic cones) is dragged by a random, smoothly varying
force on its torso (lifting it off the floor, letting go so that it falls and lies on the
floor, pulling it along; no controls, as under the paper's mouse), simulated with MuJoCo's
`mj_step`. Every few steps the state is
taken, and in it we time, as Python loops over whole calls (ours through the compiled
entry point the public function calls, without its argument checks; MuJoCo's through its
bindings, so that both sides pay one crossing per call, ≈ 1 µs):

    inverse      the whole `js.inverse` (kinematics, collision, rows, RNE, the analytical
                 forces) at the forward's acceleration
    PGS 5, 50    the whole `js.forward` with PGS run for exactly 5 or 50 iterations
                 (tolerance 0), warm-started from the trajectory's previous acceleration
    Newton       the whole `js.forward` with our default solver, to its tolerance (1e-8)

and, in the same way on the same states, `mujoco.mj_inverse` and `mj_forward` with MuJoCo's PGS
at 5 and 50 iterations (islands off): MuJoCo's own speed-up in the same setting. States are
grouped by nefc in bins of 12 rows (two condim-6 contacts); each column is the median over
the states of a bin. Writes the table to stdout, the per-state times to --csv and, with
matplotlib installed, the figure (time and speed-up against nefc) to --plot.
"""

import argparse
import os
import pathlib
import sys

import mujoco
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _timing import table  # noqa: E402

import jointspace as js  # noqa: E402
from jointspace.forward import _k_forward  # noqa: E402
from jointspace.inverse.core import _k_inverse  # noqa: E402
from jointspace.viz.plot import pyplot  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[1]
BIN = 12  # rows per nefc bin: two condim-6 contacts
DRAG_PERIOD = 1.0  # s between the drag force's random set points
COLUMNS = ("inverse", "PGS 5", "PGS 50", "Newton")


def _loop_forward(d, ws, n):
    """n forward calls from ws, as `js.forward` makes them (its argument checks aside).

    A compiled loop around the forward kernel would compile the whole pipeline again (Numba
    links and optimizes a callee's code into its caller): minutes, where this loop loads
    the prebuilt kernel the public call uses.
    """
    ep, s, warm = _k_forward.ep, d._s, d.qacc_warmstart
    for _ in range(n):
        warm[:] = ws
        ep(s)


def _loop_inverse(d, qacc, n):
    """n continuous inverse calls at qacc, as `js.inverse` makes them (checks aside)."""
    ep, s, acc = _k_inverse.ep, d._s, d.qacc
    for _ in range(n):
        acc[:] = qacc
        ep(s, 0)


def _xml():
    """The humanoid with every contact friction direction enabled (condim 6)."""
    return js.models.xml("humanoid").replace('condim="1"', 'condim="6"').replace(
        'condim="3"', 'condim="6"')


def drag_states(nstate, every, seed):
    """States of the humanoid dragged around (MuJoCo steps): qpos, qvel, ctrl, xfrc, warm."""
    mjm = mujoco.MjModel.from_xml_string(_xml())
    mjm.opt.disableflags |= mujoco.mjtDisableBit.mjDSBL_ISLAND
    mjm.opt.cone = mujoco.mjtCone.mjCONE_ELLIPTIC
    mjd = mujoco.MjData(mjm)
    rng = np.random.default_rng(seed)
    torso = mujoco.mj_name2id(mjm, mujoco.mjtObj.mjOBJ_BODY, "torso")
    weight = float(mjm.body_subtreemass[torso]) * 9.81
    h = mjm.opt.timestep
    per = int(round(DRAG_PERIOD / h))
    # set points of the drag force: 60% of them let go of the body (no force, it falls and
    # lies on the floor), the others lift it by 0.3 to 1.2 body weights and pull it
    # sideways by up to 0.3 (dragging it along the floor or through the air)
    npoint = nstate * every // per + 2
    grab = rng.random(npoint) >= 0.6
    points = np.column_stack([rng.uniform(-0.3, 0.3, (npoint, 2)),
                              rng.uniform(0.3, 1.2, npoint)]) * weight * grab[:, None]
    states = []
    for t in range(nstate * every):
        k, s = divmod(t, per)
        w = 0.5 - 0.5 * np.cos(np.pi * s / per)  # smooth between set points
        mjd.xfrc_applied[torso, :3] = (1 - w) * points[k] + w * points[k + 1]
        if t % every == every - 1:
            states.append((mjd.qpos.copy(), mjd.qvel.copy(), mjd.ctrl.copy(),
                           mjd.xfrc_applied.copy(), mjd.qacc_warmstart.copy()))
        mujoco.mj_step(mjm, mjd)
    return mjm, mjd, states


def _best(fn, repeat):
    """Fastest of `repeat` runs of fn() (seconds), after one untimed run."""
    import time
    fn()
    best = np.inf
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t)
    return best


def time_states(mjm, mjd, states, number, repeat):
    """Per state: nefc, ncon, then seconds of ours (COLUMNS) and MuJoCo's (the same)."""
    m = js.load_string(_xml())
    m.opt.cone = "elliptic"
    d = js.make_data(m)
    rows = []
    for qpos, qvel, ctrl, xfrc, warm in states:
        for obj in (d, mjd):
            obj.qpos[:], obj.qvel[:], obj.ctrl[:], obj.xfrc_applied[:] = qpos, qvel, ctrl, xfrc
        m.opt.solver, m.opt.iterations, m.opt.tolerance = "Newton", 100, 1e-8
        d.qacc_warmstart[:] = warm
        js.forward(m, d)
        qacc = d.qacc.copy()
        nefc, ncon = int(d.nefc[0]), int(d.ncon[0])
        ours = [_best(lambda: _loop_inverse(d, qacc, number), repeat) / number]
        for iters in (5, 50):
            m.opt.solver, m.opt.iterations, m.opt.tolerance = "PGS", iters, 0.0
            ours.append(_best(lambda: _loop_forward(d, warm, number), repeat) / number)
        m.opt.solver, m.opt.iterations, m.opt.tolerance = "Newton", 100, 1e-8
        ours.append(_best(lambda: _loop_forward(d, warm, number), repeat) / number)

        def mj_inv():
            for _ in range(number):
                mjd.qacc[:] = qacc
                mujoco.mj_inverse(mjm, mjd)

        def mj_fwd():
            for _ in range(number):
                mjd.qacc_warmstart[:] = warm
                mujoco.mj_forward(mjm, mjd)

        theirs = [_best(mj_inv, repeat) / number]
        mjm.opt.solver, mjm.opt.tolerance = mujoco.mjtSolver.mjSOL_PGS, 0.0
        for iters in (5, 50):
            mjm.opt.iterations = iters
            theirs.append(_best(mj_fwd, repeat) / number)
        mjm.opt.solver, mjm.opt.iterations = mujoco.mjtSolver.mjSOL_NEWTON, 100
        mjm.opt.tolerance = 1e-8
        theirs.append(_best(mj_fwd, repeat) / number)
        if mjd.nefc != nefc:
            raise RuntimeError(f"MuJoCo found {mjd.nefc} rows where we found {nefc}")
        rows.append([nefc, ncon] + ours + theirs)
    return np.array(rows)


def summarize(data):
    """Markdown table: per nefc bin, median µs of each column and the speed-ups."""
    out = []
    nefc = data[:, 0]
    for lo in range(0, int(nefc.max()) + 1, BIN):
        sel = (nefc >= lo) & (nefc < lo + BIN) if lo else nefc == 0
        if lo == 0:
            groups = [("0", nefc == 0), (f"1–{BIN - 1}", (nefc > 0) & (nefc < BIN))]
        else:
            groups = [(f"{lo}–{lo + BIN - 1}", sel)]
        for label, sel in groups:
            if not sel.any():
                continue
            med = np.median(data[sel, 2:], axis=0)
            inv, p5, p50, newton = med[:4] * 1e6
            minv, mp5, mp50, mnewton = med[4:] * 1e6
            out.append([label, str(int(sel.sum())), f"{inv:.1f}", f"{p5:.1f}", f"{p50:.1f}",
                        f"{newton:.1f}", f"{p5 / inv:.1f}", f"{p50 / inv:.1f}",
                        f"{newton / inv:.1f}", f"{mp5 / minv:.1f}", f"{mp50 / minv:.1f}",
                        f"{mnewton / minv:.1f}", f"{inv / minv:.2f}"])
    return table(out, ["nefc", "states", "inverse µs", "PGS 5 µs", "PGS 50 µs", "Newton µs",
                       "PGS 5/inv", "PGS 50/inv", "Newton/inv", "MuJoCo PGS 5/inv",
                       "MuJoCo PGS 50/inv", "MuJoCo Newton/inv", "inverse/mj_inverse"])


def plot(data, path):
    """The paper's two panels: time per step and speed-up against nefc (binned medians)."""
    plt = pyplot()
    nefc = data[:, 0]
    centers, med = [], []
    for lo in range(0, int(nefc.max()) + 1, BIN):
        sel = (nefc >= lo) & (nefc < lo + BIN)
        if sel.any():
            centers.append(np.median(nefc[sel]))
            med.append(np.median(data[sel, 2:], axis=0) * 1e6)
    centers, med = np.array(centers), np.array(med)
    fig, (a, b) = plt.subplots(1, 2, figsize=(10, 4))
    for k, (name, style) in enumerate(zip(COLUMNS, ("k-", "C0-", "C1-", "C2-"))):
        a.plot(centers, med[:, k], style, marker="o", ms=3, label=f"jointspace {name}")
    a.plot(centers, med[:, 4], "k:", label="mj_inverse")
    a.plot(centers, med[:, 6], "C1:", label="mj_forward PGS 50")
    a.set_xlabel("Jacobian rows (nefc)")
    a.set_ylabel("CPU time per step (µs)")
    a.set_yscale("log")
    a.legend(fontsize=8)
    for k, (name, style) in enumerate(zip(COLUMNS[1:], ("C0-", "C1-", "C2-")), start=1):
        b.plot(centers, med[:, k] / med[:, 0], style, marker="o", ms=3, label=f"{name} / inverse")
        b.plot(centers, med[:, k + 4] / med[:, 4], style[:2] + ":", label=f"MuJoCo {name}")
    b.axhline(10, color="grey", lw=0.5)
    b.set_xlabel("Jacobian rows (nefc)")
    b.set_ylabel("speed-up: forward / inverse")
    b.legend(fontsize=8)
    fig.suptitle("27-dof humanoid dragged around, condim 6 (the 2014 paper's Fig. 3)")
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    print(f"wrote {path}")


def main(argv=None):
    """Generate the states, time them, print the table, write the data and the figure."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="a smoke run: few states, few repeats")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--csv", default=None, help="write the per-state times here")
    ap.add_argument("--plot", default=None, help="write the figure here (needs matplotlib)")
    args = ap.parse_args(argv)
    nstate, every, number, repeat = (12, 100, 3, 2) if args.quick else (400, 10, 50, 7)
    mjm, mjd, states = drag_states(nstate, every, args.seed)
    data = time_states(mjm, mjd, states, number, repeat)
    print(f"humanoid dragged around, condim 6, elliptic cones: {len(states)} states, "
          f"nefc {int(data[:, 0].min())}–{int(data[:, 0].max())}, "
          f"contacts {int(data[:, 1].min())}–{int(data[:, 1].max())}")
    print(summarize(data))
    if args.csv:
        path = pathlib.Path(args.csv)
        path.parent.mkdir(parents=True, exist_ok=True)
        cols = ["nefc", "ncon"] + [f"ours {c} s" for c in COLUMNS] + [f"mujoco {c} s"
                                                                     for c in COLUMNS]
        np.savetxt(path, data, delimiter=",", fmt="%.6g", header=",".join(cols))
        print(f"wrote {path}")
    if args.plot:
        plot(data, pathlib.Path(args.plot))


if __name__ == "__main__":
    main()
