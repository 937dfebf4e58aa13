"""The slides' speed table: forward-dynamics evaluations per second, ~30-dof models, no contacts.

Run: python benchmarks/bench_speed_table.py [--quick]

The slides (Todorov, "Speed comparison (no contacts)") list forward-dynamics evaluations per
second, single thread, 3 GHz Intel processor, for four models of about 30 dofs each:

    model      MuJoCo    SD/FAST   MuJoCo + factor(M)
    isolated   140,800   113,600   122,000
    chain      100,000   125,000    36,800
    hand        96,200    85,500    68,500
    humanoid   116,300   125,000    67,600

The models are rebuilt here as MJCF strings:
    isolated   5 free-floating boxes, no joints between them (5 x 6 = 30 dofs)
    chain      jointspace.models.xml("chain", n=30): 30 hinges in series (30 dofs)
    hand       a free palm (6 dofs), a 4-hinge thumb and four 5-hinge fingers (30 dofs)
    humanoid   jointspace.models.xml("humanoid"): free joint + 21 hinges (27 dofs)
Contacts and constraints are disabled in all of them (`<flag contact="disable"
constraint="disable"/>`), so that both libraries compute smooth forward dynamics.

Columns: the slides' MuJoCo figure; ours from Python (`jointspace.forward`, median per call);
ours inside a compiled loop (a Numba function calling the `forward_stages` kernel N times); MuJoCo
from Python (`mujoco.mj_forward`, median per call); MuJoCo's mj_step inside its own C loop
(`mujoco.mj_step(m, d, nstep)`, 1000 steps from the timed state in each batch; a step is
forward + integration, so this slightly understates its forward rate, but it has no Python call
per evaluation); the ratios of our compiled-loop time to MuJoCo's mj_forward-from-Python time
and to its mj_step-in-C time; and |qacc_ours - qacc_MuJoCo| / max(1, |qacc_MuJoCo|) at the
timed state, to show that both compute the same thing. All contenders are timed in alternation,
batch by batch, and ratios are medians of per-round ratios, because the machine is shared and
noisy.

Start-up: the script then runs a fresh interpreter that imports jointspace, loads the humanoid
and calls forward once, twice with the same NUMBA_CACHE_DIR: first with the directory empty
(every kernel compiled) and then with the cache it left behind (start-up from cache).
`--quick` skips this and uses few repetitions.
"""

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time

import mujoco
import numpy as np
from numba import njit

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _timing import interleaved, table  # noqa: E402

import jointspace as js  # noqa: E402
from jointspace.forward import forward_stages  # noqa: E402

# the slides' MuJoCo column: forward evaluations per second
SLIDES = {"isolated": 140_800, "chain": 100_000, "hand": 96_200, "humanoid": 116_300}

_FLAGS = '<flag contact="disable" constraint="disable"/>'


@njit(cache=True)
def _loop_forward(m, d, n):
    for _ in range(n):
        forward_stages(m, d)


def _no_contacts(xml):
    """xml with contacts and constraints disabled in its <option> (added if missing)."""
    opt = re.search(r"<option\b[^>]*?(/?)>", xml)
    if opt is None:
        top = re.search(r"<mujoco\b[^>]*>", xml)
        at = top.end()
        return xml[:at] + f"\n  <option>{_FLAGS}</option>" + xml[at:]
    if opt.group(1):  # self-closing <option .../>
        head = opt.group(0)[:-2].rstrip()
        return xml[:opt.start()] + f"{head}>{_FLAGS}</option>" + xml[opt.end():]
    return xml[:opt.end()] + _FLAGS + xml[opt.end():]


def isolated_xml(nbody=5):
    """nbody free-floating boxes side by side, no joints between them (6 nbody dofs)."""
    bodies = "\n".join(
        f'    <body name="b{i}" pos="{0.3 * i:.1f} 0 1">\n'
        f'      <freejoint name="free{i}"/>\n'
        f'      <geom type="box" size="0.05 0.08 0.11"/>\n'
        f"    </body>" for i in range(nbody))
    return f"""<mujoco model="isolated">
  <option timestep="0.002"/>
  <worldbody>
{bodies}
  </worldbody>
</mujoco>
"""


