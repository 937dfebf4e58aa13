"""Instructions per step, kernel by kernel, for our step and `mj_step`, counted by callgrind.

    python tools/step_instructions.py cheetah                  # a dm_control suite file
    python tools/step_instructions.py hopper --dist gymnasium  # a gymnasium file
    python tools/step_instructions.py cheetah --against ../old # our kernels, two source trees
    python tools/step_instructions.py cheetah --branch-sim     # also branch mispredictions

Wall-clock ratios on a shared machine move by 5–10% from one sitting to the next, so a
change of a few percent cannot be seen in them. Instruction counts under valgrind's
callgrind are the same from run to run: each library steps a file N steps and 0 steps from
the same state (MuJoCo's, after it settles the file 300 steps, as benchmarks/bench_real.py
does), and the difference / N is the cost of a step by function. Our kernels are named
from a perf map of the process (tools/perf_map.py), MuJoCo's from its symbols; what runs
elsewhere (libc, Python) is left out. Counts are no timings: a cache miss or a mispredicted
branch costs many instructions' time. Needs valgrind; each run takes about three minutes
(the imports under valgrind), two at a time (--jobs). The tree's kernels must be in its
prebuilt store (tools/prebuild.py --check): under valgrind the processor reads as another
model, the per-user cache misses, and every changed kernel compiles again, slowly.
"""

import argparse
import bisect
import collections
import os
import re
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SETTLE = 300  # MuJoCo steps before the counted state, as bench_real's


def demangle(sym):
    """module.function of a Numba symbol (its length-prefixed parts, type digests dropped)."""
    if not sym.startswith("_ZN"):
        return sym
    s, names, i = sym[3:], [], 0
    while i < len(s) and s[i].isdigit():
        j = i
        while s[j].isdigit():
            j += 1
        n = int(s[i:j])
        names.append(s[j:j + n])
        i = j + n
    return re.sub(r"\$\d+", "", ".".join(n for n in names if not n.startswith("_3c")))


def read_map(path):
    """(sorted starts, ends, names) of a perf map's functions."""
    rows = []
    for line in Path(path).read_text().splitlines():
        address, size, name = line.split(" ", 2)
        rows.append((int(address, 16), int(size, 16), demangle(name.strip())))
    rows.sort()
    return [r[0] for r in rows], [r[0] + r[1] for r in rows], [r[2] for r in rows]


def read_callgrind(path, perf_map=None):
    """(events, {function: [self cost per event]}, {function: calls}) of a callgrind file.

    Functions: our kernels by the perf map ("jit?" where it names none), MuJoCo's as
    "mj:NAME"; everything else (Python, libc, NumPy) is summed under "other".
    """
    starts, ends, names = read_map(perf_map) if perf_map else ([], [], [])

    def name_of(fn, ob):
        if fn.startswith("0x") and ob in ("???", ""):  # machine code in no file: Numba's
            a = int(fn.split("'")[0], 16)
            k = bisect.bisect_right(starts, a) - 1
            return names[k] if k >= 0 and a < ends[k] else "jit?"
        if "libmujoco" in ob:
            return "mj:" + fn.split("(")[0].split("'")[0].split(".llvm.")[0]
        return "other"

    objects, functions = {}, {}
    ob, callee_ob, fn, callee, events, skip = "", None, None, None, [], False
    cost = collections.defaultdict(lambda: [0] * len(events))
    calls = collections.Counter()
    for line in Path(path).read_text(errors="replace").splitlines():
        if line.startswith("events:"):
            events = line.split()[1:]
            continue
        m = re.match(r"(c?ob|c?fn|c?fi|c?fe|fl)=\((\d+)\)(?: (.*))?", line)
        if m:
            kind, key, name = m.groups()
            if kind in ("ob", "cob"):
                if name:
                    objects[key] = name.strip()
                if kind == "ob":
                    ob = objects[key]
                else:
                    callee_ob = objects[key]
            elif kind in ("fn", "cfn"):
                if name:
                    functions[key] = name.strip()
                if kind == "fn":
                    fn = name_of(functions[key], ob)
                else:  # the callee's object: the cob= before it, else the caller's
                    callee = name_of(functions[key], callee_ob if callee_ob else ob)
                    callee_ob = None
            continue
        if line.startswith("calls="):
            calls[callee] += int(line.split("=")[1].split()[0])
            skip = True  # the next cost line is the call's inclusive cost
            continue
        if line and line[0] in "0123456789+-*":
            if skip:
                skip = False
                continue
            row = cost[fn]
            for e, v in enumerate(line.split()[1:]):
                row[e] += int(v)
    return events, dict(cost), calls


def child(args):
    """The process callgrind runs: settle, take the state, step N (ours or MuJoCo's)."""
    sys.path.insert(0, str(ROOT))
    rel = (f"dm_control/suite/{args.model}.xml" if args.dist == "dm-control"
           else f"gymnasium/envs/mujoco/assets/{args.model}.xml")
    if args.lib == "mujoco":
        import mujoco

        from tests._real_models import real_model
        mj = mujoco.MjModel.from_xml_path(str(real_model(args.dist, rel)))
        md = mujoco.MjData(mj)
        mujoco.mj_step(mj, md, SETTLE + 1)
        if args.n:
            mujoco.mj_step(mj, md, args.n)
        return
    sys.path.insert(0, str(ROOT / "tools"))
    from profile_forward import settled

    import jointspace as js

    _, _, m, d = settled(rel, SETTLE)
    js.step(m, d, 1)  # every kernel loaded before the counted steps
    if args.n:
        js.step(m, d, args.n)


