"""Reference counts in compiled code: the runtime's null test inline, not behind a call.

Numba counts references on every array a compiled function receives, views and slices
included, by calling the runtime's NRT_incref and NRT_decref, which return at once when
the array has no reference-counting handle (a null meminfo). Our kernels read Model and
Data through borrowed arrays (`_numba.structs`, `_numba.scratch.borrow`), whose handles
are null, so almost every one of these calls returns at once; but a call is a call: a
cheetah step made about 1,000 of them (3,000 instructions of its 79,000), and around each
the caller keeps its live values in memory rather than in registers.

Numba keeps the runtime functions out of line on purpose: its reference-count pruning
pass matches their calls by name, after inlining, and removes pairs that cancel. So the
calls stay as Numba emits them in every module it keeps and links; only the module that
becomes machine code is a copy in which the two functions are replaced by definitions
with the same effect (null: nothing; else the same atomic increment, or the same atomic
decrement, with the destructor called at zero, as Numba's runtime module defines them)
that are always inlined. The library keeps Numba's module for the libraries that link it
in, so pruning across their calls works as before.

Installed with the cache's patches (`_numba/cache.install`), for the Numba versions it
was written against (`_PATCHED_NUMBA`); this file is part of every kernel's cache stamp
(`_numba/cache._CORE_FILES`), so machine code compiled with and without it never mix.
"""

from llvmlite import binding as ll
from llvmlite import ir
from numba.core import codegen

_WORD = ir.IntType(64)
_PTR = ir.IntType(8).as_pointer()
_NAMES = ("NRT_incref", "NRT_decref")
_ORIGINAL = {}


def _inline_module(triple, layout):
    """LLVM IR of NRT_incref and NRT_decref, always inlined (Numba's nrtdynmod semantics)."""
    mod = ir.Module("jointspace_refcount")
    mod.triple = triple
    mod.data_layout = layout
    fnty = ir.FunctionType(ir.VoidType(), [_PTR])
    dtor = ir.Function(mod, fnty, name="NRT_MemInfo_call_dtor")
    for name in _NAMES:
        fn = ir.Function(mod, fnty, name=name)
        fn.linkage = "weak_odr"  # kept in the object, as Numba's copies are
        fn.attributes.add("alwaysinline")
        fn.attributes.add("nounwind")
        entry = fn.append_basic_block("entry")
        live = fn.append_basic_block("live")
        done = fn.append_basic_block("done")
        b = ir.IRBuilder(entry)
        [p] = fn.args
        b.cbranch(b.icmp_unsigned("==", p, ir.Constant(_PTR, None)), done, live)
        b.position_at_end(live)
        count = b.bitcast(p, _WORD.as_pointer())
        one = ir.Constant(_WORD, 1)
        if name == "NRT_incref":
            b.atomic_rmw("add", count, one, ordering="monotonic")
            b.branch(done)
        else:
            b.fence("release")
            old = b.atomic_rmw("sub", count, one, ordering="monotonic")
            free = fn.append_basic_block("free")
            b.cbranch(b.icmp_unsigned("==", old, one), free, done)
            b.position_at_end(free)
            b.fence("acquire")
            b.call(dtor, [p])
            b.branch(done)
        b.position_at_end(done)
        b.ret_void()
    return str(mod)


def _defines(mod, name):
    try:
        mod.get_function(name)
    except NameError:
        return False
    return True


def _finalize_final_module(self):
    """Numba's CPUCodeLibrary._finalize_final_module on a copy with inline reference counts."""
    mod = self._final_module
    if self.name == "nrt" or not any(_defines(mod, n) for n in _NAMES):
        return _ORIGINAL["finalize"](self)
    emitted = mod.clone()
    # strong definitions replace the module's linkonce_odr, noinline copies of Numba's
    emitted.link_in(ll.parse_assembly(_inline_module(mod.triple, str(mod.data_layout))))
    pb = ll.create_pass_builder(self._codegen._tm, ll.create_pipeline_tuning_options())
    pm = ll.create_new_module_pass_manager()
    pm.add_always_inliner_pass()
    pm.run(emitted, pb)
    self._final_module = emitted
    try:
        return _ORIGINAL["finalize"](self)
    finally:
        self._final_module = mod


def install(supported):
    """Replace Numba's final-module step when `supported` (the Numba version); idempotent."""
    if supported and "finalize" not in _ORIGINAL:
        _ORIGINAL["finalize"] = codegen.CPUCodeLibrary._finalize_final_module
        codegen.CPUCodeLibrary._finalize_final_module = _finalize_final_module
    return "finalize" in _ORIGINAL
