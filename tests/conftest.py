"""Suite-wide set-up: compile the kernels on every core before a whole-suite run.

pytest runs the tests in one process, which would compile each kernel on one core the
first time a test calls it. Before a run of more than `PRECOMPILE_ABOVE` tests, the
kernels are compiled into Numba's cache by `jointspace.compile` (one process per core),
and the tests load them. The summary at the end says how long that took: on a fresh
machine it is the cold compile time a new user meets. JOINTSPACE_TEST_PRECOMPILE=0 skips it.
"""

import os

PRECOMPILE_ABOVE = 200  # a file or a few: compile what they call, as a user would
_report = []


def pytest_collection_finish(session):
    if len(session.items) <= PRECOMPILE_ABOVE:
        return
    if os.environ.get("JOINTSPACE_TEST_PRECOMPILE", "1") == "0":
        return
    import jointspace as js

    r = js.compile(progress=False)
    total = r.pop("total")["seconds"]
    count = sum(v["compiled"] for v in r.values())
    _report.append(f"jointspace compile before the tests: {total:.0f} s wall, {count} "
                   f"functions compiled ({len(r)} jobs; 0 functions = all loaded from the cache)")


def pytest_terminal_summary(terminalreporter):
    for line in _report:
        terminalreporter.write_line(line)
