"""Enter compiled code once per public call, at the lowest crossing cost (DESIGN.md §2.4).

Numba's dispatcher resolves argument types on every call; for structref arguments that costs
several microseconds. `Kernel` calls the dispatcher once (compiling, or loading from the
cache), then keeps the compiled overload's `entry_point` in its attribute `ep`. Callers
read `ep` into a local and call that, `ep = _k_step.ep; ep(d._s, nstep)`: CPython 3.11
does not specialize the method-style call `_k_step.ep(…)` of a callable held in an
attribute, which costs ≈ 30 ns more, while the local costs ≈ 5 ns over a global. Before the
first call `ep` is the Kernel's own `first`, which compiles and then replaces `ep`, so a
module-level `_k_…` name is always the same Kernel (earlier, the name itself was rebound to
the entry point, and changed type under a reader or a tool following calls). This is safe
because public wrappers validate their arguments, so every later call has the same types.
Measured here (numba 0.68): dispatcher with Model + Data structs ≈ 4.4 µs, entry point
≈ 0.8 µs.

The hottest kernels (the smooth dynamics) go further: their float64 array arguments are
typed `CheckedArray`, whose unboxing reads the ndarray's C fields and checks class, dtype,
rank, alignment and (outputs) C order and writeability in a few compiled instructions,
without the heap-allocated MemInfo that Numba's own array unboxing makes per argument. An
argument that fails raises `FastPathMiss`; the kernel itself checks the lengths. Their
wrappers thus call the kernel on the caller's arguments straight away, and validate in
Python (converting, or raising an error that names the argument) only when that call
misses. Measured: four arrays cross in 0.06 µs against 0.16 µs, and the Python checks
they replace cost ≈ 0.1 µs per vector. Input vectors are compiled for any stride, so a
strided view is read in place rather than copied.

Those kernels and wrappers are declared, not written: `checked` on a driver declares its
arguments' sizes, `public` on a wrapper its calls, outputs and error codes, and
tools/gen_entries.py writes the checked kernel, its `Kernel` and the wrapper's body from
them (docs/architecture.md, "Adding a public compiled function").
"""

import ctypes

import llvmlite.binding as llvm
import numpy as np
from llvmlite import ir
from numba import typeof, types
from numba.core import cgutils
from numba.core.datamodel.models import ArrayModel
from numba.core.imputils import impl_ret_borrowed
from numba.extending import NativeValue, intrinsic, register_model, unbox

from jointspace.diagnostics import check_not_singular, raise_pivot  # noqa: F401 (generated code)
from jointspace.types import Data, Model


class Kernel:
    """A compiled function, called through its compiled overload's entry point `ep`.

    `ep` is the entry point from the first call on; before, it is `first`, which compiles
    (or loads from the cache) and installs it. The Kernel object itself never changes, so
    a module's `_k_…` name leads a reader, or a tool, to the function it wraps (`disp`).
    Call it as `ep = k.ep; ep(*args)` (see the module docstring), reading `ep` again before
    each call rather than once before a loop: the first call replaces it.
    """

    __slots__ = ("disp", "ep", "sig")

    def __init__(self, disp, *, sig=None):
        """Wrap the dispatcher disp.

        Args:
            disp: the `@njit` function.
            sig: optional tuple of argument types (None where the first call's argument
                decides), for kernels with `CheckedArray` arguments. Keyword-only, so that
                the old form `Kernel(f, globals())` fails at import instead of misreading.
        """
        self.disp = disp
        self.sig = sig
        self.ep = self.first

    def __call__(self, *args):
        """Call the kernel (through `ep`; wrappers call `ep` directly, one frame less)."""
        return self.ep(*args)

    def first(self, *args):
        """The first call: compile for these arguments' types, install `ep`, call it."""
        if self.sig is not None:
            sig = tuple(typeof(a) if t is None else t for a, t in zip(args, self.sig))
            self.ep = self.disp.compile(sig)
            return self.ep(*args)
        result = self.disp(*args)
        cres = self.disp.overloads.get(tuple(typeof(a) for a in args))
        if cres is not None:  # else (an argument typed differently) ep stays first
            self.ep = cres.entry_point
        return result


