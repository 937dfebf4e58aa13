"""Carry compiled kernels to another process or machine: the cache entries a process used.

A Ray worker on a node whose Numba cache is cold would compile for minutes before its first
rollout. `bundle()` collects, from Numba's on-disk cache, the files (index and machine code)
of every jointspace kernel this process has loaded from the cache or compiled and saved;
`bundle_of(code)` runs `code` in a fresh interpreter and bundles what it used: exactly the
kernels that code needs, whatever the calling process has loaded. `install(bundle)` in the
other process writes each file where that process's Numba looks
for the kernel's cache (beside the installed package, or under NUMBA_CACHE_DIR), keeping
any file already there. The receiving Numba still checks every entry as it loads it (the
dependency stamp of the sources, Numba's version, the CPU the code was made for): an entry
that does not fit that machine or that version of the package is ignored there and the
kernel compiled, never run.
"""

import io
import os
import pathlib
import pickle
import subprocess
import sys
import tempfile
import threading

from numba.core import caching

_USED = {}  # (module, qualname) -> the Numba Cache of a kernel loaded or saved here
_LOCK = threading.Lock()


def record(cache):
    """Note that `cache`'s kernel was loaded from or saved to the disk in this process."""
    f = cache._py_func
    with _LOCK:
        _USED[(f.__module__, f.__qualname__)] = cache


def bundle():
    """The cache files of the kernels this process used: {(module, qualname): {name: bytes}}.

    A kernel whose files have gone from the disk since (a cleared cache) is left out.
    """
    with _LOCK:
        used = list(_USED.items())
    out = {}
    for key, cache in used:
        cf = cache._cache_file
        base = cf._index_name[:-len(".nbi")]
        try:
            with open(os.path.join(cf._cache_path, cf._index_name), "rb") as fh:
                files = {cf._index_name: fh.read()}
            wanted = _data_files(files[cf._index_name])
            for name in os.listdir(cf._cache_path):
                if (name.startswith(base + ".") and name.endswith(".nbc")
                        and (wanted is None or name in wanted)):
                    with open(os.path.join(cf._cache_path, name), "rb") as fh:
                        files[name] = fh.read()
        except OSError:
            continue
        out[key] = files
    return out


def _data_files(index):
    """The data files a Numba index file's entries name; None if it does not read as one.

    A folder also holds data files of entries an index no longer lists (Numba renumbers
    rather than deletes them when sources change): those are not carried.
    """
    try:
        fh = io.BytesIO(index)
        pickle.load(fh)  # the Numba version that wrote it
        _, overloads = pickle.loads(fh.read())
        return set(overloads.values())
    except Exception:  # noqa: BLE001 (any unreadable index: carry every data file, as before)
        return None


def _py_func(module, qualname):
    """The Python function of a kernel named by module and qualname, or None."""
    obj = sys.modules.get(module)  # `import jointspace` has imported every kernel module
    try:
        for part in qualname.split("."):
            obj = getattr(obj, part)
    except AttributeError:
        return None  # another version of the package: nothing to install for it
    func = getattr(obj, "py_func", None) or getattr(obj, "__wrapped__", None)
    return func if callable(func) else None


def install(files_by_kernel):
    """Write a `bundle()` into this process's Numba cache; the number of files written.

    Call it after `import jointspace` (which imports every module that holds kernels).

    Each kernel's files go where this process's Numba looks for that kernel's cache. A file
    already there is kept (it may hold entries of this machine's own); a kernel this
    version of the package does not have is skipped.
    """
    from jointspace._numba import structs  # noqa: F401 (imported with the first Model)

    written = 0
    for (module, qualname), files in files_by_kernel.items():
        func = _py_func(module, qualname)
        if func is None:
            continue
        try:
            path = caching.FunctionCache(func).cache_path
            os.makedirs(path, exist_ok=True)
        except (OSError, RuntimeError):
            continue  # no writable cache location for it: Numba compiles it as usual
        for name, data in files.items():
            target = os.path.join(path, os.path.basename(name))
            if os.path.exists(target):
                continue
            fd, tmp = tempfile.mkstemp(dir=path, prefix=".ship-")
            with os.fdopen(fd, "wb") as fh:
                fh.write(data)
            os.replace(tmp, target)  # whole or absent: a reader never sees half a file
            written += 1
    return written


_CHILD = """
import pickle, sys
import jointspace
from jointspace._numba import ship
exec(sys.argv[1])
with open(sys.argv[2], "wb") as fh:
    pickle.dump(ship.bundle(), fh, protocol=5)
"""


def bundle_of(code):
    """`bundle()` of a fresh interpreter that imports jointspace and runs `code`.

    The interpreter imports the package this process imported, with this environment (the
    same cache locations): it loads the kernels `code` needs from the cache, or compiles and
    saves them (once: minutes on a cold cache).

    Raises:
        RuntimeError: the interpreter failed; its error output is in the message.
    """
    root = str(pathlib.Path(__file__).resolve().parents[2])  # the folder holding jointspace
    env = dict(os.environ, JOINTSPACE_COMPILE_NOTICE="0")
    env["PYTHONPATH"] = os.pathsep.join([root] + [p for p in (env.get("PYTHONPATH"),) if p])
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "bundle.pickle")
        r = subprocess.run([sys.executable, "-c", _CHILD, code, out], env=env,
                           capture_output=True, text=True)
        if r.returncode != 0:
            raise RuntimeError("jointspace: could not collect the compiled kernels to ship "
                               f"(a fresh interpreter failed):\n{r.stderr[-2000:]}")
        with open(out, "rb") as fh:
            return pickle.load(fh)
