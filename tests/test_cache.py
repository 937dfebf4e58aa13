"""The Numba cache key: a kernel's stamp covers the files it depends on, and nothing else."""

import os
import pathlib
import shutil
import subprocess
import sys
import textwrap

import pytest
from numba.core import caching

import jointspace  # noqa: F401  (installs the locators)
from jointspace._numba import cache

ROOT = pathlib.Path(__file__).resolve().parents[1]


def test_locators_are_installed_first():
    locs = caching.CacheImpl._locator_classes
    assert locs[:3] == [cache._UserProvided, cache._InTree, cache._UserWide]


@pytest.fixture
def package_copy(tmp_path, monkeypatch):
    """A copy of the package that the stamp functions read instead of the real one."""
    pkg = tmp_path / "jointspace"
    shutil.copytree(cache._ROOT, pkg, ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.setattr(cache, "_ROOT", pkg)
    monkeypatch.setattr(cache, "_CORE", tuple(pkg / f for f in cache._CORE_FILES))
    monkeypatch.setattr(cache, "_FILE_DEPS", {})
    monkeypatch.setattr(cache, "_CLOSURES", {})
    monkeypatch.setattr(cache, "_DIGESTS", {})
    monkeypatch.setattr(cache, "_CORE_TAG", [])
    return pkg


def _stamps(pkg, files):
    cache._FILE_DEPS.clear()
    cache._CLOSURES.clear()
    cache._DIGESTS.clear()
    return {f: cache._stamp(pkg / f) for f in files}


FILES = ("kinematics.py", "forward.py", "dynamics/rnea.py", "_numba/dense.py", "cli.py",
         "collision/driver.py")


def test_stamp_covers_what_a_file_imports_transitively(package_copy):
    pkg = package_copy
    before = _stamps(pkg, FILES)
    assert _stamps(pkg, FILES) == before
    f = pkg / "rotation.py"  # inlined into kinematics; forward and rnea import kinematics
    f.write_text(f.read_text() + "\n# edited\n")
    after = _stamps(pkg, FILES)
    changed = {k for k in FILES if after[k] != before[k]}
    assert changed == {"kinematics.py", "forward.py", "dynamics/rnea.py", "collision/driver.py",
                       "cli.py"}  # cli imports the simulator; dense.py does not import rotation


def test_an_application_edit_changes_no_kernel_stamp(package_copy):
    pkg = package_copy
    before = _stamps(pkg, FILES)
    for name in ("cli.py", "_numba/cache.py", "_numba/notice.py", "precompile.py"):
        f = pkg / name  # shape no machine code: the CLI, the cache key, the compile notice
        f.write_text(f.read_text().replace('"""', '"""Edited. ', 1))
    after = _stamps(pkg, FILES)
    assert {k for k in FILES if after[k] != before[k]} == {"cli.py"}


def test_core_edits_change_every_stamp(package_copy):
    """types.py and _numba's structs define the layouts compiled code reads: all depend on them."""
    pkg = package_copy
    before = _stamps(pkg, FILES)
    f = pkg / "_numba" / "structs.py"
    f.write_text(f.read_text() + "\n# edited\n")
    after = _stamps(pkg, FILES)
    assert all(after[k] != before[k] for k in FILES)


def test_an_index_written_against_other_structs_is_never_opened(package_copy):
    """An index from other structs is never read: its file is named after the core's hash.

    Numba unpickles an index before comparing stamps, and the pickle names our struct types.
    """
    pkg = package_copy
    before = cache._core_tag()
    f = pkg / "_numba" / "structs.py"
    f.write_text(f.read_text() + "\n# edited\n")
    cache._DIGESTS.clear()
    cache._CORE_TAG.clear()
    assert cache._core_tag() != before
    g = pkg / "_numba" / "notice.py"
    g.write_text(g.read_text() + "\n# edited\n")
    cache._DIGESTS.clear()
    after = cache._core_tag()
    cache._CORE_TAG.clear()
    assert cache._core_tag() == after  # only the core names the files


def test_index_files_carry_the_core_tag():
    from jointspace.kinematics import kinematics_stage

    impl = kinematics_stage._cache._impl
    assert impl.filename_base.split(".")[1].endswith("-" + cache._core_tag())


def test_multiline_and_lazy_imports_count(package_copy):
    pkg = package_copy
    (pkg / "probe.py").write_text(textwrap.dedent("""\
        def f():
            from jointspace.dynamics import (
                rnea,  # a comment
            )
            import jointspace.spatial
        """))
    deps = cache._direct_deps(pkg / "probe.py")
    assert {pkg / "dynamics" / "rnea.py", pkg / "dynamics" / "__init__.py",
            pkg / "spatial.py"} <= deps


def test_kernels_in_the_package_use_the_dependency_stamp():
    from jointspace.kinematics import kinematics_stage

    impl = kinematics_stage._cache._impl
    assert isinstance(impl.locator, (cache._InTree, cache._UserWide, cache._UserProvided))
    assert impl.locator.get_source_stamp() == cache._stamp(cache._ROOT / "kinematics.py")


def test_benchmark_loops_are_keyed_on_their_file_and_the_package_files_they_import():
    """A benchmark's compiled loop inlines package kernels: a package edit must recompile it."""
    bench = cache._COMPANIONS[0] / "bench_inverse.py"
    assert cache._ours(bench)
    assert cache._ROOT / "inverse" / "core.py" in cache._closure(bench.resolve())
    assert cache._stamp(bench) != cache._stamp(cache._COMPANIONS[0] / "bench_dynamics.py")
    assert not cache._ours(cache._ROOT.parents[1] / "setup_elsewhere.py")


_COUNT = textwrap.dedent("""\
    import numpy as np
    from jointspace._numba import dense
    from jointspace.passive import quat_to_vel
    quat_to_vel(np.zeros(3), np.array([1.0, 0.0, 0.0, 0.0]))
    dense.chol_factor(np.eye(3), 3, 1e-12)
    def misses(f):
        return sum(f.stats.cache_misses.values())
    print(misses(quat_to_vel), misses(dense.chol_factor))
    """)


def test_edits_recompile_only_the_kernels_that_depend_on_them(tmp_path):
    """Counted compilations in fresh interpreters on a copy of the package.

    A docstring edit in cli.py recompiles nothing; an edit of rotation.py recompiles a
    kernel of passive.py (which imports it) and not the dense Cholesky (which does not).
    """
    src = tmp_path / "src"
    shutil.copytree(ROOT / "src" / "jointspace", src / "jointspace",
                    ignore=shutil.ignore_patterns("__pycache__"))
    env = dict(os.environ, PYTHONPATH=str(src))
    env.pop("NUMBA_CACHE_DIR", None)

    notices = []

    def run():
        r = subprocess.run([sys.executable, "-c", _COUNT], capture_output=True, text=True,
                           env=env, cwd=tmp_path, timeout=900)
        assert r.returncode == 0, r.stderr[-3000:]
        notices.append(r.stderr.count("compiling its kernels for first use"))
        return tuple(int(x) for x in r.stdout.split()[-2:])

    assert run() == (1, 1)  # cold: both compiled
    assert run() == (0, 0)  # warm: both loaded
    assert notices == [1, 0]  # the first use says once that it compiles; a warm one is quiet
    cli = src / "jointspace" / "cli.py"
    cli.write_text(cli.read_text().replace('"""', '"""Edited. ', 1))
    assert run() == (0, 0)
    rot = src / "jointspace" / "rotation.py"
    rot.write_text(rot.read_text() + "\n# edited\n")
    assert run() == (1, 0)


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


def test_the_compile_notice_names_what_happens_once(monkeypatch, capsys):
    """The first compilation of a jointspace function in a process writes one line."""
    from numba import njit

    from jointspace._numba import notice

    monkeypatch.setitem(notice._state, "said", False)
    monkeypatch.delenv("JOINTSPACE_COMPILE_NOTICE", raising=False)

    def other(x):
        return x + 1

    def ours(x):
        return x + 2

    ours.__module__ = "jointspace.probe"
    count = notice.compiled()
    assert njit(other)(1) == 2  # not ours: no line
    assert capsys.readouterr().err == ""
    assert njit(ours)(1) == 3
    err = capsys.readouterr().err
    assert err.count("jointspace: compiling its kernels for first use") == 1
    assert "python -m jointspace compile" in err
    assert notice.compiled() >= count + 2 and not notice.compiling()

    def ours2(x):
        return x * 3

    ours2.__module__ = "jointspace.probe"
    assert njit(ours2)(2) == 6
    assert capsys.readouterr().err == ""  # once per process


def test_the_compile_notice_can_be_silenced(monkeypatch, capsys):
    from numba import njit

    from jointspace._numba import notice

    monkeypatch.setitem(notice._state, "said", False)
    monkeypatch.setenv("JOINTSPACE_COMPILE_NOTICE", "0")

    def ours(x):
        return x - 1

    ours.__module__ = "jointspace.probe"
    assert njit(ours)(1) == 0
    assert capsys.readouterr().err == ""


_LIB = textwrap.dedent("""\
    import numpy as np
    from numba import njit

    @njit(cache=True)
    def inner(x):
        return 2.0 * x + 1.0

    @njit(cache=True)
    def outer(a):
        s = 0.0
        for v in a:
            s += inner(v)
        return s

    @njit(cache=True)
    def gram(a):
        return a.T @ a
    """)

_COLD = textwrap.dedent("""\
    import sys
    import numpy as np
    import jointspace  # noqa: F401  (installs the patches)
    import lib

    lib.outer(np.arange(4.0))  # compiles: Numba's compiler starts (arraymath's BLAS check)
    print("numba.np.arraymath" in sys.modules, "scipy.linalg" in sys.modules)
    lib.gram(np.eye(2))  # typing `@` imports scipy.linalg, as Numba does
    """)

# A warm interpreter; with FALLBACK set, as if an object needed a name nothing had registered
_WARM = textwrap.dedent("""\
    import os
    import sys
    import numpy as np
    from numba import njit
    from numba.core import codegen

    import jointspace  # noqa: F401  (installs the patches)
    from jointspace._numba import cache
    import lib

    if os.environ.get("FALLBACK"):
        cache._resolvable = lambda names, engine: False
    objects = {}  # library name -> its object code, as loaded
    deferred = codegen.CPUCodeLibrary.__dict__["_unserialize"].__func__

    def recording(cls, cg, state):
        objects[state[0]] = state[2][0]
        return deferred(cls, cg, state)

    codegen.CPUCodeLibrary._unserialize = classmethod(recording)

    a = np.arange(4.0)
    print(lib.outer(a), lib.gram(np.eye(2)).sum(), "numba.np.arraymath" in sys.modules)
    print(sum(lib.outer.stats.cache_hits.values()), sum(lib.gram.stats.cache_hits.values()))
    libs = [d.overloads[s].library for d in (lib.outer, lib.gram) for s in d.signatures]
    print(all("_jointspace_bitcode" in L.__dict__ for L in libs))

    @njit
    def user(a):  # compiled now: links in the cached libraries' bitcode to inline them
        return lib.outer(a) + lib.inner(3.0)

    print(user(a), "_jointspace_bitcode" in libs[0].__dict__)
    libs += [lib.inner.overloads[s].library for s in lib.inner.signatures]
    names = [cache._elf_symbols(objects[L.name])[0] for L in libs]
    mods = [L._get_module_for_linking() for L in libs]
    parsed = [{g.name for g in (*m.functions, *m.global_variables) if not g.is_declaration}
              for m in mods]
    print(names == parsed)
    """)


def test_cached_kernels_load_without_compiler_or_bitcode_and_link_later(tmp_path):
    """defer_linking_bitcode, defer_compiler_start and defer_blas_check, in fresh interpreters.

    The first process compiles three cached kernels (one calling another, one using BLAS):
    Numba's compiler starts without importing scipy.linalg. The second loads them: the
    results are right, Numba's compiler has not started, no bitcode is parsed, the ELF
    symbol names equal the bitcode's, and a kernel compiled after the load, which links
    the loaded ones in, runs right. The third does the same with every symbol check
    failing: each load then starts the compiler first, as Numba's own load does.
    """
    (tmp_path / "lib.py").write_text(_LIB)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(tmp_path), str(ROOT / "src")]))
    env.pop("NUMBA_CACHE_DIR", None)
    assert cache.defer_compiler_start()  # defer_blas_check: arraymath may be imported here

    def run(code, **extra):
        r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                           env=dict(env, **extra), cwd=tmp_path, timeout=600)
        assert r.returncode == 0, r.stderr[-3000:]
        return r.stdout.split("\n")

    assert run(_COLD)[0] == "True False"
    for fallback in ("", "1"):
        out = run(_WARM, FALLBACK=fallback)
        # Σ (2x + 1), x = 0..3; trace of I by BLAS; whether the compiler started
        assert out[0] == f"16.0 2.0 {bool(fallback)}"
        assert out[1] == "1 1"  # both loaded from the cache
        assert out[2] == "True"  # no bitcode parsed at load
        assert out[3] == "23.0 False"  # 16 + inner(3); linking parsed outer's bitcode
        assert out[4] == "True"  # the ELF symbol names are the bitcode's, library by library


def test_object_code_other_than_elf64_is_left_to_numba():
    """Mach-O, COFF or 32-bit ELF object code: no names read, Numba's own load runs."""
    assert cache._elf_symbols(b"\xcf\xfa\xed\xfe" + bytes(64)) is None  # Mach-O 64
    assert cache._elf_symbols(b"\x7fELF\x01\x01" + bytes(64)) is None  # ELF32
    assert cache._elf_symbols(b"\x64\x86" + bytes(64)) is None  # COFF x86-64
    assert cache._elf_symbols(b"\x7fELF\x02\x01" + bytes(10)) is None  # cut short
