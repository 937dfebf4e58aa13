"""The README's main job, run as a user would: `python -m jointspace simulate humanoid`."""

import subprocess
import sys


def _run(*args):
    return subprocess.run([sys.executable, "-m", "jointspace", *args], capture_output=True,
                          text=True, timeout=300)


def test_main_job_summarizes_the_humanoid():
    r = _run("humanoid")
    assert r.returncode == 0, r.stderr
    out = r.stdout
    assert "nq=28 nv=27" in out
    assert "joints     1 free, 21 hinge" in out
    assert out.count("foot") >= 2  # where its feet are


def test_main_job_simulates_the_humanoid_with_contacts():
    r = _run("simulate", "humanoid", "--seconds", "2")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0].startswith("simulated  2.000 s in 400 steps")
    contacts = float(lines[1].split()[1])
    assert contacts > 1.0  # it falls and lies on the floor
    assert lines[2].startswith("energy ")


def test_unknown_model_is_a_one_line_error():
    r = _run("no_such_model.xml")
    assert r.returncode == 2
    assert r.stderr.startswith("jointspace: error: model file not found: no_such_model.xml")
    assert "Traceback" not in r.stderr
