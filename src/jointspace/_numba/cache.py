"""Numba cache invalidation keyed on what each kernel depends on.

Numba keys a cached function on its own source file only. Compiled kernels inline helpers
and read constants from other files (rotation.py, types.py, …), so a change there would
leave stale machine code in the cache. The cache locators registered here give every file
of the package a source stamp that is a hash of the Numba version, of the file itself and
of every package file it imports, transitively (imports inside functions included), and of
the core that every kernel's types come from (types.py, and _numba's structs and checked
arrays, which define the layout compiled code reads). Editing cli.py then recompiles
nothing, and editing rotation.py recompiles the kernels of the modules that import it,
directly or not, and nothing else. The import closure is read from the sources with a
regular expression (no import, no AST), once per file per process.

Compiled loops in the checkout's benchmarks, examples and tests inline the package's
kernels too: theirs are keyed the same way, on their own file and the package files they
import. Caches live where Numba would put them (`__pycache__` beside the sources, or the
user-wide cache directory when the installation is read-only). Every entry of ours that
Numba loads or saves is noted for `ship.bundle`, which carries them to other processes.
"""

import hashlib
import pathlib
import re

import numba
from numba.core import caching

from jointspace._numba import ship

_ROOT = pathlib.Path(__file__).resolve().parents[1]  # the package, src/jointspace

# files every kernel depends on: the field tables and enums, and the crossing (structs,
# checked arrays) whose generated code reads Model and Data at fixed offsets. The rest of
# _numba/ (this file, the compile notice, dense algebra) is reached through imports, or
# shapes no machine code.
_CORE_FILES = ("types.py", "_numba/entry.py", "_numba/structs.py")
_CORE = tuple(_ROOT / f for f in _CORE_FILES)

# `from jointspace.a.b import x, y` (also in parentheses over several lines) and
# `import jointspace.a.b`, anywhere in a file
_FROM = re.compile(r"^\s*from\s+(jointspace(?:\.\w+)*)\s+import\s+(\([^)]*\)|[^\n]*)", re.M)
_IMPORT = re.compile(r"^\s*import\s+(jointspace(?:\.\w+)*)", re.M)

_FILE_DEPS = {}  # file -> the package files it imports directly
_CLOSURES = {}  # file -> its stamp


_MODULE_FILES = {}  # (package folder, 'jointspace.a.b') -> its file, or None


def _module_file(dotted):
    """The file of a package module or subpackage ('jointspace.a.b'), or None."""
    key = (_ROOT, dotted)  # the folder too: tests point _ROOT at a copy of the package
    if key not in _MODULE_FILES:
        _MODULE_FILES[key] = _find_module_file(dotted)
    return _MODULE_FILES[key]


def _find_module_file(dotted):
    parts = dotted.split(".")[1:]
    if not parts:
        return None  # the package's own __init__ only re-exports: no kernel reads it
    rel = pathlib.Path(*parts)
    for cand in (_ROOT / rel.with_suffix(".py"), _ROOT / rel / "__init__.py"):
        if cand.is_file():
            return cand
    return None


def _direct_deps(path):
    """Package files that `path` imports (a module, or a subpackage's __init__)."""
    if path in _FILE_DEPS:
        return _FILE_DEPS[path]
    text = path.read_text(encoding="utf-8")
    modules = set(_IMPORT.findall(text))
    for mod, names in _FROM.findall(text):
        modules.add(mod)
        for name in re.findall(r"\w+", names.split("#")[0]):
            modules.add(f"{mod}.{name}")  # `from pkg import submodule`
    deps = {f for f in map(_module_file, modules) if f is not None and f != path}
    _FILE_DEPS[path] = deps
    return deps


def _closure(path):
    """Every package file `path` depends on, itself and the core included."""
    seen = set(_CORE)
    todo = [path]
    while todo:
        p = todo.pop()
        if p in seen and p != path:
            continue
        seen.add(p)
        todo.extend(d for d in _direct_deps(p) if d not in seen)
    return seen


_DIGESTS = {}  # file -> sha1 of its name and contents: each file is read once per process


def _digest(p):
    if p not in _DIGESTS:
        name = p.relative_to(_ROOT).as_posix() if p.is_relative_to(_ROOT) else p.name
        _DIGESTS[p] = hashlib.sha1(name.encode() + b"\0" + p.read_bytes()).digest()
    return _DIGESTS[p]


