"""Rollouts on Ray: overhead per task and throughput with 1 and 2 workers, against local threads.

Run: python benchmarks/bench_distributed.py [--quick]
Starts a local Ray cluster on this machine's cores (`ray.init(num_cpus=os.cpu_count())`).
The overhead is the wall time of a RayRollout call of one rollout of one step, less the
local `js.rollout` of the same (the round trip: submit, the worker's call, the result
back), per call with one task and per task with one task per worker. The throughput is the
humanoid (contacts), nbatch 64 × nstep 500 (quick: 16 × 100), in steps per second for
`js.rollout` with 1 and all threads and RayRollout with 1 and 2 single-thread workers;
the script checks that every way gives bitwise the same states.
"""

import os
import sys
import time

import numpy as np

import jointspace as js


def _best(fn, rounds):
    best = np.inf
    for _ in range(rounds):
        t = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t)
    return best


def _median(fn, rounds):
    times = []
    for _ in range(rounds):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return float(np.median(times))


def _check_and_time(fn, want, steps, rounds):
    """Steps per second of fn (best of rounds), None if its states differ from want."""
    if not np.array_equal(fn(), want):
        return None
    return steps / _best(fn, rounds)


def main(argv=None):
    """Print the tables; return 1 if the distributed states differ from the local ones."""
    import ray

    from jointspace.distributed import RayRollout

    quick = "--quick" in (sys.argv[1:] if argv is None else argv)
    ncore = os.cpu_count() or 1
    ray.init(num_cpus=max(2, ncore), include_dashboard=False, log_to_driver=False)
    m = js.models.humanoid()
    rng = np.random.default_rng(0)
    nbatch, nstep = (16, 100) if quick else (64, 500)
    x0 = np.zeros((nbatch, 1 + m.nq + m.nv))
    x0[:, 1:1 + m.nq] = m.qpos0
    x0[:, 1 + m.nq + 6:] = 0.1 * rng.normal(size=(nbatch, m.nv - 6))
    u = rng.uniform(-1, 1, (nbatch, nstep, m.nu))
    rounds = 3 if quick else 20
    bad = 0
    try:
        local = {n: js.Rollout(nthread=n) for n in sorted({1, ncore})}
        want, _ = local[1].rollout(m, None, x0, u)
        steps = nbatch * nstep
        one = (x0[:1], u[:1, :1])
        two = (x0[:2], u[:2, :1])
        t_local = _median(lambda: local[1].rollout(m, None, *one), rounds * 10)
        t_two_local = _median(lambda: local[1].rollout(m, None, *two), rounds * 10)
        overhead, rows = [], []
        for name, fn in [(f"js.rollout, {n} thread{'s' if n > 1 else ''}",
                          lambda n=n: local[n].rollout(m, None, x0, u)[0]) for n in local]:
            rows.append((name, _check_and_time(fn, want, steps, max(1, rounds // 4))))
        for n in (1, 2):  # one pool at a time: each worker takes a CPU of the cluster
            t0 = time.perf_counter()
            pool = RayRollout(nworker=n)
            start = time.perf_counter() - t0
            pool.rollout(m, *one)  # the models reach the workers outside the timing
            if n == 1:
                t_call = _median(lambda: pool.rollout(m, *one), rounds * 10)
                overhead.append(("one call, one task (1 rollout × 1 step)",
                                 t_call - t_local))
            else:
                t_two = _median(lambda: pool.rollout(m, *two, chunk_size=1), rounds * 10)
                overhead.append(("one call, two tasks on two workers, per task",
                                 (t_two - t_two_local) / 2))
            overhead.append((f"start-up of {n} warm worker{'s' if n > 1 else ''}", start))
            rows.append((f"RayRollout, {n} worker{'s' if n > 1 else ''} × 1 thread",
                         _check_and_time(lambda: pool.rollout(m, x0, u)[0], want, steps,
                                         max(1, rounds // 4))))
            pool.close()
        print(f"Ray {ray.__version__}, {ncore} cores")
        print("| overhead | ms |")
        print("|---|---|")
        for name, t in overhead:
            print(f"| {name} | {1e3 * t:.2f} |")
        print()
        print(f"humanoid, nbatch {nbatch} × nstep {nstep}, best of {max(1, rounds // 4)}")
        print("| way | steps/s | vs local 1 thread |")
        print("|---|---|---|")
        base = rows[0][1]
        for name, rate in rows:
            if rate is None:
                print(f"{name}: states differ from the local rollout")
                bad = 1
                continue
            print(f"| {name} | {rate:,.0f} | {rate / base:.2f} |", flush=True)
        for p in local.values():
            p.close()
    finally:
        ray.shutdown()
    return bad


if __name__ == "__main__":
    sys.exit(main())
