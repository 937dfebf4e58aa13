"""Name the compiled kernels in `perf` profiles: a perf map of Numba's loaded machine code.

    perf record -o /tmp/perf.data python tools/perf_map.py SCRIPT [ARGS...]
    perf report -i /tmp/perf.data --no-children --sort symbol

runs SCRIPT (as `python SCRIPT ARGS` would) and, at its exit, writes /tmp/perf-PID.map,
which perf reads to name addresses in JIT-loaded code: every function of every kernel the
process loaded or compiled, by its mangled Numba name (module, function, then a digest of
the types). Without it perf shows the kernels as bare addresses.

`--dump NAME-PART FILE` also writes the object file (ELF) that holds the first function
whose name contains NAME-PART, so that hot addresses can be read in its disassembly:
offset = sample address − the function's address in the map, then
`objdump -d -j .ltext --start-address=… FILE` from the function's value in
`readelf -sW FILE` plus that offset.

How: kernels loaded from the cache and kernels compiled in the process both pass their
object code through Numba's `JITCodeLibrary._set_compiled_object`, which this tool wraps
(a Numba internal, so a development tool only) to keep a reference; the functions' names
and sizes come from the object's ELF symbol table, their addresses from the JIT engine.
"""

import atexit
import gc
import os
import runpy
import struct
import sys

from numba.core.codegen import JITCodeLibrary
from numba.core.registry import CPUDispatcher

_SECTION = struct.Struct("<IIQQQQIIQQ")  # Elf64_Shdr
_SYMBOL = struct.Struct("<IBBHQQ")  # Elf64_Sym
_SHT_SYMTAB = 2
_STT_FUNC = 2


def functions(obj):
    """(name, size) of each function an ELF64 little-endian object defines; [] if not ELF."""
    if obj[:6] != b"\x7fELF\x02\x01":
        return []
    (shoff,) = struct.unpack_from("<Q", obj, 0x28)
    shentsize, shnum = struct.unpack_from("<HH", obj, 0x3A)
    sections = [_SECTION.unpack_from(obj, shoff + i * shentsize) for i in range(shnum)]
    out = []
    for _, kind, _, _, offset, size, link, _, _, _ in sections:
        if kind != _SHT_SYMTAB:
            continue
        names = obj[sections[link][4]:sections[link][4] + sections[link][5]]
        for name, info, _, shndx, _, ssize in _SYMBOL.iter_unpack(obj[offset:offset + size]):
            if name and shndx and (info & 0xF) == _STT_FUNC and ssize:
                out.append((names[name:names.index(b"\0", name)].decode(), ssize))
    return out


def install():
    """Keep each library's object code from now on (call before any kernel loads)."""
    original = JITCodeLibrary._set_compiled_object

    def keeping(self, value):
        self.__dict__["_perf_map_object"] = value
        return original(self, value)

    JITCodeLibrary._set_compiled_object = keeping


def _objects():
    """(library, object code) of every compiled overload in the process."""
    for o in gc.get_objects():
        if isinstance(o, CPUDispatcher):
            for cres in list(o.overloads.values()):
                obj = cres.library.__dict__.get("_perf_map_object")
                if obj is not None:
                    yield cres.library, obj


def write(path=None):
    """Write the perf map (default /tmp/perf-PID.map); returns the number of functions."""
    seen = {}
    for library, obj in _objects():
        engine = library._codegen._engine
        for name, size in functions(obj):
            if name not in seen:
                address = engine.get_function_address(name)
                if address:
                    seen[name] = (address, size)
    with open(path or f"/tmp/perf-{os.getpid()}.map", "w") as f:
        for name, (address, size) in seen.items():
            f.write(f"{address:x} {size:x} {name}\n")
    return len(seen)


def dump(part, path):
    """Write the object file holding the first function whose name contains part."""
    for _, obj in _objects():
        for name, _ in functions(obj):
            if part in name:
                with open(path, "wb") as f:
                    f.write(obj)
                return name
    return None


def main(argv):
    """Run the script in argv with the map written at exit."""
    dumps = []
    while argv[:1] == ["--dump"]:
        dumps.append((argv[1], argv[2]))
        argv = argv[3:]
    if not argv:
        sys.exit(__doc__)
    install()

    def at_exit():
        n = write()
        print(f"perf_map: {n} functions in /tmp/perf-{os.getpid()}.map", file=sys.stderr)
        for part, path in dumps:
            print(f"perf_map: {dump(part, path) or 'nothing'} -> {path}", file=sys.stderr)

    atexit.register(at_exit)
    sys.argv = argv
    sys.path.insert(0, os.path.dirname(os.path.abspath(argv[0])))
    runpy.run_path(argv[0], run_name="__main__")


if __name__ == "__main__":
    main(sys.argv[1:])
