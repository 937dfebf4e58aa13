"""The 27-dof humanoid standing under pushes, by whole-body inverse-dynamics control.

Run: python examples/humanoid_push.py [--duration 4] [--push 40] [--unlimited]
                                      [--plot humanoid_push.png]

Each control step (one per simulation step, 5 ms) `jointspace.control.WholeBodyID`
computes the motor commands from the dynamics with the soft contacts the model predicts:
the feet hold their poses (first priority), the center of mass returns over the feet and
the torso stays upright (second), and the joints keep the initial posture in the null space.
Pushes of `--push` newtons act on the torso for 0.2 s: sideways at t = 1 s, forward at
t = 2.5 s. The script prints how far the center of mass was pushed and how well it came back.
The motors keep their torque limits (the ankles give at most 20 N m, which bounds the
pushes the feet can resist: 40 N is recovered, 60 N only with `--unlimited`, where the
torques go to qfrc_applied without limits, and 80 N needs a step).
"""

import argparse

import numpy as np

import jointspace as js
from jointspace import control
from jointspace.viz.plot import pyplot

PUSHES = ((1.0, (0.0, 1.0, 0.0)), (2.5, (1.0, 0.0, 0.0)))  # (start time, direction)
PUSH_TIME = 0.2


def build(m, output="ctrl"):
    """The controller: feet, then center of mass and torso, then the standing posture."""
    feet = (control.SiteTask("left_foot", kp=100.0, kd=20.0, orientation=True),
            control.SiteTask("right_foot", kp=100.0, kd=20.0, orientation=True))
    upper = (control.ComTask(kp=60.0, kd=16.0),
             control.BodyTask("torso", kp=80.0, kd=18.0, position=False, orientation=True))
    gains = np.r_[np.zeros(6), np.full(m.nv - 6, 25.0)]
    posture = control.Posture(m.qpos0, kp=gains, kd=gains / 2.5)
    return control.WholeBodyID(m, [feet, upper], posture, output=output)


def run(duration=4.0, push=40.0, unlimited=False):
    """Simulate; returns a dict of time series and summary numbers."""
    m = js.models.humanoid()
    d = js.make_data(m)
    wb = build(m, "qfrc_applied" if unlimited else "ctrl")
    torso = m.id("body", "torso")
    wb.hold(d)
    target = d.subtree_com[0].copy()
    t0 = d.time
    n = int(round(duration / m.opt.timestep))
    t, com, sat, height = [], [], [], []
    for _ in range(n):
        now = d.time - t0
        d.xfrc_applied[torso, :3] = 0.0
        for start, direction in PUSHES:
            if start <= now < start + PUSH_TIME:
                d.xfrc_applied[torso, :3] = push * np.asarray(direction)
        wb(d)
        js.step(m, d)
        t.append(now)
        com.append(d.subtree_com[0].copy())
        sat.append(wb.saturated)
        height.append(d.xpos[torso, 2])
    com = np.array(com)
    dev = np.linalg.norm(com[:, :2] - target[:2], axis=1)
    return {"t": np.array(t), "com": com, "target": target, "deviation": dev,
            "saturated": np.array(sat), "height": np.array(height),
            "max_deviation": float(dev.max()), "final_deviation": float(dev[-1]),
            "min_height": float(np.min(height))}


def main(argv=None):
    """Command-line entry: run, print the balance figures, optionally plot."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--duration", type=float, default=4.0, help="simulated seconds")
    p.add_argument("--push", type=float, default=40.0, help="push force (N)")
    p.add_argument("--unlimited", action="store_true",
                   help="ignore the motors' torque limits (torques into qfrc_applied)")
    p.add_argument("--plot", default=None, help="write a PNG plot here (needs matplotlib)")
    args = p.parse_args(argv)
    r = run(args.duration, args.push, args.unlimited)
    limits = "without torque limits" if args.unlimited else "motors with their torque limits"
    print(f"humanoid, whole-body ID control ({limits}), pushes of {args.push:g} N for "
          f"{PUSH_TIME} s")
    print(f"  center of mass: largest horizontal deviation {r['max_deviation'] * 1000:.1f} mm, "
          f"final {r['final_deviation'] * 1000:.2f} mm")
    print(f"  torso height never below {r['min_height']:.3f} m; steps with saturated motors: "
          f"{int(np.count_nonzero(r['saturated']))} of {r['t'].size}")
    if args.plot:
        _plot(r, args.plot)
    return r


def _plot(r, path):
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(7, 3.5))
    ax.plot(r["t"], 1000 * (r["com"][:, 0] - r["target"][0]), label="com x − target")
    ax.plot(r["t"], 1000 * (r["com"][:, 1] - r["target"][1]), label="com y − target")
    for start, _ in PUSHES:
        ax.axvspan(start, start + PUSH_TIME, color="0.85")
    ax.set_xlabel("time (s)")
    ax.set_ylabel("mm")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    print(f"  plot: {path}")


if __name__ == "__main__":
    main()
