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

Compiled loops in the checkout's benchmarks, examples, tests and tools inline the package's
kernels too: theirs are keyed the same way, on their own file and the package files they
import. Caches live where Numba would put them (`__pycache__` beside the sources, or the
user-wide cache directory when the installation is read-only). A kernel of the package
that misses there is looked up in the machine code the package ships (`prebuilt.py`)
before Numba compiles it. Every entry of ours that Numba loads or saves is noted for
`ship.bundle`, which carries them to other processes.

Loading a warm cache skips work of Numba's that running cached kernels does not need
(`defer_linking_bitcode`, `defer_compiler_start`, `defer_blas_check`): patches of Numba
internals, installed only for the Numba versions they were written against; Numba's own
code runs otherwise.
"""

import hashlib
import importlib.machinery
import importlib.util
import pathlib
import re
import struct
import sys
import threading

import llvmlite.binding as ll
import numba
from numba.core import caching, codegen, cpu
from numba.core.runtime import rtsys

from jointspace._numba import prebuilt, refcount, ship

_ROOT = pathlib.Path(__file__).resolve().parents[1]  # the package, src/jointspace

# files every kernel depends on: the field tables and enums, the crossing (structs,
# checked arrays) whose generated code reads Model and Data at fixed offsets, and the
# inline reference counts that shape every kernel's machine code (refcount). The rest of
# _numba/ (this file, the compile notice, dense algebra) is reached through imports, or
# shapes no machine code.
_CORE_FILES = ("types.py", "_numba/entry.py", "_numba/structs.py", "_numba/refcount.py")
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
_COMPANIONS = tuple(_ROOT.parents[1] / d
                    for d in ("benchmarks", "examples", "tests", "tools"))


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
    """Put the package-wide locators ahead of Numba's own, and the warm-load patches (idempotent).

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
    defer_linking_bitcode()
    refcount.install(numba.__version__.startswith(_PATCHED_NUMBA))
    defer_compiler_start()  # replaces Cache.load_overload: before _recorded wraps it
    defer_blas_check()
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


# ---------------------------------------------------------------- loading cached machine code

# Numba versions whose CPUCodeLibrary._unserialize, _get_module_for_linking,
# _finalize_final_module (`refcount`),
# JitEngine.is_symbol_defined / _load_defined_symbols, Cache.load_overload and
# numba.np.arraymath's BLAS check are the code the patches below were written against
_PATCHED_NUMBA = ("0.68.",)
_NUMBA_CODE = {}  # Numba's own methods, as found before the patch


def defer_linking_bitcode():
    """Load cached kernels without parsing the LLVM bitcode kept for linking (idempotent).

    A Numba cache entry holds a kernel's object code and, beside it, its LLVM bitcode, which
    only a later compilation needs: one that calls the kernel links that bitcode in, to
    inline it. Numba parses the bitcode on every load all the same, and walks the parsed
    module for the names it defines (so that `is_symbol_defined` lets the execution engine
    be asked for them): 0.75-0.9 s of the README demo's 21 loads, on the 2-core machine.

    What is deferred, and why each use still sees what Numba's own code gives it:

    - the bitcode is parsed when the library is first linked into another one, or
      serialized (both go through `_get_module_for_linking`), instead of at load;
    - the defined names are read from the object code's ELF symbol table (named symbols
      in a section, 5 ms for the same 21 entries): the object is compiled from the very
      module the bitcode holds, and the names are the same ones (checked, kernel by kernel,
      in tests/test_cache.py);
    - a name the engine does not know (a miss, which Numba answers from the names of every
      bitcode it has parsed) first parses the bitcode of every library loaded this way,
      so a miss is answered from exactly Numba's set.

    Object code that is not 64-bit little-endian ELF (macOS, Windows) is loaded by
    Numba's own code, as is everything under a Numba version not in
    `_PATCHED_NUMBA`.

    Returns:
        Whether the patch is installed.
    """
    lib, engine = codegen.CPUCodeLibrary, codegen.JitEngine
    if "unserialize" not in _NUMBA_CODE:
        if not numba.__version__.startswith(_PATCHED_NUMBA):
            return False
        _NUMBA_CODE.update(unserialize=lib.__dict__["_unserialize"],
                           module_for_linking=lib._get_module_for_linking,
                           is_symbol_defined=engine.is_symbol_defined)
        lib._unserialize = classmethod(_unserialize_deferred)
        lib._get_module_for_linking = _module_for_linking
        engine.is_symbol_defined = _is_symbol_defined
    return True


