"""Hostile input, fuzzed: mutated MJCF and URDF files, hostile API arguments, field writes.

Each class runs its seeded cases (tests/_fuzz.py) in a worker process, so a crash or a hang
is a test failure naming the case, not a dead test run. A case passes when it runs, or when
it is refused by jointspace's own code with one of its documented error types; it fails on
a crash, a hang, a foreign exception (NumPy's, Python's from inside a library) or a NumPy
floating-point warning. The CI run is short (FUZZ_CASES per class); set
JOINTSPACE_FUZZ_CASES=25000 for the long run whose figures docs/testing.md keeps.
"""

import os
import pathlib
import subprocess
import sys

import pytest

WORKER = pathlib.Path(__file__).with_name("_fuzz.py")
FUZZ_CASES = int(os.environ.get("JOINTSPACE_FUZZ_CASES", "150"))
CASE_TIMEOUT = 300  # s without a line: a hang (a case takes 1-20 ms warm; a compile, minutes)
FIRST_TIMEOUT = 900  # s for the first line: a cold cache compiles in the worker


def run_class(cls, count, first=0):
    """Run `count` cases; return (outcome counts, failures as lines)."""
    counts = {"ok": 0, "refused": 0}
    failures = []
    k = first
    while k < first + count:
        proc = subprocess.Popen([sys.executable, str(WORKER), cls, str(k), str(first + count - k)],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                env=dict(os.environ, JOINTSPACE_COMPILE_NOTICE="0"))
        started = None
        timeout = FIRST_TIMEOUT
        try:
            import selectors

            sel = selectors.DefaultSelector()
            sel.register(proc.stdout, selectors.EVENT_READ)
            while True:
                if not sel.select(timeout):
                    proc.kill()
                    failures.append(f"{cls} case {started}: hang (no progress in {timeout} s)")
                    break
                line = proc.stdout.readline()
                if not line:
                    break
                timeout = CASE_TIMEOUT
                kind, num, *rest = line.split(" ", 2)
                if kind == "start":
                    started = int(num)
                elif kind in counts:
                    counts[kind] += 1
                    started = None
                elif kind == "BAD":
                    failures.append(f"{cls} case {num}: {rest[0].strip() if rest else ''}")
                    started = None
        finally:
            proc.wait()
        if started is not None:  # the worker died inside a case
            if not failures or not failures[-1].startswith(f"{cls} case {started}: hang"):
                err = proc.stderr.read()[-500:]
                failures.append(f"{cls} case {started}: crash (exit {proc.returncode}) {err}")
            k = started + 1
        elif proc.returncode != 0:
            failures.append(f"{cls}: worker failed (exit {proc.returncode}) "
                            f"{proc.stderr.read()[-2000:]}")
            break
        else:
            break
    return counts, failures


@pytest.mark.parametrize("cls", ["mjcf", "urdf", "api", "fields"])
def test_fuzz(cls):
    counts, failures = run_class(cls, FUZZ_CASES)
    assert failures == [], "\n".join(failures[:20])
    assert counts["ok"] + counts["refused"] == FUZZ_CASES
    assert counts["ok"] > 0 and counts["refused"] > 0  # the mutations reach both outcomes
