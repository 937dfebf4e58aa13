"""Sparse LᵀDL factorization of M and solves with it, exploiting branch-induced sparsity.

M = Lᵀ D L with L unit lower triangular and the sparsity of M itself: L[i, j] ≠ 0 only for
j an ancestor dof of i. Eliminating dofs from the leaves up (k = nv-1 … 0) creates no
fill-in, so the factorization costs O(Σ depth²) and a solve O(nM) (Featherstone 2005,
"Efficient factorization of the joint-space inertia matrix for branched kinematic trees",
the LTDL algorithm; MuJoCo mj_factorM / mj_solveM in its classic layout).

Storage: qLD has qM's layout (row i at dof_Madr[i]: the diagonal, then the ancestors
parent(i), parent²(i), …), with D on the diagonal and L below it; qLDiagInv = 1 / D.
Because the ancestors of an ancestor i of k are a suffix of k's ancestor chain, row i of
qLD lines up with the tail of row k starting at the entry (k, i): each update is one
contiguous axpy.
"""

import numpy as np
from numba import njit, uint64

from jointspace._numba import entry
from jointspace._numba.entry import BAD_SHAPE, IN1, IN2, OUT1, OUT2, FastPathMiss, check_pair, fresh
from jointspace.diagnostics import check_not_singular, raise_pivot
from jointspace.dynamics.crba import crb_stage
from jointspace.kinematics import com_pos, kinematics_bodies
from jointspace.types import MINVAL, Data, Model


@njit(cache=True)
def factor_ld(m, mat, diaginv):
    """In-place LᵀDL of a matrix in qM's layout; returns -1, or the dof of a bad pivot.

    for k = nv-1 … 0:  for each ancestor i of k:  a = H[k, i] / H[k, k];
        H[i, anc(i)] -= a H[k, anc(i)];  H[k, i] = a.
    On failure diaginv is zeroed, so that a later solve refuses the broken factor.
    Addresses are unsigned so that Numba emits no negative-index fix-ups and the row
    update vectorizes.
    """
    nv = m.nv
    madr = m.dof_Madr
    parentid = m.dof_parentid
    nM = mat.shape[0]
    for k in range(nv - 1, -1, -1):
        start = uint64(madr[k])
        end = uint64(madr[k + 1]) if k + 1 < nv else uint64(nM)
        dk = mat[start]
        if not dk > MINVAL:
            for t in range(nv):
                diaginv[t] = 0.0
            return k
        inv = 1.0 / dk
        diaginv[k] = inv
        adr = start + uint64(1)
        i = parentid[k]
        while i >= 0:
            # row i lines up with the tail of row k from the entry (k, i) on
            a = mat[adr] * inv
            ri = uint64(madr[i])
            for t in range(end - adr):
                mat[ri + t] -= a * mat[adr + t]
            mat[adr] = a
            adr += uint64(1)
            i = parentid[i]
    return -1


@njit(cache=True)
def solve_ld(m, mat, diaginv, x):
    """Overwrite each row r of x (k, nv) with (LᵀDL)⁻¹ x[r], for a factor from factor_ld.

    Lᵀ y = x (leaves first), z = D⁻¹ y, L x = z (root first). Row k's off-diagonal
    entries are read with their columns from M_col rather than by walking dof_parentid, so
    the loads do not wait on one another; the dot products of the last pass run as two
    interleaved sums, halving the chain of dependent subtractions that bounds its speed.
    """
    nv = m.nv
    madr = m.dof_Madr
    col = m.M_col
    nM = uint64(mat.shape[0])
    for r in range(x.shape[0]):
        xr = x[r]
        for k in range(nv - 1, -1, -1):
            xk = xr[k]
            if xk != 0.0:
                end = uint64(madr[k + 1]) if k + 1 < nv else nM
                for adr in range(uint64(madr[k]) + uint64(1), end):
                    xr[uint64(col[adr])] -= mat[adr] * xk
        for k in range(nv):
            end = uint64(madr[k + 1]) if k + 1 < nv else nM
            s0 = xr[k] * diaginv[k]
            s1 = 0.0
            adr = uint64(madr[k]) + uint64(1)
            while adr + uint64(1) < end:
                s0 -= mat[adr] * xr[uint64(col[adr])]
                s1 -= mat[adr + uint64(1)] * xr[uint64(col[adr + uint64(1)])]
                adr += uint64(2)
            if adr < end:
                s0 -= mat[adr] * xr[uint64(col[adr])]
            xr[k] = s0 + s1


@njit(cache=True)
def factor_m_stage(m, d):
    """qLD, qLDiagInv = LᵀDL of qM; returns -1 or the dof of a bad pivot (needs crb_stage)."""
    qM = d.qM
    qLD = d.qLD
    for t in range(qM.shape[0]):
        qLD[t] = qM[t]
    return factor_ld(m, qLD, d.qLDiagInv)