def _unserialize_deferred(cls, codegen, state):
    """Numba's CPUCodeLibrary._unserialize for object code, the bitcode left unparsed.

    Raises:
        _CompilerNeeded: loading without Numba's compiler started (`defer_compiler_start`),
            and the object code is not ELF, or needs a name nothing has registered yet.
    """
    name, kind, data = state
    symbols = _elf_symbols(data[0]) if kind == "object" else None
    unstarted = getattr(_LOADING, "unstarted", False)
    if symbols is None:
        if unstarted:
            raise _CompilerNeeded(name)
        return _NUMBA_CODE["unserialize"].__func__(cls, codegen, state)
    names, needed = symbols
    if unstarted and not _resolvable(needed, codegen._engine):
        raise _CompilerNeeded(name)
    object_code, shared_bitcode = data
    self = codegen.create_library(name)
    assert isinstance(self, cls)
    self.enable_object_caching()
    self._set_compiled_object(object_code)
    self._jointspace_bitcode = shared_bitcode
    self._finalize_final_module()
    engine = self._codegen._engine
    engine._defined_symbols |= names
    engine.__dict__.setdefault("_jointspace_unparsed", []).append(shared_bitcode)
    return self


def _module_for_linking(self):
    """Numba's _get_module_for_linking, parsing a deferred bitcode first."""
    bitcode = self.__dict__.pop("_jointspace_bitcode", None)
    if bitcode is not None:
        self._shared_module = ll.parse_bitcode(bitcode)
    return _NUMBA_CODE["module_for_linking"](self)


def _is_symbol_defined(self, name):
    """Numba's JitEngine.is_symbol_defined; a miss first reads the deferred bitcodes' names."""
    if name in self._defined_symbols:
        return True
    unparsed = self.__dict__.pop("_jointspace_unparsed", None)
    for bitcode in unparsed or ():
        self._load_defined_symbols(ll.parse_bitcode(bitcode))
    return _NUMBA_CODE["is_symbol_defined"](self, name)


def defer_compiler_start():
    """Load cached kernels before Numba's compiler starts, where they allow it (idempotent).

    Numba's `Cache.load_overload` first refreshes the target context: it imports Numba's
    implementations of Python and NumPy and installs their typing and lowering registries
    (0.2-0.45 s on the 2-core machine, paid by the first load of every process). Loading
    machine code uses none of that; a compilation does, and Numba's compiler refreshes both
    contexts itself before it types anything. Only the runtime is started here (NRT, whose
    functions loaded code calls); the refresh then comes with the process's first
    compilation, if any.

    What a load could still need from the refresh: symbols that the modules it imports
    register (`_numba_hashsecret_*`, registered by numba.cpython.hashing, is one). So
    before an object is loaded, every name it leaves undefined must be one the execution
    engine resolves now (a function of the process, one Numba has registered, or one an
    earlier library defines); if one is not, or the object code is not ELF, that load runs
    Numba's own `load_overload`, refresh first. Only the CPU target's own context
    (`CPUContext`, not a subclass) is loaded this way.

    Returns:
        Whether the patch is installed.
    """
    if "load_overload" not in _NUMBA_CODE:
        if not defer_linking_bitcode():  # the symbol check reads the object code there
            return False
        _NUMBA_CODE["load_overload"] = caching.Cache.load_overload
        caching.Cache.load_overload = _load_overload_unstarted
    return True


class _CompilerNeeded(Exception):
    """A cached kernel needs what Numba's compiler start-up (a context refresh) provides."""


_LOADING = threading.local()  # .unstarted: a load on this thread runs without the refresh
_RESOLVED = set()  # names the engine was found to resolve (they stay registered)


def prebuilt_stale():
    """The entries of the package's prebuilt store that no longer fit the sources (none: [])."""
    return prebuilt.stale(_stamp)


def _load_overload_unstarted(self, sig, target_context):
    """Numba's Cache.load_overload, without refreshing the target context where it can.

    A kernel of the package that misses is then looked up in the machine code the package
    ships (`_numba/prebuilt.py`), loaded the same way.
    """
    out = _load_unstarted(self, target_context, lambda: self._load_overload(sig, target_context))
    if out is None and self._enabled and isinstance(self._impl.locator, _Keyed):
        out = _load_unstarted(self, target_context,
                              lambda: prebuilt.load(self, sig, target_context, _ROOT))
    return out


def _load_unstarted(self, target_context, load):
    """`load()`, a cache lookup of `self`'s kernel, before Numba's compiler starts where it can."""
    if type(target_context) is cpu.CPUContext:
        rtsys.initialize(target_context)  # the NRT functions loaded code calls
        outer = getattr(_LOADING, "unstarted", False)
        _LOADING.unstarted = True
        try:
            with self._guard_against_spurious_io_errors():
                return load()
        except _CompilerNeeded:
            pass
        finally:
            _LOADING.unstarted = outer
    target_context.refresh()  # what Numba's load_overload does first
    with self._guard_against_spurious_io_errors():
        return load()


def _resolvable(names, engine):
    """Whether the execution engine resolves every one of `names` now."""
    for name in names:
        if name in _RESOLVED or name in engine._defined_symbols:
            continue
        if not ll.address_of_symbol(name):
            return False
        _RESOLVED.add(name)
    return True


