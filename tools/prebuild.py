"""Write src/jointspace/_prebuilt/: the machine code of the README's first steps, portable.

    python tools/prebuild.py          # minutes: compiles what changed since the last build
    python tools/prebuild.py --check  # exit 1 if the store no longer fits the sources

Runs the README demo (`jointspace simulate humanoid --seconds 2`) and the calls of the
README's short tour in a fresh interpreter
with NUMBA_CPU_NAME=generic (code any x86-64 processor runs) and its own Numba cache
(`.prebuild-cache/` at the checkout's root, kept between builds so that a build after a
small change compiles only what the change touched), with the store itself turned off,
then replaces the store with the cache entries that run used (`_numba/ship.bundle_of`)
and a manifest naming the target the code was compiled for.

Run it after changing any kernel the demo runs: tests/test_prebuilt.py fails until the
store fits the sources again (`--check` says which entries are stale). The store is only
usable with the Python minor version, Numba version and platform it was built with
(CPython 3.11, x86-64 Linux today); elsewhere kernels compile on first use as before.
"""

import argparse
import json
import os
import pathlib
import shutil
import subprocess
import sys
import time
import zlib

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

# the README's first command, then the calls of its short tour (on the embedded humanoid;
# the tour's keyframe and sensor names are a robot file's, which the humanoid lacks), then
# a model with what the real files of the test data add to the kernels the humanoid loads
DEMO = """
import numpy as np
import jointspace as js
from jointspace import cli

assert cli.main(["simulate", "humanoid", "--seconds", "2"]) == 0
m = js.models.humanoid()
d = js.make_data(m)
js.kinematics(m, d)
js.jacobian_site(m, d, 0)
js.jacobian_dot_qvel(m, d, m.site_bodyid[0], d.site_xpos[0])
q, v, a = m.qpos0.copy(), np.zeros(m.nv), np.zeros(m.nv)
tau = js.rnea(m, d, q, v, a)
js.crba(m, d, q)
js.aba(m, d, q, v, tau)
js.minv(m, d, q)
js.step(m, d, 40)
for solver in ("Newton", "CG", "PGS"):
    m.opt.solver = solver
    js.forward(m, d)
js.inverse(m, d)
js.reset(m, d)
x = js.get_state(m, d, "fullphysics")
js.set_state(m, d, x, "fullphysics")
js.rollout(m, None, x, np.zeros((1, 3, m.nu)), nthread=2)
js.rnea_derivatives(m, d, q, v, a)
js.aba_derivatives(m, d, q, v, tau)
js.transition_derivatives(m, d)
# what a robot file adds to the humanoid's path: cameras and lights (the dm_control suite's)
m = js.load_string('<mujoco><worldbody><light pos="0 0 3"/><camera pos="0 -2 1"/>'
                   '<body><freejoint/><geom size=".1"/></body></worldbody></mujoco>')
js.step(m, js.make_data(m), 2)
# then every public kernel: the jobs of `jointspace compile` (the suite's precompile), so
# that a user's first call of any of them, and the test suite's, loads instead of compiling
from jointspace import precompile
for name in precompile.JOBS:
    precompile.run_job(js, name)
"""


def _environment(cache_dir):
    """This environment, compiling generic code into `cache_dir`, the store turned off."""
    return dict(os.environ, NUMBA_CACHE_DIR=str(cache_dir), NUMBA_CPU_NAME="generic",
                NUMBA_CPU_FEATURES="", JOINTSPACE_PREBUILT="0")


def _target(env):
    """The (triple, cpu, features) Numba keys code compiled under `env` with."""
    code = ("import json; from numba.core.registry import cpu_target; "
            "print(json.dumps(cpu_target.target_context.codegen().magic_tuple()))")
    out = subprocess.run([sys.executable, "-c", code], env=env, check=True,
                         capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def build():
    """Compile the demo's kernels in generic code and write them as the store."""
    import jointspace  # noqa: F401 (imports every module that holds kernels)
    from jointspace._numba import prebuilt, ship

    cache_dir = ROOT / ".prebuild-cache"
    env = _environment(cache_dir)
    t0 = time.perf_counter()
    saved = dict(os.environ)
    os.environ.update(env)  # bundle_of runs its interpreter with this process's environment
    try:
        ship.bundle_of(DEMO)  # compiles what the cache lacks: its bundle holds every helper
        bundle = ship.bundle_of(DEMO)  # loads: the kernels the demo calls, nothing inlined
    finally:
        os.environ.clear()
        os.environ.update(saved)
    target = _target(env)
    shutil.rmtree(prebuilt.STORE, ignore_errors=True)
    files = {}  # index file -> its kernel's source, both relative to the package
    for (module, _qualname), entries in sorted(bundle.items()):
        source = pathlib.Path(sys.modules[module].__file__).resolve()
        rel = source.relative_to(prebuilt.STORE.parent)
        out = prebuilt.STORE / rel.parent
        out.mkdir(parents=True, exist_ok=True)
        for name, data in sorted(entries.items()):
            # data files compressed: `_numba/prebuilt.py` reads them so
            (out / name).write_bytes(zlib.compress(data, 9) if name.endswith(".nbc") else data)
            if name.endswith(".nbi"):
                files[(rel.parent / name).as_posix()] = rel.as_posix()
    manifest = {"target": target, "python": f"{sys.version_info[0]}{sys.version_info[1]}",
                "files": dict(sorted(files.items()))}
    with open(prebuilt.STORE / prebuilt.MANIFEST, "w", encoding="utf-8") as fh:
        json.dump(manifest, fh, indent=1)
        fh.write("\n")
    size = sum(p.stat().st_size for p in prebuilt.STORE.rglob("*") if p.is_file())
    print(f"prebuild: {len(files)} kernels, {size / 1e6:.1f} MB, target {target}, "
          f"{time.perf_counter() - t0:.0f} s")


def main():
    """`tools/prebuild.py [--check]`; the exit status."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true",
                    help="list the store's entries that no longer fit the sources; exit 1 if any")
    args = ap.parse_args()
    if args.check:
        import jointspace  # noqa: F401 (installs the package's cache locators)
        from jointspace._numba import cache

        stale = cache.prebuilt_stale()
        for name in stale:
            print(f"stale: {name}")
        return 1 if stale else 0
    build()
    return 0


if __name__ == "__main__":
    sys.exit(main())