def check_pair(m, d, fname):
    """Raise a clear error unless m is a Model and d a Data made for a model of its sizes.

    d's struct carries its model's struct (kernels that take the Data struct alone read the
    model from it); a d used with another model of the same sizes is rebound to that model
    (and pickles with it from then on).
    """
    if m.__class__ is Model and d.__class__ is Data and d._ms is m._s:
        return
    if type(m) is not Model:
        raise TypeError(f"{fname}: first argument must be a jointspace Model, "
                        f"got {type(m).__name__}")
    if type(d) is not Data:
        raise TypeError(f"{fname}: second argument must be a jointspace Data, "
                        f"got {type(d).__name__}")
    if d._msig is not m._sizes and d._msig != m._sizes:
        raise ValueError(f"{fname}: this Data was made for a different model "
                         "(sizes differ); create one with jointspace.make_data(model)")
    from jointspace._numba import structs

    d._msig = m._sizes
    d._ms = m._s
    d._m = m
    d._s = structs.make_data_struct(d, m._s)


_F64 = np.dtype(np.float64)
_ND = np.ndarray


def real(x, name, fname, copy=False):
    """x as a C-contiguous float64 array (a copy if asked), or an error naming the argument.

    Complex input is refused rather than cast (NumPy would drop the imaginary part with a
    warning); so is anything that is not numbers.
    """
    if np.iscomplexobj(x):
        raise TypeError(f"{fname}: argument {name} is complex; jointspace computes with real "
                        f"float64 numbers (pass x.real if the imaginary part is zero)")
    try:
        if copy:
            return np.array(x, dtype=np.float64)
        return np.ascontiguousarray(x, dtype=np.float64)
    except (TypeError, ValueError) as e:
        raise TypeError(f"{fname}: argument {name} must be an array of floats: {e}") from None


def vec(x, n, name, fname):
    """x as a C-contiguous float64 vector of length n, or a clear error naming the argument."""
    if (type(x) is np.ndarray and x.dtype is _F64 and x.ndim == 1 and x.size == n
            and x.strides[0] == 8):
        return x
    x = real(x, name, fname)
    if x.shape != (n,):
        raise ValueError(f"{fname}: argument {name} must have shape ({n},), got {x.shape}")
    return x


def mat(x, shape, name, fname):
    """x as a C-contiguous float64 array of the given shape, or a clear error."""
    if type(x) is not np.ndarray or x.dtype != np.float64 or not x.flags.c_contiguous:
        x = real(x, name, fname)
    if x.shape != shape:
        raise ValueError(f"{fname}: argument {name} must have shape {shape}, got {x.shape}")
    return x


def out(x, shape, name, fname):
    """Validate a caller-provided output array: C-contiguous float64 of the given shape."""
    if x.__class__ is _ND and x.dtype is _F64 and x.shape == shape:
        flags = x.flags
        if flags.c_contiguous and flags.writeable:
            return x
    if (type(x) is not np.ndarray or x.dtype != np.float64 or not x.flags.c_contiguous
            or not x.flags.writeable):
        raise TypeError(f"{fname}: output {name} must be a writeable C-contiguous float64 "
                        f"array of shape {shape}")
    if x.shape != shape:
        raise ValueError(f"{fname}: output {name} must have shape {shape}, got {x.shape}")
    return x


class FastPathMiss(Exception):
    """A `CheckedArray` argument failed its compiled check; the wrapper validates instead."""


class CheckedArray(types.Array):
    """A float64 array argument whose unboxing checks it in compiled code (module docstring).

    Inputs (out=False) take any stride and may be read-only, and are typed read-only so
    that no kernel can write into them; outputs must be C-contiguous and writeable.
    """

    def __init__(self, ndim, out):
        self.out = out
        kind = "out" if out else "in"
        super().__init__(types.float64, ndim, "C" if out else "A", readonly=not out,
                         name=f"checked_{kind}({ndim}d)")

    @property
    def key(self):
        return self.ndim, self.out

    @property
    def mangling_args(self):
        return self.__class__.__name__, [self.ndim, int(self.out)]


register_model(CheckedArray)(ArrayModel)

IN1 = CheckedArray(1, False)
IN2 = CheckedArray(2, False)
OUT1 = CheckedArray(1, True)
OUT2 = CheckedArray(2, True)


