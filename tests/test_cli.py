"""Every `jointspace` command, run as a user runs it (a subprocess), good input and bad.

Numbers the commands print or save are checked against MuJoCo (masses, trajectories) and
Pillow (the PNG and GIF files); bad input must give one line `jointspace: error: …`, a
non-zero exit status and no traceback.
"""

import gc
import io
import os
import signal
import subprocess
import sys
import time
import urllib.request

import mujoco
import numpy as np
import pytest
from PIL import Image

import jointspace as js

TOL_TRAJ = 1e-9  # a pendulum's 0.2 s trajectory matches mj_step to round-off
TIMEOUT = 600    # a cold Numba cache compiles the step kernels inside the first command


def _interruptible():
    """In the child before exec: SIGINT at its default and unblocked, as a shell starts one.

    A child inherits ignored signals and the signal mask; some test earlier in the same
    pytest worker can leave SIGINT ignored (seen under xdist: then Python installs no
    KeyboardInterrupt handler and the command never sees the Ctrl-C these tests send).
    """
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, [signal.SIGINT])


def _run(*args, timeout=TIMEOUT):
    return subprocess.run([sys.executable, "-m", "jointspace", *map(str, args)],
                          capture_output=True, text=True, timeout=timeout)


def _ok(r):
    assert r.returncode == 0, r.stderr
    assert "Traceback" not in r.stderr
    return r.stdout


def test_info_agrees_with_mujoco():
    out = _ok(_run("info", "humanoid"))
    mjm = mujoco.MjModel.from_xml_string(js.models.xml("humanoid"))
    assert f"nq={mjm.nq} nv={mjm.nv} nbody={mjm.nbody}" in out
    assert f"mass       {mujoco.mj_getTotalmass(mjm):.4f} kg" in out
    assert f"actuators  {mjm.nu}:" in out
    for b in range(1, mjm.nbody):     # the body tree names every body
        assert f" {mujoco.mj_id2name(mjm, mujoco.mjtObj.mjOBJ_BODY, b)} (" in out
    assert "options    timestep=" in out
    # the bare model name is the README's main command, and means `info`
    assert _ok(_run("humanoid")).splitlines()[:5] == out.splitlines()[:5]


def test_models_lists_the_embedded_models():
    out = _ok(_run("models"))
    assert [line.split()[0] for line in out.splitlines()] == [n for n, _ in js.models.list()]


def test_the_program_freezes_the_heap_and_a_call_from_python_does_not(capsys):
    """The program's long-lived objects are left out of the GC; a call from Python is not.

    The interpreter's exit ran full collections over them: 0.5 s of the README demo.
    """
    from jointspace import cli

    frozen = gc.get_freeze_count()
    assert cli.main(["models"]) == 0
    assert gc.get_freeze_count() == frozen
    code = ("import gc, sys; from jointspace import cli; sys.argv = ['jointspace', 'models']; "
            "cli.main(); print(gc.get_freeze_count() > 0)")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       timeout=TIMEOUT)
    assert _ok(r).splitlines()[-1] == "True"


def test_simulate_saves_the_mujoco_trajectory(tmp_path):
    out = tmp_path / "p.npz"
    r = _run("simulate", "pendulum:n=2", "--seconds", 0.2, "--out", out, "--progress")
    text = _ok(r)
    assert "100.0%" in r.stderr and "real time" in r.stderr        # the progress bar
    assert "x real time" in text and "per step" in text and "V + T" in text
    traj = js.Trajectory.load(out)
    mjm = mujoco.MjModel.from_xml_string(js.models.xml("pendulum", n=2))
    mjd = mujoco.MjData(mjm)
    mujoco.mj_step(mjm, mjd, int(round(0.2 / mjm.opt.timestep)))
    np.testing.assert_allclose(traj.qpos[-1], mjd.qpos, atol=TOL_TRAJ)
    assert traj.time[-1] == pytest.approx(mjd.time)
    assert traj.model == "pendulum:n=2" and not traj.interrupted


def test_simulate_applies_named_controls(tmp_path):
    out = tmp_path / "a.npz"
    _ok(_run("simulate", "arm2", "--seconds", 0.01, "--out", out, "--ctrl", "elbow=0.5"))
    traj = js.Trajectory.load(out)
    np.testing.assert_array_equal(traj.ctrl, np.tile([0.0, 0.5], (len(traj), 1)))


