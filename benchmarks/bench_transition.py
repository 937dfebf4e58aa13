"""Step and inverse Jacobians: transition_derivatives and inverse_derivatives vs MuJoCo's.

Run: python benchmarks/bench_transition.py [--quick]

Table 1: js.transition_derivatives against mujoco.mjd_transitionFD. Table 2: the same with
the sensor Jacobians C and D (sensors=True against MuJoCo's C and D) and without them, on the
humanoid with SENSORS added (jointpos, jointvel and actuatorfrc of every joint and motor,
accelerometer, gyro and touch at the feet, subtree com and velocity, hand positions). Table 3:
js.inverse_derivatives (∂/∂qacc and ∂/∂qvel analytical; ∂/∂qpos closed-form by default on
these scenes' plane contacts, and with analytic=False by forward differences as MuJoCo's)
against mujoco.mjd_inverseFD (all three by forward differences) at the same state, with the
acceleration of forward plus noise, both cones.

Scenes: the humanoid lying on the floor (27 dofs, 21 motors, 11 contacts; 1500 steps of
falling) and the quadruped standing (300 steps), stepped into contact by MuJoCo (constraint
islands off, as in the parity tests); both libraries then
differentiate one step from the same state and warm start, forward and centered, timed in
alternation batch by batch: MuJoCo single-threaded (mjd_transitionFD has no threads), ours
with one thread and with one per core (`nthread`). Two solver settings: the models'
defaults (Newton, tolerance 1e-8), and MuJoCo's advice for finite differences (tolerance 0,
a fixed number of iterations). The ratio is the median over rounds of ours / MuJoCo's.
"""

import argparse
import os
import sys
import time

import mujoco
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _timing import interleaved, table  # noqa: E402

import jointspace as js  # noqa: E402

EPS = 1e-6
SCENES = {"humanoid_lying": ("humanoid", 1500), "quadruped_standing": ("quadruped", 300)}
_MOTORS = ("abdomen_y abdomen_z abdomen_x hip_x_right hip_z_right hip_y_right knee_right "
           "ankle_y_right ankle_x_right hip_x_left hip_z_left hip_y_left knee_left ankle_y_left "
           "ankle_x_left shoulder1_right shoulder2_right elbow_right shoulder1_left "
           "shoulder2_left elbow_left").split()
SENSORS = "<sensor>\n" + "".join(
    f'<jointpos joint="{j}"/><jointvel joint="{j}"/><actuatorfrc actuator="{j}"/>\n'
    for j in _MOTORS) + "".join(
    f'<accelerometer site="{s}"/><gyro site="{s}"/><touch site="{s}"/>\n'
    for s in ("right_foot", "left_foot")) + (
    '<subtreecom body="torso"/><subtreelinvel body="torso"/>\n'
    '<framepos objtype="site" objname="right_hand"/><framepos objtype="site" '
    'objname="left_hand"/>\n</sensor>\n')


def _scene(name, sensors=False):
    model, steps = SCENES[name]
    xml = js.models.xml(model)
    if sensors:
        xml = xml.replace("</mujoco>", SENSORS + "</mujoco>")
    m = js.load_string(xml)
    mjm = mujoco.MjModel.from_xml_string(xml)
    mjm.opt.disableflags |= mujoco.mjtDisableBit.mjDSBL_ISLAND
    mjd = mujoco.MjData(mjm)
    for _ in range(steps):
        mujoco.mj_step(mjm, mjd)
    mjd.ctrl[:] = np.random.default_rng(0).uniform(-0.3, 0.3, mjm.nu)
    d = js.make_data(m)
    d.time = mjd.time
    d.qpos[:] = mjd.qpos
    d.qvel[:] = mjd.qvel
    d.ctrl[:] = mjd.ctrl
    d.qacc_warmstart[:] = mjd.qacc_warmstart
    return m, d, mjm, mjd


