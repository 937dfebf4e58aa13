"""Batched rollouts: js.rollout against mujoco.rollout, steps per second, 1 thread and all cores.

Run: python benchmarks/bench_rollout.py [--quick] [--model NAME] [--threads 1,4,16]
                                        [--nbatch 16,256] [--nstep 100] [--budget STEPS]
The same model (an embedded one, loaded by both libraries from the same XML), the same
initial states (qpos0 with the hinges moved, random velocities) and random controls for
both; nbatch 1, 16, 256 × nstep 1, 100, 1000, with nthread 1 and every core
(os.cpu_count()). Both use persistent thread pools. Each cell is timed in alternation
(the step loop, ours, then MuJoCo's) and reports the best of its rounds; the ratio is our
steps/s over MuJoCo's (above 1: jointspace is faster). The "step loop" column is a Python loop of
`js.step` (set the state, step, copy the state out) for the small batches, which a rollout
must not be slower than; "efficiency" is a thread count's speed over nthread × one thread's
(ours, then MuJoCo's). --threads, --nbatch and --nstep replace the default lists; --budget
sets the steps each cell runs per library over its rounds (default 400,000; 20,000 with
--quick).
The script also checks that every thread count gives bitwise the same states.
"""

import os
import sys
import time

import mujoco
import mujoco.rollout
import numpy as np

import jointspace as js


def _inputs(m, nbatch, nstep, rng):
    x0 = np.zeros((nbatch, 1 + m.nq + m.nv))
    for r in range(nbatch):
        q = m.qpos0.copy()
        for j in range(m.njnt):
            if m.jnt_type[j] == js.types.JNT_HINGE:
                q[m.jnt_qposadr[j]] += rng.uniform(-0.1, 0.1)
        x0[r] = np.concatenate([[0.0], q, 0.1 * rng.normal(size=m.nv)])
    lo, hi = m.actuator_ctrlrange[:, 0], m.actuator_ctrlrange[:, 1]
    control = rng.uniform(lo, hi, (nbatch, nstep, m.nu))
    return x0, control


def _step_loop(m, d, x0, control):
    nstep = control.shape[1]
    out = np.empty((len(x0), nstep, x0.shape[1]))
    for r in range(len(x0)):
        d.time = x0[r, 0]
        d.qpos[:] = x0[r, 1:1 + m.nq]
        d.qvel[:] = x0[r, 1 + m.nq:]
        d.qacc_warmstart[:] = 0.0
        for t in range(nstep):
            d.ctrl[:] = control[r, t]
            js.step(m, d)
            out[r, t, 0] = d.time
            out[r, t, 1:1 + m.nq] = d.qpos
            out[r, t, 1 + m.nq:] = d.qvel
    return out


def _best(fn, rounds):
    best = np.inf
    for _ in range(rounds):
        t = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t)
    return best


def main(argv=None):
    """Print the table; return 1 if two thread counts gave different states."""
    argv = sys.argv[1:] if argv is None else argv
    quick = "--quick" in argv
    name = argv[argv.index("--model") + 1] if "--model" in argv else "humanoid"
    xml = js.models.xml(name)
    m = js.load_string(xml)
    mm = mujoco.MjModel.from_xml_string(xml)
    ncore = os.cpu_count() or 1

    def ints(flag, default):
        return [int(v) for v in argv[argv.index(flag) + 1].split(",")] if flag in argv \
            else default

    threads = sorted(set(ints("--threads", [1, ncore])) | {1})
    nbatches = ints("--nbatch", [1, 16] if quick else [1, 16, 256])
    nsteps = ints("--nstep", [1, 100] if quick else [1, 100, 1000])
    budget = (float(argv[argv.index("--budget") + 1]) if "--budget" in argv
              else 2e4 if quick else 4e5)  # steps per cell and library, over its rounds
    rng = np.random.default_rng(0)
    pools = {n: js.Rollout(nthread=n) for n in threads}
    mdata = {n: [mujoco.MjData(mm) for _ in range(n)] for n in threads}
    d = js.make_data(m)
    x, u = _inputs(m, 2, 2, rng)
    for n in threads:  # compile or load, start the pools, outside the timing
        pools[n].rollout(m, None, x, u)
        mujoco.rollout.rollout(mm, mdata[n], x, u, persistent_pool=True)
    _step_loop(m, d, x, u)
    print(f"{name}: js.rollout vs mujoco.rollout {mujoco.__version__}, {ncore} cores, "
          f"best of the rounds; steps/s = nbatch · nstep / wall time")
    print("| nbatch | nstep | nthread | js steps/s | MuJoCo steps/s | js / MuJoCo | "
          "step loop steps/s | efficiency | MuJoCo efficiency |")
    print("|---|---|---|---|---|---|---|---|---|")
    bad = 0
    for nbatch in nbatches:
        for nstep in nsteps:
            x0, control = _inputs(m, nbatch, nstep, rng)
            steps = nbatch * nstep
            rounds = int(max(1, min(20, budget // steps)))
            loop = ""
            t_loop = np.inf if nbatch * nstep <= 16 * 100 else None
            first = None
            one_thread = mj_one_thread = None
            for n in threads:
                out = {}

                def ours():
                    out["s"] = pools[n].rollout(m, None, x0, control)[0]

                def theirs():
                    mujoco.rollout.rollout(mm, mdata[n], x0, control, persistent_pool=True)

                t_js, t_mj = np.inf, np.inf
                for _ in range(rounds):
                    if n == 1 and t_loop is not None:  # in the same alternation
                        t_loop = min(t_loop, _best(lambda: _step_loop(m, d, x0, control), 1))
                    t_js = min(t_js, _best(ours, 1))
                    t_mj = min(t_mj, _best(theirs, 1))
                if n == 1 and t_loop is not None:
                    loop = f"{steps / t_loop:,.0f}"
                if first is None:
                    first = out["s"]
                elif not np.array_equal(first, out["s"]):
                    print(f"nbatch {nbatch} nstep {nstep}: nthread {n} states differ")
                    bad = 1
                if n == 1:
                    one_thread, mj_one_thread = steps / t_js, steps / t_mj
                eff = "" if n == 1 else f"{steps / t_js / (n * one_thread):.2f}"
                mj_eff = "" if n == 1 else f"{steps / t_mj / (n * mj_one_thread):.2f}"
                print(f"| {nbatch} | {nstep} | {n} | {steps / t_js:,.0f} | {steps / t_mj:,.0f} "
                      f"| {t_mj / t_js:.2f} | {loop if n == 1 else ''} | {eff} | {mj_eff} |",
                      flush=True)
    for p in pools.values():
        p.close()
    return bad


if __name__ == "__main__":
    sys.exit(main())