@njit(cache=True)
def _factor_driver(d, q, position):
    """Optionally (position) qpos = q, kinematics → com_pos → crb; then factor qM."""
    m = d.model
    if position:
        qpos = d.qpos
        for k in range(q.shape[0]):
            qpos[k] = q[k]
        kinematics_bodies(m, d)
        com_pos(m, d)
        crb_stage(m, d)
    return factor_m_stage(m, d)


@njit(cache=True)
def _solve_driver(d, x):
    """Solve with d's factor for each row of x (k, nv), in place; False if d has none."""
    m = d.model
    if m.nv > 0 and not d.qLDiagInv[0] > 0.0:
        return False
    solve_ld(m, d.qLD, d.qLDiagInv, x)
    return True


@njit(cache=True)
def _factor_checked(d, q, position):
    """_factor_driver once q's length matches d's model; else entry.BAD_SHAPE."""
    if q.shape[0] != d.model.nq:
        return BAD_SHAPE
    return _factor_driver(d, q, position)


@njit(cache=True)
def _solve_checked(d, x, y):
    """y = x, then _solve_driver on y (k, nv); 1, 0 if d has no factor, or BAD_SHAPE."""
    if x.shape[1] != d.model.nv or y.shape[0] != x.shape[0] or y.shape[1] != x.shape[1]:
        return BAD_SHAPE
    y[:, :] = x
    return 1 if _solve_driver(d, y) else 0


@njit(cache=True)
def _solve_checked_vec(d, x, y):
    """y = x, then the solve of one right-hand side y (nv,), as _solve_checked."""
    nv = d.model.nv
    if x.shape[0] != nv or y.shape[0] != nv:
        return BAD_SHAPE
    for k in range(nv):
        y[k] = x[k]
    return 1 if _solve_driver(d, y.reshape(1, nv)) else 0


_k_factor = entry.Kernel(_factor_checked, globals(), sig=(None, IN1, None))
_k_solve = entry.Kernel(_solve_checked, globals(), sig=(None, IN2, OUT2))
_k_solve_vec = entry.Kernel(_solve_checked_vec, globals(), sig=(None, IN1, OUT1))
_empty = np.empty


def factor_m(m, d, q=None):
    """Sparse LᵀDL factorization of the joint-space inertia M into d.qLD, d.qLDiagInv.

    Factors d.qM as the last `crba` left it, or, when q is given, first computes
    kinematics, com_pos and the CRBA at q (all in one compiled call). O(Σ depth²), no
    dense work; see the module docstring for the layout.

    Args:
        m: the Model.
        d: a Data for m.
        q: optional (nq,) positions; copied into d.qpos.

    Raises:
        SingularMassError: the model has dofs that move no mass (found by the compiler), or
            a pivot of the factorization is not positive.
    """
    if m.__class__ is Model and d.__class__ is Data and d._ms is m._s and not m.singular_dofs:
        try:
            if q is None:
                if _k_factor(d._s, d.qpos, False) == -1:
                    return
            elif _k_factor(d._s, q, True) == -1:
                return
        except FastPathMiss:
            pass
    check_pair(m, d, "factor_m")
    check_not_singular(m, "factor_m")
    if q is None:
        bad = _k_factor(d._s, d.qpos, False)
    else:
        bad = _k_factor(d._s, fresh(q, m._shq, "q", "factor_m"), True)
    if bad >= 0:
        raise_pivot(m, bad, "factor_m", "LᵀDL")


def solve_m(m, d, x):
    """Solve M y = x with the factor made by `factor_m`: y = M⁻¹ x, in O(nM) per column.

    Args:
        m: the Model.
        d: a Data for m on which `factor_m` has run.
        x: (nv,) right-hand side, or (k, nv): k right-hand sides, one per row.

    Returns:
        y, a new array of the shape of x.
    """
    if m.__class__ is Model and d.__class__ is Data and d._ms is m._s:
        y = _empty(m.nv)
        try:
            if _k_solve_vec(d._s, x, y) == 1:
                return y
        except FastPathMiss:
            pass
    check_pair(m, d, "solve_m")
    x = fresh(x, None, "x", "solve_m")
    y = np.empty(x.shape)
    if x.shape == m._shv:
        factored = _k_solve_vec(d._s, x, y)
    elif x.ndim == 2 and x.shape[1] == m.nv:
        factored = _k_solve(d._s, x, y)
    else:
        raise ValueError(f"solve_m: argument x must have shape ({m.nv},) or (k, {m.nv}), "
                         f"got {x.shape}")
    if not factored:
        raise RuntimeError("solve_m: d holds no valid factorization of M; call "
                           "factor_m(m, d) (after crba) or factor_m(m, d, q) first")
    return y