@intrinsic
def plain(typingctx, x):
    """A `CheckedArray` as Numba's own array type, the same array (no copy).

    For a driver that passes its checked output to a kernel other callers give plain
    arrays: one compiled overload of that kernel instead of two (their data models are
    the same). A plain array (a compiled loop calling the driver) passes as it is.
    """
    if not isinstance(x, types.Array):
        return None

    def codegen(context, builder, sig, args):
        return impl_ret_borrowed(context, builder, sig.return_type, args[0])

    return types.Array(x.dtype, x.ndim, x.layout, readonly=not x.mutable)(x), codegen


@intrinsic
def input_view(typingctx, x):
    """A plain array typed as `plain` types a checked input (any layout, read-only).

    The same array, no copy: for a kernel that also passes its own array where drivers
    pass their checked inputs, so that the callee compiles once.
    """
    if not isinstance(x, types.Array) or isinstance(x, CheckedArray):
        return None

    def codegen(context, builder, sig, args):
        return impl_ret_borrowed(context, builder, sig.return_type, args[0])

    return types.Array(x.dtype, x.ndim, "A", readonly=True)(x), codegen

# Byte offsets in CPython's object header and NumPy's PyArrayObject (64-bit, the same in
# NumPy 1.x and 2.x); verified on a live array when this module is imported.
_OB_TYPE, _DATA, _NDIM, _DIMS, _STRIDES, _DESCR, _FLAGS = 8, 16, 24, 32, 40, 56, 64
_C_CONTIGUOUS, _ALIGNED, _WRITEABLE = 0x1, 0x100, 0x400

# The objects compiled checks compare against, by address: external symbols resolved when
# compiled code is linked (also when it is loaded from the cache, in a later process).
_SYMBOLS = {"jointspace_ndarray_type": np.ndarray,
            "jointspace_float64_descr": np.dtype(np.float64),
            "jointspace_fast_path_miss": FastPathMiss}


def _check_layout():
    a = np.empty((3, 2))
    b = id(a)

    def word(off, ctype=ctypes.c_void_p):
        return ctype.from_address(b + off).value

    ok = (ctypes.sizeof(ctypes.c_void_p) == 8 and word(_OB_TYPE) == id(np.ndarray)
          and word(_DATA) == a.ctypes.data and word(_NDIM, ctypes.c_int) == 2
          and ctypes.c_int64.from_address(word(_DIMS)).value == 3
          and ctypes.c_int64.from_address(word(_STRIDES)).value == 16
          and word(_DESCR) == id(a.dtype) and word(_FLAGS, ctypes.c_int) & _C_CONTIGUOUS)
    if not ok:
        raise ImportError("jointspace: this interpreter's ndarray object layout is not the one "
                          "of 64-bit CPython with NumPy that jointspace's compiled argument "
                          "checks read; please report your Python and NumPy versions")


_check_layout()
for _name, _obj in _SYMBOLS.items():
    llvm.add_symbol(_name, id(_obj))


def _symbol(module, name):
    try:
        return module.get_global(name)
    except KeyError:
        g = ir.GlobalVariable(module, ir.IntType(8), name)
        g.linkage = "external"
        return g


