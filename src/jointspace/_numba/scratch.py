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
"""

from numba import njit

from jointspace._numba.structs import borrow

__all__ = ["borrow", "keep"]  # borrow: an intrinsic, the structs' own (`structs.borrow`)


@njit(cache=True)
def keep(a):
    """A use of a (its length), so that a caller's owner array lives up to this point."""
    return a.shape[0]