def main(argv=None):
    """Run the benchmark and print the table."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="few repetitions (CI smoke run)")
    args = ap.parse_args(argv)
    repeat = 3 if args.quick else 11
    t0 = time.perf_counter()
    ncpu = os.cpu_count() or 1
    rows = []
    for name in SCENES:
        m, d, mjm, mjd = _scene(name)
        nx = 2 * mjm.nv
        A, B = np.zeros((nx, nx)), np.zeros((nx, mjm.nu))
        for setting, tol, iters in (("defaults", None, None), ("tolerance 0, 10 iter.", 0.0, 10)):
            if tol is not None:
                for mm in (m, mjm):
                    mm.opt.tolerance = tol
                    mm.opt.iterations = iters
            for centered in (False, True):
                o, p, j = interleaved([
                    lambda c=centered: js.transition_derivatives(m, d, EPS, c),
                    lambda c=centered: js.transition_derivatives(m, d, EPS, c, nthread=ncpu),
                    lambda c=centered: mujoco.mjd_transitionFD(mjm, mjd, EPS, c, A, B, None,
                                                               None)], repeat, budget=0.1)
                rows.append([f"{name} ({mjd.ncon} contacts)", setting,
                             "centered" if centered else "forward",
                             f"{np.median(o) * 1e3:.2f}", f"{np.median(p) * 1e3:.2f}",
                             f"{np.median(j) * 1e3:.2f}", f"{np.median(o / j):.2f}",
                             f"{np.median(p / j):.2f}"])
    print(table(rows, ["scene", "solver", "differences", "jointspace ms (1 thread)",
                       f"jointspace ms ({ncpu} threads)", "MuJoCo ms", "ours/MuJoCo",
                       f"ours {ncpu} threads/MuJoCo"]))
    print()
    rows = []
    m, d, mjm, mjd = _scene("humanoid_lying", sensors=True)
    nx, ns = 2 * mjm.nv, mjm.nsensordata
    A, B = np.zeros((nx, nx)), np.zeros((nx, mjm.nu))
    C, D = np.zeros((ns, nx)), np.zeros((ns, mjm.nu))
    for sensors in (True, False):
        cd = (C, D) if sensors else (None, None)
        o, p, j = interleaved([
            lambda s=sensors: js.transition_derivatives(m, d, EPS, sensors=s),
            lambda s=sensors: js.transition_derivatives(m, d, EPS, nthread=ncpu, sensors=s),
            lambda cd=cd: mujoco.mjd_transitionFD(mjm, mjd, EPS, False, A, B, *cd)],
            repeat, budget=0.1)
        rows.append([f"humanoid_lying ({mjd.ncon} contacts, {ns} sensordata)",
                     "A, B, C, D" if sensors else "A, B", f"{np.median(o) * 1e3:.2f}",
                     f"{np.median(p) * 1e3:.2f}", f"{np.median(j) * 1e3:.2f}",
                     f"{np.median(o / j):.2f}", f"{np.median(p / j):.2f}"])
    print(table(rows, ["scene", "Jacobians", "jointspace ms (1 thread)",
                       f"jointspace ms ({ncpu} threads)", "MuJoCo ms", "ours/MuJoCo",
                       f"ours {ncpu} threads/MuJoCo"]))
    print()
    rows = []
    for name in SCENES:
        for cone in ("pyramidal", "elliptic"):
            m, d, mjm, mjd = _scene(name)
            m.opt.cone = cone
            mjm.opt.cone = 0 if cone == "pyramidal" else 1
            js.forward(m, d)
            d.qacc[:] = d.qacc + np.random.default_rng(1).normal(size=m.nv)
            mjd.qacc[:] = d.qacc
            nv = m.nv
            out = [np.zeros((nv, nv)) for _ in range(3)]
            o, f, j = interleaved([
                lambda: js.inverse_derivatives(m, d, EPS),
                lambda: js.inverse_derivatives(m, d, EPS, analytic=False),
                lambda: mujoco.mjd_inverseFD(mjm, mjd, EPS, 0, *out, None, None, None, None)],
                repeat, budget=0.1)
            rows.append([f"{name} ({mjd.ncon} contacts)", cone, f"{np.median(o) * 1e3:.3f}",
                         f"{np.median(f) * 1e3:.3f}", f"{np.median(j) * 1e3:.3f}",
                         f"{np.median(o / j):.2f}", f"{np.median(f / j):.2f}"])
    print(table(rows, ["scene", "cone", "inverse_derivatives ms", "analytic=False ms",
                       "mjd_inverseFD ms", "ours/MuJoCo", "analytic=False/MuJoCo"]))
    print(f"\n(total benchmark time {time.perf_counter() - t0:.1f} s)")


if __name__ == "__main__":
    main()
