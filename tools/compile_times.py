"""Measure compile time from an empty cache: per phase, and per compiled function.

    python tools/compile_times.py [--top N]

Runs, in a fresh interpreter with an empty NUMBA_CACHE_DIR, the phases a new user meets:
`import jointspace`, loading the humanoid, its first `step`, then its first `forward` and
`inverse`. Prints each phase's wall time and the N functions that cost most to compile,
with their own time (excluding the functions they compile in turn), the part of it spent in
LLVM (optimizing and emitting machine code: a function's LLVM time covers the code of every
function it links in), and the time including what they compile. docs/speed.md ("Start-up")
keeps the latest table.
"""

import argparse
import os
import subprocess
import sys
import tempfile
import time

_CHILD = r"""
import json, sys, time
from numba.core import event

t0 = time.perf_counter()
stack, rows = [], {}


def _name(ev):
    f = ev.data["dispatcher"].py_func
    return f"{f.__module__}.{f.__qualname__}"


class Compiles(event.Listener):
    def on_start(self, ev):
        stack.append([_name(ev), time.perf_counter(), 0.0, 0.0])

    def on_end(self, ev):
        name, t, child, llvm = stack.pop()
        dt = time.perf_counter() - t
        r = rows.setdefault(name, [0, 0.0, 0.0, 0.0])
        r[0] += 1
        r[1] += dt
        r[2] += dt - child
        r[3] += llvm
        if stack:
            stack[-1][2] += dt


class Llvm(event.Listener):
    def on_start(self, ev):
        self.t = time.perf_counter()

    def on_end(self, ev):
        if stack:
            stack[-1][3] += time.perf_counter() - self.t


event.register("numba:compile", Compiles())
event.register("numba:llvm_lock", Llvm())
phases = []


def phase(name, fn):
    t = time.perf_counter()
    out = fn()
    phases.append((name, time.perf_counter() - t, sum(r[0] for r in rows.values())))
    return out


js = phase("import jointspace", lambda: __import__("jointspace"))
m, d = phase("load humanoid + make_data",
             lambda: (lambda m: (m, js.make_data(m)))(js.models.load("humanoid")))
phase("first step", lambda: js.step(m, d, 1))
phase("first forward + inverse", lambda: (js.forward(m, d), js.inverse(m, d)))
json.dump({"phases": phases, "rows": rows}, sys.stdout)
"""


def main(argv=None):
    """Run the measurement in a child process and print the tables."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--top", type=int, default=25, help="functions listed (default 25)")
    args = ap.parse_args(argv)
    import json

    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, NUMBA_CACHE_DIR=cache, JOINTSPACE_COMPILE_NOTICE="0")
        t = time.perf_counter()
        out = subprocess.run([sys.executable, "-c", _CHILD], env=env, check=True,
                             capture_output=True, text=True).stdout
        wall = time.perf_counter() - t
    res = json.loads(out)
    print("| phase (empty cache) | wall s | functions compiled so far |")
    print("|---|---:|---:|")
    for name, secs, count in res["phases"]:
        print(f"| {name} | {secs:.1f} | {count} |")
    print(f"| whole child process | {wall:.1f} | |")
    rows = res["rows"]
    own = sum(r[2] for r in rows.values())
    llvm = sum(r[3] for r in rows.values())
    print(f"\nCompiling: {own:.1f} s, of which LLVM {llvm:.1f} s, over {len(rows)} functions "
          f"({sum(r[0] for r in rows.values())} compilations).\n")
    print("| function | own s | LLVM s | with callees s | compilations |")
    print("|---|---:|---:|---:|---:|")
    for name, (n, incl, own_s, llvm_s) in sorted(rows.items(), key=lambda kv: -kv[1][2])[
            :args.top]:
        print(f"| `{name.removeprefix('jointspace.')}` | {own_s:.1f} | {llvm_s:.1f} | "
              f"{incl:.1f} | {n} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
