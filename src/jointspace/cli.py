"""The `jointspace` command line.

    jointspace info MODEL                      sizes, bodies, joints, actuators, mass, warnings
    jointspace models                          the embedded models
    jointspace simulate MODEL --seconds T      step it, show progress, print a summary
                          [--out traj.npz] [--ctrl SPEC]
    jointspace render MODEL --out FILE         offscreen image (.png) or video (.gif, .mp4)
    jointspace view MODEL [--simulate]         interactive viewer in the browser
    jointspace view --traj TRAJ.npz            … replaying a saved trajectory
    jointspace plot TRAJ.npz --out FILE.png    joint positions, energy, contact forces
    jointspace bench [NAME ...] [--quick]      the benchmark scripts (same-run peer ratios)
    jointspace compile [--jobs N] [--prebuilt] compile every kernel now, into Numba's cache

MODEL is an embedded model's name (`jointspace models`), optionally with parameters
(`chain:n=5`), or an MJCF/URDF file. `jointspace MODEL` alone is `jointspace info MODEL`.
Errors print one line, `jointspace: error: …`, and exit with status 2 (1 for a failed
benchmark, 130 after Ctrl-C, which keeps a valid partial output).
"""

from __future__ import annotations

import argparse
import atexit
import difflib
import gc
import os
import subprocess
import sys
import time
import warnings
from pathlib import Path

import numpy as np

COMMANDS = ("info", "models", "simulate", "render", "view", "plot", "bench", "compile")
EXIT_ERROR = 2
EXIT_INTERRUPTED = 130


class CommandError(Exception):
    """A user error: printed as one line, exit status 2."""


# --------------------------------------------------------------------------- models


def _parse_value(text):
    for cast in (int, float):
        try:
            return cast(text)
        except ValueError:
            pass
    if text.lower() in ("true", "false"):
        return text.lower() == "true"
    return text


def load_model(arg):
    """Load MODEL: an embedded name (`chain:n=5` passes parameters) or an MJCF/URDF file."""
    import jointspace as js

    embedded = dict(js.models.list())
    name, _, params = arg.partition(":")
    if name in embedded:
        kw = {}
        for item in filter(None, params.split(",")):
            key, eq, value = item.partition("=")
            if not eq:
                raise CommandError(f"model parameters are written NAME:key=value,key=value; "
                                   f"got {arg!r}")
            kw[key.strip()] = _parse_value(value.strip())
        return js.models.load(name, **kw)
    if os.path.exists(arg):
        if os.path.isdir(arg):
            raise CommandError(f"{arg} is a folder; give an MJCF (.xml) or URDF (.urdf) file")
        return js.load(arg)
    looks_like_file = os.sep in arg or "." in os.path.basename(arg)
    if looks_like_file:
        raise CommandError(f"model file not found: {arg}")
    close = difflib.get_close_matches(arg, embedded, n=3, cutoff=0.5)
    hint = f"did you mean {' or '.join(repr(c) for c in close)}? " if close else ""
    raise CommandError(f"no embedded model named {arg!r} and no such file; {hint}"
                       f"the embedded models are: {', '.join(embedded)}")


def summary(m, d):
    """Lines describing the model and its current pose (kinematics must have run)."""
    jt = ("free", "ball", "slide", "hinge")
    counts = {t: int(np.sum(m.jnt_type == i)) for i, t in enumerate(jt)}
    lines = [
        f"model      {m.source or 'built in Python'}",
        f"sizes      nq={m.nq} nv={m.nv} nbody={m.nbody} njnt={m.njnt} ngeom={m.ngeom} "
        f"nsite={m.nsite} nu={m.nu}" + (f" nactuator={m.nactuator}" if m.nactuator != m.nu
                                        else "")
        + (f" nout={m.nout}" if m.nout != m.nactuator else ""),
        "joints     " + (", ".join(f"{n} {t}" for t, n in counts.items() if n) or "none"),
        f"mass       {m.body_mass.sum():.4f} kg in {int(np.sum(m.body_mass > 0))} bodies",
        f"com        {np.array2string(d.subtree_com[0], precision=4)} m",
    ]
    feet = [i for i, n in enumerate(m.names["site"]) if "foot" in n or "toe" in n]
    for s in feet:
        lines.append(f"site       {m.names['site'][s]:<12s} at "
                     f"{np.array2string(d.site_xpos[s], precision=4)} m")
    if not feet:
        for b in range(1, m.nbody):
            if all(m.body_parentid[c] != b for c in range(b + 1, m.nbody)):
                lines.append(f"leaf body  {m.names['body'][b]:<12s} at "
                             f"{np.array2string(d.xpos[b], precision=4)} m")
    for w in m.warnings:
        lines.append(f"warning    {w}")
    return lines


