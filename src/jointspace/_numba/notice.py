"""Say so when kernels must be compiled: a first call is never a silent multi-minute pause.

A listener on Numba's "numba:compile" event sees every compilation in the process (a load
from the cache is not one). The first compilation of a jointspace function writes one line
to stderr: what is happening, how long it usually takes, and how to do it ahead of time.
Set JOINTSPACE_COMPILE_NOTICE=0 to silence it. `compiled()` counts the functions compiled
so far in this process, for progress displays (`jointspace compile`, the CLI's ticker).
"""

import os
import sys
import threading
import time

from numba.core import event

# measured from an empty cache with the package's prebuilt store not fitting (another
# Python, Numba or platform): the README demo compiled 564 functions in 9 min 40 s on a
# 2-core machine (docs/speed.md, "Start-up"); `jointspace compile` takes about 14 minutes
# there, spread over the cores
USUAL = "several minutes on 2 cores, once"

_state = {"said": False, "count": 0, "depth": 0, "t0": None}
_lock = threading.Lock()


def _ours(ev):
    disp = ev.data.get("dispatcher") if isinstance(ev.data, dict) else None
    mod = getattr(getattr(disp, "py_func", None), "__module__", "") or ""
    return mod == "jointspace" or mod.startswith("jointspace.")


class _Listener(event.Listener):
    def on_start(self, ev):
        with _lock:
            _state["depth"] += 1
            if _state["t0"] is None:
                _state["t0"] = time.perf_counter()
        if not _state["said"] and _ours(ev):
            _state["said"] = True
            if os.environ.get("JOINTSPACE_COMPILE_NOTICE", "1") != "0":
                sys.stderr.write(
                    "jointspace: compiling its kernels for first use "
                    f"({USUAL}; later runs load them from Numba's cache). "
                    "`python -m jointspace compile` does it ahead of time; "
                    "JOINTSPACE_COMPILE_NOTICE=0 silences this line.\n")
                sys.stderr.flush()

    def on_end(self, ev):
        with _lock:
            _state["depth"] -= 1
            _state["count"] += 1


def compiled():
    """The number of functions compiled in this process so far (not loaded from the cache)."""
    return _state["count"]


def compiling():
    """Whether a compilation is running now (in any thread of this process)."""
    return _state["depth"] > 0


_listener = _Listener()


def install():
    """Register the listener (idempotent)."""
    if _listener not in event._registered["numba:compile"]:
        event.register("numba:compile", _listener)
