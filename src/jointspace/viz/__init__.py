"""Seeing a model: offscreen images and videos, the browser viewer, trajectory plots.

Example:
    img = js.render(m, d)                       # (h, w, 3) uint8, CPU only
    js.viz.write_png("pose.png", img)
    js.viz.render_trajectory(m, "fall.mp4", seconds=3)   # also .gif, .png
    v = js.view(m, d)                           # browser viewer; v.sync() after each step
    js.viz.plot.plot_trajectory(traj, "plot.png")   # matplotlib (the `viewer` extra)
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass

import numpy as np

from jointspace.viz.camera import Camera
from jointspace.viz.encode import GifWriter, Mp4Writer, png_bytes, write_png
from jointspace.viz.raster import render
from jointspace.viz.scene import Scene

__all__ = ["Camera", "GifWriter", "Mp4Writer", "RenderResult", "Scene", "png_bytes", "render",
           "render_trajectory", "write_png"]


@dataclass
class RenderResult:
    """What `render_trajectory` wrote: frames, simulated end time, wall seconds, interrupted."""

    frames: int
    t_end: float
    wall: float
    interrupted: bool


class _PngSequence:
    """PNG files named by a printf pattern with the frame number (frame_%04d.png)."""

    def __init__(self, pattern):
        self.pattern = pattern
        self.frames = 0

    def add(self, img):
        write_png(self.pattern % self.frames, img)
        self.frames += 1

    def close(self):
        pass


def _writer(path, fps):
    ext = os.path.splitext(path)[1].lower()
    if ext == ".gif":
        return GifWriter(path, fps)
    if ext == ".mp4":
        return Mp4Writer(path, fps)
    if ext == ".png" and "%" in os.path.basename(path):
        return _PngSequence(path)
    return None


def render_trajectory(m, out, *, seconds=0.0, traj=None, ctrl=None, fps=30.0, width=640,
                      height=480, camera=None, contacts=False, com=False, frames=False,
                      progress=None, d=None):
    """Simulate (or replay a trajectory) and write what the camera sees to a file.

    `out` ending in .gif or .mp4 gets a video at `fps`; a .png with a printf pattern
    (`frame_%04d.png`) gets one file per frame; a plain .png gets the last frame only.
    Ctrl-C stops early and leaves a valid file of the frames written so far.

    Args:
        m: the Model.
        out: output path.
        seconds: simulated time from d's state (default: qpos0 at rest).
        traj: a `Trajectory` to replay instead of simulating (frames at `fps`, each the
            recorded frame nearest in time).
        ctrl: controls, as for `jointspace.simulate` (a scalar, (nu,) or (steps, nu)).
        fps: video frames per second of simulated time.
        width: image width in pixels.
        height: image height in pixels.
        camera: a `Camera` (default: tracking the center of mass).
        contacts: draw contact points and normal forces.
        com: draw the center of mass.
        frames: draw the body frames.
        progress: optional callable progress(done_frames, total_frames, wall_seconds).
        d: the Data to simulate from (default: a new one at qpos0).

    Returns:
        A `RenderResult`.
    """
    from jointspace.forward import forward
    from jointspace.kinematics import kinematics
    from jointspace.step import step
    from jointspace.trajectory import ctrl_table
    from jointspace.types import make_data

    out = os.fspath(out)
    d = make_data(m) if d is None else d
    scene = Scene(m)
    writer = _writer(out, fps)
    dt = m.opt.timestep
    if traj is not None:
        t0, t1 = float(traj.time[0]), float(traj.time[-1])
        times = np.arange(t0, t1 + 1e-9, 1.0 / fps) if writer is not None else [t1]
        if seconds:
            times = [t for t in times if t <= t0 + seconds + 1e-9] if writer else \
                [min(t0 + seconds, t1)]
    else:
        nframes = int(np.floor(seconds * fps + 1e-9)) + 1 if writer is not None else 1
        nsteps = int(round(seconds / dt))
        table = ctrl_table(m, ctrl, max(nsteps, 1))
        if table is not None:
            d.ctrl[:] = table[0]
        forward(m, d)
    total = len(times) if traj is not None else nframes
    t_wall = time.perf_counter()
    done = 0
    interrupted = False
    opts = dict(width=width, height=height, camera=camera, scene=scene, contacts=contacts,
                com=com, frames=frames)
    img = None
    stepped = 0
    try:
        for k in range(total):
            if traj is not None:
                i = int(np.argmin(np.abs(traj.time - times[k])))
                d.qpos[:] = traj.qpos[i]
                d.qvel[:] = traj.qvel[i]
                d.ctrl[:] = traj.ctrl[i]
                d.time = traj.time[i]
                if contacts:
                    forward(m, d)
                else:
                    kinematics(m, d)
            else:
                # advance to the step nearest the frame's time k / fps (a single .png: the
                # whole run)
                target = min(int(round(k / (fps * dt))), nsteps) if writer is not None \
                    else nsteps
                while stepped < target:
                    n = target - stepped if table is None or table.shape[0] == 1 else 1
                    if table is not None:
                        d.ctrl[:] = table[min(stepped, table.shape[0] - 1)]
                    step(m, d, n)
                    stepped += n
                # the poses of the state reached; contacts are those of the step's start
                kinematics(m, d)
            img = render(m, d, **opts)
            if writer is not None:
                writer.add(img)
            done += 1
            if progress is not None:
                progress(done, total, time.perf_counter() - t_wall)
    except KeyboardInterrupt:
        interrupted = True
    finally:
        if writer is not None:
            writer.close()
    if writer is None and img is not None:
        write_png(out, img)
    return RenderResult(frames=done, t_end=float(d.time), wall=time.perf_counter() - t_wall,
                        interrupted=interrupted)
