"""Offscreen rendering: jointspace's software renderer vs MuJoCo's renderer, same process.

Run: python benchmarks/bench_render.py [--quick]
Both draw the humanoid at rest, on the CPU: MuJoCo through OSMesa (Mesa's software OpenGL,
Debian's libosmesa6: `apt-get install libosmesa6`), jointspace through its Numba
rasterizer. Prints median ms per frame and the ratio ours / MuJoCo. MuJoCo's frame is a
richer picture (shadows, reflections, textures); ours is flat-shaded, at 1× and 2×2
supersampling.
"""

import argparse
import os
import sys

os.environ.setdefault("MUJOCO_GL", "osmesa")
os.environ.setdefault("PYOPENGL_PLATFORM", "osmesa")

import mujoco  # noqa: E402

sys.path.insert(0, __file__.rsplit("/", 1)[0])
from _timing import per_call, table  # noqa: E402

import jointspace as js  # noqa: E402
from jointspace.viz import Scene  # noqa: E402


def main(argv=None):
    """Run the benchmark and print the table."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="few repetitions (CI smoke run)")
    args = ap.parse_args(argv)
    repeat = 3 if args.quick else 11

    m = js.models.humanoid()
    d = js.make_data(m)
    js.kinematics(m, d)
    scene = Scene(m)
    mm = mujoco.MjModel.from_xml_string(js.models.xml("humanoid"))
    md = mujoco.MjData(mm)
    mujoco.mj_forward(mm, md)

    rows = []
    for w, h in ((320, 240), (640, 480)):
        try:
            renderer = mujoco.Renderer(mm, h, w)
        except Exception as e:  # no OpenGL for MuJoCo here: say so, time ours alone
            print(f"MuJoCo's renderer is not available ({type(e).__name__}: {e}); install "
                  f"libosmesa6 for the comparison", file=sys.stderr)
            renderer = None

        def theirs():
            renderer.update_scene(md)
            renderer.render()

        t_mj = per_call(theirs, repeat=repeat, budget=0.2) if renderer else float("nan")
        for ss in (1, 2):
            t = per_call(lambda: js.render(m, d, width=w, height=h, scene=scene,  # noqa: B023
                                           supersample=ss), repeat=repeat, budget=0.2)
            rows.append([f"{w}x{h}", f"{ss}", f"{t * 1e3:.1f}", f"{t_mj * 1e3:.1f}",
                         f"{t / t_mj:.2f}"])
        if renderer is not None:
            renderer.close()
    print(table(rows, ["size", "supersample", "ours (ms)", "MuJoCo OSMesa (ms)",
                       "ours / MuJoCo"]))


if __name__ == "__main__":
    main()
