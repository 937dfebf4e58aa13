"""Borrowed views of a kernel's own scratch arrays, which compiled code counts nothing on.

An array a kernel allocates carries a reference-counting handle (meminfo): every non-inlined
call that receives it, or a view of it, takes and drops a reference with atomic
instructions, and in a loop that holds such a call Numba takes them on every pass, the
call taken or not (architecture.md, "Reference counting in compiled code"). `borrow(a)` is
a view of a's buffer without the handle; `keep(a)` after its last use holds the owner a
alive until then. The pattern, in one function:

    own = np.empty(n)
    buf = borrow(own)
    ...  # buf and its views only
    keep(own)  # the last statement before every return that follows a use of buf

Numba releases a variable after its last use, so without `keep` the owner (and its
buffer) would go before the views do.

`shaped(a, (n, m, …))` is a 1-D C-contiguous array seen as an n × m × … one, as
`a.reshape((n, m, …))` but without NumPy's general reshape: Numba lowers every reshape to
a call of a compiled normalizer and of a C helper that works out the strides
(numba_attempt_nocopy_reshape), 5 % of a step of dm_control's ball_in_cup, where the
solvers and the collision driver cut their scratch into matrices each call.

`on_stack(n, dtype)` is an uninitialized array of n (a constant) elements in the calling
function's stack frame, without a meminfo: a small fixed-size buffer for a function that
needs one only on some calls (a heap array there costs an allocation and its reference
counting, ≈ 60 ns). It lives as long as the frame of the function that Numba compiles
the call into; it must not be returned or kept beyond it.
"""

from numba import njit, types
from numba.core import cgutils
from numba.core.imputils import impl_ret_borrowed
from numba.extending import intrinsic
from numba.np.arrayobj import populate_array

from jointspace._numba.structs import borrow

# borrow: the structs' intrinsic (`structs.borrow`)
__all__ = ["borrow", "keep", "on_stack", "shaped"]


@intrinsic
def shaped(typingctx, a, shape):
    """a (1-D, C-contiguous) as a C-contiguous array of the given shape, sharing its buffer.

    shape: a tuple of integers whose product must be len(a) (else ValueError): the caller
    slices a to exactly the elements the view covers.
    """
    if not (isinstance(a, types.Array) and a.ndim == 1 and a.layout == "C"
            and isinstance(shape, types.UniTuple) and isinstance(shape.dtype, types.Integer)):
        return None
    nd = shape.count
    result = a.copy(ndim=nd, layout="C")

    def codegen(context, builder, sig, args):
        aty, sty = sig.args
        src = context.make_array(aty)(context, builder, value=args[0])
        dims = [context.cast(builder, v, sty.dtype, types.intp)
                for v in cgutils.unpack_tuple(builder, args[1], nd)]
        count = context.get_constant(types.intp, 1)
        for v in dims:
            count = builder.mul(count, v)
        (size,) = cgutils.unpack_tuple(builder, src.shape, 1)
        with builder.if_then(builder.icmp_signed("!=", count, size), likely=False):
            context.call_conv.return_user_exc(
                builder, ValueError, ("shaped: the shape does not cover the array",))
        strides = []
        step = src.itemsize
        for v in reversed(dims):
            strides.insert(0, step)
            step = builder.mul(step, v)
        dst = context.make_array(sig.return_type)(context, builder)
        populate_array(dst, data=src.data, shape=dims, strides=strides,
                       itemsize=src.itemsize, meminfo=src.meminfo, parent=src.parent)
        return impl_ret_borrowed(context, builder, sig.return_type, dst._getvalue())

    return result(a, shape), codegen


@njit(cache=True)
def keep(a):
    """A use of a (its length), so that a caller's owner array lives up to this point."""
    return a.shape[0]


@intrinsic
def on_stack(typingctx, n, dtype):
    """An uninitialized 1-D array of n elements of dtype in the caller's stack frame.

    n: an integer constant (a literal or a module-level global); dtype: a NumPy scalar type.
    """
    if not (isinstance(n, types.IntegerLiteral) and isinstance(dtype, types.NumberClass)):
        return None
    count = n.literal_value
    result = types.Array(dtype.dtype, 1, "C")

    def codegen(context, builder, sig, args):
        ty = context.get_data_type(dtype.dtype)
        ptr = cgutils.alloca_once(builder, ty, size=count)
        itemsize = context.get_abi_sizeof(ty)
        dst = context.make_array(result)(context, builder)
        populate_array(dst, data=ptr, shape=[context.get_constant(types.intp, count)],
                       strides=[context.get_constant(types.intp, itemsize)],
                       itemsize=context.get_constant(types.intp, itemsize), meminfo=None)
        return dst._getvalue()

    return result(n, dtype), codegen