def _named(m, kind, i):
    return m.names[kind][i] or f"{kind} {i}"


def info_lines(m, d):
    """`summary` plus the bodies (as a tree), joints, actuators and options."""
    from jointspace.types import CHART_QUAT, GAIN_PID, GAIN_SO3, TRN_SO3

    lines = summary(m, d)
    lines.append(f"options    timestep={m.opt.timestep:g} s, integrator={m.opt.integrator}, "
                 f"solver={m.opt.solver}, cone={m.opt.cone}, "
                 f"gravity={np.array2string(np.asarray(m.opt.gravity), precision=3)}")
    lines.append("bodies     (mass kg; joints)")
    depth = np.zeros(m.nbody, dtype=int)
    jt = ("free", "ball", "slide", "hinge")
    for b in range(m.nbody):
        if b:
            depth[b] = depth[m.body_parentid[b]] + 1
        adr, num = int(m.body_jntadr[b]), int(m.body_jntnum[b])
        joints = ", ".join(f"{_named(m, 'joint', j)} {jt[m.jnt_type[j]]}"
                           for j in range(adr, adr + num)) if num > 0 else "fixed"
        if b == 0:
            joints = "world"
        lines.append(f"  {'  ' * depth[b]}{_named(m, 'body', b)} "
                     f"({m.body_mass[b]:.3g}; {joints})")
    if m.nactuator:
        lines.append(f"actuators  {m.nactuator}:")
        for a in range(m.nactuator):
            c = int(m.actuator_ctrladr[a])
            rng = m.actuator_ctrlrange[c]
            limited = (f"ctrl in [{rng[0]:g}, {rng[1]:g}]" if m.actuator_ctrllimited[c]
                       else "ctrl unlimited")
            if m.actuator_ctrlnum[a] != 1:
                limited += f" (ctrl[{c}:{c + int(m.actuator_ctrlnum[a])}])"
            target = int(m.actuator_trnid[a, 0])
            kind = {3: "tendon", 4: "site", 5: "body"}.get(int(m.actuator_trntype[a]), "joint")
            if m.actuator_trntype[a] == TRN_SO3 and m.actuator_trnid[a, 1] >= 0:
                kind = "site"
            if m.actuator_gaintype[a] == GAIN_SO3:
                chart = "quat" if m.actuator_ctrlspec[a] == CHART_QUAT else "expmap"
                gain = (f"orientation ({chart}) kp {m.actuator_gainprm[a, 0]:g} "
                        f"kv {0.0 - m.actuator_biasprm[a, 2]:g}")
            elif m.actuator_gaintype[a] == GAIN_PID:
                kp, kv = 0.0 - m.actuator_biasprm[a, 1], 0.0 - m.actuator_biasprm[a, 2]
                gain = f"pid kp {kp:g} kv {kv:g} ki {m.actuator_gainprm[a, 0]:g}"
            else:
                gain = f"gain {m.actuator_gainprm[a, 0]:g}"
            lines.append(f"  {_named(m, 'actuator', a)} on {kind} "
                         f"{_named(m, kind, target)}, {gain}, {limited}")
    else:
        lines.append("actuators  none")
    return lines


def cmd_info(args):
    """Print the model summary."""
    import jointspace as js

    m = load_model(args.model)
    d = js.make_data(m)
    js.kinematics(m, d)
    print("\n".join(info_lines(m, d)))
    return 0


def cmd_models(args):
    """List the embedded models."""
    import jointspace as js

    items = js.models.list()
    width = max(len(n) for n, _ in items)
    for name, desc in items:
        print(f"{name:<{width}s}  {desc}")
    return 0


# --------------------------------------------------------------------------- simulate


