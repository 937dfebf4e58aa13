"""An atomic counter in compiled code, for work that threads take in turn without the GIL.

`fetch_add(a, i, v)` adds v to the int64 a[i] in one atomic read-modify-write and returns
the value before: threads that each run `c = fetch_add(next_chunk, 0, 1)` get 0, 1, 2, …
each exactly once, in whatever order they arrive (the rollout's chunks, rollout.py).
"""

from numba import types
from numba.core import cgutils
from numba.extending import intrinsic

__all__ = ["fetch_add"]


@intrinsic
def fetch_add(typingctx, a, i, v):
    """a[i] += v atomically (sequentially consistent); returns a[i]'s value before.

    a: a C-contiguous 1-D int64 array; i, v: integers. i is not bounds-checked: the
    caller's own counter array and index.
    """
    if not (isinstance(a, types.Array) and a.dtype == types.int64 and a.ndim == 1
            and isinstance(i, types.Integer) and isinstance(v, types.Integer)):
        return None

    def codegen(context, builder, sig, args):
        aty, ity, vty = sig.args
        arr = context.make_array(aty)(context, builder, value=args[0])
        idx = context.cast(builder, args[1], ity, types.intp)
        val = context.cast(builder, args[2], vty, types.int64)
        ptr = cgutils.get_item_pointer(context, builder, aty, arr, [idx], wraparound=False)
        return builder.atomic_rmw("add", ptr, val, "seq_cst")

    return types.int64(a, i, v), codegen
