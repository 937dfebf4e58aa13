"""Collision detection: jointspace vs MuJoCo's mj_collision, same process, same run.

Scenes: a pile of 200 boxes and spheres settled on the floor (MuJoCo steps it to rest, then
both libraries see the same poses), and the humanoid lying on the floor. Both sides time the
collision stage alone (geom poses already current: `collision(m, d, kinematics=False)` and
`mj_collision`), as the median of repeated batches, and report the ratio ours / MuJoCo.
A second table counts broadphase candidates (geom pairs whose boxes overlap) in piles of
50 to 400 geoms: near-linear growth means a roughly constant count per geom.

Run: python benchmarks/bench_collision.py [--quick]
"""

import argparse
import sys
import time

import mujoco
import numpy as np

sys.path.insert(0, __file__.rsplit("/", 1)[0])
from _timing import per_call, table, us  # noqa: E402

import jointspace as js  # noqa: E402
from jointspace.collision import broadphase_count, collision  # noqa: E402
from jointspace.io.mjcf import parse_mjcf  # noqa: E402


def pile_xml(n, seed=0):
    """MJCF of n boxes and spheres dropped in columns over a floor."""
    rng = np.random.default_rng(seed)
    cols = max(1, int(round(np.sqrt(n / 8))))
    parts = ['<mujoco><option timestep="0.004"/><worldbody>'
             '<geom type="plane" size="20 20 .1"/>']
    for i in range(n):
        cx, cy, level = i % cols, (i // cols) % cols, i // (cols * cols)
        p = [0.25 * cx + rng.uniform(-0.03, 0.03), 0.25 * cy + rng.uniform(-0.03, 0.03),
             0.1 + 0.22 * level]
        q = rng.normal(size=4)
        q /= np.linalg.norm(q)
        geom = 'type="box" size=".08 .07 .06"' if i % 2 else 'type="sphere" size=".08"'
        parts.append(f'<body pos="{p[0]:.4f} {p[1]:.4f} {p[2]:.4f}" '
                     f'quat="{q[0]:.5f} {q[1]:.5f} {q[2]:.5f} {q[3]:.5f}">'
                     f'<freejoint/><geom {geom}/></body>')
    parts.append("</worldbody></mujoco>")
    return "".join(parts)


def settle(xml, seconds):
    """MuJoCo model and data after stepping the scene for `seconds`."""
    mm = mujoco.MjModel.from_xml_string(xml)
    md = mujoco.MjData(mm)
    for _ in range(int(seconds / mm.opt.timestep)):
        mujoco.mj_step(mm, md)
    mujoco.mj_forward(mm, md)
    return mm, md


def ours_for(xml, qpos, nconmax):
    """A jointspace model and data at qpos, poses computed."""
    spec = parse_mjcf(xml)
    spec.nconmax = nconmax
    m = js.compile_model(spec)
    d = js.make_data(m)
    d.qpos[:] = qpos
    js.kinematics(m, d)
    return m, d


def main(argv=None):
    """Run the benchmark and print the tables."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="few repetitions (CI smoke run)")
    args = ap.parse_args(argv)
    repeat = 3 if args.quick else 15
    settle_s = 0.5 if args.quick else 3.0

    t = time.perf_counter()
    hm = js.models.humanoid()
    hd = js.make_data(hm)
    collision(hm, hd)
    first_s = time.perf_counter() - t

    rows = []
    # the humanoid lying on the floor
    mm = mujoco.MjModel.from_xml_string(js.models.xml("humanoid"))
    md = mujoco.MjData(mm)
    md.qpos[:] = mm.qpos0
    md.qpos[2] = 0.12
    md.qpos[3:7] = [np.cos(np.pi / 4), np.sin(np.pi / 4), 0, 0]
    mujoco.mj_forward(mm, md)
    hd.qpos[:] = md.qpos
    js.kinematics(hm, hd)
    scenes = [("humanoid on the floor", hm, hd, mm, md)]
    # the pile
    xml = pile_xml(200)
    pm, pd = settle(xml, settle_s)
    m, d = ours_for(xml, pd.qpos, 8000)
    scenes.append(("pile of 200 boxes and spheres", m, d, pm, pd))
    for name, m, d, mm, md in scenes:
        n_ours = collision(m, d, kinematics=False)
        mujoco.mj_collision(mm, md)
        a = per_call(lambda: collision(m, d, kinematics=False), repeat=repeat)
        b = per_call(lambda: mujoco.mj_collision(mm, md), repeat=repeat)
        rows.append([name, f"{m.ngeom}", f"{n_ours} / {md.ncon}", us(a), us(b), f"{a / b:.2f}"])
    print(f"first collision call (load or compile) {first_s:.2f} s")
    print(table(rows, ["scene", "geoms", "contacts ours / MuJoCo", "jointspace µs",
                       "MuJoCo µs", "ratio ours/MuJoCo"]))

    rows = []
    for n in (50, 100, 200, 400):
        xml = pile_xml(n, seed=1)
        pm, pd = settle(xml, settle_s / 2)
        m, d = ours_for(xml, pd.qpos, 16000)
        cand = broadphase_count(m, d)
        rows.append([f"{m.ngeom}", f"{cand}", f"{cand / m.ngeom:.2f}",
                     f"{m.ngeom * (m.ngeom - 1) // 2}", f"{int(d.ncon[0])}"])
    print()
    print(table(rows, ["geoms", "broadphase candidates", "per geom", "all pairs",
                       "contacts"]))


if __name__ == "__main__":
    main()