def parse_ctrl(m, spec):
    """Controls from a --ctrl SPEC (None: leave d.ctrl alone).

    SPEC is a number (every control), nu comma-separated numbers, name=value pairs (an
    actuator's first control), or a .npy/.csv/.txt file holding (nu,) or (steps, nu) values.
    """
    if spec is None:
        return None
    if os.path.isfile(spec):
        try:
            c = np.load(spec) if spec.endswith(".npy") else np.loadtxt(spec, delimiter=",",
                                                                        ndmin=1)
        except (OSError, ValueError) as e:
            raise CommandError(f"--ctrl: cannot read {spec}: {e}") from None
        c = np.asarray(c, dtype=float)
        if c.ndim == 1 and m.nu == 1:
            c = c[:, None]                  # one actuator: a column of values, one per step
        if not ((c.ndim == 1 and c.size == m.nu) or (c.ndim == 2 and c.shape[1] == m.nu)):
            raise CommandError(f"--ctrl: {spec} has shape {c.shape}; the model has nu = "
                               f"{m.nu} controls: give ({m.nu},) or (steps, {m.nu}) values")
        return c
    if m.nu == 0:
        raise CommandError("--ctrl: the model has no actuators")
    items = [s.strip() for s in spec.split(",") if s.strip()]
    if items and all("=" in s for s in items):
        c = np.zeros(m.nu)
        for s in items:
            name, _, value = s.partition("=")
            try:
                c[m.actuator_ctrladr[m.actuator(name.strip())]] = float(value)
            except KeyError as e:
                raise CommandError(f"--ctrl: {e.args[0]}") from None
            except ValueError:
                raise CommandError(f"--ctrl: {value!r} is not a number (in {s!r})") from None
        return c
    try:
        values = [float(s) for s in items]
    except ValueError:
        raise CommandError(f"--ctrl: {spec!r} is not a number, a list of {m.nu} numbers, "
                           f"name=value pairs or a file") from None
    if len(values) == 1:
        return np.full(m.nu, values[0])
    if len(values) != m.nu:
        raise CommandError(f"--ctrl: {len(values)} values given; the model has nu = {m.nu} "
                           f"controls")
    return np.array(values)


class ProgressBar:
    """A one-line progress bar on stderr (redrawn in place on a terminal)."""

    def __init__(self, label, total_seconds, enabled, stream=None):
        self.label = label
        self.total = total_seconds
        self.enabled = enabled
        self.stream = stream or sys.stderr
        self.tty = self.stream.isatty()
        self._last = -1.0

    def __call__(self, done, total, wall):
        """Report `done` of `total` units after `wall` seconds."""
        if not self.enabled:
            return
        now = time.perf_counter()
        if not self.tty and now - self._last < 0.5 and done < total:
            return
        self._last = now
        frac = done / total if total else 1.0
        width = 30
        fill = int(round(frac * width))
        t = frac * self.total
        rate = t / wall if wall > 0 else 0.0
        line = (f"{self.label} [{'#' * fill}{'-' * (width - fill)}] {frac * 100:5.1f}%  "
                f"t = {t:.2f}/{self.total:.2f} s  {rate:.2f}x real time")
        self.stream.write(("\r" + line) if self.tty else (line + "\n"))
        self.stream.flush()

    def close(self):
        """End the line."""
        if self.enabled and self.tty:
            self.stream.write("\n")
            self.stream.flush()


def _apply_options(m, args):
    if getattr(args, "timestep", None) is not None:
        if not args.timestep > 0:
            raise CommandError(f"--timestep must be positive, got {args.timestep}")
        m.opt.timestep = args.timestep
    if getattr(args, "integrator", None) is not None:
        m.opt.integrator = args.integrator


def _start_data(m, args):
    """A Data for m, reset to the keyframe --key when given."""
    import jointspace as js

    d = js.make_data(m)
    key = getattr(args, "key", None)
    if key is not None:
        if not m.nkey:
            raise CommandError(f"--key {key}: the model has no keyframes")
        try:
            js.reset(m, d, int(key) if key.lstrip("-").isdigit() else key)
        except (KeyError, IndexError) as e:
            names = ", ".join(n or f"{i} (unnamed)" for i, n in enumerate(m.names["key"]))
            raise CommandError(f"--key {key}: {e.args[0]}; the model's keyframes: {names}") \
                from None
    return d


def _check_seconds(seconds):
    if not (seconds > 0 and np.isfinite(seconds)):
        raise CommandError(f"--seconds must be a positive number, got {seconds}")