def _finger(name, pos, axes, lengths, indent):
    """Nested bodies of one finger: one hinge per axis letter, capsule phalanges."""
    vec = {"x": "1 0 0", "y": "0 1 0", "z": "0 0 1"}
    out, pad = [], indent
    out.append(f'{pad}<body name="{name}0" pos="{pos}">')
    for k, (ax, ln) in enumerate(zip(axes, lengths)):
        if k > 0:
            pad += "  "
            out.append(f'{pad}<body name="{name}{k}" pos="0 0 {lengths[k - 1]:.3f}">')
        out.append(f'{pad}  <joint name="{name}_j{k}" axis="{vec[ax]}" range="-1.5 1.5"/>')
        if ln > 0:
            out.append(f'{pad}  <geom type="capsule" fromto="0 0 0 0 0 {ln:.3f}" size="0.008"/>')
        else:
            out.append(f'{pad}  <geom type="sphere" size="0.009"/>')
    for k in range(len(axes), 0, -1):
        out.append("  " * (k - 1) + indent + "</body>")
    return "\n".join(out)


def hand_xml():
    """A free palm with a 4-hinge thumb and four 5-hinge fingers (6 + 4 + 20 = 30 dofs).

    The palm lies in the x-z plane, fingers point along +z. Each long finger: a palm-arch
    hinge (CMC, about the finger's axis z), MCP abduction (about the palm normal y) and
    flexion, PIP and DIP (about x); the thumb: CMC abduction and flexion, MCP and IP.
    """
    pad = "      "
    fingers = []
    for i, x in enumerate((-0.03, -0.01, 0.01, 0.03)):
        fingers.append(_finger(f"f{i}", f"{x:.3f} 0 0.09", "zyxxx",
                               (0.0, 0.0, 0.045, 0.028, 0.02), pad))
    fingers.append(_finger("th", "0.045 0 0.02", "yxxx", (0.0, 0.035, 0.03, 0.025), pad))
    body = "\n".join(fingers)
    return f"""<mujoco model="hand">
  <option timestep="0.002"/>
  <default><joint type="hinge" damping="0.05"/></default>
  <worldbody>
    <body name="palm" pos="0 0 0.5">
      <freejoint name="root"/>
      <geom type="box" size="0.045 0.012 0.05" pos="0 0 0.04"/>
{body}
    </body>
  </worldbody>
</mujoco>
"""


def models():
    """(label, MJCF text) of the four models, contacts and constraints disabled."""
    return [("isolated", _no_contacts(isolated_xml())),
            ("chain", _no_contacts(js.models.xml("chain", n=30))),
            ("hand", _no_contacts(hand_xml())),
            ("humanoid", _no_contacts(js.models.xml("humanoid")))]


def _random_state(mm, rng):
    """qpos near qpos0 (quaternions renormalised) and a random qvel for MuJoCo's model."""
    q = mm.qpos0 + 0.1 * rng.normal(size=mm.nq)
    for j in range(mm.njnt):
        adr = mm.jnt_qposadr[j]
        if mm.jnt_type[j] == mujoco.mjtJoint.mjJNT_FREE:
            q[adr + 3:adr + 7] /= np.linalg.norm(q[adr + 3:adr + 7])
        elif mm.jnt_type[j] == mujoco.mjtJoint.mjJNT_BALL:
            q[adr:adr + 4] /= np.linalg.norm(q[adr:adr + 4])
    return q, 0.5 * rng.normal(size=mm.nv)



