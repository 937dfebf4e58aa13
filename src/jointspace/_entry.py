"""Enter compiled code once per public call, at the lowest crossing cost (DESIGN.md §2.4).

Numba's dispatcher resolves argument types on every call; for structref arguments that costs
several microseconds. `Kernel` calls the dispatcher once (compiling, or loading from the
cache), then keeps the compiled overload's `entry_point` and calls it directly. This is safe
because public wrappers validate their arguments, so every later call has the same types.
Measured here (numba 0.68): dispatcher with Model + Data structs ≈ 4.4 µs, entry point ≈ 0.8 µs.
Given its module's globals, a `Kernel` also rebinds its own module-level name to the entry
point after that first call, so the public wrappers then call compiled code with no Python
frame in between (≈ 0.2 µs less per call).

Vector arguments named in `strided` are compiled for any stride (Numba's 'A' layout), so a
wrapper need only check their class, dtype and shape (`is_vec`), not their contiguity: the
three attribute reads cost ≈ 0.1 µs per vector against ≈ 0.3 µs for `vec`.
"""

import numpy as np
from numba import typeof, types

from jointspace.types import Data, Model


class Kernel:
    """A compiled function called through its cached entry point after the first call."""

    __slots__ = ("disp", "ep", "home", "strided")

    def __init__(self, disp, home=None, strided=()):
        """Wrap the dispatcher disp.

        Args:
            disp: the `@njit` function.
            home: the globals() of the module that names the kernel, for the rebinding.
            strided: positions of 1-D array arguments to compile for any stride.
        """
        self.disp = disp
        self.ep = None
        self.home = home
        self.strided = strided

    def __call__(self, *args):
        ep = self.ep
        if ep is not None:
            return ep(*args)
        sig = tuple(typeof(a) for a in args)
        if self.strided:
            sig = tuple(t.copy(layout="A") if k in self.strided and isinstance(t, types.Array)
                        else t for k, t in enumerate(sig))
            self.disp.compile(sig)
            result = self.disp.overloads[sig].entry_point(*args)
        else:
            result = self.disp(*args)
        cres = self.disp.overloads.get(sig)
        if cres is not None:
            self.ep = cres.entry_point
            if self.home is not None:
                for name, value in list(self.home.items()):
                    if value is self:
                        self.home[name] = self.ep
        return result


def check_pair(m, d, fname):
    """Raise a clear error unless m is a Model and d a Data made for a model of its sizes.

    d's struct carries its model's struct (kernels that take the Data struct alone read the
    model from it); a d used with another model of the same sizes is rebound to that model.
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
    from jointspace import _structs

    d._msig = m._sizes
    d._ms = m._s
    d._s = _structs.make_data_struct(d, m._s)


_F64 = np.dtype(np.float64)
_ND = np.ndarray


def is_vec(x, shape):
    """True when x is a float64 ndarray of exactly this shape (any stride): the fast path."""
    return x.__class__ is _ND and x.dtype is _F64 and x.shape == shape


def state_vecs(m, q, v, a, names, fname):
    """(q, v, a) as float64 vectors of lengths (nq, nv, nv) for a kernel compiled strided.

    One expression checks all three on the fast path; otherwise `vec` converts each or
    raises naming it (names: the three argument names).
    """
    shv = m._shv
    if (q.__class__ is _ND and v.__class__ is _ND and a.__class__ is _ND and q.dtype is _F64
            and v.dtype is _F64 and a.dtype is _F64 and q.shape == m._shq and v.shape == shv
            and a.shape == shv):
        return q, v, a
    return (vec(q, m.nq, names[0], fname), vec(v, m.nv, names[1], fname),
            vec(a, m.nv, names[2], fname))


def vec(x, n, name, fname):
    """x as a C-contiguous float64 vector of length n, or a clear error naming the argument."""
    if (type(x) is np.ndarray and x.dtype is _F64 and x.ndim == 1 and x.size == n
            and x.strides[0] == 8):
        return x
    x = np.ascontiguousarray(x, dtype=np.float64)
    if x.shape != (n,):
        raise ValueError(f"{fname}: argument {name} must have shape ({n},), got {x.shape}")
    return x


def mat(x, shape, name, fname):
    """x as a C-contiguous float64 array of the given shape, or a clear error."""
    if type(x) is not np.ndarray or x.dtype != np.float64 or not x.flags.c_contiguous:
        x = np.ascontiguousarray(x, dtype=np.float64)
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