def _check_out(path, suffixes, what):
    if Path(path).suffix.lower() not in suffixes:
        raise CommandError(f"--out {path}: {what} must end in {' or '.join(suffixes)}")
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise CommandError(f"--out {path}: folder {folder} does not exist")


def simulation_summary(traj, m):
    """Closing lines of `simulate`: duration, real-time factor, contacts, energy."""
    sim_t = traj.steps * traj.timestep
    lines = [f"simulated  {sim_t:.3f} s in {traj.steps} steps (dt {traj.timestep:g} s, "
             f"{m.opt.integrator}) in {traj.wall:.2f} s wall: "
             f"{traj.realtime_factor:.2f}x real time"]
    if len(traj):
        lines.append(f"contacts   {traj.contacts_per_step:.2f} per step (at most "
                     f"{int(traj.ncon.max())} in a recorded frame)")
        e0, e1 = traj.energy[0], traj.energy[-1]
        lines.append(f"energy     V + T = {e0.sum():.4f} J at t = {traj.time[0]:.3f} s, "
                     f"{e1.sum():.4f} J at t = {traj.time[-1]:.3f} s "
                     f"(V {e1[0]:.4f}, T {e1[1]:.4f})")
    return lines


def cmd_simulate(args):
    """Simulate, show progress, save the trajectory, print a summary."""
    import jointspace as js

    _check_seconds(args.seconds)
    if args.out:
        _check_out(args.out, (".npz",), "the trajectory file")
    m = load_model(args.model)
    _apply_options(m, args)
    ctrl = parse_ctrl(m, args.ctrl)
    d = _start_data(m, args)
    bar = ProgressBar("simulate", args.seconds, args.progress)
    traj = js.simulate(m, d, args.seconds, ctrl=ctrl, record_every=args.record_every,
                       progress=bar, interruptible=True, model_name=args.model)
    bar.close()
    lines = simulation_summary(traj, m)
    if traj.interrupted:
        lines.insert(0, f"interrupted at t = {traj.steps * traj.timestep:.3f} s (Ctrl-C)")
    if args.out:
        traj.save(args.out)
        lines.append(f"saved      {args.out} ({len(traj)} frames every "
                     f"{traj.record_every} steps)")
    print("\n".join(lines))
    return EXIT_INTERRUPTED if traj.interrupted else 0


# --------------------------------------------------------------------------- bench


def benchmarks_dir(override=None):
    """The benchmark scripts' folder: --dir, else `benchmarks/` of a source checkout."""
    if override:
        folder = Path(override)
    else:
        import jointspace

        folder = Path(jointspace.__file__).resolve().parents[2] / "benchmarks"
    if not folder.is_dir():
        raise CommandError(f"benchmark folder not found: {folder}; the scripts come with the "
                           f"source repository (run from a checkout, or pass --dir)")
    return folder


def cmd_bench(args):
    """Run benchmark scripts, each in its own process, passing --quick on."""
    folder = benchmarks_dir(args.dir)
    scripts = {p.stem.removeprefix("bench_"): p for p in sorted(folder.glob("bench_*.py"))}
    if args.list:
        for name, path in scripts.items():
            doc = path.read_text(encoding="utf-8").split('"""')
            first = doc[1].strip().splitlines()[0] if len(doc) > 1 else ""
            print(f"{name:<14s} {first}")
        return 0
    names = args.names or list(scripts)
    unknown = [n for n in names if n not in scripts]
    if unknown:
        raise CommandError(f"no benchmark named {', '.join(map(repr, unknown))}; the "
                           f"benchmarks are: {', '.join(scripts)}")
    failed = []
    for name in names:
        print(f"== {name} ({scripts[name].name})", flush=True)
        cmd = [sys.executable, str(scripts[name])] + (["--quick"] if args.quick else [])
        try:
            rc = subprocess.call(cmd)
        except KeyboardInterrupt:
            print(f"interrupted during {name} (Ctrl-C)", file=sys.stderr)
            return EXIT_INTERRUPTED
        if rc:
            failed.append(name)
    if failed:
        print(f"jointspace: error: benchmark(s) failed: {', '.join(failed)}", file=sys.stderr)
        return 1
    return 0


