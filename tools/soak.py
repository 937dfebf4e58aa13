"""Soak: a million humanoid steps with random controls and pushes, in two processes.

    python tools/soak.py [--steps N] [--seed S]

Each of two fresh interpreters steps the humanoid N times (default 10⁶) in chunks of 1,000
steps, with controls drawn uniformly in the actuators' ranges every chunk and a random
push (xfrc_applied on a random body, up to 200 N for 50 steps) every 10 chunks. Checks:
no NaN or inf in the state, no reset by the state checks (d.warning), resident memory
flat after the first 10% (growth under 5 MB), and both processes' final qpos, qvel and
time bitwise equal. Prints the figures and exits 1 on a failure; docs/testing.md keeps
the latest.
"""

import argparse
import json
import os
import subprocess
import sys
import time

_CHILD = r"""
import json, resource, sys, time
import numpy as np
import jointspace as js

steps, seed = int(sys.argv[1]), int(sys.argv[2])
rng = np.random.default_rng(seed)
m = js.models.load("humanoid")
d = js.make_data(m)
lo, hi = m.actuator_ctrlrange[:, 0], m.actuator_ctrlrange[:, 1]
chunk = 1000
rss = []
bad = 0
t0 = time.perf_counter()
for k in range(steps // chunk):
    d.ctrl[:] = rng.uniform(lo, hi)
    if k % 10 == 0:
        d.xfrc_applied[:] = 0.0
        b = int(rng.integers(1, m.nbody))
        d.xfrc_applied[b, :3] = rng.uniform(-200.0, 200.0, 3)
        js.step(m, d, 50)
        d.xfrc_applied[:] = 0.0
        js.step(m, d, chunk - 50)
    else:
        js.step(m, d, chunk)
    if not (np.isfinite(d.qpos).all() and np.isfinite(d.qvel).all()):
        bad += 1
    if k % 50 == 0:
        rss.append(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
wall = time.perf_counter() - t0
out = {"wall": wall, "rss_kb": rss, "nonfinite": bad, "resets": int(d.warning[:3, 0].sum()),
       "qpos": d.qpos.tobytes().hex(), "qvel": d.qvel.tobytes().hex(), "time": d.time,
       "ncon": int(d.ncon[0])}
print(json.dumps(out))
"""


def main(argv=None):
    """Run the soak in two processes; print the figures; return 1 on a failure."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=1_000_000)
    ap.add_argument("--seed", type=int, default=2026)
    args = ap.parse_args(argv)
    env = dict(os.environ, JOINTSPACE_COMPILE_NOTICE="0")
    procs = [subprocess.Popen([sys.executable, "-c", _CHILD, str(args.steps), str(args.seed)],
                              stdout=subprocess.PIPE, text=True, env=env) for _ in range(2)]
    t = time.perf_counter()
    runs = [json.loads(p.communicate()[0]) for p in procs]
    wall = time.perf_counter() - t
    a, b = runs
    rss = a["rss_kb"]
    growth = (rss[-1] - rss[len(rss) // 10]) / 1024.0
    same = a["qpos"] == b["qpos"] and a["qvel"] == b["qvel"] and a["time"] == b["time"]
    print(f"humanoid, {args.steps:,} steps (t = {a['time']:.1f} s simulated), random controls, "
          f"a push every 10,000 steps; two processes in {wall:.0f} s wall")
    print(f"steps per second (one process)   {args.steps / a['wall']:,.0f}")
    print(f"non-finite states / resets       {a['nonfinite']} / {a['resets']}")
    print(f"max RSS first / last sample      {rss[0] / 1024:.1f} / {rss[-1] / 1024:.1f} MB "
          f"(growth after 10%: {growth:.2f} MB)")
    print(f"final states bitwise equal       {'yes' if same else 'NO'}")
    ok = same and a["nonfinite"] == 0 and a["resets"] == 0 and growth < 5.0
    print("soak:", "passed" if ok else "FAILED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
