"""Compiled kernels carried to a process with a cold cache (`jointspace._numba.ship`).

What `RayRollout` does for a new node, without Ray: `bundle_of` collects the cache files of
a kernel this machine has compiled, `install` writes them into an empty cache in another
process, which then runs the kernel without compiling it. The kernel is one the package's
prebuilt store does not hold, so that the shipped files are the only source of its code.
"""

import os
import pickle
import subprocess
import sys

from jointspace._numba import prebuilt, ship

# a public kernel that no job of `jointspace compile` runs, so the store lacks it (the
# store holds every job's kernels)
_KERNEL = "ray_kernel"
_CODE = """
import numpy as np
import jointspace as js
m = js.models.load("humanoid")
d = js.make_data(m)
js.kinematics(m, d)
js.ray(m, d, np.array([0.0, 0.0, 3.0]), np.array([0.0, 0.0, -1.0]))
"""

_CHILD = """
import pickle, sys
from jointspace._numba import notice, ship
with open(sys.argv[1], "rb") as fh:
    written = ship.install(pickle.load(fh))
exec(sys.argv[2])
print(written, notice.compiled())
"""


def test_shipped_files_run_in_a_cold_cache_without_compiling(tmp_path):
    with open(prebuilt.STORE / prebuilt.MANIFEST, encoding="utf-8") as fh:
        assert _KERNEL not in fh.read()  # else the store, not the bundle, would serve it
    bundle = ship.bundle_of(_CODE)
    kernels = [k for k in bundle if _KERNEL in k[1]]
    assert kernels and all(bundle[k] for k in kernels), sorted(bundle)
    path = tmp_path / "bundle.pickle"
    path.write_bytes(pickle.dumps(bundle))
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "cold"),
               JOINTSPACE_COMPILE_NOTICE="0")
    r = subprocess.run([sys.executable, "-c", _CHILD, str(path), _CODE], env=env,
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-2000:]
    written, compiled = map(int, r.stdout.split()[-2:])
    assert written >= sum(len(bundle[k]) for k in kernels)
    assert compiled == 0