# --------------------------------------------------------------------------- render, view, plot


def _camera(args, m):
    """The --camera option: a model camera's name (checked against m), or an orbit camera."""
    from jointspace.viz.camera import Camera

    kw = {}
    if args.camera and "," not in args.camera:
        names = [n for n in m.names["camera"] if n]
        if args.camera not in names:
            have = f"its cameras: {', '.join(names)}" if names else "it has no named cameras"
            raise CommandError(f"--camera {args.camera}: the model has no camera of that name "
                               f"({have}); or give AZIMUTH,ELEVATION,DISTANCE")
        return args.camera
    if args.camera:
        try:
            az, el, dist = (float(s) for s in args.camera.split(","))
        except ValueError:
            raise CommandError(f"--camera is AZIMUTH,ELEVATION,DISTANCE in degrees and "
                               f"meters, got {args.camera!r}") from None
        if not dist > 0:
            raise CommandError(f"--camera distance must be positive, got {dist}")
        kw = {"azimuth": az, "elevation": el, "distance": dist}
    return Camera(**kw)


def cmd_render(args):
    """Render the model offscreen to an image or a video."""
    from jointspace.viz import render_trajectory

    _check_out(args.out, (".png", ".gif", ".mp4"), "the output")
    if args.width < 16 or args.height < 16 or args.width > 8192 or args.height > 8192:
        raise CommandError(f"--width and --height must be 16 … 8192, got {args.width}, "
                           f"{args.height}")
    if not args.fps > 0:
        raise CommandError(f"--fps must be positive, got {args.fps}")
    if args.seconds < 0 or not np.isfinite(args.seconds):
        raise CommandError(f"--seconds must be ≥ 0, got {args.seconds}")
    video = Path(args.out).suffix.lower() != ".png"
    if video and args.seconds == 0 and not args.traj:
        raise CommandError("a video needs --seconds T > 0 (or --traj FILE.npz)")
    traj, m = _model_and_trajectory(args)
    _apply_options(m, args)
    ctrl = parse_ctrl(m, args.ctrl)
    bar = ProgressBar("render  ", args.seconds or (traj.time[-1] if traj else 0.0),
                      args.progress)
    res = render_trajectory(m, args.out, seconds=args.seconds, traj=traj, ctrl=ctrl,
                            fps=args.fps, width=args.width, height=args.height,
                            camera=_camera(args, m), contacts=args.contacts, com=args.com,
                            progress=bar, d=_start_data(m, args))
    bar.close()
    what = f"{res.frames} frame{'s' if res.frames != 1 else ''}"
    if res.interrupted:
        print(f"interrupted (Ctrl-C): wrote {args.out} with the {what} rendered so far")
        return EXIT_INTERRUPTED
    print(f"wrote      {args.out} ({what}, {args.width}x{args.height}, "
          f"t = {res.t_end:.3f} s, {res.wall:.2f} s wall)")
    return 0


def _model_and_trajectory(args):
    """The --traj trajectory (or None) and MODEL, by default the one it was recorded with."""
    import jointspace as js

    traj = js.Trajectory.load(args.traj) if args.traj else None
    if not args.model and traj is None:
        raise CommandError("give a MODEL (or --traj FILE.npz)")
    if traj is not None and len(traj) == 0:
        raise CommandError(f"--traj {args.traj} holds no frames")
    m = load_model(args.model if args.model else traj.model)
    if traj is not None and traj.qpos.shape[1] != m.nq:
        raise CommandError(f"--traj {args.traj} has nq = {traj.qpos.shape[1]}, the model "
                           f"has nq = {m.nq}: use the model it was recorded with")
    return traj, m


def _replay(m, d, v, traj, t_stop):
    """Show a trajectory's frames in real time, looping, until t_stop (wall clock)."""
    import jointspace as js

    duration = max(float(traj.time[-1] - traj.time[0]), 1e-9)
    t0 = time.perf_counter()
    while time.perf_counter() < t_stop:
        t = traj.time[0] + (time.perf_counter() - t0) % duration
        i = int(np.searchsorted(traj.time, t, side="right")) - 1
        d.qpos[:], d.qvel[:], d.ctrl[:] = traj.qpos[i], traj.qvel[i], traj.ctrl[i]
        d.time = traj.time[i]
        js.forward(m, d)
        v.sync()
        time.sleep(1 / 60)


