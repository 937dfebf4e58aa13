"""A 7-dof arm drawing a circle with its tool while holding a posture (operational space).

Run: python examples/arm7_circle.py [--duration 4] [--plot arm7_circle.png]

`jointspace.control.OperationalSpace` on jointspace.models.arm7: the tool site follows a
10 cm circle in a vertical plane (position and velocity references, acceleration fed
forward) while keeping the tool pointing down; the one redundant dof is held near the
working posture `ARM7_READY` by a posture task in the dynamically consistent null space, so
it never disturbs the drawing. The control runs once per 2 ms simulation step. The script
prints the tracking errors and how far the arm strays from the posture.
"""

import argparse

import numpy as np

import jointspace as js
from jointspace import control
from jointspace.viz.plot import pyplot

RADIUS = 0.1  # m
PERIOD = 2.0  # s per turn
RAMP = 0.3  # s: time constant of the smooth start


def circle(center, t):
    """Position, velocity, acceleration on the circle (y-z plane) at time t.

    The angle φ(t) = ω (t − τ (1 − exp(−t/τ))) starts at rest and reaches the speed ω;
    the circle starts at its lowest point, center − (0, 0, r).
    """
    w = 2 * np.pi / PERIOD
    ex = np.exp(-t / RAMP)
    phi = w * (t - RAMP * (1 - ex))
    dphi = w * (1 - ex)
    ddphi = w * ex / RAMP
    s, c = np.sin(phi), np.cos(phi)
    pos = center + RADIUS * np.array([0.0, s, -c])
    vel = RADIUS * dphi * np.array([0.0, c, s])
    acc = RADIUS * (ddphi * np.array([0.0, c, s]) + dphi**2 * np.array([0.0, -s, c]))
    return pos, vel, acc


def run(duration=4.0):
    """Simulate; returns time series and the summary errors."""
    m = js.models.arm7()
    d = js.make_data(m)
    ready = np.array(js.models.ARM7_READY)
    d.qpos[:] = ready
    tool = control.SiteTask("ee", kp=[400.0, 400.0, 400.0, 300.0, 300.0, 300.0],
                            kd=[40.0, 40.0, 40.0, 35.0, 35.0, 35.0], orientation=True)
    osc = control.OperationalSpace(m, [tool], control.Posture(ready, kp=25.0, kd=10.0))
    osc.hold(d)
    center = d.site_xpos[m.site("ee")] + [0.0, 0.0, RADIUS]
    n = int(round(duration / m.opt.timestep))
    t = np.empty(n)
    pos_err = np.empty((n, 3))
    rot_err = np.empty(n)
    posture = np.empty(n)
    path = np.empty((n, 3))
    for i in range(n):
        p, v, a = circle(center, d.time)
        tool.set_target(pos=p, vel=v, acc=a)
        osc(d)
        t[i] = d.time
        e = tool.error
        pos_err[i] = e[:3]
        rot_err[i] = np.linalg.norm(e[3:])
        posture[i] = np.linalg.norm(d.qpos - ready)
        path[i] = d.site_xpos[m.site("ee")]
        js.step(m, d)
    after = t >= 0.5
    return {"t": t, "position_error": pos_err, "orientation_error": rot_err,
            "posture_distance": posture, "path": path, "center": center,
            "max_position_error": float(np.linalg.norm(pos_err, axis=1).max()),
            "max_position_error_after_start": float(
                np.linalg.norm(pos_err[after], axis=1).max()) if after.any() else 0.0,
            "max_orientation_error": float(rot_err.max()),
            "max_posture_distance": float(posture.max())}


def main(argv=None):
    """Command-line entry: run, print the tracking errors, optionally plot."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--duration", type=float, default=4.0, help="simulated seconds")
    p.add_argument("--plot", default=None, help="write a PNG plot here (needs matplotlib)")
    args = p.parse_args(argv)
    r = run(args.duration)
    print(f"arm7, operational-space control: a {RADIUS * 100:g} cm circle every {PERIOD:g} s, "
          f"tool pointing down, posture in the null space")
    print(f"  tool position error: largest {r['max_position_error'] * 1000:.3f} mm, after "
          f"the first 0.5 s {r['max_position_error_after_start'] * 1000:.3f} mm")
    print(f"  tool orientation error: largest {np.degrees(r['max_orientation_error']):.4f} deg")
    print(f"  joint-space distance from the posture: at most {r['max_posture_distance']:.3f} "
          f"rad")
    if args.plot:
        _plot(r, args.plot)
    return r


def _plot(r, path):
    plt = pyplot()
    fig, (a0, a1) = plt.subplots(1, 2, figsize=(9, 3.8))
    a0.plot(r["path"][:, 1], r["path"][:, 2])
    a0.set_aspect("equal")
    a0.set_xlabel("y (m)")
    a0.set_ylabel("z (m)")
    a0.set_title("tool path")
    a1.semilogy(r["t"], 1000 * np.linalg.norm(r["position_error"], axis=1) + 1e-12,
                label="position error (mm)")
    a1.semilogy(r["t"], np.degrees(r["orientation_error"]) + 1e-12,
                label="orientation error (deg)")
    a1.set_xlabel("time (s)")
    a1.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    print(f"  plot: {path}")


if __name__ == "__main__":
    main()
