"""The slides' 2-link arm tracking a trajectory by feedback linearization (computed torque).

Run: python examples/arm2_tracking.py [--duration 4] [--plot arm2_tracking.png]

The arm (jointspace.models.arm2: point masses, vertical plane, gravity) starts at rest away
from a swinging reference q_ref(t). `jointspace.control.ComputedTorque` cancels the arm's
dynamics, τ = M(q) (q̈_ref + B (q̇_ref − q̇) + K (q_ref − q)) + c(q, q̇), so the tracking error
e = q_ref − q obeys ë + B ė + K e = 0. With K = ω² I and B = 2ω I (critical damping) each
joint's error is e(t) = (e₀ + (ė₀ + ω e₀) t) exp(−ω t). The torque is computed once per
simulation step (1 ms) and held over it; the script prints the tracking error next to that
prediction.
"""

import argparse

import numpy as np

import jointspace as js
from jointspace import control
from jointspace.viz.plot import pyplot

OMEGA = 10.0  # closed-loop natural frequency (rad/s)
CENTER = np.array([-0.9, 1.2])  # reference: center, amplitude (rad), frequency (Hz)
AMPLITUDE = np.array([0.6, 0.8])
FREQUENCY = np.array([0.5, 0.7])
START_ERROR = np.array([0.3, -0.4])


def reference(t):
    """q_ref, q̇_ref, q̈_ref at time t."""
    w = 2 * np.pi * FREQUENCY
    return (CENTER + AMPLITUDE * np.sin(w * t), AMPLITUDE * w * np.cos(w * t),
            -AMPLITUDE * w**2 * np.sin(w * t))


def run(duration=4.0):
    """Simulate; returns time, positions, reference, tracking error and its prediction."""
    m = js.models.arm2()
    d = js.make_data(m)
    fl = control.ComputedTorque(m, kp=OMEGA**2, kd=2 * OMEGA)
    q_r, v_r, _ = reference(0.0)
    d.qpos[:] = q_r - START_ERROR
    e0, edot0 = START_ERROR, v_r.copy()
    n = int(round(duration / m.opt.timestep))
    t = np.empty(n + 1)
    q = np.empty((n + 1, 2))
    qref = np.empty((n + 1, 2))
    tau = np.empty((n, 2))
    for i in range(n + 1):
        t[i] = d.time
        q[i] = d.qpos
        q_r, v_r, a_r = reference(d.time)
        qref[i] = q_r
        if i == n:
            break
        tau[i] = fl(d, q_r, v_r, a_r)
        js.step(m, d)
    err = qref - q
    predicted = (e0 + (edot0 + OMEGA * e0) * t[:, None]) * np.exp(-OMEGA * t[:, None])
    return {"t": t, "q": q, "q_ref": qref, "error": err, "predicted": predicted, "tau": tau,
            "max_gap": float(np.abs(err - predicted).max()),
            "final_error": float(np.abs(err[-1]).max())}


def main(argv=None):
    """Command-line entry: run, print the tracking error, optionally plot."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--duration", type=float, default=4.0, help="simulated seconds")
    p.add_argument("--plot", default=None, help="write a PNG plot here (needs matplotlib)")
    args = p.parse_args(argv)
    r = run(args.duration)
    print("arm2, computed-torque tracking (K = 100, B = 20, torque held over 1 ms steps)")
    print(f"  initial error {np.abs(START_ERROR).max():.3f} rad; final tracking error "
          f"{r['final_error']:.2e} rad after {args.duration:g} s")
    print(f"  largest gap to the linear closed loop's prediction: {r['max_gap']:.2e} rad "
          f"(the zero-order hold's O(h) effect)")
    print(f"  largest torque {np.abs(r['tau']).max():.1f} N m")
    if args.plot:
        _plot(r, args.plot)
    return r


def _plot(r, path):
    plt = pyplot()
    fig, axes = plt.subplots(2, 1, figsize=(7, 5), sharex=True)
    for k, name in enumerate(("shoulder", "elbow")):
        axes[0].plot(r["t"], r["q"][:, k], label=f"{name}")
        axes[0].plot(r["t"], r["q_ref"][:, k], "--", color="0.5")
        axes[1].plot(r["t"], r["error"][:, k], label=f"{name} error")
        axes[1].plot(r["t"], r["predicted"][:, k], ":", color="k")
    axes[0].set_ylabel("q (rad), dashed: q_ref")
    axes[1].set_ylabel("q_ref − q (rad), dotted: predicted")
    axes[1].set_xlabel("time (s)")
    axes[0].legend()
    axes[1].legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    print(f"  plot: {path}")


if __name__ == "__main__":
    main()
