"""Suite-wide set-up: compile the kernels on every core before a whole-suite run.

Before a run of more than `PRECOMPILE_ABOVE` tests, the kernels are compiled into Numba's
cache by `jointspace.compile` (one process per core), and the tests then load them; a run of
one file or a few compiles only what it calls. The kernels the package ships prebuilt
(`_numba/prebuilt.py`) are loaded from it, as after a user's install, and the rest is
compiled; the summary at the end says how long that took: on a fresh machine it is the
cold compile time a new user meets. JOINTSPACE_TEST_PRECOMPILE=0 skips it;
JOINTSPACE_TEST_PRECOMPILE=host compiles every kernel for this CPU instead, as
`jointspace compile` does.

The suite runs on every core with pytest-xdist (`-n auto` in pyproject.toml). Every xdist
worker collects the whole suite, so every worker reaches the precompile: the first takes a
lock and compiles, the others wait on the lock and then find it done (a marker named by
the run's id), so the compile runs once and no test competes with it for the cores.
"""

import fcntl
import os
import pathlib
import tempfile

import pytest

PRECOMPILE_ABOVE = 200  # a file or a few: compile what they call, as a user would
_REPORT_KEY = "jointspace_precompile"
_report = []


def _precompile():
    import jointspace as js

    host = os.environ.get("JOINTSPACE_TEST_PRECOMPILE") == "host"
    r = js.compile(progress=False, prebuilt=not host)
    total = r.pop("total")["seconds"]
    count = sum(v["compiled"] for v in r.values())
    what = "every kernel for this CPU" if host else "the package's prebuilt kernels loaded"
    return (f"jointspace compile before the tests ({what}): {total:.0f} s wall, {count} "
            f"functions compiled ({len(r)} jobs; 0 functions = all loaded from the cache)")


def pytest_collection_finish(session):
    if len(session.items) <= PRECOMPILE_ABOVE:
        return
    if os.environ.get("JOINTSPACE_TEST_PRECOMPILE", "1") == "0":
        return
    worker = getattr(session.config, "workerinput", None)
    if worker is None:  # one process: compile, report at the end
        _report.append(_precompile())
        return
    stem = pathlib.Path(tempfile.gettempdir()) / f"jointspace-precompile-{worker['testrunuid']}"
    with open(f"{stem}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        done = pathlib.Path(f"{stem}.done")
        if not done.exists():
            session.config.workeroutput[_REPORT_KEY] = _precompile()
            done.write_text("compiled\n")


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node, error):
    """In the xdist controller: keep the report of the worker that compiled."""
    line = getattr(node, "workeroutput", {}).get(_REPORT_KEY)
    if line:
        _report.append(line)


def pytest_terminal_summary(terminalreporter):
    for line in _report:
        terminalreporter.write_line(line)
