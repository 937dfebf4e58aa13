"""Threads: two Data of one Model stepped in two threads against one thread stepping both.

Run: python benchmarks/bench_threads.py [--quick]
The compiled entry points release the GIL (docs/architecture.md, "Threads"), so threads
stepping separate Data run on separate cores. Prints the throughput of each way and their
ratio (the ideal on a 2-core machine is 2), and checks that the threaded states are bitwise
equal to the sequential ones (the steps of one Data never depend on another's).
"""

import sys
import threading
import time

import numpy as np

import jointspace as js


def _states(m, n):
    rng = np.random.default_rng(7)
    out = []
    for _ in range(n):
        d = js.make_data(m)
        d.qvel[:] = 0.1 * rng.standard_normal(m.nv)
        out.append(d)
    return out


def main(argv=None):
    """Print the table; return 1 if threaded and sequential states differ."""
    quick = "--quick" in (sys.argv[1:] if argv is None else argv)
    nstep = 200 if quick else 2000
    rounds = 2 if quick else 5
    m = js.models.load("humanoid")
    js.step(m, js.make_data(m), 1)  # compile or load outside the timing
    seq_best, thr_best = np.inf, np.inf
    for _ in range(rounds):
        a = _states(m, 2)
        t = time.perf_counter()
        for d in a:
            js.step(m, d, nstep)
        seq_best = min(seq_best, time.perf_counter() - t)
        b = _states(m, 2)
        threads = [threading.Thread(target=js.step, args=(m, d, nstep)) for d in b]
        t = time.perf_counter()
        for th in threads:
            th.start()
        for th in threads:
            th.join()
        thr_best = min(thr_best, time.perf_counter() - t)
        same = all(np.array_equal(x.qpos, y.qpos) and np.array_equal(x.qvel, y.qvel)
                   for x, y in zip(a, b))
        if not same:
            print("threaded states differ from sequential ones")
            return 1
    steps = 2 * nstep
    print(f"humanoid, 2 Data × {nstep} steps, best of {rounds}")
    print(f"{'one thread, both Data':<28s} {steps / seq_best:10.0f} steps/s")
    print(f"{'two threads, one Data each':<28s} {steps / thr_best:10.0f} steps/s")
    print(f"{'ratio (ideal: cores)':<28s} {seq_best / thr_best:10.2f}")
    print("threaded states bitwise equal to sequential: yes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