def bench_model(label, xml, repeat, n_loop, n_step, budget):
    """One row of the speed table."""
    m = js.load_string(xml)
    d = js.make_data(m)
    mm = mujoco.MjModel.from_xml_string(xml)
    md = mujoco.MjData(mm)
    if (m.nq, m.nv) != (mm.nq, mm.nv):
        raise RuntimeError(f"{label}: sizes differ (ours nq {m.nq} nv {m.nv}, "
                           f"MuJoCo nq {mm.nq} nv {mm.nv})")
    q, v = _random_state(mm, np.random.default_rng(0))
    d.qpos[:] = q
    d.qvel[:] = v
    md.qpos[:] = q
    md.qvel[:] = v
    js.forward(m, d)
    mujoco.mj_forward(mm, md)
    err = float(np.max(np.abs(d.qacc - md.qacc)) / max(1.0, np.max(np.abs(md.qacc))))

    sdata = mujoco.MjData(mm)

    def steps():
        sdata.qpos[:] = q
        sdata.qvel[:] = v
        mujoco.mj_step(mm, sdata, n_step)

    ms, ds = m._s, d._s
    ours_py, ours_loop, theirs_py, theirs_step = interleaved(
        [lambda: js.forward(m, d), lambda: _loop_forward(ms, ds, n_loop),
         lambda: mujoco.mj_forward(mm, md), steps], repeat, budget)
    if sdata.warning[mujoco.mjtWarning.mjWARN_BADQACC].number:
        raise RuntimeError(f"{label}: MuJoCo's state blew up within {n_step} steps, so the "
                           "mj_step timing includes resets; use fewer steps per batch")
    ours_loop = ours_loop / n_loop
    theirs_step = theirs_step / n_step
    rate = lambda t: f"{1.0 / np.median(t):,.0f}"  # noqa: E731
    return [label, str(m.nv), f"{SLIDES[label]:,}", rate(ours_py), rate(ours_loop),
            rate(theirs_py), rate(theirs_step), f"{np.median(ours_loop / theirs_py):.2f}",
            f"{np.median(ours_loop / theirs_step):.2f}", f"{err:.0e}"]


_STARTUP = """
import time
t0 = time.perf_counter()
import jointspace as js
t1 = time.perf_counter()
m = js.models.humanoid()
d = js.make_data(m)
t2 = time.perf_counter()
js.forward(m, d)
t3 = time.perf_counter()
print(__import__("json").dumps([t1 - t0, t2 - t1, t3 - t2]))
"""


def startup(cache_dir):
    """(wall seconds, [import, load + make_data, first forward]) of a fresh interpreter."""
    env = dict(os.environ, NUMBA_CACHE_DIR=cache_dir)
    t = time.perf_counter()
    res = subprocess.run([sys.executable, "-c", _STARTUP], env=env, capture_output=True,
                         text=True, check=False)
    wall = time.perf_counter() - t
    if res.returncode != 0:
        raise RuntimeError(f"start-up subprocess failed:\n{res.stderr}")
    return wall, json.loads(res.stdout.strip().splitlines()[-1])


def main(argv=None):
    """Run the benchmark and print the speed table (and, unless --quick, start-up times)."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true",
                    help="few repetitions, no cold-compile subprocess (CI smoke run)")
    args = ap.parse_args(argv)
    repeat = 3 if args.quick else 21
    n_loop = 200 if args.quick else 5000
    n_step = 200 if args.quick else 1000  # the chain goes unstable after ~2800 steps
    budget = 0.005 if args.quick else 0.02
    t0 = time.perf_counter()
    rows = [bench_model(label, xml, repeat, n_loop, n_step, budget) for label, xml in models()]
    print("Forward-dynamics evaluations per second, single thread, contacts and constraints "
          "disabled\n")
    print(table(rows, ["model", "nv", "slides MuJoCo", "ours (Python)", "ours (compiled loop)",
                       "MuJoCo mj_forward (Python)", "MuJoCo mj_step (C loop)",
                       "ours-loop / mj_forward time", "ours-loop / mj_step time",
                       "|Δqacc| rel."]))
    print(f"\n(benchmark time {time.perf_counter() - t0:.1f} s; ratios are medians of "
          "per-round ratios, contenders timed in alternation)")
    if args.quick:
        return
    print("\nStart-up of a fresh interpreter: import jointspace, load the humanoid, one forward "
          "(seconds)\n")
    with tempfile.TemporaryDirectory(prefix="numba_cold_") as cache:
        for name in ("empty Numba cache (compile)", "warm Numba cache (same dir)"):
            wall, (imp, load, first) = startup(cache)
            print(f"{name:29s} wall {wall:7.2f}   import {imp:7.2f}   load + make_data "
                  f"{load:7.2f}   first forward {first:7.2f}", flush=True)


if __name__ == "__main__":
    main()