def cmd_view(args):
    """Serve the browser viewer; simulate live or replay a trajectory on request."""
    import jointspace as js

    traj, m = _model_and_trajectory(args)
    if traj is not None and args.simulate:
        raise CommandError("--simulate and --traj exclude each other: replay or simulate")
    _apply_options(m, args)
    ctrl = parse_ctrl(m, args.ctrl)
    d = _start_data(m, args)
    if ctrl is not None:
        d.ctrl[:] = ctrl if ctrl.ndim == 1 else ctrl[0]
    camera = None
    if args.camera:
        if "," in args.camera:
            raise CommandError(f"--camera {args.camera}: view takes the name of one of the "
                               f"model's cameras (drag the mouse to orbit)")
        camera = _camera(args, m)
    js.forward(m, d)
    v = js.view(m, d, port=args.port, open_browser=not args.no_browser,
                show_contacts=args.contacts, show_frames=args.frames, show_com=args.com,
                camera=camera)
    print(f"viewer     {v.url}  (Ctrl-C to stop)", flush=True)
    t_stop = time.perf_counter() + args.for_seconds if args.for_seconds else np.inf
    try:
        if traj is not None:
            _replay(m, d, v, traj, t_stop)
        elif args.simulate:
            dt = m.opt.timestep
            t0 = time.perf_counter()
            sim0 = float(d.time)
            while time.perf_counter() < t_stop:
                # keep simulated time in step with the wall clock, drawing at about 60 Hz
                behind = (time.perf_counter() - t0) - (float(d.time) - sim0)
                n = int(min(max(behind / dt, 0), 0.05 / dt))
                if n:
                    js.step(m, d, n)
                v.sync()
                time.sleep(1 / 60)
        else:
            while time.perf_counter() < t_stop:
                time.sleep(0.1)
    except KeyboardInterrupt:
        pass
    finally:
        v.close()
    return 0


def cmd_plot(args):
    """Plot a saved trajectory to PNG."""
    import jointspace as js
    from jointspace.viz.plot import plot_trajectory

    _check_out(args.out, (".png",), "the plot")
    traj = js.Trajectory.load(args.traj)
    if len(traj) == 0:
        raise CommandError(f"{args.traj} holds no frames")
    what = [w.strip() for w in args.what.split(",") if w.strip()]
    plot_trajectory(traj, args.out, what=what, width=args.width, height=args.height)
    print(f"wrote      {args.out} ({', '.join(what)}; {len(traj)} frames)")
    return 0


# --------------------------------------------------------------------------- main


