"""The package-wide Numba cache key: any source change anywhere invalidates every kernel."""

import shutil

from numba.core import caching

import jointspace  # noqa: F401  (installs the locators)
from jointspace._numba import cache


def test_locators_are_installed_first():
    locs = caching.CacheImpl._locator_classes
    assert locs[:3] == [cache._UserProvided, cache._InTree, cache._UserWide]


def test_stamp_changes_when_any_source_file_changes(tmp_path):
    pkg = tmp_path / "pkg"
    shutil.copytree(cache._ROOT, pkg, ignore=shutil.ignore_patterns("__pycache__"))
    before = cache._package_stamp(pkg)
    assert cache._package_stamp(pkg) == before
    f = pkg / "rotation.py"  # an inlined helper: callers in other files must recompile
    f.write_text(f.read_text() + "\n# edited\n")
    assert cache._package_stamp(pkg) != before


def test_kernels_in_the_package_use_the_package_stamp():
    from jointspace.kinematics import kinematics_stage

    impl = kinematics_stage._cache._impl
    assert isinstance(impl.locator, (cache._InTree, cache._UserWide, cache._UserProvided))
    assert impl.locator.get_source_stamp() == cache._STAMP


def test_benchmark_loops_are_keyed_on_the_package_and_their_file(monkeypatch):
    """A benchmark's compiled loop inlines package kernels: a package edit must recompile it."""
    bench = cache._COMPANIONS[0] / "bench_inverse.py"
    assert cache._ours(bench)
    stamp = cache._stamp(bench)
    assert stamp != cache._STAMP
    assert cache._stamp(cache._COMPANIONS[0] / "bench_dynamics.py") != stamp
    monkeypatch.setattr(cache, "_STAMP", "another build")
    assert cache._stamp(bench) != stamp
    assert not cache._ours(cache._ROOT.parents[1] / "setup_elsewhere.py")


def test_checked_kernels_loaded_from_the_cache_take_the_fast_path():
    """A kernel with CheckedArray arguments compares against addresses of this process.

    Those are external symbols resolved when cached code is linked; were they baked in at
    compile time, every call in a later process would miss and fall back (right results,
    lost speed). A fresh interpreter loads rnea's kernel from the cache and calls its entry
    point on valid arrays: it must not miss.
    """
    import subprocess
    import sys

    import numpy as np

    import jointspace as js

    m = js.load_string(js.models.xml("chain", n=3))
    js.rnea(m, js.make_data(m), m.qpos0, np.zeros(m.nv), np.zeros(m.nv))  # fills the cache
    code = (
        "import numpy as np, jointspace as js\n"
        "from jointspace.dynamics import rnea as R\n"
        "m = js.load_string(js.models.xml('chain', n=3)); d = js.make_data(m)\n"
        "z = np.zeros(m.nv)\n"
        "js.rnea(m, d, m.qpos0, z, z)\n"
        "hit = sum(R._rnea_checked.stats.cache_hits.values())\n"
        "ok = R._k_rnea.ep(d._s, m.qpos0, z, z, R._ALL, d.cfrc_ext, np.empty(m.nv))\n"
        "print(hit, ok)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=600)
    assert out.returncode == 0, out.stderr
    hits, ok = out.stdout.split()
    assert int(hits) >= 1 and ok == "-1"
