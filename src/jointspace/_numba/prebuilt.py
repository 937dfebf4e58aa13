"""Machine code that ships with the package: the README's first run without compiling.

Numba compiles each kernel on its first use, minutes for the README's demo on a 2-core
machine. The package carries, in `_prebuilt/`, the cache entries of the kernels that
demo runs and of every public kernel `jointspace compile` compiles, compiled for a generic
x86-64 CPU (NUMBA_CPU_NAME=generic: no instruction a 64-bit x86 processor may lack) by
`tools/prebuild.py`. When a kernel misses in the user's
own cache, the store is looked up before Numba compiles it:

- An entry is found only where every part of Numba's cache key fits this process: the
  store's index file is named after the kernel's qualified name, line, the core's hash and
  the Python version (`py311`); its stamp is the kernel's dependency stamp (the sources as
  installed and the Numba version, `_numba/cache.py`); its key holds the signature, the
  bytecode's hash and the target, whose CPU part here is the store's generic one (the
  host's triple must equal the store's). An entry that does not fit is not found, and
  Numba compiles the kernel as usual.
- Nothing is written: the store is read where it is installed, and the user's cache keeps
  only what this machine compiled, which is looked up first. `jointspace compile`
  (`precompile.py`) skips the store, so that a machine that runs it gets code tuned to its
  own CPU.
- JOINTSPACE_PREBUILT=0 turns the store off (as `tools/prebuild.py` does while it builds).

The store is checked against the sources by tests/test_prebuilt.py: after a change to a
kernel the demo runs, `python tools/prebuild.py` writes it anew.
"""

import json
import os
import pathlib
import pickle
import zlib

from numba.core import caching

STORE = pathlib.Path(__file__).resolve().parents[1] / "_prebuilt"
MANIFEST = "manifest.json"

_STATE = {}  # "target": the store's target tuple, or None; "files": names in the store


def enabled():
    """Whether this process looks kernels up in the store."""
    return os.environ.get("JOINTSPACE_PREBUILT", "1") != "0"


def _target():
    """The store's (triple, cpu name, cpu features), or None without a usable store."""
    if "target" not in _STATE:
        try:
            with open(STORE / MANIFEST, encoding="utf-8") as fh:
                info = json.load(fh)
            _STATE["target"] = tuple(info["target"])
            _STATE["files"] = frozenset(info["files"])
        except (OSError, ValueError, KeyError, TypeError):
            _STATE["target"] = None
    return _STATE["target"]


def _relative_folder(py_file, root):
    """The folder of a package source file, relative to the package; None if outside it."""
    try:
        return pathlib.Path(py_file).resolve().parent.relative_to(root).as_posix()
    except ValueError:
        return None


def load(cache, sig, target_context, root):
    """The store's compiled overload of `cache`'s kernel for `sig`, or None.

    Args:
        cache: the Numba `Cache` of a kernel whose lookup in the user's cache missed.
        sig: the argument types.
        target_context: the CPU target that will run it.
        root: the package folder the kernel's source lies in.
    """
    if not enabled():
        return None
    target = _target()
    if target is None:
        return None
    cf = cache._cache_file
    folder = _relative_folder(cache._impl.locator._py_file, root)
    if folder is None:
        return None
    name = (pathlib.PurePosixPath(folder) / cf._index_name).as_posix()
    if name not in _STATE["files"]:
        return None
    store = _StoreFile(str(STORE / folder), cf._index_name[:-len(".nbi")], cf._source_stamp)
    own = cache._index_key(sig, target_context.codegen())
    if own[1][0] != target[0]:
        return None  # another architecture or OS: the store's code cannot run here
    data = store.load((own[0], target, own[2]))
    if data is None:
        return None
    return cache._impl.rebuild(target_context, data)


class _StoreFile(caching.IndexDataCacheFile):
    """Numba's index and data files, the data files compressed (`tools/prebuild.py`).

    Compressed, the store is less than half its size (33.3 → 15.4 MB, the largest entry
    5.2 → 2.5 MB); decompressing what the README demo loads takes tens of milliseconds.
    """

    def _load_data(self, name):
        with open(self._data_path(name), "rb") as fh:
            return pickle.loads(zlib.decompress(fh.read()))


def stale(stamp_now):
    """The store's index files that do not fit today's sources (names relative to the store).

    An index fits when it reads as Numba's and its stamp is `stamp_now(source file)`, the
    dependency stamp of its kernel's source now (`cache.prebuilt_stale` passes it). An
    empty list: the store fits.
    """
    try:
        with open(STORE / MANIFEST, encoding="utf-8") as fh:
            files = json.load(fh)["files"]
    except (OSError, ValueError, KeyError):
        return [f"{MANIFEST} (missing or unreadable)"]
    out = []
    for name, source in sorted(files.items()):
        source = STORE.parent / source
        try:
            with open(STORE / name, "rb") as fh:
                pickle.load(fh)  # the Numba version that wrote it
                stamp, _ = pickle.loads(fh.read())
        except (OSError, pickle.UnpicklingError, EOFError, ValueError):
            out.append(name)
            continue
        if not source.is_file() or stamp != stamp_now(str(source)):
            out.append(name)
    return out
