"""Numba cache invalidation for the whole package.

Numba keys a cached function on its own source file's timestamp only. Compiled kernels inline
helpers and read constants from other files (rotation.py, types.py, …), so a change there
would leave stale machine code in the cache. This module registers cache locators for
jointspace's files whose source stamp is a hash of every .py file in the package (and the
Numba version): any change anywhere recompiles every kernel once, and nothing stale is ever
loaded. Compiled loops in the checkout's benchmarks, examples and tests inline the package's
kernels too, so theirs are keyed on the package stamp and their own file. Caches live where
Numba would put them (`__pycache__` beside the sources, or the user-wide cache directory
when the installation is read-only).
"""

import hashlib
import pathlib

import numba
from numba.core import caching

_ROOT = pathlib.Path(__file__).resolve().parents[1]  # the package, src/jointspace


def _package_stamp(root=_ROOT):
    """Hash of every .py file under root (names and contents) and of the Numba version."""
    h = hashlib.sha1(numba.__version__.encode())
    for p in sorted(root.rglob("*.py")):
        h.update(p.relative_to(root).as_posix().encode())
        h.update(p.read_bytes())
    return h.hexdigest()


_STAMP = _package_stamp()


# the checkout's own scripts whose compiled loops call the package's kernels (absent from an
# installed package): their caches hold the package's machine code inlined, so they are
# keyed on the package too, else a benchmark would time the kernels of an older build
_COMPANIONS = tuple(_ROOT.parents[1] / d for d in ("benchmarks", "examples", "tests"))


def _ours(py_file):
    try:
        path = pathlib.Path(py_file).resolve()
        return path.is_relative_to(_ROOT) or any(path.is_relative_to(c) for c in _COMPANIONS)
    except (OSError, ValueError):
        return False


_SCRIPT_STAMPS = {}


def _stamp(py_file):
    """The package stamp; for a companion script, a hash of it and of the script."""
    path = pathlib.Path(py_file).resolve()
    if path.is_relative_to(_ROOT):
        return _STAMP
    key = (_STAMP, path)
    if key not in _SCRIPT_STAMPS:
        _SCRIPT_STAMPS[key] = hashlib.sha1(_STAMP.encode() + path.read_bytes()).hexdigest()
    return _SCRIPT_STAMPS[key]


class _InTree(caching.InTreeCacheLocator):
    def get_source_stamp(self):
        return _stamp(self._py_file)

    @classmethod
    def from_function(cls, py_func, py_file):
        return super().from_function(py_func, py_file) if _ours(py_file) else None


class _UserWide(caching.UserWideCacheLocator):
    def get_source_stamp(self):
        return _stamp(self._py_file)

    @classmethod
    def from_function(cls, py_func, py_file):
        return super().from_function(py_func, py_file) if _ours(py_file) else None


class _UserProvided(caching.UserProvidedCacheLocator):
    def get_source_stamp(self):
        return _stamp(self._py_file)

    @classmethod
    def from_function(cls, py_func, py_file):
        return super().from_function(py_func, py_file) if _ours(py_file) else None


def install():
    """Put the package-wide locators ahead of Numba's own (idempotent).

    Order as Numba's: NUMBA_CACHE_DIR if set, else beside the sources, else user-wide.
    """
    locs = caching.CacheImpl._locator_classes
    for cls in (_UserWide, _InTree, _UserProvided):
        if cls not in locs:
            locs.insert(0, cls)
