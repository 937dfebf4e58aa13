"""The README's main job, run as a user would: `python -m jointspace humanoid`."""

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


def test_unknown_model_is_a_one_line_error():
    r = _run("no_such_model.xml")
    assert r.returncode == 2
    assert r.stderr.startswith("jointspace: error: model file not found: no_such_model.xml")
    assert "Traceback" not in r.stderr