def _stamp(py_file):
    """Hash of the Numba version and of the contents of every file `py_file` depends on."""
    if py_file in _CLOSURES:  # Numba asks once per kernel, ~500 times for ~60 files
        return _CLOSURES[py_file]
    path = pathlib.Path(py_file).resolve()
    if path not in _CLOSURES:
        h = hashlib.sha1(numba.__version__.encode())
        for p in sorted(_closure(path)):
            h.update(_digest(p))
        _CLOSURES[path] = h.hexdigest()
    _CLOSURES[py_file] = _CLOSURES[path]
    return _CLOSURES[path]


# the checkout's own scripts whose compiled loops call the package's kernels (absent from an
# installed package): their caches hold the package's machine code inlined, so they are
# keyed on the package files they import too, else a benchmark would time an older build
_COMPANIONS = tuple(_ROOT.parents[1] / d for d in ("benchmarks", "examples", "tests"))


_OURS = {}  # file name as Numba gives it -> whether its kernels are keyed by us


def _ours(py_file):
    if py_file not in _OURS:
        try:
            path = pathlib.Path(py_file).resolve()
            _OURS[py_file] = (path.is_relative_to(_ROOT)
                              or any(path.is_relative_to(c) for c in _COMPANIONS))
        except (OSError, ValueError):
            _OURS[py_file] = False
    return _OURS[py_file]


_CORE_TAG = []  # the core's hash, once per process


def _core_tag():
    if not _CORE_TAG:
        h = hashlib.sha1(numba.__version__.encode())
        for p in _CORE:
            h.update(_digest(p))
        _CORE_TAG.append(h.hexdigest()[:10])
    return _CORE_TAG[0]


_WRITABLE = set()  # cache folders this process has found writable


class _Keyed:
    """The dependency stamp, and index files named after the core they were built against.

    Numba unpickles an index (whose signatures name our struct types) before it compares
    stamps: an index written against another version of the structs could fail to unpickle
    and raise from the user's call. Naming the index after the core's hash means such an
    index is never opened.

    Numba checks that a cache folder is writable by creating a file in it, for every
    kernel as it is decorated (~500 at import, 20-30 per folder): the folder is checked
    once per process instead.
    """

    def ensure_cache_path(self):
        path = self.get_cache_path()
        if path not in _WRITABLE:
            super().ensure_cache_path()
            _WRITABLE.add(path)

    def get_source_stamp(self):
        return _stamp(self._py_file)

    def get_disambiguator(self):
        return f"{super().get_disambiguator()}-{_core_tag()}"

    @classmethod
    def from_function(cls, py_func, py_file):
        return super().from_function(py_func, py_file) if _ours(py_file) else None


class _InTree(_Keyed, caching.InTreeCacheLocator):
    pass


class _UserWide(_Keyed, caching.UserWideCacheLocator):
    pass


class _UserProvided(_Keyed, caching.UserProvidedCacheLocator):
    pass


def install():
    """Put the package-wide locators ahead of Numba's own (idempotent).

    Order as Numba's: NUMBA_CACHE_DIR if set, else beside the sources, else user-wide.
    Every package file is hashed now, as the package is imported: a file edited while the
    process runs must not stamp machine code compiled from the version it imported.
    """
    for p in _ROOT.rglob("*.py"):  # the sources as imported now, not as edited later
        _digest(p)
    locs = caching.CacheImpl._locator_classes
    for cls in (_UserWide, _InTree, _UserProvided):
        if cls not in locs:
            locs.insert(0, cls)
    if not getattr(caching.Cache.load_overload, "_jointspace", False):
        caching.Cache.load_overload = _recorded(caching.Cache.load_overload, hit=True)
        caching.Cache.save_overload = _recorded(caching.Cache.save_overload, hit=False)


def _recorded(method, hit):
    """Numba's cache load or save, noting our kernels' entries for `ship.bundle`."""
    def wrapper(self, *args):
        out = method(self, *args)
        if (out is not None or not hit) and isinstance(self._impl.locator, _Keyed):
            ship.record(self)
        return out

    wrapper._jointspace = True
    return wrapper
