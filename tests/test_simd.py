"""The vector row dot of PGS (`_numba/simd.dot_row`) against MuJoCo's own mju_dot.

MuJoCo's PGS sums each residual with mju_dot (AVX lanes, then a fixed horizontal order and
a left-to-right tail); the intrinsic claims that order exactly, so the comparison is for
bit equality over every start and length, on rows other than the first.
"""

import mujoco
import numpy as np
from numba import njit

from jointspace._numba.simd import dot_row


@njit(cache=True)
def _dot(A, i, b, lo, hi):
    return dot_row(A, i, b, lo, hi)


def test_dot_row_equals_mju_dot_bit_for_bit():
    rng = np.random.default_rng(3)
    A = rng.standard_normal((5, 41)) * np.exp(rng.uniform(-20, 20, (5, 41)))
    b = rng.standard_normal(41) * np.exp(rng.uniform(-20, 20, 41))
    checked = 0
    for i in (1, 4):
        for lo in range(0, 13):
            for hi in range(lo, 41):
                expected = mujoco.mju_dot(A[i, lo:hi].copy(), b[lo:hi].copy()) if hi > lo \
                    else 0.0
                got = _dot(A, i, b, lo, hi)
                assert got == expected, (i, lo, hi, got, expected)
                checked += 1
    # a plain left-to-right sum differs from mju_dot's order on such spread magnitudes:
    # the test would see a wrong order
    plain = sum(A[1, k] * b[k] for k in range(0, 40))
    assert plain != _dot(A, 1, b, 0, 40)
    assert checked == 2 * sum(41 - lo for lo in range(13))