def _parser():
    ap = argparse.ArgumentParser(
        prog="jointspace", description="Multi-joint rigid-body dynamics with contacts.",
        epilog="MODEL: an embedded model's name (see `jointspace models`; parameters as "
               "chain:n=5) or an MJCF/URDF file. `jointspace MODEL` = `jointspace info MODEL`.")
    sub = ap.add_subparsers(dest="command", metavar="COMMAND")

    def model_arg(p):
        p.add_argument("model", metavar="MODEL", help="embedded model name or MJCF/URDF file")

    def sim_opts(p):
        p.add_argument("--ctrl", metavar="SPEC",
                       help="controls: a number (every actuator), NU numbers 'a,b,…', "
                            "'name=value,…', or a .npy/.csv file of (NU,) or (steps, NU)")
        p.add_argument("--timestep", type=float, help="override the model's time step (s)")
        p.add_argument("--integrator", choices=("Euler", "RK4", "implicit", "implicitfast"))
        p.add_argument("--key", metavar="NAME",
                       help="start from this keyframe of the model (a name or an index)")

    def progress_opt(p):
        p.add_argument("--progress", action=argparse.BooleanOptionalAction,
                       default=sys.stderr.isatty(),
                       help="progress bar on stderr (default: when stderr is a terminal)")

    p = sub.add_parser("info", help="sizes, bodies, joints, actuators, mass, warnings")
    model_arg(p)
    p.set_defaults(fn=cmd_info)

    p = sub.add_parser("models", help="list the embedded models")
    p.set_defaults(fn=cmd_models)

    p = sub.add_parser("simulate", help="simulate and summarize; save the trajectory")
    model_arg(p)
    p.add_argument("--seconds", type=float, default=1.0, help="simulated time (default 1)")
    p.add_argument("--out", metavar="FILE.npz", help="save the trajectory here")
    p.add_argument("--record-every", type=int, default=None, metavar="N",
                   help="steps between recorded frames (default: 100 frames per second)")
    sim_opts(p)
    progress_opt(p)
    p.set_defaults(fn=cmd_simulate)

    p = sub.add_parser("render", help="offscreen image (.png) or video (.gif, .mp4)")
    p.add_argument("model", metavar="MODEL", nargs="?",
                   help="embedded model name or file (default: the --traj file's model)")
    p.add_argument("--out", required=True, metavar="FILE",
                   help=".png (the state after --seconds), .gif or .mp4 (a video)")
    p.add_argument("--seconds", type=float, default=0.0, help="simulated time (default 0)")
    p.add_argument("--traj", metavar="FILE.npz", help="replay a saved trajectory instead")
    p.add_argument("--fps", type=float, default=30.0, help="video frames per second")
    p.add_argument("--width", type=int, default=640)
    p.add_argument("--height", type=int, default=480)
    p.add_argument("--camera", metavar="NAME|AZ,EL,DIST",
                   help="a camera of the model (MJCF <camera name>), or an orbit camera: "
                        "azimuth, elevation (degrees), distance (m)")
    p.add_argument("--contacts", action="store_true", help="draw contact points and forces")
    p.add_argument("--com", action="store_true", help="draw the center of mass")
    sim_opts(p)
    progress_opt(p)
    p.set_defaults(fn=cmd_render)

    p = sub.add_parser("view", help="interactive viewer in the browser")
    p.add_argument("model", metavar="MODEL", nargs="?",
                   help="embedded model name or file (default: the --traj file's model)")
    p.add_argument("--simulate", action="store_true", help="simulate live in real time")
    p.add_argument("--traj", metavar="FILE.npz", help="replay a saved trajectory, looping")
    p.add_argument("--port", type=int, default=0, help="port on 127.0.0.1 (default: free)")
    p.add_argument("--no-browser", action="store_true", help="only print the address")
    p.add_argument("--for-seconds", type=float, default=0.0, metavar="T",
                   help="stop after T wall-clock seconds (default: at Ctrl-C)")
    p.add_argument("--contacts", action="store_true", help="show contacts at start")
    p.add_argument("--frames", action="store_true", help="show body frames at start")
    p.add_argument("--com", action="store_true", help="show the center of mass at start")
    p.add_argument("--camera", metavar="NAME",
                   help="look through this camera of the model (MJCF <camera name>)")
    sim_opts(p)
    p.set_defaults(fn=cmd_view)

    p = sub.add_parser("plot", help="plot a saved trajectory to PNG")
    p.add_argument("traj", metavar="TRAJ.npz")
    p.add_argument("--out", required=True, metavar="FILE.png")
    p.add_argument("--what", default="qpos,energy,contacts",
                   help="panels, comma-separated: qpos, qvel, energy, contacts, ctrl, "
                        "sensor:NAME (a sensor recorded in the trajectory)")
    p.add_argument("--width", type=int, default=900)
    p.add_argument("--height", type=int, default=700)
    p.set_defaults(fn=cmd_plot)

    p = sub.add_parser("bench", help="run the benchmark scripts (same-run peer ratios)")
    p.add_argument("names", nargs="*", metavar="NAME", help="benchmarks to run (default: all)")
    p.add_argument("--quick", action="store_true", help="few repetitions (smoke run)")
    p.add_argument("--list", action="store_true", help="list the benchmarks")
    p.add_argument("--dir", help="folder of the bench_*.py scripts")
    p.set_defaults(fn=cmd_bench)

    p = sub.add_parser("compile", help="compile every kernel now (one process per core)")
    p.add_argument("--jobs", type=int, default=None, metavar="N",
                   help="processes at once (default: the machine's cores)")
    p.add_argument("--prebuilt", action="store_true",
                   help="load the kernels the package ships prebuilt (generic x86-64 code) "
                        "instead of compiling them for this CPU; compile the rest")
    progress_opt(p)
    p.set_defaults(fn=cmd_compile)
    return ap


