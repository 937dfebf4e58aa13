"""The machine code the package ships (`_numba/prebuilt.py`): current, used, and exact.

The store holds the README demo's kernels compiled for a generic x86-64 CPU. These tests
check that it fits today's sources (else `python tools/prebuild.py` must be run), that a
process with an empty cache runs the demo's kernels from it without compiling anything
and computes bitwise what kernels compiled for this machine compute (the dynamics
kernels always, the step when the suite runs on this CPU's code), and that an entry made
for another target is never loaded.
"""

import json
import os
import subprocess
import sys

import numpy as np
import pytest
from numba.core.registry import cpu_target

import jointspace as js
from jointspace._numba import cache, prebuilt

# the demo's model and a span of its fall that includes contacts with the floor
_STEPS = 300

_CHILD = f"""
import sys
import numpy as np
import jointspace as js
from jointspace._numba import notice
m = js.models.load("humanoid")
d = js.make_data(m)
rng = np.random.default_rng(5)
q = m.qpos0.copy()  # the root's position and the hinges moved (the tour's calls only)
q[:3] += rng.normal(size=3)
q[7:] += rng.normal(scale=0.3, size=m.nq - 7)
v, a = rng.normal(size=m.nv), rng.normal(size=m.nv)
out = [js.rnea(m, d, q, v, a), js.aba(m, d, q, v, a), js.crba(m, d, q).ravel(),
       js.minv(m, d, q).ravel()]
if sys.argv[2] == "step":
    d = js.make_data(m)
    js.step(m, d, {_STEPS})
    out.append(np.concatenate([d.qpos, d.qvel, np.ravel(d.ncon)]))
np.save(sys.argv[1], np.concatenate(out))
print(notice.compiled())
"""


def _usable_here():
    """Whether the store's target, Python and Numba are this process's."""
    with open(prebuilt.STORE / prebuilt.MANIFEST, encoding="utf-8") as fh:
        info = json.load(fh)
    triple = cpu_target.target_context.codegen().magic_tuple()[0]
    python = f"{sys.version_info[0]}{sys.version_info[1]}"
    return info["target"][0] == triple and info["python"] == python


def test_the_store_fits_the_sources():
    stale = cache.prebuilt_stale()
    assert stale == [], (f"{len(stale)} entries of src/jointspace/_prebuilt no longer fit the "
                         f"sources (first: {stale[:3]}): run `python tools/prebuild.py`")


# Python-only model builders that change often: a kernel file importing one of them would
# make every edit of it invalidate the store (a constant of collision.hull imported by
# collision.convex once did)
_BUILDERS = ("collision/hull.py", "io/mesh.py", "io/mjcf.py", "io/compile.py")


def test_the_model_builders_stay_outside_the_kernels_dependencies():
    with open(prebuilt.STORE / prebuilt.MANIFEST, encoding="utf-8") as fh:
        sources = set(json.load(fh)["files"].values())
    root = prebuilt.STORE.parent
    builders = {(root / b).resolve() for b in _BUILDERS}
    assert all(b.is_file() for b in builders)
    for source in sorted(sources):
        inside = builders & cache._closure((root / source).resolve())
        assert not inside, f"{source}'s kernels depend on {sorted(p.name for p in inside)}"


def _child(out, what, **env):
    """The functions _CHILD compiled and its numbers, run with the changes env.

    It computes the dynamics kernels, and the steps when what is "step".
    """
    env = dict(os.environ, JOINTSPACE_COMPILE_NOTICE="0", **env)
    env.pop("NUMBA_CPU_NAME", None)
    env.pop("NUMBA_CPU_FEATURES", None)
    r = subprocess.run([sys.executable, "-c", _CHILD, str(out), what], env=env,
                       capture_output=True, text=True, timeout=900)
    assert r.returncode == 0, r.stderr[-2000:]
    return int(r.stdout.split()[-1]), np.load(out)


def test_an_empty_cache_runs_the_demo_from_the_store_and_computes_the_same(tmp_path):
    if not _usable_here():
        pytest.fail("the shipped store was built for another Python or platform than the "
                    "one running the tests: run `python tools/prebuild.py` here")
    compiled, store = _child(tmp_path / "store.npy", "step",
                             NUMBA_CACHE_DIR=str(tmp_path / "cache"))
    assert compiled == 0, "kernels compiled despite the store"
    assert store[-1] > 0, "the span should include contacts"
    # the generic code and this CPU's differ in instructions, not in arithmetic: Numba
    # compiles without fast-math, so no reassociation and no fused multiply-add. This CPU's
    # code of the dynamics kernels (the store off, a process of its own: the suite's may
    # hold the store's code), then this process's step: the store's after the suite's
    # precompile, this CPU's after JOINTSPACE_TEST_PRECOMPILE=host
    _, host = _child(tmp_path / "host.npy", "dynamics", JOINTSPACE_PREBUILT="0")
    np.testing.assert_array_equal(store[:host.size], host)
    m = js.models.load("humanoid")
    d = js.make_data(m)
    js.step(m, d, _STEPS)
    ours = np.concatenate([d.qpos, d.qvel, np.ravel(d.ncon)])
    np.testing.assert_array_equal(store[host.size:], ours)


def test_an_entry_for_another_target_is_never_loaded(monkeypatch):
    m = js.models.load("humanoid")
    js.step(m, js.make_data(m), 1)
    entry = sys.modules["jointspace.step"]._step_entry
    cache, sig, ctx = entry._cache, entry.signatures[0], cpu_target.target_context
    assert prebuilt.load(cache, sig, ctx, prebuilt.STORE.parent) is not None, \
        "the step entry should be in the store"
    target = prebuilt._target()
    monkeypatch.setitem(prebuilt._STATE, "target", ("aarch64-unknown-linux-gnu",) + target[1:])
    assert prebuilt.load(cache, sig, ctx, prebuilt.STORE.parent) is None
    monkeypatch.setitem(prebuilt._STATE, "target", target)
    monkeypatch.setenv("JOINTSPACE_PREBUILT", "0")
    assert prebuilt.load(cache, sig, ctx, prebuilt.STORE.parent) is None
