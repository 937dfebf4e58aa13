"""3-vector helpers on tuples for the compiled collision code (no heap allocation).

Vectors are 3-tuples of floats and rotation matrices 9-tuples (row-major), so the
narrowphase allocates nothing per geom pair.
"""

import functools
import math
import threading

from numba import njit, types

from jointspace.types import MINVAL

# compiled and cached; divisions follow IEEE rules (inf/nan) as in C instead of raising
jit = njit(cache=True, error_model="numpy")


# helpers with one call site: inlined into the caller's Numba IR, so they add no library of
# their own (each compiled library re-optimizes everything it links: compile time)
jit_inline = njit(cache=True, error_model="numpy", inline="always")


def jit_sig(sig):
    """`jit` with an explicit signature: one compiled version whatever the callers pass.

    Without it, literal or int32 arguments would each compile another specialization. The
    kernel is made (compiled, or loaded from the cache) when something first needs it: a
    caller being compiled, or a call from Python, not when its module is imported. A
    process whose callers all come from the cache never loads it (import: 27 fewer loads).
    """
    return lambda fn: _LazySig(sig, fn)


class _LazySig:
    """A kernel with one signature, made on first use; Numba types it as its dispatcher."""

    def __init__(self, sig, fn):
        self._sig, self._fn, self._disp = sig, fn, None
        self._lock = threading.Lock()
        functools.update_wrapper(self, fn)

    def dispatcher(self):
        """The compiled dispatcher (compiled or loaded from the cache on first call)."""
        if self._disp is None:
            with self._lock:
                if self._disp is None:
                    self._disp = njit(self._sig, cache=True, error_model="numpy")(self._fn)
        return self._disp

    @property
    def _numba_type_(self):
        # a compiled caller that names this kernel types it (typeof's protocol) as the
        # dispatcher's type, and calls the dispatcher itself
        return types.Dispatcher(self.dispatcher())

    def __call__(self, *args):
        return self.dispatcher()(*args)

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return getattr(self.dispatcher(), name)


# Numba types of the narrowphase arguments
F8 = types.float64
I8 = types.int64
B1 = types.boolean
V3 = types.UniTuple(F8, 3)  # vector
M9 = types.UniTuple(F8, 9)  # rotation matrix, row-major
BUF = types.float64[:, ::1]  # contact buffer rows: pos, normal, tangent hint, dist
F2 = types.float64[:, ::1]
F3 = types.float64[:, :, ::1]
I1 = types.int32[::1]
VOID = types.void
I2 = types.int64[:, ::1]
IV = types.int64[::1]
# convex workspace: EPA vertices, faces, face planes, free faces, edges, polygons, buffer
WS = types.Tuple((F2, I2, F2, IV, I2, F3, F2))


@jit
def v3(a):
    """The first three entries of an array as a tuple."""
    return (a[0], a[1], a[2])


@jit
def m9(a):
    """The first nine entries of an array as a tuple."""
    return (a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8])


@jit
def add(a, b):
    """A + b."""
    return (a[0] + b[0], a[1] + b[1], a[2] + b[2])


@jit
def sub(a, b):
    """A - b."""
    return (a[0] - b[0], a[1] - b[1], a[2] - b[2])


@jit
def scl(a, s):
    """S a."""
    return (a[0] * s, a[1] * s, a[2] * s)


@jit
def add_scl(a, b, s):
    """A + s b."""
    return (a[0] + b[0] * s, a[1] + b[1] * s, a[2] + b[2] * s)


@jit
def dot(a, b):
    """A · b."""
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]


@jit
def cross(a, b):
    """A × b."""
    return (a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0])


@jit
def norm(a):
    """|a|."""
    return math.sqrt(a[0] * a[0] + a[1] * a[1] + a[2] * a[2])


@jit
def normalize(a):
    """(a / |a|, |a|); (1, 0, 0) when |a| < MINVAL (MuJoCo's mju_normalize3 rule)."""
    n = math.sqrt(a[0] * a[0] + a[1] * a[1] + a[2] * a[2])
    if n < MINVAL:
        return (1.0, 0.0, 0.0), n
    return (a[0] / n, a[1] / n, a[2] / n), n


@jit
def mat_vec(m, v):
    """R v for a row-major 3x3 R."""
    return (m[0] * v[0] + m[1] * v[1] + m[2] * v[2],
            m[3] * v[0] + m[4] * v[1] + m[5] * v[2],
            m[6] * v[0] + m[7] * v[1] + m[8] * v[2])


@jit
def mat_t_vec(m, v):
    """Rᵀ v for a row-major 3x3 R."""
    return (m[0] * v[0] + m[3] * v[1] + m[6] * v[2],
            m[1] * v[0] + m[4] * v[1] + m[7] * v[2],
            m[2] * v[0] + m[5] * v[1] + m[8] * v[2])


@jit
def col(m, j):
    """Column j of a row-major 3x3 matrix (axis j of the frame)."""
    return (m[j], m[3 + j], m[6 + j])


@jit
def clip(x, lo, hi):
    """X clamped to [lo, hi]."""
    return lo if x < lo else (hi if x > hi else x)