def cmd_compile(args):
    """Compile every kernel into Numba's cache, one process per core; print what it did."""
    import jointspace as js

    t = js.compile(jobs=args.jobs, progress=args.progress, prebuilt=args.prebuilt)
    total = t.pop("total")["seconds"]
    for name, r in t.items():
        what = f"{r['compiled']} functions compiled" if r["compiled"] else "loaded from cache"
        print(f"{name:<12s} {r['seconds']:6.1f} s  {what}")
    print(f"{'total':<12s} {total:6.1f} s wall")
    return 0


class CompileTicker:
    """While kernels compile, a line on stderr says so and counts (a thread; see notice)."""

    def __init__(self, stream=None, every=0.5):
        import threading

        self.stream = stream or sys.stderr
        self.tty = self.stream.isatty()
        self.every = every if self.tty else 15.0
        self.t0 = time.perf_counter()
        self.shown = False
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def start(self):
        """Start watching (returns self)."""
        self._thread.start()
        return self

    def _run(self):
        from jointspace._numba import notice

        while not self._stop.wait(self.every):
            if notice.compiling():
                line = (f"jointspace: compiling kernels ({notice.compiled()} functions, "
                        f"{time.perf_counter() - self.t0:.0f} s)")
                self.stream.write(("\r" + line) if self.tty else (line + "\n"))
                self.stream.flush()
                self.shown = True
            elif self.shown and self.tty:
                self.stream.write("\r" + " " * 60 + "\r")
                self.stream.flush()
                self.shown = False

    def stop(self):
        """Stop; say how many functions were compiled and in how long, if any were."""
        from jointspace._numba import notice

        self._stop.set()
        self._thread.join()
        if self.shown and self.tty:
            self.stream.write("\r" + " " * 60 + "\r")
        if notice.compiled():
            self.stream.write(f"jointspace: compiled {notice.compiled()} functions in this run "
                              f"({time.perf_counter() - self.t0:.0f} s); later runs load them "
                              "from Numba's cache\n")
        self.stream.flush()


def _one_line_warnings(message, category, filename, lineno, file=None, line=None):
    print(f"jointspace: warning: {message}", file=sys.stderr)


def _freeze_the_heap():
    """Leave the objects the process has made so far, and at exit all of them, out of the GC.

    Importing jointspace leaves ~75,000 objects that live as long as the process (Numba's
    typing tables, ~500 dispatchers, the modules); each full collection walks all of them,
    and the interpreter's exit runs several. `gc.freeze()` moves them out of the collector's
    view (garbage made later is still collected as usual): the README demo took 0.5 s less
    on the 2-core machine (2.0 -> 1.5 s, best of 6). At exit, what was made since is frozen
    too, so no cycle is collected then and no `__del__` of an object in a cycle runs, which
    this program's objects do not need (its output files are closed where they are written).
    """
    gc.freeze()
    atexit.register(gc.freeze)


def main(argv=None):
    """Entry point of `jointspace` and `python -m jointspace`; returns the exit status.

    Run as the program (argv None), it first freezes the heap (`_freeze_the_heap`); called
    with argv (as the tests do) it leaves the caller's collector alone.
    """
    if argv is None:
        _freeze_the_heap()
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] not in COMMANDS and not argv[0].startswith("-"):
        close = difflib.get_close_matches(argv[0], COMMANDS, n=1, cutoff=0.75)
        if close and len(argv) > 1:
            print(f"jointspace: error: unknown command {argv[0]!r}; did you mean "
                  f"{close[0]!r}? (commands: {', '.join(COMMANDS)})", file=sys.stderr)
            return EXIT_ERROR
        argv = ["info"] + argv
    ap = _parser()
    args = ap.parse_args(argv)
    if args.command is None:
        ap.print_help()
        return 0
    from jointspace.errors import JointspaceError

    warnings.showwarning = _one_line_warnings
    ticker = CompileTicker().start() if args.command != "compile" else None
    try:
        return args.fn(args)
    except KeyboardInterrupt:
        print("jointspace: interrupted (Ctrl-C)", file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        return 0
    except (CommandError, JointspaceError, ValueError, KeyError, OSError) as e:
        msg = e.args[0] if isinstance(e, KeyError) and e.args else e
        print(f"jointspace: error: {' '.join(str(msg).split())}", file=sys.stderr)
        return EXIT_ERROR
    finally:
        if ticker is not None:
            ticker.stop()