def test_ctrl_c_leaves_a_valid_partial_trajectory(tmp_path):
    out = tmp_path / "long.npz"
    p = subprocess.Popen([sys.executable, "-m", "jointspace", "simulate", "humanoid",
                          "--seconds", "100000", "--out", str(out), "--progress"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         preexec_fn=_interruptible)
    try:
        deadline = time.monotonic() + TIMEOUT
        while time.monotonic() < deadline:        # wait for the progress bar to move
            line = p.stderr.readline()
            if "%" in line and "t = 0.00/" not in line:
                break
            assert line or p.poll() is None, "simulate ended before it was interrupted"
        p.send_signal(signal.SIGINT)
        stdout, stderr = p.communicate(timeout=120)
    finally:
        if p.poll() is None:
            p.kill()
    assert p.returncode == 130, stderr
    assert "Traceback" not in stderr
    assert "interrupted at t =" in stdout
    traj = js.Trajectory.load(out)
    assert traj.interrupted and len(traj) >= 2
    dt = traj.timestep * traj.record_every
    np.testing.assert_allclose(np.diff(traj.time), dt, rtol=1e-9)
    assert np.all(np.isfinite(traj.qpos)) and np.all(traj.energy[:, 0] != 0)


def test_render_writes_png_and_gif(tmp_path):
    png, gif = tmp_path / "h.png", tmp_path / "p.gif"
    _ok(_run("render", "humanoid", "--out", png, "--width", 96, "--height", 72,
             "--contacts", "--camera", "120,-20,3"))
    img = np.asarray(Image.open(png).convert("RGB"))
    assert img.shape == (72, 96, 3) and img.std() > 10
    out = _ok(_run("render", "pendulum", "--out", gif, "--seconds", 0.2, "--fps", 10,
                   "--width", 64, "--height", 48))
    assert "3 frames" in out
    assert Image.open(gif).n_frames == 3


def test_ctrl_c_leaves_a_valid_partial_gif(tmp_path):
    out = tmp_path / "long.gif"
    p = subprocess.Popen([sys.executable, "-m", "jointspace", "render", "pendulum", "--out",
                          str(out), "--seconds", "100000", "--width", "64", "--height", "48",
                          "--progress"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         preexec_fn=_interruptible)
    try:
        reports = 0
        while reports < 2:                            # progress twice: a few frames written
            line = p.stderr.readline()
            assert line or p.poll() is None, "render ended before it was interrupted"
            reports += "%" in line
        p.send_signal(signal.SIGINT)
        stdout, stderr = p.communicate(timeout=120)
    finally:
        if p.poll() is None:
            p.kill()
    assert p.returncode == 130, stderr
    assert "Traceback" not in stderr
    n = int(stdout.split("with the ")[1].split()[0])
    gif = Image.open(out)
    assert gif.n_frames == n >= 2
    gif.seek(n - 1)
    assert np.asarray(gif.convert("RGB")).std() > 5


def test_plot_of_a_saved_trajectory(tmp_path):
    traj_file, png = tmp_path / "t.npz", tmp_path / "plot.png"
    _ok(_run("simulate", "hinge_friction", "--seconds", 0.1, "--out", traj_file))
    out = _ok(_run("plot", traj_file, "--out", png, "--width", 600, "--height", 500))
    assert "qpos, energy, contacts" in out
    img = np.asarray(Image.open(png).convert("RGB"))
    assert img.shape == (500, 600, 3)
    assert (img < 100).all(axis=2).mean() > 0.002   # axes, lines and labels were drawn


def test_plots_without_matplotlib_name_the_install(monkeypatch):
    # sys.modules[name] = None makes `import name` raise ImportError, as when not installed
    from jointspace.viz.plot import pyplot

    monkeypatch.setitem(sys.modules, "matplotlib", None)
    with pytest.raises(js.JointspaceError, match=r"pip install 'jointspace\[viewer\]'"):
        pyplot()


def test_compile_builds_every_job_and_a_second_run_only_loads():
    from jointspace.precompile import JOBS

    # --prebuilt: what the suite's precompile did (the host code of every kernel would cost
    # the suite's whole compile again here); the same jobs as without it
    _ok(_run("compile", "--prebuilt", "--no-progress"))
    r = _run("compile", "--prebuilt", "--jobs", "1", "--no-progress")
    lines = dict(line.split(None, 1) for line in _ok(r).splitlines())
    assert set(lines) == set(JOBS) | {"total"}
    assert all(lines[j].endswith("loaded from cache") for j in JOBS)  # nothing compiled twice
    assert "compiling its kernels" not in r.stderr


@pytest.mark.parametrize("prebuilt, store", [(False, "0"), (True, "1")])
def test_compile_turns_the_store_off_in_its_jobs_unless_asked(monkeypatch, prebuilt, store):
    """Host code by default (the store off in every job), the package's with prebuilt."""
    from jointspace import precompile

    seen = []

    class Done:
        returncode = 0

        def __init__(self, argv, env, **kw):
            seen.append(env["JOINTSPACE_PREBUILT"])
            self.stdout = io.StringIO(f"{argv[-1]} 0 0.0\n")

        def poll(self):
            return 0

    monkeypatch.setenv("JOINTSPACE_PREBUILT", "1" if store == "0" else "0")
    monkeypatch.setattr(precompile.subprocess, "Popen", Done)
    r = js.compile(progress=False, prebuilt=prebuilt)
    assert set(r) == set(precompile.JOBS) | {"total"}
    assert seen == [store] * len(precompile.JOBS)


def test_compile_rejects_zero_jobs():
    with pytest.raises(ValueError, match="jobs must be at least 1"):
        js.compile(jobs=0)


def test_bench_lists_and_runs_a_benchmark():
    out = _ok(_run("bench", "--list"))
    names = [line.split()[0] for line in out.splitlines()]
    folder = os.path.join(os.path.dirname(__file__), "..", "benchmarks")
    assert sorted(names) == sorted(f[6:-3] for f in os.listdir(folder)
                                   if f.startswith("bench_") and f.endswith(".py"))
    out = _ok(_run("bench", "overhead", "--quick"))
    assert out.startswith("== overhead")


def test_view_serves_the_page_until_interrupted():
    p = subprocess.Popen([sys.executable, "-m", "jointspace", "view", "pendulum",
                          "--no-browser", "--simulate", "--for-seconds", "300"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         preexec_fn=_interruptible)
    try:
        line = p.stdout.readline()
        assert line.startswith("viewer     http://127.0.0.1:"), line + p.stderr.read()
        url = line.split()[1]
        page = urllib.request.urlopen(url, timeout=30).read().decode()
        assert "viewer.js" in page
        t0 = float(_json(url + "state")["time"])
        # it simulates live: the time moves on (the first step may still be loading or
        # compiling its kernels on a loaded machine, so wait for it rather than a fixed 1 s)
        deadline = time.monotonic() + 180
        while float(_json(url + "state")["time"]) <= t0 and time.monotonic() < deadline:
            time.sleep(0.2)
        assert float(_json(url + "state")["time"]) > t0
        p.send_signal(signal.SIGINT)
        p.wait(timeout=60)
    finally:
        if p.poll() is None:
            p.kill()
    assert p.returncode == 0, p.stderr.read()


def test_view_replays_a_trajectory(tmp_path):
    traj_file = tmp_path / "p.npz"
    _ok(_run("simulate", "pendulum", "--seconds", 2.0, "--out", traj_file))
    traj = js.Trajectory.load(traj_file)
    p = subprocess.Popen([sys.executable, "-m", "jointspace", "view", "--traj", str(traj_file),
                          "--no-browser", "--for-seconds", "300"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         preexec_fn=_interruptible)
    try:
        line = p.stdout.readline()
        assert line.startswith("viewer     http://127.0.0.1:"), line + p.stderr.read()
        url = line.split()[1]
        seen = set()
        for _ in range(4):
            s = _json(url + "state")
            k = int(np.argmin(np.abs(traj.time - s["time"])))
            assert traj.time[k] == pytest.approx(s["time"], abs=1e-12)   # a recorded frame
            seen.add(k)
            time.sleep(0.3)
        assert len(seen) >= 3                                  # it plays them in time
        p.send_signal(signal.SIGINT)
        p.wait(timeout=60)
    finally:
        if p.poll() is None:
            p.kill()
    assert p.returncode == 0, p.stderr.read()


def _json(url):
    import json

    return json.loads(urllib.request.urlopen(url, timeout=30).read())


@pytest.mark.parametrize("args, message", [
    (["info", "humanoidd"], "no embedded model named 'humanoidd'"),
    (["simulate", "missing.xml"], "model file not found: missing.xml"),
    (["render", "BAD", "--out", "x.png"], "malformed XML"),
    (["view", "nosuch.urdf"], "model file not found"),
    (["plot", "missing.npz", "--out", "x.png"], "trajectory file not found"),
    (["bench", "nosuch"], "no benchmark named 'nosuch'"),
    (["simulate", "humanoid", "--seconds", "0"], "--seconds must be a positive number"),
    (["simulate", "humanoid", "--ctrl", "1,2"], "2 values given"),
    (["render", "humanoid", "--out", "x.jpg"], "must end in .png or .gif or .mp4"),
    (["simulat", "humanoid"], "did you mean 'simulate'"),
])
def test_bad_input_is_one_line(args, message, tmp_path):
    bad = tmp_path / "bad.xml"
    bad.write_text("<mujoco><worldbody><body><geom size='0.1'/></body>\n")
    r = _run(*[str(bad) if a == "BAD" else a for a in args], timeout=120)
    assert r.returncode == 2
    assert "Traceback" not in r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("jointspace: error: "), r.stderr
    assert message in lines[0]