def run(tag, lib, n, args, src, workdir):
    """One callgrind run; returns (callgrind file, perf map or None)."""
    out = Path(workdir) / f"{tag}-{n}.cg"
    cmd = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}",
           "--smc-check=all-non-file"]
    if args.branch_sim:
        cmd.append("--branch-sim=yes")
    script = [str(Path(__file__).resolve()), "--child", lib, args.model, "--dist", args.dist,
              "-n", str(n)]
    if lib == "ours":
        script = [str(ROOT / "tools" / "perf_map.py")] + script
    env = dict(os.environ)
    if src:
        tree = str(Path(src).resolve() / "src")
        env["PYTHONPATH"] = tree + os.pathsep + env.get("PYTHONPATH", "")
    proc = subprocess.Popen(cmd + [sys.executable] + script, env=env, cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    log, _ = proc.communicate()
    if proc.returncode != 0:
        raise SystemExit(f"{tag}: valgrind exited {proc.returncode}:\n{log[-3000:]}")
    pmap = Path(f"/tmp/perf-{proc.pid}.map") if lib == "ours" else None
    return out, pmap


def per_step(runs, n):
    """{function: [cost per step per event]}, {function: calls per step}, events."""
    (ev, cost_n, calls_n), (_, cost_0, calls_0) = runs
    zero = [0] * len(ev)
    cost = {k: [(cost_n.get(k, zero)[e] - cost_0.get(k, zero)[e]) / n for e in range(len(ev))]
            for k in set(cost_n) | set(cost_0) if k != "other"}
    calls = {k: (calls_n[k] - calls_0[k]) / n for k in set(calls_n) | set(calls_0)}
    return cost, calls, ev


def main():
    """Count both sides (two runs each, two at a time) and print the tables."""
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("model", help="file stem: cheetah, hopper, humanoid, ...")
    p.add_argument("--dist", default="dm-control", choices=("dm-control", "gymnasium"))
    p.add_argument("-n", type=int, default=2000, help="counted steps (default 2000)")
    p.add_argument("--against", metavar="TREE",
                   help="a second source tree (a worktree of another commit) instead of MuJoCo")
    p.add_argument("--branch-sim", action="store_true", help="count branch mispredictions")
    p.add_argument("--top", type=int, default=40, help="rows printed (default 40)")
    p.add_argument("--jobs", type=int, default=2, help="runs at a time (default 2)")
    p.add_argument("--keep", metavar="DIR", help="keep the callgrind files and perf maps in DIR")
    p.add_argument("--child", metavar="LIB", help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.child:
        args.lib = args.child
        child(args)
        return
    sides = [("ours", "ours", None),
             ("theirs", "ours", args.against) if args.against else ("mujoco", "mujoco", None)]
    with tempfile.TemporaryDirectory() as tmp, ThreadPoolExecutor(max(1, args.jobs)) as pool:
        work = Path(args.keep or tmp)
        work.mkdir(parents=True, exist_ok=True)
        jobs = {(tag, n): pool.submit(run, tag, lib, n, args, src, work)
                for n in (args.n, 0) for tag, lib, src in sides}
        results = {}
        for tag, _, _ in sides:
            pair = []
            for n in (args.n, 0):
                cg, pmap = jobs[(tag, n)].result()
                pair.append(read_callgrind(cg, pmap))
                if pmap and args.keep:
                    pmap.replace(work / f"{tag}-{n}.map")
                elif pmap:
                    pmap.unlink(missing_ok=True)
            results[tag] = per_step(pair, args.n)
    report(sides, results, args)


def library_total(cost, lib):
    """Instructions per step in the library's own code: MuJoCo's functions or our kernels."""
    mine = (lambda k: k.startswith("mj:")) if lib == "mujoco" else \
        (lambda k: not k.startswith("mj:"))
    return sum(v[0] for k, v in cost.items() if mine(k))


def report(sides, results, args):
    """Totals, their ratio, and each side's costliest functions."""
    label_b = "other tree" if args.against else "MuJoCo"
    totals = []
    for (tag, lib, _), label in zip(sides, ("ours", label_b)):
        cost, _, ev = results[tag]
        totals.append(library_total(cost, lib))
        events = [sum(v[e] for v in cost.values()) for e in range(1, len(ev))]
        print(f"{label:>10} per step: Ir {totals[-1]:,.0f}"
              + "".join(f", {e} {t:,.0f}" for e, t in zip(ev[1:], events)))
    print(f"instructions ours / {label_b}: {totals[0] / totals[1]:.3f}\n")
    for (tag, _, _), label in zip(sides, ("ours", label_b)):
        cost, calls, ev = results[tag]
        cols = " ".join(f"{e:>8}" for e in ev[1:])
        print(f"{'Ir/step':>9} {'calls':>6} {cols}  {label}: function")
        for k, v in sorted(cost.items(), key=lambda kv: -kv[1][0])[:args.top]:
            rest = " ".join(f"{x:8.1f}" for x in v[1:])
            print(f"{v[0]:9.0f} {calls.get(k, 0):6.1f} {rest}  {k}")
        odd = [(k, v[0]) for k, v in cost.items() if v[0] < -0.5]
        if odd:  # the two runs differ outside the counted steps
            print("  negative (the runs differ outside the steps): "
                  + ", ".join(f"{k} {x:.0f}" for k, x in sorted(odd, key=lambda t: t[1])[:5]))
        print()


if __name__ == "__main__":
    main()
