"""Inline reference counts (`_numba/refcount.py`): the machine code, and memory kept balanced.

The patch changes only the module that becomes machine code: there NRT_incref/NRT_decref
must not be called any more (their null test and atomic update are inline), and every
array must still be freed exactly once. A child process compiles kernels that take and
drop references in loops (views handed to a non-inlined callee, arrays allocated and
released per iteration, an array returned to Python) with Numba's allocation statistics
on, and reports the relocations of their object code and the allocation counts.
"""

import json
import os
import subprocess
import sys

CHILD = r"""
import json, struct
import numpy as np
import jointspace  # installs the patch
from numba import njit
from numba.core.runtime import rtsys
from jointspace._numba import refcount

@njit
def _head(a):
    return a[0] * 2.0

@njit
def views(n):
    own = np.zeros(10)
    s = 0.0
    for k in range(n):
        own[k % 10] += 1.0
        v = own[: k % 10 + 1]
        s += _head(v) + v.sum()
    return s

@njit
def allocations(n):
    t = 0.0
    for k in range(n):
        a = np.empty(5)
        a[:] = k
        t += a.sum()
    return t

@njit
def returned(n):
    return np.arange(n) * 2.0

def relocated(obj):
    # names of the symbols the object's RELA sections relocate against (ELF64 LE)
    shoff, = struct.unpack_from("<Q", obj, 0x28)
    shentsize, shnum = struct.unpack_from("<HH", obj, 0x3A)
    secs = [struct.unpack_from("<IIQQQQIIQQ", obj, shoff + i * shentsize) for i in range(shnum)]
    names = set()
    for s in secs:
        if s[1] != 4:  # SHT_RELA
            continue
        symtab = secs[s[6]]
        strtab = secs[symtab[6]]
        for off in range(s[4], s[4] + s[5], 24):
            info, = struct.unpack_from("<Q", obj, off + 8)
            st_name, = struct.unpack_from("<I", obj, symtab[4] + (info >> 32) * 24)
            end = obj.index(b"\0", strtab[4] + st_name)
            names.add(obj[strtab[4] + st_name:end].decode())
    return sorted(names)

out = [views(1000), allocations(1000), float(returned(7).sum())]  # compiled (and NRT up)
before = rtsys.get_allocation_stats()
for _ in range(51):
    views(1000)
    allocations(1000)
    returned(100)
after = rtsys.get_allocation_stats()
relocs = {f.__name__: relocated(f.overloads[f.signatures[0]].library._get_compiled_object())
          for f in (views, allocations, returned)}
print(json.dumps({"installed": refcount.install(False), "out": out, "relocs": relocs,
                  "alloc": after.alloc - before.alloc, "free": after.free - before.free,
                  "mi_alloc": after.mi_alloc - before.mi_alloc,
                  "mi_free": after.mi_free - before.mi_free}))
"""


def test_kernels_count_references_inline_and_free_every_array():
    env = dict(os.environ, NUMBA_NRT_STATS="1")
    run = subprocess.run([sys.executable, "-c", CHILD], env=env, capture_output=True,
                         text=True, timeout=600)
    assert run.returncode == 0, run.stderr
    got = json.loads(run.stdout.strip().splitlines()[-1])
    assert got["installed"]
    assert got["out"] == [378750.0, 2497500.0, 42.0]
    for name, relocs in got["relocs"].items():
        assert "NRT_incref" not in relocs and "NRT_decref" not in relocs, (name, relocs)
    # views(1000) allocates an array a call, allocations(1000) 1,000, returned its result
    # (freed by Python) and a temporary: each freed once
    assert got["alloc"] == got["free"] == got["mi_alloc"] == got["mi_free"] >= 51 * 1002
