"""The small compiled helpers the kernels build on: the atomic counter and `shaped`.

`fetch_add` (`_numba/atomic.py`) hands the rollout's chunks to threads that run without
the GIL; `shaped` (`_numba/scratch.py`) cuts the solvers' and the collision driver's
scratch into matrices. Both are intrinsics (LLVM code written by hand), so they are
checked here directly, beyond the kernels that use them.
"""

import threading

import numpy as np
import pytest
from numba import njit

from jointspace._numba.atomic import fetch_add
from jointspace._numba.scratch import borrow, keep, shaped


@njit(nogil=True, cache=True)
def _take_all(counter, n, hits):
    """Take numbers from counter[0] until n is reached; count each one taken in hits."""
    taken = 0
    while True:
        c = fetch_add(counter, 0, 1)
        if c >= n:
            return taken
        hits[c] += 1
        taken += 1


def test_threads_taking_from_the_counter_get_every_number_exactly_once():
    # Four threads (the GIL released) race for 2 million numbers: a lost or doubled
    # increment would leave a number untaken or taken twice.
    n = 2_000_000
    hits = np.zeros(n, dtype=np.int64)
    counter = np.zeros(1, dtype=np.int64)
    _take_all(np.zeros(1, dtype=np.int64), 0, hits)  # compile outside the race
    taken = []
    threads = [threading.Thread(target=lambda: taken.append(_take_all(counter, n, hits)))
               for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert (hits == 1).all()
    assert sum(taken) == n
    assert counter[0] == n + 4  # each thread's last, failed take counts too


@njit(cache=True)
def _fetch_add_at(a, i, v):
    return fetch_add(a, i, v), a[i]


def test_fetch_add_returns_the_value_before_and_adds():
    a = np.array([5, 7, 11], dtype=np.int64)
    assert _fetch_add_at(a, 1, 3) == (7, 10)
    assert _fetch_add_at(a, 2, -4) == (11, 7)
    assert a.tolist() == [5, 10, 7]


@njit(cache=True)
def _shaped_views(n, m):
    own = np.arange(n * m + 3.0)
    a = shaped(own[3:3 + n * m], (n, m))  # a view with the owner's reference count
    buf = borrow(own)
    b = shaped(buf[0:n * m], (n, m))  # a borrowed view
    c = shaped(buf[0:24], (2, 4, 3)) if n * m + 3 >= 24 else shaped(buf[0:1], (1, 1, 1))
    out = (a.copy(), a.strides, b.copy(), c.copy(), c.strides)
    a[0, 0] = -1.0  # writes reach the buffer
    seen = own[3]
    keep(own)
    return out, seen


def test_shaped_is_a_c_contiguous_view_of_the_slice():
    (a, a_strides, b, c, c_strides), seen = _shaped_views(5, 6)
    own = np.arange(33.0)
    assert np.array_equal(a, own[3:33].reshape(5, 6)) and a_strides == (48, 8)
    assert np.array_equal(b, own[:30].reshape(5, 6))
    assert np.array_equal(c, own[:24].reshape(2, 4, 3)) and c_strides == (96, 24, 8)
    assert seen == -1.0


@njit(cache=True)
def _shaped_wrong(k):
    own = np.zeros(10)
    return shaped(own[0:k], (2, 3)).sum()


def test_shaped_refuses_a_shape_that_does_not_cover_the_slice():
    assert _shaped_wrong(6) == 0.0
    for k in (5, 7):
        with pytest.raises(ValueError, match="shape does not cover"):
            _shaped_wrong(k)
