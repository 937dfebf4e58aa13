"""Plots of a recorded `Trajectory` as PNG: joint positions, velocities, energy, contacts, controls.

Uses matplotlib (the `viewer` extra: `pip install "jointspace[viewer]"`) with its
file-only Agg backend, so it needs no display.
"""

from __future__ import annotations

import numpy as np

from jointspace.errors import JointspaceError

PANELS = ("qpos", "qvel", "energy", "contacts", "ctrl")
MAX_LINES = 12  # joints drawn per panel; the ones that move most are kept


def pyplot():
    """matplotlib.pyplot on the file-only Agg backend, or a clear error naming the install.

    For scripts that draw figures of their own (the examples, bench_fig3.py).
    """
    try:
        import matplotlib
    except ImportError:
        raise JointspaceError("plots need matplotlib: pip install 'jointspace[viewer]' (or "
                              "pip install matplotlib)") from None
    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    return plt


def _columns(traj, kind):
    """(label, column) of the coordinates that move most (quaternion parts left out)."""
    arr = traj.qpos if kind == "qpos" else traj.qvel
    labels = traj.qpos_labels if kind == "qpos" else traj.qvel_labels
    if len(labels) != arr.shape[1]:
        labels = [f"{kind}[{c}]" for c in range(arr.shape[1])]
    cols = [c for c in range(arr.shape[1]) if ".q" not in labels[c]]
    spread = np.ptp(arr, axis=0)
    keep = sorted(sorted(cols, key=lambda c: -spread[c])[:MAX_LINES])
    return [(labels[c], c) for c in keep]


def plot_trajectory(traj, path, *, what=("qpos", "energy", "contacts"), width=900, height=700,
                    dpi=100):
    """Plot panels of a trajectory over time, stacked, to a PNG file.

    Args:
        traj: a `Trajectory` (from `jointspace.simulate` or `Trajectory.load`).
        path: the .png file to write.
        what: panels among "qpos", "qvel" (the coordinates that move most, at most 12),
            "energy" (V, T and V + T), "contacts" (number of contacts and the sum of their
            normal forces), "ctrl", or "sensor:NAME" (the values of a recorded sensor).
        width: image width in pixels.
        height: image height in pixels.
        dpi: resolution (text scales with it).
    """
    bad = [w for w in what if w not in PANELS and not w.startswith("sensor:")]
    if bad or not what:
        raise ValueError(f"plot: unknown panel(s) {bad}; choose among {', '.join(PANELS)}, "
                         f"or sensor:NAME")
    for w in what:
        if w.startswith("sensor:"):
            try:
                traj.sensor(w[len("sensor:"):])
            except KeyError as e:
                raise ValueError(f"plot: {e.args[0]}") from None
    if not (100 <= width <= 8000 and 100 <= height <= 8000):
        raise ValueError(f"plot: width and height must be 100 … 8000 pixels, got {width}, "
                         f"{height}")
    plt = pyplot()
    t = traj.time
    fig, axes = plt.subplots(len(what), 1, figsize=(width / dpi, height / dpi), dpi=dpi,
                             sharex=True, squeeze=False)
    for ax, panel in zip(axes[:, 0], what):
        if panel in ("qpos", "qvel"):
            for label, c in _columns(traj, panel):
                arr = traj.qpos if panel == "qpos" else traj.qvel
                ax.plot(t, arr[:, c], lw=1.2, label=label)
            ax.set_ylabel("qpos" if panel == "qpos" else "qvel")
            ax.legend(fontsize=7, ncol=4, loc="upper right", frameon=False)
        elif panel == "energy":
            ax.plot(t, traj.energy[:, 0], lw=1.2, label="potential V")
            ax.plot(t, traj.energy[:, 1], lw=1.2, label="kinetic T")
            ax.plot(t, traj.energy.sum(1), lw=1.6, color="k", label="V + T")
            ax.set_ylabel("energy (J)")
            ax.legend(fontsize=8, loc="upper right", frameon=False)
        elif panel == "contacts":
            ax.plot(t, traj.contact_force, lw=1.4, color="tab:red")
            ax.set_ylabel("normal force (N)", color="tab:red")
            ax2 = ax.twinx()
            ax2.step(t, traj.ncon, where="post", lw=1.0, color="tab:gray")
            ax2.set_ylabel("contacts", color="tab:gray")
        elif panel.startswith("sensor:"):
            name = panel[len("sensor:"):]
            vals = traj.sensor(name)
            for k in range(vals.shape[1]):
                ax.plot(t, vals[:, k], lw=1.2, label=f"{name}[{k}]")
            ax.set_ylabel(name)
            ax.legend(fontsize=7, ncol=4, loc="upper right", frameon=False)
        elif panel == "ctrl":
            for a in range(min(traj.ctrl.shape[1], MAX_LINES)):
                ax.plot(t, traj.ctrl[:, a], lw=1.2)
            ax.set_ylabel("ctrl")
        ax.grid(alpha=0.3)
    axes[-1, 0].set_xlabel("time (s)")
    title = traj.model or "trajectory"
    if traj.interrupted:
        title += " (interrupted)"
    axes[0, 0].set_title(title, fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=dpi, format="png")
    plt.close(fig)
