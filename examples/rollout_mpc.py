"""Sampling-based MPC with batched rollouts: a 7-dof arm reaches for a point (cross-entropy).

Run: python examples/rollout_mpc.py [--duration 1.5] [--samples 64] [--plot rollout_mpc.png]

Model predictive control by the cross-entropy method on jointspace.models.arm7 (torque
motors, gravity, no contacts). Every 10 ms of simulated time the controller samples
`samples` open-loop torque sequences over a 0.2 s horizon (10 knots held 10 ms each) from a
Gaussian, rolls them all out from the current state with one `js.rollout` call on every
core, scores them by the tool's distance to the target along the way and its final speed,
refits the Gaussian to the best eighth, and repeats three times; the mean's first knot is
applied and the plan shifts by one knot (warm start). Thousands of rollouts in all: the
script prints how many, how fast they ran, and the tool's distance to the target.

With the defaults (2 cores, 2026-11-26): 28,800 rollouts of 50 steps at ≈ 80k steps/s; the
tool comes within 1 cm of the target at 0.5 s from 0.97 m, overshoots (the 0.2 s horizon
is short for braking a swinging arm) and settles about 0.13 m from it by 1.5 s.
"""

import argparse
import os
import time

import numpy as np

import jointspace as js
from jointspace.viz.plot import pyplot

TARGET = np.array([0.45, 0.25, 0.55])  # m, world frame: in front of and beside the arm
KNOT = 5  # simulation steps per control knot (2 ms steps: 10 ms)
HORIZON = 10  # knots
ITERATIONS = 3  # cross-entropy refits per control step
ELITE = 8  # the best 1/ELITE of the samples refit the Gaussian
TORQUE = 40.0  # N·m: the sampling range of the motors that have no ctrlrange


def tool_positions(m, d, states, site):
    """World position of the site at each state [time, qpos, qvel] (rows of states)."""
    out = np.empty((len(states), 3))
    for k, x in enumerate(states):
        d.qpos[:] = x[1:1 + m.nq]
        js.kinematics(m, d)
        out[k] = d.site_xpos[site]
    return out


def cost(m, d, state, site):
    """Score of each rollout: mean tool distance at the knots, final distance and speed."""
    nbatch = state.shape[0]
    knots = state[:, KNOT - 1::KNOT]  # the state at the end of each knot
    pos = tool_positions(m, d, knots.reshape(-1, knots.shape[-1]), site)
    dist = np.linalg.norm(pos - TARGET, axis=1).reshape(nbatch, -1)
    speed = np.linalg.norm(knots[:, -1, 1 + m.nq:], axis=1)
    return dist.mean(axis=1) + 2.0 * dist[:, -1] + 0.05 * speed


def main(argv=None):
    """Run the controller; return the figures the docstring describes."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--duration", type=float, default=1.5, help="simulated seconds")
    p.add_argument("--samples", type=int, default=64, help="rollouts per refit")
    p.add_argument("--nthread", type=int, default=os.cpu_count() or 1)
    p.add_argument("--plot", help="save a plot of the tool's distance to the target here")
    args = p.parse_args(argv)
    m = js.models.arm7()
    d = js.make_data(m)
    scratch = js.make_data(m)
    site = m.site("ee")
    limited = m.actuator_ctrllimited.astype(bool)
    lo = np.where(limited, m.actuator_ctrlrange[:, 0], -TORQUE)
    hi = np.where(limited, m.actuator_ctrlrange[:, 1], TORQUE)
    rng = np.random.default_rng(0)
    mean = np.zeros((HORIZON, m.nu))
    sigma = 0.3 * (hi - lo) / 2 * np.ones((HORIZON, m.nu))
    nstep_total = int(round(args.duration / m.opt.timestep))
    nrollout, rollout_seconds = 0, 0.0
    times, distances = [], []
    with js.Rollout(nthread=args.nthread) as pool:
        for k in range(0, nstep_total, KNOT):
            x = np.concatenate([[d.time], d.qpos, d.qvel])
            for _ in range(ITERATIONS):
                knots = np.clip(mean + sigma * rng.normal(size=(args.samples, HORIZON, m.nu)),
                                lo, hi)
                knots[0] = np.clip(mean, lo, hi)  # the current plan is always a candidate
                control = np.repeat(knots, KNOT, axis=1)
                t0 = time.perf_counter()
                state, _ = pool.rollout(m, None, x, control)
                rollout_seconds += time.perf_counter() - t0
                nrollout += args.samples
                elite = knots[np.argsort(cost(m, scratch, state, site))[:args.samples // ELITE]]
                mean, sigma = elite.mean(axis=0), elite.std(axis=0) + 1e-3 * (hi - lo)
            for _ in range(KNOT):
                d.ctrl[:] = np.clip(mean[0], lo, hi)
                js.step(m, d)
            mean = np.concatenate([mean[1:], mean[-1:]])  # shift the plan one knot
            sigma = np.maximum(sigma, 0.1 * (hi - lo) / 2)
            times.append(d.time)
            distances.append(float(np.linalg.norm(
                tool_positions(m, scratch, [np.concatenate([[0.0], d.qpos, d.qvel])], site)[0]
                - TARGET)))
    steps = nrollout * HORIZON * KNOT
    print(f"{nrollout} rollouts of {HORIZON * KNOT} steps on {args.nthread} thread(s): "
          f"{steps / rollout_seconds:,.0f} steps/s")
    print(f"tool distance to the target: {distances[0]:.3f} m at {times[0]:.2f} s, "
          f"{distances[-1]:.3f} m at {times[-1]:.2f} s")
    if args.plot:
        plt = pyplot()
        fig, ax = plt.subplots(figsize=(6, 3.5))
        ax.plot(times, distances)
        ax.set_xlabel("time (s)")
        ax.set_ylabel("tool distance to target (m)")
        ax.set_title(f"arm7 reaching by cross-entropy MPC ({args.samples} rollouts × "
                     f"{ITERATIONS} per 10 ms)")
        ax.grid(True, alpha=0.3)
        fig.tight_layout()
        fig.savefig(args.plot, dpi=120)
    return {"rollouts": nrollout, "times": np.array(times), "distances": np.array(distances),
            "steps_per_second": steps / rollout_seconds}


if __name__ == "__main__":
    main()