def defer_blas_check():
    """Import numba.np.arraymath without importing scipy.linalg (idempotent).

    numba.np.arraymath asks at import whether a BLAS is available (`_HAVE_BLAS`, which
    picks BLAS or a plain loop for the inner products of np.correlate and np.convolve) by
    importing scipy.linalg.cython_blas, and with it scipy.linalg: 0.15-0.4 s, on the
    2-core machine, of every process that imports arraymath. Numba imports it when its
    compiler starts, and a cache load imports it too when a kernel's environment was made
    in it (one of the README demo's does), while no kernel the demo runs calls a BLAS. For the
    import of that module only, the check is answered from scipy being installed, not
    imported: jointspace requires scipy >= 1.11, every release of which ships cython_blas.
    Every other BLAS check (typing np.dot, @, np.linalg.* in a kernel being compiled) stays
    Numba's, and Numba's runtime imports cython_blas the first time a kernel calls a BLAS.

    Returns:
        Whether arraymath will be imported so (False: another Numba, or already imported).
    """
    if not numba.__version__.startswith(_PATCHED_NUMBA) or _ARRAYMATH in sys.modules:
        return False
    if not any(isinstance(f, _ArraymathFinder) for f in sys.meta_path):
        sys.meta_path.insert(0, _ArraymathFinder())
    return True


_ARRAYMATH = "numba.np.arraymath"


class _ArraymathFinder:
    """Finds numba.np.arraymath as the path finder does, for `_BlasCheckAnswered` to run."""

    def find_spec(self, name, path=None, target=None):
        if name != _ARRAYMATH:
            return None
        sys.meta_path.remove(self)  # one import
        spec = importlib.machinery.PathFinder.find_spec(name, path, target)
        if spec is not None:
            spec.loader = _BlasCheckAnswered(spec.loader)
        return spec


class _BlasCheckAnswered:
    """The module's loader, running it with numba.np.linalg.ensure_blas answered."""

    def __init__(self, loader):
        self.loader = loader

    def create_module(self, spec):
        return self.loader.create_module(spec)

    def exec_module(self, module):
        from numba.np import linalg

        module.__loader__ = module.__spec__.loader = self.loader  # the module's own, as usual
        ensure_blas = linalg.ensure_blas
        linalg.ensure_blas = _scipy_installed  # arraymath binds it for its import-time check
        try:
            self.loader.exec_module(module)
        finally:
            linalg.ensure_blas = ensure_blas


def _scipy_installed():
    """numba.np.linalg.ensure_blas, for arraymath's import: scipy found, not imported."""
    if importlib.util.find_spec("scipy") is None:
        raise ImportError("scipy 0.16+ is required for linear algebra")


_ELF_SECTION = struct.Struct("<IIQQQQIIQQ")  # Elf64_Shdr: name, type, ..., offset, size, link
_ELF_SYMBOL = struct.Struct("<IBBHQQ")  # Elf64_Sym: name, info, other, shndx, value, size
_SHT_SYMTAB = 2
_STT_SECTION, _STT_FILE = 3, 4


def _elf_symbols(obj):
    """(names defined, names needed) by an ELF64 little-endian object file; None if not one.

    A symbol is defined when it lies in a section (st_shndx not SHN_UNDEF), and needed when
    it does not; section and file symbols, which LLVM's module does not list, are left out.
    A file that does not parse as one gives None too: Numba's own load then reads it.
    """
    if obj[:6] != b"\x7fELF\x02\x01":  # magic, ELFCLASS64, ELFDATA2LSB
        return None
    try:
        return _read_elf_symbols(obj)
    except (struct.error, IndexError, ValueError):  # ValueError: also a bad name's UTF-8
        return None


def _read_elf_symbols(obj):
    (shoff,) = struct.unpack_from("<Q", obj, 0x28)
    shentsize, shnum = struct.unpack_from("<HH", obj, 0x3A)
    if shnum == 0 or shentsize != _ELF_SECTION.size:
        return None  # extended section numbering: not worth reading here
    sections = [_ELF_SECTION.unpack_from(obj, shoff + i * shentsize) for i in range(shnum)]
    defined, needed = set(), set()
    for _, kind, _, _, offset, size, link, _, _, _ in sections:
        if kind != _SHT_SYMTAB:
            continue
        strtab = obj[sections[link][4]:sections[link][4] + sections[link][5]]
        for name, info, _, shndx, _, _ in _ELF_SYMBOL.iter_unpack(obj[offset:offset + size]):
            if name and (info & 0xF) not in (_STT_SECTION, _STT_FILE):
                text = strtab[name:strtab.index(b"\0", name)].decode()
                (defined if shndx else needed).add(text)
    return defined, needed