@unbox(CheckedArray)
def _unbox_checked(typ, obj, c):
    """Read the ndarray's fields directly; set FastPathMiss unless every check passes.

    The array struct gets no MemInfo (compiled code takes no reference on it): the caller's
    argument tuple keeps the array alive for the call, and kernels keep no argument.
    """
    b = c.builder
    i8p = ir.IntType(8).as_pointer()
    i32 = ir.IntType(32)
    i64 = ir.IntType(64)
    base = b.bitcast(obj, i8p)

    def field(off, ty):
        return b.load(b.bitcast(b.gep(base, [ir.Constant(i64, off)]), ty.as_pointer()))

    def same(value, name):
        return b.icmp_unsigned("==", value, b.bitcast(_symbol(b.module, name), i8p))

    need = _ALIGNED | (_C_CONTIGUOUS | _WRITEABLE if typ.out else 0)
    ok = b.and_(same(field(_OB_TYPE, i8p), "jointspace_ndarray_type"),
                same(field(_DESCR, i8p), "jointspace_float64_descr"))
    ok = b.and_(ok, b.icmp_signed("==", field(_NDIM, i32), ir.Constant(i32, typ.ndim)))
    ok = b.and_(ok, b.icmp_unsigned("==", b.and_(field(_FLAGS, i32), ir.Constant(i32, need)),
                                    ir.Constant(i32, need)))
    ary = c.context.make_array(typ)(c.context, b)
    intp = c.context.get_value_type(types.intp)
    with b.if_else(ok, likely=True) as (then, otherwise):
        with then:
            dims = b.bitcast(field(_DIMS, i8p), i64.as_pointer())
            strides = b.bitcast(field(_STRIDES, i8p), i64.as_pointer())
            shape = [b.load(b.gep(dims, [ir.Constant(i64, k)])) for k in range(typ.ndim)]
            step = [b.load(b.gep(strides, [ir.Constant(i64, k)])) for k in range(typ.ndim)]
            c.context.populate_array(ary, data=b.bitcast(field(_DATA, i8p), ary.data.type),
                                     shape=cgutils.pack_array(b, shape, intp),
                                     strides=cgutils.pack_array(b, step, intp),
                                     itemsize=ir.Constant(intp, 8), meminfo=None, parent=obj)
        with otherwise:
            c.pyapi.err_set_none(b.bitcast(_symbol(b.module, "jointspace_fast_path_miss"),
                                           c.pyapi.pyobj))
    return NativeValue(ary._getvalue(), is_error=b.not_(ok))


OK = -1  # a checked kernel's return when its driver succeeded (drivers return -1 or a code)
BAD_SHAPE = -100  # a checked kernel's return when an argument's length does not match
empty = np.empty  # the generated wrappers' allocator (imported: a global is the cheapest call)


def checked(kernel, **sizes):
    """Declare a driver's checked kernel; tools/gen_entries.py writes it below the driver.

    The generated `_…_checked(d, …)` returns BAD_SHAPE unless every sized argument matches
    d's model, else the driver's return (OK for a driver that returns nothing); `kernel`
    names the `Kernel` made of it. At run time this returns the function unchanged.

    Args:
        kernel: the Kernel's name, `_k_<name>` (the checked function is `_<name>_checked`).
        **sizes: for each array argument of the driver, its sizes: Model sizes (`nq`,
            `nbody`), integers, or a one-letter name that the first use binds (`k, nv`);
            `out:` first for an output (C-contiguous and writeable): `tau="out: nv"`.
            Arguments without sizes (the Data struct, flags) are passed as they come.
    """
    return lambda f: f


def public(call, *, new=None, returns=None, pivot=None, errors=None):
    """Declare a public wrapper; tools/gen_entries.py writes its body below its docstring.

    The body calls the kernel on the caller's arguments (the fast path), and only if that
    misses checks the Model/Data pair, converts every argument that reaches a sized kernel
    argument (`fresh`, naming it in any error), calls again and turns error codes into
    exceptions. At run time this returns the function unchanged.

    Args:
        call: the kernel call, in Python with the wrapper's names and without the Data
            struct: `"_k_crba(q, out)"`; `"A if f_ext is None else B"` for an optional
            argument; a tuple of calls to pick by the shape of the argument whose sizes
            differ between them (the fast path tries the first).
        new: the arrays to allocate, `"out: nv, nv"`, or `"y: like x"` (x's shape).
        returns: the expression returned, e.g. `"d.qacc.copy()"`; None returns nothing.
        pivot: the factorization's name for `raise_pivot` when the driver returns a dof
            (>= 0); also makes the wrapper refuse a model whose M is singular by compilation.
        errors: {code: (exception class, message)}: raised, the message after the
            function's name, when the call returns that code.
    """
    return lambda f: f


def fresh(x, shape, name, fname):
    """x copied into a new float64 array of this shape (a wrapper's validated path).

    A fresh array always passes the compiled checks; anything that cannot become one
    raises an error naming the argument. shape None accepts any shape (the caller checks).
    """
    y = real(x, name, fname, copy=True)
    if shape is not None and y.shape != shape:
        raise ValueError(f"{fname}: argument {name} must have shape {shape}, got {y.shape}")
    return y
