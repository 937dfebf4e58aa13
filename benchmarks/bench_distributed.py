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
        t0 = time.perf_counter()
        pools = {n: RayRollout(nworker=n) for n in (1, 2)}
        start = time.perf_counter() - t0
        local = {n: js.Rollout(nthread=n) for n in sorted({1, ncore})}
        one = (x0[:1], u[:1, :1])
        two = (x0[:2], u[:2, :1])
        for p in pools.values():
            p.rollout(m, *one)  # the models reach the workers outside the timing
        t_local = _median(lambda: local[1].rollout(m, None, *one), rounds * 10)
        t_call = _median(lambda: pools[1].rollout(m, *one), rounds * 10)
        t_two = _median(lambda: pools[2].rollout(m, *two, chunk_size=1), rounds * 10)
        t_two_local = _median(lambda: local[1].rollout(m, None, *two), rounds * 10)
        print(f"Ray {ray.__version__}, {ncore} cores; start-up of 3 workers (2 pools), warm: "
              f"{start:.1f} s")
        print("| overhead | ms |")
        print("|---|---|")
        print(f"| one call, one task (1 rollout × 1 step) | {1e3 * (t_call - t_local):.2f} |")
        print(f"| one call, two tasks on two workers, per task | "
              f"{1e3 * (t_two - t_two_local) / 2:.2f} |")
        print()
        want, _ = local[1].rollout(m, None, x0, u)
        steps = nbatch * nstep
        print(f"humanoid, nbatch {nbatch} × nstep {nstep}, best of {max(1, rounds // 4)}")
        print("| way | steps/s | vs local 1 thread |")
        print("|---|---|---|")
        base = None
        rows = [(f"js.rollout, {n} thread{'s' if n > 1 else ''}",
                 lambda n=n: local[n].rollout(m, None, x0, u)[0]) for n in local]
        rows += [(f"RayRollout, {n} worker{'s' if n > 1 else ''} × 1 thread",
                  lambda n=n: pools[n].rollout(m, x0, u)[0]) for n in (1, 2)]
        for name, fn in rows:
            out = fn()
            if not np.array_equal(out, want):
                print(f"{name}: states differ from the local rollout")
                bad = 1
            t = _best(fn, max(1, rounds // 4))
            base = base or steps / t
            print(f"| {name} | {steps / t:,.0f} | {steps / t / base:.2f} |", flush=True)
        for p in list(pools.values()) + list(local.values()):
            p.close()
    finally:
        ray.shutdown()
    return bad


if __name__ == "__main__":
    sys.exit(main())
